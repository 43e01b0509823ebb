// CPU pooling kernels (ONNX opset 17): MaxPool (with optional Indices; f32, f64, i8, u8),
// AveragePool, MaxUnpool, GlobalAveragePool, GlobalMaxPool, and the gradients MaxPoolGrad and
// AveragePoolGrad (f32, f64). Parallel over (N, C) planes; windows lifted to 3-D
// (nn_window.h).
#include <hwy/highway.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/nn_window.h"
#include "backends/cpu/kernels/scratch.h"

namespace tsr::cpu {

// y[p] = the mean of x[p * size, (p + 1) * size) for p in [0, planes), summed as
// global_pool_typed's loop below, bit for bit, in the best target's vectors (conv_se.cpp).
void plane_means_f32(const float* x, int64_t planes, int64_t size, float* y);

namespace {

// The identity of max: -inf for floats, the minimum for integers.
template <typename T>
constexpr T max_identity() {
  if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::lowest();
}

// Calls visit(id, ih, iw, value) for each tap of output (od, oh, ow)'s window that lies inside
// the input, in kd, kh, kw order; taps in the padding are skipped.
template <typename T, typename Visit>
inline void for_each_tap(const T* x, const Window3& w, int64_t od, int64_t oh, int64_t ow, Visit&& visit) {
  for (int64_t kd = 0; kd < w.k[0]; ++kd) {
    const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
    if (id < 0 || id >= w.in[0]) continue;
    for (int64_t kh = 0; kh < w.k[1]; ++kh) {
      const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
      if (ih < 0 || ih >= w.in[1]) continue;
      const T* row = x + (id * w.in[1] + ih) * w.in[2];
      for (int64_t kw = 0; kw < w.k[2]; ++kw) {
        const int64_t iw = ow * w.s[2] - w.pb[2] + kw * w.d[2];
        if (iw >= 0 && iw < w.in[2]) visit(id, ih, iw, row[iw]);
      }
    }
  }
}

// MaxPool over one plane. Indices (if `idx`) follow ONNX Runtime: the flattened index into the
// whole X (plane offset included), row-major (storage_order 0) or column-major over the spatial
// dims (storage_order 1). Padding never wins; a window wholly in padding (pads >= kernel) gives
// -inf and index -1.
template <typename T>
void max_pool_plane(const T* x, const Window3& w, T* y, int64_t* idx, int64_t plane, bool col_major) {
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh)
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        T best = max_identity<T>();
        int64_t best_i = -1;
        for_each_tap(x, w, od, oh, ow, [&](int64_t id, int64_t ih, int64_t iw, T v) {
          if (v > best || best_i < 0) {
            best = v;
            best_i = col_major ? id + w.in[0] * (ih + w.in[1] * iw) : (id * w.in[1] + ih) * w.in[2] + iw;
          }
        });
        const int64_t o = (od * w.out[1] + oh) * w.out[2] + ow;
        y[o] = best;
        if (idx) idx[o] = best_i < 0 ? -1 : plane * w.in_size() + best_i;
      }
}

