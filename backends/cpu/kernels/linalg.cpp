// CPU kernels for MatMul and Gemm. f32 runs on the shared packed SGEMM (gemm.h); f64 and the
// integer types use the plain reference loop (integer products wrap as in C++ unsigned math).
// com.microsoft FusedMatMul (f32/f64) is MatMul with transposed reads and alpha (matmul.h).
// FusedGemm (f32/f64) is Gemm followed by its activation epilogue (epilogue.h).
#include <hwy/highway.h>

#include <algorithm>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/epilogue.h"  // after hwy/highway.h (a Highway -inl header)
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/matmul.h"

namespace tsr::cpu {

namespace {

template <typename T>
Status matmul_typed(exec::KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  matmul_into<T>(*ctx.input(0), *ctx.input(1), y, ctx.pool());
  return ok_status();
}

// com.microsoft::FusedMatMul, f32/f64: alpha * op(A) @ op(B) on matmul_into's transposed reads.
template <DTypeMask kSel>
Status fused_matmul_kernel(exec::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  if (node.attr_int("transBatchA") != 0 || node.attr_int("transBatchB") != 0)
    return unsupported(ctx.place(), ": FusedMatMul with transBatchA/transBatchB set is not supported");
  const bool ta = node.attr_int("transA") != 0, tb = node.attr_int("transB") != 0;
  const double alpha = node.attr_float("alpha");
  constexpr DTypeMask kFloats = dtype_bit(DType::kF32) | dtype_bit(DType::kF64);
  Status st = ok_status();
  if (dispatch_dtype<kSel & kFloats>(ctx.input(0)->dtype(), [&](auto tag) {
        using T = decltype(tag);
        auto y = ctx.alloc_output(0);
        if (!y.ok()) {
          st = y.status();
          return;
        }
        matmul_into<T>(*ctx.input(0), *ctx.input(1), *y, ctx.pool(), ta, tb, static_cast<T>(alpha));
      }))
    return st;
  return unsupported(ctx.place(), ": FusedMatMul has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
}

// The dtypes MatMul and Gemm run: f32 (packed SGEMM), f64 and 32/64-bit integers (reference loop).
constexpr DTypeMask kMatMulDTypes = dtype_bit(DType::kF32) | dtype_bit(DType::kF64) | dtype_bit(DType::kI32) |
                                    dtype_bit(DType::kI64) | dtype_bit(DType::kU32) | dtype_bit(DType::kU64);

// kSel: the dtypes compiled in (a selective build's, core/base/selective.h).
template <DTypeMask kSel>
Status matmul_kernel(exec::KernelContext& ctx) {
  Status st = ok_status();
  if (dispatch_dtype<kSel & kMatMulDTypes>(ctx.input(0)->dtype(), [&](auto tag) { st = matmul_typed<decltype(tag)>(ctx); }))
    return st;
  return unsupported(ctx.place(), ": MatMul has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
}

// `act`: FusedGemm's activation, applied to Y after the product (kNone for Gemm).
template <typename T>
Status gemm_typed(exec::KernelContext& ctx, const ops::ActivationSpec& act = {}) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  const Tensor* c = ctx.input(2);
  const ir::Node& node = ctx.node();
  const bool ta = node.attr_int("transA") != 0, tb = node.attr_int("transB") != 0;
  const T alpha = static_cast<T>(node.attr_float("alpha"));
  T beta = static_cast<T>(node.attr_float("beta"));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const int64_t m = y->dim(0), n = y->dim(1);
  const int64_t k = a.dim(ta ? 0 : 1);
  T* py = y->mut_data<T>();
  if (y->numel() == 0) return ok_status();
  if (c == nullptr || c->numel() == 0) {
    beta = T(0);
  } else if (beta != T(0)) {
    // Broadcast C into Y; the product then accumulates with beta.
    const Shape& cs = c->shape();
    const int64_t cm = cs.size() == 2 ? cs[0] : 1;
    const int64_t cn = cs.empty() ? 1 : cs.back();
    const T* pc = c->data<T>();
    for (int64_t i = 0; i < m; ++i) {
      const T* crow = pc + (cm == 1 ? 0 : i) * cn;
      T* yrow = py + i * n;
      if (cn == 1) std::fill(yrow, yrow + n, crow[0]);
      else std::copy(crow, crow + n, yrow);
    }
  }
  matmul_detail::gemm_any<T>(ta, tb, m, n, k, alpha, a.data<T>(), a.dim(1), b.data<T>(), b.dim(1), beta, py, n, &ctx.pool());
  if constexpr (std::is_floating_point_v<T>) HWY_NAMESPACE::apply_epilogue(act, py, m * n);
  return ok_status();
}

template <DTypeMask kSel>
Status gemm_kernel(exec::KernelContext& ctx) {
  Status st = ok_status();
  if (dispatch_dtype<kSel & kMatMulDTypes>(ctx.input(0)->dtype(), [&](auto tag) { st = gemm_typed<decltype(tag)>(ctx); }))
    return st;
  return unsupported(ctx.place(), ": Gemm has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
}

// Gemm, then the activation over the [M, N] result (Gemm outputs here are small enough to be
// still in cache).
template <DTypeMask kSel>
class FusedGemmKernel final : public exec::Kernel {
 public:
  explicit FusedGemmKernel(ops::ActivationSpec act) : act_(act) {}
  Status run(exec::KernelContext& ctx) override {
    constexpr DTypeMask kFloats = dtype_bit(DType::kF32) | dtype_bit(DType::kF64);
    Status st = ok_status();
    if (dispatch_dtype<kSel & kFloats>(ctx.input(0)->dtype(), [&](auto tag) { st = run_typed<decltype(tag)>(ctx); }))
      return st;
    return unsupported(ctx.place(), ": FusedGemm has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
  }

 private:
  template <typename T>
  Status run_typed(exec::KernelContext& ctx) {
    return gemm_typed<T>(ctx, act_);
  }
  ops::ActivationSpec act_;
};

template <DTypeMask kSel>
Expected<std::unique_ptr<exec::Kernel>> create_fused_gemm(const exec::KernelInit& init) {
  TSR_ASSIGN_OR_RETURN(ops::ActivationSpec act, ops::activation_of(init.node, init.place));
  return std::unique_ptr<exec::Kernel>(new FusedGemmKernel<kSel>(act));
}

}  // namespace

void register_linalg_kernels(KernelRegistry& r) {
  const std::vector<DType> types = {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kU32, DType::kU64};
  TSR_IF_SELECTED("MatMul") r.add_fn("MatMul", types, matmul_kernel<kSel>);
  TSR_IF_SELECTED("com.microsoft::FusedMatMul")
  r.add_fn("com.microsoft::FusedMatMul", {DType::kF32, DType::kF64}, fused_matmul_kernel<kSel>);
  TSR_IF_SELECTED("Gemm") r.add_fn("Gemm", types, gemm_kernel<kSel>);
  TSR_IF_SELECTED("FusedGemm") r.add("FusedGemm", {DType::kF32, DType::kF64}, &create_fused_gemm<kSel>);
}

}  // namespace tsr::cpu
