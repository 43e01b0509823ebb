// Compiled once per SIMD target (hwy/foreach_target.h); sgemm and friends call the best target
// this CPU supports (HWY_DYNAMIC_DISPATCH, one table lookup per call). The packed-A layout
// (SgemmPackedA) depends on kMR/kMC/kKC only, which are the same for every vector target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/gemm.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/gemm.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/cpu_backend.h"

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
#else
constexpr int64_t kMR = 6;
constexpr int64_t kNR = 2 * static_cast<int64_t>(HWY_LANES(float));
#endif
constexpr int64_t kKC = 256;     // K block: an A micro-panel (MR x KC) stays in L1
constexpr int64_t kMC = 16 * kMR;  // M block: the packed A block (MC x KC) stays in L2
constexpr int64_t kNC = 4096;    // N block: the packed B slice (KC x NC) stays in L3
constexpr int64_t kNChunk = 8 * kNR;  // columns per task: one task = MC x NChunk of C

// Writes an MR x NR accumulator tile (row-major, `tile`) into C: C = alpha*acc + beta*C on the
// first K block (beta == 0: C not read), C += alpha*acc afterwards. Only m x n entries are valid.
inline void store_tile(const float* tile, float* c, int64_t ldc, int64_t m, int64_t n, float alpha,
                       float beta, bool first) {
  for (int64_t r = 0; r < m; ++r) {
    float* crow = c + r * ldc;
    const float* t = tile + r * kNR;
    if (!first) {
      for (int64_t j = 0; j < n; ++j) crow[j] += alpha * t[j];
    } else if (beta == 0.0f) {
      for (int64_t j = 0; j < n; ++j) crow[j] = alpha * t[j];
    } else {
      for (int64_t j = 0; j < n; ++j) crow[j] = alpha * t[j] + beta * crow[j];
    }
  }
}

