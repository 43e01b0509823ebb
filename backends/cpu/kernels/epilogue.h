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
#include <type_traits>

#include "core/base/thread_pool.h"
#include "core/ops/fused_activation.h"

#if defined(TSR_CPU_EPILOGUE_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_EPILOGUE_H_
#undef TSR_CPU_EPILOGUE_H_
#else
#define TSR_CPU_EPILOGUE_H_
#endif

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "backends/cpu/kernels/f32_math-inl.h"

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
    case FusedActivation::kSilu: return y / (T(1) + std::exp(-y));
    case FusedActivation::kGelu: return T(0.5) * y * (T(1) + std::erf(y * T(0.70710678118654752440)));
    case FusedActivation::kGeluTanh:
      return T(0.5) * y * (T(1) + std::tanh(T(kGeluK) * (y + T(kGeluC) * y * y * y)));
  }
  return y;
}

// The activation, then the affine, then the bounds.
template <typename T>
T activate(const ops::ActivationSpec& a, T y) {
  return std::min(std::max(activate_only(a, y) * T(a.scale) + T(a.shift), T(a.lo)), T(a.hi));
}

// y[i] = act(y[i] + b + z[i]) over y[0, n) (z may be null): whole f32 vectors through
// Op(d, v) -> v, the tail (fewer than one vector) as one masked vector on AVX2 and AVX-512 (their
// masked loads and stores touch nothing past n), elsewhere through the scalar definition (Highway
// 1.0.3 has no partial loads there). Winograd's epilogue runs row by row of the output: on 14x14
// planes every element was a scalar tail (ResNet-18: 2.7% of the time in `activate`).
template <class Op>
void map_f32(const ops::ActivationSpec& a, float* y, int64_t n, float b, const float* z, Op op) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const auto vb = hn::Set(d, b);
  const bool affine = a.has_affine(), bounds = a.has_bounds();
  const auto scale = hn::Set(d, a.scale), shift = hn::Set(d, a.shift);
  const auto lo = hn::Set(d, a.lo), hi = hn::Set(d, a.hi);
  int64_t i = 0;
  for (; i + nl <= n; i += nl) {
    auto v = hn::Add(hn::LoadU(d, y + i), vb);
    if (z) v = hn::Add(v, hn::LoadU(d, z + i));
    v = op(d, v);
    if (affine) v = hn::MulAdd(v, scale, shift);
    if (bounds) v = hn::Min(hn::Max(v, lo), hi);
    hn::StoreU(v, d, y + i);
  }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if (i < n) {
    const auto m = hn::FirstN(d, static_cast<size_t>(n - i));
    auto v = hn::Add(hn::MaskedLoad(m, d, y + i), vb);
    if (z) v = hn::Add(v, hn::MaskedLoad(m, d, z + i));
    v = op(d, v);
    if (affine) v = hn::MulAdd(v, scale, shift);
    if (bounds) v = hn::Min(hn::Max(v, lo), hi);
    hn::BlendedStore(v, m, d, y + i);
  }
#else
  for (; i < n; ++i) y[i] = activate(a, y[i] + b + (z ? z[i] : 0.0f));
#endif
}

