// Helpers shared by the quantized matmul (qlinear.cpp) and conv (qconv.cpp) kernels: the
// quantization parameters' geometry, the reference paths' centering and requantization (as
// onnxruntime rounds), zero point access. Internal to those two files.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu::qlinear {

using exec::KernelContext;

inline double saturate(DType t, double v) {
  const double lo = t == DType::kU8 ? 0 : -128, hi = t == DType::kU8 ? 255 : 127;
  return std::min(hi, std::max(lo, v));
}

// ---- The reference paths ----

// Index of a quantization parameter of `count` entries for element i of a matrix operand:
// one entry (per tensor), or per row (`inner` = row length, `period` = rows) / per column
// (`inner` = 1, `period` = columns).
struct QParamIndex {
  int64_t inner = 1, period = 1;
  bool per = false;
  int64_t operator()(int64_t i) const { return per ? (i / inner) % period : 0; }
};

inline Expected<QParamIndex> qparam_index(const KernelContext& ctx, const Tensor* p, size_t input, int64_t inner,
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

// x - zero_point as i32 (x u8 or i8; zero point per tensor or along `ix`).
template <typename Q>
inline Expected<Tensor> centered(const Tensor& x, const Tensor* zp, const QParamIndex& ix) {
  TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::empty(DType::kI32, x.shape()));
  const Q* px = x.data<Q>();
  const Q* pz = zp ? zp->data<Q>() : nullptr;
  auto* po = out.mut_data<int32_t>();
  for (int64_t i = 0; i < x.numel(); ++i)
    po[i] = static_cast<int32_t>(px[i]) - (pz ? static_cast<int32_t>(pz[ix(i)]) : 0);
  return out;
}

inline Expected<Tensor> centered_any(const Tensor& x, const Tensor* zp, const QParamIndex& ix) {
  if (x.dtype() == DType::kU8) return centered<uint8_t>(x, zp, ix);
  return centered<int8_t>(x, zp, ix);
}

// The requantization of QLinearMatMul and QLinearConv, as onnxruntime's: y[o] = acc(o) *
// (in_scale(o) / y_scale) in f32, rounded half to even, plus y_zp, saturated to y's u8/i8.
// y_scale and y_zero_point are inputs 6 and 7, scalars.
template <typename Acc, typename InScale>
inline Status requantize(KernelContext& ctx, Tensor* y, const Acc& acc, const InScale& in_scale) {
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

// Entry i of a u8/i8 zero point.
inline int32_t q_scalar_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kI8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

// A zero point that is absent or has one value for every entry (per-channel zeros, as
// symmetric weights have).
inline bool uniform_zero_point(const Tensor* zp) {
  if (!zp || zp->numel() <= 1) return true;
  for (int64_t i = 1; i < zp->numel(); ++i)
    if (q_scalar_at(*zp, i) != q_scalar_at(*zp, 0)) return false;
  return true;
}

// A u8/i8 scalar tensor's value (a zero point).
inline int32_t q_scalar(const Tensor& t) { return q_scalar_at(t, 0); }

// A quantization parameter with one entry or `per` entries (1-D): its count, or -1 if neither.
inline int64_t qparam_count(const Tensor* p, int64_t per) {
  if (!p) return 0;
  if (p->numel() == 1 && p->rank() <= 1) return 1;
  return p->rank() == 1 && p->numel() == per ? per : -1;
}

}  // namespace tsr::cpu::qlinear
