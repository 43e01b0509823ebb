// ONNX importer tests. Models are built in C++ with onnx's protobuf API (onnx_test_models.h);
// expected values follow from the ONNX operator spec (Changelog: the opset in which each
// attribute became an input) and from the values written into the models.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/ir/graph.h"
#include "core/passes/infer_types.h"
#include "tests/onnx/onnx_test_models.h"
// After onnx_pb.h (pulled in above), which defines ONNX_API.
#include <onnx/onnx-data.pb.h>
#include "tools/onnx/onnx_import.h"

using namespace tsr;
using namespace onnx_test;
using onnx::TensorProto;

namespace {

onnx_import::ImportOptions no_verify() {
  onnx_import::ImportOptions o;
  o.verify = false;
  return o;
}

ir::Model import_ok(const onnx::ModelProto& m, bool verify = false) {
  onnx_import::ImportOptions o;
  o.verify = verify;
  Expected<ir::Model> r = onnx_import::import_onnx_bytes(serialize(m), "test.onnx", o);
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  return std::move(r).value();
}

const ir::TensorInfo& tensor(const ir::Graph& g, const std::string& name) {
  const int32_t id = g.find_tensor(name);
  INFO("tensor " << name);
  REQUIRE(id >= 0);
  return g.tensors[static_cast<size_t>(id)];
}

const ir::TensorInfo& at(const ir::Graph& g, int32_t id) {
  REQUIRE(id >= 0);
  REQUIRE(static_cast<size_t>(id) < g.tensors.size());
  return g.tensors[static_cast<size_t>(id)];
}

const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return n;
  FAIL("no node " << name);
  return g.nodes.front();
}

std::vector<int64_t> const_i64(const ir::Graph& g, int32_t id) {
  const auto& t = at(g, id);
  REQUIRE(t.constant.defined());
  REQUIRE(t.constant.dtype() == DType::kI64);
  return t.constant.to_i64_vector();
}

std::string temp_path(const std::string& leaf) {
  return (std::filesystem::temp_directory_path() / ("tsr_onnx_test_" + std::to_string(::getpid()) + "_" + leaf)).string();
}

}  // namespace

TEST_CASE("missing file is kNotFound") {
  auto r = onnx_import::import_onnx_file("/nonexistent/dir/model.onnx");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotFound);
  auto t = onnx_import::read_tensor_proto_file("/nonexistent/dir/input_0.pb");
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == StatusCode::kNotFound);
}

TEST_CASE("garbage bytes and graphless protos are kInvalidModel") {
  const char kGarbage[] = "\xff\xff\xff\xff\x0f garbage, not a protobuf \x01\x02";
  const std::string garbage(kGarbage, sizeof(kGarbage) - 1);
  auto r = onnx_import::import_onnx_bytes(garbage, "garbage.onnx");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidModel);
  CHECK(r.status().message().find("garbage.onnx") != std::string::npos);
  // An empty string parses as an empty ModelProto: still not a model.
  auto e = onnx_import::import_onnx_bytes(std::string(), "empty.onnx");
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().code() == StatusCode::kInvalidModel);
}

