// qgemm micro-kernels (qgemm.h, driven by qgemm.cpp): one R x kNR tile of exact i32 sums
// acc[r][c] = sum_k A[r][k] * B[k][c] per SIMD path, from packed operands:
//   B: per panel of kNR columns, K in quads: panel[q][c][t] = B[4q + t][c] (s8, zero padded past K
//      and N), i.e. each column's 4 consecutive k values fill one 32-bit lane: the operand layout
//      of vpdpbusd and sdot, and read as i16 k-pairs by the widening paths.
//   A: per panel of R rows: pa[q][r][t] = A[r][4q + t], encoded per path (kAEnc): u8 as is (VNNI,
//      scalar), u8 - 128 as s8 (sdot, s8 x s8: the driver adds 128 * col_sum back) or u8 widened
//      to u16 (the vpmaddwd / vmlal / i32x4.dot paths).
// The tile is stored row-major with row stride kNR; the driver applies zero points and the output
// stage. Every path is exact: no product or partial sum saturates (see each path).
//
// A Highway "-inl" header (per-target include guard toggled by hwy/foreach_target.h), included by
// qgemm.cpp only. Intrinsics are used where Highway 1.0.3 has no op (vpdpbusd, vpmaddwd, sdot,
// vmlal_lane, i32x4.dot_i16x8); they are reached only from the matching HWY_TARGET's code and, for
// VNNI / dotprod, after a runtime CPU check.
#if defined(TSR_CPU_QGEMM_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_QGEMM_KERNELS_INL_H_
#undef TSR_CPU_QGEMM_KERNELS_INL_H_
#else
#define TSR_CPU_QGEMM_KERNELS_INL_H_
#endif

#include <hwy/highway.h>

#include "backends/cpu/kernels/requant-inl.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#if HWY_TARGET == HWY_NEON && HWY_ARCH_ARM_A64
#include <arm_neon.h>
#endif

