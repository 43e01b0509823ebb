// Gelu functors shared by the elementwise_unary kernels (ONNX Gelu) and the com.microsoft Gelu
// family (transformer_act.cpp): the exact erf form and the tanh approximation, as unary ops of
// the elementwise drivers (elementwise_impl.h). Hendrycks & Gimpel 2016, "Gaussian Error Linear
// Units": Gelu(x) = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) ~ 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
//
// The f32 vector paths are approximations within a few 1e-7 of the scalar ones.
// A Highway "-inl" header like elementwise_impl.h (per-target include guard toggled by
// hwy/foreach_target.h): include it after elementwise_impl.h.
#include <cmath>
#include <numbers>

#if defined(TSR_CPU_GELU_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_GELU_INL_H_
#undef TSR_CPU_GELU_INL_H_
#else
#define TSR_CPU_GELU_INL_H_
#endif

#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include "backends/cpu/kernels/f32_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

// Gelu (approximate="none"): 0.5 x (1 + erf(x / sqrt 2)). f32 vectors use vec_gelu_erf
// (f32_math-inl.h, shared with the fused epilogue).
struct GeluErfOp : FloatOnly {
  static constexpr bool kVecF32 = HWY_TARGET != HWY_SCALAR;
  template <class C> C operator()(C x) const {
    return C(0.5) * x * (C(1) + std::erf(x * static_cast<C>(std::numbers::sqrt2 / 2)));
  }
  template <class D, class V> V vec(D d, V x) const { return vec_gelu_erf(d, x); }
};
// The scalar u = kGeluK (x + kGeluC x^3) (constants and vector form in f32_math-inl.h).
template <class C> C gelu_u(C x) { return static_cast<C>(kGeluK) * (x + static_cast<C>(kGeluC) * x * x * x); }
// Gelu (approximate="tanh"): 0.5 x (1 + tanh(u)). The vector path only pays off with real
// vectors (on the 1-lane HWY_SCALAR target libm is faster).
struct GeluTanhOp : FloatOnly {
  static constexpr bool kVecF32 = HWY_TARGET != HWY_SCALAR;
  template <class C> C operator()(C x) const { return C(0.5) * x * (C(1) + std::tanh(gelu_u(x))); }
  template <class D, class V> V vec(D d, V x) const { return vec_gelu_tanh(d, x); }
};

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // TSR_CPU_GELU_INL_H_ per-target guard
