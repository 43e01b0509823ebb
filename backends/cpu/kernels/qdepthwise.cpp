// qdepthwise (qdepthwise.h): compiled once per SIMD target (hwy/foreach_target.h), called through
// HWY_DYNAMIC_DISPATCH.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/qdepthwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/qdepthwise.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

#include "backends/cpu/kernels/depthwise.h"
#include "backends/cpu/kernels/requant-inl.h"

#ifndef TSR_CPU_QDEPTHWISE_VNNI_FLAG_
#define TSR_CPU_QDEPTHWISE_VNNI_FLAG_
#include <atomic>
namespace tsr::cpu::qdw_detail {
extern std::atomic<bool> g_no_vnni;  // qdepthwise_disable_vnni_for_test
}  // namespace tsr::cpu::qdw_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// Lanes of the row conversion: at most kRowLanes, so that a band row with room for its values
// rounded up to kRowLanes (qdw_geom) takes every whole vector.
constexpr int64_t kRowLanes = 16;
using RowTag = hn::CappedTag<float, kRowLanes>;

// dst[i] = x[i] - x_zp as f32 for n values (one input row, written where depthwise.h's band
// wants it: no separate centered copy of the plane); returns dst. The last, partial vector is
// converted whole when its bytes lie before x_end (the rest of the tensor) and stored with its
// lanes past n zeroed, so dst must have room for n rounded up to kRowLanes floats; a row at the
// tensor's end finishes one value at a time. restrict: T is a char type.
#if HWY_TARGET != HWY_SCALAR
// RowTag's lanes of u8/s8 values at p, minus the zero point, as f32.
template <typename T>
struct Centered {
  RowTag df;
  hn::Vec<hn::RebindToSigned<RowTag>> zp;
  int64_t lanes = static_cast<int64_t>(hn::Lanes(RowTag()));
  explicit Centered(int32_t x_zp) : zp(hn::Set(hn::RebindToSigned<RowTag>(), x_zp)) {}
  HWY_INLINE hn::Vec<RowTag> operator()(const T* p) const {
    const hn::RebindToSigned<RowTag> di;
    return hn::ConvertTo(df, hn::Sub(hn::PromoteTo(di, hn::LoadU(hn::Rebind<T, RowTag>(), p)), zp));
  }
};
#endif

template <typename T>
const float* center_row(const T* __restrict x, int64_t n, int32_t x_zp, const T* x_end, float* __restrict dst) {
  int64_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const Centered<T> convert(x_zp);
  const RowTag df;
  const int64_t nl = convert.lanes;
  for (; i + nl <= n; i += nl) hn::StoreU(convert(x + i), df, dst + i);
  if (i < n && x + i + nl <= x_end) {
    hn::StoreU(hn::IfThenElseZero(hn::FirstN(df, static_cast<size_t>(n - i)), convert(x + i)), df, dst + i);
    return dst;
  }
#endif
  for (; i < n; ++i) dst[i] = static_cast<float>(static_cast<int32_t>(x[i]) - x_zp);
  return dst;
}

int64_t round_lanes(int64_t n) { return (n + kRowLanes - 1) / kRowLanes * kRowLanes; }

// The band's geometry: depthwise.h's, with rows long enough for whole vectors where the rows
// are written straight into them: center_row's (width stride 1), split_row's phases (stride 2:
// even input columns 2k go to phase pb % 2 at index pb / 2 + k, odd ones to the other phase at
// (pb + 1) / 2 + k, pb the left padding).
DwGeom qdw_geom(const Window3& w) {
  DwGeom g = depthwise_geom(w);
  const int64_t iw = w.in[2], pb = w.pb[2];
  if (g.s2 == 1) g.wq = std::max(g.wq, pb + round_lanes(iw));
  // split_row's last vectors start below (iw + 1) / 2 in both phases.
  if (g.s2 == 2) g.wq = std::max(g.wq, (pb + 1) / 2 + round_lanes((iw + 1) / 2));
  return g;
}

// Input row x (n values) centered into the two phases of a width stride 2 (qdw_geom): even
// columns to `even`, odd ones to `odd`, in one pass (whole vectors of kRowLanes outputs per
// phase, the last masked as center_row's, when the bytes lie before x_end).
template <typename T>
void split_row(const T* __restrict x, int64_t n, int32_t x_zp, const T* x_end, float* even, float* odd) {
  int64_t k = 0;  // pairs done: columns [0, 2k)
#if HWY_TARGET != HWY_SCALAR
  const Centered<T> convert(x_zp);
  const RowTag df;
  const int64_t nl = convert.lanes;
  for (; 2 * k < n && x + 2 * k + 2 * nl <= x_end; k += nl) {
    const auto lo = convert(x + 2 * k), hi = convert(x + 2 * k + nl);
    const auto ev = hn::ConcatEven(df, hi, lo), od = hn::ConcatOdd(df, hi, lo);
    if (2 * k + 2 * nl <= n) {
      hn::StoreU(ev, df, even + k);
      hn::StoreU(od, df, odd + k);
    } else {  // the last pairs: lanes past the row zeroed (the padding)
      hn::StoreU(hn::IfThenElseZero(hn::FirstN(df, static_cast<size_t>((n + 1) / 2 - k)), ev), df, even + k);
      hn::StoreU(hn::IfThenElseZero(hn::FirstN(df, static_cast<size_t>(n / 2 - k)), od), df, odd + k);
      return;
    }
  }
#endif
  for (int64_t c = 2 * k; c < n; ++c)
    (c % 2 ? odd : even)[c / 2] = static_cast<float>(static_cast<int32_t>(x[c]) - x_zp);
}

