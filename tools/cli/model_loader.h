// Loading models and input files for the CLI: models through tsr::Model::load, with the ONNX
// importer installed when this build has it.
#pragma once

#include <memory>
#include <string>

#include "core/tensor/tensor.h"
#include "tessera/model.h"

namespace tsr::cli {

// tsr::Model::load with this build's ONNX importer: kNotFound for a missing file (the message
// names it); kUnsupported for .onnx without the importer.
Expected<Model> load_model(const std::string& path);
// Reads an input value: .npy, or ONNX test data .pb — a TensorProto, or for `kind` kSequence a
// SequenceProto (OptionalProto for either). Malformed files are kInvalidArgument.
Expected<Tensor> load_tensor_file(const std::string& path, ValueKind kind = ValueKind::kTensor);

}  // namespace tsr::cli