TEST_CASE("inputs, outputs, dim_params and initializers") {
  onnx::ModelProto m = make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"N", "3", "", "W"});
  // IR<4 style: an initializer also listed as an input stays a constant, not an input.
  add_input(g, "w", TensorProto::FLOAT, {"2", "2"});
  fill_f32(g->add_initializer(), "w", {2, 2}, {1.f, 2.f, 3.f, 4.f}, /*raw=*/true);
  fill_f32(g->add_initializer(), "wf", {3}, {0.5f, -1.f, 2.f}, /*raw=*/false);
  fill_i64(g->add_initializer(), "shape", {2}, {-1, 6});
  {
    auto* t = g->add_initializer();  // int8 in int32_data, one element per entry
    t->set_name("i8");
    t->set_data_type(TensorProto::INT8);
    t->add_dims(3);
    for (int v : {-128, 0, 127}) t->add_int32_data(v);
  }
  {
    auto* t = g->add_initializer();  // f16 bit patterns in int32_data: 1.0 = 0x3C00, -2.0 = 0xC000
    t->set_name("h");
    t->set_data_type(TensorProto::FLOAT16);
    t->add_dims(2);
    t->add_int32_data(0x3C00);
    t->add_int32_data(0xC000);
  }
  {
    auto* t = g->add_initializer();
    t->set_name("b");
    t->set_data_type(TensorProto::BOOL);
    t->add_dims(2);
    t->add_int32_data(1);
    t->add_int32_data(0);
  }
  {
    auto* t = g->add_initializer();
    t->set_name("u16");
    t->set_data_type(TensorProto::UINT16);
    t->add_dims(1);
    t->add_int32_data(65535);
  }
  {
    auto* t = g->add_initializer();
    t->set_name("d");
    t->set_data_type(TensorProto::DOUBLE);
    t->add_double_data(2.5);  // a scalar: no dims
  }
  {
    auto* t = g->add_initializer();
    t->set_name("u64");
    t->set_data_type(TensorProto::UINT64);
    t->add_dims(1);
    t->add_uint64_data(18446744073709551615ull);
  }
  {
    auto* t = g->add_initializer();
    t->set_name("s");
    t->set_data_type(TensorProto::STRING);
    t->add_dims(2);
    t->add_string_data("ab");
    t->add_string_data("");
  }
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output(g, "y", TensorProto::FLOAT, {"N", "3", "", "W"});

  ir::Model model = import_ok(m);
  REQUIRE(model.graphs.size() == 1);
  const ir::Graph& mg = model.main();
  REQUIRE(mg.inputs.size() == 1);
  const auto& x = at(mg, mg.inputs[0]);
  CHECK(x.name == "x");
  CHECK(x.dtype == DType::kF32);
  REQUIRE(x.has_shape);
  CHECK(x.shape == Shape{-1, 3, -1, -1});
  CHECK(x.dim_names == std::vector<std::string>{"N", "", "", "W"});
  REQUIRE(mg.outputs.size() == 1);
  CHECK(at(mg, mg.outputs[0]).name == "y");

  const auto& w = tensor(mg, "w");
  REQUIRE(w.constant.defined());
  CHECK(w.constant.shape() == Shape{2, 2});
  CHECK(w.constant.data<float>()[3] == 4.f);
  CHECK(tensor(mg, "wf").constant.data<float>()[1] == -1.f);
  CHECK(const_i64(mg, mg.find_tensor("shape")) == std::vector<int64_t>{-1, 6});
  const auto& i8 = tensor(mg, "i8").constant;
  CHECK(i8.dtype() == DType::kI8);
  CHECK(i8.data<int8_t>()[0] == -128);
  CHECK(i8.data<int8_t>()[2] == 127);
  const auto& h = tensor(mg, "h").constant;
  CHECK(h.dtype() == DType::kF16);
  CHECK(f16_to_f32(h.data<uint16_t>()[0]) == 1.f);
  CHECK(f16_to_f32(h.data<uint16_t>()[1]) == -2.f);
  CHECK(tensor(mg, "b").constant.data<uint8_t>()[0] == 1);
  CHECK(tensor(mg, "b").constant.data<uint8_t>()[1] == 0);
  CHECK(tensor(mg, "u16").constant.data<uint16_t>()[0] == 65535);
  CHECK(tensor(mg, "d").constant.rank() == 0);
  CHECK(tensor(mg, "d").constant.data<double>()[0] == 2.5);
  CHECK(tensor(mg, "u64").constant.data<uint64_t>()[0] == 18446744073709551615ull);
  CHECK(tensor(mg, "s").constant.data<std::string>()[0] == "ab");
  CHECK(tensor(mg, "s").dtype == DType::kString);
  REQUIRE(mg.nodes.size() == 1);
  CHECK(mg.nodes[0].op == "Relu");
  CHECK(mg.nodes[0].version == 17);
}

TEST_CASE("initializer data that does not match its dims is kInvalidModel") {
  onnx::ModelProto m = make_model(17);
  auto* g = m.mutable_graph();
  fill_f32(g->add_initializer(), "w", {2, 3}, {1.f, 2.f}, /*raw=*/true);
  add_output(g, "w", TensorProto::FLOAT, {"2", "3"});
  auto r = onnx_import::import_onnx_bytes(serialize(m), "bad.onnx", no_verify());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidModel);
  CHECK(r.status().message().find("'w'") != std::string::npos);
}