// MaxPool without indices over output rows [r0, r1) of one plane (row r = (od, oh)). Where a
// window lies wholly inside the input along every axis (most of them), the max runs tap by tap
// over a stretch of the row with no bounds checks (vectorizable), the first tap seeding it;
// windows touching the padding take max_pool_plane's per-output loop. Same result as
// max_pool_plane (whose first in-range tap also wins unconditionally; `v > best` keeps NaN
// semantics identical).
template <typename T>
void max_pool_rows(const T* x, const Window3& w, int64_t r0, int64_t r1, T* y) {
  int64_t lo[3], hi[3];  // outputs whose windows lie inside the input, per axis
  for (int a = 0; a < 3; ++a) {
    lo[a] = std::min(w.out[a], (w.pb[a] + w.s[a] - 1) / w.s[a]);
    const int64_t last = w.in[a] - 1 - (w.k[a] - 1) * w.d[a] + w.pb[a];  // largest o * s allowed
    hi[a] = last < 0 ? lo[a] : std::clamp<int64_t>(last / w.s[a] + 1, lo[a], w.out[a]);
  }
  const int64_t ow_n = w.out[2];
  auto one = [&](int64_t od, int64_t oh, int64_t ow) {
    T best = max_identity<T>();
    bool any = false;
    for_each_tap(x, w, od, oh, ow, [&](int64_t, int64_t, int64_t, T v) {
      if (v > best || !any) best = v;
      any = true;
    });
    return best;
  };
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t od = r / w.out[1], oh = r % w.out[1];
    T* yrow = y + r * ow_n;
    const bool inside = od >= lo[0] && od < hi[0] && oh >= lo[1] && oh < hi[1];
    const int64_t a = inside ? lo[2] : ow_n, b = inside ? hi[2] : ow_n;
    for (int64_t ow = 0; ow < a; ++ow) yrow[ow] = one(od, oh, ow);
    for (int64_t ow = b; ow < ow_n; ++ow) yrow[ow] = one(od, oh, ow);
    if (a >= b) continue;
    const int64_t base_w = -w.pb[2] + a * w.s[2];
    const T* first = x + ((od * w.s[0] - w.pb[0]) * w.in[1] + oh * w.s[1] - w.pb[1]) * w.in[2] + base_w;
    if (w.k[0] == 1 && w.k[1] == 2 && w.k[2] == 2 && w.s[2] == 2 && w.d[1] == 1 && w.d[2] == 1) {
      // 2x2 windows with stride 2 along the row (BlazeFace, openWakeWord): one pass over both
      // input rows, which the compiler vectorizes with even/odd shuffles.
      const T* r0 = first;
      const T* r1 = first + w.in[2];
      T* yo = yrow + a;
      // In tap order, a later tap winning only if greater (as everywhere in this file: a NaN
      // first tap stays, a later one is passed over; pairwise maxima lost the fourth tap behind
      // a NaN third).
      for (int64_t i = 0; i < b - a; ++i) {
        T m = r0[2 * i];
        m = r0[2 * i + 1] > m ? r0[2 * i + 1] : m;
        m = r1[2 * i] > m ? r1[2 * i] : m;
        m = r1[2 * i + 1] > m ? r1[2 * i + 1] : m;
        yo[i] = m;
      }
      continue;
    }
    if (w.k[0] == 1 && w.k[1] == 3 && w.k[2] == 3 && w.s[2] == 2 && w.d[2] == 1) {
      // 3x3 windows with stride 2 along the row (ResNet's stem pool): an output's nine taps in
      // one pass, in the order below (the first seeds, a later tap wins only if greater).
      const int64_t rs = w.d[1] * w.in[2];
      const T* __restrict r0 = first;
      const T* __restrict r1 = first + rs;
      const T* __restrict r2 = first + 2 * rs;
      T* __restrict yo = yrow + a;
      int64_t i = 0;
      if constexpr (std::is_same_v<T, float>) {
        // f32 on the build's baseline Highway vectors: taps 2i and 2i + 1 are the even and odd
        // lanes of the row loaded at 2i, tap 2i + 2 the odd lanes loaded at 2i + 1 (so no load
        // reads past output i + L - 1's last tap); the same order and `v > m` selections as the
        // loop below (GCC left it scalar: SqueezeNet's first pool took 250 us a run against
        // onnxruntime's 44). A row's last partial vector is recomputed overlapping the one before.
        namespace hn = hwy::HWY_NAMESPACE;
        const hn::ScalableTag<float> df;
        const auto L = static_cast<int64_t>(hn::Lanes(df));
        const int64_t n = b - a;
        auto tap = [&](hn::Vec<decltype(df)> v, hn::Vec<decltype(df)> m) { return hn::IfThenElse(hn::Gt(v, m), v, m); };
        auto vec = [&](int64_t at) {
          hn::Vec<decltype(df)> e0, o0, s0, e1, o1, s1, e2, o2, s2, junk;
          hn::LoadInterleaved2(df, r0 + 2 * at, e0, o0);
          hn::LoadInterleaved2(df, r0 + 2 * at + 1, junk, s0);
          hn::LoadInterleaved2(df, r1 + 2 * at, e1, o1);
          hn::LoadInterleaved2(df, r1 + 2 * at + 1, junk, s1);
          hn::LoadInterleaved2(df, r2 + 2 * at, e2, o2);
          hn::LoadInterleaved2(df, r2 + 2 * at + 1, junk, s2);
          auto m = tap(s0, tap(o0, e0));
          m = tap(s1, tap(o1, tap(e1, m)));
          m = tap(s2, tap(o2, tap(e2, m)));
          hn::StoreU(m, df, yo + at);
        };
        for (; i + L <= n; i += L) vec(i);
        if (i < n && n >= L) {
          vec(n - L);
          i = n;
        }
      }
      for (; i < b - a; ++i) {
        T m = r0[2 * i];
        m = r0[2 * i + 1] > m ? r0[2 * i + 1] : m;
        m = r0[2 * i + 2] > m ? r0[2 * i + 2] : m;
        m = r1[2 * i] > m ? r1[2 * i] : m;
        m = r1[2 * i + 1] > m ? r1[2 * i + 1] : m;
        m = r1[2 * i + 2] > m ? r1[2 * i + 2] : m;
        m = r2[2 * i] > m ? r2[2 * i] : m;
        m = r2[2 * i + 1] > m ? r2[2 * i + 1] : m;
        m = r2[2 * i + 2] > m ? r2[2 * i + 2] : m;
        yo[i] = m;
      }
      continue;
    }
    for (int64_t ow = a; ow < b; ++ow) yrow[ow] = first[(ow - a) * w.s[2]];
    for (int64_t kd = 0; kd < w.k[0]; ++kd)
      for (int64_t kh = 0; kh < w.k[1]; ++kh) {
        const T* row = first + (kd * w.d[0] * w.in[1] + kh * w.d[1]) * w.in[2];
        if (w.k[2] == 3 && w.s[2] == 2 && w.d[2] == 1) {
          // 3 taps with stride 2 along the row (ResNet's 3x3/2 stem pool): the row's three taps in
          // one pass, in tap order (so NaN never wins, as below), which the compiler vectorizes
          // with even/odd shuffles instead of a strided load per tap.
          const T* __restrict src = row;
          T* __restrict yo = yrow + a;
          for (int64_t i = 0; i < b - a; ++i) {
            T m = yo[i];
            m = src[2 * i] > m ? src[2 * i] : m;
            m = src[2 * i + 1] > m ? src[2 * i + 1] : m;
            m = src[2 * i + 2] > m ? src[2 * i + 2] : m;
            yo[i] = m;
          }
          continue;
        }
        for (int64_t kw = 0; kw < w.k[2]; ++kw) {
          const T* src = row + kw * w.d[2];
          T* yo = yrow + a;
          const int64_t n = b - a;
          if (w.s[2] == 1) {
            for (int64_t i = 0; i < n; ++i) yo[i] = src[i] > yo[i] ? src[i] : yo[i];
          } else {
            for (int64_t i = 0; i < n; ++i) {
              const T v = src[i * w.s[2]];
              yo[i] = v > yo[i] ? v : yo[i];
            }
          }
        }
      }
  }
}

