// Compiled once per SIMD target (hwy/foreach_target.h); sgemm and friends call the best target
// this CPU supports (HWY_DYNAMIC_DISPATCH, one table lookup per call). The packed-A layout
// (SgemmPackedA) depends on kMR/kMC/kKC, which differ by target: SgemmPackedA records them and a
// product run by another target does not read it in its own layout (sgemm_impl).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/gemm.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "backends/cpu/kernels/gemm.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <memory>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/unroll.h"
#include "core/base/selective.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
// No SIMD target was compiled in (no -m flags): a fixed-size plain-C++ tile that the compiler
// auto-vectorizes with the baseline ISA (SSE2 / NEON).
constexpr int64_t kMR = 4;
constexpr int64_t kNR = 8;
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 16 * kMR;
#elif HWY_MAX_BYTES >= 64
// AVX-512 (32 registers): 14 rows x 2 vectors = 28 accumulators + 2 B vectors + 1 broadcast, 14
// broadcasts and 2 loads per 28 FMAs (6 x 2 did 8 loads per 12 FMAs and left half the register
// file unused). KC = 256 keeps the B micro-panel (256 x 32 floats, 32 KiB) in the 48 KiB L1 while
// A micro-panels stream from L2; the A block (MC x KC, 448 KiB) stays in the 2 MiB L2.
constexpr int64_t kMR = 14;
constexpr int64_t kNR = 2 * static_cast<int64_t>(HWY_LANES(float));
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 32 * kMR;
#elif HWY_TARGET == HWY_WASM
// 4 rows x 2 vectors (8 accumulators) + 2 B vectors + 1 broadcast + the product's temporary (no
// FMA in SIMD128: MulAdd is a mul and an add): V8's optimizing tier on x64 keeps them in its 15
// allocatable xmm registers, where 6 x 2 spilled: 64 against 40-47 GFLOP/s per core (node 20,
// --no-liftoff, panel in L1). kMC keeps the 96-row A block of 16 x 6.
constexpr int64_t kMR = 4;
constexpr int64_t kNR = 2 * static_cast<int64_t>(HWY_LANES(float));
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 24 * kMR;
#else
// 6 rows x 2 vectors of accumulators (12 registers) + 2 B vectors + 1 broadcast: fits the 16
// registers of AVX2 / NEON, with 12 independent FMA chains to hide latency.
constexpr int64_t kMR = 6;
constexpr int64_t kNR = 2 * static_cast<int64_t>(HWY_LANES(float));
constexpr int64_t kKC = 256;     // K block: the B micro-panel (KC x NR) stays in L1
constexpr int64_t kMC = 16 * kMR;  // M block: the packed A block (MC x KC) stays in L2
#endif
constexpr int64_t kNC = 4096;    // N block: the packed B slice (KC x NC) stays in L3
constexpr int64_t kNChunk = 8 * kNR;  // columns per task: one task = MC x NChunk of C
// Up to this many rows of C (decode steps, batch-1 Linear layers) B is not packed: packing reads
// and writes all of B for a handful of FMAs per element.
constexpr int64_t kSmallM = 16;
// The unpacked paths (few rows or columns) split work over threads from this many multiply-adds
// (about 5 us on one core at AVX-512's rate): below, waking a pool thread costs more than it saves
// (1 x 384 x 384 ran at 24 GFLOP/s on one thread, 17 on two).
constexpr int64_t kMinParallelMacs = int64_t{1} << 19;
// ... or from a B of this many floats (1 MiB, a core's L2) for any count of rows: a decode step's
// weights come from L3 or memory, one GEMV per layer, so B's bytes, not the multiply-adds, set
// the time (1 x 512 x 512 reads 1 MiB in ~35 us on one core at 30 GB/s; both cores stream faster).
constexpr int64_t kMinParallelBFloats = int64_t{1} << 18;
// Whether the unpacked few-row / few-column paths split an m x n x k product over threads.
inline bool unpacked_split_pays(int64_t m, int64_t n, int64_t k) {
  return m * n * k > kMinParallelMacs || n * k >= kMinParallelBFloats;
}

// A tile's store: C = alpha*acc + beta*C on the first K block. `src` (null: C itself) is where
// that first block reads beta's C instead: C's row i (c0 + i * ldc, c0 the product's C) reads
// src + i * ld_src, ld_src 0 for one row broadcast to every row (a Gemm's [N] bias added in the
// store, not copied into C before the product). Through memory: see tile_kernel's alpha and beta.
struct TileArgs {
  float alpha, beta;
  const float* c0 = nullptr;
  const float* src = nullptr;
  int64_t ld_src = 0;
};

// Where the tile at `c` (rows ldc apart) reads beta's C on the first K block, and their stride.
inline const float* tile_source(const TileArgs& t, float* c, int64_t ldc, int64_t& ld) {
  ld = ldc;
  if (t.src == nullptr) return c;
  const int64_t off = c - t.c0, r0 = off / ldc;
  ld = t.ld_src;
  return t.src + r0 * t.ld_src + (off - r0 * ldc);
}

