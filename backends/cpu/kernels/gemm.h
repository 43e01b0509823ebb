// Shared single-precision GEMM for CPU kernels (MatMul, Gemm, Conv via im2col, attention).
//
// sgemm computes C = alpha * op(A) * op(B) + beta * C for row-major matrices with leading
// dimensions (row strides, in elements):
//   op(A) is M x K: A[i*lda + k] (trans_a false) or A[k*lda + i] (trans_a true)
//   op(B) is K x N: B[k*ldb + j] (trans_b false) or B[j*ldb + k] (trans_b true)
//   C     is M x N: C[i*ldc + j]
// When beta == 0, C is not read (it may hold NaN/garbage), as in BLAS. K == 0 scales C by beta.
// The implementation is blocked and packed in the style of Goto/BLIS ("Anatomy of
// High-Performance Matrix Multiplication", Goto & van de Geijn 2008): B is packed into
// KC x NR panels, A into MR x KC panels, and a Highway micro-kernel accumulates an MR x NR tile
// of C in registers with FMAs. Work is split over (M block, N chunk) tiles on `pool` (null or a
// one-thread pool: runs inline). A, B and C must not overlap. Thread-safe for distinct C.
#pragma once

#include <cstdint>
#include <vector>

#include "core/base/thread_pool.h"

namespace tsr::cpu {

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
           ThreadPool* pool);

// op(A) (M x K) packed once in sgemm's blocked layout, for products that reuse one A many times
// (constant Conv/MatMul weights).
// The layout depends on the SIMD target that packed it (its tile rows and cache blocks, recorded
// in mr/mc/kc): a product run by another target (the dispatch changed in between, as the tests and
// bench/gemm do with hwy::SetSupportedTargetsForTest) sees the mismatch and reads A raw, or unpacks
// `data` when no raw A is given, so a packed A is never read in a layout it was not written in.
struct SgemmPackedA {
  int64_t m = 0, k = 0;
  bool trans_a = false;
  int64_t mr = 0, mc = 0, kc = 0;  // the packing target's geometry (0: empty)
  std::vector<float> data;
};
SgemmPackedA sgemm_pack_a(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda);
// sgemm_pack_a into `pa`, reusing its buffer: no allocation once it has held a matrix this large
// (a thread's packed block reused call after call: attention's query block against each block of
// keys).
void sgemm_pack_a_into(SgemmPackedA& pa, bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda);

// sgemm with A given pre-packed (`pa`) and raw (`a`, `lda`, as packed: the shape-specialized
// paths for tiny M or N read it unpacked; null keeps every shape on the packed path, for callers
// that do not keep the raw matrix). Same contract as sgemm otherwise.
void sgemm_prepacked(const SgemmPackedA& pa, const float* a, int64_t lda, bool trans_b, int64_t n, float alpha,
                     const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool);

// op(B) (K x N) packed once in sgemm's panel layout, for products that reuse one B many times: a
// conv's constant weights as B (W^T, the output channels along the vector lanes; nn.cpp's
// small-plane path). Like SgemmPackedA, the layout is the packing target's (nr, kc recorded): a
// product run by another target reads B raw instead.
struct SgemmPackedB {
  int64_t k = 0, n = 0;
  bool trans_b = false;
  int64_t nr = 0, kc = 0;  // the packing target's panel width and K block (0: empty)
  std::vector<float> data;
};
SgemmPackedB sgemm_pack_b(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb);

// C (M x N) = alpha * op(A) * op(B) + beta * C with op(B) given pre-packed (`pb`) and raw (`b`,
// `ldb`, not null: read only where `pb` was packed by another SIMD target). Every shape takes the
// blocked path (the few-row and few-column paths read B raw). Same contract as sgemm otherwise.
// `cin` (may be null; needs ldc >= n): C = alpha * op(A) * op(B) + beta * Cin instead, C's row i
// not read and Cin's row i at cin + i * ld_cin (ld_cin 0: one [N] row for every row, a Gemm's
// bias), read by the tiles as they store their first K block: the same sums as copying Cin into C
// first (bit-identical), without that pass over C. Cin must not overlap C.
void sgemm_prepacked_b(bool trans_a, int64_t m, float alpha, const float* a, int64_t lda, const SgemmPackedB& pb,
                       const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool,
                       const float* cin = nullptr, int64_t ld_cin = 0);

// Sizes the calling thread's packing buffers (kept per thread, reused by every sgemm on it) to
// their largest, so that later calls on this thread never allocate them: the CPU backend's
// Backend::prepare_thread, run on every pool thread before any run (issue 12).
void sgemm_prepare_thread();

// The SIMD target sgemm dispatches to now (Highway's name, e.g. "AVX3", "AVX2"): its tile and
// cache blocks differ, so benchmarks and tests name it.
const char* sgemm_target();

// Plain reference for any arithmetic T (f64 MatMul/Gemm, integer MatMul, tests): same contract
// as sgemm, accumulating in T, single-threaded.
template <typename T>
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                    int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T* crow = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) crow[j] = beta == T(0) ? T(0) : T(beta * crow[j]);
    for (int64_t p = 0; p < k; ++p) {
      const T av = T(alpha * (trans_a ? a[p * lda + i] : a[i * lda + p]));
      if (!trans_b) {
        const T* brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
      } else {
        for (int64_t j = 0; j < n; ++j) crow[j] += av * b[j * ldb + p];
      }
    }
  }
}

}  // namespace tsr::cpu