// depthwise.h's Store for the quantized output stage (qdepthwise.h): Q int32_t (the sums) or
// uint8_t / int8_t (requantized: requant-inl.h, as qgemm's output stage).
// kBiasInAcc: the sums started at the bias (exact: see run_plane), so acc is already acc + bias.
template <typename Q, bool kBiasInAcc = false>
struct QStore {
  Q* y;
  int64_t ow_n;
  int64_t end;  // elements of the plane y: a partial vector that ends before it is stored whole
                // (the rows after it, stored later, overwrite the excess)
  int32_t bias;
  float scale;
  int32_t zp;
  static constexpr float kLo = std::is_signed_v<Q> ? -128.0f : 0.0f, kHi = std::is_signed_v<Q> ? 127.0f : 255.0f;

  template <class D, class V>
  HWY_INLINE void vec(D d, V acc, int64_t r, int64_t ow, int64_t n) const {
    const auto lanes = static_cast<int64_t>(hn::Lanes(d));
    Q* at = y + r * ow_n + ow;
    alignas(64) Q tmp[kDwSlack];
    const bool whole = n == lanes || r * ow_n + ow + lanes <= end;
    Q* to = whole ? at : tmp;
    if constexpr (std::is_same_v<Q, int32_t>) {
      hn::StoreU(hn::ConvertTo(hn::RebindToSigned<D>(), acc), hn::RebindToSigned<D>(), to);  // exact integers
    } else {
      const hn::RebindToSigned<D> di;
      const auto sum = kBiasInAcc ? acc : hn::ConvertTo(d, hn::Add(hn::ConvertTo(di, acc), hn::Set(di, bias)));
      Requant<Q, D>(d, zp).store(hn::Mul(sum, hn::Set(d, scale)), to);
    }
    if (!whole) std::memcpy(at, tmp, static_cast<size_t>(n) * sizeof(Q));
  }
  HWY_INLINE void one(int64_t r, int64_t ow, float acc) const {
    Q& at = y[r * ow_n + ow];
    if constexpr (std::is_same_v<Q, int32_t>) {
      at = static_cast<int32_t>(acc);
    } else {
      const float sum = kBiasInAcc ? acc : static_cast<float>(static_cast<int32_t>(acc) + bias);
      float v = std::nearbyint(sum * scale) + static_cast<float>(zp);
      v = v > kLo ? v : kLo;
      v = v < kHi ? v : kHi;
      at = static_cast<Q>(static_cast<int32_t>(v));
    }
  }
};

template <typename T>
void prepare(const T* x, int64_t x_bytes, int32_t x_zp, const Window3& w, const DwGeom& g, float* band,
             float* row_buf) {
  const int64_t iw = w.in[2];
  const T* x_end = x + x_bytes;
  if (g.s2 == 2) {
    // depthwise_prepare_band_rows's layout (padded row r at r * 2 * wq, phase f at + f * wq),
    // each input row split straight from the bytes.
    std::fill_n(band, depthwise_band_size(w, g, 0, w.out[1]), 0.0f);
    const int64_t pb = w.pb[2], ih1 = std::min(w.in[1], depthwise_band_rows(w, 0, w.out[1]) - w.pb[1]);
    for (int64_t ih = 0; ih < ih1; ++ih) {
      float* row = band + (ih + w.pb[1]) * 2 * g.wq;
      split_row(x + ih * iw, iw, x_zp, x_end, row + (pb % 2) * g.wq + pb / 2, row + ((pb + 1) % 2) * g.wq + (pb + 1) / 2);
    }
    return;
  }
  depthwise_prepare_band_rows<float>(
      [&](int64_t ih, float* buf) { return center_row(x + ih * iw, iw, x_zp, x_end, buf); }, row_buf, w, g, 0,
      w.out[1], band);
}