#if HWY_TARGET == HWY_SCALAR
// Writes an MR x NR accumulator tile (row-major) into C: C = alpha*acc + beta*C on the first K
// block (beta == 0: C not read), C += alpha*acc afterwards. Only m x n entries are valid.
void store_tile(const float* tile, float* c, int64_t ldc, int64_t m, int64_t n, const TileArgs& ab, bool first) {
  const float alpha = ab.alpha, beta = ab.beta;
  int64_t lds = 0;
  const float* src = first && beta != 0.0f ? tile_source(ab, c, ldc, lds) : c;
  for (int64_t r = 0; r < m; ++r) {
    float* crow = c + r * ldc;
    const float* t = tile + r * kNR;
    if (!first) {
      for (int64_t j = 0; j < n; ++j) crow[j] += alpha * t[j];
    } else if (beta == 0.0f) {
      for (int64_t j = 0; j < n; ++j) crow[j] = alpha * t[j];
    } else {
      const float* srow = src + r * lds;
      for (int64_t j = 0; j < n; ++j) crow[j] = alpha * t[j] + beta * srow[j];
    }
  }
}

// pa: packed A (kc x kMR); pb: B rows of kNR floats, `ldbp` apart.
void micro_kernel(int64_t kc, const float* pa, const float* pb, int64_t ldbp, float* c, int64_t ldc, int64_t m,
                  int64_t n, const TileArgs& ab, bool first) {
  float acc[kMR][kNR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* b = pb + p * ldbp;
    const float* a = pa + p * kMR;
    for (int64_t r = 0; r < kMR; ++r)
      for (int64_t j = 0; j < kNR; ++j) acc[r][j] += a[r] * b[j];
  }
  store_tile(&acc[0][0], c, ldc, m, n, ab, first);
}
#else
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr int64_t kNV = 2;       // vectors per row of the packed tile
// How far ahead (floats) the tiles prefetch their packed A panel, one line per K step: constant
// weights are mostly cold (ResNet-18's 46 MB do not stay in a 32 MiB L3 between runs), each tile
// reads its A panel once per B panel, and the hardware prefetcher alone left the first pass over
// a panel waiting on DRAM (ResNet-18's 512-channel 7x7 convs, two in a row: 3.8 -> 2.7 ms; the
// model 18.8 -> 14.2 ms at one thread with sgemm_direct's prefetch). About 600 K steps of a
// 14-row panel ahead; warm panels lose nothing measurable (64 x 64 x 3x3 on 56x56).
constexpr int64_t kPrefetchA = 2048;
constexpr int64_t kMaxV = 4;     // widest strip (few rows, B unpacked)

// The first `cnt` (at most a vector) floats at p: loaded with zeros after them and nothing read
// past them (Highway's MaskedLoad on WASM and NEON loads the whole vector, which can run off the
// end of a buffer or of wasm memory); stored with the floats after them left alone. Those floats
// may be another thread's (the next row's first columns, the next batch's C), written meanwhile:
// Highway's BlendedStore on WASM and NEON loads, blends and stores the whole vector, so it wrote
// back stale values over them (nondeterministic PP-OCRv4 rec attention at 4 threads in
// tessera-threads.wasm). x86's masked loads and stores do not touch the other lanes and stay.
HWY_INLINE VF load_first(DF d, const float* p, size_t cnt) {
#if HWY_ARCH_X86
  return hn::MaskedLoad(hn::FirstN(d, cnt), d, p);
#else
  HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
  std::memcpy(buf, p, cnt * sizeof(float));
  return hn::Load(d, buf);
#endif
}

HWY_INLINE void store_first(DF d, VF v, float* p, size_t cnt) {
#if HWY_ARCH_X86
  hn::BlendedStore(v, hn::FirstN(d, cnt), d, p);
#else
  HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, cnt * sizeof(float));
#endif
}

