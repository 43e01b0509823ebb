// Opt-in reduced-precision arithmetic (SessionOptions::fast_math, `tessera run --fast-math`),
// after onnxruntime's session option mlas.enable_gemm_fastmath_arm64_bfloat16. Off by default:
// every kernel then computes in its model dtype (f32 for f32 models).
#pragma once

#include <cstdint>
#include <string_view>

namespace tsr {

enum class FastMath : uint8_t {
  kNone = 0,  // exact: f32 products in f32
  // The products Q·K^T and P·V of the CPU Attention kernel (ONNX Attention, also the one
  // `tessera optimize` fuses from MatMul/Softmax/MatMul) take bfloat16 operands (Q, K, V and the
  // softmax weights rounded to nearest even, 8 significant bits) with f32 accumulation; the
  // softmax, masks and bias stay f32. It applies to attention with at least 16 query rows and
  // no local window or score output (qk_matmul_output), on an x86-64 CPU with AVX512_BF16
  // (fast_math_supported); elsewhere attention runs in f32, as without the option. Relative
  // error of an output grows to about 1e-3..1e-2 (docs/backends.md "Reduced precision").
  kBf16 = 1,
};

// "none" / "bf16".
const char* fast_math_name(FastMath m);
// The inverse of fast_math_name; false for another name.
bool parse_fast_math(std::string_view name, FastMath* out);
// Whether this build and CPU have the kernels of `m` (kNone: always). Where false, a session with
// that option computes exactly as with kNone (the CLI says so on stderr).
bool fast_math_supported(FastMath m);

}  // namespace tsr
