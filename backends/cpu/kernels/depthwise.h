// Depthwise convolution of one channel plane for the CPU conv kernels (nn.cpp: Conv with one
// input and one output channel per group; conv_separable.cpp: the depthwise stage of
// FusedSeparableConv), in rows [oh0, oh1) of the output so that callers can consume a band of
// rows while it is in cache: depthwise_prepare_band copies the input rows a band reads with the
// padding made explicit (and, for a width stride s > 1, split into s phases), then
// depthwise_prepared_rows runs loops with no bounds checks, whole vectors even on narrow rows.
// (Computing straight from x with the border columns apart was tried: equal in isolation, but
// 10-35% slower inside PP-OCRv4 rec and BlazeFace, whose rows are short.)
//
// A Highway "-inl" header (per-target include guard toggled by hwy/foreach_target.h), like
// epilogue.h: include it after <hwy/highway.h>; everything lives in tsr::cpu::HWY_NAMESPACE.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernels/nn_window.h"
#include "backends/cpu/kernels/short_rows-inl.h"

#if defined(TSR_CPU_DEPTHWISE_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_DEPTHWISE_H_
#undef TSR_CPU_DEPTHWISE_H_
#else
#define TSR_CPU_DEPTHWISE_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

// Depthwise 2-D (or 1-D) conv of one plane: y[oh, ow] = bias + sum_kh,kw wk[kh, kw] *
// xpad[oh*s1 + kh*d1, ow*s2 + kw*d2], where xpad is the plane with its padding made explicit, so
// the inner loops carry no bounds checks. With a width stride s2 > 1 each padded row is also
// split into s2 phases (phase f holds columns f, f + s2, ...): tap column ow*s2 + off is then
// phase (off % s2) at index ow + off / s2, contiguous in ow, so every stride vectorizes.
constexpr int64_t kDwSlack = 64;  // >= lanes of any float vector

struct DwGeom {
  int64_t hp, wq, s2;  // padded rows, phase row length, width stride
  int64_t row_stride() const { return s2 * wq; }  // elements per padded row (all phases)
};

// The prepared plane's geometry for window w (the same for every plane of a conv).
inline DwGeom depthwise_geom(const Window3& w) {
  const int64_t hp = std::max(w.in[1] + w.pb[1] + w.pe[1], (w.out[1] - 1) * w.s[1] + (w.k[1] - 1) * w.d[1] + 1);
  const int64_t wp = std::max(w.in[2] + w.pb[2] + w.pe[2], (w.out[2] - 1) * w.s[2] + (w.k[2] - 1) * w.d[2] + 1);
  const int64_t s2 = w.s[2];
  return {hp, (wp + s2 - 1) / s2, s2};
}

// Padded rows that output rows [oh0, oh1) read, from padded row oh0 * s1 on.
inline int64_t depthwise_band_rows(const Window3& w, int64_t oh0, int64_t oh1) {
  return (oh1 - 1 - oh0) * w.s[1] + (w.k[1] - 1) * w.d[1] + 1;
}
// Floats a band of output rows [oh0, oh1) needs from depthwise_prepare_band.
inline int64_t depthwise_band_size(const Window3& w, const DwGeom& g, int64_t oh0, int64_t oh1) {
  return depthwise_band_rows(w, oh0, oh1) * g.row_stride() + kDwSlack;
}