template <typename Q>
void run_plane(const void* x, bool x_signed, int32_t x_zp, int64_t x_bytes, const float* wk, const Window3& w,
               const QDepthwiseStage& st, float* scratch, Q* y) {
  const DwGeom g = qdw_geom(w);
  float* band = scratch;
  float* row_buf = scratch + depthwise_band_size(w, g, 0, w.out[1]);
  if (x_signed) prepare(static_cast<const int8_t*>(x), x_bytes, x_zp, w, g, band, row_buf);
  else prepare(static_cast<const uint8_t*>(x), x_bytes, x_zp, w, g, band, row_buf);
  const int64_t end = w.out[1] * w.out[2];
  // Sums that start at the bias stay exact while |bias| + taps * 255 * 255 < 2^24 (qdepthwise.h),
  // which real biases meet: the output stage then skips the i32 round trip.
  const int64_t bias_room = (int64_t{1} << 24) - w.k_size() * 65025;
  const int32_t zp = st.zp;
  if (!std::is_same_v<Q, int32_t> && int64_t{st.bias} < bias_room && -int64_t{st.bias} < bias_room) {
    const QStore<Q, true> store{y, w.out[2], end, st.bias, st.scale, zp};
    depthwise_prepared_rows_to<float>(band, g, wk, static_cast<float>(st.bias), w, 0, w.out[1], store);
  } else {
    const QStore<Q> store{y, w.out[2], end, st.bias, st.scale, zp};
    depthwise_prepared_rows_to<float>(band, g, wk, 0.0f, w, 0, w.out[1], store);
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// ---- 3x3 windows on VNNI + VBMI (AVX-512): the taps on the u8 codes ----
// For 16 outputs of a row, each kernel row kh is one vpermb and one vpdpbusd: vpermb gathers lane
// j's 4 bytes (x[s*j], x[s*j + 1], x[s*j + 2], x[s*j + 3]) of the input row from one 64-byte
// masked load (s = 1 or 2: both strides alike, no phase split, no padded copy: the masked-off
// bytes, the padding, read as x_zp), and vpdpbusd adds their products with the weight quad
// (w[kh][0], w[kh][1], w[kh][2], 0) to the i32 sums: 3 vpdpbusd for 16 x 9 MACs, where the f32
// path converts the codes into a padded band and takes 9 FMAs, and a permuted input row serves
// every output row it feeds (vnni_row_group: 1.5 loads and vpermb per output row at stride 1,
// 2.5 at stride 2). MobileNetV2 q8: 24% less CPU time than the f32 path. Exact: the sums start at
// bias - x_zp * sum(w) (wrapping i32 arithmetic, as the f32 path's i32 sums and bias), the padding
// contributes (x_zp - x_zp) * w = 0, s8 inputs are shifted to u8 (x + 128, x_zp + 128), and the
// centered weights must fit in s8 (symmetric weights do). The output stage is the f32 path's:
// float(sum) * scale, requant-inl.h. Highway 1.0.3 has no op for vpdpbusd or vpermb and its AVX3
// target enables neither, hence the target attribute and the CPUID check.
#define TSR_QDW_VNNI_ATTR __attribute__((target(HWY_TARGET_STR ",avx512vnni,avx512vbmi")))

bool has_vnni_vbmi() {
  static const bool v = (__builtin_cpu_init(), __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vbmi"));
  return v && !qdw_detail::g_no_vnni.load(std::memory_order_relaxed);
}

bool vnni_window(const Window3& w) {
  return w.k[0] == 1 && w.out[0] == 1 && w.k[1] == 3 && w.k[2] == 3 && w.d[1] == 1 && w.d[2] == 1 &&
         w.s[1] == w.s[2] && (w.s[2] == 1 || w.s[2] == 2) && w.out[2] <= 16 * 64;
}

// The output stage's Requant for Q (u8 for the i32 sums, which do not use it).
template <typename Q>
using VnniRequant = Requant<std::conditional_t<std::is_same_v<Q, int32_t>, uint8_t, Q>, hn::Full512<float>>;

// Output rows [oh, oh + R) of plane x (T: u8, or s8 read as u8 by flipping the sign bit), stride
// S: each input row they read is loaded and permuted once per block of 16 outputs and feeds
// every output row whose window holds it (a row of a stride-1 conv feeds three), then each row's
// sums (from init) go through Q's stage (int32_t: the sums themselves).
template <int R, int S, typename T, typename Q>
TSR_QDW_VNNI_ATTR HWY_INLINE void vnni_row_group(const T* x, int64_t oh, const Window3& w, const __m512i* wv,
                                                 __m512i vinit, const __mmask64* mask, __m512i idx, __m512i zpv,
                                                 __m512i flip, const VnniRequant<Q>* rq,
                                                 __m512 vscale, Q* y) {
  constexpr int kIn = (R - 1) * S + 3;  // input rows read
  const int64_t ow_n = w.out[2], ih_n = w.in[1], iw = w.in[2];
  // Address of padded column 0 of each input row read (0: a padding row), as an integer: it may
  // lie before x, whose bytes there the masks never load.
  uintptr_t rows[kIn];
  for (int i = 0; i < kIn; ++i) {
    const int64_t ih = oh * S + i - w.pb[1];
    rows[i] = ih >= 0 && ih < ih_n ? reinterpret_cast<uintptr_t>(x + ih * iw) - static_cast<uintptr_t>(w.pb[2]) : 0;
  }
  const __m512i pad = _mm512_permutexvar_epi8(idx, _mm512_xor_si512(zpv, flip));
  for (int64_t ow = 0, b = 0; ow < ow_n; ow += 16, ++b) {
    __m512i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = vinit;
    for (int i = 0; i < kIn; ++i) {
      __m512i v = pad;
      if (rows[i]) {
        v = _mm512_mask_loadu_epi8(zpv, mask[b], reinterpret_cast<const void*>(rows[i] + static_cast<uintptr_t>(S * ow)));
        if constexpr (std::is_signed_v<T>) v = _mm512_xor_si512(v, flip);
        v = _mm512_permutexvar_epi8(idx, v);
      }
      for (int r = 0; r < R; ++r) {
        const int kh = i - r * S;  // input row i is kernel row kh of output row oh + r
        if (kh >= 0 && kh < 3) acc[r] = _mm512_dpbusd_epi32(acc[r], v, wv[kh]);
      }
    }
    const bool whole = ow_n - ow >= 16;
    const __mmask16 keep = static_cast<__mmask16>(whole ? 0xFFFF : (1u << (ow_n - ow)) - 1);
    for (int r = 0; r < R; ++r) {
      Q* out = y + (oh + r) * ow_n + ow;
      if constexpr (std::is_same_v<Q, int32_t>) {
        _mm512_mask_storeu_epi32(out, keep, acc[r]);
      } else {
        const __m512i bits = rq->wide_codes(hn::Vec512<float>{_mm512_mul_ps(_mm512_cvtepi32_ps(acc[r]), vscale)}).raw;
        if (whole) _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(bits));
        else _mm512_mask_cvtepi32_storeu_epi8(out, keep, bits);
      }
    }
  }
}

// One plane's input, centered weights and output for the VNNI forms: the weight quads of each
// kernel row (w[kh][0..2], 0 as s8 bytes), the sums' start (bias - zpu * sum(w)) and the scale.
struct VnniPlane {
  const void* x;
  int32_t wq[3];
  int32_t init;
  float scale;
  void* y;
};

// Whole planes: groups of 4 output rows (stride 1: 6 input rows for 4 outputs) or 2 (stride 2: 5
// for 2), then single rows. What the window fixes (indexes, masks, the output stage's zero
// point) is set up once for all the planes.
template <typename T, typename Q>
TSR_QDW_VNNI_ATTR void vnni_rows(const VnniPlane* planes, int64_t n_planes, int32_t x_zp, const Window3& w,
                                 int32_t y_zp) {
  const int64_t s = w.s[2], ow_n = w.out[2], oh_n = w.out[1], iw = w.in[2], pl = w.pb[2];
  alignas(64) uint8_t idx_bytes[64] = {};
  for (int j = 0; j < 16; ++j)
    for (int t = 0; t < 4; ++t) idx_bytes[4 * j + t] = static_cast<uint8_t>(s * j + t);
  const __m512i idx = _mm512_load_si512(idx_bytes);
  // Block b (outputs 16b..16b+15) loads bytes [s*16b - pl, + 64) of an input row: those inside
  // [0, iw) by its mask, x_zp for the rest (the padding).
  const __m512i zpv = _mm512_set1_epi8(static_cast<char>(x_zp));
  const __m512i flip = _mm512_set1_epi8(std::is_signed_v<T> ? static_cast<char>(0x80) : 0);
  const int64_t blocks = (ow_n + 15) / 16;
  __mmask64 mask[64];
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t c0 = s * 16 * b - pl;  // input column of byte 0
    const int64_t lo = std::clamp<int64_t>(-c0, 0, 64), hi = std::clamp<int64_t>(iw - c0, 0, 64);
    const uint64_t below_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
    const uint64_t below_lo = lo >= 64 ? ~uint64_t{0} : (uint64_t{1} << lo) - 1;
    mask[b] = static_cast<__mmask64>(hi > lo ? below_hi & ~below_lo : 0);
  }
  std::optional<VnniRequant<Q>> rq;
  if constexpr (!std::is_same_v<Q, int32_t>) rq.emplace(hn::Full512<float>(), y_zp);
  const auto* rqp = rq ? &*rq : nullptr;
  for (int64_t p = 0; p < n_planes; ++p) {
    const VnniPlane& pd = planes[p];
    const T* x = static_cast<const T*>(pd.x);
    Q* y = static_cast<Q*>(pd.y);
    const __m512i wv[3] = {_mm512_set1_epi32(pd.wq[0]), _mm512_set1_epi32(pd.wq[1]), _mm512_set1_epi32(pd.wq[2])};
    const __m512i vinit = _mm512_set1_epi32(pd.init);
    const __m512 vscale = _mm512_set1_ps(pd.scale);
    int64_t oh = 0;
    if (s == 1) {
      for (; oh + 4 <= oh_n; oh += 4) vnni_row_group<4, 1>(x, oh, w, wv, vinit, mask, idx, zpv, flip, rqp, vscale, y);
      for (; oh < oh_n; ++oh) vnni_row_group<1, 1>(x, oh, w, wv, vinit, mask, idx, zpv, flip, rqp, vscale, y);
    } else {
      for (; oh + 2 <= oh_n; oh += 2) vnni_row_group<2, 2>(x, oh, w, wv, vinit, mask, idx, zpv, flip, rqp, vscale, y);
      for (; oh < oh_n; ++oh) vnni_row_group<1, 2>(x, oh, w, wv, vinit, mask, idx, zpv, flip, rqp, vscale, y);
    }
  }
}

// ---- "Same" 3x3 windows at stride 1 (padding 1 on every side) on narrow maps: the plane as one
// flat run ----
// Output o = oh * W + ow reads input o + (kh - 1) * W + (kw - 1) for tap (kh, kw), so 16
// consecutive outputs of the flat plane (across row ends) read the 2W + 18 bytes from o - W - 1:
// one masked load (bytes outside the plane, the top and bottom padding, read as x_zp) where
// 2W + 18 <= 64, then per kernel row kh one vpermb (lane j gets bytes kh * W + j, + 1, + 2; the
// same indexes for every block), merged with x_zp in the lanes whose tap lies in the left or right
// padding (a mask per block, by the column of its first output), and one vpdpbusd. Every lane
// carries an output, where the row form leaves the lanes past each row's end idle (9 of 16 on
// MobileNetV2's 7x7 maps, 2 of 16 on its 14x14 ones), and every input byte is loaded once per
// block. Same sums and output stage as the row form. Wider maps take the row form, which loads
// fewer bytes per output there.
constexpr int64_t kFlatMaxW = 23;  // 2 * 23 + 18 = 64

bool flat_window(const Window3& w) {
  return w.s[1] == 1 && w.s[2] == 1 && w.pb[1] == 1 && w.pb[2] == 1 && w.pe[1] == 1 && w.pe[2] == 1 &&
         w.in[2] <= kFlatMaxW && w.out[1] == w.in[1] && w.out[2] == w.in[2];
}

// The kept (not padding) bytes of a block whose first output lies in column c0 of a width-iw
// plane: all but byte 4j of lane j (tap column -1) where the lane's column is 0 and byte 4j + 2
// (column + 1) where it is iw - 1. (Byte 4j + 3 meets weight 0.) comb: bit 0 of lanes 0, iw,
// 2 iw, ... (flat_comb).
uint64_t flat_comb(int64_t iw) {
  uint64_t m = 0;
  for (int64_t j = 0; j < 16; j += iw) m |= uint64_t{1} << (4 * j);
  return m;
}
HWY_INLINE uint64_t flat_keep_mask(int64_t c0, int64_t iw, uint64_t comb) {
  const int64_t j0 = c0 == 0 ? 0 : iw - c0;       // the first lane in column 0
  const int64_t j1 = j0 == 0 ? iw - 1 : j0 - 1;   // the first lane in column iw - 1
  const uint64_t left = j0 < 16 ? comb << (4 * j0) : 0, right = j1 < 16 ? comb << (4 * j1 + 2) : 0;
  return ~(left | right);
}

template <typename T, typename Q>
TSR_QDW_VNNI_ATTR void vnni_flat(const VnniPlane* planes, int64_t n_planes, int32_t x_zp, const Window3& w,
                                 int32_t y_zp) {
  const int64_t iw = w.in[2], n = w.in[1] * iw, span = 2 * iw + 18;
  const uint64_t comb = flat_comb(iw);
  // Lane j of kernel row kh: bytes kh * iw + j + (0, 1, 2, 2) (the last meets weight 0).
  const __m512i idx0 = _mm512_set_epi32(0x1111100F, 0x10100F0E, 0x0F0F0E0D, 0x0E0E0D0C, 0x0D0D0C0B, 0x0C0C0B0A,
                                        0x0B0B0A09, 0x0A0A0908, 0x09090807, 0x08080706, 0x07070605, 0x06060504,
                                        0x05050403, 0x04040302, 0x03030201, 0x02020100);
  const __m512i idx[3] = {idx0, _mm512_add_epi8(idx0, _mm512_set1_epi8(static_cast<char>(iw))),
                          _mm512_add_epi8(idx0, _mm512_set1_epi8(static_cast<char>(2 * iw)))};
  const __m512i zpv = _mm512_set1_epi8(static_cast<char>(x_zp));
  const __m512i flip = _mm512_set1_epi8(std::is_signed_v<T> ? static_cast<char>(0x80) : 0);
  const __m512i zpu = _mm512_xor_si512(zpv, flip);
  std::optional<VnniRequant<Q>> rq;
  if constexpr (!std::is_same_v<Q, int32_t>) rq.emplace(hn::Full512<float>(), y_zp);
  const uint64_t span_bits = ~uint64_t{0} >> (64 - span);
  const int64_t step = 16 % iw;  // the next block's first column: c0 + step, wrapped
  for (int64_t p = 0; p < n_planes; ++p) {
    const VnniPlane& pd = planes[p];
    Q* y = static_cast<Q*>(pd.y);
    const __m512i wv[3] = {_mm512_set1_epi32(pd.wq[0]), _mm512_set1_epi32(pd.wq[1]), _mm512_set1_epi32(pd.wq[2])};
    const __m512i vinit = _mm512_set1_epi32(pd.init);
    const __m512 vscale = _mm512_set1_ps(pd.scale);
    const uintptr_t x0 = reinterpret_cast<uintptr_t>(pd.x);
    for (int64_t o = 0, c0 = 0; o < n; o += 16, c0 = c0 + step >= iw ? c0 + step - iw : c0 + step) {
      const __mmask64 keep = flat_keep_mask(c0, iw, comb);
      const int64_t base = o - iw - 1;  // input byte of lane 0's first tap in kernel row 0
      // Bytes [base, base + span) inside [0, n).
      uint64_t in = span_bits;
      if (base < 0) in &= ~uint64_t{0} << -base;  // -base <= iw + 1 < 64
      if (n - base < span) in &= n - base > 0 ? (uint64_t{1} << (n - base)) - 1 : 0;
      __m512i v = _mm512_mask_loadu_epi8(zpv, in, reinterpret_cast<const void*>(x0 + static_cast<uintptr_t>(base)));
      if constexpr (std::is_signed_v<T>) v = _mm512_xor_si512(v, flip);
      __m512i acc = _mm512_dpbusd_epi32(vinit, _mm512_mask_permutexvar_epi8(zpu, keep, idx[0], v), wv[0]);
      acc = _mm512_dpbusd_epi32(acc, _mm512_mask_permutexvar_epi8(zpu, keep, idx[1], v), wv[1]);
      acc = _mm512_dpbusd_epi32(acc, _mm512_mask_permutexvar_epi8(zpu, keep, idx[2], v), wv[2]);
      const bool whole = n - o >= 16;
      const __mmask16 store = static_cast<__mmask16>(whole ? 0xFFFF : (1u << (n - o)) - 1);
      Q* out = y + o;
      if constexpr (std::is_same_v<Q, int32_t>) {
        _mm512_mask_storeu_epi32(out, store, acc);
      } else {
        const __m512i bits = rq->wide_codes(hn::Vec512<float>{_mm512_mul_ps(_mm512_cvtepi32_ps(acc), vscale)}).raw;
        if (whole) _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(bits));
        else _mm512_mask_cvtepi32_storeu_epi8(out, store, bits);
      }
    }
  }
}