#if HWY_TARGET == HWY_SCALAR
void micro_kernel(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t m,
                  int64_t n, float alpha, float beta, bool first) {
  float acc[kMR][kNR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* b = pb + p * kNR;
    const float* a = pa + p * kMR;
    for (int64_t r = 0; r < kMR; ++r)
      for (int64_t j = 0; j < kNR; ++j) acc[r][j] += a[r] * b[j];
  }
  store_tile(&acc[0][0], c, ldc, m, n, alpha, beta, first);
}
#else
// 6 rows x 2 vectors of accumulators (12 registers) + 2 B vectors + 1 broadcast: fits the 16
// registers of AVX2 / NEON / WASM SIMD128, with 12 independent FMA chains to hide latency.
void micro_kernel(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t m,
                  int64_t n, float alpha, float beta, bool first) {
  const hn::ScalableTag<float> d;
  const size_t nl = hn::Lanes(d);
  auto c00 = hn::Zero(d), c01 = hn::Zero(d), c10 = hn::Zero(d), c11 = hn::Zero(d);
  auto c20 = hn::Zero(d), c21 = hn::Zero(d), c30 = hn::Zero(d), c31 = hn::Zero(d);
  auto c40 = hn::Zero(d), c41 = hn::Zero(d), c50 = hn::Zero(d), c51 = hn::Zero(d);
  for (int64_t p = 0; p < kc; ++p) {
    const auto b0 = hn::LoadU(d, pb);
    const auto b1 = hn::LoadU(d, pb + nl);
    auto a = hn::Set(d, pa[0]);
    c00 = hn::MulAdd(a, b0, c00);
    c01 = hn::MulAdd(a, b1, c01);
    a = hn::Set(d, pa[1]);
    c10 = hn::MulAdd(a, b0, c10);
    c11 = hn::MulAdd(a, b1, c11);
    a = hn::Set(d, pa[2]);
    c20 = hn::MulAdd(a, b0, c20);
    c21 = hn::MulAdd(a, b1, c21);
    a = hn::Set(d, pa[3]);
    c30 = hn::MulAdd(a, b0, c30);
    c31 = hn::MulAdd(a, b1, c31);
    a = hn::Set(d, pa[4]);
    c40 = hn::MulAdd(a, b0, c40);
    c41 = hn::MulAdd(a, b1, c41);
    a = hn::Set(d, pa[5]);
    c50 = hn::MulAdd(a, b0, c50);
    c51 = hn::MulAdd(a, b1, c51);
    pa += kMR;
    pb += kNR;
  }
  if (m == kMR && n == kNR) {
    // Full tile: update C in place with vectors.
    const auto va = hn::Set(d, alpha);
    const auto vb = hn::Set(d, beta);
    auto put = [&](float* dst, decltype(c00) acc) {
      auto v = hn::Mul(acc, va);
      if (!first) v = hn::Add(v, hn::LoadU(d, dst));
      else if (beta != 0.0f) v = hn::MulAdd(vb, hn::LoadU(d, dst), v);
      hn::StoreU(v, d, dst);
    };
    put(c, c00);
    put(c + nl, c01);
    put(c + ldc, c10);
    put(c + ldc + nl, c11);
    put(c + 2 * ldc, c20);
    put(c + 2 * ldc + nl, c21);
    put(c + 3 * ldc, c30);
    put(c + 3 * ldc + nl, c31);
    put(c + 4 * ldc, c40);
    put(c + 4 * ldc + nl, c41);
    put(c + 5 * ldc, c50);
    put(c + 5 * ldc + nl, c51);
    return;
  }
  HWY_ALIGN float tile[kMR * kNR];
  hn::Store(c00, d, tile);
  hn::Store(c01, d, tile + nl);
  hn::Store(c10, d, tile + kNR);
  hn::Store(c11, d, tile + kNR + nl);
  hn::Store(c20, d, tile + 2 * kNR);
  hn::Store(c21, d, tile + 2 * kNR + nl);
  hn::Store(c30, d, tile + 3 * kNR);
  hn::Store(c31, d, tile + 3 * kNR + nl);
  hn::Store(c40, d, tile + 4 * kNR);
  hn::Store(c41, d, tile + 4 * kNR + nl);
  hn::Store(c50, d, tile + 5 * kNR);
  hn::Store(c51, d, tile + 5 * kNR + nl);
  store_tile(tile, c, ldc, m, n, alpha, beta, first);
}
#endif

// Packs op(B)[p0:p0+kc, j0:j0+nc] into ceil(nc/NR) panels, each kc x NR row-major, zero-padded.
void pack_b(bool trans_b, const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
            int64_t panel_begin, int64_t panel_end, float* out) {
  for (int64_t jp = panel_begin; jp < panel_end; ++jp) {
    const int64_t j = jp * kNR;
    const int64_t nr = std::min(kNR, nc - j);
    float* dst = out + jp * kc * kNR;
    if (!trans_b) {
#if HWY_TARGET != HWY_SCALAR
      if (nr == kNR) {
        // Whole panels with vector moves: a memcpy call per 2-vector row costs more than the copy.
        const hn::ScalableTag<float> d;
        const size_t nl = hn::Lanes(d);
        const float* src = b + p0 * ldb + j0 + j;
        for (int64_t p = 0; p < kc; ++p, src += ldb) {
          hn::StoreU(hn::LoadU(d, src), d, dst + p * kNR);
          hn::StoreU(hn::LoadU(d, src + nl), d, dst + p * kNR + nl);
        }
        continue;
      }
#endif
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = b + (p0 + p) * ldb + j0 + j;
        float* o = dst + p * kNR;
        std::memcpy(o, src, static_cast<size_t>(nr) * sizeof(float));
        for (int64_t q = nr; q < kNR; ++q) o[q] = 0.0f;
      }
    } else {
      for (int64_t q = 0; q < kNR; ++q) {
        if (q < nr) {
          const float* src = b + (j0 + j + q) * ldb + p0;
          for (int64_t p = 0; p < kc; ++p) dst[p * kNR + q] = src[p];
        } else {
          for (int64_t p = 0; p < kc; ++p) dst[p * kNR + q] = 0.0f;
        }
      }
    }
  }
}