#ifndef TSR_QGEMM_ONCE_
#define TSR_QGEMM_ONCE_
#if defined(__clang__)
#define TSR_QGEMM_UNROLL _Pragma("unroll")
#else
#define TSR_QGEMM_UNROLL _Pragma("GCC unroll 32")
#endif
namespace tsr::cpu::qgemm_detail {
// How a path's packed A holds each u8 value.
enum AEnc { kAU8 = 0, kAS8 = 1, kAU16 = 2 };
using TileFn = void (*)(int64_t kq, const uint8_t* pa, const int8_t* pb, int32_t* tile);
// A tile whose u8 A rows are read in place (qgemm_gather): row r's run s (run_quads k-quads) at
// a + off[r * runs + s], or at `pad` where that offset is negative; no packed panel.
using GatherTileFn = void (*)(int64_t runs, int64_t run_quads, const uint8_t* a, const uint8_t* pad,
                              const int32_t* off, const int8_t* pb, int32_t* tile);
// The requantizing output stage of a gather tile fused into it (GatherQuantTileFn): row r's
// columns [0, cols) of the panel leave as codes saturate(nearbyint(float(acc + fix[c]) * scale[c])
// + zp) (scale null: `uniform` for every column) at out + r * row_bytes, the arithmetic and
// rounding of qgemm.cpp's quant_rows_full (requant-inl.h), straight from the accumulators.
struct GatherQuant {
  const int32_t* fix;   // the panel's column terms (bias, zero points), cols of them
  const float* scale;   // the panel's column scales, or null
  float uniform;        // the scale of every column where `scale` is null
  int32_t zp;           // the output zero point
  int64_t cols;         // columns of the panel to write (1..kNR)
  uint8_t* out;         // row 0's first code (u8 or s8)
  int64_t row_bytes;    // bytes between rows of `out`
};
using GatherQuantTileFn = void (*)(int64_t runs, int64_t run_quads, const uint8_t* a, const uint8_t* pad,
                                   const int32_t* off, const int8_t* pb, const GatherQuant& q);
inline int32_t load_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline int64_t load_i64(const void* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
}  // namespace tsr::cpu::qgemm_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace qk {

using qgemm_detail::load_i32;
using qgemm_detail::load_i64;
using qgemm_detail::GatherQuant;
using qgemm_detail::GatherQuantTileFn;
using qgemm_detail::GatherTileFn;
using qgemm_detail::TileFn;

// A path: the packed-A encoding, rows per A panel (kMR), whether the sums are of (a - 128) * b
// (sdot), its name and the tile functions for 1..kMR rows.
struct Path {
  int a_enc;
  int64_t mr;
  bool minus128;
  const char* name;
  const TileFn* tiles;  // tiles[r - 1]: r rows
  const GatherTileFn* gather_tiles = nullptr;  // the same reading a gathered u8 A in place, or none
  // gather_tiles with the requantizing output stage fused: [out_signed * mr + r - 1], or none.
  const GatherQuantTileFn* gather_quant_tiles = nullptr;
};

template <template <int> class K, int... I>
constexpr std::array<TileFn, sizeof...(I)> tile_table(std::integer_sequence<int, I...>) {
  return {&K<I + 1>::run...};
}
template <template <int> class K, int... I>
constexpr std::array<GatherTileFn, sizeof...(I)> gather_tile_table(std::integer_sequence<int, I...>) {
  return {&K<I + 1>::run...};
}
template <template <int, typename> class K, int... I>
constexpr std::array<GatherQuantTileFn, 2 * sizeof...(I)> gather_quant_tile_table(std::integer_sequence<int, I...>) {
  return {&K<I + 1, uint8_t>::run..., &K<I + 1, int8_t>::run...};
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// ---- AVX-512: 32 columns per panel (two zmm of k-quads). ----
constexpr int64_t kNR = 32;

// VNNI: vpdpbusd multiplies u8 x s8 by 4-byte groups and adds the four products to an i32 lane
// without saturation (dpbusd, not dpbusds): one instruction per 64 MACs, exact (|sum| < 2^31 for
// K < 2^15). Highway 1.0.3 has no op for it and its AVX3 target does not enable avx512vnni, so
// the kernel is compiled with its own target attribute and called only after a cached CPUID check
// (qgemm.cpp). 12 rows x 2 zmm = 24 accumulators + 2 B vectors + 1 broadcast of 32 registers.
#define TSR_QGEMM_VNNI_ATTR \
  __attribute__((target("avx,avx2,bmi,bmi2,fma,f16c,avx512f,avx512vl,avx512dq,avx512bw,avx512vnni")))
constexpr int64_t kVnniMR = 12;
template <int R>
struct VnniTile {
  TSR_QGEMM_VNNI_ATTR static void run(int64_t kq, const uint8_t* pa, const int8_t* pb, int32_t* tile) {
    // vpdpbusd has a latency of 5 and two ports: 1-3 rows (decode steps) have too few chains, so
    // consecutive quads go to S accumulator sets (M = 1 and 2 ran 1.7-2x faster with 4 sets than
    // with 2; 4 rows ran slower with 2 sets than with 1).
    constexpr int S = R <= 2 ? 4 : (R < 4 ? 2 : 1);
    __m512i acc[S][R][2];
    TSR_QGEMM_UNROLL for (int s = 0; s < S; ++s) TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
      acc[s][r][0] = _mm512_setzero_si512();
      acc[s][r][1] = _mm512_setzero_si512();
    }
    int64_t q = 0;
    for (; q + S <= kq; q += S) {
      TSR_QGEMM_UNROLL for (int s = 0; s < S; ++s) {
        const __m512i b0 = _mm512_loadu_si512(pb), b1 = _mm512_loadu_si512(pb + 64);
        TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
          const __m512i a = _mm512_set1_epi32(load_i32(pa + 4 * r));
          acc[s][r][0] = _mm512_dpbusd_epi32(acc[s][r][0], a, b0);
          acc[s][r][1] = _mm512_dpbusd_epi32(acc[s][r][1], a, b1);
        }
        pa += 4 * R;
        pb += 128;
      }
    }
    for (; q < kq; ++q) {
      const __m512i b0 = _mm512_loadu_si512(pb), b1 = _mm512_loadu_si512(pb + 64);
      TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
        const __m512i a = _mm512_set1_epi32(load_i32(pa + 4 * r));
        acc[0][r][0] = _mm512_dpbusd_epi32(acc[0][r][0], a, b0);
        acc[0][r][1] = _mm512_dpbusd_epi32(acc[0][r][1], a, b1);
      }
      pa += 4 * R;
      pb += 128;
    }
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
      __m512i s0 = acc[0][r][0], s1 = acc[0][r][1];
      TSR_QGEMM_UNROLL for (int s = 1; s < S; ++s) {
        s0 = _mm512_add_epi32(s0, acc[s][r][0]);
        s1 = _mm512_add_epi32(s1, acc[s][r][1]);
      }
      _mm512_storeu_si512(tile + r * kNR, s0);
      _mm512_storeu_si512(tile + r * kNR + 16, s1);
    }
  }
};

