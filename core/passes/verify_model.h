// Model verification: what every loaded or built model passes before it runs (DESIGN.md §4).
// It sits above the IR (it needs the op registry and type inference), so core/ir depends on
// nothing above it.
#pragma once

#include "core/ir/graph.h"

namespace tsr::passes {

// ir::verify_structure (indices, references, acyclicity; kInvalidModel), then
// check_ops_supported (every unsupported op in one kUnsupported error), then infer_types (fills
// unknown types, rejects contradictions naming the node). Errors name the place.
Status verify_model(ir::Model& model);

}  // namespace tsr::passes
