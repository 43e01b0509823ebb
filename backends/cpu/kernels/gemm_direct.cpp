// sgemm_direct (gemm_direct.h). Compiled once per SIMD target (hwy/foreach_target.h); the entry
// points call the best target this CPU supports.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/gemm_direct.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "backends/cpu/kernels/gemm_direct.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/epilogue.h"
#include "backends/cpu/kernels/scratch.h"
#include "backends/cpu/kernels/unroll.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

// K block: each block's sum is rounded on its own before it is added to C, as in the packed
// SGEMM (one chain of 576 multiply-adds rounded 1.4x worse on average than blocks of 256).
constexpr int64_t kKC = 256;

#if HWY_TARGET == HWY_SCALAR

void direct_scalar(int64_t m, int64_t n, int64_t k, const float* at, const float* const* brows, int64_t col0,
                   const float* bias, const float* z, int64_t ldz, const ops::ActivationSpec* act, float* c,
                   int64_t ldc) {
  for (int64_t i = 0; i < direct_chunks(m); ++i) {
    const int64_t r0 = direct_chunk_row(m, i), rows = direct_chunk_row(m, i + 1) - r0;
    for (int64_t r = 0; r < rows; ++r) {
      float* crow = c + (r0 + r) * ldc;
      for (int64_t j = 0; j < n; ++j) crow[j] = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float av = at[r0 * k + p * rows + r];
        const float* brow = brows[p] + col0;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
      }
      const float bv = bias ? bias[r0 + r] : 0.0f;
      for (int64_t j = 0; j < n; ++j) crow[j] += bv + (z ? z[(r0 + r) * ldz + j] : 0.0f);
      if (act) apply_epilogue(*act, crow, n);
    }
  }
}

#else

using DF = hn::ScalableTag<float>;
// How far ahead (floats) a tile prefetches its packed A, one line per K step. A is read once per
// strip of B, mostly cold from DRAM: Winograd's transformed weights (4x the raw ones, e.g. 33 MB
// for ResNet-18's layer3) are streamed with a few columns of tiles each (256 channels on 14x14:
// 32 columns), and without the prefetch the tiles waited on it (four such convs 5.8 -> 3.4 ms).
// The distance runs in the order the tiles read A: past the end of the tile's K block it goes on
// into the next tile's (`next`: the next chunk of rows, or the next K block), not into this
// chunk's next K block, which is read only after every chunk's current one (with K > kKC, e.g.
// 512 channels, the prefetch fetched lines a pass too early, and A streamed at ~9 GB/s, 14 after).
constexpr int64_t kPrefetchA = 1536;
using VF = hn::Vec<DF>;

// The activations a tile applies as it stores (a few vector ops each, so the accumulators stay in
// registers; SiLU's ~20, its constants as memory operands); others (Sigmoid, HardSigmoid, an
// affine) run over the stored tile.
struct TileAct {
  enum Mode { kClamp, kHardSwish, kLeaky, kSilu } mode;
  float p0, p1;  // kClamp: [p0, p1]; kLeaky: alpha
};