// Whether every window lies wholly inside the input (no padding, no ceil_mode overhang).
inline bool windows_interior(const Window3& w) {
  for (int a = 0; a < 3; ++a)
    if (w.pb[a] != 0 || w.pe[a] != 0 || (w.out[a] - 1) * w.s[a] + (w.k[a] - 1) * w.d[a] >= w.in[a]) return false;
  return true;
}

// MaxPoolGrad over one plane whose windows are all interior (windows_interior): dx (zeroed by
// the caller) at each window's argmax += dy. The argmax is max_pool_plane's: the first tap
// seeds it and only a strictly greater value replaces it.
template <typename T>
void max_pool_grad_plane_interior(const T* x, const T* dy, const Window3& w, T* dx) {
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      const T* g = dy + (od * w.out[1] + oh) * w.out[2];
      const int64_t row0 = (od * w.s[0] * w.in[1] + oh * w.s[1]) * w.in[2];
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const int64_t base = row0 + ow * w.s[2];
        int64_t best_i = base;
        T best = x[base];
        for (int64_t kd = 0; kd < w.k[0]; ++kd)
          for (int64_t kh = 0; kh < w.k[1]; ++kh) {
            const int64_t row = base + (kd * w.d[0] * w.in[1] + kh * w.d[1]) * w.in[2];
            for (int64_t kw = 0; kw < w.k[2]; ++kw) {
              const int64_t i = row + kw * w.d[2];
              if (x[i] > best) {
                best = x[i];
                best_i = i;
              }
            }
          }
        dx[best_i] += g[ow];
      }
    }
}

// MaxPool 2x2 with stride 2 (dilation 1, interior, 1-deep in D: LeNet's pools): every input
// element lies in at most one window.
inline bool max_pool_2x2_s2(const Window3& w) {
  return w.k == std::array<int64_t, 3>{1, 2, 2} && w.s == std::array<int64_t, 3>{1, 2, 2} &&
         w.d == std::array<int64_t, 3>{1, 1, 1} && windows_interior(w);
}