TEST_CASE("Constant nodes in every attribute form become constant tensors") {
  onnx::ModelProto m = make_model(17);
  auto* g = m.mutable_graph();
  fill_f32(attr_tensor(add_node(g, "Constant", {}, {"c_value"}), "value"), "", {2}, {7.f, 8.f}, true);
  attr_float(add_node(g, "Constant", {}, {"c_float"}), "value_float", 1.5f);
  attr_floats(add_node(g, "Constant", {}, {"c_floats"}), "value_floats", {1.f, 2.f, 3.f});
  attr_int(add_node(g, "Constant", {}, {"c_int"}), "value_int", -4);
  attr_ints(add_node(g, "Constant", {}, {"c_ints"}), "value_ints", {5, 6});
  attr_string(add_node(g, "Constant", {}, {"c_string"}), "value_string", "hello");
  attr_strings(add_node(g, "Constant", {}, {"c_strings"}), "value_strings", {"a", "bc"});
  {
    // sparse_value: dense [2, 3] with 9 at (0, 1) and 4 at (1, 2), indices [NNZ, rank].
    auto* n = add_node(g, "Constant", {}, {"c_sparse"});
    auto* a = n->add_attribute();
    a->set_name("sparse_value");
    a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
    auto* sp = a->mutable_sparse_tensor();
    sp->add_dims(2);
    sp->add_dims(3);
    fill_f32(sp->mutable_values(), "sv", {2}, {9.f, 4.f}, false);
    fill_i64(sp->mutable_indices(), "si", {2, 2}, {0, 1, 1, 2});
  }
  for (const char* o : {"c_value", "c_float", "c_floats", "c_int", "c_ints", "c_string", "c_strings", "c_sparse"})
    add_output(g, o);

  ir::Model model = import_ok(m);
  const ir::Graph& mg = model.main();
  CHECK(mg.nodes.empty());
  REQUIRE(mg.outputs.size() == 8);
  const auto& v = tensor(mg, "c_value").constant;
  CHECK(v.shape() == Shape{2});
  CHECK(v.data<float>()[1] == 8.f);
  const auto& f = tensor(mg, "c_float");
  CHECK(f.constant.rank() == 0);
  CHECK(f.dtype == DType::kF32);
  CHECK(f.constant.data<float>()[0] == 1.5f);
  CHECK(tensor(mg, "c_floats").constant.shape() == Shape{3});
  CHECK(tensor(mg, "c_floats").constant.data<float>()[2] == 3.f);
  CHECK(tensor(mg, "c_int").constant.dtype() == DType::kI64);
  CHECK(tensor(mg, "c_int").constant.rank() == 0);
  CHECK(tensor(mg, "c_int").constant.data<int64_t>()[0] == -4);
  CHECK(const_i64(mg, mg.find_tensor("c_ints")) == std::vector<int64_t>{5, 6});
  CHECK(tensor(mg, "c_string").constant.data<std::string>()[0] == "hello");
  CHECK(tensor(mg, "c_strings").constant.data<std::string>()[1] == "bc");
  const auto& sp = tensor(mg, "c_sparse").constant;
  CHECK(sp.shape() == Shape{2, 3});
  const std::vector<float> dense(sp.data<float>(), sp.data<float>() + 6);
  CHECK(dense == std::vector<float>{0, 9, 0, 0, 0, 4});
}

TEST_CASE("sequence and optional types map to kinds with element types") {
  onnx::ModelProto m = make_model(17);
  auto* g = m.mutable_graph();
  auto* seq = g->add_input();
  seq->set_name("seq");
  set_type(seq, TensorProto::FLOAT, {"2", "N"});
  {
    onnx::TypeProto elem = seq->type();
    *seq->mutable_type()->mutable_sequence_type()->mutable_elem_type() = elem;
  }
  auto* opt = g->add_input();
  opt->set_name("opt");
  set_type(opt, TensorProto::INT64, {"3"});
  {
    onnx::TypeProto elem = opt->type();
    *opt->mutable_type()->mutable_optional_type()->mutable_elem_type() = elem;
  }
  add_output(g, "seq");
  add_output(g, "opt");
  ir::Model model = import_ok(m);
  const auto& s = tensor(model.main(), "seq");
  CHECK(s.kind == ValueKind::kSequence);
  CHECK(s.dtype == DType::kF32);
  CHECK(s.shape == Shape{2, -1});
  const auto& o = tensor(model.main(), "opt");
  CHECK(o.kind == ValueKind::kTensor);
  CHECK(o.dtype == DType::kI64);
  CHECK(o.shape == Shape{3});
}

TEST_CASE("external data is an error naming the tensor") {
  onnx::ModelProto m = make_model(17);
  auto* g = m.mutable_graph();
  auto* t = g->add_initializer();
  t->set_name("big_weight");
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  add_output(g, "big_weight");
  auto r = onnx_import::import_onnx_bytes(serialize(m), "ext.onnx");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kUnsupported);
  CHECK(r.status().message().find("big_weight") != std::string::npos);
  CHECK(r.status().message().find("external") != std::string::npos);
}

TEST_CASE("external data from memory: ImportOptions::external_data by location, offset and length") {
  onnx::ModelProto m = make_model(17);
  auto* g = m.mutable_graph();
  auto* t = g->add_initializer();
  t->set_name("w");
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(2);
  t->set_data_location(TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const char* v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", "./m.onnx_data");
  kv("offset", "4");
  kv("length", "8");
  add_output(g, "w");
  const float values[] = {9.0f, 1.5f, -2.0f};  // the tensor is the 2 floats after the first
  const std::string file(reinterpret_cast<const char*>(values), sizeof values);
  onnx_import::ImportOptions options;
  options.external_data["m.onnx_data"] = file;
  auto r = onnx_import::import_onnx_bytes(serialize(m), "ext.onnx", options);
  REQUIRE(r.ok());
  const Tensor& w = tensor(r->main(), "w").constant;
  REQUIRE(w.numel() == 2);
  CHECK(w.data<float>()[0] == 1.5f);
  CHECK(w.data<float>()[1] == -2.0f);

  onnx_import::ImportOptions other;
  other.external_data["x.bin"] = file;
  auto missing = onnx_import::import_onnx_bytes(serialize(m), "ext.onnx", other);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message() ==
        "ext.onnx: tensor 'w': its external data file './m.onnx_data' was not given (given: 'x.bin')");
  onnx_import::ImportOptions short_file;
  short_file.external_data["m.onnx_data"] = std::string_view(file).substr(0, 8);
  auto past = onnx_import::import_onnx_bytes(serialize(m), "ext.onnx", short_file);
  REQUIRE_FALSE(past.ok());
  CHECK(past.status().code() == StatusCode::kInvalidModel);
  CHECK(past.status().message().find("past the end of './m.onnx_data' (8 bytes)") != std::string::npos);
}