// The padded (and phase-split) rows that output rows [oh0, oh1) read, into `out`
// (depthwise_band_size floats): its row 0 is padded row oh0 * s1. The input rows come from
// `fetch(ih, buf)`, which returns a pointer to input row ih's w.in[2] values: a row of the plane
// itself, or the row written into `buf` (a converted row: the quantized kernels center u8/s8 into
// f32 here). `buf` is the row's place in `out` when the width stride is 1 (nothing is copied
// when fetch returns it), else `row_buf` (w.in[2] + kDwSlack elements; unused by a fetch that
// returns rows of the plane, which may then pass null).
template <typename T, class Fetch>
void depthwise_prepare_band_rows(const Fetch& fetch, T* row_buf, const Window3& w, const DwGeom& geom, int64_t oh0,
                                 int64_t oh1, T* out) {
  namespace hn = hwy::HWY_NAMESPACE;
  const int64_t s2 = geom.s2, wq = geom.wq, first = oh0 * w.s[1], rows = depthwise_band_rows(w, oh0, oh1);
  // kDwSlack zeros past the end let the vector loop read a full vector for the last (partial)
  // chunk of the last row; the lanes past the row end are discarded.
  std::fill_n(out, depthwise_band_size(w, geom, oh0, oh1), T(0));
  const int64_t ih0 = std::max<int64_t>(0, first - w.pb[1]), ih1 = std::min(w.in[1], first + rows - w.pb[1]);
  for (int64_t ih = ih0; ih < ih1; ++ih) {
    T* dst = out + (ih + w.pb[1] - first) * s2 * wq;
    const T* src = fetch(ih, s2 == 1 ? dst + w.pb[2] : row_buf);
    if (s2 == 1) {
      if (src == dst + w.pb[2]) continue;
#if HWY_TARGET != HWY_SCALAR
      if constexpr (std::is_same_v<T, float>) {
        // In vectors: the rows of small planes (7, 14, 28 floats: EfficientNet's and MobileNetV3's
        // depthwise convs on 7x7 and 14x14, one plane per channel) were a memcpy call each.
        short_rows::copy_row(dst + w.pb[2], src, w.in[2]);
        continue;
      }
#endif
      std::memcpy(dst + w.pb[2], src, static_cast<size_t>(w.in[2]) * sizeof(T));
      continue;
    }
    const int64_t pb2 = w.pb[2];
    if constexpr (std::is_same_v<T, float>) {
#if HWY_TARGET != HWY_SCALAR
      if (s2 == 2) {
        // The common stride 2: deinterleave with vector loads. Input column c lands in phase
        // (c + pb2) % 2 at index (c + pb2) / 2.
        // Whole vectors, then the rest of the row in vectors of at most 8 and 4 lanes (a 56-wide
        // row is 32 + 16 + 8 columns on AVX-512, not 32 + 24 scalar steps: the scalar tail was
        // most of a stride-2 depthwise conv's time on MobileNet's 56x56 and 14x14 maps).
        int64_t c = 0;
        const auto run = [&](auto d) {
          const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
          for (; c + 2 * nl <= w.in[2]; c += 2 * nl) {
            hn::Vec<decltype(d)> even, odd;
            hn::LoadInterleaved2(d, src + c, even, odd);
            hn::StoreU(even, d, dst + ((c + pb2) % 2) * wq + (c + pb2) / 2);
            hn::StoreU(odd, d, dst + ((c + 1 + pb2) % 2) * wq + (c + 1 + pb2) / 2);
          }
        };
        run(hn::ScalableTag<float>());
        run(hn::CappedTag<float, 8>());
        run(hn::CappedTag<float, 4>());
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
        if (c < w.in[2]) {
          // The last 1-7 columns (14- and 28-wide rows end here): two masked 4-lane loads (no read
          // past the row: AVX2's and AVX-512's masked loads do not touch masked-off lanes; other
          // targets' MaskedLoad reads the whole vector, so they keep the scalar loop below),
          // deinterleaved, stored masked to (r + 1) / 2 and r / 2 places (no write into the other
          // phase's row). c is even here. The scalar loop was ~1.6% of MobileNetV3-small.
          const hn::CappedTag<float, 4> d4;
          const int64_t r = w.in[2] - c;
          const size_t lo = static_cast<size_t>(std::min<int64_t>(r, 4)), hi = static_cast<size_t>(r) - lo;
          const auto a = hn::MaskedLoad(hn::FirstN(d4, lo), d4, src + c);
          const auto b = hn::MaskedLoad(hn::FirstN(d4, hi), d4, src + c + 4);
          const size_t ne = static_cast<size_t>(r + 1) / 2, no = static_cast<size_t>(r) / 2;
          // Lanes of ConcatEven/ConcatOdd(d4, b, a): columns c, c+2, c+4, c+6 / c+1, c+3, c+5, c+7.
          hn::BlendedStore(hn::ConcatEven(d4, b, a), hn::FirstN(d4, ne), d4, dst + (pb2 % 2) * wq + (c + pb2) / 2);
          hn::BlendedStore(hn::ConcatOdd(d4, b, a), hn::FirstN(d4, no), d4,
                           dst + ((1 + pb2) % 2) * wq + (c + 1 + pb2) / 2);
          c = w.in[2];
        }
#endif
        for (; c < w.in[2]; ++c) dst[((c + pb2) % 2) * wq + (c + pb2) / 2] = src[c];
        continue;
      }
#endif
    }
    // Phase f, index j holds padded column f + j*s2, i.e. input column f + j*s2 - pb2.
    for (int64_t f = 0; f < s2; ++f) {
      const int64_t j0 = pb2 > f ? (pb2 - f + s2 - 1) / s2 : 0;
      const int64_t j1 = std::min(wq, (w.in[2] + pb2 - f + s2 - 1) / s2);
      T* o = dst + f * wq;
      const T* in_f = src + f - pb2;
      for (int64_t j = j0; j < j1; ++j) o[j] = in_f[j * s2];
    }
  }
}