// R rows x V vectors of C: acc = sum_p A[p][r] * B[p][v] with A packed (kc x kMR, R <= kMR rows
// used) and B's rows `ldbp` floats apart (kNR when packed, ldb when read in place). Then
// C = alpha*acc + beta*C (first K block; beta == 0: C not read) or C += alpha*acc; only the first
// n columns are written (masked stores past them).
// With kRawA, A is read where it lies instead: row r of the tile at pa + r * lda_a, K contiguous
// (few columns of C: packing A would cost about as much as the product).
// With kNextB (B prepacked, cold: sgemm_prepacked_b), the B panel after this one (kc rows of
// ldbp floats further, or lda_a floats further where that is not 0: the next one a thread of
// sgemm_panel_split reads) is prefetched as this one is read, instead of A.
template <size_t R, size_t V, bool kRawA = false, bool kNextB = false>
HWY_NOINLINE void tile_kernel(int64_t kc, const float* HWY_RESTRICT pa, const float* HWY_RESTRICT pb, int64_t ldbp,
                              float* HWY_RESTRICT c, int64_t ldc, int64_t n, const TileArgs* args, bool first,
                              int64_t lda_a) {
  const DF d;
  const size_t nl = hn::Lanes(d);
  VF acc[R][V];
  unroll<R>([&](auto r) { unroll<V>([&](auto v) { acc[r][v] = hn::Zero(d); }); });
  const float* next_b = pb + (kNextB && lda_a != 0 ? lda_a : kc * ldbp);
  auto step = [&](VF(&sum)[R][V]) HWY_ATTR {
    VF bv[V];
    unroll<V>([&](auto v) { bv[v] = hn::LoadU(d, pb + v * nl); });
    if constexpr (kNextB) {
      for (size_t q = 0; q < V * nl; q += 16) hwy::Prefetch(next_b + q);  // 16 floats: a 64-byte line
      next_b += ldbp;
    } else if constexpr (!kRawA) {
      hwy::Prefetch(pa + kPrefetchA);
    }
    unroll<R>([&](auto r) {
      const VF av = hn::Set(d, kRawA ? pa[r * lda_a] : pa[r]);
      unroll<V>([&](auto v) { sum[r][v] = hn::MulAdd(av, bv[v], sum[r][v]); });
    });
    pa += kRawA ? 1 : kMR;
    pb += ldbp;
  };
  int64_t p = 0;
  if constexpr (R * V < 8) {
    // Fewer chains than FMA latency x units (4 x 2): odd steps into a second set of accumulators,
    // so a 1-row tile (decode steps) is not bound by the FMA latency.
    VF acc2[R][V];
    unroll<R>([&](auto r) { unroll<V>([&](auto v) { acc2[r][v] = hn::Zero(d); }); });
    for (; p + 2 <= kc; p += 2) {
      step(acc);
      step(acc2);
    }
    unroll<R>([&](auto r) { unroll<V>([&](auto v) { acc[r][v] = hn::Add(acc[r][v], acc2[r][v]); }); });
  }
  for (; p < kc; ++p) step(acc);
  // alpha and beta come through memory, read only here: as register arguments they stayed live
  // across the loop and pushed an accumulator of AVX2's 6 x 2 tile out to the stack.
  const float beta = args->beta;
  const VF va = hn::Set(d, args->alpha), vb = hn::Set(d, beta);
  const int mode = !first ? 1 : (beta == 0.0f ? 0 : 2);
  int64_t lds = ldc;
  const float* src = mode == 2 ? tile_source(*args, c, ldc, lds) : c;
  if (n == static_cast<int64_t>(V * nl)) {
    unroll<R>([&](auto r) {
      unroll<V>([&](auto v) {
        float* dst = c + r * ldc + v * nl;
        VF o = hn::Mul(acc[r][v], va);
        if (mode == 1) o = hn::Add(o, hn::LoadU(d, dst));
        else if (mode == 2) o = hn::MulAdd(vb, hn::LoadU(d, src + r * lds + v * nl), o);
        hn::StoreU(o, d, dst);
      });
    });
    return;
  }
  unroll<V>([&](auto v) {
    const int64_t left = n - static_cast<int64_t>(v * nl);
    if (left <= 0) return;
    const auto cnt = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(nl)));
    unroll<R>([&](auto r) {
      float* dst = c + r * ldc + v * nl;
      VF o = hn::Mul(acc[r][v], va);
      if (mode == 1) o = hn::Add(o, load_first(d, dst, cnt));
      else if (mode == 2) o = hn::MulAdd(vb, load_first(d, src + r * lds + v * nl, cnt), o);
      store_first(d, o, dst, cnt);
    });
  });
}

using TileFn = void (*)(int64_t, const float*, const float*, int64_t, float*, int64_t, int64_t, const TileArgs*, bool,
                        int64_t);
template <size_t V, size_t... I>
constexpr std::array<TileFn, sizeof...(I)> make_tiles(std::index_sequence<I...>) {
  return {&tile_kernel<I + 1, V>...};
}
template <size_t... I>
constexpr std::array<TileFn, sizeof...(I)> make_raw_tiles(std::index_sequence<I...>) {
  return {&tile_kernel<I + 1, kNV, true>...};
}
// kRawTiles[rows - 1]: rows x kNV vectors with A read in place.
constexpr auto kRawTiles = make_raw_tiles(std::make_index_sequence<kMR>{});
template <size_t... I>
constexpr std::array<TileFn, sizeof...(I)> make_next_b_tiles(std::index_sequence<I...>) {
  return {&tile_kernel<I + 1, kNV, false, true>...};
}
// kNextBTiles[rows - 1]: rows x kNV vectors, prefetching the next B panel.
constexpr auto kNextBTiles = make_next_b_tiles(std::make_index_sequence<kMR>{});
template <size_t... V>
constexpr std::array<std::array<TileFn, kMR>, sizeof...(V)> make_tile_table(std::index_sequence<V...>) {
  return {make_tiles<V + 1>(std::make_index_sequence<kMR>{})...};
}
// kTiles[v - 1][rows - 1]: rows x v vectors. Only the widths the paths below pick are instantiated
// for rows that fit the register file; the others are never called.
constexpr auto kTiles = make_tile_table(std::make_index_sequence<kMaxV>{});
// kFullTiles[rows - 1]: rows x kNV vectors, the packed path's full width.
constexpr auto kFullTiles = make_tiles<kNV>(std::make_index_sequence<kMR>{});

// One row (a decode step's MatMul with the weight row-major) on AVX-512: 8 vectors, so that each
// row of B is read 512 contiguous bytes at a time and the 8 accumulators cover the FMA latency.
constexpr int64_t kRowV = 8;
constexpr int64_t kMaxStripV = HWY_MAX_BYTES >= 64 ? kRowV : kMaxV;

