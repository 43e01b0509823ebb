// Building small graphs by hand in unit tests: a value (optionally a constant) and a one-output
// node whose output value is named after the node.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"

namespace tsr::test {

inline int32_t add_value(ir::Graph& g, const std::string& name, Tensor constant = Tensor()) {
  ir::TensorInfo info;
  info.name = name;
  if (constant.defined()) {
    info.dtype = constant.dtype();
    info.has_shape = true;
    info.shape = constant.shape();
    info.constant = std::move(constant);
  }
  return g.add_tensor(info);
}

// Adds a graph input `name` of `dtype` and `shape` (-1: a dim known only at run time).
inline int32_t add_input(ir::Graph& g, const std::string& name, DType dtype, Shape shape) {
  ir::TensorInfo info;
  info.name = name;
  info.dtype = dtype;
  info.has_shape = true;
  info.shape = std::move(shape);
  const int32_t id = g.add_tensor(info);
  g.inputs.push_back(id);
  return id;
}

// Appends node `op` (named op + its index) reading `inputs` and writing `outputs`.
inline void append_node(ir::Graph& g, const std::string& op, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                        std::vector<ir::Attribute> attrs = {}) {
  ir::Node n;
  n.op = op;
  n.name = op + std::to_string(g.nodes.size());
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attrs);
  g.nodes.push_back(std::move(n));
}

// Appends node `op` (named op + its index) reading `inputs`; returns its output value.
inline int32_t add_node(ir::Graph& g, const std::string& op, std::vector<int32_t> inputs,
                        std::vector<ir::Attribute> attrs = {}) {
  const int32_t out = add_value(g, op + std::to_string(g.nodes.size()) + "_out");
  append_node(g, op, std::move(inputs), {out}, std::move(attrs));
  return out;
}

}  // namespace tsr::test
