// The activation epilogue of the fused CPU kernels (FusedConv, FusedGemm): applied to a block of
// freshly computed outputs while it is still in cache, instead of a separate elementwise pass
// over the whole tensor. The activations and their parameters are defined once in
// core/ops/fused_activation.h. Kept apart from the Conv/GEMM loops so that those can change
// without touching it.
//
// A Highway "-inl" header (per-target include guard toggled by hwy/foreach_target.h): include it
// after <hwy/highway.h> from a CPU kernel file; everything lives in tsr::cpu::HWY_NAMESPACE, so
// each compiled target gets its own copy (a file compiled for the static target alone calls
// HWY_NAMESPACE::apply_epilogue).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/ops/fused_activation.h"

#if defined(TSR_CPU_EPILOGUE_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_EPILOGUE_H_
#undef TSR_CPU_EPILOGUE_H_
#else
#define TSR_CPU_EPILOGUE_H_
#endif

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace epilogue_detail {

namespace hn = hwy::HWY_NAMESPACE;
using ops::FusedActivation;

template <typename T>
T activate_only(const ops::ActivationSpec& a, T y) {
  switch (a.kind) {
    case FusedActivation::kNone: return y;
    case FusedActivation::kRelu: return y > T(0) ? y : T(0);
    case FusedActivation::kClip: return std::min(std::max(y, T(a.p0)), T(a.p1));
    case FusedActivation::kHardSwish: return y * std::max(T(0), std::min(T(1), y / T(6) + T(0.5)));
    case FusedActivation::kSigmoid: return T(1) / (T(1) + std::exp(-y));
    case FusedActivation::kLeakyRelu: return y < T(0) ? T(a.p0) * y : y;
    case FusedActivation::kHardSigmoid: return std::max(T(0), std::min(T(1), T(a.p0) * y + T(a.p1)));
  }
  return y;
}

template <typename T>
T activate(const ops::ActivationSpec& a, T y) {
  return activate_only(a, y) * T(a.scale) + T(a.shift);
}

// Activation `a` over y[0, n): whole f32 vectors through Op(d, v) -> v, the tail (fewer than one
// vector; Highway 1.0.3 has no partial loads) through the scalar definition.
template <class Op>
void map_f32(const ops::ActivationSpec& a, float* y, int64_t n, Op op) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if (a.has_affine()) {
    const auto scale = hn::Set(d, a.scale), shift = hn::Set(d, a.shift);
    for (; i + nl <= n; i += nl) hn::StoreU(hn::MulAdd(op(d, hn::LoadU(d, y + i)), scale, shift), d, y + i);
  } else {
    for (; i + nl <= n; i += nl) hn::StoreU(op(d, hn::LoadU(d, y + i)), d, y + i);
  }
  for (; i < n; ++i) y[i] = activate(a, y[i]);
}

}  // namespace epilogue_detail

// Applies `a` to y[0, n) in place. kNone does nothing.
template <typename T>
void apply_epilogue(const ops::ActivationSpec& a, T* y, int64_t n) {
  using namespace epilogue_detail;
  if (a.kind == FusedActivation::kNone || n <= 0) return;
  if constexpr (std::is_same_v<T, float> && HWY_TARGET != HWY_SCALAR) {
    switch (a.kind) {
      case FusedActivation::kRelu:
        return map_f32(a, y, n, [](auto d, auto v) { return hn::Max(v, hn::Zero(d)); });
      case FusedActivation::kClip:
        return map_f32(a, y, n, [&](auto d, auto v) { return hn::Min(hn::Max(v, hn::Set(d, a.p0)), hn::Set(d, a.p1)); });
      case FusedActivation::kHardSwish:
        return map_f32(a, y, n, [](auto d, auto v) {
          const auto g = hn::MulAdd(v, hn::Set(d, 1.0f / 6.0f), hn::Set(d, 0.5f));
          return hn::Mul(v, hn::Min(hn::Max(g, hn::Zero(d)), hn::Set(d, 1.0f)));
        });
      case FusedActivation::kLeakyRelu:
        return map_f32(a, y, n, [&](auto d, auto v) {
          return hn::IfThenElse(hn::Lt(v, hn::Zero(d)), hn::Mul(v, hn::Set(d, a.p0)), v);
        });
      case FusedActivation::kHardSigmoid:
        return map_f32(a, y, n, [&](auto d, auto v) {
          const auto g = hn::MulAdd(v, hn::Set(d, a.p0), hn::Set(d, a.p1));
          return hn::Min(hn::Max(g, hn::Zero(d)), hn::Set(d, 1.0f));
        });
      case FusedActivation::kSigmoid:
        // exp(-y) clamped below ln(FLT_MAX) so that hn::Exp stays accurate; the result is then
        // within 1e-38 of 0 where the true value underflows anyway.
        return map_f32(a, y, n, [](auto d, auto v) {
          const auto e = hn::Exp(d, hn::Min(hn::Neg(v), hn::Set(d, 88.0f)));
          return hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), e));
        });
      default: break;
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = activate(a, y[i]);
}

// Applies `a` to `rows` rows of `cols` elements, row r starting at y + r * ld.
template <typename T>
void apply_epilogue_rows(const ops::ActivationSpec& a, T* y, int64_t rows, int64_t cols, int64_t ld) {
  if (a.kind == ops::FusedActivation::kNone) return;
  for (int64_t r = 0; r < rows; ++r) apply_epilogue(a, y + r * ld, cols);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // TSR_CPU_EPILOGUE_H_
