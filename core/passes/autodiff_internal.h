// Pieces of the autodiff pass shared between autodiff.cpp and autodiff_control_flow.cpp.
#pragma once

#include <string>
#include <vector>

#include "core/passes/autodiff.h"

namespace tsr::passes {

// Copies the nodes of model.graphs[graph] into b's graph with the given input Values (parallel
// to that graph's inputs) and returns the Values of its outputs. Constants are copied too.
Expected<std::vector<Value>> inline_graph(ops::GraphBuilder& b, int32_t graph, const std::vector<Value>& inputs);

// The VJP of an If / Loop / Scan node `node_index` of b's graph (same contract as a GradFn:
// `ins`/`outs` are the node's Values, `grad_out` the output gradients, invalid = zero; returns
// the input gradients, invalid where not wanted). May rewrite the forward node (Loop: it also
// pushes per-iteration states).
Expected<std::vector<Value>> control_flow_vjp(ops::GraphBuilder& b, int32_t node_index, const std::string& place,
                                              const std::vector<Value>& ins, const std::vector<Value>& outs,
                                              const std::vector<Value>& grad_out, const std::vector<bool>& wants);

// The ONNX importer copies the outer constants a subgraph reads into it; a gradient with
// respect to such a constant needs it to flow in instead. For each If/Loop/Scan node (at any
// depth), a subgraph constant named like one of `names` that the node's graph also holds becomes
// a capture: a subgraph input (added to every subgraph of the node) fed by a new node input.
void capture_constants(ir::Model& model, const std::vector<std::string>& names);

// Drops graphs that no signature, main graph or node attribute reaches (the forward subgraphs a
// gradient replaced) and renumbers the graph attributes.
void prune_unused_graphs(ir::Model& model);

}  // namespace tsr::passes