// VnniTile on a gathered u8 A (GatherTileFn): each row's quads broadcast from its run in place, so
// a conv's taps skip the A packing (the u8 values are what the packed panel would hold: u8 A is
// stored as is on this path). One accumulator set: convs have many rows.
template <int R>
TSR_QGEMM_VNNI_ATTR HWY_INLINE void vnni_gather_sums(int64_t runs, int64_t run_quads, const uint8_t* a,
                                                     const uint8_t* pad, const int32_t* off, const int8_t* pb,
                                                     __m512i (&acc)[R][2]) {
  TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
    acc[r][0] = _mm512_setzero_si512();
    acc[r][1] = _mm512_setzero_si512();
  }
  for (int64_t s = 0; s < runs; ++s) {
    const uint8_t* p[R];
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
      const int32_t o = off[r * runs + s];
      p[r] = o < 0 ? pad : a + o;
    }
    for (int64_t q = 0; q < run_quads; ++q) {
      const __m512i b0 = _mm512_loadu_si512(pb), b1 = _mm512_loadu_si512(pb + 64);
      TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
        const __m512i av = _mm512_set1_epi32(load_i32(p[r] + 4 * q));
        acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], av, b0);
        acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], av, b1);
      }
      pb += 128;
    }
  }
}

template <int R>
struct VnniGatherTile {
  TSR_QGEMM_VNNI_ATTR static void run(int64_t runs, int64_t run_quads, const uint8_t* a, const uint8_t* pad,
                                      const int32_t* off, const int8_t* pb, int32_t* tile) {
    __m512i acc[R][2];
    vnni_gather_sums<R>(runs, run_quads, a, pad, off, pb, acc);
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
      _mm512_storeu_si512(tile + r * kNR, acc[r][0]);
      _mm512_storeu_si512(tile + r * kNR + 16, acc[r][1]);
    }
  }
};

// VnniGatherTile with the output stage (GatherQuantTileFn) applied to the accumulators as they
// are: the channels-last convs wrote each tile's i32 sums to memory and read them back to
// requantize (7% of a q8 ResNet-50's time). Codes of type Q (u8 or s8); a partial panel (cols <
// kNR) loads and stores under masks.
template <int R, typename Q>
struct VnniGatherQuantTile {
  TSR_QGEMM_VNNI_ATTR static void run(int64_t runs, int64_t run_quads, const uint8_t* a, const uint8_t* pad,
                                      const int32_t* off, const int8_t* pb, const GatherQuant& q) {
    __m512i acc[R][2];
    vnni_gather_sums<R>(runs, run_quads, a, pad, off, pb, acc);
    const hwy::HWY_NAMESPACE::Full512<float> df;
    const Requant<Q, decltype(df)> rq(df, q.zp);
    const auto half_mask = [&](int h) {
      const int64_t n = q.cols - 16 * h;
      return static_cast<__mmask16>(n >= 16 ? 0xFFFF : n <= 0 ? 0 : (1u << n) - 1);
    };
    const __mmask16 m[2] = {half_mask(0), half_mask(1)};
    __m512i fix[2];
    __m512 sc[2];
    TSR_QGEMM_UNROLL for (int h = 0; h < 2; ++h) {
      fix[h] = _mm512_maskz_loadu_epi32(m[h], q.fix + 16 * h);
      sc[h] = q.scale ? _mm512_maskz_loadu_ps(m[h], q.scale + 16 * h) : _mm512_set1_ps(q.uniform);
    }
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int h = 0; h < 2; ++h) {
      // acc + fix wraps as quant_rows_full's sum does; then its float product and codes.
      const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[r][h], fix[h])), sc[h]);
      const __m512i bits = rq.wide_codes(hwy::HWY_NAMESPACE::Vec512<float>{v}).raw;
      uint8_t* out = q.out + r * q.row_bytes + 16 * h;
      if (m[h] == 0xFFFF) _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(bits));
      else _mm512_mask_cvtepi32_storeu_epi8(out, m[h], bits);
    }
  }
};

