// Shared 8-bit integer GEMM for the quantized CPU kernels (MatMulInteger, QLinearMatMul,
// ConvInteger, QLinearConv, com.microsoft::DynamicQuantizeMatMul / MatMulIntegerToFloat).
//
// qgemm computes, for a row-major A (M x K, u8 or s8, one zero point) and a B (K x N, u8 or s8,
// zero point per tensor or per column) packed once by qgemm_pack_b, the exact i32 sums
//   acc[i][j] = sum_k (A[i][k] - a_zp) * (B[k][j] - b_zp[j])
// and hands them to an output stage (QgemmOutput): i32 as is, f32 scaled (dynamic quantization,
// MatMulIntegerToFloat) or requantized to u8/s8 (QLinear*). The sums are exact for any K below
// 2^15 and any zero points (i32 cannot overflow: |term| <= 255 * 255, K * 65025 < 2^31).
//
// Arithmetic: the kernels multiply u8 x s8. An s8 A is shifted to u8 (a + 128, zero point + 128)
// and a u8 B to s8 (b - 128, zero point - 128) before packing; the zero points are then folded in
// with row and column sums: sum (a - za)(b - zb) = sum ab - zb sum a - za sum b + K za zb.
// Packed B records the SIMD target that packed it (its layout differs per target, as for
// SgemmPackedA): a product run by another target repacks from the kept copy instead of reading a
// layout it did not write.
//
// Kernels (qgemm.cpp, qgemm_kernels-inl.h): B in panels of k-quads (4 consecutive k of a column
// in one 32-bit lane); AVX-512 VNNI vpdpbusd where the CPU has it (runtime check), else exact i16
// widening with vpmaddwd (AVX-512, AVX2); aarch64 sdot where HWCAP_ASIMDDP says so, else vmlal;
// WASM SIMD128 i32x4.dot_i16x8; plain C++ elsewhere. Results are identical on every path.
#pragma once

#include <cstdint>
#include <vector>

#include "core/base/thread_pool.h"

namespace tsr::ops {
struct ActivationSpec;  // core/ops/fused_activation.h
}

