// Short f32 rows on Highway vectors (2-32 floats: the rows of small planes, where a memcpy call or
// a scalar tail costs more than the work): copies with the tail in ever narrower vectors,
// transposes in 4 x 4 blocks, and prefetches of planes. A Highway "-inl" header (per-target
// include guard toggled by hwy/foreach_target.h), included after <hwy/highway.h> by depthwise.h
// (so conv_separable.cpp, nn.cpp) and the gradient kernels (depthwise_grad.cpp, conv_small.cpp).
#include <algorithm>
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

// dst[j * ldd + i] = src[i * lds + j] for i < rows, j < cols: 4 x 4 blocks transposed in 128-bit
// vectors (interleaves), the edges scalar. FusedSeparableConv's channels-last depthwise stage
// (its input and weights: a scalar element-by-element transpose of the input, strided loads, was
// about half of that stage's time on MobileNetV2's 14x14 and 7x7 blocks) and conv_lanes' C^T.
HWY_INLINE void transpose_rows(const float* src, int64_t lds, int64_t rows, int64_t cols, float* dst, int64_t ldd) {
  // Blocks of 16 columns (16 rows of dst), each over all rows: every row of dst is then written
  // in one run, not 4 floats at a time over all of dst (which left cache, 300 KiB for 384
  // channels of 14x14).
  constexpr int64_t kCols = 16;
  for (int64_t j0 = 0; j0 < cols; j0 += kCols) {
    const int64_t j1 = std::min(cols, j0 + kCols);
    int64_t i = 0;
#if HWY_TARGET != HWY_SCALAR
    const hn::CappedTag<float, 4> d4;
    if (hn::Lanes(d4) == 4) {
      for (; i + 4 <= rows; i += 4) {
        const float* s0 = src + i * lds;
        int64_t j = j0;
        for (; j + 4 <= j1; j += 4) {
          const auto r0 = hn::LoadU(d4, s0 + j), r1 = hn::LoadU(d4, s0 + lds + j);
          const auto r2 = hn::LoadU(d4, s0 + 2 * lds + j), r3 = hn::LoadU(d4, s0 + 3 * lds + j);
          const auto t0 = hn::InterleaveLower(d4, r0, r1), t1 = hn::InterleaveLower(d4, r2, r3);  // a0 b0 a1 b1, c0 d0 c1 d1
          const auto t2 = hn::InterleaveUpper(d4, r0, r1), t3 = hn::InterleaveUpper(d4, r2, r3);  // a2 b2 a3 b3, c2 d2 c3 d3
          float* o = dst + j * ldd + i;
          hn::StoreU(hn::ConcatLowerLower(d4, t1, t0), d4, o);
          hn::StoreU(hn::ConcatUpperUpper(d4, t1, t0), d4, o + ldd);
          hn::StoreU(hn::ConcatLowerLower(d4, t3, t2), d4, o + 2 * ldd);
          hn::StoreU(hn::ConcatUpperUpper(d4, t3, t2), d4, o + 3 * ldd);
        }
        for (; j < j1; ++j)
          for (int64_t r = 0; r < 4; ++r) dst[j * ldd + i + r] = s0[r * lds + j];
      }
    }
#endif
    for (; i < rows; ++i)
      for (int64_t j = j0; j < j1; ++j) dst[j * ldd + i] = src[i * lds + j];
  }
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