// MaxPoolGrad of one plane under max_pool_2x2_s2: dX written once (no zero fill and scatter),
// each window's argmax chosen as max_pool_plane chooses it (the first tap seeds it, only a
// strictly greater value replaces it: ties and NaN resolve the same way). f32 windows run on
// the build's baseline Highway vectors (even/odd columns deinterleaved), without branches.
template <typename T>
void max_pool_grad_plane_2x2(const T* x, const T* dy, const Window3& w, T* dx) {
  const int64_t iw = w.in[2], ow_n = w.out[2], plane = w.in[1] * iw;
  for (int64_t od = 0; od < w.out[0]; ++od, x += plane, dx += plane) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh, dy += ow_n) {
      const T* r0 = x + 2 * oh * iw;
      const T* r1 = r0 + iw;
      T* d0 = dx + 2 * oh * iw;
      T* d1 = d0 + iw;
      int64_t o = 0;
      if constexpr (std::is_same_v<T, float>) {
        namespace hn = hwy::HWY_NAMESPACE;
        // Full vectors, then single lanes (branch-free too: LeNet's planes are 14 and 5 wide).
        const auto windows = [&](auto df) {
          const auto L = static_cast<int64_t>(hn::Lanes(df));
          for (; o + L <= ow_n; o += L) {
            hn::Vec<decltype(df)> a, b, c, e;
            hn::LoadInterleaved2(df, r0 + 2 * o, a, b);
            hn::LoadInterleaved2(df, r1 + 2 * o, c, e);
            const auto gb = hn::Gt(b, a);
            const auto best = hn::IfThenElse(gb, b, a);
            const auto gc = hn::Gt(c, best);
            const auto ge = hn::Gt(e, hn::IfThenElse(gc, c, best));
            auto rest = hn::LoadU(df, dy + o);  // dY not yet given to a later tap
            const auto v11 = hn::IfThenElseZero(ge, rest);
            rest = hn::IfThenZeroElse(ge, rest);
            const auto v10 = hn::IfThenElseZero(gc, rest);
            rest = hn::IfThenZeroElse(gc, rest);
            hn::StoreInterleaved2(hn::IfThenZeroElse(gb, rest), hn::IfThenElseZero(gb, rest), df, d0 + 2 * o);
            hn::StoreInterleaved2(v10, v11, df, d1 + 2 * o);
          }
        };
        windows(hn::ScalableTag<float>());
        windows(hn::CappedTag<float, 1>());
      }
      for (; o < ow_n; ++o) {
        const T a = r0[2 * o], b = r0[2 * o + 1], c = r1[2 * o], e = r1[2 * o + 1];
        const bool gb = b > a;
        T best = gb ? b : a;
        const bool gc = c > best;
        best = gc ? c : best;
        const bool ge = e > best;
        const T g = dy[o];
        d0[2 * o] = !gb && !gc && !ge ? g : T(0);
        d0[2 * o + 1] = gb && !gc && !ge ? g : T(0);
        d1[2 * o] = gc && !ge ? g : T(0);
        d1[2 * o + 1] = ge ? g : T(0);
      }
      std::fill(d0 + 2 * ow_n, d0 + iw, T(0));  // columns past the last window
      std::fill(d1 + 2 * ow_n, d1 + iw, T(0));
    }
    std::fill(dx + 2 * w.out[1] * iw, dx + plane, T(0));  // rows past the last window
  }
}

// One AveragePool window: the in-range tap numbers [lo[a], hi[a]) per axis (window positions
// start + j*d are monotonic, so the in-range taps are contiguous) and the divisor. With
// count_include_pad the divisor counts padded positions but not the overhang that ceil_mode
// adds past the end padding (as ONNX Runtime does). Shared by AveragePool and its gradient.
struct AvgWindow {
  int64_t lo[3], hi[3], div;
};

inline AvgWindow avg_window(const Window3& w, int64_t od, int64_t oh, int64_t ow, bool include_pad) {
  const int64_t o3[3] = {od, oh, ow};
  AvgWindow aw;
  int64_t padded = 1, count = 1;
  for (int a = 0; a < 3; ++a) {
    const int64_t start = o3[a] * w.s[a] - w.pb[a];
    int64_t n_in_padded = 0;
    aw.lo[a] = w.k[a];
    aw.hi[a] = 0;
    for (int64_t j = 0; j < w.k[a]; ++j) {
      const int64_t p = start + j * w.d[a];
      if (p >= -w.pb[a] && p < w.in[a] + w.pe[a]) ++n_in_padded;
      if (p >= 0 && p < w.in[a]) {
        aw.lo[a] = std::min(aw.lo[a], j);
        aw.hi[a] = j + 1;
      }
    }
    padded *= n_in_padded;
    count *= std::max<int64_t>(0, aw.hi[a] - aw.lo[a]);
  }
  aw.div = include_pad ? padded : count;
  return aw;
}

