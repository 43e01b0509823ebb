// CPU kernels for linear (de)quantization and the quantized matmuls (semantics:
// core/ops/families/quantize.cpp). The matmuls subtract the zero points into i32 copies and run
// the shared numpy.matmul (matmul.h) with i32 accumulation; the quantized convs likewise run
// Conv's im2col path on i32 (conv.h).
#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/conv.h"
#include "backends/cpu/kernels/matmul.h"

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
  auto axis = normalize_axis(ctx.node().attr_int("axis"), x.rank());
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
  // The division rounds in f32 for float x (as the onnx reference's np.divide; i32 x divides in f64):
  // a double quotient can land on the other side of a .5 tie than the f32 one.
  const bool f64 = x.dtype() == DType::kF64 || x.dtype() == DType::kI32;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = ix(i);
    const double quot = f64 ? x.scalar_f64(i) / scale.scalar_f64(k)
                            : static_cast<double>(static_cast<float>(x.scalar_f64(i)) / static_cast<float>(scale.scalar_f64(k)));
    const double q = saturate(t, std::nearbyint(quot) + (zp ? zp->scalar_f64(k) : 0.0));
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
  // An all-zero (or empty) input has range [0, 0]: the formula's scale 0 would divide by zero, and
  // onnxruntime uses scale 1, zero point 0 (so every element quantizes to 0).
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float zp = hi == lo ? 0.0f : static_cast<float>(saturate(DType::kU8, std::nearbyint(-lo / scale)));
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  for (int64_t i = 0; i < x.numel(); ++i)
    y->mut_data<uint8_t>()[i] = static_cast<uint8_t>(saturate(DType::kU8, std::nearbyint(p[i] / scale) + zp));
  if (ctx.num_outputs() > 1) ctx.set_output(1, Tensor::scalar<float>(scale));
  if (ctx.num_outputs() > 2) ctx.set_output(2, Tensor::scalar<uint8_t>(static_cast<uint8_t>(zp)));
  return ok_status();
}

// Index of a quantization parameter of `count` entries for element i of a matrix operand:
// one entry (per tensor), or per row (`inner` = row length, `period` = rows) / per column
// (`inner` = 1, `period` = columns).
struct QParamIndex {
  int64_t inner = 1, period = 1;
  bool per = false;
  int64_t operator()(int64_t i) const { return per ? (i / inner) % period : 0; }
};

Expected<QParamIndex> qparam_index(const KernelContext& ctx, const Tensor* p, size_t input, int64_t inner,
                                   int64_t period, const char* along) {
  QParamIndex ix;
  if (!p || p->numel() == 1) return ix;
  if (p->rank() != 1 || p->numel() != period)
    return ctx.error("input[", input, "]: shape ", shape_str(p->shape()), ", expected a scalar or [", period, "] (per ",
                     along, ")");
  ix.per = true;
  ix.inner = inner;
  ix.period = period;
  return ix;
}

// Matrix geometry of a matmul operand: rows and columns of its last two dims (1-D A is one
// row, 1-D B one column, as numpy promotes them).
void matrix_dims(const Tensor& t, bool is_a, int64_t* rows, int64_t* cols) {
  if (t.rank() == 1) {
    *rows = is_a ? 1 : t.dim(0);
    *cols = is_a ? t.dim(0) : 1;
  } else {
    *rows = t.dim(t.rank() - 2);
    *cols = t.dim(t.rank() - 1);
  }
}

// x - zero_point as i32 (x u8 or i8; zero point per tensor or along `ix`).
template <typename Q>
Expected<Tensor> centered(const Tensor& x, const Tensor* zp, const QParamIndex& ix) {
  TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::empty(DType::kI32, x.shape()));
  const Q* px = x.data<Q>();
  const Q* pz = zp ? zp->data<Q>() : nullptr;
  auto* po = out.mut_data<int32_t>();
  for (int64_t i = 0; i < x.numel(); ++i)
    po[i] = static_cast<int32_t>(px[i]) - (pz ? static_cast<int32_t>(pz[ix(i)]) : 0);
  return out;
}