// Activation K on one f32 vector (parameters from `a`), before the affine.
template <FusedActivation K, class D, class V>
HWY_INLINE V activation_op(const ops::ActivationSpec& a, D d, V v) {
  if constexpr (K == FusedActivation::kRelu) {
    return hn::Max(v, hn::Zero(d));
  } else if constexpr (K == FusedActivation::kClip) {
    return hn::Min(hn::Max(v, hn::Set(d, a.p0)), hn::Set(d, a.p1));
  } else if constexpr (K == FusedActivation::kHardSwish) {
    const auto g = hn::MulAdd(v, hn::Set(d, 1.0f / 6.0f), hn::Set(d, 0.5f));
    return hn::Mul(v, hn::Min(hn::Max(g, hn::Zero(d)), hn::Set(d, 1.0f)));
  } else if constexpr (K == FusedActivation::kLeakyRelu) {
    return hn::IfThenElse(hn::Lt(v, hn::Zero(d)), hn::Mul(v, hn::Set(d, a.p0)), v);
  } else if constexpr (K == FusedActivation::kHardSigmoid) {
    const auto g = hn::MulAdd(v, hn::Set(d, a.p0), hn::Set(d, a.p1));
    return hn::Min(hn::Max(g, hn::Zero(d)), hn::Set(d, 1.0f));
  } else if constexpr (K == FusedActivation::kSigmoid) {
    // exp(-y) clamped below ln(FLT_MAX) so that hn::Exp stays accurate; the result is then
    // within 1e-38 of 0 where the true value underflows anyway.
    const auto e = hn::Exp(d, hn::Min(hn::Neg(v), hn::Set(d, 88.0f)));
    return hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), e));
  } else if constexpr (K == FusedActivation::kSilu) {
    // y * Sigmoid(y), Sigmoid as the odd rational function p(y) / q(y) + 1/2 on [-18, 18] that
    // onnxruntime's MLAS uses (MlasComputeLogistic; within 2.3e-7 of the true value, checked in
    // f64 over [-30, 30]) with the reciprocal of q refined by Newton steps instead of a
    // divide: about half the cost of Exp and Div, and SiLU runs once per output of most
    // EfficientNet convs (the exact Exp + Div form was as slow fused as in its own kernel).
    const auto y = hn::Min(hn::Max(v, hn::Set(d, -18.0f)), hn::Set(d, 18.0f));
    const auto y2 = hn::Mul(y, y);
    auto p = hn::MulAdd(y2, hn::Set(d, 4.37031012579801e-11f), hn::Set(d, 1.15627324459942e-07f));
    p = hn::MulAdd(p, y2, hn::Set(d, 6.08574864600143e-05f));
    p = hn::MulAdd(p, y2, hn::Set(d, 8.51377133304701e-03f));
    p = hn::MulAdd(p, y2, hn::Set(d, 2.48287947061529e-01f));
    p = hn::Mul(p, y);
    auto q = hn::MulAdd(y2, hn::Set(d, 6.10247389755681e-13f), hn::Set(d, 5.76102136993427e-09f));
    q = hn::MulAdd(q, y2, hn::Set(d, 6.29106785017040e-06f));
    q = hn::MulAdd(q, y2, hn::Set(d, 1.70198817374094e-03f));
    q = hn::MulAdd(q, y2, hn::Set(d, 1.16817656904453e-01f));
    q = hn::MulAdd(q, y2, hn::Set(d, 9.93151921023180e-01f));
    auto r = hn::ApproximateReciprocal(q);
    // Newton steps: x86's estimate has 12-14 bits (one step: <= 2^-22 relative error; SiLU is
    // ~15% of EfficientNet's time, the second step 2 of its ~22 vector ops), NEON's and WASM's
    // 8 (one step left 1.5e-5 relative error there): two.
    r = hn::Mul(r, hn::NegMulAdd(q, r, hn::Set(d, 2.0f)));
#if !HWY_ARCH_X86
    r = hn::Mul(r, hn::NegMulAdd(q, r, hn::Set(d, 2.0f)));
#endif
    const auto s = hn::Min(hn::Max(hn::MulAdd(p, r, hn::Set(d, 0.5f)), hn::Zero(d)), hn::Set(d, 1.0f));
    return hn::Mul(v, s);
  } else if constexpr (K == FusedActivation::kGelu) {
    return vec_gelu_erf(d, v);  // f32_math-inl.h: erf to 1.5e-7, as the Gelu kernel
  } else if constexpr (K == FusedActivation::kGeluTanh) {
    return vec_gelu_tanh(d, v);  // f32_math-inl.h: the Gelu kernel's approximate="tanh" vectors
  } else {
    return v;
  }
}

// Calls f(std::integral_constant<FusedActivation, K>) for K = kind: one switch, then code
// specialized for the activation.
template <class F>
HWY_INLINE auto with_activation(FusedActivation kind, F&& f) {
  using A = FusedActivation;
  switch (kind) {
    case A::kRelu: return f(std::integral_constant<A, A::kRelu>{});
    case A::kClip: return f(std::integral_constant<A, A::kClip>{});
    case A::kHardSwish: return f(std::integral_constant<A, A::kHardSwish>{});
    case A::kLeakyRelu: return f(std::integral_constant<A, A::kLeakyRelu>{});
    case A::kHardSigmoid: return f(std::integral_constant<A, A::kHardSigmoid>{});
    case A::kSigmoid: return f(std::integral_constant<A, A::kSigmoid>{});
    case A::kSilu: return f(std::integral_constant<A, A::kSilu>{});
    case A::kGelu: return f(std::integral_constant<A, A::kGelu>{});
    case A::kGeluTanh: return f(std::integral_constant<A, A::kGeluTanh>{});
    case A::kNone: break;
  }
  return f(std::integral_constant<A, A::kNone>{});
}

