// CPU kernels for linear (de)quantization (semantics: core/ops/families/quantize.cpp).
#include <cmath>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

// Index into a per-axis parameter for flat element i of a tensor shaped like `x`.
struct AxisIndexer {
  int64_t inner = 1, len = 1;
  bool per_axis = false;
  int64_t operator()(int64_t i) const { return per_axis ? (i / inner) % len : 0; }
};

Expected<AxisIndexer> indexer(const KernelContext& ctx, const Tensor& x, const Tensor& scale) {
  AxisIndexer ix;
  if (scale.rank() == 0 || (scale.numel() == 1 && x.rank() == 0)) return ix;
  auto axis = normalize_axis(ctx.node().attr_int("axis", 1), x.rank());
  if (!axis.ok()) return axis.status().with_context(ctx.place());
  ix.per_axis = true;
  ix.len = x.dim(*axis);
  if (scale.numel() != ix.len)
    return ctx.error("input[1] (scale) has ", scale.numel(), " entries, but axis ", *axis, " has length ", ix.len);
  for (int64_t d = *axis + 1; d < x.rank(); ++d) ix.inner *= x.dim(d);
  return ix;
}

double saturate(DType t, double v) {
  const double lo = t == DType::kU8 ? 0 : -128, hi = t == DType::kU8 ? 255 : 127;
  return std::min(hi, std::max(lo, v));
}

Status quantize_linear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  const Tensor* zp = ctx.input(2);
  TSR_ASSIGN_OR_RETURN(AxisIndexer ix, indexer(ctx, x, scale));
  if (zp && zp->numel() != scale.numel()) return ctx.error("input[2] (zero_point) must have as many entries as input[1] (scale)");
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const DType t = y->dtype();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = ix(i);
    const double q = saturate(t, std::nearbyint(x.scalar_f64(i) / scale.scalar_f64(k)) + (zp ? zp->scalar_f64(k) : 0.0));
    if (t == DType::kU8) y->mut_data<uint8_t>()[i] = static_cast<uint8_t>(q);
    else y->mut_data<int8_t>()[i] = static_cast<int8_t>(q);
  }
  return ok_status();
}

Status dequantize_linear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  const Tensor* zp = ctx.input(2);
  TSR_ASSIGN_OR_RETURN(AxisIndexer ix, indexer(ctx, x, scale));
  if (zp && zp->numel() != scale.numel()) return ctx.error("input[2] (zero_point) must have as many entries as input[1] (scale)");
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = ix(i);
    const double v = (x.scalar_f64(i) - (zp ? zp->scalar_f64(k) : 0.0)) * scale.scalar_f64(k);
    if (y->dtype() == DType::kF32) y->mut_data<float>()[i] = static_cast<float>(v);
    else if (y->dtype() == DType::kF16) y->mut_data<Half>()[i].bits = f32_to_f16(static_cast<float>(v));
    else y->mut_data<BFloat16>()[i].bits = f32_to_bf16(static_cast<float>(v));
  }
  return ok_status();
}

Status dynamic_quantize_linear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const float* p = x.data<float>();
  float lo = 0, hi = 0;  // the range always includes 0
  for (int64_t i = 0; i < x.numel(); ++i) {
    lo = std::min(lo, p[i]);
    hi = std::max(hi, p[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  const float zp = scale == 0 ? 0.0f : static_cast<float>(saturate(DType::kU8, std::nearbyint(-lo / scale)));
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  for (int64_t i = 0; i < x.numel(); ++i)
    y->mut_data<uint8_t>()[i] = static_cast<uint8_t>(scale == 0 ? zp : saturate(DType::kU8, std::nearbyint(p[i] / scale) + zp));
  if (ctx.num_outputs() > 1) ctx.set_output(1, Tensor::scalar<float>(scale));
  if (ctx.num_outputs() > 2) ctx.set_output(2, Tensor::scalar<uint8_t>(static_cast<uint8_t>(zp)));
  return ok_status();
}

}  // namespace

void register_quantize_kernels(KernelRegistry& r) {
  r.add_fn("QuantizeLinear", {DType::kF32, DType::kF16, DType::kBF16, DType::kI32}, quantize_linear);
  r.add_fn("DequantizeLinear", {DType::kU8, DType::kI8, DType::kI32}, dequantize_linear);
  r.add_fn("DynamicQuantizeLinear", {DType::kF32}, dynamic_quantize_linear);
}

}  // namespace tsr::cpu
