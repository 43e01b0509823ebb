// transpose_bytes (qgemm.h) for one SIMD target: included by qgemm.cpp inside its per-target
// namespace (qgemm_impl writes requantized NCHW output through it; HWY_EXPORTed from there).
#if defined(TSR_CPU_TRANSPOSE_BYTES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_TRANSPOSE_BYTES_INL_H_
#undef TSR_CPU_TRANSPOSE_BYTES_INL_H_
#else
#define TSR_CPU_TRANSPOSE_BYTES_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

#include "backends/cpu/kernels/qgemm_kernels-inl.h"  // TSR_QGEMM_UNROLL

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace tb {

namespace hn = hwy::HWY_NAMESPACE;

// transpose_bytes (qgemm.h): 16 rows x 16 columns at a time transposed in registers by four
// rounds of byte interleaves of vectors i and i + 8 (each round rotates the 8-bit (row, column)
// index left by one bit, so after four the row and column halves have swapped). A 32-byte vector
// transposes one 16 x 16 block per 128-bit half: its halves are columns c and c + 16. Rows and
// columns past the last whole 16 take a byte loop.
template <class D>
HWY_INLINE void transpose_16_rows(D d, const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride) {
  using V = hn::Vec<D>;
  V v[16];
  TSR_QGEMM_UNROLL for (int i = 0; i < 16; ++i) v[i] = hn::LoadU(d, src + i * src_stride);
  TSR_QGEMM_UNROLL for (int round = 0; round < 4; ++round) {
    V t[16];
    TSR_QGEMM_UNROLL for (int i = 0; i < 8; ++i) {
      t[2 * i] = hn::InterleaveLower(d, v[i], v[i + 8]);
      t[2 * i + 1] = hn::InterleaveUpper(d, v[i], v[i + 8]);
    }
    TSR_QGEMM_UNROLL for (int i = 0; i < 16; ++i) v[i] = t[i];
  }
  if constexpr (hn::MaxLanes(d) == 16) {
    TSR_QGEMM_UNROLL for (int i = 0; i < 16; ++i) hn::StoreU(v[i], d, dst + i * dst_stride);
  } else {
    const hn::Half<D> dh;
    TSR_QGEMM_UNROLL for (int i = 0; i < 16; ++i) {
      hn::StoreU(hn::LowerHalf(dh, v[i]), dh, dst + i * dst_stride);
      hn::StoreU(hn::UpperHalf(dh, v[i]), dh, dst + (16 + i) * dst_stride);
    }
  }
}

void transpose_bytes_impl(const uint8_t* src, int64_t rows, int64_t cols, int64_t src_stride, uint8_t* dst,
                          int64_t dst_stride) {
  int64_t r0 = 0;
#if HWY_TARGET != HWY_SCALAR
  if (rows == 3 && dst_stride == 3) {
    // Three rows into packed triples (an RGB image's NCHW -> HWC for a stem conv):
    // StoreInterleaved3, a vector of columns at a time.
    const hn::ScalableTag<uint8_t> d;
    const auto n = static_cast<int64_t>(hn::Lanes(d));
    int64_t c = 0;
    for (; c + n <= cols; c += n)
      hn::StoreInterleaved3(hn::LoadU(d, src + c), hn::LoadU(d, src + src_stride + c),
                            hn::LoadU(d, src + 2 * src_stride + c), d, dst + 3 * c);
    for (; c < cols; ++c)
      for (int64_t r = 0; r < 3; ++r) dst[3 * c + r] = src[r * src_stride + c];
    return;
  }
  const hn::CappedTag<uint8_t, 32> d32;
  const hn::Full128<uint8_t> d16;
  for (; r0 + 16 <= rows; r0 += 16) {
    const uint8_t* s = src + r0 * src_stride;
    uint8_t* o = dst + r0;
    int64_t c0 = 0;
    if constexpr (hn::MaxLanes(d32) == 32)
      for (; c0 + 32 <= cols; c0 += 32) transpose_16_rows(d32, s + c0, src_stride, o + c0 * dst_stride, dst_stride);
    for (; c0 + 16 <= cols; c0 += 16) transpose_16_rows(d16, s + c0, src_stride, o + c0 * dst_stride, dst_stride);
    for (; c0 < cols; ++c0)
      for (int64_t r = 0; r < 16; ++r) o[c0 * dst_stride + r] = s[r * src_stride + c0];
  }
#endif
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = r0; r < rows; ++r) dst[c * dst_stride + r] = src[r * src_stride + c];
}

}  // namespace tb
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // include guard
