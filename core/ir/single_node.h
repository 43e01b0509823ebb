// A model of one node: what running a single op needs (Session-level evaluation of one node,
// e.g. tsr::evaluate_node, and the op tests). One builder, so that every caller gets the same
// graph layout.
#pragma once

#include <optional>
#include <vector>

#include "core/ir/graph.h"

namespace tsr::ir {

// One input of the node.
struct NodeInput {
  Tensor value;           // undefined: an omitted optional input (id -1)
  bool constant = false;  // a graph constant holding `value`; otherwise a graph input fed `value`
  // Graph inputs only: the declared shape instead of value's (-1 = a dim known only at run time).
  std::optional<Shape> declared = std::nullopt;
};

struct SingleNodeModel {
  Model model;
  std::vector<Tensor> feeds;  // the graph inputs' values, in graph-input order (Session::run's argument)
};

// The model's only graph, "main", holds one node: a copy of `node` (op, name, version, attributes)
// whose inputs and outputs are replaced; node.inputs is ignored.
// - Input k comes from inputs[k]: undefined -> -1; otherwise a tensor "in<k>" with the value's
//   kind, dtype and shape (or `declared`), a constant or, in input order, a graph input.
// - Output k, for each entry of node.outputs: a negative entry -> -1 (omitted); otherwise a
//   tensor "out<k>" of unknown dtype and shape, appended to the graph outputs in order.
// Nothing is inferred or verified: callers run passes::infer_types / passes::verify_model. No
// signatures, variables or metadata.
SingleNodeModel single_node_model(const Node& node, const std::vector<NodeInput>& inputs);

}  // namespace tsr::ir
