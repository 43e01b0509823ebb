// CPU kernels for MatMul and Gemm. f32 runs on the shared packed SGEMM (gemm.h); f64 and the
// integer types use the plain reference loop (integer products wrap as in C++ unsigned math).
// com.microsoft FusedMatMul (f32/f64) is MatMul with transposed reads and alpha (matmul.h).
// FusedGemm (f32/f64) is Gemm followed by its activation epilogue (epilogue.h).
#include <hwy/highway.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/epilogue.h"  // after hwy/highway.h (a Highway -inl header)
#include "backends/cpu/kernels/epilogue_dispatch.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/matmul.h"
#include "core/base/mapped_pages.h"

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

// FusedGemm's activation over y[0, n) on the best SIMD target (epilogue_dispatch.h; this file is
// compiled for the static one), where the kernel set has it.
void apply_epilogue_f32(const ops::ActivationSpec& act, float* y, int64_t n) {
  if constexpr (!kSizeFirstKernels) apply_epilogue_best(nullptr, act, y, 1, n, n);
  else HWY_NAMESPACE::apply_epilogue(act, y, n);
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
  if constexpr (std::is_same_v<T, float>) apply_epilogue_f32(act, py, m * n);
  else if constexpr (std::is_floating_point_v<T>) HWY_NAMESPACE::apply_epilogue(act, py, m * n);
  return ok_status();
}

template <DTypeMask kSel>
Status gemm_kernel(exec::KernelContext& ctx) {
  Status st = ok_status();
  if (dispatch_dtype<kSel & kMatMulDTypes>(ctx.input(0)->dtype(), [&](auto tag) { st = gemm_typed<decltype(tag)>(ctx); }))
    return st;
  return unsupported(ctx.place(), ": Gemm has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
}

// MatMul / Gemm / FusedGemm (f32) whose B is a constant 2-D weight (Linear layers: transformer
// QKV, projections, FFN, LM heads): op(B) is packed once at session creation by sgemm_pack_b, so
// a run neither repacks it (a read and a write of every weight per run) nor waits on its cold
// rows: the packed panels are contiguous and the blocked path prefetches the next one as it goes
// (GPT-like prefill's 81 MB of weights do not stay in L3 between runs). Products of fewer than
// kPackedMinRows rows (decode steps) read B raw through sgemm's few-row paths instead (the plain
// kernels: bit for bit what a trainer's eval_step on the same weights gives), and so do other
// dtypes, batched B and Gemm's transposed A. Where A's rows are unknown at load (a dynamic
// sequence axis), B is packed by the first run with enough rows: packed at load, a decode step
// that never uses the panels held every weight twice (raw pages faulted back in by the few-row
// paths; GPT-like decode peak RSS 152 MB against 88).
constexpr int64_t kPackedMinRows = 17;
// From this many rows a thread, the threads split the rows of a packed product instead of its columns.
constexpr int64_t kRowSplitRows = 56;

// The rows op(A) will have at run time from the load-time type of A: -1 when unknown.
int64_t known_rows(const ops::ValueType& t, bool gemm, bool ta) {
  if (!t.has_shape || t.shape.size() < 2) return -1;
  int64_t m = 1;
  const size_t last = gemm && ta ? 1 : t.shape.size() - 1;  // Gemm transA: rows are dim 1
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (d == last) continue;
    if (t.shape[d] < 0) return -1;
    m *= t.shape[d];
  }
  return m;
}

template <DTypeMask kSel>
class PackedLinearKernel final : public exec::Kernel {
 public:
  // `gemm`: Gemm / FusedGemm attributes (transA/transB, alpha/beta, bias); else MatMul. op(B) is
  // k x n (`tb`: B stored n x k). `packed`: op(B) packed now; null: packed by the first run with
  // kPackedMinRows rows or more (the rows were unknown at load: a model whose runs all have few
  // rows, a decode step, then never packs and keeps one copy of its weights).
  PackedLinearKernel(bool gemm, ops::ActivationSpec act, bool tb, int64_t k, int64_t n,
                     std::optional<SgemmPackedB> packed)
      : gemm_(gemm), act_(act), tb_(tb), k_(k), n_(n), deferred_(!packed) {
    if (packed) packed_ = std::move(*packed);
  }