// Calls fn(T& elem) for every in-range input element of window `aw` at output (od, oh, ow).
template <typename T, typename Fn>
inline void for_window(T* x, const Window3& w, const AvgWindow& aw, int64_t od, int64_t oh, int64_t ow, const Fn& fn) {
  for (int64_t kd = aw.lo[0]; kd < aw.hi[0]; ++kd) {
    const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
    for (int64_t kh = aw.lo[1]; kh < aw.hi[1]; ++kh) {
      const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
      T* row = x + (id * w.in[1] + ih) * w.in[2];
      const int64_t iw0 = ow * w.s[2] - w.pb[2];
      for (int64_t kw = aw.lo[2]; kw < aw.hi[2]; ++kw) fn(row[iw0 + kw * w.d[2]]);
    }
  }
}

// AveragePool over one plane.
template <typename T>
void avg_pool_plane(const T* x, const Window3& w, T* y, bool include_pad) {
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh)
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const AvgWindow aw = avg_window(w, od, oh, ow, include_pad);
        T sum = 0;
        for_window(x, w, aw, od, oh, ow, [&](const T& v) { sum += v; });
        y[(od * w.out[1] + oh) * w.out[2] + ow] = aw.div > 0 ? sum / static_cast<T>(aw.div) : T(0);
      }
}

// AveragePool 2x2 with stride 2 over one plane whose windows are all interior (max_pool_2x2_s2:
// DenseNet's transitions, 128..512 planes of 56..14 squared): every divisor is 4, and each window
// is summed as avg_pool_plane sums it, (((0 + x00) + x01) + x10) + x11, so the result is the
// same bit for bit (times 0.25 is exactly divided by 4). f32 runs on the build's baseline Highway
// vectors (even/odd columns deinterleaved); the generic loop took ~13 ns per output.
template <typename T>
void avg_pool_plane_2x2(const T* x, const Window3& w, T* y) {
  const int64_t iw = w.in[2], ow_n = w.out[2], plane = w.in[1] * iw;
  for (int64_t od = 0; od < w.out[0]; ++od, x += plane) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh, y += ow_n) {
      const T* r0 = x + 2 * oh * iw;
      const T* r1 = r0 + iw;
      int64_t o = 0;
      if constexpr (std::is_same_v<T, float>) {
        namespace hn = hwy::HWY_NAMESPACE;
        const hn::ScalableTag<float> df;
        const auto L = static_cast<int64_t>(hn::Lanes(df));
        const auto zero = hn::Zero(df), quarter = hn::Set(df, 0.25f);
        for (; o + L <= ow_n; o += L) {
          hn::Vec<decltype(df)> a, b, c, e;
          hn::LoadInterleaved2(df, r0 + 2 * o, a, b);
          hn::LoadInterleaved2(df, r1 + 2 * o, c, e);
          const auto sum = hn::Add(hn::Add(hn::Add(hn::Add(zero, a), b), c), e);
          hn::StoreU(hn::Mul(sum, quarter), df, y + o);
        }
      }
      for (; o < ow_n; ++o) {
        T sum = 0;
        sum += r0[2 * o];
        sum += r0[2 * o + 1];
        sum += r1[2 * o];
        sum += r1[2 * o + 1];
        y[o] = sum / static_cast<T>(4);
      }
    }
  }
}

// AveragePoolGrad over one plane (dx zeroed by the caller): dx[window] += dy / divisor.
template <typename T>
void avg_pool_grad_plane(const T* dy, const Window3& w, T* dx, bool include_pad) {
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh)
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const AvgWindow aw = avg_window(w, od, oh, ow, include_pad);
        if (aw.div <= 0) continue;
        const T g = dy[(od * w.out[1] + oh) * w.out[2] + ow] / static_cast<T>(aw.div);
        for_window(dx, w, aw, od, oh, ow, [&](T& v) { v += g; });
      }
}

