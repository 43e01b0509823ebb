// IR verifier: the semantic checks every loaded or built model passes before it runs.
#pragma once

#include "core/ir/graph.h"

namespace tsr::ir {

// Structural checks: at least one graph; every tensor/graph index in range; subgraph references
// (kGraph attributes) valid and not recursive; constants' dtype/shape/byte size consistent;
// dims >= -1; then per graph a topological order exists (acyclic, produced once, every input
// produced). Errors name the place and are kInvalidModel.
Status verify_structure(const Model& model);
// The full check before a model runs (ops known, types consistent) is passes::verify_model
// (core/passes/verify_model.h): it needs the op registry, which sits above the IR.

}  // namespace tsr::ir