// The strip width (vectors) for `rows` rows with B read in place: wider with few rows, so that
// there are enough independent FMA chains (at least 8 for two FMA units of latency 4) in the
// registers there are (accumulators + one B vector per column vector + a broadcast).
constexpr int64_t direct_vectors(int64_t rows) {
  return HWY_MAX_BYTES >= 64 ? (rows == 1 ? kRowV : (rows <= 4 ? 4 : (rows <= 7 ? 3 : kNV)))
                             : (rows <= 2 ? 4 : kNV);
}

void micro_kernel(int64_t kc, const float* pa, const float* pb, int64_t ldbp, float* c, int64_t ldc, int64_t m,
                  int64_t n, const TileArgs& ab, bool first) {
  if constexpr (kSizeFirstKernels) {
    // The size-first kernel set (minimal runtimes): full-width tiles alone, the last panel's
    // columns masked at the store (panels are zero-padded to kNR). kTiles, unreferenced, is not
    // linked then: its 24 tiles were ~50 KB of an aarch64 minimal runtime.
    kFullTiles[static_cast<size_t>(m - 1)](kc, pa, pb, ldbp, c, ldc, n, &ab, first, 0);
  } else {
    // A panel's last columns (N not a multiple of the tile) through as few vectors as cover them.
    const int64_t nl = static_cast<int64_t>(hn::Lanes(DF()));
    const int64_t v = std::min<int64_t>(kNV, (n + nl - 1) / nl);
    kTiles[static_cast<size_t>(v - 1)][static_cast<size_t>(m - 1)](kc, pa, pb, ldbp, c, ldc, n, &ab, first, 0);
  }
}

#endif

// Packs op(B)[p0:p0+kc, col:col+nr] into one kc x width panel (row-major, zero-padded past nr
// unless !pad: A's panels, whose rows past nr no tile reads).
void pack_panel(bool trans_b, const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t col, int64_t nr,
                int64_t width, float* dst, bool pad = true) {
  if (!trans_b) {
#if HWY_TARGET != HWY_SCALAR
    if (nr == width && width == kNR) {
      // Whole panels with vector moves: a memcpy call per 2-vector row costs more than the copy.
      const DF d;
      const size_t nl = hn::Lanes(d);
      const float* src = b + p0 * ldb + col;
      for (int64_t p = 0; p < kc; ++p, src += ldb) {
        hn::StoreU(hn::LoadU(d, src), d, dst + p * kNR);
        hn::StoreU(hn::LoadU(d, src + nl), d, dst + p * kNR + nl);
      }
      return;
    }
    if (width <= static_cast<int64_t>(hn::Lanes(DF()))) {
      // A's panels from op(A) = A^T (kMR rows, at most a vector): one masked move per row, zeros
      // past nr when padded (a memcpy call per row cost 15% of a conv whose im2col is A^T).
      const DF d;
      const float* src = b + p0 * ldb + col;
      const auto cnt = static_cast<size_t>(pad ? width : nr);
      for (int64_t p = 0; p < kc; ++p, src += ldb)
        store_first(d, load_first(d, src, static_cast<size_t>(nr)), dst + p * width, cnt);
      return;
    }
    {
      // Edge panels (and strips): whole vectors, then one masked load (zero past nr, nothing
      // read past it), then zero vectors; a memcpy call per row cost more than a 1 x 100 product.
      const DF d;
      const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
      if (width % nl == 0) {
        const int64_t full = nr / nl;
        const size_t tail = static_cast<size_t>(nr - full * nl);
        for (int64_t p = 0; p < kc; ++p) {
          const float* src = b + (p0 + p) * ldb + col;
          float* o = dst + p * width;
          int64_t x = 0;
          for (; x < full * nl; x += nl) hn::StoreU(hn::LoadU(d, src + x), d, o + x);
          if (x < nr) {
            hn::StoreU(load_first(d, src + x, tail), d, o + x);
            x += nl;
          }
          for (; x < width; x += nl) hn::StoreU(hn::Zero(d), d, o + x);
        }
        return;
      }
    }
#endif
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b + (p0 + p) * ldb + col;
      float* o = dst + p * width;
      std::memcpy(o, src, static_cast<size_t>(nr) * sizeof(float));
      if (pad)
        for (int64_t q = nr; q < width; ++q) o[q] = 0.0f;
    }
    return;
  }
  // B stored N x K: four columns of the panel at a time, so each pass reads four rows of B and
  // writes whole 16-byte groups of the panel's rows.
  int64_t q = 0;
  for (; q + 4 <= nr; q += 4) {
    const float* s0 = b + (col + q) * ldb + p0;
    const float* s1 = s0 + ldb;
    const float* s2 = s1 + ldb;
    const float* s3 = s2 + ldb;
    int64_t p = 0;
#if HWY_TARGET != HWY_SCALAR
    // 4 x 4 blocks transposed in 128-bit registers (4 loads, 8 shuffles, 4 stores per 16 floats;
    // element by element this copy cost a third of 64 x 64 x 4096 with B^T).
    const hn::Full128<float> d4;
    for (; p + 4 <= kc; p += 4) {
      const auto r0 = hn::LoadU(d4, s0 + p), r1 = hn::LoadU(d4, s1 + p);
      const auto r2 = hn::LoadU(d4, s2 + p), r3 = hn::LoadU(d4, s3 + p);
      const auto t0 = hn::InterleaveLower(d4, r0, r1), t1 = hn::InterleaveLower(d4, r2, r3);  // a0 b0 a1 b1 | c0 d0 c1 d1
      const auto t2 = hn::InterleaveUpper(d4, r0, r1), t3 = hn::InterleaveUpper(d4, r2, r3);  // a2 b2 a3 b3 | c2 d2 c3 d3
      float* o = dst + p * width + q;
      hn::StoreU(hn::ConcatLowerLower(d4, t1, t0), d4, o);
      hn::StoreU(hn::ConcatUpperUpper(d4, t1, t0), d4, o + width);
      hn::StoreU(hn::ConcatLowerLower(d4, t3, t2), d4, o + 2 * width);
      hn::StoreU(hn::ConcatUpperUpper(d4, t3, t2), d4, o + 3 * width);
    }
#endif
    for (; p < kc; ++p) {
      float* o = dst + p * width + q;
      o[0] = s0[p];
      o[1] = s1[p];
      o[2] = s2[p];
      o[3] = s3[p];
    }
  }
  for (; q < nr; ++q) {
    const float* src = b + (col + q) * ldb + p0;
    for (int64_t p = 0; p < kc; ++p) dst[p * width + q] = src[p];
  }
  if (pad && nr < width)
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t x = nr; x < width; ++x) dst[p * width + x] = 0.0f;
}