Expected<Tensor> centered_any(const Tensor& x, const Tensor* zp, const QParamIndex& ix) {
  if (x.dtype() == DType::kU8) return centered<uint8_t>(x, zp, ix);
  return centered<int8_t>(x, zp, ix);
}

// (A - a_zp) @ (B - b_zp) into i32 `acc` (shaped like the output). A's zero point is per
// row, B's per column.
Status integer_matmul(KernelContext& ctx, size_t ia, size_t iazp, size_t ib, size_t ibzp, Tensor* acc) {
  const Tensor& a = *ctx.input(ia);
  const Tensor& b = *ctx.input(ib);
  int64_t m = 0, ka = 0, kb = 0, n = 0;
  matrix_dims(a, true, &m, &ka);
  matrix_dims(b, false, &kb, &n);
  TSR_ASSIGN_OR_RETURN(QParamIndex ax, qparam_index(ctx, ctx.input(iazp), iazp, ka, m, "row of A"));
  TSR_ASSIGN_OR_RETURN(QParamIndex bx, qparam_index(ctx, ctx.input(ibzp), ibzp, 1, n, "column of B"));
  TSR_ASSIGN_OR_RETURN(Tensor a32, centered_any(a, ctx.input(iazp), ax));
  TSR_ASSIGN_OR_RETURN(Tensor b32, centered_any(b, ctx.input(ibzp), bx));
  matmul_into<int32_t>(a32, b32, acc, ctx.pool());
  return ok_status();
}

Status matmul_integer(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  return integer_matmul(ctx, 0, 2, 1, 3, y);
}

// The requantization of QLinearMatMul and QLinearConv, as onnxruntime's: y[o] = acc(o) *
// (in_scale(o) / y_scale) in f32, rounded half to even, plus y_zp, saturated to y's u8/i8.
// y_scale and y_zero_point are inputs 6 and 7, scalars.
template <typename Acc, typename InScale>
Status requantize(KernelContext& ctx, Tensor* y, const Acc& acc, const InScale& in_scale) {
  const Tensor& ys = *ctx.input(6);
  const Tensor& yz = *ctx.input(7);
  if (ys.numel() != 1 || yz.numel() != 1) return ctx.error("y_scale and y_zero_point must be scalars");
  const float y_scale = ys.data<float>()[0];
  const auto y_zp = static_cast<float>(yz.scalar_f64(0));
  const DType t = y->dtype();
  for (int64_t o = 0; o < y->numel(); ++o) {
    const float mult = in_scale(o) / y_scale;
    const double q = saturate(t, static_cast<double>(std::nearbyint(static_cast<float>(acc(o)) * mult) + y_zp));
    if (t == DType::kU8) y->mut_data<uint8_t>()[o] = static_cast<uint8_t>(q);
    else y->mut_data<int8_t>()[o] = static_cast<int8_t>(q);
  }
  return ok_status();
}

// Requantization: in f32, acc * (a_scale * b_scale / y_scale) (requantize).
Status qlinear_matmul(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  TSR_ASSIGN_OR_RETURN(Tensor acc, Tensor::empty(DType::kI32, y->shape()));
  TSR_RETURN_IF_ERROR(integer_matmul(ctx, 0, 2, 3, 5, &acc));
  int64_t m = 0, k = 0, kb = 0, n = 0;
  matrix_dims(*ctx.input(0), true, &m, &k);
  matrix_dims(*ctx.input(3), false, &kb, &n);
  // Output element o sits in row (o / n) % m and column o % n.
  TSR_ASSIGN_OR_RETURN(QParamIndex as, qparam_index(ctx, ctx.input(1), 1, n, m, "row of A"));
  TSR_ASSIGN_OR_RETURN(QParamIndex bs, qparam_index(ctx, ctx.input(4), 4, 1, n, "column of B"));
  const float* pas = ctx.input(1)->data<float>();
  const float* pbs = ctx.input(4)->data<float>();
  const int32_t* pa = acc.data<int32_t>();
  return requantize(ctx, y, [&](int64_t o) { return pa[o]; }, [&](int64_t o) { return pas[as(o)] * pbs[bs(o)]; });
}