template <typename T, typename Q>
void vnni_any(const VnniPlane* planes, int64_t n, int32_t x_zp, const Window3& w, int32_t y_zp) {
  if (flat_window(w)) return vnni_flat<T, Q>(planes, n, x_zp, w, y_zp);
  vnni_rows<T, Q>(planes, n, x_zp, w, y_zp);
}

template <typename T>
void vnni_stage(const VnniPlane* planes, int64_t n, int32_t x_zp, const Window3& w, QDepthwiseStage::Kind kind,
                int32_t y_zp) {
  switch (kind) {
    case QDepthwiseStage::kInt32: return vnni_any<T, int32_t>(planes, n, x_zp, w, y_zp);
    case QDepthwiseStage::kU8: return vnni_any<T, uint8_t>(planes, n, x_zp, w, y_zp);
    case QDepthwiseStage::kS8: return vnni_any<T, int8_t>(planes, n, x_zp, w, y_zp);
  }
}

void vnni_run(const VnniPlane* planes, int64_t n, bool x_signed, int32_t x_zp, const Window3& w,
              QDepthwiseStage::Kind kind, int32_t y_zp) {
  if (x_signed) vnni_stage<int8_t>(planes, n, x_zp, w, kind, y_zp);
  else vnni_stage<uint8_t>(planes, n, x_zp, w, kind, y_zp);
}