// Packs op(B)[p0:p0+kc, j0:j0+nc] panels [panel_begin, panel_end) of kNR columns, each kc x kNR.
void pack_b(bool trans_b, const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
            int64_t panel_begin, int64_t panel_end, float* out) {
  for (int64_t jp = panel_begin; jp < panel_end; ++jp) {
    const int64_t j = jp * kNR;
    pack_panel(trans_b, b, ldb, p0, kc, j0 + j, std::min(kNR, nc - j), kNR, out + jp * kc * kNR);
  }
}

// Packs op(A)[i0:i0+mc, p0:p0+kc] into ceil(mc/MR) panels, each kc x MR (rows past mc left as
// they are: the tiles take the row count and read no further): a panel is
// op(A)^T's columns i0+i.. as pack_panel lays out B's (A row-major is B^T's case: 4 x 4 transposes).
void pack_a(bool trans_a, const float* a, int64_t lda, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
            float* out) {
  for (int64_t i = 0; i < mc; i += kMR)
    pack_panel(!trans_a, a, lda, p0, kc, i0 + i, std::min(kMR, mc - i), kMR, out + (i / kMR) * kc * kMR,
               /*pad=*/false);
}

std::vector<float>& thread_a_buffer() {
  thread_local std::vector<float> buf;
  return buf;
}

// The largest packed-B slice (KC x NC, whole NR panels): thread_b_buffer's bound.
constexpr size_t kMaxPanelFloats = static_cast<size_t>((kNC + kNR - 1) / kNR * kNR * kKC);

// The calling thread's packed-B buffer: grown, never shrunk or zeroed (pack_b writes every
// element it later reads), so repeated GEMMs do not allocate and fault in fresh pages.
float* thread_b_buffer(size_t need) {
  thread_local std::unique_ptr<float[]> buf;
  thread_local size_t cap = 0;
  if (cap < need) {
    buf.reset(new float[need]);
    cap = need;
  }
  return buf.get();
}

// The calling thread's copy of one strip of B (K block x kMaxStripV vectors) for the small-M path: a
// thread-local rather than 64 KiB of stack (wasm threads have 64 KiB stacks).
float* thread_strip_buffer() {
  thread_local std::unique_ptr<float[]> buf(new float[static_cast<size_t>(kKC) * kMaxStripV * HWY_MAX_BYTES / sizeof(float)]);
  return buf.get();
}

// Sizes this thread's packing buffers to their bounds once, so that no later call grows them.
void sgemm_prepare_thread_impl() {
  std::vector<float>& a = thread_a_buffer();
  if (a.size() < static_cast<size_t>(kMC * kKC)) a.resize(static_cast<size_t>(kMC * kKC));
  thread_b_buffer(kMaxPanelFloats);
#if HWY_TARGET != HWY_SCALAR
  thread_strip_buffer();
#endif
}


// Rebuilds op(A) row-major (m x k) from a packing done by another target's geometry.
void unpack_a(const SgemmPackedA& pa, float* out) {
  const int64_t mblocks = (pa.m + pa.mc - 1) / pa.mc, pblocks = (pa.k + pa.kc - 1) / pa.kc;
  for (int64_t pb = 0; pb < pblocks; ++pb)
    for (int64_t ib = 0; ib < mblocks; ++ib) {
      const int64_t p0 = pb * pa.kc, i0 = ib * pa.mc;
      const int64_t kc = std::min(pa.kc, pa.k - p0), mc = std::min(pa.mc, pa.m - i0);
      const float* blk = pa.data.data() + (pb * mblocks + ib) * pa.mc * pa.kc;
      for (int64_t i = 0; i < mc; ++i) {
        const float* panel = blk + (i / pa.mr) * kc * pa.mr;
        for (int64_t p = 0; p < kc; ++p) out[(i0 + i) * pa.k + p0 + p] = panel[p * pa.mr + i % pa.mr];
      }
    }
}

}  // namespace

