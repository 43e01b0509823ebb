// Type and shape inference over a whole model, using each op's OpDef (DESIGN.md §4, §5).
#pragma once

#include "core/ir/graph.h"

namespace tsr::passes {

// Runs OpDef inference over every graph in topological order and merges the result into each
// TensorInfo: unknown dtypes/dims are filled in; a declared dtype, rank or static dim that
// contradicts the inferred one is an error naming the node and output, e.g.
//   graph[0].node[3] (Add "add_1").output[0]: declared f32[2, 3], inferred f32[2, 4]
// Unsupported ops are all listed in one kUnsupported error (every graph is scanned first).
// Expects a structurally valid model (ir::verify_structure passed).
Status infer_types(ir::Model& model);

// Every op in the model (all graphs) that has no OpDef, as one kUnsupported error listing each
// distinct op with the places it occurs; ok if all are known.
Status check_ops_supported(const ir::Model& model);

}  // namespace tsr::passes
