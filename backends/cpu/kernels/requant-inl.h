// The requantizing output stage of the int8 kernels (qgemm.cpp, qdepthwise.cpp) a vector at a
// time: for v = float(acc + bias) * scale, the u8/s8 code saturate(nearbyint(v) + zp) as a vector
// of bytes. The same value as the scalar formula (see below), in 6 operations where Highway's
// Round + ConvertTo + DemoteTo take 12 on AVX-512 (a conv's output stage cost as much as its
// GEMM or its depthwise taps).
//
// Why it is the same: lo - zp and hi - zp (lo, hi: the type's range) are integers, and rounding
// is monotone and fixes integers, so nearbyint(clamp(v, lo - zp, hi - zp)) =
// clamp(nearbyint(v), lo - zp, hi - zp); adding zp then gives clamp(nearbyint(v) + zp, lo, hi).
// The clamped value c has |c| <= 383, so c + 1.5 * 2^23 lies in [2^23, 2^24), where floats are
// the integers: the addition rounds c to the nearest integer, ties to even (1.5 * 2^23 is even, so
// the tie goes where nearbyint's does), and the float's low mantissa bits are that integer plus
// 2^22 (low byte 0). Adding zp to the bits and keeping the low byte gives the code, u8 or s8
// (two's complement). NaN: Max(NaN, lo - zp) is lo - zp, as the scalar clamp gives lo. Like
// nearbyint it relies on the default rounding mode, and on IEEE arithmetic (no -ffast-math, which
// could fold the addition of 1.5 * 2^23 away).
//
// A Highway "-inl" header (per-target include guard toggled by hwy/foreach_target.h), like
// depthwise.h.
#include <cstdint>
#include <type_traits>

#if defined(TSR_CPU_REQUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_REQUANT_INL_H_
#undef TSR_CPU_REQUANT_INL_H_
#else
#define TSR_CPU_REQUANT_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

// Codes of type Q (uint8_t or int8_t) with output zero point zp, for float vectors of tag DF.
template <typename Q, class DF>
struct Requant {
  static_assert(std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int8_t>, "u8 or s8 codes");
  using DI = hwy::HWY_NAMESPACE::RebindToSigned<DF>;
  using DU = hwy::HWY_NAMESPACE::RebindToUnsigned<DF>;
  using D8 = hwy::HWY_NAMESPACE::Rebind<uint8_t, DF>;
  hwy::HWY_NAMESPACE::Vec<DF> lo, hi, magic;
  hwy::HWY_NAMESPACE::Vec<DI> zp;

  Requant(DF df, int32_t out_zp) {
    namespace hn = hwy::HWY_NAMESPACE;
    constexpr float kLo = std::is_signed_v<Q> ? -128.0f : 0.0f, kHi = std::is_signed_v<Q> ? 127.0f : 255.0f;
    lo = hn::Set(df, kLo - static_cast<float>(out_zp));
    hi = hn::Set(df, kHi - static_cast<float>(out_zp));
    magic = hn::Set(df, 12582912.0f);  // 1.5 * 2^23
    zp = hn::Set(DI(), out_zp);
  }

  // The codes of v (before rounding) in the low byte of each 32-bit lane (the other bytes are
  // not zero): for a caller with a narrowing store of its own (AVX-512's vpmovdb).
  HWY_INLINE hwy::HWY_NAMESPACE::Vec<DU> wide_codes(hwy::HWY_NAMESPACE::Vec<DF> v) const {
    namespace hn = hwy::HWY_NAMESPACE;
    const auto t = hn::Add(hn::Min(hn::Max(v, lo), hi), magic);
    return hn::BitCast(DU(), hn::Add(hn::BitCast(DI(), t), zp));
  }
  // The codes of v (before rounding), one byte per lane.
  HWY_INLINE hwy::HWY_NAMESPACE::Vec<D8> codes(hwy::HWY_NAMESPACE::Vec<DF> v) const {
    return hwy::HWY_NAMESPACE::TruncateTo(D8(), wide_codes(v));
  }

  // codes(v) to out[0, Lanes).
  HWY_INLINE void store(hwy::HWY_NAMESPACE::Vec<DF> v, Q* out) const {
    hwy::HWY_NAMESPACE::StoreU(codes(v), D8(), reinterpret_cast<uint8_t*>(out));
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // TSR_CPU_REQUANT_INL_H_