namespace {

#include "backends/cpu/kernels/gemm_tile_split-inl.h"
#include "backends/cpu/kernels/gemm_few_rows-inl.h"

// `pre` (may be null): op(A) already packed by sgemm_pack_a; used by the blocked path only.
// `a` may be null when `pre` is given: then the blocked path runs whatever the shape.
// `pre_b` (may be null): op(B) packed by sgemm_pack_b; then the blocked path runs whatever the
// shape, with `b` (not null) read only where pre_b was packed by another target.
// `cin` (may be null): beta's C read from there instead of C (row i at cin + i * ld_cin, ld_cin 0:
// one row for all), in the tiles' store where pre_b is taken, else copied into C first.
void sgemm_impl(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool,
                const SgemmPackedA* pre, const SgemmPackedB* pre_b, const float* cin, int64_t ld_cin) {
  if (m <= 0 || n <= 0) return;
  if (beta == 0.0f) cin = nullptr;
  if (cin && (k <= 0 || alpha == 0.0f || !pre_b || pre || pre_b->nr != kNR || pre_b->kc != kKC)) {
    // Not the blocked path over pre_b (another target's layout, no product): C given its rows.
    for (int64_t i = 0; i < m; ++i) std::copy(cin + i * ld_cin, cin + i * ld_cin + n, c + i * ldc);
    cin = nullptr;
  }
  if (k <= 0 || alpha == 0.0f) {
    for (int64_t i = 0; i < m; ++i) {
      float* crow = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) crow[j] = beta == 0.0f ? 0.0f : beta * crow[j];
    }
    return;
  }
  if (pre && (pre->mr != kMR || pre->mc != kMC || pre->kc != kKC)) {
    // Packed by another target (the dispatch changed since): its layout is not this one's.
    if (a) {
      pre = nullptr;
    } else {
      thread_local std::vector<float> unpacked;
      if (unpacked.size() < static_cast<size_t>(m * k)) unpacked.resize(static_cast<size_t>(m * k));
      unpack_a(*pre, unpacked.data());
      sgemm_impl(false, trans_b, m, n, k, alpha, unpacked.data(), k, b, ldb, beta, c, ldc, pool, nullptr, nullptr,
                 nullptr, 0);
      return;
    }
  }
  if (pre_b && (pre_b->nr != kNR || pre_b->kc != kKC)) pre_b = nullptr;  // another target's layout
  const bool threaded = pool != nullptr && pool->num_threads() > 1;
  const TileArgs ab{alpha, beta, c, cin, ld_cin};
#if HWY_TARGET != HWY_SCALAR
  // Few rows with B^T given, or few columns whatever B's layout (a strided 1-D conv passes its
  // overlapping input windows as B^T: Silero's and openWakeWord's STFTs, N = 4-5 columns).
  const bool few_rows_bt = trans_b && m <= kSmallM;
  const bool few_cols = n <= 8 && !trans_a && m > kSmallM && m * n * k < (int64_t{1} << 24);
  // The size-first kernel set (minimal runtimes) keeps the blocked path alone: these shape paths
  // (gemm_few_rows-inl.h) are speed, not function, and cost ~50 KB of code on aarch64.
  if constexpr (!kSizeFirstKernels) {
    if (a && !pre_b && (few_rows_bt || few_cols)) {
      sgemm_dot_rows(few_rows_bt, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                     threaded ? pool : nullptr);
      return;
    }
#if HWY_TARGET == HWY_WASM
    if (a && !pre_b && !trans_b && m == 1 && !threaded) {
      sgemv_row_updates(trans_a, n, k, alpha, a, lda, b, ldb, beta, c);
      return;
    }
#endif
    if (a && !pre_b && !trans_b && m <= kSmallM) {
      sgemm_direct_strips(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threaded ? pool : nullptr);
      return;
    }
  }
#endif
  if (threaded) {
    // Few (M block, column chunk) tasks for the threads: the tiles of C split instead.
    const int64_t mblocks = (m + kMC - 1) / kMC;
    if (pre_b && !pre && a && panel_split_reads_b_once(m, n, k, pool->num_threads())) {
      sgemm_panel_split(trans_a, m, n, k, alpha, a, lda, beta, c, ldc, *pool, *pre_b, cin, ld_cin);
      return;
    }
    if (tile_split_pays(m, n, k, mblocks, mblocks * ((n + kNChunk - 1) / kNChunk), pool->num_threads())) {
      const bool raw_a = !kSizeFirstKernels && !pre && !trans_a && a != nullptr && n <= 2 * kNR && HWY_TARGET != HWY_SCALAR;
      sgemm_tile_split(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, *pool, pre, raw_a, pre_b, cin,
                       ld_cin);
      return;
    }
  }
  // Prepacked B (constant weights) and one M block: the threads split B's panels once for all of
  // K (few columns, read with A in place, keep the blocked path).
  if (threaded && pre_b && !pre && a && m <= kMC && n <= kNC && n > 2 * kNR) {
    sgemm_panel_split(trans_a, m, n, k, alpha, a, lda, beta, c, ldc, *pool, *pre_b, cin, ld_cin);
    return;
  }
  // Sized for the largest slice up front: B panels of at most KC x NC.
  float* const pbuf = pre_b ? nullptr : thread_b_buffer(static_cast<size_t>(((std::min(kNC, n) + kNR - 1) / kNR) * kNR *
                                                                        std::min(kKC, k)));
  const int64_t all_panels = (n + kNR - 1) / kNR;
  for (int64_t j0 = 0; j0 < n; j0 += kNC) {
    const int64_t nc = std::min(kNC, n - j0);
    const int64_t npanels = (nc + kNR - 1) / kNR;
    for (int64_t p0 = 0; p0 < k; p0 += kKC) {
      const int64_t kc = std::min(kKC, k - p0);
      const bool first = p0 == 0;
      // This slice's panels: packed below into pbuf, or pre_b's (K block, then panel, each kc x kNR).
      const float* const pb = pre_b ? pre_b->data.data() + (p0 * all_panels + j0 / kNR * kc) * kNR : pbuf;
      const int64_t mblocks = (m + kMC - 1) / kMC;
      const int64_t nthr = threaded ? pool->num_threads() : 1;
      // Too few (M block, kNChunk columns) tasks to give every thread two (one M block: ViT's 197
      // tokens, a BERT's 128): one panel per task, tasks in one contiguous range per thread. Each
      // task packs its M block of A unless the task before it in its range did, so narrower chunks
      // claimed one at a time packed A once per chunk (197 x 192 x 192 on 2 threads: 6 packs of
      // A instead of 1, about the time the second thread saved). With one M block every panel
      // of B is read by one task only: the task packs it (no separate pass and join over B).
      const bool split_panels = threaded && mblocks * ((nc + kNChunk - 1) / kNChunk) < 2 * nthr;
      const bool own_b = split_panels && mblocks == 1;
      if (own_b || pre_b) {
        // packed by the tasks below, or already
      } else if (threaded && npanels > 1) {
        pool->parallel_for(npanels, 4, [&](int64_t pb0, int64_t pb1) {
          pack_b(trans_b, b, ldb, p0, kc, j0, nc, pb0, pb1, pbuf);
        });
      } else {
        pack_b(trans_b, b, ldb, p0, kc, j0, nc, 0, npanels, pbuf);
      }
      // Few columns (attention's N = 64 head dims): A is read in place by the tiles, each row tile
      // passing over all of B's (few) panels while its rows are in L1; packing A would cost about
      // as much as the product.
      const bool raw_a = !kSizeFirstKernels && !pre && !trans_a && a != nullptr && n <= 2 * kNR && HWY_TARGET != HWY_SCALAR;
      // Tasks of kNChunk columns, or of one panel for products too small to feed every thread.
      const int64_t chunk = split_panels ? kNR : kNChunk;
      const int64_t nchunks = (nc + chunk - 1) / chunk;
      auto task = [&](int64_t t0, int64_t t1) {
        std::vector<float>& abuf = thread_a_buffer();
        const size_t need = static_cast<size_t>(kMC * kc);
        if (!pre && !raw_a && abuf.size() < need) abuf.resize(need);
        int64_t packed_block = -1;
        for (int64_t t = t0; t < t1; ++t) {
          // Tasks run M-block-major so a thread's consecutive tasks reuse its packed A block.
          const int64_t ib = t / nchunks, jb = t % nchunks;
          const int64_t i0 = ib * kMC, mc = std::min(kMC, m - i0);
          if (own_b && !pre_b) pack_b(trans_b, b, ldb, p0, kc, j0, nc, jb, jb + 1, pbuf);  // chunk == kNR: panel jb
          const float* ap = abuf.data();
#if HWY_TARGET != HWY_SCALAR
          if (raw_a) {
            const int64_t jc0 = jb * chunk, jc1 = std::min(nc, jc0 + chunk);
            for (int64_t i = 0; i < mc; i += kMR) {
              const int64_t mr = std::min(kMR, mc - i);
              for (int64_t j = jc0; j < jc1; j += kNR)
                kRawTiles[static_cast<size_t>(mr - 1)](kc, a + (i0 + i) * lda + p0, pb + (j / kNR) * kc * kNR, kNR,
                                                      c + (i0 + i) * ldc + j0 + j, ldc, std::min(kNR, jc1 - j), &ab,
                                                      first, lda);
            }
            continue;
          }
#endif
          if (pre) {
            ap = pre->data.data() + ((p0 / kKC) * mblocks + ib) * kMC * kKC;
          } else if (packed_block != ib) {
            pack_a(trans_a, a, lda, i0, mc, p0, kc, abuf.data());
            packed_block = ib;
          }
          const int64_t jc0 = jb * chunk, jc1 = std::min(nc, jc0 + chunk);
          for (int64_t j = jc0; j < jc1; j += kNR) {
            const float* bp = pb + (j / kNR) * kc * kNR;
            const int64_t nr = std::min(kNR, jc1 - j);
            for (int64_t i = 0; i < mc; i += kMR) {
#if HWY_TARGET != HWY_SCALAR
              if (!kSizeFirstKernels && pre_b && i == 0 && nr == kNR) {
                // A prepacked B is constant weights, mostly cold (see kPrefetchA): the first row
                // tile prefetches the panel after this one (next in memory) as it reads this one.
                kNextBTiles[static_cast<size_t>(std::min(kMR, mc) - 1)](kc, ap, bp, kNR, c + i0 * ldc + j0 + j, ldc, nr,
                                                                       &ab, first, 0);
                continue;
              }
#endif
              micro_kernel(kc, ap + (i / kMR) * kc * kMR, bp, kNR, c + (i0 + i) * ldc + j0 + j, ldc,
                           std::min(kMR, mc - i), nr, ab, first);
            }
          }
        }
      };
      const int64_t ntasks = mblocks * nchunks;
      const int64_t grain = split_panels ? (ntasks + nthr - 1) / nthr : 1;
      if (threaded && ntasks > 1) pool->parallel_for(ntasks, grain, task);
      else task(0, ntasks);
    }
  }
}

}  // namespace