// Whether the CPU and the window take the VNNI forms (the weights must fit too: vnni_weights).
bool vnni_ok(const Window3& w) { return vnni_window(w) && has_vnni_vbmi(); }

// The sums' start: bias - zpu * sum(w) with zpu the zero point as a u8 code, wrapping as i32 sums
// do (kInt32: no bias).
int32_t vnni_init(bool x_signed, int32_t x_zp, QDepthwiseStage::Kind kind, int32_t bias, int32_t wsum) {
  const int32_t zpu = x_signed ? x_zp + 128 : x_zp;
  const uint32_t base = kind == QDepthwiseStage::kInt32 ? 0u : static_cast<uint32_t>(bias);
  return static_cast<int32_t>(base - static_cast<uint32_t>(zpu) * static_cast<uint32_t>(wsum));
}

// The centered weights c[kh * 3 + kw] as a VnniPlane's quads and start (stage: bias, or none for
// i32 sums); false where one does not fit in s8.
template <typename C>
bool vnni_weights(const C* c, bool x_signed, int32_t x_zp, QDepthwiseStage::Kind kind, int32_t bias, VnniPlane* p) {
  int32_t wsum = 0;
  for (int kh = 0; kh < 3; ++kh) {
    uint32_t q = 0;
    for (int kw = 0; kw < 3; ++kw) {
      const C v = c[kh * 3 + kw];
      if (!(v >= C(-128) && v <= C(127))) return false;
      const auto ci = static_cast<int32_t>(v);
      if (static_cast<C>(ci) != v) return false;  // not an integer (f32 weights)
      wsum += ci;
      q |= static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(ci))) << (8 * kw);
    }
    p->wq[kh] = static_cast<int32_t>(q);
  }
  p->init = vnni_init(x_signed, x_zp, kind, bias, wsum);
  return true;
}

