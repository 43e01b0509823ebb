// com.microsoft::NhwcMaxPool (semantics: core/ops/families/quantize.cpp): MaxPool over u8/s8
// codes with the channels last, X [N, H, W, C] -> Y [N, OH, OW, C], what quantize_layout makes of
// a MaxPool between channels-last QLinearConvs (ResNet's stem pool). Each output pixel is the
// elementwise max of the C-byte rows of its window's taps inside the image (padding never wins,
// as in MaxPool); the rows are contiguous, so the loop over C vectorizes. Output rows split over
// the pool.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "backends/cpu/cpu_backend.h"
#include "core/ops/spatial.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

template <typename T>
void max_rows(T* __restrict y, const T* __restrict x, int64_t c) {
  for (int64_t i = 0; i < c; ++i) y[i] = std::max(y[i], x[i]);
}

template <typename T>
void nhwc_max_pool(const T* x, int64_t n, int64_t h, int64_t w, int64_t c, const ops::SpatialParams& sp, T* y,
                   ThreadPool& pool) {
  const int64_t oh = sp.out[0], ow = sp.out[1];
  const int64_t rows = n * oh;
  const bool threaded = pool.num_threads() > 1 && rows * ow * c * sp.kernel[0] * sp.kernel[1] >= (int64_t{1} << 16);
  auto body = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / oh, oy = r % oh;
      const T* xb = x + b * h * w * c;
      for (int64_t ox = 0; ox < ow; ++ox) {
        T* out = y + (r * ow + ox) * c;
        bool first = true;
        for (int64_t i = 0; i < sp.kernel[0]; ++i) {
          const int64_t iy = oy * sp.strides[0] - sp.pad_begin[0] + i * sp.dilations[0];
          if (iy < 0 || iy >= h) continue;
          for (int64_t j = 0; j < sp.kernel[1]; ++j) {
            const int64_t ix = ox * sp.strides[1] - sp.pad_begin[1] + j * sp.dilations[1];
            if (ix < 0 || ix >= w) continue;
            const T* in = xb + (iy * w + ix) * c;
            if (first) std::memcpy(out, in, size_t(c) * sizeof(T));
            else max_rows(out, in, c);
            first = false;
          }
        }
        // A window wholly in the padding (possible only with pads >= the kernel): MaxPool's
        // lowest value, as the NCHW kernel's empty max.
        if (first) std::fill(out, out + c, std::numeric_limits<T>::lowest());
      }
    }
  };
  if (threaded) pool.parallel_for(rows, 1, body);
  else body(0, rows);
}

Status nhwc_max_pool_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  if (x.rank() != 4) return ctx.error("input[0] (X): rank ", x.rank(), ", expected 4 [N, H, W, C]");
  const Ints ks = ctx.node().attr_ints("kernel_shape");
  auto sp = ops::resolve_spatial(ctx.node(), Ints{x.dim(1), x.dim(2)}, ks,
                                 ctx.node().attr_int("ceil_mode", 0) != 0);
  if (!sp.ok()) return sp.status().with_context(ctx.place());
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  if (y->numel() == 0) return ok_status();
  if (x.dtype() == DType::kU8)
    nhwc_max_pool(x.data<uint8_t>(), x.dim(0), x.dim(1), x.dim(2), x.dim(3), *sp, y->mut_data<uint8_t>(), ctx.pool());
  else
    nhwc_max_pool(x.data<int8_t>(), x.dim(0), x.dim(1), x.dim(2), x.dim(3), *sp, y->mut_data<int8_t>(), ctx.pool());
  return ok_status();
}

}  // namespace

void register_qpool_nhwc_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("com.microsoft::NhwcMaxPool")
    r.add_fn("com.microsoft::NhwcMaxPool", {DType::kU8, DType::kI8}, nhwc_max_pool_kernel);
}

}  // namespace tsr::cpu