TEST_CASE("opset-9 Squeeze, Unsqueeze, Clip and Slice attributes become constant inputs") {
  onnx::ModelProto m = make_model(9);
  auto* g = m.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"1", "4", "1", "6"});
  attr_ints(add_node(g, "Squeeze", {"x"}, {"sq"}, "squeeze"), "axes", {0, 2});
  auto* clip = add_node(g, "Clip", {"sq"}, {"cl"}, "clip");
  attr_float(clip, "min", 0.f);
  attr_float(clip, "max", 6.f);
  auto* clip_hi = add_node(g, "Clip", {"cl"}, {"cl2"}, "clip_max_only");
  attr_float(clip_hi, "max", 3.f);
  auto* slice = add_node(g, "Slice", {"cl2"}, {"sl"}, "slice");
  attr_ints(slice, "starts", {1, 0});
  attr_ints(slice, "ends", {3, 5});
  attr_ints(slice, "axes", {0, 1});
  attr_ints(add_node(g, "Unsqueeze", {"sl"}, {"y"}, "unsqueeze"), "axes", {0});
  add_output(g, "y");
  ir::Model model = import_ok(m);
  const ir::Graph& mg = model.main();
  REQUIRE(mg.nodes.size() == 5);

  const ir::Node& sq = node_named(mg, "squeeze");
  CHECK(sq.version == 9);
  CHECK(sq.attributes.empty());
  REQUIRE(sq.inputs.size() == 2);
  CHECK(const_i64(mg, sq.inputs[1]) == std::vector<int64_t>{0, 2});

  const ir::Node& cl = node_named(mg, "clip");
  CHECK(cl.attributes.empty());
  REQUIRE(cl.inputs.size() == 3);
  const auto& lo = at(mg, cl.inputs[1]).constant;
  const auto& hi = at(mg, cl.inputs[2]).constant;
  REQUIRE(lo.defined());
  CHECK(lo.dtype() == DType::kF32);  // the input's dtype
  CHECK(lo.rank() == 0);
  CHECK(lo.data<float>()[0] == 0.f);
  CHECK(hi.data<float>()[0] == 6.f);
  const ir::Node& cl2 = node_named(mg, "clip_max_only");
  REQUIRE(cl2.inputs.size() == 3);
  CHECK(cl2.inputs[1] == -1);  // min omitted
  CHECK(at(mg, cl2.inputs[2]).constant.data<float>()[0] == 3.f);

  const ir::Node& sl = node_named(mg, "slice");
  CHECK(sl.attributes.empty());
  REQUIRE(sl.inputs.size() == 4);
  CHECK(const_i64(mg, sl.inputs[1]) == std::vector<int64_t>{1, 0});
  CHECK(const_i64(mg, sl.inputs[2]) == std::vector<int64_t>{3, 5});
  CHECK(const_i64(mg, sl.inputs[3]) == std::vector<int64_t>{0, 1});

  const ir::Node& un = node_named(mg, "unsqueeze");
  REQUIRE(un.inputs.size() == 2);
  CHECK(const_i64(mg, un.inputs[1]) == std::vector<int64_t>{0});

  // Tessera's inference (what verification runs) fills the intermediates from the normalized
  // inputs: Squeeze(axes 0, 2) of [1,4,1,6] is [4,6]; Slice rows 1..3, cols 0..5 of it is [2,5];
  // Unsqueeze(0) gives [1,2,5].
  REQUIRE(passes::infer_types(model).ok());
  const auto& sqo = tensor(mg, "sq");
  CHECK(sqo.dtype == DType::kF32);
  CHECK(sqo.shape == Shape{4, 6});
  CHECK(tensor(mg, "sl").shape == Shape{2, 5});
  CHECK(tensor(mg, "y").shape == Shape{1, 2, 5});
}

