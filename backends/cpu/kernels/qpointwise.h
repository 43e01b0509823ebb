// Pointwise (1x1, stride 1) QLinearConv as W x X on AVX-512 VNNI with the operands the other way
// round from qgemm's: the activations (qgemm_pack_b_rows' k-quad panels of the NCHW input) are
// vpdpbusd's u8 operand and the s8 weights its broadcast s8 operand, so neither is shifted: no
// column sums of the activations and no per-column correction, only bias - x_zp * sum(w) per
// output channel, added in registers with the requantization before the codes are stored to the
// channel's NCHW row (qgemm's W x X path stores an i32 tile and requantizes it from memory).
// Outputs bit-identical to qgemm's kQuant (same exact sums, same f32 output stage).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/kernels/qgemm.h"
#include "core/base/thread_pool.h"

namespace tsr::cpu {

// Constant s8 weights W [M, K] (zero point 0) in panels of qpointwise's rows: panel p, quad q,
// row r holds W[p * rows + r][4q .. 4q + 3] (zeros past M and K); wsum[i] = sum_k W[i][k].
struct QPointwiseWeights {
  int64_t m = 0, k = 0;
  std::vector<int8_t> data;
  std::vector<int32_t> wsum;
};
QPointwiseWeights qpointwise_pack(const int8_t* w, int64_t m, int64_t k);

// Where qpointwise writes: output channel i's codes at y + i * pixels (u8, or s8 with y_signed):
// saturate(nearbyint(float(acc_i + bias[i]) * scale[i]) + y_zp), bias null for none.
struct QPointwiseOut {
  void* y = nullptr;
  int64_t pixels = 0;
  const int32_t* bias = nullptr;
  const float* scale = nullptr;
  int32_t y_zp = 0;
  bool y_signed = false;
};

// acc_i[p] = sum_k W[i][k] * (X[k][p] - x_zp) with X the activations packed by
// qgemm_pack_b_rows (K = w.k rows of `pixels` columns, u8 or s8 per x_signed), then `out`.
// Returns false, writing nothing, where this path does not run (no VNNI, or `act` packed for
// another SIMD target): the caller then takes qgemm.
bool qpointwise(const QPointwiseWeights& w, const QgemmPackedB& act, int32_t x_zp, bool x_signed,
                const QPointwiseOut& out, ThreadPool* pool);

// Whether qpointwise runs on this CPU (AVX-512 VNNI, and not turned off for tests): a caller
// may then take the W x X orientation for any shape (its weights prepacked once).
bool qpointwise_available();

// Tests: turns the path off (true) or back on (false). Not thread-safe against running convs.
void qpointwise_disable_for_test(bool disable);

}  // namespace tsr::cpu