// Conv(x - x_zp, w - w_zp) into i32 `acc`; x's zero point is per tensor, w's per tensor or per
// output channel.
Status integer_conv(KernelContext& ctx, size_t ix, size_t ixzp, size_t iw, size_t iwzp, Tensor* acc) {
  const Tensor& x = *ctx.input(ix);
  const Tensor& w = *ctx.input(iw);
  if (w.rank() < 1 || w.dim(0) == 0) return ctx.error("input[", iw, "] (w): shape ", shape_str(w.shape()));
  TSR_ASSIGN_OR_RETURN(QParamIndex xi, qparam_index(ctx, ctx.input(ixzp), ixzp, 1, 1, "tensor"));
  TSR_ASSIGN_OR_RETURN(QParamIndex wi, qparam_index(ctx, ctx.input(iwzp), iwzp, w.numel() / w.dim(0), w.dim(0), "output channel"));
  TSR_ASSIGN_OR_RETURN(Tensor x32, centered_any(x, ctx.input(ixzp), xi));
  TSR_ASSIGN_OR_RETURN(Tensor w32, centered_any(w, ctx.input(iwzp), wi));
  return conv_i32(ctx, x32, w32, acc);
}

Status conv_integer(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  return integer_conv(ctx, 0, 2, 1, 3, y);
}

// Requantization as QLinearMatMul, per output channel m: (acc + B[m]) * (x_scale * w_scale[m] /
// y_scale) (requantize).
Status qlinear_conv(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  TSR_ASSIGN_OR_RETURN(Tensor acc, Tensor::empty(DType::kI32, y->shape()));
  TSR_RETURN_IF_ERROR(integer_conv(ctx, 0, 2, 3, 5, &acc));
  const int64_t m = y->rank() > 1 ? y->dim(1) : 1;
  const int64_t plane = y->numel() == 0 ? 1 : y->numel() / (y->dim(0) * m);
  TSR_ASSIGN_OR_RETURN(QParamIndex ws, qparam_index(ctx, ctx.input(4), 4, plane, m, "output channel"));
  TSR_ASSIGN_OR_RETURN(QParamIndex xs, qparam_index(ctx, ctx.input(1), 1, 1, 1, "tensor"));
  const Tensor* bias = ctx.input(8);
  if (bias && bias->numel() != m) return ctx.error("input[8] (B) has ", bias->numel(), " entries, expected ", m);
  const float x_scale = ctx.input(1)->data<float>()[xs(0)];
  const float* pws = ctx.input(4)->data<float>();
  const int32_t* pb = bias ? bias->data<int32_t>() : nullptr;
  const int32_t* pa = acc.data<int32_t>();
  return requantize(
      ctx, y, [&](int64_t o) { return pa[o] + (pb ? pb[(o / plane) % m] : 0); },
      [&](int64_t o) { return x_scale * pws[ws(o)]; });
}

}  // namespace

void register_quantize_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("QuantizeLinear") r.add_fn("QuantizeLinear", {DType::kF32, DType::kF16, DType::kBF16, DType::kI32}, quantize_linear);
  TSR_IF_SELECTED("DequantizeLinear") r.add_fn("DequantizeLinear", {DType::kU8, DType::kI8, DType::kI32}, dequantize_linear);
  TSR_IF_SELECTED("DynamicQuantizeLinear") r.add_fn("DynamicQuantizeLinear", {DType::kF32}, dynamic_quantize_linear);
  TSR_IF_SELECTED("MatMulInteger") r.add_fn("MatMulInteger", {DType::kU8, DType::kI8}, matmul_integer);
  TSR_IF_SELECTED("QLinearMatMul") r.add_fn("QLinearMatMul", {DType::kU8, DType::kI8}, qlinear_matmul);
  TSR_IF_SELECTED("ConvInteger") r.add_fn("ConvInteger", {DType::kU8, DType::kI8}, conv_integer);
  TSR_IF_SELECTED("QLinearConv") r.add_fn("QLinearConv", {DType::kU8, DType::kI8}, qlinear_conv);
}

}  // namespace tsr::cpu