// The same from the plane x (rows of w.in[2]).
template <typename T>
void depthwise_prepare_band(const T* x, const Window3& w, const DwGeom& geom, int64_t oh0, int64_t oh1, T* out) {
  const int64_t iw = w.in[2];
  depthwise_prepare_band_rows<T>([x, iw](int64_t ih, T*) { return x + ih * iw; }, nullptr, w, geom, oh0, oh1, out);
}

// The whole plane, padding made explicit, into `phased` (grown as needed).
template <typename T>
DwGeom depthwise_prepare(const T* x, const Window3& w, std::vector<T>& phased) {
  const DwGeom geom = depthwise_geom(w);
  const size_t need = static_cast<size_t>(depthwise_band_size(w, geom, 0, w.out[1]));
  if (phased.size() < need) phased.resize(need);
  depthwise_prepare_band(x, w, geom, 0, w.out[1], phased.data());
  return geom;
}

// Where depthwise_rows leaves its sums: `y` (row oh0 first, rows of `ow_n`). A Store has
// vec(d, acc, r, ow, n), taking the n <= Lanes(d) first lanes of acc as output row oh0 + r,
// columns [ow, ow + n), and one(r, ow, v) for a single sum; the quantized convs' store
// requantizes there (qdepthwise.cpp), while the sums are in registers.
template <typename T>
struct DwStoreRows {
  T* y;
  int64_t ow_n;
  template <class D, class V>
  HWY_INLINE void vec(D d, V acc, int64_t r, int64_t ow, int64_t n) const {
    namespace hn = hwy::HWY_NAMESPACE;
    T* at = y + r * ow_n + ow;
    if (n == static_cast<int64_t>(hn::Lanes(d))) {
      hn::StoreU(acc, d, at);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    } else if constexpr (std::is_same_v<T, float>) {
      // A masked store (nothing written past n; it was a store to the stack and a memcpy call, at
      // the end of every row of 56 or 28: MobileNetV2's 56x56 and 28x28 blocks).
      hn::BlendedStore(acc, hn::FirstN(d, static_cast<size_t>(n)), d, at);
#endif
    } else {
      alignas(64) T tmp[kDwSlack];
      hn::StoreU(acc, d, tmp);
      std::memcpy(at, tmp, static_cast<size_t>(n) * sizeof(T));
    }
  }
  HWY_INLINE void one(int64_t r, int64_t ow, T v) const { y[r * ow_n + ow] = v; }
};

#if HWY_TARGET != HWY_SCALAR
// f(tag, rows, chunks) with the vectors and pass shape of depthwise_rows_vec for output rows of
// ow_n: vectors of 4, 8 or all lanes, the fewest that cover a row, 8 rows a pass; wider rows 4
// rows of two vectors (rows and chunks as std::integral_constant<int, N>).
template <class F>
HWY_INLINE void depthwise_by_width(int64_t ow_n, const F& f) {
  namespace hn = hwy::HWY_NAMESPACE;
  using I8 = std::integral_constant<int, 8>;
  using I1 = std::integral_constant<int, 1>;
  const hn::ScalableTag<float> d;
  if (ow_n <= 4) f(hn::CappedTag<float, 4>(), I8(), I1());
  else if (ow_n <= 8) f(hn::CappedTag<float, 8>(), I8(), I1());
  else if (ow_n <= static_cast<int64_t>(hn::Lanes(d))) f(d, I8(), I1());
  else f(d, std::integral_constant<int, 4>(), std::integral_constant<int, 2>());
}