  Status run(exec::KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    if (a.dtype() != DType::kF32 || !(a.rank() >= 2) || (gemm_ && (ctx.node().attr_int("transA") != 0 || a.rank() != 2)))
      return fallback(ctx);
    const int64_t k = k_, n = n_;
    if (a.dim(a.rank() - 1) != k) return fallback(ctx);  // the plain kernels name the mismatch
    const int64_t m = a.numel() / k;
    if (m < kPackedMinRows) return fallback(ctx);
    const Tensor& b = *ctx.input(1);
    if (deferred_) {
      std::call_once(pack_once_, [&] {
        packed_ = sgemm_pack_b(tb_, k, n, b.data<float>(), b.dim(1));
        release_mapped_pages(b.data<float>(), b.nbytes());
      });
    }
    TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
    float* py = y->mut_data<float>();
    float alpha = 1.0f, beta = 0.0f;
    const Tensor* c = gemm_ ? ctx.input(2) : nullptr;
    if (gemm_) {
      alpha = static_cast<float>(ctx.node().attr_float("alpha"));
      beta = static_cast<float>(ctx.node().attr_float("beta"));
      if (c == nullptr || c->numel() == 0) beta = 0.0f;
    }
    const bool bias = beta != 0.0f;
    const bool epilogue = gemm_ && (act_.kind != ops::FusedActivation::kNone || act_.has_post());
    const float* pa = a.data<float>();
    // Rows [i0, i1) of Y: C broadcast into them ([N], [1, N], [M, N], [M, 1] or a scalar; the
    // product accumulates onto it), the product, then the activation, while they are in cache.
    auto fill_bias = [&](int64_t i0, int64_t i1) {
      const Shape& cs = c->shape();
      const int64_t cm = cs.size() == 2 ? cs[0] : 1, cn = cs.empty() ? 1 : cs.back();
      const float* pc = c->data<float>();
      for (int64_t i = i0; i < i1; ++i) {
        const float* crow = pc + (cm == 1 ? 0 : i) * cn;
        float* yrow = py + i * n;
        if (cn == 1) std::fill(yrow, yrow + n, crow[0]);
        else std::copy(crow, crow + n, yrow);
      }
    };
    // C with whole rows ([N], [1, N], [M, N]: every projection's bias) is read by the product's
    // tiles as they store their first K block, instead of copied into Y first; [M, 1] and scalars
    // are. The sums stay in the order of the copy (bias + first block + ...), so a model with
    // constant weights gives the same bits as with its weights as inputs (tessera-web's trainer
    // and its exported model).
    const int64_t c_cols = bias ? (c->shape().empty() ? 1 : c->shape().back()) : 0;
    const bool bias_in_tiles = bias && c_cols == n;
    const int64_t ld_cin = bias_in_tiles && c->rank() == 2 && c->dim(0) != 1 ? n : 0;
    auto cin_at = [&](int64_t i0) { return bias_in_tiles ? c->data<float>() + i0 * ld_cin : nullptr; };
    auto activate = [&](int64_t i0, int64_t i1) { apply_epilogue_f32(act_, py + i0 * n, (i1 - i0) * n); };
    auto rows = [&](int64_t i0, int64_t i1, ThreadPool* pool) {
      if (bias && !bias_in_tiles) fill_bias(i0, i1);
      sgemm_prepacked_b(false, i1 - i0, alpha, pa + i0 * k, k, packed_, b.data<float>(), b.dim(1), beta, py + i0 * n,
                        n, pool, cin_at(i0), ld_cin);
      if (epilogue) activate(i0, i1);
    };
    ThreadPool& pool = ctx.pool();
    const int64_t threads = pool.num_threads();
    if (threads > 1 && m * n >= (int64_t{1} << 16) && m < kRowSplitRows * threads) {
      // The column split below: the bias and the activation split over the threads too (on one
      // thread they were 4% of GPT-like prefill's work at two threads, the other thread waiting).
      const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 13) / n);
      if (bias && !bias_in_tiles) pool.parallel_for(m, grain, fill_bias);
      sgemm_prepacked_b(false, m, alpha, pa, k, packed_, b.data<float>(), b.dim(1), beta, py, n, &pool, cin_at(0),
                        ld_cin);
      if (epilogue) pool.parallel_for(m, grain, activate);
    } else if (threads > 1 && m >= kRowSplitRows * threads) {
      // Enough rows for every thread (ViT's 197 tokens, a BERT's 128, Whisper's 1500): each
      // thread takes its share of the rows whole, all of K and N, inline. The product's own split
      // (the columns, one fork and join per K block, each thread packing the same rows of A) lost
      // a tenth of ViT-Tiny's Gemm time at two threads. Fewer rows (GPT-like prefill's 64) keep
      // the column split, so that each thread reads only its half of the cold weights.
      pool.parallel_for(threads, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) rows(m * t / threads, m * (t + 1) / threads, nullptr);
      });
    } else {
      rows(0, m, &pool);
    }
    return ok_status();
  }

 private:
  Status fallback(exec::KernelContext& ctx) {
    if (!gemm_) return matmul_kernel<kSel>(ctx);
    Status st = ok_status();
    if (dispatch_dtype<kSel & kMatMulDTypes>(ctx.input(0)->dtype(), [&](auto tag) { st = gemm_typed<decltype(tag)>(ctx, act_); }))
      return st;
    return unsupported(ctx.place(), ": ", ctx.node().op, " has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
  }

  bool gemm_;
  ops::ActivationSpec act_;
  bool tb_;
  int64_t k_, n_;
  bool deferred_;
  std::once_flag pack_once_;
  SgemmPackedB packed_;  // written once: at construction, or under pack_once_
};