TEST_CASE("other pre-opset-13 forms are normalized") {
  onnx::ModelProto m = make_model(9);
  auto* g = m.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"2", "3", "4"});
  auto* pad = add_node(g, "Pad", {"x"}, {"p"}, "pad");
  attr_ints(pad, "pads", {0, 1, 0, 0, 1, 0});
  attr_float(pad, "value", 2.f);
  attr_ints(add_node(g, "Split", {"x"}, {"s0", "s1"}, "split"), "split", {1, 2});
  auto* rs = add_node(g, "ReduceSum", {"x"}, {"r"}, "reducesum");
  attr_ints(rs, "axes", {1});
  attr_int(rs, "keepdims", 0);
  attr_int(add_node(g, "TopK", {"x"}, {"tv", "ti"}, "topk"), "k", 2);
  attr_float(add_node(g, "Dropout", {"x"}, {"dr", ""}, "dropout"), "ratio", 0.25f);
  attr_int(add_node(g, "Softmax", {"x"}, {"sm_last"}, "softmax_last"), "axis", 2);
  add_node(g, "Softmax", {"x"}, {"sm_mid"}, "softmax_mid");  // opset-9 default axis 1
  attr_string(add_node(g, "Upsample", {"x", "scales"}, {"up"}, "upsample"), "mode", "nearest");
  fill_f32(g->add_initializer(), "scales", {3}, {1.f, 2.f, 2.f}, false);
  for (const char* o : {"p", "s0", "s1", "r", "tv", "ti", "dr", "sm_last", "sm_mid", "up"}) add_output(g, o);
  ir::Model model = import_ok(m);
  const ir::Graph& mg = model.main();

  const ir::Node& p = node_named(mg, "pad");
  REQUIRE(p.inputs.size() == 3);
  CHECK(const_i64(mg, p.inputs[1]) == std::vector<int64_t>{0, 1, 0, 0, 1, 0});
  CHECK(at(mg, p.inputs[2]).constant.data<float>()[0] == 2.f);
  CHECK(p.attr("pads") == nullptr);
  CHECK(p.attr("value") == nullptr);
  CHECK(const_i64(mg, node_named(mg, "split").inputs.at(1)) == std::vector<int64_t>{1, 2});
  const ir::Node& r = node_named(mg, "reducesum");
  CHECK(const_i64(mg, r.inputs.at(1)) == std::vector<int64_t>{1});
  CHECK(r.attr_int("keepdims", 1) == 0);
  CHECK(const_i64(mg, node_named(mg, "topk").inputs.at(1)) == std::vector<int64_t>{2});
  const ir::Node& d = node_named(mg, "dropout");
  REQUIRE(d.inputs.size() == 2);
  CHECK(at(mg, d.inputs[1]).constant.data<float>()[0] == 0.25f);
  CHECK(d.outputs.size() == 1);  // the omitted mask output is trimmed

  // Softmax-9 over the last axis is Softmax-13 with axis=-1.
  CHECK(node_named(mg, "softmax_last").attr_int("axis", 0) == -1);
  // Softmax-9 with axis 1 of a rank-3 input flattens to [2, 12]: Shape, Flatten(1),
  // Softmax(axis=1), Reshape back to the input's shape.
  const ir::Node& smm = node_named(mg, "softmax_mid");
  CHECK(smm.attr_int("axis", 0) == 1);
  const ir::Node& fl = node_named(mg, "softmax_mid/flatten");
  CHECK(fl.op == "Flatten");
  CHECK(fl.attr_int("axis", 0) == 1);
  CHECK(smm.inputs.at(0) == fl.outputs.at(0));
  const ir::Node& rsh = node_named(mg, "softmax_mid/reshape");
  CHECK(rsh.op == "Reshape");
  CHECK(rsh.inputs.at(0) == smm.outputs.at(0));
  CHECK(at(mg, rsh.outputs.at(0)).name == "sm_mid");
  CHECK(node_named(mg, "softmax_mid/shape").op == "Shape");

  const ir::Node& up = node_named(mg, "upsample");
  CHECK(up.op == "Resize");
  REQUIRE(up.inputs.size() == 3);
  CHECK(up.inputs[1] == -1);
  CHECK(at(mg, up.inputs[2]).name == "scales");
  CHECK(up.attr_string("coordinate_transformation_mode", "") == "asymmetric");
  CHECK(up.attr_string("nearest_mode", "") == "floor");
}

TEST_CASE("BatchNormalization drops attributes of old opsets") {
  onnx::ModelProto m = make_model(7);
  auto* g = m.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"1", "2", "3", "3"});
  for (const char* n : {"sc", "bi", "me", "va"}) fill_f32(g->add_initializer(), n, {2}, {1.f, 1.f}, true);
  auto* bn = add_node(g, "BatchNormalization", {"x", "sc", "bi", "me", "va"}, {"y"}, "bn");
  attr_int(bn, "spatial", 1);
  attr_float(bn, "epsilon", 1e-3f);
  add_output(g, "y");
  ir::Model model = import_ok(m);
  const ir::Node& n = node_named(model.main(), "bn");
  CHECK(n.attr("spatial") == nullptr);
  CHECK(n.attr_float("epsilon", 0) == Approx(1e-3));
  CHECK(n.version == 7);

  attr_int(g->mutable_node(0), "spatial", 0);  // now two spatial attrs; the mapped form rejects 0
  g->mutable_node(0)->mutable_attribute()->DeleteSubrange(0, 1);
  auto r = onnx_import::import_onnx_bytes(serialize(m), "bn.onnx", no_verify());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kUnsupported);
  CHECK(r.status().message().find("spatial") != std::string::npos);
}

