// im2col and its adjoint col2im for the CPU Conv kernels (nn.cpp: forward; nn_grad.cpp: the
// input and weight gradients). Windows are lifted to 3-D (nn_window.h). The column matrix of a
// block of output rows [r0, r1) (a row = one (od, oh) pair, out[2] columns each) has kg =
// C * k_size rows: col[kr][(r - r0) * ow + x], kr = ((c * k0 + kd) * k1 + kh) * k2 + kw.
#pragma once

#include <algorithm>
#include <cstring>

#include "backends/cpu/kernels/nn_window.h"

namespace tsr::cpu {

// [*a, *b): the o in [lo, hi) with 0 <= o * s + off < n (s > 0); empty = *a == *b.
inline void valid_span(int64_t off, int64_t s, int64_t n, int64_t lo, int64_t hi, int64_t* a, int64_t* b) {
  const int64_t first = off >= 0 ? 0 : (-off + s - 1) / s;
  const int64_t end = n - 1 - off < 0 ? 0 : (n - 1 - off) / s + 1;
  *a = std::clamp<int64_t>(first, lo, hi);
  *b = std::clamp<int64_t>(end, *a, hi);
}

// Rows of narrow layers are short (often < 16 elements), so per-row loop overhead dominates:
// these move 32-byte chunks (one vector op each after inlining) and finish with one
// overlapping chunk (copy) or a scalar tail (add).
template <typename T>
inline void copy_short(T* d, const T* s, int64_t n) {
  constexpr int64_t V = 32 / sizeof(T);
  if (n < V) {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
    return;
  }
  if (n > 8 * V) {
    std::memcpy(d, s, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  int64_t i = 0;
  for (; i + V <= n; i += V) std::memcpy(d + i, s + i, V * sizeof(T));
  if (i < n) std::memcpy(d + n - V, s + n - V, V * sizeof(T));
}

template <typename T>
inline void add_short(T* d, const T* s, int64_t n) {
  constexpr int64_t V = 32 / sizeof(T);
  int64_t i = 0;
  for (; i + V <= n; i += V)
    for (int64_t l = 0; l < V; ++l) d[i + l] += s[i + l];
  for (; i < n; ++i) d[i] += s[i];
}

// The rows of tap (c, kd, kh) over output rows [r0, r1): calls row(j, src) for each, j = r - r0,
// src = the offset of input row (id, ih) in the channel, or -1 where the row lies in padding.
// Divisions happen once per output plane (od), not per row: narrow layers have short rows.
template <typename Fn>
inline void for_tap_rows(const Window3& w, int64_t r0, int64_t r1, int64_t kd, int64_t kh, const Fn& row) {
  for (int64_t r = r0; r < r1;) {
    const int64_t od = r / w.out[1], oh0 = r % w.out[1], oh1 = std::min(w.out[1], oh0 + (r1 - r));
    const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
    const int64_t off_h = kh * w.d[1] - w.pb[1];
    int64_t a = oh0, b = oh0;
    if (id >= 0 && id < w.in[0]) valid_span(off_h, w.s[1], w.in[1], oh0, oh1, &a, &b);
    const int64_t j0 = r - r0 - oh0;  // j of oh = j0 + oh
    for (int64_t oh = oh0; oh < a; ++oh) row(j0 + oh, int64_t{-1});
    for (int64_t oh = a; oh < b; ++oh) row(j0 + oh, (id * w.in[1] + oh * w.s[1] + off_h) * w.in[2]);
    for (int64_t oh = b; oh < oh1; ++oh) row(j0 + oh, int64_t{-1});
    r += oh1 - oh0;
  }
}

// The (channel, kernel d, kernel h, kernel w) tap of im2col row `kr` (rows run channel-major,
// then over the kernel window in row-major order).
struct ColumnTap {
  int64_t c, kd, kh, kw;
};
inline ColumnTap column_tap(const Window3& w, int64_t kr) {
  const int64_t kw = kr % w.k[2];
  int64_t t = kr / w.k[2];
  const int64_t kh = t % w.k[1];
  t /= w.k[1];
  return {t / w.k[0], t % w.k[0], kh, kw};
}

// Writes rows [kr0, kr1) of the im2col matrix for output rows [r0, r1):
// col[kr][(r - r0) * ow + x] = X[c, id, ih, iw] or 0 in the padding. `ld` is col's row stride
// (default: the block's width; larger when several images' columns sit side by side).
template <typename T>
inline void im2col(const T* x, const Window3& w, int64_t r0, int64_t r1, int64_t kr0, int64_t kr1, T* col,
                   int64_t ld = -1) {
  const int64_t ow = w.out[2], cols = ld >= 0 ? ld : (r1 - r0) * ow;
  for (int64_t kr = kr0; kr < kr1; ++kr) {
    const auto [c, kd, kh, kw] = column_tap(w, kr);
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
    int64_t x0, x1;  // the x with 0 <= x * s2 + off_w < in[2]
    valid_span(off_w, w.s[2], w.in[2], 0, ow, &x0, &x1);
    for_tap_rows(w, r0, r1, kd, kh, [&](int64_t j, int64_t src_off) {
      T* d = dst + j * ow;
      if (src_off < 0) {
        std::fill(d, d + ow, T(0));
        return;
      }
      const T* src = xc + src_off;
      std::fill(d, d + x0, T(0));
      if (w.s[2] == 1) {
        copy_short(d + x0, src + x0 + off_w, x1 - x0);
      } else if (w.s[2] == 2) {
        // A constant stride: the compiler vectorizes it with even/odd lane shuffles.
        const T* s2 = src + off_w;
        for (int64_t xo = x0; xo < x1; ++xo) d[xo] = s2[2 * xo];
      } else {
        for (int64_t xo = x0; xo < x1; ++xo) d[xo] = src[xo * w.s[2] + off_w];
      }
      std::fill(d + x1, d + ow, T(0));
    });
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
  for (int64_t kr = kr0; kr < kr1; ++kr) {
    const auto [c, kd, kh, kw] = column_tap(w, kr);
    const T* src = col + kr * cols;
    T* xc = x + c * w.in_size();
    const int64_t off_w = kw * w.d[2] - w.pb[2];
    int64_t x0, x1;
    valid_span(off_w, w.s[2], w.in[2], 0, ow, &x0, &x1);
    for_tap_rows(w, r0, r1, kd, kh, [&](int64_t j, int64_t dst_off) {
      if (dst_off < 0) return;
      const T* s = src + j * ow;
      T* d = xc + dst_off;
      if (w.s[2] == 1) {
        add_short(d + x0 + off_w, s + x0, x1 - x0);
      } else {
        for (int64_t xo = x0; xo < x1; ++xo) d[xo * w.s[2] + off_w] += s[xo];
      }
    });
  }
}

}  // namespace tsr::cpu