// Without VNNI: B sign-extended to i16 (vpmovsxbw) and A as u16 quads (0..255), multiplied by
// vpmaddwd: each i32 lane gets a0*b0 + a1*b1 of one column's k-pair, at most 2 * 255 * 128 in
// magnitude, so nothing saturates (vpmaddubsw would: its u8 x s8 pair sums saturate at i16, and
// 255 * 127 * 2 > 32767). A lane pair holds one column's two k-pair sums, added at the end. 4 rows
// x 4 zmm (8 columns each) = 16 accumulators + 4 B + 1 A + products (6 rows spilled: GCC 12
// hoists the B loads and keeps every product live).
constexpr int64_t kMaddMR = 4;
template <int R>
struct Madd512Tile {
  static HWY_NOINLINE void run(int64_t kq, const uint8_t* pa, const int8_t* pb, int32_t* tile) {
    __m512i acc[R][4];
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v) acc[r][v] =
        _mm512_setzero_si512();
    for (int64_t q = 0; q < kq; ++q) {
      __m512i b[4];
      TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v) b[v] =
          _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb + 32 * v)));
      TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
        const __m512i a = _mm512_set1_epi64(load_i64(pa + 8 * r));
        TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v) acc[r][v] =
            _mm512_add_epi32(acc[r][v], _mm512_madd_epi16(a, b[v]));
      }
      pa += 8 * R;
      pb += 128;
    }
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int h = 0; h < 2; ++h) {
      const __m512i x = acc[r][2 * h], y = acc[r][2 * h + 1];
      const __m512i s =
          _mm512_add_epi32(_mm512_permutex2var_epi32(x, even, y), _mm512_permutex2var_epi32(x, odd, y));
      _mm512_storeu_si512(tile + r * kNR + 16 * h, s);
    }
  }
};

#elif HWY_TARGET == HWY_AVX2
// ---- AVX2: 16 columns per panel, the vpmaddwd path of AVX-512 (exact for the same reason) on ymm
// (4 columns each): 2 rows x 4 ymm = 8 accumulators + 2 A broadcasts + B + products of 16
// registers (3 rows spilled 8 accumulators to the stack). ----
constexpr int64_t kNR = 16;
constexpr int64_t kMaddMR = 2;
template <int R>
struct Madd256Tile {
  static HWY_NOINLINE void run(int64_t kq, const uint8_t* pa, const int8_t* pb, int32_t* tile) {
    __m256i acc[R][4];
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v) acc[r][v] =
        _mm256_setzero_si256();
    for (int64_t q = 0; q < kq; ++q) {
      __m256i a[R];
      TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) a[r] = _mm256_set1_epi64x(load_i64(pa + 8 * r));
      TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v) {
        const __m256i b = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + 16 * v)));
        TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) acc[r][v] =
            _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(a[r], b));
      }
      pa += 8 * R;
      pb += 64;
    }
    // hadd(x, y) = [x01 x23 y01 y23 | x45 x67 y45 y67] = columns [0 1 4 5 | 2 3 6 7]: 64-bit units
    // 0, 2, 1, 3 put them in order.
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int h = 0; h < 2; ++h) {
      const __m256i s = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][2 * h], acc[r][2 * h + 1]), 0xD8);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile + r * kNR + 8 * h), s);
    }
  }
};