TEST_CASE("every unsupported op, including other domains, is listed in one error") {
  onnx::ModelProto m = make_model(17);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"2"});
  add_node(g, "Relu", {"x"}, {"r"}, "relu");
  add_node(g, "NoSuchOpA", {"r"}, {"a"}, "a");
  add_node(g, "NoSuchOpB", {"a"}, {"b"}, "b");
  add_node(g, "NoSuchOpA", {"b"}, {"c"}, "a2");
  add_node(g, "FusedConv", {"c"}, {"y"}, "fc")->set_domain("com.microsoft");
  add_output(g, "y", TensorProto::FLOAT, {"2"});
  auto r = onnx_import::import_onnx_bytes(serialize(m), "unsup.onnx");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kUnsupported);
  const std::string& msg = r.status().message();
  CHECK(msg.find("NoSuchOpA") != std::string::npos);
  CHECK(msg.find("NoSuchOpB") != std::string::npos);
  CHECK(msg.find("com.microsoft::FusedConv") != std::string::npos);
  CHECK(msg.find("unsupported ops:") != std::string::npos);  // one error, a list (Relu may join it)

  // Unverified, the mapping keeps the domain-qualified op and the domain's opset.
  ir::Model model = import_ok(m);
  CHECK(node_named(model.main(), "fc").op == "com.microsoft::FusedConv");
  CHECK(node_named(model.main(), "fc").version == 1);
}

TEST_CASE("opset-18 Reduce axes inputs and Pad axes are brought back to the opset-17 form") {
  onnx::ModelProto m = make_model(18);
  auto* g = m.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"2", "3", "4"});
  fill_i64(g->add_initializer(), "axes", {1}, {-1});
  fill_i64(g->add_initializer(), "pads", {2}, {1, 2});
  fill_i64(g->add_initializer(), "pad_axes", {1}, {1});
  attr_int(add_node(g, "ReduceMean", {"x", "axes"}, {"rm"}, "rmean"), "keepdims", 1);
  add_node(g, "Pad", {"x", "pads", "", "pad_axes"}, {"p"}, "pad");
  add_node(g, "ReduceSum", {"x", "axes"}, {"rs"}, "rsum");  // axes input since 13: unchanged
  for (const char* o : {"rm", "p", "rs"}) add_output(g, o);
  ir::Model model = import_ok(m);
  const ir::Graph& mg = model.main();
  const ir::Node& rm = node_named(mg, "rmean");
  CHECK(rm.inputs.size() == 1);
  CHECK(rm.attr_ints("axes") == std::vector<int64_t>{-1});
  // Pad axes [1] with pads [1, 2] on rank 3: full pads [0, 1, 0, 0, 2, 0].
  const ir::Node& p = node_named(mg, "pad");
  REQUIRE(p.inputs.size() == 2);
  CHECK(const_i64(mg, p.inputs[1]) == std::vector<int64_t>{0, 1, 0, 0, 2, 0});
  CHECK(node_named(mg, "rsum").inputs.size() == 2);
}

TEST_CASE("If branches capture outer values as explicit inputs, recursively") {
  // main(cond: bool, x: f32[2], y: f32[2]):
  //   out = If(cond) then { x }   else { If(cond) then { y } else { Constant [5, 6] } }
  // then_branch captures x; else_branch captures cond (input of the inner If) and, for its inner
  // then-branch, y. The union in first-use order is [x, cond, y].
  onnx::ModelProto m = make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "cond", TensorProto::BOOL, {});
  add_input(g, "x", TensorProto::FLOAT, {"2"});
  add_input(g, "y", TensorProto::FLOAT, {"2"});
  auto* outer = add_node(g, "If", {"cond"}, {"out"}, "outer_if");
  auto* then_g = attr_graph(outer, "then_branch");
  then_g->set_name("then");
  add_output(then_g, "x", TensorProto::FLOAT, {"2"});
  auto* else_g = attr_graph(outer, "else_branch");
  else_g->set_name("else");
  auto* inner = add_node(else_g, "If", {"cond"}, {"inner_out"}, "inner_if");
  auto* it = attr_graph(inner, "then_branch");
  it->set_name("inner_then");
  add_output(it, "y", TensorProto::FLOAT, {"2"});
  auto* ie = attr_graph(inner, "else_branch");
  ie->set_name("inner_else");
  attr_floats(add_node(ie, "Constant", {}, {"k"}), "value_floats", {5.f, 6.f});
  add_output(ie, "k", TensorProto::FLOAT, {"2"});
  add_output(else_g, "inner_out", TensorProto::FLOAT, {"2"});
  add_output(g, "out", TensorProto::FLOAT, {"2"});

  // The If OpDef is registered: this model verifies completely.
  ir::Model model = import_ok(m, /*verify=*/true);
  REQUIRE(model.graphs.size() == 5);
  const ir::Graph& mg = model.main();
  REQUIRE(mg.nodes.size() == 1);
  const ir::Node& oif = mg.nodes[0];
  std::vector<std::string> names;
  for (int32_t id : oif.inputs) names.push_back(at(mg, id).name);
  CHECK(names == std::vector<std::string>{"cond", "x", "cond", "y"});
  CHECK(oif.attr("num_captures") == nullptr);

  const ir::Attribute* ta = oif.attr("then_branch");
  const ir::Attribute* ea = oif.attr("else_branch");
  REQUIRE(ta);
  REQUIRE(ea);
  REQUIRE(ta->kind == ir::AttrKind::kGraph);
  const ir::Graph& tg = model.graphs.at(static_cast<size_t>(ta->i));
  const ir::Graph& eg = model.graphs.at(static_cast<size_t>(ea->i));
  REQUIRE(tg.inputs.size() == 3);
  REQUIRE(eg.inputs.size() == 3);
  CHECK(at(tg, tg.inputs[0]).name == "x");
  CHECK(tg.outputs.at(0) == tg.inputs[0]);  // the branch returns its capture
  CHECK(at(tg, tg.inputs[2]).dtype == DType::kF32);  // unused capture keeps the outer type
  CHECK(at(eg, eg.inputs[1]).name == "cond");
  CHECK(at(eg, eg.inputs[2]).name == "y");
  CHECK(at(eg, eg.inputs[1]).dtype == DType::kBool);

  // Inside else: the inner If reads cond and y through else's inputs.
  REQUIRE(eg.nodes.size() == 1);
  const ir::Node& iif = eg.nodes[0];
  REQUIRE(iif.inputs.size() == 2);
  CHECK(iif.inputs[0] == eg.inputs[1]);
  CHECK(iif.inputs[1] == eg.inputs[2]);
  const ir::Graph& itg = model.graphs.at(static_cast<size_t>(iif.attr("then_branch")->i));
  const ir::Graph& ieg = model.graphs.at(static_cast<size_t>(iif.attr("else_branch")->i));
  REQUIRE(itg.inputs.size() == 1);
  REQUIRE(ieg.inputs.size() == 1);  // unused, for the shared capture order
  CHECK(at(itg, itg.inputs[0]).name == "y");
  CHECK(at(ieg, ieg.outputs.at(0)).constant.defined());
  // verify=true ran type inference: the If output is f32[2].
  CHECK(at(mg, mg.outputs.at(0)).dtype == DType::kF32);
}

