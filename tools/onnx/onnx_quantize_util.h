// Helpers shared by the two halves of `tessera quantize`'s ONNX rewrites: onnx_quantize.cpp
// (dynamic mode, the driver) and onnx_quantize_static.cpp (static QDQ mode). Internal to them.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tools/onnx/onnx_quantize.h"

namespace tsr::onnx_quantize::detail {

using onnx::NodeProto;
using onnx::TensorProto;
using Initializers = std::unordered_map<std::string, const TensorProto*>;

// Every name used in the graph, so that new names never collide.
class Names {
 public:
  explicit Names(const onnx::GraphProto& g) {
    for (const auto& v : g.input()) used_.insert(v.name());
    for (const auto& v : g.output()) used_.insert(v.name());
    for (const auto& v : g.value_info()) used_.insert(v.name());
    for (const auto& t : g.initializer()) used_.insert(t.name());
    for (const auto& n : g.node()) {
      used_.insert(n.name());
      for (const auto& s : n.input()) used_.insert(s);
      for (const auto& s : n.output()) used_.insert(s);
    }
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_.count(name); ++k) name = str_cat(base, "_", k);
    used_.insert(name);
    return name;
  }

 private:
  std::unordered_set<std::string> used_;
};

// The default-domain opset of the model (0 if none).
int64_t default_opset(const onnx::ModelProto& m);

// An initializer of `dtype` (an ONNX TensorProto data type) holding `bytes` raw bytes.
TensorProto make_tensor(const std::string& name, int32_t dtype, const std::vector<int64_t>& dims, const void* data,
                        size_t bytes);
TensorProto make_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v);
NodeProto make_node(const std::string& op, const std::string& name, std::vector<std::string> inputs,
                    std::vector<std::string> outputs);
void set_int_attr(NodeProto& n, const std::string& name, int64_t v);
// An attribute's value, or `dflt` where the node has none of that name.
int64_t int_attr(const NodeProto& n, const std::string& name, int64_t dflt);
float float_attr(const NodeProto& n, const std::string& name, float dflt);

// Weight quantization along `axis` of `dims` (-1: one scale for the whole tensor).
// s8: symmetric, range [-127, 127] (onnxruntime's symmetric int8 range), zero point 0.
// u8: asymmetric over [min(0, lo), max(0, hi)] with a zero point, so 0.0 is exact.
// A channel of zeros gets scale 1. Rounding: nearbyint (half to even, as numpy.rint in ORT).
struct QuantizedWeight {
  std::vector<uint8_t> q;  // int8 or uint8 bytes
  std::vector<float> scale;
  std::vector<uint8_t> zero_point;
};

QuantizedWeight quantize_weight(const float* w, const std::vector<int64_t>& dims, int axis, bool s8);

// u8 asymmetric activation parameters (scale, zero point) for a calibrated range (0 kept inside, as ORT does).
std::pair<float, uint8_t> activation_params(std::pair<float, float> range);

// Whether the node is one of --op-types (else `default_ops`), in the default domain.
bool selected(const Options& o, const NodeProto& n, const std::vector<std::string>& default_ops);
// Whether --nodes-exclude names the node.
bool excluded(const Options& o, const NodeProto& n);
// `node "NAME" (OP)`, for the report's reasons.
std::string describe(const NodeProto& n);

// A constant f32 weight: its values and dims, or why it is not one.
struct Weight {
  std::vector<float> values;
  std::vector<int64_t> dims;
};

Expected<Weight> read_weight(const Initializers& inits, const std::string& name, const std::string& what);

// Drops initializers no node (subgraphs included) reads any more and that are no graph output.
void remove_unused_initializers(onnx::GraphProto& g);
Initializers initializer_map(const onnx::GraphProto& g);
// An error listing the candidates' reasons when nothing was quantized.
Status require_nodes(const Report& report, const char* what);

// What quantize_static rewrites: a Conv, MatMul or Gemm with a constant weight.
struct StaticTarget {
  int node = 0;
  std::string x{}, w{}, bias{}, y{};
  int axis = 0;  // output-channel axis of the weight
  // A Relu or Clip (constant bounds) that alone reads y: the output is quantized after it, as
  // onnxruntime's quantizer does, so that the op, the activation and the QuantizeLinear fuse into
  // one QLinearConv/QLinearMatMul whose saturation is the activation (opt_quantize.cpp).
  int act = -1;
  std::string y_act{};
  // A residual Add (add_residual_targets; no weight): x and x2 are its inputs.
  bool add = false;
  std::string x2{};
  const std::string& quantized_output() const { return act >= 0 ? y_act : y; }
};

// The Conv/MatMul/Gemm nodes (and residual Adds) quantize_static rewrites, in graph order; the
// skipped candidates' reasons go to `report` (onnx_quantize_static.cpp).
std::vector<StaticTarget> static_targets(const onnx::GraphProto& g, const Options& o, Report* report);

}  // namespace tsr::onnx_quantize::detail