#elif HWY_TARGET == HWY_NEON && HWY_ARCH_ARM_A64
// ---- aarch64: 16 columns per panel (4 q-registers of k-quads). ----
constexpr int64_t kNR = 16;

// sdot (ARMv8.2 dotprod, FEAT_DotProd): s8 x s8 by 4-byte groups into i32 lanes, exact. A is
// packed as a - 128 (s8) and the driver adds 128 * col_sum. Compiled with its own target
// attribute (the baseline is armv8-a) and called only when getauxval(AT_HWCAP) has HWCAP_ASIMDDP.
// 6 rows x 4 = 24 accumulators + 4 B + 1 A of 32 registers.
#define TSR_QGEMM_DOT_ATTR __attribute__((target("arch=armv8.2-a+dotprod")))
constexpr int64_t kDotMR = 6;
template <int R>
struct DotTile {
  TSR_QGEMM_DOT_ATTR static void run(int64_t kq, const uint8_t* pa, const int8_t* pb, int32_t* tile) {
    int32x4_t acc[R][4];
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v) acc[r][v] =
        vdupq_n_s32(0);
    for (int64_t q = 0; q < kq; ++q) {
      int8x16_t b[4];
      TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v) b[v] = vld1q_s8(pb + 16 * v);
      TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
        const int8x16_t a = vreinterpretq_s8_s32(vdupq_n_s32(load_i32(pa + 4 * r)));
        TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v) acc[r][v] = vdotq_s32(acc[r][v], b[v], a);
      }
      pa += 4 * R;
      pb += 64;
    }
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v)
        vst1q_s32(tile + r * kNR + 4 * v, acc[r][v]);
  }
};

// Plain NEON (ARMv8.0): vld4 de-interleaves a quad row into k0..k3 across the 16 columns, widened
// to i16; A as u16 quads (0..255); vmlal_lane multiplies i16 x i16 into i32 lanes, exact.
// 4 rows x 4 = 16 accumulators + 8 B halves + 1 A.
constexpr int64_t kMlalMR = 4;
template <int R>
struct MlalTile {
  static HWY_NOINLINE void run(int64_t kq, const uint8_t* pa, const int8_t* pb, int32_t* tile) {
    int32x4_t acc[R][4];
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v) acc[r][v] =
        vdupq_n_s32(0);
    for (int64_t q = 0; q < kq; ++q) {
      const int8x16x4_t bq = vld4q_s8(pb);
      int16x8_t lo[4], hi[4];  // k_t for columns 0-7 and 8-15
      TSR_QGEMM_UNROLL for (int t = 0; t < 4; ++t) {
        lo[t] = vmovl_s8(vget_low_s8(bq.val[t]));
        hi[t] = vmovl_high_s8(bq.val[t]);
      }
      TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
        const int16x4_t a = vreinterpret_s16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(pa + 8 * r)));
#define TSR_QGEMM_MLAL(T)                                                   \
  acc[r][0] = vmlal_lane_s16(acc[r][0], vget_low_s16(lo[T]), a, T);         \
  acc[r][1] = vmlal_high_lane_s16(acc[r][1], lo[T], a, T);                  \
  acc[r][2] = vmlal_lane_s16(acc[r][2], vget_low_s16(hi[T]), a, T);         \
  acc[r][3] = vmlal_high_lane_s16(acc[r][3], hi[T], a, T);
        TSR_QGEMM_MLAL(0)
        TSR_QGEMM_MLAL(1)
        TSR_QGEMM_MLAL(2)
        TSR_QGEMM_MLAL(3)
#undef TSR_QGEMM_MLAL
      }
      pa += 8 * R;
      pb += 64;
    }
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int v = 0; v < 4; ++v)
        vst1q_s32(tile + r * kNR + 4 * v, acc[r][v]);
  }
};