// y[i] = act(y[i] + b + z[i]) over y[0, n); z may be null, b = 0 and kNone add nothing.
template <typename T>
void finish_row(const ops::ActivationSpec& a, T* y, int64_t n, T b, const T* z) {
  if (n <= 0 || (a.kind == FusedActivation::kNone && !a.has_post() && b == T(0) && !z)) return;
  if constexpr (std::is_same_v<T, float> && HWY_TARGET != HWY_SCALAR) {
    return with_activation(a.kind, [&](auto k) {
      map_f32(a, y, n, b, z, [&](auto d, auto v) { return activation_op<decltype(k)::value>(a, d, v); });
    });
  }
  for (int64_t i = 0; i < n; ++i) y[i] = activate(a, T(y[i] + b + (z ? z[i] : T(0))));
}

}  // namespace epilogue_detail

// Applies `a` to y[0, n) in place. kNone does nothing.
template <typename T>
void apply_epilogue(const ops::ActivationSpec& a, T* y, int64_t n) {
  epilogue_detail::finish_row(a, y, n, T(0), static_cast<const T*>(nullptr));
}

// SiLU (y * Sigmoid(y)) of one f32 vector `v` of tag `d`, exactly as the epilogue computes it
// (kSilu, no affine or bounds): for kernels that apply it to results still in registers
// (sgemm_direct's tiles) instead of a pass over their stored rows.
template <class D, class V>
HWY_INLINE V silu_vec(D d, V v) {
  return epilogue_detail::activation_op<ops::FusedActivation::kSilu>(ops::ActivationSpec{}, d, v);
}

// The epilogue of a block of GEMM outputs, one pass while the block is in cache: row r (starting
// at y + r * ld) becomes act(y + bias[r] + z[r * ldz ...]) over `cols` elements. `bias` (one per
// row) and `z` (the residual, same layout with row stride ldz) may be null.
template <typename T>
void apply_epilogue_rows(const ops::ActivationSpec& a, T* y, int64_t rows, int64_t cols, int64_t ld,
                         const T* bias = nullptr, const T* z = nullptr, int64_t ldz = 0) {
  for (int64_t r = 0; r < rows; ++r)
    epilogue_detail::finish_row(a, y + r * ld, cols, bias ? bias[r] : T(0), z ? z + r * ldz : nullptr);
}

// apply_epilogue_rows with the rows split over `pool` (may be null: one thread), for threads that
// shared the GEMM of the block: from 2^14 outputs with Silu, Sigmoid or a Gelu, 2^16 with the others
// (below, the fork and join cost more than the pass; a Silu over EfficientNet's 480 x 196
// expansions was a quarter of the conv's work, on one thread).
template <typename T>
void apply_epilogue_rows_pooled(ThreadPool* pool, const ops::ActivationSpec& a, T* y, int64_t rows, int64_t cols,
                                int64_t ld, const T* bias = nullptr, const T* z = nullptr, int64_t ldz = 0) {
  const bool costly = a.kind == ops::FusedActivation::kSilu || a.kind == ops::FusedActivation::kSigmoid ||
                      a.kind == ops::FusedActivation::kGelu || a.kind == ops::FusedActivation::kGeluTanh;
  if (!pool || rows * cols < (int64_t{1} << (costly ? 14 : 16)))
    return apply_epilogue_rows(a, y, rows, cols, ld, bias, z, ldz);
  pool->parallel_for(rows, 8, [&](int64_t r0, int64_t r1) {
    apply_epilogue_rows(a, y + r0 * ld, r1 - r0, cols, ld, bias ? bias + r0 : nullptr, z ? z + r0 * ldz : nullptr, ldz);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // TSR_CPU_EPILOGUE_H_
