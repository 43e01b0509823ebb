// qdepthwise (qdepthwise.h): compiled once per SIMD target (hwy/foreach_target.h), called through
// HWY_DYNAMIC_DISPATCH.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/qdepthwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/qdepthwise.h"

#include <cstdint>

#include "backends/cpu/kernels/depthwise.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace {

// x - x_zp as f32; restrict because T is a char type, which could alias the floats.
template <typename T>
void center(const T* __restrict x, int64_t n, int32_t x_zp, float* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - x_zp);
}

void qdepthwise_plane_impl(const void* x, bool x_signed, int32_t x_zp, const float* wk, const Window3& w,
                           float* scratch, float* acc) {
  const int64_t plane = w.in[1] * w.in[2];
  float* centered = scratch;
  float* phased = scratch + ((plane + 15) & ~int64_t{15});
  if (x_signed) center(static_cast<const int8_t*>(x), plane, x_zp, centered);
  else center(static_cast<const uint8_t*>(x), plane, x_zp, centered);
  const DwGeom g = depthwise_geom(w);
  depthwise_prepare_band<float>(centered, w, g, 0, w.out[1], phased);
  depthwise_prepared_rows<float>(phased, g, wk, 0.0f, w, 0, w.out[1], acc);
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(qdepthwise_plane_impl);

int64_t qdepthwise_scratch_floats(const Window3& w) {
  const int64_t plane = w.in[1] * w.in[2];
  const auto g = HWY_NAMESPACE::depthwise_geom(w);
  return ((plane + 15) & ~int64_t{15}) + HWY_NAMESPACE::depthwise_band_size(w, g, 0, w.out[1]);
}

void qdepthwise_plane(const void* x, bool x_signed, int32_t x_zp, const float* wk, const Window3& w, float* scratch,
                      float* acc) {
  HWY_DYNAMIC_DISPATCH(qdepthwise_plane_impl)(x, x_signed, x_zp, wk, w, scratch, acc);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
