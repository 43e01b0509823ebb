// The activation a fused Tessera op applies to its result before storing it (the "epilogue"),
// defined once for every fused op (FusedConv, FusedGemm), the pass that creates them
// (core/passes/opt_fuse_activation.cpp) and the kernels that run them (backends/cpu/kernels/
// epilogue.h). Modelled on onnxruntime's com.microsoft FusedConv.
//
// Attributes of a fused node:
//   activation         string, required: "Relu", "Clip", "HardSwish", "Sigmoid", "LeakyRelu",
//                      "HardSigmoid", "Silu", "Gelu", "GeluTanh"
//   activation_params  floats: Clip {min, max}; LeakyRelu {alpha}; HardSigmoid {alpha, beta};
//                      none for the others. Same semantics as the ONNX op of that name.
//   activation_affine  floats {scale, shift}, optional: after the activation, y = y * scale + shift
//                      (the scalar affine layers PP-OCR's backbones put after each activation).
//   activation_bounds  floats {lo, hi}, optional: last, y = min(max(y, lo), hi) (a Max or Min
//                      with a scalar after the activation: openWakeWord's embedding model follows
//                      each LeakyRelu with a Max); -inf / inf leave a side open.
// FusedSeparableConv carries a second set, for its depthwise stage, named dw_activation,
// dw_activation_params, dw_activation_affine and dw_activation_bounds.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/ir/graph.h"

namespace tsr::ops {

enum class FusedActivation : uint8_t { kNone, kRelu, kClip, kHardSwish, kSigmoid, kLeakyRelu, kHardSigmoid, kSilu, kGelu, kGeluTanh };

// An activation with its parameters, as the epilogue applies it to each element y:
//   Relu max(y, 0); Clip min(max(y, p0), p1); HardSwish y * max(0, min(1, y / 6 + 1/2));
//   Sigmoid 1 / (1 + exp(-y)); LeakyRelu y < 0 ? p0 * y : y; HardSigmoid max(0, min(1, p0 * y + p1));
//   Silu y / (1 + exp(-y)) (SiLU/Swish, the x * Sigmoid(x) of EfficientNet exports);
//   Gelu 0.5 y (1 + erf(y / sqrt 2)) (ONNX Gelu with approximate="none": transformer MLPs);
//   GeluTanh 0.5 y (1 + tanh(sqrt(2 / pi) (y + 0.044715 y^3))) (ONNX Gelu with approximate="tanh",
//   com.microsoft FastGelu: GPT-2-style MLPs).
struct ActivationSpec {
  FusedActivation kind = FusedActivation::kNone;
  float p0 = 0, p1 = 0;
  float scale = 1, shift = 0;  // activation_affine, applied after the activation
  // activation_bounds, applied after the affine.
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  bool has_affine() const { return scale != 1 || shift != 0; }
  bool has_bounds() const { return lo != -std::numeric_limits<float>::infinity() || hi != std::numeric_limits<float>::infinity(); }
  // Whether anything follows the activation itself (the affine or the bounds).
  bool has_post() const { return has_affine() || has_bounds(); }
};

// The activation of a fused node's attributes; kNone when the node has no `activation`
// attribute (a plain Conv/Gemm). kInvalidModel naming `place` for an unknown name or a wrong
// number of params. `prefix` selects a second activation of the same node: FusedSeparableConv's
// depthwise one is "dw_activation", "dw_activation_params", "dw_activation_affine".
Expected<ActivationSpec> activation_of(const ir::Node& node, const std::string& place, const std::string& prefix = "");

// The attributes to put on a fused node for `spec` (kind must not be kNone), names with `prefix`.
std::vector<ir::Attribute> activation_attributes(const ActivationSpec& spec, const std::string& prefix = "");

// The name the `activation` attribute uses ("Relu", ...), "" for kNone.
const char* activation_name(FusedActivation kind);

}  // namespace tsr::ops