// R rows x V vectors of C at column j: c[r][..] = act(sum_p at[p*R + r] * brows[p][j ..] + bias[r]
// + c + z), with c only where `add` (a later block of K) and bias, z and act only where given.
// The sum starts from 0 and the rest is added after it, as the packed SGEMM and its epilogue do:
// summing onto a large bias rounds every step at the bias's magnitude (M-LSD's last conv, offsets
// up to 100). `at` is the chunk's A transposed (K x R): each step broadcasts R consecutive floats.
template <size_t R, size_t V>
HWY_NOINLINE void direct_tile(const float* HWY_RESTRICT at, const float* next, const float* const* brows, int64_t j,
                              int64_t k, bool add, const float* bias, const float* z, int64_t ldz, const TileAct* act,
                              float* c, int64_t ldc) {
  const DF d;
  const size_t nl = hn::Lanes(d);
  VF acc[R][V];
  unroll<R>([&](auto r) { unroll<V>([&](auto v) { acc[r][v] = hn::Zero(d); }); });
  if (z) {
    // The residual is read once, mostly cold (ResNet's 256-channel 56x56 sums: 3.2 MB a conv):
    // requested now, it arrives while the tile sums its K terms instead of stalling the stores.
    unroll<R>([&](auto r) {
      for (size_t q = 0; q < V * nl; q += 64 / sizeof(float)) hwy::Prefetch(z + r * ldz + q);
    });
  }
  // The prefetch address: kPrefetchA ahead in this tile's A, then in the next tile's.
  const float* pf = at + kPrefetchA;
  const float* const end = at + k * static_cast<int64_t>(R);
  const std::ptrdiff_t jump = next - end;
  for (int64_t p = 0; p < k; ++p) {
    const float* b = brows[p] + j;
    VF bv[V];
    unroll<V>([&](auto v) { bv[v] = hn::LoadU(d, b + v * nl); });
    hwy::Prefetch(pf < end ? pf : pf + jump);
    pf += R;
    unroll<R>([&](auto r) {
      const VF av = hn::Set(d, at[r]);
      unroll<V>([&](auto v) { acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]); });
    });
    at += R;
  }
  const int mode = act ? act->mode : -1;
  const VF p0 = hn::Set(d, act ? act->p0 : 0.0f), p1 = hn::Set(d, act ? act->p1 : 0.0f), zero = hn::Zero(d);
  unroll<R>([&](auto r) {
    unroll<V>([&](auto v) {
      VF o = acc[r][v];
      if (bias) o = hn::Add(o, hn::Set(d, bias[r]));
      if (add) o = hn::Add(o, hn::LoadU(d, c + r * ldc + v * nl));
      if (z) o = hn::Add(o, hn::LoadU(d, z + r * ldz + v * nl));
      if (mode == TileAct::kClamp) {
        o = hn::Min(hn::Max(o, p0), p1);
      } else if (mode == TileAct::kHardSwish) {
        o = hn::Mul(o, hn::Min(hn::Max(hn::MulAdd(o, hn::Set(d, 1.0f / 6.0f), hn::Set(d, 0.5f)), zero), hn::Set(d, 1.0f)));
      } else if (mode == TileAct::kLeaky) {
        o = hn::IfThenElse(hn::Lt(o, zero), hn::Mul(o, p0), o);
      } else if (mode == TileAct::kSilu) {
        o = silu_vec(d, o);
      }
      hn::StoreU(o, d, c + r * ldc + v * nl);
    });
  });
}

// The activation over a freshly stored tile (rows x cols at c, row stride ldc; cols is at most a
// strip, 4 vectors).
HWY_NOINLINE void activate_rows(const ops::ActivationSpec& act, float* c, int64_t ldc, int64_t rows, int32_t cols) {
  for (int64_t r = 0; r < rows; ++r) apply_epilogue(act, c + r * ldc, int64_t{cols});
}

using TileFn = void (*)(const float*, const float*, const float* const*, int64_t, int64_t, bool, const float*,
                        const float*, int64_t, const TileAct*, float*, int64_t);

// The strip width: 4 vectors where there are 32 registers (AVX-512: 6 x 4 accumulators + 4 B
// vectors; the broadcasts are memory operands), else 2 (6 x 2 + 2 + 1 of 16). Wide strips with
// few rows keep few lines of one cache set in flight per row: C and B rows are often a
// power-of-two plane apart, and 24 rows x 1 vector ran at half the speed there.
constexpr size_t kWide = HWY_MAX_BYTES >= 64 ? 4 : 2;

template <size_t V, size_t... I>
constexpr std::array<TileFn, sizeof...(I)> make_tiles(std::index_sequence<I...>) {
  return {&direct_tile<I + 1, V>...};
}
// kTiles[v - 1][rows - 1]: rows x v vectors, v = 1 .. kWide (a narrower strip takes the whole
// vectors left after the last wide strip, in one pass).
template <size_t... V>
constexpr std::array<std::array<TileFn, kMaxDirectRows>, sizeof...(V)> make_tile_table(std::index_sequence<V...>) {
  return {make_tiles<V + 1>(std::make_index_sequence<kMaxDirectRows>{})...};
}
constexpr auto kTiles = make_tile_table(std::make_index_sequence<kWide>{});

#endif

}  // namespace

// C = A * B + bias + Z with A packed by sgemm_direct_pack_a (`at`: m x k) and row p of B at
// brows[p] + col0.
void sgemm_direct_impl(int64_t m, int64_t n, int64_t k, const float* at, const float* const* brows, int64_t col0,
                       const float* bias, const float* z, int64_t ldz, const ops::ActivationSpec* act, float* c,
                       int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (act && act->kind == ops::FusedActivation::kNone && !act->has_post()) act = nullptr;
  if (k <= 0) {  // no products: bias and Z only
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = (bias ? bias[i] : 0.0f) + (z ? z[i * ldz + j] : 0.0f);
      if (act) apply_epilogue(*act, c + i * ldc, n);
    }
    return;
  }
