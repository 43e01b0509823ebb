// dynamic_quantize_u8 (quantize.h): ONNX DynamicQuantizeLinear's range scan and quantization a
// vector at a time, compiled once per SIMD target (hwy/foreach_target.h) and called on the best
// one this CPU supports. Both the op's kernel (quantize.cpp) and com.microsoft::DynamicQuantizeMatMul
// (qlinear.cpp) quantize their activations here, once per run: for a transformer's MatMuls that is
// every activation row (a scalar loop cost as much as the int8 GEMM itself: nearbyint per element).
//
// Equal to the scalar definition, element for element:
// - min/max are exact, so the order of the scan does not matter. Every lane starts at +0 and moves
//   only on a strict comparison (see extend): a NaN never wins and -0 never replaces +0, as in
//   the sequential scan.
// - the quotient is x / scale (a division, IEEE-exact like the scalar one, not a product with
//   the reciprocal), then requant-inl.h's Requant: saturate(nearbyint(q) + zp), ties to even,
//   NaN to 0.
// Large inputs are split over the thread pool in chunks; the result does not depend on the split.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/dynamic_quantize.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <array>

#include "backends/cpu/kernels/quantize.h"
#include "backends/cpu/kernels/requant-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// lo = x < lo ? x : lo and hi = hi < x ? x : hi, a vector at a time. On x86 that is one
// vminps / vmaxps with x first: they return the second operand unless the first is strictly
// smaller / larger (so a NaN x or a -0 against +0 keeps the accumulator); Highway leaves Min/Max's
// NaN and signed-zero behaviour to the target, so other targets compare and blend.
template <class V>
HWY_INLINE void extend(V x, V& lo, V& hi) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
  lo = hn::Min(x, lo);
  hi = hn::Max(x, hi);
#else
  lo = hn::IfThenElse(hn::Lt(x, lo), x, lo);
  hi = hn::IfThenElse(hn::Lt(hi, x), x, hi);
#endif
}

// [lo, hi] = [min(0, x), max(0, x)] over x[0, n), NaNs ignored.
void range_impl(const float* x, int64_t n, float* lo_out, float* hi_out) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  // Two independent chains per extreme: the compare + blend latency is not the limit then.
  auto lo0 = hn::Zero(d), lo1 = hn::Zero(d), hi0 = hn::Zero(d), hi1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * nl <= n; i += 2 * nl) {
    extend(hn::LoadU(d, x + i), lo0, hi0);
    extend(hn::LoadU(d, x + i + nl), lo1, hi1);
  }
  if (i + nl <= n) {
    extend(hn::LoadU(d, x + i), lo0, hi0);
    i += nl;
  }
  // No NaN and no -0 is in the accumulators (see above), so any reduction order gives the result.
  lo0 = hn::IfThenElse(hn::Lt(lo1, lo0), lo1, lo0);
  hi0 = hn::IfThenElse(hn::Lt(hi0, hi1), hi1, hi0);
  float lo = hn::GetLane(hn::MinOfLanes(d, lo0)), hi = hn::GetLane(hn::MaxOfLanes(d, hi0));
  for (; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = hi < x[i] ? x[i] : hi;
  }
  *lo_out = lo;
  *hi_out = hi;
}

// y[i] = saturate(nearbyint(x[i] / scale) + zp) as u8.
void quantize_impl(const float* x, int64_t n, float scale, int32_t zp, uint8_t* y) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  const Requant<uint8_t, decltype(d)> rq(d, zp);
  const auto vs = hn::Set(d, scale);
  int64_t i = 0;
  for (; i + nl <= n; i += nl) rq.store(hn::Div(hn::LoadU(d, x + i), vs), y + i);
  if (i < n) {
    // The tail through a zero-padded vector (n - i < Lanes elements).
    HWY_ALIGN float buf[hn::MaxLanes(d)] = {};
    HWY_ALIGN uint8_t out[hn::MaxLanes(d)];
    std::copy(x + i, x + n, buf);
    rq.store(hn::Div(hn::Load(d, buf), vs), out);
    std::copy(out, out + (n - i), y + i);
  }
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(range_impl);
HWY_EXPORT(quantize_impl);

DynamicQuantParams dynamic_quantize_u8(const float* x, int64_t n, uint8_t* y, ThreadPool* pool) {
  // Both passes split into chunks of whole cache lines where a second thread pays (a Whisper
  // encoder's 1500 x 1536 activations; a decode step's one row stays on the calling thread).
  constexpr int64_t kMinParallel = int64_t{1} << 16, kAlign = 64, kMaxChunks = 64;
  const int64_t threads = pool ? pool->num_threads() : 1;
  const int64_t chunks =
      threads > 1 && n >= kMinParallel ? std::min({4 * threads, n / (kMinParallel / 4), kMaxChunks}) : 1;
  const int64_t per = (n + chunks - 1) / chunks / kAlign * kAlign + kAlign;
  auto for_chunks = [&](auto&& fn) {
    if (chunks == 1) return fn(size_t{0}, int64_t{0}, n);
    pool->parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) fn(static_cast<size_t>(c), std::min(n, c * per), std::min(n, (c + 1) * per));
    });
  };
  std::array<float, kMaxChunks> los{}, his{};  // no allocation per call
  for_chunks([&](size_t c, int64_t i0, int64_t i1) {
    HWY_DYNAMIC_DISPATCH(range_impl)(x + i0, i1 - i0, &los[c], &his[c]);
  });
  // The chunks' extrema hold no NaN and no -0 (range_impl), so combining them in any order is exact.
  float lo = 0.0f, hi = 0.0f;
  for (size_t c = 0; c < static_cast<size_t>(chunks); ++c) {
    lo = los[c] < lo ? los[c] : lo;
    hi = hi < his[c] ? his[c] : hi;
  }
  DynamicQuantParams q;
  if (hi != lo) {
    q.scale = (hi - lo) / 255.0f;
    // saturate(round_half_even(-lo / scale)), NaN (an infinite range) to 0.
    const float z = std::nearbyint(-lo / q.scale);
    q.zero_point = static_cast<uint8_t>(z > 0.0f ? (z < 255.0f ? z : 255.0f) : 0.0f);
  }
  for_chunks([&](size_t, int64_t i0, int64_t i1) {
    HWY_DYNAMIC_DISPATCH(quantize_impl)(x + i0, i1 - i0, q.scale, q.zero_point, y + i0);
  });
  return q;
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