// The f32 vector loop of depthwise_rows: R output rows x C chunks of D's lanes per pass, so that
// R * C independent FMA chains share each weight broadcast (one row of one chunk was a single
// chain of KH * KW dependent FMAs: latency-bound, and on 7- or 14-wide rows, MobileNet's and
// EfficientNet's late stages, that was every row). Rows past oh1 recompute row oh1 - 1 (their
// stores are dropped); loads may run up to C * nl - 1 floats past a row's last tap into the next
// row or the band's slack, and those lanes are dropped too. `tap`: offsets of the width taps.
// A row's chunks go from its last to its first, rows in order: a store that writes a whole vector
// past a row's end (the quantized store does, into the next row) is overwritten by that row's own
// stores, which come later.
template <int KH, int KW, int R, int C, class D, class Store>
HWY_NOINLINE void depthwise_rows_vec(D d, const float* phased, const DwGeom& g, const float* wk, float bias,
                                     const Window3& w, const int64_t* tap, int64_t oh0, int64_t oh1,
                                     const Store& store) {
  namespace hn = hwy::HWY_NAMESPACE;
  using V = hn::Vec<D>;
  const int64_t kh_n = KH > 0 ? KH : w.k[1], kw_n = KW > 0 ? KW : w.k[2], ow_n = w.out[2];
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const int64_t rstep = w.s[1] * g.row_stride(), dh = w.d[1] * g.row_stride();
  for (int64_t oh = oh0; oh < oh1; oh += R) {
    const float* rp[R];
    for (int r = 0; r < R; ++r) rp[r] = phased + (std::min<int64_t>(oh + r, oh1 - 1) - oh0) * rstep;
    const int64_t rows = std::min<int64_t>(R, oh1 - oh);
    for (int64_t ow = (ow_n - 1) / (C * nl) * (C * nl); ow >= 0; ow -= C * nl) {
      V acc[R * C];
      for (int i = 0; i < R * C; ++i) acc[i] = hn::Set(d, bias);
      for (int64_t kh = 0; kh < kh_n; ++kh) {
        const float* wr = wk + kh * kw_n;
        const int64_t o = kh * dh + ow;
        for (int64_t kw = 0; kw < kw_n; ++kw) {
          const V wv = hn::Set(d, wr[kw]);
          const int64_t t = o + tap[kw];
          for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c)
              acc[r * C + c] = hn::MulAdd(wv, hn::LoadU(d, rp[r] + t + c * nl), acc[r * C + c]);
        }
      }
      for (int64_t r = 0; r < rows; ++r)
        for (int c = C - 1; c >= 0; --c) {
          const int64_t col = ow + c * nl;
          if (col < ow_n) store.vec(d, acc[r * C + c], oh + r - oh0, col, std::min(nl, ow_n - col));
        }
    }
  }
}
#endif