// The plane on VNNI when the CPU, the window and the weights allow (see above); false otherwise.
bool vnni_plane(const void* x, bool x_signed, int32_t x_zp, const float* wk, const Window3& w,
                const QDepthwiseStage& st, void* y) {
  if (!vnni_ok(w)) return false;
  VnniPlane p{x, {0, 0, 0}, 0, st.scale, y};
  if (!vnni_weights(wk, x_signed, x_zp, st.kind, st.bias, &p)) return false;
  vnni_run(&p, 1, x_signed, x_zp, w, st.kind, st.zp);
  return true;
}
#endif

void qdepthwise_plane_impl(const void* x, bool x_signed, int32_t x_zp, int64_t x_bytes, const float* wk,
                           const Window3& w, const QDepthwiseStage& st, float* scratch, void* y) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if (vnni_plane(x, x_signed, x_zp, wk, w, st, y)) return;
#endif
  switch (st.kind) {
    case QDepthwiseStage::kInt32:
      return run_plane(x, x_signed, x_zp, x_bytes, wk, w, st, scratch, static_cast<int32_t*>(y));
    case QDepthwiseStage::kU8:
      return run_plane(x, x_signed, x_zp, x_bytes, wk, w, st, scratch, static_cast<uint8_t*>(y));
    case QDepthwiseStage::kS8:
      return run_plane(x, x_signed, x_zp, x_bytes, wk, w, st, scratch, static_cast<int8_t*>(y));
  }
}

