// Free-dimension overrides: fixing a model's named dynamic dims (ONNX dim_params such as "batch")
// to sizes before a session plans it, as onnxruntime's SessionOptions free dimension overrides do.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"

namespace tsr::passes {

// Sets every dynamic dim named `name` (TensorInfo::dim_names) of the main graph's tensors to
// `size`, for each (name, size) pair, then re-runs verify_model so the fixed sizes propagate
// (intermediate and output dims become static where inference can tell). ONNX gives a dim_param
// one size across a graph, so all tensors of graph 0 that carry the name are fixed, not only the
// inputs; subgraphs keep their own scopes and are left as they are (their types follow from the
// node inputs). Static dims that carry the name are left alone.
// Errors: kInvalidArgument for a negative size or a size the graph contradicts (the verifier's
// message, prefixed with the override); kNotFound for a name no main-graph input carries (the
// message lists the inputs' named dynamic dims).
Status fix_dims(ir::Model& model, const std::vector<std::pair<std::string, int64_t>>& sizes);

}  // namespace tsr::passes
