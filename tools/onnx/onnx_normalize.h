// Opset normalization: rewrites nodes of older ONNX opsets into the opset-17 form that every
// Tessera OpDef implements. Internal to the importer (tools/onnx).
#pragma once

#include <string>
#include <unordered_map>

#include "core/ir/graph.h"

namespace tsr::onnx_import {

// Adds tensors to a graph under fresh, unique names (the importer keeps one name table per graph).
class GraphEdit {
 public:
  GraphEdit(ir::Graph& graph, std::unordered_map<std::string, int32_t>& names) : graph_(graph), names_(names) {}

  ir::Graph& graph() { return graph_; }
  // A constant tensor named after `base` (made unique); returns its id.
  int32_t add_constant(const std::string& base, Tensor value);
  // A new intermediate value (type unknown, filled by inference); returns its id.
  int32_t add_value(const std::string& base);
  // The tensor's constant value, or null.
  const Tensor* constant(int32_t id) const;
  const ir::TensorInfo* info(int32_t id) const;

 private:
  std::string fresh(const std::string& base);
  ir::Graph& graph_;
  std::unordered_map<std::string, int32_t>& names_;
};

// Rewrites `node` (a default-domain node, inputs already resolved to tensor ids, written against
// opset `opset`) into its opset-17 form and appends it, plus any helper nodes it needs, to the
// graph in execution order. Attribute-style operands of older opsets become i64/float constant
// inputs (Squeeze/Unsqueeze axes <13, Slice starts/ends/axes <10, Clip min/max <11, Pad
// pads/value <11, Split split <13, ReduceSum axes <13, Dropout ratio <12, TopK k <10, Reshape
// shape <5); obsolete attributes are dropped (consumed_inputs, is_test, spatial, legacy
// broadcast); Upsample and Resize-10 become Resize-17 with asymmetric coordinates and floor
// rounding; Softmax/LogSoftmax/Hardmax <13 (2-D coercion) become axis=-1 ops, wrapped in
// Flatten/Reshape when the axis is not the last; Scatter becomes ScatterElements. Newer forms
// are brought back to 17 where that is exact: Reduce* axes inputs (>= 18, constant only) become
// the attribute, Pad-18 axes are expanded, Split-18 num_outputs, Cast-19 saturate and Resize-18
// or pool attributes at their defaults are dropped.
// The node is appended even on error (so that unsupported-op checks still see it); an error
// (kUnsupported for forms Tessera cannot express, kInvalidModel for malformed attributes) names
// the node by `place`.
Status normalize_and_append(ir::Node node, int64_t opset, const std::string& place, GraphEdit& edit);

}  // namespace tsr::onnx_import