// qdepthwise_planes for this target: the VNNI forms take the planes whose weights fit in batches
// (one setup of the window per batch); the rest go one by one through qdepthwise_plane_impl.
void qdepthwise_planes_impl(const QDepthwiseBatch& b, const Window3& w, int64_t r0, int64_t r1, float* scratch,
                            float* wk) {
  const int64_t taps = w.k_size(), plane = w.in[1] * w.in[2], pixels = w.out[1] * w.out[2];
  const int64_t out_bytes = b.kind == QDepthwiseStage::kInt32 ? 4 : 1;
  const auto* xb = static_cast<const uint8_t*>(b.x);
  auto* yb = static_cast<char*>(b.y);
  auto code = [](const void* p, bool is_signed, int64_t i) -> int32_t {
    return is_signed ? static_cast<const int8_t*>(p)[i] : static_cast<const uint8_t*>(p)[i];
  };
  auto w_zero = [&](int64_t ch) { return b.w_zp ? code(b.w_zp, b.w_signed, b.w_zp_per_channel ? ch : 0) : 0; };
  auto stage_of = [&](int64_t ch) {
    QDepthwiseStage st;
    st.kind = b.kind;
    st.zp = b.y_zp;
    if (b.kind != QDepthwiseStage::kInt32) {
      st.bias = b.bias ? b.bias[ch] : 0;
      st.scale = b.scale[ch];
    }
    return st;
  };
  auto one = [&](int64_t r, int64_t ch) {  // the plane on its own (the weights as f32 in wk)
    const int32_t wz = w_zero(ch);
    for (int64_t t = 0; t < taps; ++t) wk[t] = static_cast<float>(code(b.w, b.w_signed, ch * taps + t) - wz);
    qdepthwise_plane_impl(xb + r * plane, b.x_signed, b.x_zp, b.x_bytes - r * plane, wk, w, stage_of(ch), scratch,
                          yb + r * pixels * out_bytes);
  };
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if (vnni_ok(w)) {  // taps == 9
    constexpr int64_t kBatch = 32;
    VnniPlane ps[kBatch];
    int64_t n = 0;
    // The channel counted along (no division per plane).
    for (int64_t r = r0, ch = r0 % b.channels; r < r1; ++r, ch = ch + 1 == b.channels ? 0 : ch + 1) {
      const QDepthwiseStage st = stage_of(ch);
      VnniPlane& p = ps[n];
      p.x = xb + r * plane;
      p.scale = st.scale;
      p.y = yb + r * pixels * out_bytes;
      if (b.packed3x3) {  // the weights packed once (qdepthwise_pack_3x3)
        const int32_t* q = b.packed3x3 + 4 * ch;
        p.wq[0] = q[0];
        p.wq[1] = q[1];
        p.wq[2] = q[2];
        p.init = vnni_init(b.x_signed, b.x_zp, b.kind, st.bias, q[3]);
        if (++n == kBatch) {
          vnni_run(ps, n, b.x_signed, b.x_zp, w, b.kind, b.y_zp);
          n = 0;
        }
        continue;
      }
      const int32_t wz = w_zero(ch);
      int32_t c[9];
      if (b.w_signed) {
        const int8_t* wc = static_cast<const int8_t*>(b.w) + ch * 9;
        for (int t = 0; t < 9; ++t) c[t] = wc[t] - wz;
      } else {
        const uint8_t* wc = static_cast<const uint8_t*>(b.w) + ch * 9;
        for (int t = 0; t < 9; ++t) c[t] = wc[t] - wz;
      }
      if (!vnni_weights(c, b.x_signed, b.x_zp, b.kind, st.bias, &p)) {
        one(r, ch);
        continue;
      }
      if (++n == kBatch) {
        vnni_run(ps, n, b.x_signed, b.x_zp, w, b.kind, b.y_zp);
        n = 0;
      }
    }
    if (n > 0) vnni_run(ps, n, b.x_signed, b.x_zp, w, b.kind, b.y_zp);
    return;
  }
#endif
  for (int64_t r = r0; r < r1; ++r) one(r, r % b.channels);
}