// Packs op(A)[i0:i0+mc, p0:p0+kc] into ceil(mc/MR) panels, each kc x MR, zero-padded.
void pack_a(bool trans_a, const float* a, int64_t lda, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
            float* out) {
  for (int64_t i = 0; i < mc; i += kMR) {
    const int64_t mr = std::min(kMR, mc - i);
    float* dst = out + (i / kMR) * kc * kMR;
    if (trans_a) {
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = a + (p0 + p) * lda + i0 + i;
        float* o = dst + p * kMR;
        for (int64_t r = 0; r < mr; ++r) o[r] = src[r];
        for (int64_t r = mr; r < kMR; ++r) o[r] = 0.0f;
      }
    } else {
      for (int64_t r = 0; r < kMR; ++r) {
        if (r < mr) {
          const float* src = a + (i0 + i + r) * lda + p0;
          for (int64_t p = 0; p < kc; ++p) dst[p * kMR + r] = src[p];
        } else {
          for (int64_t p = 0; p < kc; ++p) dst[p * kMR + r] = 0.0f;
        }
      }
    }
  }
}

// Few rows and row-major B: packing B would cost as much as the product, so stream B's rows once
// per row of C with vector AXPYs (memory bound; the matrix-vector case of MatMul/Gemm).
void small_m_gemm(bool trans_a, int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* crow = c + i * ldc;
    for (int64_t j = j0; j < j1; ++j) crow[j] = beta == 0.0f ? 0.0f : beta * crow[j];
    for (int64_t p = 0; p < k; ++p) {
      const float av = alpha * (trans_a ? a[p * lda + i] : a[i * lda + p]);
      const float* brow = b + p * ldb;
      int64_t j = j0;
#if HWY_TARGET != HWY_SCALAR
      const hn::ScalableTag<float> d;
      const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
      const auto va = hn::Set(d, av);
      for (; j + nl <= j1; j += nl)
        hn::StoreU(hn::MulAdd(va, hn::LoadU(d, brow + j), hn::LoadU(d, crow + j)), d, crow + j);
#endif
      for (; j < j1; ++j) crow[j] += av * brow[j];
    }
  }
}

// Few rows and transposed B (B stored N x K, as in Gemm transB=1 / Linear layers): each C element
// is a dot product of two contiguous K-vectors, so B is streamed once without packing.
void small_m_gemm_tb(bool trans_a, int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha, const float* a,
                     int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  thread_local std::vector<float> arow_buf;  // grown once per thread: no allocation per call
  for (int64_t i = 0; i < m; ++i) {
    const float* arow = a + i * lda;
    if (trans_a) {
      arow_buf.resize(static_cast<size_t>(k));
      for (int64_t p = 0; p < k; ++p) arow_buf[static_cast<size_t>(p)] = a[p * lda + i];
      arow = arow_buf.data();
    }
    float* crow = c + i * ldc;
    for (int64_t j = j0; j < j1; ++j) {
      const float* brow = b + j * ldb;
      int64_t p = 0;
      float sum = 0.0f;
#if HWY_TARGET != HWY_SCALAR
      const hn::ScalableTag<float> d;
      const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
      auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
      for (; p + 4 * nl <= k; p += 4 * nl) {
        s0 = hn::MulAdd(hn::LoadU(d, arow + p), hn::LoadU(d, brow + p), s0);
        s1 = hn::MulAdd(hn::LoadU(d, arow + p + nl), hn::LoadU(d, brow + p + nl), s1);
        s2 = hn::MulAdd(hn::LoadU(d, arow + p + 2 * nl), hn::LoadU(d, brow + p + 2 * nl), s2);
        s3 = hn::MulAdd(hn::LoadU(d, arow + p + 3 * nl), hn::LoadU(d, brow + p + 3 * nl), s3);
      }
      for (; p + nl <= k; p += nl) s0 = hn::MulAdd(hn::LoadU(d, arow + p), hn::LoadU(d, brow + p), s0);
      sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
#endif
      for (; p < k; ++p) sum += arow[p] * brow[p];
      crow[j] = alpha * sum + (beta == 0.0f ? 0.0f : beta * crow[j]);
    }
  }
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

// Sizes this thread's packing buffers to their bounds once, so that no later call grows them.
void sgemm_prepare_thread_impl() {
  std::vector<float>& a = thread_a_buffer();
  if (a.size() < static_cast<size_t>(kMC * kKC)) a.resize(static_cast<size_t>(kMC * kKC));
  thread_b_buffer(kMaxPanelFloats);
}

}  // namespace

