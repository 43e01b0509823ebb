// f32 vector math shared by the CPU kernels that apply elementwise functions to Highway vectors:
// the unary kernels (elementwise_unary.cpp) and FusedElementwise (fused_elementwise.cpp). Each
// function agrees with the scalar std:: definition of the ONNX op of that name, including NaN
// and infinities (Highway's polynomial Exp/Log/Tanh are only valid on part of the range; the
// repairs below cover the rest), to a few ulp.
//
// A Highway "-inl" header (per-target include guard toggled by hwy/foreach_target.h): include it
// after <hwy/highway.h> from a kernel file; everything lives in tsr::cpu::HWY_NAMESPACE.
#include <limits>
#include <numbers>

#if defined(TSR_CPU_F32_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_F32_MATH_INL_H_
#undef TSR_CPU_F32_MATH_INL_H_
#else
#define TSR_CPU_F32_MATH_INL_H_
#endif

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

// e^x. hn::Exp returns 0 for NaN and is only accurate below ln(FLT_MAX).
template <class D, class V>
HWY_INLINE V vec_exp(D d, V x) {
  V y = hn::Exp(d, x);
  y = hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.7228390f)), hn::Set(d, std::numeric_limits<float>::infinity()), y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// e^t for t in [-86, 0] (softmax's differences from the row max), to 1-2 ulp: t = n ln2 + r with
// n = round(t / ln2) (by adding 1.5 * 2^23) and |r| <= ln2 / 2 (ln2 in two parts, Cody & Waite),
// e^r by the degree-7 polynomial of Cephes' expf (1 + r + r^2 p(r)), and 2^n added to the
// exponent bits (n >= -124 keeps the result normal). About 16 vector operations where hn::Exp,
// valid on all of f32's range, takes about 25: softmax's exp (attention.cpp) is a tenth of a long
// encoder's time, and GELU's erf (gelu-inl.h) needs one per element. Max relative error over
// every float in [-86, 0]: 8.4e-8 (hn::Exp: 8.6e-8); e^0 is exactly 1. Outside the range the
// caller clamps.
template <class D, class V>
HWY_INLINE V exp_nonpositive(D d, V t) {
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, 12582912.0f);
  const V kf = hn::MulAdd(t, hn::Set(d, 1.44269504088896341f), magic);  // n + magic
  const V n = hn::Sub(kf, magic);
  V r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), t);
  r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
  const V z = hn::Mul(r, r);
  V p = hn::Set(d, 1.9875691500e-4f);
  p = hn::MulAdd(p, r, hn::Set(d, 1.3981999507e-3f));
  p = hn::MulAdd(p, r, hn::Set(d, 8.3334519073e-3f));
  p = hn::MulAdd(p, r, hn::Set(d, 4.1665795894e-2f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.6666665459e-1f));
  p = hn::MulAdd(p, r, hn::Set(d, 5.0000001201e-1f));
  const V y = hn::Add(hn::MulAdd(p, z, r), hn::Set(d, 1.0f));
  const auto e = hn::ShiftLeft<23>(hn::Sub(hn::BitCast(di, kf), hn::BitCast(di, magic)));
  return hn::BitCast(d, hn::Add(hn::BitCast(di, y), e));
}