template <typename T>
Status pool_typed(exec::KernelContext& ctx, bool is_max) {
  const Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  const Ints in(x.shape().begin() + 2, x.shape().end());
  TSR_ASSIGN_OR_RETURN(Window3 w, resolve_window3(ctx, in, node.attr_ints("kernel_shape"),
                                                   node.attr_int("ceil_mode") != 0));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  int64_t* idx = nullptr;
  if (is_max && ctx.num_outputs() > 1 && node.outputs[1] >= 0) {
    TSR_ASSIGN_OR_RETURN(Tensor * it, ctx.alloc_output(1));
    idx = it->mut_data<int64_t>();
  }
  const bool col_major = node.attr_int("storage_order") != 0;
  const bool include_pad = node.attr_int("count_include_pad") != 0;
  const int64_t planes = x.dim(0) * x.dim(1);
  const T* px = x.data<T>();
  T* py = y->mut_data<T>();
  const int64_t in_size = w.in_size(), out_size = w.out_size();
  if (out_size == 0) return ok_status();
  if (is_max && !idx) {
    // Split by output rows, so that one large plane (M-LSD's 1 x 160 x 160 peak pooling) spreads
    // over the threads too; chunks of about 16 K window reads (openWakeWord's 24 x 72 x 32 pooling
    // ran as one chunk with 64 K, and slower on two threads than on one).
    const int64_t rows = w.out[0] * w.out[1];
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, w.out[2] * w.k_size()));
    ctx.pool().parallel_for(planes * rows, grain, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1;) {
        const int64_t p = q / rows, r0 = q % rows, r1 = std::min(rows, r0 + (q1 - q));
        max_pool_rows<T>(px + p * in_size, w, r0, r1, py + p * out_size);
        q += r1 - r0;
      }
    });
    return ok_status();
  }
  const bool avg_2x2 = !is_max && max_pool_2x2_s2(w);
  ctx.pool().parallel_for(planes, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      if (avg_2x2) avg_pool_plane_2x2<T>(px + p * in_size, w, py + p * out_size);
      else if (is_max) max_pool_plane<T>(px + p * in_size, w, py + p * out_size, idx ? idx + p * out_size : nullptr, p, col_major);
      else avg_pool_plane<T>(px + p * in_size, w, py + p * out_size, include_pad);
    }
  });
  return ok_status();
}

template <typename T>
Status global_pool_typed(exec::KernelContext& ctx, bool is_max) {
  const Tensor& x = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t size = planes == 0 ? 0 : x.numel() / planes;
  const T* px = x.data<T>();
  T* py = y->mut_data<T>();
  ctx.pool().parallel_for(planes, 16, [&](int64_t p0, int64_t p1) {
    if constexpr (std::is_same_v<T, float> && !kSizeFirstKernels) {  // (size-first builds: the loop below)
      if (!is_max) return plane_means_f32(px + p0 * size, p1 - p0, size, py + p0);
    }
    for (int64_t p = p0; p < p1; ++p) {
      const T* s = px + p * size;
      if (is_max) {
        T m = size > 0 ? s[0] : -std::numeric_limits<T>::infinity();
        for (int64_t i = 1; i < size; ++i) m = s[i] > m ? s[i] : m;
        py[p] = m;
      } else {
        // 16 partial sums: vectorizable without -ffast-math (four independent SSE chains at the
        // baseline ISA this file is built for; four partial sums were one chain, latency-bound:
        // 3x onnxruntime's time on EfficientNet's squeeze-excitation planes) and a little more
        // accurate.
        constexpr int kAcc = 16;
        if (size < kAcc) {  // one chain, as the partial sums below would add it (MobileNet's 2x2 planes)
          T sum = T(0);
          for (int64_t i = 0; i < size; ++i) sum += s[i];
          py[p] = size > 0 ? sum / static_cast<T>(size) : T(0);
          continue;
        }
        T acc[kAcc] = {};
        int64_t i = 0;
        for (; i + kAcc <= size; i += kAcc)
          for (int j = 0; j < kAcc; ++j) acc[j] += s[i + j];
        for (; i < size; ++i) acc[0] += s[i];
        for (int half = kAcc / 2; half > 0; half /= 2)
          for (int j = 0; j < half; ++j) acc[j] += acc[j + half];
        py[p] = size > 0 ? acc[0] / static_cast<T>(size) : T(0);
      }
    }
  });
  return ok_status();
}