namespace {

// `pre` (may be null): op(A) already packed by sgemm_pack_a; used by the blocked path only.
// `a` may be null when `pre` is given: then the blocked path runs whatever the shape.
void sgemm_impl(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool,
                const SgemmPackedA* pre) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.0f) {
    for (int64_t i = 0; i < m; ++i) {
      float* crow = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) crow[j] = beta == 0.0f ? 0.0f : beta * crow[j];
    }
    return;
  }
  const bool threaded = pool != nullptr && pool->num_threads() > 1;
  if (a && m <= 2 && !trans_b) {
    constexpr int64_t kCols = 512;
    const int64_t chunks = (n + kCols - 1) / kCols;
    auto run = [&](int64_t c0, int64_t c1) {
      small_m_gemm(trans_a, m, c0 * kCols, std::min(n, c1 * kCols), k, alpha, a, lda, b, ldb, beta, c, ldc);
    };
    if (threaded && chunks > 1 && m * n * k > (1 << 16)) pool->parallel_for(chunks, 1, run);
    else run(0, chunks);
    return;
  }
  if (a && n <= 8 && !trans_a && m * n * k < (int64_t{1} << 24)) {
    // Few columns (strided 1-D convs, matrix-vector with the vector on the right): packing A
    // would cost as much as the product. Transpose B into K-contiguous rows, then every C
    // element is a dot product of an A row with one of them.
    const float* bt = b;
    int64_t ldbt = ldb;
    std::vector<float> large_bt;
    if (!trans_b) {
      // The blocked path's B buffer is free here (this path returns before it); it was sized for
      // the largest panel by sgemm_prepare_thread, so only an unusually long K allocates.
      float* bt_buf = nullptr;
      if (static_cast<size_t>(n * k) <= kMaxPanelFloats) {
        bt_buf = thread_b_buffer(kMaxPanelFloats);
      } else {
        large_bt.resize(static_cast<size_t>(n * k));
        bt_buf = large_bt.data();
      }
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) bt_buf[j * k + p] = b[p * ldb + j];
      bt = bt_buf;
      ldbt = k;
    }
    constexpr int64_t kRows = 16;
    const int64_t chunks = (m + kRows - 1) / kRows;
    auto run = [&](int64_t c0, int64_t c1) {
      const int64_t i0 = c0 * kRows, i1 = std::min(m, c1 * kRows);
      small_m_gemm_tb(false, i1 - i0, 0, n, k, alpha, a + i0 * lda, lda, bt, ldbt, beta, c + i0 * ldc, ldc);
    };
    if (threaded && chunks > 1 && m * n * k > (1 << 16)) pool->parallel_for(chunks, 1, run);
    else run(0, chunks);
    return;
  }
  if (a && m <= 2 && trans_b) {
    constexpr int64_t kCols = 64;
    const int64_t chunks = (n + kCols - 1) / kCols;
    auto run = [&](int64_t c0, int64_t c1) {
      small_m_gemm_tb(trans_a, m, c0 * kCols, std::min(n, c1 * kCols), k, alpha, a, lda, b, ldb, beta, c, ldc);
    };
    if (threaded && chunks > 1 && m * n * k > (1 << 16)) pool->parallel_for(chunks, 1, run);
    else run(0, chunks);
    return;
  }
  // Sized for the largest slice up front: B panels of at most KC x NC.
  float* const pb = thread_b_buffer(static_cast<size_t>(((std::min(kNC, n) + kNR - 1) / kNR) * kNR *
                                                        std::min(kKC, k)));
  for (int64_t j0 = 0; j0 < n; j0 += kNC) {
    const int64_t nc = std::min(kNC, n - j0);
    const int64_t npanels = (nc + kNR - 1) / kNR;
    for (int64_t p0 = 0; p0 < k; p0 += kKC) {
      const int64_t kc = std::min(kKC, k - p0);
      const bool first = p0 == 0;
      if (threaded && npanels > 1) {
        pool->parallel_for(npanels, 4, [&](int64_t pb0, int64_t pb1) {
          pack_b(trans_b, b, ldb, p0, kc, j0, nc, pb0, pb1, pb);
        });
      } else {
        pack_b(trans_b, b, ldb, p0, kc, j0, nc, 0, npanels, pb);
      }
      const int64_t mblocks = (m + kMC - 1) / kMC;
      // Enough tasks to feed every thread: narrower column chunks for small products.
      int64_t chunk = kNChunk;
      if (threaded)
        while (chunk > kNR && mblocks * ((nc + chunk - 1) / chunk) < 2 * pool->num_threads()) chunk /= 2;
      const int64_t nchunks = (nc + chunk - 1) / chunk;
      auto task = [&](int64_t t0, int64_t t1) {
        std::vector<float>& abuf = thread_a_buffer();
        const size_t need = static_cast<size_t>(kMC * kc);
        if (!pre && abuf.size() < need) abuf.resize(need);
        int64_t packed_block = -1;
        for (int64_t t = t0; t < t1; ++t) {
          // Tasks run M-block-major so a thread's consecutive tasks reuse its packed A block.
          const int64_t ib = t / nchunks, jb = t % nchunks;
          const int64_t i0 = ib * kMC, mc = std::min(kMC, m - i0);
          const float* ap = abuf.data();
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
              micro_kernel(kc, ap + (i / kMR) * kc * kMR, bp, c + (i0 + i) * ldc + j0 + j, ldc,
                           std::min(kMR, mc - i), nr, alpha, beta, first);
            }
          }
        }
      };
      const int64_t ntasks = mblocks * nchunks;
      if (threaded && ntasks > 1) pool->parallel_for(ntasks, 1, task);
      else task(0, ntasks);
    }
  }
}

}  // namespace

void sgemm_pack_a_impl(SgemmPackedA& pa, const float* a, int64_t lda) {
  const int64_t m = pa.m, k = pa.k;
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

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(sgemm_impl);
HWY_EXPORT(sgemm_pack_a_impl);
HWY_EXPORT(sgemm_prepare_thread_impl);

void sgemm_prepare_thread() { HWY_DYNAMIC_DISPATCH(sgemm_prepare_thread_impl)(); }

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(sgemm_impl)(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool, nullptr);
}

SgemmPackedA sgemm_pack_a(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda) {
  SgemmPackedA pa;
  pa.m = m;
  pa.k = k;
  pa.trans_a = trans_a;
  HWY_DYNAMIC_DISPATCH(sgemm_pack_a_impl)(pa, a, lda);
  return pa;
}

void sgemm_prepacked(const SgemmPackedA& pa, const float* a, int64_t lda, bool trans_b, int64_t n, float alpha,
                     const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(sgemm_impl)(pa.trans_a, trans_b, pa.m, n, pa.k, alpha, a, lda, b, ldb, beta, c, ldc, pool, &pa);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