// The packed kernel where B is a constant f32 matrix and A may have kPackedMinRows rows or more
// (B packed now where A's rows are known at load, else by the first run with that many); else null
// (the caller keeps its plain kernel).
template <DTypeMask kSel>
std::unique_ptr<exec::Kernel> packed_linear(const exec::KernelInit& init, bool gemm, const ops::ActivationSpec& act) {
  if constexpr (kSizeFirstKernels || !(kSel & dtype_bit(DType::kF32))) {
    return nullptr;
  } else {
    const Tensor* b = init.constant_inputs.size() > 1 ? init.constant_inputs[1] : nullptr;
    if (b == nullptr || b->dtype() != DType::kF32 || b->rank() != 2 || b->numel() == 0) return nullptr;
    if (init.input_types.empty() || init.input_types[0].dtype != DType::kF32) return nullptr;
    const bool ta = gemm && init.node.attr_int("transA") != 0;
    const bool tb = gemm && init.node.attr_int("transB") != 0;
    if (ta) return nullptr;
    const int64_t m = known_rows(init.input_types[0], gemm, ta);
    if (m >= 0 && m < kPackedMinRows) return nullptr;  // decode steps: sgemm's few-row paths read B raw
    const int64_t k = tb ? b->dim(1) : b->dim(0), n = tb ? b->dim(0) : b->dim(1);
    std::optional<SgemmPackedB> packed;
    if (m >= 0) {
      packed = sgemm_pack_b(tb, k, n, b->data<float>(), b->dim(1));
      release_mapped_pages(b->data<float>(), b->nbytes());  // read again only by another SIMD target
    }
    return std::unique_ptr<exec::Kernel>(new PackedLinearKernel<kSel>(gemm, act, tb, k, n, std::move(packed)));
  }
}

template <DTypeMask kSel>
Expected<std::unique_ptr<exec::Kernel>> create_matmul(const exec::KernelInit& init) {
  if (auto k = packed_linear<kSel>(init, false, {})) return k;
  return std::unique_ptr<exec::Kernel>(new exec::FnKernel(matmul_kernel<kSel>));
}

template <DTypeMask kSel>
Expected<std::unique_ptr<exec::Kernel>> create_gemm(const exec::KernelInit& init) {
  if (auto k = packed_linear<kSel>(init, true, {})) return k;
  return std::unique_ptr<exec::Kernel>(new exec::FnKernel(gemm_kernel<kSel>));
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
  if (auto k = packed_linear<kSel>(init, true, act)) return k;
  return std::unique_ptr<exec::Kernel>(new FusedGemmKernel<kSel>(act));
}

}  // namespace

void register_linalg_kernels(KernelRegistry& r) {
  const std::vector<DType> types = {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kU32, DType::kU64};
  TSR_IF_SELECTED("MatMul") r.add("MatMul", types, &create_matmul<kSel>);
  TSR_IF_SELECTED("com.microsoft::FusedMatMul")
  r.add_fn("com.microsoft::FusedMatMul", {DType::kF32, DType::kF64}, fused_matmul_kernel<kSel>);
  TSR_IF_SELECTED("Gemm") r.add("Gemm", types, &create_gemm<kSel>);
  TSR_IF_SELECTED("FusedGemm") r.add("FusedGemm", {DType::kF32, DType::kF64}, &create_fused_gemm<kSel>);
}

}  // namespace tsr::cpu
