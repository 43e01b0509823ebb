// `tessera quantize`: rewrites an ONNX ModelProto into an int8 model (docs/quantization.md).
//
// Dynamic (like onnxruntime.quantization.quantize_dynamic): every MatMul (and Gemm with transA=0)
// of the main graph whose weight B is a constant rank-2 f32 initializer becomes
//   DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W_q, A_zp, W_zp) -> Cast(f32)
//     -> Mul(., Mul(A_scale, W_scale))   (-> Add(., beta*C) for Gemm)
// with one DynamicQuantizeLinear per distinct A shared by its MatMuls. With Conv in op_types (not
// the default here; onnxruntime's quantize_dynamic default has it), a Conv with a constant f32
// weight becomes onnxruntime's form
//   DynamicQuantizeLinear(X) -> ConvInteger(X_q, W_q, X_zp, W_zp) -> Cast(f32) -> Mul(., Mul(X_scale,
//     W_scale)) (-> Add(., Reshape(B, [1, -1, 1, ...])))
// with W per tensor, or per output channel with per_channel and s8 weights (W_scale [M, 1, ...],
// zero point 0: onnxruntime's ConvInteger takes one weight zero point). Weights: s8 symmetric
// (range [-127, 127], zero point 0) or u8 asymmetric (min/max including 0), per tensor or per
// output column. A Gemm's transB weight is stored transposed; alpha is folded into W_scale.
//
// Static (QDQ, like onnxruntime's quantize_static with QuantFormat.QDQ): the inputs and outputs
// of Conv / MatMul / Gemm with constant weights get QuantizeLinear -> DequantizeLinear pairs (u8,
// asymmetric, ranges from calibration), weights become s8 symmetric per output channel (axis 0 for
// Conv and transB Gemm, axis 1 for MatMul and Gemm) constants + DequantizeLinear, and biases i32
// with scale x_scale * w_scale[c] and zero point 0 (onnxruntime's convention). Calibration runs the
// f32 model through tsr::Session with the activations added as graph outputs (onnx_calibrate.cpp).
//
// Only the main graph is rewritten (subgraphs of If/Loop/Scan are kept in f32). Weights are read
// from graph initializers (not Constant nodes); external data is an error.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace tsr::onnx_quantize {

enum class Mode { kDynamic, kStatic };
enum class Calibration { kMinMax, kPercentile };

struct Options {
  Mode mode = Mode::kDynamic;
  bool per_channel = false;      // dynamic: one scale per output column (static is always per channel)
  bool weight_signed = true;     // dynamic: s8 symmetric (true) or u8 asymmetric weights
  std::vector<std::string> nodes_exclude;  // node names left in f32
  std::vector<std::string> op_types;       // ops to quantize; empty = MatMul, Gemm (+ Conv in static);
                                           // dynamic takes Conv too when named
  int64_t min_weight_elements = 0;         // weights with fewer elements stay f32 (0: all, as onnxruntime)
  // Static only.
  std::string calibration_dir;
  Calibration calibration = Calibration::kMinMax;
  double percentile = 99.99;  // two-sided: the range is [P(100-p), P(p)] of the calibration values
  int threads = 1;            // for the calibration runs
};

struct Report {
  size_t candidates = 0;  // nodes of the selected op types
  size_t quantized = 0;
  std::vector<std::string> skipped;  // "node \"x\" (MatMul): weight is not a constant"
  size_t weight_bytes_before = 0;    // all initializers
  size_t weight_bytes_after = 0;
  size_t samples = 0;                // static: calibration samples run
  size_t calibrated_tensors = 0;     // static: activations with a range
  size_t residual_adds = 0;          // static: Adds of quantized activations given QDQ outputs
  int64_t converted_from_opset = 0;  // > 0: the model was converted to opset 13 from this one
};

// Per-tensor activation ranges from calibration: name -> (min, max).
using Ranges = std::map<std::string, std::pair<float, float>>;

// Quantizes `model` in place. Errors: kInvalidArgument when no node could be quantized (the
// message lists why for each candidate), or for bad options; calibration errors (static). A model
// below opset 11 (dynamic) or 13 (static: per-axis DequantizeLinear) is first converted to opset 13
// with ONNX's version converter (kUnsupported if that fails).
Expected<Report> quantize(onnx::ModelProto& model, const Options& options);

// The rewrite halves, for tests: quantize() = (calibrate +) one of these.
Status quantize_dynamic(onnx::ModelProto& model, const Options& options, Report& report);
Status quantize_static(onnx::ModelProto& model, const Options& options, const Ranges& ranges, Report& report);

// onnx_calibrate.cpp. Runs the f32 `model` once per calibration sample of options.calibration_dir
// and returns the min/max (or percentile) range of each tensor named in `tensors` (graph inputs
// are taken from the sample, others are added as outputs of a copy of the model).
// Sample layout: DIR/<sample>/ folders (sorted by name), or DIR itself as one sample; in a sample,
// each graph input is `<input name>.npy`, `input_<k>.npy` or `input_<k>.pb` (ONNX TensorProto,
// as in the ONNX test data sets; k counts the graph inputs that are not initializers). Errors
// name the file: kNotFound for a missing input, kInvalidArgument for a dtype or a fixed dim that
// does not match the graph input.
Expected<Ranges> calibrate(const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                           const Options& options, size_t* samples);

// Reads and parses an .onnx file: kNotFound when missing, kInvalidModel when it is not a
// ModelProto with a graph (e.g. a .tsr file).
Expected<onnx::ModelProto> read_model(const std::string& path);

}  // namespace tsr::onnx_quantize