#if HWY_TARGET == HWY_SCALAR
  direct_scalar(m, n, k, at, brows, col0, bias, z, ldz, act, c, ldc);
#else
  const DF d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const int64_t chunks = direct_chunks(m);
  // Relu, Clip, HardSwish, LeakyRelu and Silu run in the tiles' stores; other activations (and the
  // affine or bounds) over each tile's rows right after it is stored, while they are in L1.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::optional<TileAct> in_tile;
  if (act && !act->has_post()) {
    using A = ops::FusedActivation;
    if (act->kind == A::kRelu) in_tile = TileAct{TileAct::kClamp, 0.0f, kInf};
    if (act->kind == A::kClip) in_tile = TileAct{TileAct::kClamp, act->p0, act->p1};
    if (act->kind == A::kHardSwish) in_tile = TileAct{TileAct::kHardSwish, 0.0f, 0.0f};
    if (act->kind == A::kLeakyRelu) in_tile = TileAct{TileAct::kLeaky, act->p0, 0.0f};
    if (act->kind == A::kSilu) in_tile = TileAct{TileAct::kSilu, 0.0f, 0.0f};
  }
  const TileAct* tile_act = in_tile ? &*in_tile : nullptr;
  const ops::ActivationSpec* after = act && !in_tile ? act : nullptr;
  // Columns [j0, j1) of C in place, in strips of `width` columns through `tiles`; every chunk of
  // rows reads a strip of B while it is in cache.
  auto run = [&](const TileFn* tiles, const float* const* rows_of_b, int64_t b0, int64_t j0, int64_t j1,
                 int64_t width, const float* zc, int64_t ldzc, const ops::ActivationSpec* actc, float* cc,
                 int64_t ldcc) {
    for (int64_t j = j0; j < j1; j += width)
      for (int64_t p0 = 0; p0 < k; p0 += kKC) {
        const int64_t kc = std::min(kKC, k - p0);
        const bool first = p0 == 0, last = p0 + kc == k;
        for (int64_t i = 0; i < chunks; ++i) {
          const int64_t r0 = direct_chunk_row(m, i), rows = direct_chunk_row(m, i + 1) - r0;
          // The A the next tile reads: the next chunk's block, or the first chunk's next block
          // (after the last block: this strip's start, which the next strip reads first).
          const int64_t r1 = direct_chunk_row(m, i + 1), rows1 = direct_chunk_row(m, std::min(i + 2, chunks)) - r1;
          const float* next = i + 1 < chunks ? at + r1 * k + p0 * rows1
                                             : at + (last ? 0 : (p0 + kc) * direct_chunk_row(m, 1));
          tiles[rows - 1](at + r0 * k + p0 * rows, next, rows_of_b + p0, b0 + j, kc, !first,
                          first && bias ? bias + r0 : nullptr, last && zc ? zc + r0 * ldzc + j : nullptr, ldzc,
                          last && actc ? tile_act : nullptr, cc + r0 * ldcc + j, ldcc);
          if (last && actc && after) activate_rows(*after, cc + r0 * ldcc + j, ldcc, rows, static_cast<int32_t>(width));
        }
      }
  };
  const int64_t sw = static_cast<int64_t>(kWide) * nl;
  const int64_t full = n / sw * sw, whole = n / nl * nl, rest = n - whole;
  run(kTiles[kWide - 1].data(), brows, col0, 0, full, sw, z, ldz, act, c, ldc);
  if (whole > full)
    run(kTiles[static_cast<size_t>((whole - full) / nl - 1)].data(), brows, col0, full, whole, whole - full, z, ldz, act,
        c, ldc);
  if (rest == 0) return;
  // The last columns (fewer than a vector) through a zero-padded copy of B's (one vector wide)
  // into `out` (m x nl), then into C.
  DirectThreadScratch& scratch = direct_thread_scratch();
  float* buf = scratch.tail(static_cast<size_t>((k + m) * nl));
  float* out = buf + k * nl;
  const float** tail_rows = scratch.tail_rows(static_cast<size_t>(k));
  for (int64_t p = 0; p < k; ++p) {
    std::memcpy(buf + p * nl, brows[p] + col0 + whole, static_cast<size_t>(rest) * sizeof(float));
    std::fill(buf + p * nl + rest, buf + (p + 1) * nl, 0.0f);
    tail_rows[p] = buf + p * nl;
  }
  run(kTiles[0].data(), tail_rows, 0, 0, nl, nl, nullptr, 0, nullptr, out, nl);
  for (int64_t i = 0; i < m; ++i) {
    float* crow = c + i * ldc + whole;
    const float* orow = out + i * nl;
    const float* zrow = z ? z + i * ldz + whole : nullptr;
    for (int64_t q = 0; q < rest; ++q) crow[q] = orow[q] + (zrow ? zrow[q] : 0.0f);
    if (act) apply_epilogue(*act, crow, rest);
  }
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(sgemm_direct_impl);

