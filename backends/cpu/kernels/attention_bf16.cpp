// The bf16 products of the CPU attention core (contract: attention_bf16.h).
//
// Both products are one register-tiled kernel: C[rows, cols] (= alpha A B | += A B) where A is
// row-major bf16 pairs (the rows of Q, or of the softmax weights P, converted here) and B is K
// or V packed once per head in blocks of 16 columns, each a run of 16 bf16 pairs per reduction
// step: one vdpbf16ps multiplies a broadcast pair of A by 16 pairs of B and adds both products
// into 16 f32 lanes. A tile is up to 6 rows x 64 columns (24 accumulators).
#include "backends/cpu/kernels/attention_bf16.h"

#include <algorithm>

#include "core/base/fast_math.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__EMSCRIPTEN__)
#define TSR_ATTN_BF16 1
#include <immintrin.h>
// GCC 12 reports the _mm512_undefined_* inside AVX-512 intrinsics (max, roundscale, scalef,
// reduce) as uninitialized when they are inlined into target("avx512...") functions of a
// non-AVX-512 build.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#else
#define TSR_ATTN_BF16 0
#endif

namespace tsr::cpu {

bool bf16_attention_usable(const AttnProblem& p) {
  return TSR_ATTN_BF16 && p.bf16 && p.q_len >= 16 && p.head_size <= 512 && p.local_window < 0 && p.qk_out == nullptr &&
         fast_math_supported(FastMath::kBf16);
}

Bf16KV bf16_kv_layout(const AttnProblem& p, size_t* elements) {
  Bf16KV kv;
  kv.kv_heads = p.kv_heads;
  kv.k_pairs = (p.head_size + 1) / 2;
  kv.k_head = (p.kv_len + 15) / 16 * 16 * kv.k_pairs * 2;
  kv.v_pairs = (p.kv_len + 1) / 2;
  kv.v_head = (p.v_head_size + 15) / 16 * 16 * kv.v_pairs * 2;
  *elements = static_cast<size_t>(p.batch * p.kv_heads * (kv.k_head + kv.v_head));
  return kv;
}

int64_t bf16_work_elements(const Bf16KV& kv, int64_t rows, int64_t keys) {
  return rows * (kv.k_pairs + (keys + 1) / 2);
}

#if TSR_ATTN_BF16

#define TSR_BF16_TARGET __attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl")))

namespace {

constexpr int kMR = 6, kNV = 4;  // tile rows, tile width in vectors of 16 columns

TSR_BF16_TARGET inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : n <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << n) - 1);
}
TSR_BF16_TARGET inline __mmask32 lanes32(int64_t n) {
  return n >= 32 ? static_cast<__mmask32>(~0u) : n <= 0 ? static_cast<__mmask32>(0) : static_cast<__mmask32>((1u << n) - 1);
}

// y[0, 2 * pairs) = bf16(x[0, n)) (round to nearest even) followed by zeros.
TSR_BF16_TARGET void to_bf16_row(const float* x, int64_t n, void* y, int64_t pairs) {
  auto* out = static_cast<uint16_t*>(y);
  for (int64_t c = 0; c < 2 * pairs; c += 32) {
    const __m512 lo = _mm512_maskz_loadu_ps(lanes(n - c), x + c);
    const __m512 hi = _mm512_maskz_loadu_ps(lanes(n - c - 16), x + c + 16);
    _mm512_mask_storeu_epi16(out + c, lanes32(2 * pairs - c), reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
  }
}

// c[r * ldc + 16 v + l] for r < R, v < NV (lanes of the last vector: `last`) = alpha * acc, or
// += acc when `accumulate`, where acc = sum over p < pairs of the bf16 pair a[r * lda + p] dotted
// with the pair at b[v * bstride + 32 p + 2 l].
template <int R, int NV>
TSR_BF16_TARGET void tile(const uint32_t* a, int64_t lda, const uint16_t* b, int64_t bstride, int64_t pairs, float alpha,
                          bool accumulate, float* c, int64_t ldc, __mmask16 last) {
  __m512 acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(b + v * bstride + 32 * p));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512bh av = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a[r * lda + p])));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const __mmask16 m = v == NV - 1 ? last : static_cast<__mmask16>(0xffff);
      float* cp = c + r * ldc + 16 * v;
      const __m512 x = accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(m, cp), acc[r][v]) : _mm512_mul_ps(acc[r][v], va);
      _mm512_mask_storeu_ps(cp, m, x);
    }
}