namespace tsr::cpu {

// B (K x N) packed for qgemm; built once per constant weight, read-only afterwards (thread-safe).
struct QgemmPackedB {
  int64_t k = 0, n = 0;
  int64_t target = 0;               // the SIMD target whose layout `data` holds (0: empty; the
                                    // HWY_TARGET that packed it, see qgemm_kernels-inl.h)
  std::vector<int8_t> data;         // B - 128 for u8 B, as is for s8 B, in the target's layout
  std::vector<int8_t> plain;        // the same s8 values, row-major K x N (repacking, references)
  std::vector<int32_t> col_sum;     // sum_k plain[k][j], per column
  std::vector<int32_t> zp;          // the zero point of each column, shifted as `plain`
};

// Packs B: K x N row-major with row stride ldb (trans_b false), or N x K (trans_b true: B[j][k]
// at b[j * ldb + k]). `b_signed` picks s8 (true) or u8. `b_zp` (same type as B) has 0 entries
// (zero point 0), 1 (per tensor) or N (per column). K and N must be >= 0 and K < 2^15.
QgemmPackedB qgemm_pack_b(int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb, bool trans_b,
                          const void* b_zp, int64_t zp_count);

// Packs a row-major K x N B (row stride ldb) with one zero point `b_zp` for this call's qgemm on
// the current SIMD target, into `*p`, reusing its buffers (no allocation once they are large
// enough): activations as B, e.g. a pointwise conv's NCHW input [C, H*W]. Keeps no `plain` copy,
// so `*p` is valid only until the dispatch target changes (qgemm then fails its target check).
// col_sums false leaves p->col_sum empty, for a reader that needs no column sums (qpointwise.h):
// qgemm must not run on such a `*p`. With a `pool`, large B is packed in column panels over it.
void qgemm_pack_b_rows(int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb, int32_t b_zp,
                       QgemmPackedB* p, bool col_sums = true, ThreadPool* pool = nullptr);

// A (M x K, u8 or s8) packed once for qgemm_packed: constant weights as A, e.g. a pointwise
// conv's W in the W x X orientation (qconv.cpp), so that calls skip packing it. The panels are
// those of the SIMD target and qgemm path (VNNI / widening / sdot) current when it was packed;
// qgemm_packed uses them only while both are unchanged, and packs from the plain A otherwise.
// Read-only after packing (thread-safe).
struct QgemmPackedA {
  int64_t m = 0, k = 0;
  bool a_signed = false;
  int64_t target = 0;          // the HWY_TARGET that packed it (0: empty)
  int enc = 0;                 // the path's A encoding (qgemm_kernels-inl.h AEnc)
  int64_t mr = 0;              // the path's rows per tile
  std::vector<uint8_t> data;   // the panels, as qgemm packs them per call
  std::vector<int32_t> rowsum; // u8 row sums (of a + 128 for s8 A), per panel row
};

// Packs A: M x K row-major with row stride lda, `a_signed` s8 (true) or u8; K < 2^15.
QgemmPackedA qgemm_pack_a(int64_t m, const void* a, bool a_signed, int64_t lda, int64_t k);

// What qgemm writes for each acc[i][j] (element at out + i * row_stride + j * col_stride, so a
// transposed C, e.g. NCHW conv output from pixel-major rows, costs nothing extra):
//   kInt32: acc + bias_i32[j]                                            -> int32_t
//   kFloat: float(acc + bias_i32[j]) * scale[j] + bias_f32[j]            -> float
//   kQuant: saturate(nearbyint(float(acc + bias_i32[j]) * scale[j]) + out_zp) -> u8 or s8
// bias_i32 / bias_f32 may be null (0). With per_row, bias_i32[i] and scale[i] go by row instead
// (kInt32 and kQuant; the output channels of a conv computed as W x X, NCHW without transposes).
// Otherwise `scale` has 1 entry (scale_per_col false) or N; for
// kFloat it is a_scale * b_scale[j], for kQuant a_scale * b_scale[j] / y_scale, each computed by
// the caller in f32 in that order (onnxruntime's rounding). nearbyint rounds half to even.
// `act` (null: none; read for kFloat with col_stride 1 only): the fused activation (epilogue.h, as FusedGemm
// applies it) on each block of f32 outputs right after the block is written, while it is in cache
// (a transformer MLP's Gelu after fc1), instead of a separate pass over the whole output.
struct QgemmOutput {
  enum Kind { kInt32, kFloat, kQuant } kind = kInt32;
  void* out = nullptr;
  int64_t row_stride = 0, col_stride = 1;  // in elements of the output type
  const int32_t* bias_i32 = nullptr;
  const float* bias_f32 = nullptr;
  const float* scale = nullptr;
  bool scale_per_col = false;
  bool per_row = false;     // bias_i32 and scale by row (see above)
  bool out_signed = false;  // kQuant: s8 (true) or u8
  int32_t out_zp = 0;       // kQuant
  const ops::ActivationSpec* act = nullptr;  // kFloat, col_stride 1 (see above)
};

// acc = (A - a_zp) x (B - b_zp) for A M x K (row stride lda, u8 or s8 per `a_signed`, a_zp in A's
// type's range), then the output stage. Work is split over `pool` (null: inline).
void qgemm(int64_t m, const void* a, bool a_signed, int64_t lda, int32_t a_zp, const QgemmPackedB& b,
           const QgemmOutput& out, ThreadPool* pool);

// qgemm with A gathered instead of stored: row i of A (K = b.k bytes) is the K / seg runs of `seg`
// bytes at a + off[i * (K / seg) + s], s < K / seg: a conv's im2col rows read in place from its
// HWC input (an indirection table: a run per tap, padding taps pointing at a run of zero points),
// without writing the im2col matrix. seg must be a positive multiple of 4 that divides K (runs
// of a multiple of 16 bytes pack fastest; others byte by byte). On the AVX-512 VNNI path, for a u8
// A and every B zero point 0 (symmetric weights), the tiles broadcast A's quads from the runs in
// place (no A panels at all: qgemm_gather_in_place); otherwise the runs are packed as A's rows.
// `pad` (not null): a run of seg bytes that negative offsets name instead of a + off (a conv's
// padding taps, where a run after the image would need a copy of it: 32-bit offsets cannot reach
// a separate buffer). Offsets are otherwise >= 0.
void qgemm_gather(int64_t m, const void* a, const int32_t* off, int64_t seg, bool a_signed, int32_t a_zp,
                  const QgemmPackedB& b, const QgemmOutput& out, ThreadPool* pool, const void* pad = nullptr);

// Whether qgemm_gather reads a u8 A with zero B zero points in place on this CPU (its path has
// gather tiles: AVX-512 VNNI).
bool qgemm_gather_in_place();

// qgemm with A prepacked by qgemm_pack_a (pa); `a` (row stride lda) is the same A unpacked, read
// only when pa is not for this target and path.
void qgemm_packed(const QgemmPackedA& pa, const void* a, int64_t lda, int32_t a_zp, const QgemmPackedB& b,
                  const QgemmOutput& out, ThreadPool* pool);

// Byte transpose: dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols (no
// overlap). SIMD 16 x 16 blocks (Highway interleaves), a byte loop for the last rows and columns
// past a multiple of 16. The int8 kernels' layout changes: a requantized conv output from
// pixel-major rows to NCHW, an NCHW input to HWC for im2col.
void transpose_bytes(const uint8_t* src, int64_t rows, int64_t cols, int64_t src_stride, uint8_t* dst,
                     int64_t dst_stride);

// The SIMD path qgemm takes on this CPU now ("AVX512-VNNI", "AVX2", "NEON-dot", "NEON", "WASM",
// "scalar"): benchmarks and tests name it.
const char* qgemm_target();

// Tests only: with `disable` true, the VNNI (x86) and sdot (aarch64) paths are not taken even
// where the CPU has them, so the widening fallbacks of the same target run (vpmaddwd, vmlal).
// Both read the same packed B. Not thread-safe against concurrent qgemm calls' path choice.
void qgemm_disable_dot_for_test(bool disable);

}  // namespace tsr::cpu
