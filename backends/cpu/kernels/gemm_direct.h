// A GEMM for few output rows that reads B where it lies, for the CPU Conv kernels (nn.cpp: the
// pointwise convs and the im2col blocks; winograd.cpp: the 36 products per block of tiles).
//
// sgemm_direct computes C = act(A * B + bias (one value per row of C) + Z) for row-major matrices
// (leading dimensions are row strides, in elements): A is M x K, B is K x N, C and Z are M x N.
// C is only written, never read; bias and Z may be null. B is read in place, one strip of
// columns at a time (4 vectors wide with AVX-512's 32 registers, 2 with 16), by every chunk of up
// to 6 rows of C held in registers, with bias and Z added before the store. The packed SGEMM
// (gemm.h) first copies B into panels of KC x 4096 columns: with few rows that copy is not
// amortized, and the panels no longer fit L1 (BlazeFace's 24 x 24 1x1 convs spent a fifth of
// their time there). Measured against it (AVX-512 and AVX2, M <= 64, any K and N): equal to 2x
// faster, most where C's rows are a multiple of 4 KiB apart.
//
// A is used as packed by sgemm_direct_pack_a: chunks of up to 6 rows, each transposed (K x rows),
// the same layout for every SIMD target. The overload taking A raw packs it into a per-thread
// buffer first (M * K floats per call).
//
// Single-threaded: callers split C's columns over threads. Thread-safe for distinct C. A, B and C
// must not overlap; Z may be C itself (each element of Z is read before it is overwritten).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/base/selective.h"
#include "core/ops/fused_activation.h"

namespace tsr::cpu {

// The most rows of C one chunk holds in registers.
inline constexpr int64_t kMaxDirectRows = 6;
// Up to this many rows sgemm_direct is ahead whatever N (measured against the packed SGEMM on the
// models' shapes, AVX-512 and AVX2).
inline constexpr int64_t kMaxDirectM = 64;
// From this many columns, with at most kMaxDirectWideK terms, sgemm_direct is ahead whatever M
// (equal to 2.2x: 96 x 16 x 25600, the expansion convs of M-LSD). Below, with more rows than
// kMaxDirectM, packing B pays (openWakeWord's 96 x 288 x 20: 7.2 against 9.2 us), and so it does
// inside PP-OCRv4 rec's 96..480-channel 1x1 convs (K up to 480: its B strips no longer fit L1
// while every 6-row chunk rereads them; the whole model ran 7% slower).
inline constexpr int64_t kMinDirectWideN = 256;
inline constexpr int64_t kMaxDirectWideK = 64;

inline int64_t direct_chunks(int64_t m) { return (m + kMaxDirectRows - 1) / kMaxDirectRows; }
// First row of chunk i (0 <= i <= direct_chunks(m)): sizes differ by at most one.
inline int64_t direct_chunk_row(int64_t m, int64_t i) {
  const int64_t chunks = direct_chunks(m);
  return i * (m / chunks) + std::min(i, m % chunks);
}

struct SgemmDirectA {
  int64_t m = 0, k = 0;
  std::vector<float> data;  // m * k floats
};
SgemmDirectA sgemm_direct_pack_a(int64_t m, int64_t k, const float* a, int64_t lda);
// The same layout into `out` (m * k floats).
void sgemm_direct_pack_a_into(int64_t m, int64_t k, const float* a, int64_t lda, float* out);

// `act` (may be null): the fused activation (ops/fused_activation.h), applied to each element of
// C after bias and Z, in registers.
void sgemm_direct(const SgemmDirectA& a, int64_t n, const float* b, int64_t ldb, const float* bias, const float* z,
                  int64_t ldz, float* c, int64_t ldc, const ops::ActivationSpec* act = nullptr);
void sgemm_direct(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                  const float* bias, const float* z, int64_t ldz, float* c, int64_t ldc,
                  const ops::ActivationSpec* act = nullptr);
// A packed by sgemm_direct_pack_a_into (m * k floats at `packed_a`): for a caller that packs a
// weight from an input once per call and runs many column blocks with it (a conv in training,
// whose weights are inputs: the packing then takes no per-thread buffer, see nn.cpp).
void sgemm_direct_packed(int64_t m, int64_t n, int64_t k, const float* packed_a, const float* b, int64_t ldb,
                         const float* bias, const float* z, int64_t ldz, float* c, int64_t ldc,
                         const ops::ActivationSpec* act = nullptr);

// B given by rows: row p of B is brows[p] + col0 .. + n - 1 (any addresses, e.g. shifted views of
// one padded input plane: the implicit-GEMM conv of conv_implicit.h).
void sgemm_direct_rows(const SgemmDirectA& a, int64_t n, const float* const* brows, int64_t col0, const float* bias,
                       const float* z, int64_t ldz, float* c, int64_t ldc, const ops::ActivationSpec* act = nullptr);

// The calling thread's tables of sgemm_direct: B's row pointers and the zero-padded last columns
// (kept per thread, grown only). sgemm_direct_prepare_thread sizes them for K up to
// kPreparedDirectK on each pool thread before any run (Backend::prepare_thread), so that a run
// grows them only for a larger K; the memory is reserved, not touched, until used.
inline constexpr int64_t kPreparedDirectK = 16384;
struct DirectThreadScratch {
  const float** brows(size_t n) { return grow(brows_, brows_cap_, n); }
  const float** tail_rows(size_t n) { return grow(tail_rows_, tail_rows_cap_, n); }
  float* tail(size_t n) { return grow(tail_, tail_cap_, n); }

 private:
  template <typename T>
  static T* grow(std::unique_ptr<T[]>& p, size_t& cap, size_t n) {
    if (n > cap) {
      p.reset(new T[n]);
      cap = n;
    }
    return p.get();
  }
  std::unique_ptr<const float*[]> brows_, tail_rows_;
  std::unique_ptr<float[]> tail_;
  size_t brows_cap_ = 0, tail_rows_cap_ = 0, tail_cap_ = 0;
};
DirectThreadScratch& direct_thread_scratch();
void sgemm_direct_prepare_thread();

// Whether an M x K times K x N product should take sgemm_direct rather than the packed sgemm
// (n < 0: not known yet; then only M decides). Weights with more than kMaxDirectM rows are packed
// for both. Never in the size-first kernel set (core/base/selective.h).
inline bool sgemm_direct_preferred(int64_t m, int64_t n, int64_t k) {
  return !kSizeFirstKernels && (m <= kMaxDirectM || (n >= kMinDirectWideN && k <= kMaxDirectWideK));
}

}  // namespace tsr::cpu
