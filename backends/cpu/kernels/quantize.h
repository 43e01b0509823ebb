// Quantization helpers shared by the CPU kernel families quantize.cpp (QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear) and qlinear.cpp / qconv.cpp (the quantized matmuls and convs,
// com.microsoft DynamicQuantizeMatMul).
#pragma once

#include <cstdint>

#include "core/base/thread_pool.h"

namespace tsr::cpu {

struct DynamicQuantParams {
  float scale = 1.0f;
  uint8_t zero_point = 0;
};

// ONNX DynamicQuantizeLinear (opset 11) of x[0..n) into y (u8): the range [min(0, x), max(0, x)]
// (NaNs ignored) gives scale = (hi - lo) / 255 and zero point saturate(round(-lo / scale)); then
// y = saturate(round(x / scale) + zero point), rounding half to even, all in f32. An all-zero or
// empty x has scale 1 and zero point 0 (onnxruntime; the formula would divide by 0). The op's
// kernel and DynamicQuantizeMatMul both call this, so the fused and unfused graphs agree bit for bit.
// Large x is split over `pool` (null: the calling thread); the result is the same either way.
DynamicQuantParams dynamic_quantize_u8(const float* x, int64_t n, uint8_t* y, ThreadPool* pool = nullptr);

}  // namespace tsr::cpu