using TileFn = void (*)(const uint32_t*, int64_t, const uint16_t*, int64_t, int64_t, float, bool, float*, int64_t,
                        __mmask16);
template <int R>
struct TileRow {
  static constexpr TileFn fns[kNV] = {tile<R, 1>, tile<R, 2>, tile<R, 3>, tile<R, 4>};
};
constexpr const TileFn* kTiles[kMR] = {TileRow<1>::fns, TileRow<2>::fns, TileRow<3>::fns,
                                       TileRow<4>::fns, TileRow<5>::fns, TileRow<6>::fns};

// c[rows, cols] (stride ldc) = alpha A B, or += A B: A rows of `pairs` bf16 pairs (stride lda),
// B blocks of 16 columns `bstride` elements apart, each [pairs][16][2].
TSR_BF16_TARGET void products(const uint32_t* a, int64_t lda, int64_t rows, const uint16_t* b, int64_t bstride,
                              int64_t pairs, int64_t cols, float alpha, bool accumulate, float* c, int64_t ldc) {
  for (int64_t c0 = 0; c0 < cols; c0 += 16 * kNV) {
    const int64_t w = std::min<int64_t>(16 * kNV, cols - c0), nv = (w + 15) / 16;
    const __mmask16 last = lanes(w - 16 * (nv - 1));
    const uint16_t* bp = b + c0 / 16 * bstride;
    for (int64_t r0 = 0; r0 < rows; r0 += kMR) {
      const int64_t mr = std::min<int64_t>(kMR, rows - r0);
      kTiles[mr - 1][nv - 1](a + r0 * lda, lda, bp, bstride, pairs, alpha, accumulate, c + r0 * ldc + c0, ldc, last);
    }
  }
}

TSR_BF16_TARGET void pack_k(const AttnProblem& p, const Bf16KV& kv, int64_t b, int64_t kh, uint16_t* dst) {
  const int64_t kp = kv.k_pairs;
  uint32_t rows[16 * 256];  // 16 keys of up to 512 head dims as bf16 pairs
  const __m512i r_off = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32(static_cast<int>(kp)));
  for (int64_t j0 = 0; j0 < p.kv_len; j0 += 16) {
    for (int64_t r = 0; r < 16; ++r) {
      if (j0 + r < p.kv_len) to_bf16_row(p.k.row(b, kh, j0 + r), p.head_size, rows + r * kp, kp);
      else std::fill(rows + r * kp, rows + (r + 1) * kp, 0u);
    }
    uint16_t* blk = dst + j0 / 16 * kp * 32;
    for (int64_t q = 0; q < kp; ++q)
      _mm512_storeu_si512(blk + 32 * q, 
                          _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), 0xffff,
                                                      _mm512_add_epi32(r_off, _mm512_set1_epi32(static_cast<int>(q))), rows, 4));
  }
}

TSR_BF16_TARGET void pack_v(const AttnProblem& p, const Bf16KV& kv, int64_t b, int64_t kh, uint16_t* dst) {
  // Interleaves the two rows' 16 bf16 values: lane 2i <- row 0's i, lane 2i + 1 <- row 1's i.
  alignas(64) uint16_t order[32];
  for (int i = 0; i < 32; ++i) order[i] = static_cast<uint16_t>(i % 2 == 0 ? i / 2 : 16 + i / 2);
  const __m512i idx = _mm512_load_si512(order);
  for (int64_t c0 = 0; c0 < p.v_head_size; c0 += 16) {
    const __mmask16 m = lanes(p.v_head_size - c0);
    uint16_t* blk = dst + c0 / 16 * kv.v_pairs * 32;
    for (int64_t t = 0; t < kv.v_pairs; ++t) {
      const __m512 x0 = _mm512_maskz_loadu_ps(m, p.v.row(b, kh, 2 * t) + c0);
      const __m512 x1 = 2 * t + 1 < p.kv_len ? _mm512_maskz_loadu_ps(m, p.v.row(b, kh, 2 * t + 1) + c0) : _mm512_setzero_ps();
      const __m512i both = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(x1, x0));  // x0 low, x1 high
      _mm512_storeu_si512(blk + 32 * t, _mm512_permutexvar_epi16(idx, both));
    }
  }
}