#if HWY_TARGET != HWY_SCALAR && HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// Width stride 1 straight from the input rows, no padded copy: output row oh, column ow reads
// padded row p = oh*s1 + kh*d1 (input row p - pb1: iw floats at plane + row_off[p - oh0*s1], or
// `zero`, iw zeros, where row_off is negative: the padding) at column ow - pb2 + kw*d2. Passes of R rows x C chunks as depthwise_rows_vec; a pass whose taps
// all fall inside the rows takes plain loads, others masked ones (the lanes outside a row read
// zero and nothing outside it: AVX2's and AVX-512's masked loads do not touch masked-off lanes).
template <int KH, int KW, int R, int C, class D, class Store>
HWY_NOINLINE void depthwise_rows_direct_vec(D d, const float* plane, const int64_t* row_off, const float* zero, const float* wk, float bias,
                                            const Window3& w, int64_t oh0, int64_t oh1, const Store& store) {
  static_assert(KH > 0 && KW > 0, "compile-time window only");
  namespace hn = hwy::HWY_NAMESPACE;
  using V = hn::Vec<D>;
  using M = hn::Mask<D>;
  const int64_t ow_n = w.out[2], iw = w.in[2], nl = static_cast<int64_t>(hn::Lanes(d));
  int64_t off[KW];
  for (int kw = 0; kw < KW; ++kw) off[kw] = kw * w.d[2] - w.pb[2];
  for (int64_t oh = oh0; oh < oh1; oh += R) {
    const float* rp[R * KH];
    for (int r = 0; r < R; ++r)
      for (int kh = 0; kh < KH; ++kh) {
        const int64_t o = row_off[(std::min<int64_t>(oh + r, oh1 - 1) - oh0) * w.s[1] + kh * w.d[1]];
        rp[r * KH + kh] = o >= 0 ? plane + o : zero;
      }
    const int64_t rows = std::min<int64_t>(R, oh1 - oh);
    for (int64_t ow = (ow_n - 1) / (C * nl) * (C * nl); ow >= 0; ow -= C * nl) {
      V acc[R * C];
      for (int i = 0; i < R * C; ++i) acc[i] = hn::Set(d, bias);
      if (ow + off[0] >= 0 && ow + C * nl + off[KW - 1] <= iw) {
        for (int kh = 0; kh < KH; ++kh)
          for (int kw = 0; kw < KW; ++kw) {
            const V wv = hn::Set(d, wk[kh * KW + kw]);
            for (int r = 0; r < R; ++r)
              for (int c = 0; c < C; ++c)
                acc[r * C + c] = hn::MulAdd(wv, hn::LoadU(d, rp[r * KH + kh] + ow + off[kw] + c * nl), acc[r * C + c]);
          }
      } else {
        // Lanes [lo, hi) of each (tap column, chunk) inside the row.
        M mask[KW * C];
        for (int kw = 0; kw < KW; ++kw)
          for (int c = 0; c < C; ++c) {
            const int64_t start = ow + off[kw] + c * nl;
            const size_t lo = static_cast<size_t>(std::clamp<int64_t>(-start, 0, nl));
            const size_t hi = static_cast<size_t>(std::clamp<int64_t>(iw - start, 0, nl));
            mask[kw * C + c] = hn::AndNot(hn::FirstN(d, lo), hn::FirstN(d, hi));
          }
        for (int kh = 0; kh < KH; ++kh)
          for (int kw = 0; kw < KW; ++kw) {
            const V wv = hn::Set(d, wk[kh * KW + kw]);
            for (int r = 0; r < R; ++r)
              for (int c = 0; c < C; ++c)
                acc[r * C + c] = hn::MulAdd(
                    wv, hn::MaskedLoad(mask[kw * C + c], d, rp[r * KH + kh] + ow + off[kw] + c * nl), acc[r * C + c]);
          }
      }
      for (int64_t r = 0; r < rows; ++r)
        for (int c = C - 1; c >= 0; --c) {
          const int64_t col = ow + c * nl;
          if (col < ow_n) store.vec(d, acc[r * C + c], oh + r - oh0, col, std::min(nl, ow_n - col));
        }
    }
  }
}
#endif

// f32 output rows [oh0, oh1) through `store` straight from the input rows (input row ih at
// plane + row_off[ih + pb1 - oh0*s1], depthwise_band_rows entries, negative for padding rows, which
// read `zero`: w.in[2] zeros), no padded band (depthwise_rows_direct_vec): false,
// nothing done, where that path does not apply (a width stride > 1, windows other than 3x3 and
// 5x5, targets without fault-free masked loads); the caller then prepares the band.
template <class Store>
bool depthwise_direct_rows_to(const float* plane, const int64_t* row_off, const float* zero, const float* wk, float bias, const Window3& w,
                              int64_t oh0, int64_t oh1, const Store& store) {
#if HWY_TARGET != HWY_SCALAR && HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  namespace hn = hwy::HWY_NAMESPACE;
  if (w.s[2] != 1) return false;
  const hn::ScalableTag<float> d;
  const int64_t ow_n = w.out[2], nl = static_cast<int64_t>(hn::Lanes(d));
  // Rows of one pass of two vectors (MobileNetV2's 28-wide ones) have every pass at an edge, all
  // loads masked: 8% slower than the padded copy there; on 56 and 112 (half the passes inside)
  // 5-10% faster.
  if (ow_n <= 2 * nl) return false;
  const auto run = [&](auto kh_c, auto kw_c) {
    depthwise_by_width(ow_n, [&](auto dt, auto rows, auto chunks) {
      depthwise_rows_direct_vec<decltype(kh_c)::value, decltype(kw_c)::value, decltype(rows)::value,
                                decltype(chunks)::value>(dt, plane, row_off, zero, wk, bias, w, oh0, oh1, store);
    });
  };
  if (w.k[1] == 3 && w.k[2] == 3) run(std::integral_constant<int, 3>(), std::integral_constant<int, 3>());
  else if (w.k[1] == 5 && w.k[2] == 5) run(std::integral_constant<int, 5>(), std::integral_constant<int, 5>());
  else return false;
  return true;
#else
  (void)plane, (void)row_off, (void)zero, (void)wk, (void)bias, (void)w, (void)oh0, (void)oh1, (void)store;
  return false;
#endif
}