void sgemm_pack_a_impl(SgemmPackedA& pa, const float* a, int64_t lda) {
  const int64_t m = pa.m, k = pa.k;
  pa.mr = kMR;
  pa.mc = kMC;
  pa.kc = kKC;
  if (m <= 0 || k <= 0) return;
  const int64_t mblocks = (m + kMC - 1) / kMC, pblocks = (k + kKC - 1) / kKC;
  pa.data.assign(static_cast<size_t>(mblocks * pblocks * kMC * kKC), 0.0f);
  for (int64_t pb = 0; pb < pblocks; ++pb)
    for (int64_t ib = 0; ib < mblocks; ++ib) {
      const int64_t p0 = pb * kKC, i0 = ib * kMC;
      pack_a(pa.trans_a, a, lda, i0, std::min(kMC, m - i0), p0, std::min(kKC, k - p0),
             pa.data.data() + (pb * mblocks + ib) * kMC * kKC);
    }
}

void sgemm_pack_b_impl(SgemmPackedB& pb, const float* b, int64_t ldb) {
  pb.nr = kNR;
  pb.kc = kKC;
  const int64_t panels = (pb.n + kNR - 1) / kNR;
  pb.data.assign(static_cast<size_t>(std::max<int64_t>(0, pb.k * panels * kNR)), 0.0f);
  for (int64_t p0 = 0; p0 < pb.k; p0 += kKC)
    pack_b(pb.trans_b, b, ldb, p0, std::min(kKC, pb.k - p0), 0, pb.n, 0, panels, pb.data.data() + p0 * panels * kNR);
}

