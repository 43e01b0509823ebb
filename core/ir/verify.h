// IR verifier: the semantic checks every loaded or built model passes before it runs.
#pragma once

#include "core/ir/graph.h"

namespace tsr::ir {

// Structural checks: at least one graph; every tensor/graph index in range; subgraph references
// (kGraph attributes) valid and not recursive; constants' dtype/shape/byte size consistent;
// dims >= -1; then per graph a topological order exists (acyclic, produced once, every input
// produced). Errors name the place and are kInvalidModel.
Status verify_structure(const Model& model);

// verify_structure, then passes::check_ops_supported (all unsupported ops in one error), then
// passes::infer_types (fills unknown types, rejects contradictions).
Status verify_model(Model& model);

}  // namespace tsr::ir