TEST_CASE("Loop bodies capture outer values, outer constants are copied") {
  // main(x: f32[3]): w = initializer; v = Loop(M=2, cond="", v0=x) body(i, c, v) { c, w, x }
  // The body reads x (captured: an extra body input and Loop input, num_captures = 1) and the
  // initializer w (copied into the body as a constant).
  onnx::ModelProto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"3"});
  fill_i64(g->add_initializer(), "M", {}, {2});
  fill_f32(g->add_initializer(), "w", {3}, {1.f, 2.f, 3.f}, true);
  auto* loop = add_node(g, "Loop", {"M", "", "x"}, {"v_final", "scan"}, "loop");
  auto* body = attr_graph(loop, "body");
  body->set_name("body");
  add_input(body, "i", TensorProto::INT64, {});
  add_input(body, "c", TensorProto::BOOL, {});
  add_input(body, "v", TensorProto::FLOAT, {"3"});
  add_output(body, "c", TensorProto::BOOL, {});
  add_output(body, "w", TensorProto::FLOAT, {"3"});
  add_output(body, "x", TensorProto::FLOAT, {"3"});
  add_output(g, "v_final");
  add_output(g, "scan");
  ir::Model model = import_ok(m);
  const ir::Graph& mg = model.main();
  const ir::Node& ln = node_named(mg, "loop");
  REQUIRE(ln.inputs.size() == 4);
  CHECK(ln.inputs[1] == -1);  // omitted cond keeps its position
  CHECK(at(mg, ln.inputs[3]).name == "x");
  CHECK(ln.attr_int("num_captures", -1) == 1);
  const ir::Graph& bg = model.graphs.at(static_cast<size_t>(ln.attr("body")->i));
  REQUIRE(bg.inputs.size() == 4);
  CHECK(at(bg, bg.inputs[3]).name == "x");
  CHECK(bg.outputs.at(2) == bg.inputs[3]);
  const auto& w = at(bg, bg.outputs.at(1));
  REQUIRE(w.constant.defined());
  CHECK(w.constant.data<float>()[2] == 3.f);
}

TEST_CASE("read_tensor_proto_file reads ONNX test-data tensors") {
  TensorProto t;
  fill_f32(&t, "input_0", {2, 2}, {1.f, -2.f, 3.5f, 0.f}, /*raw=*/true);
  const std::string path = temp_path("input_0.pb");
  {
    std::ofstream f(path, std::ios::binary);
    REQUIRE(t.SerializeToOstream(&f));
  }
  auto r = onnx_import::read_tensor_proto_file(path);
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  CHECK(r->dtype() == DType::kF32);
  CHECK(r->shape() == Shape{2, 2});
  CHECK(r->data<float>()[2] == 3.5f);
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << "\xff\xff\xff garbage";
  }
  auto bad = onnx_import::read_tensor_proto_file(path);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidModel);
  std::remove(path.c_str());
}