#elif HWY_TARGET == HWY_WASM
// ---- WASM SIMD128: 8 columns per panel. B sign-extended to i16 by the load (2 columns x 4 k per
// vector), A as u16 quads splatted to both halves; i32x4.dot_i16x8_s gives each lane one column's
// k-pair sum (|sum| <= 2 * 255 * 128, exact), lane pairs added at the end. From 3 rows the panel
// runs as two halves of 4 columns, each over all of K: 4 rows x 2 = 8 accumulators + 2 B + 1 A +
// the dot's temporary fit the 15 xmm registers V8 allocates on x64, where 3 rows x 4 (12
// accumulators, the whole panel at once) spilled: 52 against 33 GMAC/s under node 20 (K = 512,
// panel in L1; the A panel is read twice, from L1). 1-2 rows (decode steps, whose B panels come
// from memory once) take the whole panel in one pass, so that each B line is fetched once. ----
constexpr int64_t kNR = 8;
constexpr int64_t kDotMR = 4;
template <int R>
struct WasmTile {
  // Columns [4 * h0, 4 * h0 + 4 * H) of the panel: H halves of 2 vectors at once.
  template <int H>
  static HWY_INLINE void pass(int64_t kq, const uint8_t* a, const int8_t* b, int32_t* tile, int h0) {
    v128_t acc[R][2 * H];
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int v = 0; v < 2 * H; ++v) acc[r][v] =
        wasm_i32x4_splat(0);
    b += 16 * h0;
    for (int64_t q = 0; q < kq; ++q) {
      v128_t bv[2 * H];
      TSR_QGEMM_UNROLL for (int v = 0; v < 2 * H; ++v) bv[v] = wasm_i16x8_load8x8(b + 8 * v);
      TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) {
        const v128_t av = wasm_v128_load64_splat(a + 8 * r);
        TSR_QGEMM_UNROLL for (int v = 0; v < 2 * H; ++v) acc[r][v] =
            wasm_i32x4_add(acc[r][v], wasm_i32x4_dot_i16x8(av, bv[v]));
      }
      a += 8 * R;
      b += 32;
    }
    TSR_QGEMM_UNROLL for (int r = 0; r < R; ++r) TSR_QGEMM_UNROLL for (int h = 0; h < H; ++h) {
      const v128_t x = acc[r][2 * h], y = acc[r][2 * h + 1];
      const v128_t s =
          wasm_i32x4_add(wasm_i32x4_shuffle(x, y, 0, 2, 4, 6), wasm_i32x4_shuffle(x, y, 1, 3, 5, 7));
      wasm_v128_store(tile + r * kNR + 4 * (h0 + h), s);
    }
  }
  static HWY_NOINLINE void run(int64_t kq, const uint8_t* pa, const int8_t* pb, int32_t* tile) {
    if constexpr (R <= 2) {
      pass<2>(kq, pa, pb, tile, 0);
    } else {
      pass<1>(kq, pa, pb, tile, 0);
      pass<1>(kq, pa, pb, tile, 1);
    }
  }
};

#else
// ---- Any other target (HWY_SCALAR, SSE4, armv7 NEON): plain C++ over the same layout, which
// the compiler vectorizes with the baseline ISA. ----
constexpr int64_t kNR = 8;
constexpr int64_t kScalarMR = 4;
template <int R>
struct ScalarTile {
  static HWY_NOINLINE void run(int64_t kq, const uint8_t* pa, const int8_t* pb, int32_t* tile) {
    int32_t acc[R][kNR] = {};
    for (int64_t q = 0; q < kq; ++q) {
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < kNR; ++c)
          for (int t = 0; t < 4; ++t) acc[r][c] += int32_t{pa[4 * r + t]} * int32_t{pb[4 * c + t]};
      pa += 4 * R;
      pb += 4 * kNR;
    }
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < kNR; ++c) tile[r * kNR + c] = acc[r][c];
  }
};
#endif

}  // namespace qk
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // include guard
