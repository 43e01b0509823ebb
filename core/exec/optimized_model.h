// The inference optimizer run with the CPU kernels as its constant evaluator: what
// tsr::Session::create (OptimizationLevel::kAll), `tessera optimize` and `tessera inspect` apply.
// Defined with the Session in core/exec/session.cpp. Not in a minimal runtime (no optimizer).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/passes/optimize.h"

namespace tsr {

// A copy of `model` after passes::optimize with constant folding by evaluate_node, leaving out
// the passes named in `skip_passes` (kInvalidArgument for an unknown name). The copy shares the
// constants' storage with `model`. `report` (may be null) receives what each pass changed.
Expected<std::shared_ptr<const ir::Model>> optimized_model(const ir::Model& model,
                                                           const std::vector<std::string>& skip_passes,
                                                           passes::OptimizeReport* report = nullptr);

// Runs one node on constant inputs with the CPU kernels and returns its outputs, parallel to
// node.outputs (undefined for omitted ones): passes::OptimizeOptions::evaluate. `inputs` is
// parallel to node.inputs, null for omitted ones. The node is checked and its types inferred as
// in a loaded model; errors name it (kInvalidModel, kUnsupported, or what its kernel returns).
// Nodes with subgraphs are rejected.
Expected<std::vector<Tensor>> evaluate_node(const ir::Node& node, const std::vector<const Tensor*>& inputs);

}  // namespace tsr
