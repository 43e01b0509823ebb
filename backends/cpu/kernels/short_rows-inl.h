// Copies of short f32 rows (and prefetches of planes) (2-32 floats: the rows of small planes, where a memcpy call
// or a scalar tail costs more than the work) on Highway vectors, the tail in ever narrower
// vectors. A Highway "-inl" header (per-target include guard toggled by hwy/foreach_target.h),
// included after <hwy/highway.h> by the gradient kernels (depthwise_grad.cpp,
// conv_small.cpp).
#include <cstdint>
#include <type_traits>

#if defined(TSR_CPU_SHORT_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_SHORT_ROWS_INL_H_
#undef TSR_CPU_SHORT_ROWS_INL_H_
#else
#define TSR_CPU_SHORT_ROWS_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace short_rows {

namespace hn = hwy::HWY_NAMESPACE;

// dst[i, n) = src[i, n) in vectors of d's lanes; returns where it stopped.
template <class D>
HWY_INLINE int64_t copy_run(D d, float* HWY_RESTRICT dst, const float* HWY_RESTRICT src, int64_t i, int64_t n) {
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  for (; i + L <= n; i += L) hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
  return i;
}

// dst[0, n) = src[0, n).
HWY_INLINE void copy_row(float* HWY_RESTRICT dst, const float* HWY_RESTRICT src, int64_t n) {
  int64_t i = copy_run(hn::ScalableTag<float>(), dst, src, 0, n);
  i = copy_run(hn::CappedTag<float, 8>(), dst, src, i, n);
  i = copy_run(hn::CappedTag<float, 4>(), dst, src, i, n);
  i = copy_run(hn::CappedTag<float, 2>(), dst, src, i, n);
  copy_run(hn::CappedTag<float, 1>(), dst, src, i, n);
}

// Prefetches the 64-byte lines of p[0, n) (p may be null: nothing). The gradient kernels that
// sweep one channel's planes image after image (planes c planes apart, often one 4 KiB page
// each, where the hardware prefetchers stop) fetch the next image's plane while on this one.
template <typename T>
HWY_INLINE void prefetch_run(const T* p, int64_t n) {
  if (!p) return;
  constexpr int64_t kLine = 64 / sizeof(T);
  for (int64_t i = 0; i < n; i += kLine) hwy::Prefetch(p + i);
}

// Calls f(std::integral_constant<int, K>()) with K = k for 1 <= k < 8, else 8: a run-time block
// size to the instantiation of a register-blocked loop.
template <class F>
HWY_INLINE void with_block8(int k, const F& f) {
  switch (k) {
    case 1: return f(std::integral_constant<int, 1>());
    case 2: return f(std::integral_constant<int, 2>());
    case 3: return f(std::integral_constant<int, 3>());
    case 4: return f(std::integral_constant<int, 4>());
    case 5: return f(std::integral_constant<int, 5>());
    case 6: return f(std::integral_constant<int, 6>());
    case 7: return f(std::integral_constant<int, 7>());
    default: return f(std::integral_constant<int, 8>());
  }
}

}  // namespace short_rows
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // TSR_CPU_SHORT_ROWS_INL_H_
