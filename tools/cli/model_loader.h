// Loading a model for the CLI: .tsr files through core/io, .onnx files through the importer
// when this build has it.
#pragma once

#include <memory>
#include <string>

#include "core/ir/graph.h"

namespace tsr::cli {

// kNotFound for a missing file (message names it); kUnsupported for .onnx without the importer.
Expected<std::shared_ptr<const ir::Model>> load_model(const std::string& path);
// Reads an input tensor: .pb (ONNX TensorProto) or .npy. Malformed files are kInvalidArgument.
Expected<Tensor> load_tensor_file(const std::string& path);

}  // namespace tsr::cli