TEST_CASE("read_value_proto_file reads sequences and optionals") {
  const std::string path = temp_path("value.pb");
  auto write = [&](const google::protobuf::MessageLite& msg) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    REQUIRE(msg.SerializeToOstream(&f));
  };
  onnx::SequenceProto seq;
  seq.set_name("s");
  seq.set_elem_type(onnx::SequenceProto::TENSOR);
  fill_f32(seq.add_tensor_values(), "", {2}, {1.f, 2.f}, true);
  fill_f32(seq.add_tensor_values(), "", {1}, {3.f}, false);
  write(seq);
  auto s = onnx_import::read_value_proto_file(path, ValueKind::kSequence);
  INFO(s.status().to_string());
  REQUIRE(s.ok());
  CHECK(s->is_sequence());
  CHECK(s->dtype() == DType::kF32);

  onnx::OptionalProto empty;
  empty.set_name("o");
  empty.set_elem_type(onnx::OptionalProto::TENSOR);
  write(empty);
  auto e = onnx_import::read_tensor_proto_file(path);
  INFO(e.status().to_string());
  REQUIRE(e.ok());
  CHECK(e->is_none());

  onnx::OptionalProto full;
  full.set_name("o");
  full.set_elem_type(onnx::OptionalProto::TENSOR);
  fill_i64(full.mutable_tensor_value(), "t", {3}, {4, 5, 6});
  write(full);
  auto f = onnx_import::read_tensor_proto_file(path);
  INFO(f.status().to_string());
  REQUIRE(f.ok());
  CHECK(f->to_i64_vector() == std::vector<int64_t>{4, 5, 6});
  std::remove(path.c_str());
}

TEST_CASE("corrupted models fail cleanly") {
  // Byte flips and truncations of a model with initializers, Constants, a subgraph and opset-9
  // attributes: every import returns (ok or an error status); none crashes or throws.
  onnx::ModelProto m = make_model(9);
  auto* g = m.mutable_graph();
  add_input(g, "cond", TensorProto::BOOL, {});
  add_input(g, "x", TensorProto::FLOAT, {"N", "4"});
  fill_f32(g->add_initializer(), "w", {4}, {1.f, 2.f, 3.f, 4.f}, true);
  attr_ints(add_node(g, "Constant", {}, {"k"}), "value_ints", {1, 2});
  attr_ints(add_node(g, "Unsqueeze", {"x"}, {"u"}, "unsq"), "axes", {0});
  auto* iff = add_node(g, "If", {"cond"}, {"out"}, "if");
  add_output(attr_graph(iff, "then_branch"), "w");
  add_output(attr_graph(iff, "else_branch"), "u");
  add_output(g, "out");
  const std::string good = serialize(m);
  uint64_t state = 0x9E3779B97F4A7C15ull;  // xorshift64: a fixed, reproducible sequence
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int errors = 0;
  for (int it = 0; it < 400; ++it) {
    std::string bad = good;
    if (it % 4 == 3) {
      bad.resize(next() % bad.size());
    } else {
      for (int k = 0; k < 1 + it % 3; ++k) bad[next() % bad.size()] = static_cast<char>(next() & 0xff);
    }
    auto r = onnx_import::import_onnx_bytes(bad, "mutant.onnx");
    if (!r.ok()) {
      ++errors;
      CHECK(r.status().code() != StatusCode::kInternal);
    }
  }
  CHECK(errors > 0);
}

TEST_CASE("a real model imports, and with two ops renamed lists both at once") {
  // The PP-OCRv4 recognizer (opset 9), fetched by third_party/models/fetch.sh (scripts/test.sh
  // runs it first): a missing file is a failure, not a skip.
  const std::string path = std::string(TSR_SOURCE_DIR) + "/third_party/models/ch_PP-OCRv4_rec_infer.onnx";
  REQUIRE(std::filesystem::exists(path));
  auto r = onnx_import::import_onnx_file(path);
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  CHECK(r->graphs.size() == 1);
  CHECK(r->main().nodes.size() > 100);
  for (const auto& n : r->main().nodes) {
    CHECK(n.op != "Constant");  // Constants became tensors
    if (n.op == "Squeeze" || n.op == "Slice") CHECK(n.attributes.empty());  // opset-9 attrs normalized
  }

  // Two node types nobody implements: one error lists both, each with its node's place.
  std::ifstream f(path, std::ios::binary);
  onnx::ModelProto m;
  REQUIRE(m.ParseFromIstream(&f));
  REQUIRE(m.graph().node_size() > 20);
  m.mutable_graph()->mutable_node(3)->set_op_type("FrobnicateA");
  m.mutable_graph()->mutable_node(20)->set_op_type("FrobnicateB");
  auto bad = onnx_import::import_onnx_bytes(serialize(m), "renamed.onnx");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kUnsupported);
  const std::string& msg = bad.status().message();
  CHECK_THAT(msg, Catch::Contains("FrobnicateA"));
  CHECK_THAT(msg, Catch::Contains("FrobnicateB"));
}
