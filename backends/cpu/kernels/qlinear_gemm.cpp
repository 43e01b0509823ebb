// com.microsoft::QGemm (semantics: core/ops/families/quantize.cpp) on qgemm (qgemm.h): what
// quantize_fusion makes of a QDQ Gemm, e.g. a CNN's classifier, which otherwise dequantized its
// weight (1280 x 1000 floats for MobileNetV2) and ran an f32 Gemm on every call.
//
// Rounding: onnxruntime's QGemm kernel: the i32 bias C is added to the exact i32 sums, the output
// scale is (alpha * a_scale * b_scale[n]) / y_scale in f32, in that order, and the output stage is
// qgemm's (saturate(round_half_even(float(acc) * scale) + y_zp)), QLinearMatMul's and
// QLinearConv's too.
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/qgemm.h"
#include "core/base/mapped_pages.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

// Inputs of QGemm.
enum : size_t { kA = 0, kAScale, kAZp, kB, kBScale, kBZp, kC, kYScale, kYZp };

int32_t code(const Tensor& t, int64_t i) { return t.dtype() == DType::kI8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i]; }

// B's packing: B is [K, N], or [N, K] with transB; its zero point scalar or [N].
QgemmPackedB pack(const Tensor& b, bool trans_b, const Tensor* zp) {
  const int64_t k = b.dim(trans_b ? 1 : 0), n = b.dim(trans_b ? 0 : 1);
  const int64_t count = zp ? (zp->numel() == 1 ? 1 : n) : 0;
  return qgemm_pack_b(k, n, b.raw(), b.dtype() == DType::kI8, b.dim(1), trans_b, zp ? zp->raw() : nullptr, count);
}

class QGemmKernel final : public exec::Kernel {
 public:
  QGemmKernel(float alpha, bool trans_b, std::optional<QgemmPackedB> packed)
      : alpha_(alpha), trans_b_(trans_b), packed_(std::move(packed)) {}

  Status run(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(kA);
    const Tensor& b = *ctx.input(kB);
    const Tensor& a_scale = *ctx.input(kAScale);
    const Tensor* a_zp = ctx.input(kAZp);
    const Tensor& b_scale = *ctx.input(kBScale);
    const Tensor* b_zp = ctx.input(kBZp);
    const Tensor* c = ctx.input(kC);
    const Tensor* y_scale = ctx.input(kYScale);
    const Tensor* y_zp = ctx.input(kYZp);
    if (a.rank() != 2 || b.rank() != 2)
      return ctx.error("A ", shape_str(a.shape()), " and B ", shape_str(b.shape()), " must be 2-D");
    const int64_t m = a.dim(0), k = a.dim(1);
    const int64_t kb = b.dim(trans_b_ ? 1 : 0), n = b.dim(trans_b_ ? 0 : 1);
    if (k != kb) return ctx.error("inner dims differ: A ", shape_str(a.shape()), ", B ", shape_str(b.shape()));
    if (a_scale.numel() != 1 || (a_zp && a_zp->numel() != 1))
      return ctx.error("a_scale and a_zero_point must be scalars");
    if ((b_scale.numel() != 1 && b_scale.numel() != n) || (b_zp && b_zp->numel() != 1 && b_zp->numel() != n))
      return ctx.error("b_scale and b_zero_point must be scalars or [", n, "]");
    if (c && c->numel() != n && c->numel() != 1)
      return ctx.error("input[6] (C): shape ", shape_str(c->shape()), ", expected [", n, "] or a scalar");
    if ((y_scale && y_scale->numel() != 1) || (y_zp && y_zp->numel() != 1))
      return ctx.error("y_scale and y_zero_point must be scalars");
    if (k >= (int64_t{1} << 15)) return unsupported(ctx.place(), ": K = ", k, " (at most 32767)");
    TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
    if (y->numel() == 0) return ok_status();

    // onnxruntime's output scale: alpha * a_scale * b_scale[n] (/ y_scale), in f32, in that order.
    const int64_t ns = b_scale.numel();
    TSR_ASSIGN_OR_RETURN(void* mem, ctx.scratch(size_t(ns + (c && c->numel() == 1 ? n : 0)) * sizeof(float)));
    float* scale = static_cast<float*>(mem);
    const float as = a_scale.data<float>()[0];
    for (int64_t j = 0; j < ns; ++j) {
      scale[j] = alpha_ * as * b_scale.data<float>()[j];
      if (y_scale) scale[j] = scale[j] / y_scale->data<float>()[0];
    }
    QgemmOutput out;
    out.out = y->raw_mut();
    out.row_stride = n;
    out.scale = scale;
    out.scale_per_col = ns > 1;
    if (c && c->numel() == 1) {  // a scalar C broadcast to every column
      int32_t* bias = reinterpret_cast<int32_t*>(scale + ns);
      for (int64_t j = 0; j < n; ++j) bias[j] = c->data<int32_t>()[0];
      out.bias_i32 = bias;
    } else {
      out.bias_i32 = c ? c->data<int32_t>() : nullptr;
    }
    if (y_scale) {
      out.kind = QgemmOutput::kQuant;
      out.out_signed = y->dtype() == DType::kI8;
      out.out_zp = y_zp ? code(*y_zp, 0) : 0;
    } else {
      out.kind = QgemmOutput::kFloat;
    }
    std::optional<QgemmPackedB> local;
    if (!packed_ || packed_->k != k || packed_->n != n) local = pack(b, trans_b_, b_zp);
    qgemm(m, a.raw(), a.dtype() == DType::kI8, k, a_zp ? code(*a_zp, 0) : 0, local ? *local : *packed_, out,
          &ctx.pool());
    return ok_status();
  }

 private:
  float alpha_;
  bool trans_b_;
  std::optional<QgemmPackedB> packed_;  // constant B with its constant zero point, packed at load
};

Expected<std::unique_ptr<exec::Kernel>> create_qgemm(const exec::KernelInit& init) {
  if (init.node.attr_int("transA", 0) != 0) return unsupported(init.place, ": transA = 1");
  const bool trans_b = init.node.attr_int("transB", 0) != 0;
  auto constant = [&](size_t i) -> const Tensor* {
    return i < init.constant_inputs.size() ? init.constant_inputs[i] : nullptr;
  };
  const bool has_zp = kBZp < init.node.inputs.size() && init.node.inputs[kBZp] >= 0;
  const Tensor* b = constant(kB);
  const Tensor* zp = constant(kBZp);
  std::optional<QgemmPackedB> packed;
  if (b && (b->dtype() == DType::kU8 || b->dtype() == DType::kI8) && b->rank() == 2 && (!has_zp || zp) &&
      (!zp || (zp->dtype() == b->dtype() && (zp->numel() == 1 || zp->numel() == b->dim(trans_b ? 0 : 1)))) &&
      b->dim(trans_b ? 1 : 0) < (int64_t{1} << 15)) {
    packed = pack(*b, trans_b, zp);
    // Runs read the packed copy: the .tsr mapping's pages of the raw weight need not stay resident.
    release_mapped_pages(b->raw(), b->nbytes());
  }
  return std::unique_ptr<exec::Kernel>(
      new QGemmKernel(static_cast<float>(init.node.attr_float("alpha", 1.0)), trans_b, std::move(packed)));
}

}  // namespace

void register_qlinear_gemm_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("com.microsoft::QGemm") r.add("com.microsoft::QGemm", {DType::kU8, DType::kI8}, &create_qgemm);
}

}  // namespace tsr::cpu