DirectThreadScratch& direct_thread_scratch() {
  thread_local DirectThreadScratch scratch;
  return scratch;
}

void sgemm_direct_prepare_thread() {
  DirectThreadScratch& s = direct_thread_scratch();
  s.brows(kPreparedDirectK);
  s.tail_rows(kPreparedDirectK);
  s.tail(static_cast<size_t>((kPreparedDirectK + 1024) * 16));  // K + M rows of up to 16 lanes
}

namespace {

// Row pointers b + p * ldb, p < k, in the thread's table.
const float* const* strided_rows(const float* b, int64_t ldb, int64_t k) {
  const float** rows = direct_thread_scratch().brows(static_cast<size_t>(k));
  for (int64_t p = 0; p < k; ++p) rows[p] = b + p * ldb;
  return rows;
}

}  // namespace

SgemmDirectA sgemm_direct_pack_a(int64_t m, int64_t k, const float* a, int64_t lda) {
  SgemmDirectA pa;
  pa.m = m;
  pa.k = k;
  pa.data.resize(static_cast<size_t>(std::max<int64_t>(0, m * k)));
  sgemm_direct_pack_a_into(m, k, a, lda, pa.data.data());
  return pa;
}

void sgemm_direct_pack_a_into(int64_t m, int64_t k, const float* a, int64_t lda, float* out) {
  if (m <= 0) return;
  for (int64_t i = 0; i < direct_chunks(m); ++i) {
    const int64_t r0 = direct_chunk_row(m, i), rows = direct_chunk_row(m, i + 1) - r0;
    float* dst = out + r0 * k;
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = a + (r0 + r) * lda;
      for (int64_t p = 0; p < k; ++p) dst[p * rows + r] = src[p];
    }
  }
}

void sgemm_direct(const SgemmDirectA& a, int64_t n, const float* b, int64_t ldb, const float* bias, const float* z,
                  int64_t ldz, float* c, int64_t ldc, const ops::ActivationSpec* act) {
  HWY_DYNAMIC_DISPATCH(sgemm_direct_impl)(a.m, n, a.k, a.data.data(), strided_rows(b, ldb, a.k), 0, bias, z, ldz, act,
                                          c, ldc);
}

void sgemm_direct(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                  const float* bias, const float* z, int64_t ldz, float* c, int64_t ldc, const ops::ActivationSpec* act) {
  thread_local std::vector<float> packed;
  sgemm_direct_pack_a_into(m, k, a, lda, grow_scratch(packed, m * k));
  HWY_DYNAMIC_DISPATCH(sgemm_direct_impl)(m, n, k, packed.data(), strided_rows(b, ldb, k), 0, bias, z, ldz, act, c,
                                          ldc);
}

void sgemm_direct_packed(int64_t m, int64_t n, int64_t k, const float* packed_a, const float* b, int64_t ldb,
                         const float* bias, const float* z, int64_t ldz, float* c, int64_t ldc,
                         const ops::ActivationSpec* act) {
  HWY_DYNAMIC_DISPATCH(sgemm_direct_impl)(m, n, k, packed_a, strided_rows(b, ldb, k), 0, bias, z, ldz, act, c, ldc);
}

void sgemm_direct_rows(const SgemmDirectA& a, int64_t n, const float* const* brows, int64_t col0, const float* bias,
                       const float* z, int64_t ldz, float* c, int64_t ldc, const ops::ActivationSpec* act) {
  HWY_DYNAMIC_DISPATCH(sgemm_direct_impl)(a.m, n, a.k, a.data.data(), brows, col0, bias, z, ldz, act, c, ldc);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