// The dispatched target's name (bench/gemm, tests: which tile a product ran with).
const char* sgemm_target_impl() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(sgemm_impl);
HWY_EXPORT(sgemm_pack_a_impl);
HWY_EXPORT(sgemm_pack_b_impl);
HWY_EXPORT(sgemm_prepare_thread_impl);
HWY_EXPORT(sgemm_target_impl);

const char* sgemm_target() { return HWY_DYNAMIC_DISPATCH(sgemm_target_impl)(); }

void sgemm_prepare_thread() { HWY_DYNAMIC_DISPATCH(sgemm_prepare_thread_impl)(); }

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(sgemm_impl)(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool, nullptr,
                                   nullptr, nullptr, 0);
}

SgemmPackedA sgemm_pack_a(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda) {
  SgemmPackedA pa;
  sgemm_pack_a_into(pa, trans_a, m, k, a, lda);
  return pa;
}

void sgemm_pack_a_into(SgemmPackedA& pa, bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda) {
  pa.m = m;
  pa.k = k;
  pa.trans_a = trans_a;
  HWY_DYNAMIC_DISPATCH(sgemm_pack_a_impl)(pa, a, lda);
}

SgemmPackedB sgemm_pack_b(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb) {
  SgemmPackedB pb;
  pb.k = k;
  pb.n = n;
  pb.trans_b = trans_b;
  HWY_DYNAMIC_DISPATCH(sgemm_pack_b_impl)(pb, b, ldb);
  return pb;
}

void sgemm_prepacked_b(bool trans_a, int64_t m, float alpha, const float* a, int64_t lda, const SgemmPackedB& pb,
                       const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool,
                       const float* cin, int64_t ld_cin) {
  HWY_DYNAMIC_DISPATCH(sgemm_impl)(trans_a, pb.trans_b, m, pb.n, pb.k, alpha, a, lda, b, ldb, beta, c, ldc, pool,
                                   nullptr, &pb, cin, ld_cin);
}

void sgemm_prepacked(const SgemmPackedA& pa, const float* a, int64_t lda, bool trans_b, int64_t n, float alpha,
                     const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(sgemm_impl)(pa.trans_a, trans_b, pa.m, n, pa.k, alpha, a, lda, b, ldb, beta, c, ldc, pool, &pa,
                                   nullptr, nullptr, 0);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