// erf for the Gelu forms only, where it is added to 1: Abramowitz & Stegun 7.1.26,
// erf(a) = 1 - t (a1 + t (a2 + ... + t a5)) e^(-a^2), t = 1 / (1 + p a), a = |x|, absolute error
// <= 1.5e-7 (Highway has no erf). |x| is capped at 9 (erf(9) = 1 in f32) so that -a^2 stays in
// exp_nonpositive's range without a clamp.
template <class D, class V> V vec_erf_for_gelu(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V a = hn::Min(hn::Abs(x), hn::Set(d, 9.0f));
  const V t = hn::Div(one, hn::MulAdd(hn::Set(d, 0.3275911f), a, one));
  V poly = hn::Set(d, 1.061405429f);
  poly = hn::MulAdd(poly, t, hn::Set(d, -1.453152027f));
  poly = hn::MulAdd(poly, t, hn::Set(d, 1.421413741f));
  poly = hn::MulAdd(poly, t, hn::Set(d, -0.284496736f));
  poly = hn::MulAdd(poly, t, hn::Set(d, 0.254829592f));
  const V e = exp_nonpositive(d, hn::NegMulAdd(a, a, hn::Zero(d)));  // -a^2 >= -81: in exp_nonpositive's range
  return hn::CopySign(hn::NegMulAdd(hn::Mul(poly, t), e, one), x);
}
// Gelu (approximate="none") on f32 vectors: 0.5 x (1 + erf(x / sqrt 2)), with the erf above;
// NaN passes through. The Gelu kernels (gelu-inl.h) and the fused Gemm epilogue (epilogue.h).
template <class D, class V>
HWY_INLINE V vec_gelu_erf(D d, V x) {
  const V e = vec_erf_for_gelu(d, hn::Mul(x, hn::Set(d, 0.70710678118654752f)));
  const V y = hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(hn::Set(d, 1.0f), e));
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// The tanh approximation of Gelu: u = kGeluK (x + kGeluC x^3).
inline constexpr double kGeluK = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
inline constexpr double kGeluC = 0.044715;
template <class D, class V> V vec_gelu_u(D d, V x) {
  const V x3 = hn::Mul(hn::Mul(x, x), x);
  return hn::Mul(hn::Set(d, static_cast<float>(kGeluK)), hn::MulAdd(hn::Set(d, static_cast<float>(kGeluC)), x3, x));
}
// Gelu (approximate="tanh", com.microsoft FastGelu) on f32 vectors: 0.5 x (1 + tanh(u)); NaN
// passes through. The Gelu kernel (gelu-inl.h) and the fused Gemm epilogue (epilogue.h) both
// use this, so a Gemm with the tanh Gelu fused gives the bits of the two separate nodes.
template <class D, class V>
HWY_INLINE V vec_gelu_tanh(D d, V x) {
  const V half = hn::Set(d, 0.5f);
  const V y = hn::Mul(hn::Mul(half, x), hn::Add(hn::Set(d, 1.0f), hn::Tanh(d, vec_gelu_u(d, x))));
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// ln x. hn::Log is valid on (0, FLT_MAX]: 0 gives -inf, negatives NaN, +inf and NaN themselves.
template <class D, class V>
HWY_INLINE V vec_log(D d, V x) {
  const V zero = hn::Zero(d);
  V y = hn::Log(d, hn::Max(x, hn::Set(d, std::numeric_limits<float>::denorm_min())));
  y = hn::IfThenElse(hn::Eq(x, zero), hn::Set(d, -std::numeric_limits<float>::infinity()), y);
  y = hn::IfThenElse(hn::Lt(x, zero), hn::Set(d, std::numeric_limits<float>::quiet_NaN()), y);
  y = hn::IfThenElse(hn::Eq(x, hn::Set(d, std::numeric_limits<float>::infinity())), x, y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// 1 / (1 + e^-x), through e^-|x| so that neither branch overflows.
template <class D, class V>
HWY_INLINE V vec_sigmoid(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = vec_exp(d, hn::Neg(hn::Abs(x)));
  const V r = hn::Div(one, hn::Add(one, e));
  return hn::IfThenElse(hn::Ge(x, hn::Zero(d)), r, hn::Mul(e, r));
}

template <class D, class V>
HWY_INLINE V vec_tanh(D d, V x) {
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Tanh(d, x));
}

// max(x, 0), NaN passing through.
template <class D, class V>
HWY_INLINE V vec_relu(D d, V x) {
  const V z = hn::Zero(d);
  return hn::IfThenElse(hn::Lt(x, z), z, x);
}

template <class D, class V>
HWY_INLINE V vec_leaky_relu(D d, V x, float alpha) {
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(x, hn::Set(d, alpha)), x);
}

// min(max(x, lo), hi), NaN passing through.
template <class D, class V>
HWY_INLINE V vec_clip(D d, V x, float lo, float hi) {
  const V c = hn::Min(hn::Max(x, hn::Set(d, lo)), hn::Set(d, hi));
  return hn::IfThenElse(hn::IsNaN(x), x, c);
}

// max(0, min(1, alpha x + beta)), NaN passing through.
template <class D, class V>
HWY_INLINE V vec_hard_sigmoid(D d, V x, float alpha, float beta) {
  const V v = hn::MulAdd(hn::Set(d, alpha), x, hn::Set(d, beta));
  const V c = hn::Min(hn::Max(v, hn::Zero(d)), hn::Set(d, 1.0f));
  return hn::IfThenElse(hn::IsNaN(v), v, c);
}

// x * max(0, min(1, x / 6 + 1/2)), NaN passing through.
template <class D, class V>
HWY_INLINE V vec_hard_swish(D d, V x) {
  const V v = hn::MulAdd(x, hn::Set(d, 1.0f / 6.0f), hn::Set(d, 0.5f));
  const V c = hn::Min(hn::Max(v, hn::Zero(d)), hn::Set(d, 1.0f));
  return hn::IfThenElse(hn::IsNaN(v), v, hn::Mul(x, c));
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // TSR_CPU_F32_MATH_INL_H_