// 2^u for u <= 0 (u = -inf: 0): 2^f (f = u - round(u) in [-1/2, 1/2], Taylor to degree 5 of
// e^(f ln 2): error below 3e-6 relative) scaled by 2^round(u).
TSR_BF16_TARGET inline __m512 exp2_nonpositive(__m512 u) {
  const __m512 k = _mm512_roundscale_ps(u, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(u, k);
  __m512 q = _mm512_set1_ps(1.3333558e-3f);                      // ln2^5 / 120
  q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(9.6181291e-3f));      // ln2^4 / 24
  q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(5.5504109e-2f));      // ln2^3 / 6
  q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(2.4022651e-1f));      // ln2^2 / 2
  q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(6.9314718e-1f));      // ln2
  q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(q, k);
}

TSR_BF16_TARGET float exp_row(const float* x, int64_t n, float m, uint32_t* p) {
  auto* out = reinterpret_cast<uint16_t*>(p);
  const __m512 vm = _mm512_set1_ps(m), lo = _mm512_set1_ps(-86.0f), log2e = _mm512_set1_ps(1.44269504f);
  __m512 sum = _mm512_setzero_ps();
  const int64_t len = 2 * ((n + 1) / 2);
  for (int64_t c = 0; c < len; c += 32) {
    __m512 e[2];
    for (int h = 0; h < 2; ++h) {
      const __mmask16 valid = lanes(n - c - 16 * h);
      const __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(valid, x + c + 16 * h), vm);
      const __mmask16 keep = _mm512_mask_cmp_ps_mask(valid, t, lo, _CMP_GE_OQ);
      e[h] = _mm512_maskz_mov_ps(keep, exp2_nonpositive(_mm512_mul_ps(_mm512_max_ps(t, lo), log2e)));
      sum = _mm512_add_ps(sum, e[h]);
    }
    _mm512_mask_storeu_epi16(out + c, lanes32(len - c), reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(e[1], e[0])));
  }
  return _mm512_reduce_add_ps(sum);
}

}  // namespace

void bf16_pack_kv(const AttnProblem& p, const Bf16KV& kv, int64_t b, int64_t kh) {
  uint16_t* k = kv.data + (b * kv.kv_heads + kh) * (kv.k_head + kv.v_head);
  pack_k(p, kv, b, kh, k);
  pack_v(p, kv, b, kh, k + kv.k_head);
}

void bf16_convert_q(const Bf16KV& kv, const float* q, int64_t q_sr, int64_t rows, int64_t head_size, uint32_t* q16) {
  for (int64_t r = 0; r < rows; ++r) to_bf16_row(q + r * q_sr, head_size, q16 + r * kv.k_pairs, kv.k_pairs);
}

void bf16_scores(const Bf16KV& kv, const uint16_t* k, const uint32_t* q16, int64_t rows, float scale, int64_t j0,
                 int64_t n, float* s, int64_t lds) {
  products(q16, kv.k_pairs, rows, k + j0 / 16 * kv.k_pairs * 32, kv.k_pairs * 32, kv.k_pairs, n, scale, false, s, lds);
}

float bf16_exp_row(const float* x, int64_t n, float m, uint32_t* p) { return exp_row(x, n, m, p); }

void bf16_accumulate_pv(const Bf16KV& kv, const uint16_t* v, const uint32_t* p, int64_t rows, int64_t n, int64_t j0,
                        float* o, int64_t ldo, int64_t dv) {
  const int64_t pairs = (n + 1) / 2;
  products(p, pairs, rows, v + j0 / 2 * 32, kv.v_pairs * 32, pairs, dv, 1.0f, true, o, ldo);
}

#else  // no AVX512_BF16 kernels in this build: bf16_attention_usable is false, these are never called

void bf16_pack_kv(const AttnProblem&, const Bf16KV&, int64_t, int64_t) {}
void bf16_convert_q(const Bf16KV&, const float*, int64_t, int64_t, int64_t, uint32_t*) {}
void bf16_scores(const Bf16KV&, const uint16_t*, const uint32_t*, int64_t, float, int64_t, int64_t, float*, int64_t) {}
float bf16_exp_row(const float*, int64_t, float, uint32_t*) { return 0.0f; }
void bf16_accumulate_pv(const Bf16KV&, const uint16_t*, const uint32_t*, int64_t, int64_t, int64_t, float*, int64_t,
                        int64_t) {}

#endif

}  // namespace tsr::cpu
