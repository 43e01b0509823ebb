// Lowering of ONNX's ai.onnx.preview.training::Gradient at import.
#pragma once

#include "core/ir/graph.h"

namespace tsr::onnx_import {

// The importer keeps a Gradient node as op "ai.onnx.preview.training::Gradient" (attributes xs:
// strings, y: string). This replaces each such node of the main graph by the reverse pass
// (passes::append_gradients, seeded with ones: a non-scalar y is summed) from the tensor named y
// to the tensors named xs, whose results feed the node's outputs through Identity nodes. The
// node's inputs (the values of xs and zs) name the same tensors and are not needed. Gradient
// nodes inside subgraphs are kUnsupported; unknown names are kInvalidModel.
Status lower_gradient_nodes(ir::Model& model);

}  // namespace tsr::onnx_import
