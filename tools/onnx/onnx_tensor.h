// Conversions from ONNX protobuf values (TensorProto, SparseTensorProto, TypeProto) to Tessera's
// Tensor and TensorInfo. Internal to the importer (tools/onnx); never throws.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "core/ir/graph.h"

namespace tsr::onnx_import {

// ONNX TensorProto.DataType → DType; kUndefined for types Tessera lacks (complex, float8).
DType dtype_from_onnx(int32_t onnx_type);

// Copies a TensorProto's data into a new Tensor. Accepts raw_data (little-endian, as ONNX
// stores it) and the typed fields: float_data (f32), int32_data (i32 and the narrow types f16,
// bf16, i8, u8, i16, u16, bool, one element per entry), int64_data (i64), double_data (f64),
// uint64_data (u32, u64), string_data (string). `what` names the tensor in errors.
// Errors: external data or segments → kUnsupported naming the tensor; unknown dtype →
// kUnsupported; element count that does not match the dims, negative dims → kInvalidModel;
// tensors above max_tensor_bytes() → kResource.
Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& what);

// Densifies a SparseTensorProto (values + indices, either [NNZ, rank] or linearized [NNZ]).
Expected<Tensor> tensor_from_sparse_proto(const onnx::SparseTensorProto& proto, const std::string& what);

// Fills kind, dtype, shape and dim_names of `info` from a TypeProto: tensor(T) and optional(T)
// → kTensor; seq(tensor(T)) → kSequence with the element dtype/shape; maps and sparse tensors →
// kUnsupported; no type at all leaves the info unknown. dim_value → the dim, dim_param → -1 with its name
// kept in dim_names, neither → -1. A negative dim_value is kInvalidModel.
Status apply_type_proto(const onnx::TypeProto& type, ir::TensorInfo& info, const std::string& what);

}  // namespace tsr::onnx_import