// Output rows [oh0, oh1) through `store` (DwStoreRows) from `phased` as prepared for those rows
// (its row 0 is padded row oh0 * s1), for a fixed window; KH/KW > 0 are compile-time window
// sizes (so the weight broadcasts stay in registers), 0 = use w.k. f32 rows run in vectors of 4,
// 8 or all lanes, the fewest that cover a row (a 7-wide row is one 8-lane vector, not 7/16 of an
// AVX-512 one), several rows at once (depthwise_rows_vec).
template <typename T, int KH, int KW, class Store>
void depthwise_rows(const T* phased, const DwGeom& g, const T* wk, T bias, const Window3& w, int64_t oh0, int64_t oh1,
                    const Store& store) {
  const int64_t kh_n = KH > 0 ? KH : w.k[1], kw_n = KW > 0 ? KW : w.k[2], ow_n = w.out[2];
  // Offset of tap kw inside a padded row's phases.
  int64_t tap[64];
  const bool small = kw_n <= 64;
  if (small)
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const int64_t off = kw * w.d[2];
      tap[kw] = (off % g.s2) * g.wq + off / g.s2;
    }
  if constexpr (std::is_same_v<T, float>) {
#if HWY_TARGET != HWY_SCALAR
    namespace hn = hwy::HWY_NAMESPACE;
    const hn::ScalableTag<float> d;
    const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
    if (small && 2 * nl <= kDwSlack) {
      depthwise_by_width(ow_n, [&](auto dt, auto rows, auto chunks) {
        depthwise_rows_vec<KH, KW, decltype(rows)::value, decltype(chunks)::value>(dt, phased, g, wk, bias, w, tap, oh0,
                                                                                   oh1, store);
      });
      return;
    }
#endif
  }
  const int64_t rs = g.row_stride();
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    const int64_t r = oh - oh0;
    const T* base = phased + (oh - oh0) * w.s[1] * rs;
    for (int64_t ow = 0; ow < ow_n; ++ow) {
      T acc = bias;
      for (int64_t kh = 0; kh < kh_n; ++kh) {
        const T* row = base + kh * w.d[1] * rs;
        const T* wr = wk + kh * kw_n;
        for (int64_t kw = 0; kw < kw_n; ++kw) {
          const int64_t off = kw * w.d[2];
          acc += wr[kw] * row[(small ? tap[kw] : (off % g.s2) * g.wq + off / g.s2) + ow];
        }
      }
      store.one(r, ow, acc);
    }
  }
}

// Output rows [oh0, oh1) from their prepared band (depthwise_prepare_band; for oh0 = 0 also the
// whole plane of depthwise_prepare), through `store` (DwStoreRows or the like).
template <typename T, class Store>
void depthwise_prepared_rows_to(const T* phased, const DwGeom& g, const T* wk, T bias, const Window3& w, int64_t oh0,
                                int64_t oh1, const Store& store) {
  if (w.k[1] == 3 && w.k[2] == 3) depthwise_rows<T, 3, 3>(phased, g, wk, bias, w, oh0, oh1, store);
  else if (w.k[1] == 5 && w.k[2] == 5) depthwise_rows<T, 5, 5>(phased, g, wk, bias, w, oh0, oh1, store);
  else depthwise_rows<T, 0, 0>(phased, g, wk, bias, w, oh0, oh1, store);
}
// The same into y (row oh0 first).
template <typename T>
void depthwise_prepared_rows(const T* phased, const DwGeom& g, const T* wk, T bias, const Window3& w, int64_t oh0,
                             int64_t oh1, T* y) {
  depthwise_prepared_rows_to<T>(phased, g, wk, bias, w, oh0, oh1, DwStoreRows<T>{y, w.out[2]});
}

// The whole plane: y = bias + the taps (no Z).
template <typename T>
void depthwise_plane(const T* x, const T* wk, T bias, const Window3& w, T* y, std::vector<T>& phased) {
  const DwGeom g = depthwise_prepare<T>(x, w, phased);
  depthwise_prepared_rows<T>(phased.data(), g, wk, bias, w, 0, w.out[1], y);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // TSR_CPU_DEPTHWISE_H_
