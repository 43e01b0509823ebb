// Loading a model for the CLI: .tsr files through core/io, .onnx files through the importer
// when this build has it.
#pragma once

#include <memory>
#include <string>

#include "core/ir/graph.h"

namespace tsr::cli {

// kNotFound for a missing file (message names it); kUnsupported for .onnx without the importer.
Expected<std::shared_ptr<const ir::Model>> load_model(const std::string& path);
// Reads an input value: .npy, or ONNX test data .pb — a TensorProto, or for `kind` kSequence a
// SequenceProto (OptionalProto for either). Malformed files are kInvalidArgument.
Expected<Tensor> load_tensor_file(const std::string& path, ValueKind kind = ValueKind::kTensor);

}  // namespace tsr::cli
