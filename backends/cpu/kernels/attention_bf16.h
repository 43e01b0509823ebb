// The bfloat16 products of the CPU attention core (FastMath::kBf16, core/base/fast_math.h):
// Q·K^T and P·V with bf16 operands (f32 values rounded to nearest even) and f32 accumulation,
// on x86-64 CPUs with AVX512_BF16 (vdpbf16ps: two bf16 multiply-adds per f32 lane per
// instruction, twice the f32 FMA's). attention.cpp's attend_rows calls these in place of its two
// sgemm calls; the online softmax between them is the f32 path's. Highway 1.0.3 has no bf16
// dot-product target, so the kernels use intrinsics behind a run-time CPU check; other builds
// compile stubs (bf16_attention_usable is then false and the core stays f32).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cpu/kernels/attention.h"

namespace tsr::cpu {

// Whether the core takes the bf16 path for `p`: p.bf16 is set, the CPU has AVX512_BF16
// (fast_math_supported), there are at least 16 query rows (below that packing K and V costs
// more than the products save: one-token decoding stays f32), a head size of at most 512, and
// no local window or score output (qk_out).
bool bf16_attention_usable(const AttnProblem& p);

// K and V of every (batch, kv head) in bf16, packed for the products. K of a head: blocks of 16
// keys, each [k_pairs][16 keys][2] (pairs of adjacent head dims; an odd head size and the keys
// past kv_len are zero-padded). V of a head: blocks of 16 columns, each [v_pairs][16 cols][2]
// (pairs of adjacent keys; zero-padded likewise). Elements are bf16 bit patterns.
struct Bf16KV {
  uint16_t* data = nullptr;
  int64_t k_pairs = 0, k_head = 0;  // pairs per key (ceil(head_size / 2)); K elements per head
  int64_t v_pairs = 0, v_head = 0;  // key pairs (ceil(kv_len / 2)); V elements per head
  int64_t kv_heads = 0;
  const uint16_t* k(int64_t b, int64_t kh) const { return data + (b * kv_heads + kh) * (k_head + v_head); }
  const uint16_t* v(int64_t b, int64_t kh) const { return k(b, kh) + k_head; }
};

// One query task's view of the packed heads and its slot's work buffer (attend_rows): its query
// rows in bf16 (bf16_convert_q) and one block of softmax weights in bf16 (bf16_exp_row).
struct Bf16Rows {
  const Bf16KV* kv;
  uint32_t* q;
  uint32_t* p;
};

// The layout of p's packed K and V and its size in uint16 elements (data left null).
Bf16KV bf16_kv_layout(const AttnProblem& p, size_t* elements);
// The uint32 elements of a task's Bf16Rows buffers for up to `rows` query rows and blocks of up
// to `keys` keys: q first (rows * kv.k_pairs), then p.
int64_t bf16_work_elements(const Bf16KV& kv, int64_t rows, int64_t keys);
// Packs K and V of batch b, kv head kh of p into kv (kv.data set, the layout above).
void bf16_pack_kv(const AttnProblem& p, const Bf16KV& kv, int64_t b, int64_t kh);

// q16[r * kv.k_pairs, ...) = the bf16 pairs of query row q[r * q_sr, + head_size) for r < rows.
void bf16_convert_q(const Bf16KV& kv, const float* q, int64_t q_sr, int64_t rows, int64_t head_size, uint32_t* q16);
// s[r * lds + j] = scale * sum_d Q[r, d] K[j0 + j, d] for r < rows, j < n: Q the bf16 rows of
// bf16_convert_q, K the packed head `k` (kv.k(b, kh)). j0 is a multiple of 16.
void bf16_scores(const Bf16KV& kv, const uint16_t* k, const uint32_t* q16, int64_t rows, float scale, int64_t j0,
                 int64_t n, float* s, int64_t lds);
// The softmax weights of one row of scores for bf16_accumulate_pv: p[0, ceil(n / 2)) holds the
// bf16 pairs of exp(x[j] - m) for j < n (0 where x[j] - m < -86, as the f32 path's exp_sum, and
// past n); returns the f32 sum of the exps. The exp is a degree-5 polynomial of 2^f after range
// reduction (about 3e-6 relative, far below bf16's rounding).
float bf16_exp_row(const float* x, int64_t n, float m, uint32_t* p);
// o[r * ldo + c] += sum_{j < n} P[r, j] V[j0 + j, c] for r < rows, c < dv: P the bf16 rows of
// bf16_exp_row, row r at p + r * ceil(n / 2); V the packed head `v` (kv.v(b, kh)). j0 is even.
void bf16_accumulate_pv(const Bf16KV& kv, const uint16_t* v, const uint32_t* p, int64_t rows, int64_t n, int64_t j0,
                        float* o, int64_t ldo, int64_t dv);

}  // namespace tsr::cpu
