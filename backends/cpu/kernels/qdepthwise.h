// The per-channel compute of a quantized depthwise convolution (QLinearConv / ConvInteger with
// one input and one output channel per group: qconv.cpp) on the f32 depthwise loops of the
// float Conv (depthwise.h), dispatched to the best SIMD target, with the output stage applied to
// each vector of sums while it is in registers.
//
// Exactness: the centered operands (x - x_zp, w - w_zp) are integers in [-255, 255], so every
// product has |p| <= 65025 and, for at most kQDepthwiseMaxTaps taps, every partial sum stays
// below 2^24, where f32 represents integers exactly: the f32 sums (with FMAs, in any order) are the
// exact i32 sums. Larger windows take qconv.cpp's integer loop.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/kernels/nn_window.h"

namespace tsr::cpu {

inline constexpr int64_t kQDepthwiseMaxTaps = 258;  // 258 * 65025 < 2^24

// What qdepthwise_plane writes for each exact sum `acc` of a channel: kInt32 acc itself (int32_t,
// ConvInteger); kU8 / kS8 the requantized saturate(nearbyint(float(acc + bias) * scale) + zp) as
// uint8_t / int8_t (QLinearConv; the rounding of qgemm's kQuant, qgemm.h: half to even, in f32).
struct QDepthwiseStage {
  enum Kind { kInt32, kU8, kS8 } kind = kInt32;
  int32_t bias = 0;    // the channel's i32 bias (kU8 / kS8)
  float scale = 1.0f;  // x_scale * w_scale[ch] / y_scale, computed by the caller (kU8 / kS8)
  int32_t zp = 0;      // output zero point (kU8 / kS8)
};

// Floats of scratch qdepthwise_plane needs for window w (w.in/out/k/s/d/pb/pe over [1, H, W]).
int64_t qdepthwise_scratch_floats(const Window3& w);

// One channel plane x (u8 or s8 [H, W]) convolved with wk, the centered weights (w - w_zp) as f32
// [KH, KW]: y[oh * OW + ow] = stage(sum over taps of (x - x_zp) * wk), y an [OH, OW] plane of
// stage.kind's type; padding contributes 0 (the input zero point). x_bytes (>= H * W): bytes
// readable from x (the rest of its tensor), which lets the rows' last partial vectors load whole.
// scratch: qdepthwise_scratch_floats(w) floats. Windows of at most kQDepthwiseMaxTaps taps.
// 3x3 windows with strides 1 or 2 and no dilation, on a CPU with AVX-512 VNNI and VBMI, run on
// the codes instead (vpermb + vpdpbusd, qdepthwise.cpp) when the centered weights fit in s8 (as
// symmetric weights do): the same outputs, bit for bit.
void qdepthwise_plane(const void* x, bool x_signed, int32_t x_zp, int64_t x_bytes, const float* wk, const Window3& w,
                      const QDepthwiseStage& stage, float* scratch, void* y);

// A whole depthwise conv's operands for qdepthwise_planes: x u8/s8 [N, C, H, W] (x_bytes: its
// size), w the codes [C, 1, KH, KW] (u8/s8) with w_zp null, one code, or one per channel (codes of
// w's type), the output stage per channel (bias: i32 [C] or null; scale: f32 [C], x_scale *
// w_scale[ch] / y_scale; both unused for kInt32), y [N, C, OH, OW] of kind's type.
struct QDepthwiseBatch {
  const void* x = nullptr;
  bool x_signed = false;
  int32_t x_zp = 0;
  int64_t x_bytes = 0;
  const void* w = nullptr;
  bool w_signed = true;
  const void* w_zp = nullptr;
  bool w_zp_per_channel = false;
  int64_t channels = 1;  // C: plane r is channel r % C
  QDepthwiseStage::Kind kind = QDepthwiseStage::kInt32;
  const int32_t* bias = nullptr;
  const float* scale = nullptr;
  int32_t y_zp = 0;
  void* y = nullptr;
  // qdepthwise_pack_3x3 of w (constant weights: built once) or null: the VNNI forms then read each
  // channel's weight quads and sum instead of centering the weights per plane.
  const int32_t* packed3x3 = nullptr;
};

// The centered 3x3 weights (w - w_zp, w [C, 1, 3, 3] codes as in QDepthwiseBatch) of every
// channel for the VNNI forms: 4 i32 per channel, the s8 quads (w[kh][0], w[kh][1], w[kh][2], 0) of
// kernel rows 0..2 and the sum of the 9; empty where some centered weight leaves s8.
std::vector<int32_t> qdepthwise_pack_3x3(const void* w, bool w_signed, const void* w_zp, bool w_zp_per_channel,
                                         int64_t channels);

// Planes [r0, r1) of batch (plane r: x + r * H * W -> y's plane r), as qdepthwise_plane would
// compute each, bit for bit; the VNNI forms set the window up once for many planes (on 7x7 maps
// the per-plane setup cost more than the plane). scratch: qdepthwise_scratch_floats(w) floats;
// wk: KH * KW floats.
void qdepthwise_planes(const QDepthwiseBatch& batch, const Window3& w, int64_t r0, int64_t r1, float* scratch,
                       float* wk);

// Tests: forces the f32 path (true) or restores the choice by CPU (false). Not thread-safe
// against running convs.
void qdepthwise_disable_vnni_for_test(bool disable);

}  // namespace tsr::cpu
