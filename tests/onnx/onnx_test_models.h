// Small helpers that build ONNX ModelProtos in C++ for the importer tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onnx_test {

// A model with ir_version 8 and the given default-domain opset.
onnx::ModelProto make_model(int64_t opset);
// dims: "" = unknown dim, digits = dim_value, anything else = dim_param.
void set_type(onnx::ValueInfoProto* vi, int32_t elem_type, const std::vector<std::string>& dims);
onnx::ValueInfoProto* add_input(onnx::GraphProto* g, const std::string& name, int32_t elem_type,
                                const std::vector<std::string>& dims);
onnx::ValueInfoProto* add_output(onnx::GraphProto* g, const std::string& name, int32_t elem_type,
                                 const std::vector<std::string>& dims);
// A typeless output (for subgraphs, where ONNX allows types to be inferred).
onnx::ValueInfoProto* add_output(onnx::GraphProto* g, const std::string& name);
onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "");

void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v);
void attr_float(onnx::NodeProto* n, const std::string& name, float v);
void attr_string(onnx::NodeProto* n, const std::string& name, const std::string& v);
void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v);
void attr_floats(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v);
void attr_strings(onnx::NodeProto* n, const std::string& name, const std::vector<std::string>& v);
onnx::TensorProto* attr_tensor(onnx::NodeProto* n, const std::string& name);
onnx::GraphProto* attr_graph(onnx::NodeProto* n, const std::string& name);

// f32 tensor, data in raw_data (raw = true) or float_data.
void fill_f32(onnx::TensorProto* t, const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<float>& v, bool raw);
void fill_i64(onnx::TensorProto* t, const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<int64_t>& v);

std::string serialize(const onnx::ModelProto& m);

}  // namespace onnx_test
