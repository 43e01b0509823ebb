// im2col and its adjoint col2im for the CPU Conv kernels (nn.cpp: forward; nn_grad.cpp: the
// input and weight gradients). Windows are lifted to 3-D (nn_window.h). The column matrix of a
// block of output rows [r0, r1) (a row = one (od, oh) pair, out[2] columns each) has kg =
// C * k_size rows: col[kr][(r - r0) * ow + x], kr = ((c * k0 + kd) * k1 + kh) * k2 + kw.
#pragma once

#include <algorithm>
#include <cstring>

#include "backends/cpu/kernels/nn_window.h"

namespace tsr::cpu {

// Writes rows [kr0, kr1) of the im2col matrix for output rows [r0, r1) (a row = one (od, oh)
// pair, ow columns): col[kr][(r - r0) * ow + x] = X[c, id, ih, iw] or 0 in the padding, where
// kr = ((c * k0 + kd) * k1 + kh) * k2 + kw. `ld` is col's row stride (default: the block's
// width; larger when several images' columns sit side by side).
template <typename T>
inline void im2col(const T* x, const Window3& w, int64_t r0, int64_t r1, int64_t kr0, int64_t kr1, T* col,
                   int64_t ld = -1) {
  const int64_t ow = w.out[2], cols = ld >= 0 ? ld : (r1 - r0) * ow;
  const int64_t in_plane = w.in[1] * w.in[2];
  for (int64_t kr = kr0; kr < kr1; ++kr) {
    int64_t t = kr;
    const int64_t kw = t % w.k[2];
    t /= w.k[2];
    const int64_t kh = t % w.k[1];
    t /= w.k[1];
    const int64_t kd = t % w.k[0];
    const int64_t c = t / w.k[0];
    T* dst = col + kr * cols;
    const T* xc = x + c * w.in_size();
    const int64_t off_w = kw * w.d[2] - w.pb[2];
    if (w.out[0] == 1 && w.k[0] == 1 && w.pb[0] == 0 && w.s[1] == 1 && w.s[2] == 1 && off_w == 0 && ow == w.in[2]) {
      // Whole input rows, consecutive output rows on consecutive input rows (e.g. Kx1 kernels):
      // the in-range rows form one contiguous run; zero the out-of-range ones around it.
      const int64_t ih0 = r0 - w.pb[1] + kh * w.d[1];
      const int64_t v0 = std::clamp<int64_t>(-ih0, 0, r1 - r0);
      const int64_t v1 = std::clamp<int64_t>(w.in[1] - ih0, v0, r1 - r0);
      std::fill(dst, dst + v0 * ow, T(0));
      std::memcpy(dst + v0 * ow, xc + (ih0 + v0) * w.in[2], static_cast<size_t>((v1 - v0) * ow) * sizeof(T));
      std::fill(dst + v1 * ow, dst + (r1 - r0) * ow, T(0));
      continue;
    }
    for (int64_t r = r0; r < r1; ++r, dst += ow) {
      const int64_t od = r / w.out[1], oh = r % w.out[1];
      const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
      const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
      if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
        std::fill(dst, dst + ow, T(0));
        continue;
      }
      const T* src = xc + id * in_plane + ih * w.in[2];
      if (w.s[2] == 1) {
        // Valid x: 0 <= x + off_w < in[2].
        const int64_t x0 = std::clamp<int64_t>(-off_w, 0, ow);
        const int64_t x1 = std::clamp<int64_t>(w.in[2] - off_w, x0, ow);
        std::fill(dst, dst + x0, T(0));
        // Short rows (narrow late layers) are copied inline: a memcpy call per row costs more.
        if (x1 - x0 <= 32) {
          for (int64_t xo = x0; xo < x1; ++xo) dst[xo] = src[xo + off_w];
        } else {
          std::memcpy(dst + x0, src + x0 + off_w, static_cast<size_t>(x1 - x0) * sizeof(T));
        }
        std::fill(dst + x1, dst + ow, T(0));
      } else {
        for (int64_t xo = 0; xo < ow; ++xo) {
          const int64_t iw = xo * w.s[2] + off_w;
          dst[xo] = iw >= 0 && iw < w.in[2] ? src[iw] : T(0);
        }
      }
    }
  }
}

// The adjoint of im2col: adds column rows [kr0, kr1) for output rows [r0, r1) back onto x
// (x[c, id, ih, iw] += col[kr][...], padding taps dropped). Rows of one channel c may hit the
// same x element, so concurrent callers must own disjoint channels (kr ranges aligned to
// k_size()). `ld` as for im2col.
template <typename T>
inline void col2im_add(const T* col, const Window3& w, int64_t r0, int64_t r1, int64_t kr0, int64_t kr1, T* x,
                       int64_t ld = -1) {
  const int64_t ow = w.out[2], cols = ld >= 0 ? ld : (r1 - r0) * ow;
  const int64_t in_plane = w.in[1] * w.in[2];
  for (int64_t kr = kr0; kr < kr1; ++kr) {
    int64_t t = kr;
    const int64_t kw = t % w.k[2];
    t /= w.k[2];
    const int64_t kh = t % w.k[1];
    t /= w.k[1];
    const int64_t kd = t % w.k[0];
    const int64_t c = t / w.k[0];
    const T* src = col + kr * cols;
    T* xc = x + c * w.in_size();
    const int64_t off_w = kw * w.d[2] - w.pb[2];
    // Valid x (stride 1): 0 <= x + off_w < in[2].
    const int64_t x0 = std::clamp<int64_t>(-off_w, 0, ow);
    const int64_t x1 = std::clamp<int64_t>(w.in[2] - off_w, x0, ow);
    for (int64_t r = r0; r < r1; ++r, src += ow) {
      const int64_t od = r / w.out[1], oh = r % w.out[1];
      const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
      const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
      if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) continue;
      T* dst = xc + id * in_plane + ih * w.in[2];
      if (w.s[2] == 1) {
        T* d = dst + off_w;
        for (int64_t xo = x0; xo < x1; ++xo) d[xo] += src[xo];
      } else {
        for (int64_t xo = 0; xo < ow; ++xo) {
          const int64_t iw = xo * w.s[2] + off_w;
          if (iw >= 0 && iw < w.in[2]) dst[iw] += src[xo];
        }
      }
    }
  }
}

}  // namespace tsr::cpu
