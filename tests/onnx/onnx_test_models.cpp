#include "tests/onnx/onnx_test_models.h"

#include <cctype>
#include <cstring>

namespace onnx_test {

onnx::ModelProto make_model(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tessera-test");
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("main");
  return m;
}

void set_type(onnx::ValueInfoProto* vi, int32_t elem_type, const std::vector<std::string>& dims) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (d.empty()) continue;
    if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

onnx::ValueInfoProto* add_input(onnx::GraphProto* g, const std::string& name, int32_t elem_type,
                                const std::vector<std::string>& dims) {
  auto* vi = g->add_input();
  vi->set_name(name);
  set_type(vi, elem_type, dims);
  return vi;
}

onnx::ValueInfoProto* add_output(onnx::GraphProto* g, const std::string& name, int32_t elem_type,
                                 const std::vector<std::string>& dims) {
  auto* vi = g->add_output();
  vi->set_name(name);
  set_type(vi, elem_type, dims);
  return vi;
}

onnx::ValueInfoProto* add_output(onnx::GraphProto* g, const std::string& name) {
  auto* vi = g->add_output();
  vi->set_name(name);
  return vi;
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

namespace {
onnx::AttributeProto* new_attr(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}
}  // namespace

void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) { new_attr(n, name, onnx::AttributeProto::INT)->set_i(v); }
void attr_float(onnx::NodeProto* n, const std::string& name, float v) { new_attr(n, name, onnx::AttributeProto::FLOAT)->set_f(v); }
void attr_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  new_attr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = new_attr(n, name, onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
void attr_floats(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  auto* a = new_attr(n, name, onnx::AttributeProto::FLOATS);
  for (auto x : v) a->add_floats(x);
}
void attr_strings(onnx::NodeProto* n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = new_attr(n, name, onnx::AttributeProto::STRINGS);
  for (const auto& x : v) a->add_strings(x);
}
onnx::TensorProto* attr_tensor(onnx::NodeProto* n, const std::string& name) {
  return new_attr(n, name, onnx::AttributeProto::TENSOR)->mutable_t();
}
onnx::GraphProto* attr_graph(onnx::NodeProto* n, const std::string& name) {
  return new_attr(n, name, onnx::AttributeProto::GRAPH)->mutable_g();
}

void fill_f32(onnx::TensorProto* t, const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<float>& v, bool raw) {
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  if (raw) {
    std::string bytes(v.size() * sizeof(float), '\0');
    if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    t->set_raw_data(bytes);
  } else {
    for (auto x : v) t->add_float_data(x);
  }
}

void fill_i64(onnx::TensorProto* t, const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<int64_t>& v) {
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (auto d : dims) t->add_dims(d);
  for (auto x : v) t->add_int64_data(x);
}

std::string serialize(const onnx::ModelProto& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

}  // namespace onnx_test