// qdepthwise_scratch_floats for this target.
int64_t qdepthwise_scratch_floats_impl(const Window3& w) {
  const DwGeom g = qdw_geom(w);
  // The band, then one input row (+ slack) for the phase split of a width stride > 1.
  return depthwise_band_size(w, g, 0, w.out[1]) + w.in[2] + kDwSlack;
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(qdepthwise_plane_impl);
HWY_EXPORT(qdepthwise_planes_impl);
HWY_EXPORT(qdepthwise_scratch_floats_impl);

std::atomic<bool> qdw_detail::g_no_vnni{false};

void qdepthwise_disable_vnni_for_test(bool disable) { qdw_detail::g_no_vnni.store(disable); }

int64_t qdepthwise_scratch_floats(const Window3& w) { return HWY_DYNAMIC_DISPATCH(qdepthwise_scratch_floats_impl)(w); }

std::vector<int32_t> qdepthwise_pack_3x3(const void* w, bool w_signed, const void* w_zp, bool w_zp_per_channel,
                                         int64_t channels) {
  auto code = [](const void* p, bool is_signed, int64_t i) -> int32_t {
    return is_signed ? static_cast<const int8_t*>(p)[i] : static_cast<const uint8_t*>(p)[i];
  };
  std::vector<int32_t> out(static_cast<size_t>(4 * channels));
  for (int64_t ch = 0; ch < channels; ++ch) {
    const int32_t wz = w_zp ? code(w_zp, w_signed, w_zp_per_channel ? ch : 0) : 0;
    int32_t sum = 0;
    for (int kh = 0; kh < 3; ++kh) {
      uint32_t q = 0;
      for (int kw = 0; kw < 3; ++kw) {
        const int32_t c = code(w, w_signed, ch * 9 + kh * 3 + kw) - wz;
        if (c < -128 || c > 127) return {};
        sum += c;
        q |= static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(c))) << (8 * kw);
      }
      out[static_cast<size_t>(4 * ch + kh)] = static_cast<int32_t>(q);
    }
    out[static_cast<size_t>(4 * ch + 3)] = sum;
  }
  return out;
}

void qdepthwise_plane(const void* x, bool x_signed, int32_t x_zp, int64_t x_bytes, const float* wk, const Window3& w,
                      const QDepthwiseStage& stage, float* scratch, void* y) {
  HWY_DYNAMIC_DISPATCH(qdepthwise_plane_impl)(x, x_signed, x_zp, x_bytes, wk, w, stage, scratch, y);
}

void qdepthwise_planes(const QDepthwiseBatch& batch, const Window3& w, int64_t r0, int64_t r1, float* scratch,
                       float* wk) {
  HWY_DYNAMIC_DISPATCH(qdepthwise_planes_impl)(batch, w, r0, r1, scratch, wk);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
