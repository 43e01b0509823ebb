// ONNX → Tessera IR importer (built on Debian's libonnx / libprotobuf).
//
// Maps an ONNX ModelProto to an ir::Model: initializers and Constant nodes become constant
// tensors; op versions are normalized to the opset-17 form every Tessera OpDef implements (for
// example Squeeze/Unsqueeze/Slice/Clip/Pad/Split attributes of older opsets become constant
// inputs); ONNX shape inference fills value shapes; If/Loop/Scan graph attributes become
// subgraphs with outer-scope captures turned into explicit inputs. All ops without a Tessera
// OpDef are listed in one kUnsupported error. The result is verified (ir::verify_model).
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace tsr::onnx_import {

// Reads and imports an .onnx file. kNotFound for a missing file, kInvalidModel for bytes that
// are not a valid ModelProto, kUnsupported listing every unsupported op.
Expected<ir::Model> import_onnx_file(const std::string& path);
Expected<ir::Model> import_onnx_bytes(const std::string& bytes, const std::string& name_for_errors);

// Reads a serialized ONNX TensorProto (.pb, as in the ONNX test data) into a Tensor.
Expected<Tensor> read_tensor_proto_file(const std::string& path);

}  // namespace tsr::onnx_import
