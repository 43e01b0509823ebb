// The per-channel compute of a quantized depthwise convolution (QLinearConv / ConvInteger with
// one input and one output channel per group: qlinear.cpp) on the f32 depthwise loops of the
// float Conv (depthwise.h), dispatched to the best SIMD target.
//
// Exactness: the centered operands (x - x_zp, w - w_zp) are integers in [-255, 255], so every
// product has |p| <= 65025 and, for at most kQDepthwiseMaxTaps taps, every partial sum stays
// below 2^24, where f32 represents integers exactly: the f32 sums (with FMAs, in any order) are the
// exact i32 sums. Larger windows take qlinear.cpp's integer loop.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/nn_window.h"

namespace tsr::cpu {

inline constexpr int64_t kQDepthwiseMaxTaps = 258;  // 258 * 65025 < 2^24

// Floats of scratch qdepthwise_plane needs for window w (w.in/out/k/s/d/pb/pe over [1, H, W]).
int64_t qdepthwise_scratch_floats(const Window3& w);

// acc[oh * OW + ow] = sum over taps of (x - x_zp) * wk, as exact integers in f32, for one channel
// plane x (u8 or s8 [H, W]); wk: the centered weights (w - w_zp) as f32 [KH, KW]; padding
// contributes 0 (the input zero point). scratch: qdepthwise_scratch_floats(w) floats.
void qdepthwise_plane(const void* x, bool x_signed, int32_t x_zp, const float* wk, const Window3& w, float* scratch,
                      float* acc);

}  // namespace tsr::cpu