// kSel: the dtypes compiled in (a selective build's, core/base/selective.h).
template <bool kMax, bool kGlobal, DTypeMask kSel>
Status pool_kernel(exec::KernelContext& ctx) {
  switch (ctx.input(0)->dtype()) {
    case DType::kF32:
      if constexpr (dtype_in(kSel, DType::kF32))
        return kGlobal ? global_pool_typed<float>(ctx, kMax) : pool_typed<float>(ctx, kMax);
      break;
    case DType::kF64:
      if constexpr (dtype_in(kSel, DType::kF64))
        return kGlobal ? global_pool_typed<double>(ctx, kMax) : pool_typed<double>(ctx, kMax);
      break;
    case DType::kI8:
      if constexpr (dtype_in(kSel, DType::kI8))
        if (kMax && !kGlobal) return pool_typed<int8_t>(ctx, true);
      break;
    case DType::kU8:
      if constexpr (dtype_in(kSel, DType::kU8))
        if (kMax && !kGlobal) return pool_typed<uint8_t>(ctx, true);
      break;
    default:
      break;
  }
  return unsupported(ctx.place(), ": ", ctx.node().op, " has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
}

// MaxUnpool: Y = 0 everywhere except at MaxPool's flattened Indices, which index the default
// unpooled shape [N, C, (D - 1) * stride + kernel - pads]. With a different output_shape, an
// index keeps its coordinates there (the extra size is padding at the end, as the onnx
// reference and onnxruntime place it). An index outside Y is an error; later duplicates win.
template <typename T>
Status max_unpool_typed(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& ind = *ctx.input(1);
  if (ind.shape() != x.shape())
    return ctx.error("input[1] (I): shape ", shape_str(ind.shape()), " differs from X's ", shape_str(x.shape()));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const ir::Node& node = ctx.node();
  const size_t r = static_cast<size_t>(x.rank()) - 2;
  const Ints ks = node.attr_ints("kernel_shape");
  const Ints st = node.attr_ints("strides", Ints(r, 1));
  const Ints pads = node.attr_ints("pads", Ints(2 * r, 0));
  if (ks.size() != r || st.size() != r || pads.size() != 2 * r || y->rank() != x.rank())
    return ctx.error("kernel_shape / strides / pads do not match X's rank ", x.rank());
  Shape def = {x.dim(0), x.dim(1)};
  for (size_t i = 0; i < r; ++i) def.push_back((x.dim(static_cast<int64_t>(i) + 2) - 1) * st[i] + ks[i] - pads[i] - pads[i + r]);
  const bool remap = def != y->shape();
  const std::vector<int64_t> ystrides = shape_strides(y->shape());
  T* py = y->mut_data<T>();
  const int64_t total = y->numel();
  std::fill(py, py + total, T(0));
  const T* px = x.data<T>();
  const int64_t* pi = ind.data<int64_t>();
  for (int64_t j = 0; j < x.numel(); ++j) {
    int64_t at = pi[j];
    if (remap && at >= 0) {
      // Coordinates in the default shape, re-flattened in Y's.
      int64_t rest = at, flat = 0;
      for (size_t d = def.size(); d-- > 0;) {
        const int64_t c = def[d] > 0 ? rest % def[d] : 0;
        rest = def[d] > 0 ? rest / def[d] : 0;
        if (c >= y->dim(static_cast<int64_t>(d))) {
          flat = -1;
          break;
        }
        flat += c * ystrides[d];
      }
      at = rest == 0 ? flat : -1;
    }
    if (at < 0 || at >= total)
      return ctx.error("index ", pi[j], " at ", j, " is outside the output ", shape_str(y->shape()));
    py[at] = px[j];
  }
  return ok_status();
}

template <DTypeMask kSel>
Status max_unpool_kernel(exec::KernelContext& ctx) {
  constexpr DTypeMask kFloats = dtype_bit(DType::kF32) | dtype_bit(DType::kF64);
  Status st = ok_status();
  if (dispatch_dtype<kSel & kFloats>(ctx.input(0)->dtype(), [&](auto tag) { st = max_unpool_typed<decltype(tag)>(ctx); }))
    return st;
  return unsupported(ctx.place(), ": MaxUnpool has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
}

// MaxPoolGrad / AveragePoolGrad (core/ops/families/nn_grad.cpp): dX, per (N, C) plane in
// parallel. MaxPoolGrad finds each window's argmax with the forward's own max_pool_plane (so
// ties and padding resolve exactly as MaxPool's Indices do) and adds dY there.
template <typename T>
Status pool_grad_typed(exec::KernelContext& ctx, bool is_max) {
  const Tensor& dy = *ctx.input(is_max ? 1 : 0);
  TSR_ASSIGN_OR_RETURN(Tensor * dx, ctx.alloc_output(0));
  const ir::Node& node = ctx.node();
  const Ints in(dx->shape().begin() + 2, dx->shape().end());
  TSR_ASSIGN_OR_RETURN(Window3 w, resolve_window3(ctx, in, node.attr_ints("kernel_shape"),
                                                   node.attr_int("ceil_mode") != 0));
  T* pdx = dx->mut_data<T>();
  const int64_t in_size = w.in_size(), out_size = w.out_size();
  const bool two_by_two = is_max && out_size > 0 && max_pool_2x2_s2(w);  // writes all of dX
  if (!two_by_two) std::fill(pdx, pdx + dx->numel(), T(0));
  if (out_size == 0 || in_size == 0) return ok_status();
  const int64_t planes = dx->dim(0) * dx->dim(1);
  const T* pdy = dy.data<T>();
  const T* px = is_max ? ctx.input(0)->data<T>() : nullptr;
  const bool include_pad = node.attr_int("count_include_pad") != 0;
  const bool interior = is_max && windows_interior(w);
  // Per pool slot: max_pool_plane's values and argmaxes of one plane, from the run's scratch
  // arena (scratch.h: a steady-state training step allocates nothing).
  const size_t per_slot = is_max && !interior ? static_cast<size_t>(out_size) : 0;
  TSR_ASSIGN_OR_RETURN(const SlotScratch<T> ybufs, SlotScratch<T>::make(ctx, per_slot));
  TSR_ASSIGN_OR_RETURN(const SlotScratch<int64_t> ibufs, SlotScratch<int64_t>::make(ctx, per_slot));
  ctx.pool().parallel_for_slots(planes, 1, [&](int slot, int64_t p0, int64_t p1) {
    T* ybuf = ybufs.slot(slot);
    int64_t* ibuf = ibufs.slot(slot);
    for (int64_t p = p0; p < p1; ++p) {
      const T* g = pdy + p * out_size;
      T* d = pdx + p * in_size;
      if (!is_max) {
        avg_pool_grad_plane<T>(g, w, d, include_pad);
        continue;
      }
      if (two_by_two) {
        max_pool_grad_plane_2x2<T>(px + p * in_size, g, w, d);
        continue;
      }
      if (interior) {
        max_pool_grad_plane_interior<T>(px + p * in_size, g, w, d);
        continue;
      }
      max_pool_plane<T>(px + p * in_size, w, ybuf, ibuf, 0, false);
      for (int64_t o = 0; o < out_size; ++o)
        if (ibuf[o] >= 0) d[ibuf[o]] += g[o];
    }
  });
  return ok_status();
}

template <bool kMax, DTypeMask kSel>
Status pool_grad_kernel(exec::KernelContext& ctx) {
  if constexpr (dtype_in(kSel, DType::kF64))
    if (ctx.input(0)->dtype() == DType::kF64) return pool_grad_typed<double>(ctx, kMax);
  if constexpr (dtype_in(kSel, DType::kF32)) return pool_grad_typed<float>(ctx, kMax);
  return unsupported(ctx.place(), ": ", ctx.node().op, " has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
}

}  // namespace

void register_nn_pool_kernels(KernelRegistry& r) {
  const std::vector<DType> types = {DType::kF32, DType::kF64};
  TSR_IF_SELECTED("MaxPool") r.add_fn("MaxPool", {DType::kF32, DType::kF64, DType::kI8, DType::kU8}, pool_kernel<true, false, kSel>);
  TSR_IF_SELECTED("MaxUnpool") r.add_fn("MaxUnpool", types, max_unpool_kernel<kSel>);
  TSR_IF_SELECTED("AveragePool") r.add_fn("AveragePool", types, pool_kernel<false, false, kSel>);
  TSR_IF_SELECTED("GlobalMaxPool") r.add_fn("GlobalMaxPool", types, pool_kernel<true, true, kSel>);
  TSR_IF_SELECTED("GlobalAveragePool") r.add_fn("GlobalAveragePool", types, pool_kernel<false, true, kSel>);
  TSR_IF_SELECTED("MaxPoolGrad") r.add_fn("MaxPoolGrad", types, pool_grad_kernel<true, kSel>);
  TSR_IF_SELECTED("AveragePoolGrad") r.add_fn("AveragePoolGrad", types, pool_grad_kernel<false, kSel>);
}

}  // namespace tsr::cpu
