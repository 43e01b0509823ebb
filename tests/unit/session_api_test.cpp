// The public C++ API (core/include/tessera/): Model loading and its errors, named-input runs,
// bind, optimization levels, the caller-facing inputs of a training model, one error numbering.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "core/ir/graph.h"
#include "core/passes/verify_model.h"
#include "tessera/tessera.h"
#include "tessera/tessera_c.h"
#include "tests/unit/graph_test_util.h"

using namespace tsr;

namespace {

// y = Relu(x * 2 + b) with a constant subgraph (scale = 1 + 1) that kAll folds away:
// x f32[2, 3] ("batch" named), b constant f32[3].
std::shared_ptr<ir::Model> relu_affine_model() {
  auto m = std::make_shared<ir::Model>();
  ir::Graph& g = m->graphs.emplace_back();
  const int32_t x = test::add_value(g, "x");
  g.tensors[size_t(x)].dtype = DType::kF32;
  g.tensors[size_t(x)].has_shape = true;
  g.tensors[size_t(x)].shape = {-1, 3};
  g.tensors[size_t(x)].dim_names = {"batch", ""};
  const int32_t one = test::add_value(g, "one", Tensor::from<float>({}, {1.0f}));
  const int32_t b = test::add_value(g, "b", Tensor::from<float>({3}, {0.5f, -4.0f, 1.0f}));
  const int32_t two = test::add_node(g, "Add", {one, one});
  const int32_t scaled = test::add_node(g, "Mul", {x, two});
  const int32_t shifted = test::add_node(g, "Add", {scaled, b});
  const int32_t y = test::add_node(g, "Relu", {shifted});
  g.tensors[size_t(y)].name = "y";
  g.inputs = {x};
  g.outputs = {y};
  return m;
}

// Session::create takes verified models (types inferred), as every loader returns them.
Model verified(std::shared_ptr<ir::Model> m) {
  REQUIRE(passes::verify_model(*m).ok());
  Model model(m);
  REQUIRE_FALSE(model.empty());
  return model;
}

}  // namespace

TEST_CASE("Model: inputs and outputs as ValueInfo", "[api]") {
  auto m = relu_affine_model();
  Model model = verified(m);
  REQUIRE(model.inputs().size() == 1);
  CHECK(model.inputs()[0].str() == "x: f32[batch, 3]");
  REQUIRE(model.outputs().size() == 1);
  CHECK(model.outputs()[0].name == "y");
  CHECK(Model().empty());
  CHECK(Model().inputs().empty());
}

TEST_CASE("Session: named run, bind and their errors", "[api]") {
  auto session = Session::create(verified(relu_affine_model()));
  REQUIRE(session.ok());
  const Tensor x = Tensor::from<float>({2, 3}, {1, 2, 3, -1, 2, -3});
  auto out = (*session)->run({{"x", x}});  // braces pick the named form (README's example)
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  CHECK((*out)[0].first == "y");
  const float* y = (*out)[0].second.data<float>();
  const float want[] = {2.5f, 0.0f, 7.0f, 0.0f, 0.0f, 0.0f};  // relu(2x + b)
  for (int i = 0; i < 6; ++i) CHECK(y[i] == Approx(want[i]));

  auto unknown = (*session)->run(NamedTensors{{"z", x}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  CHECK(unknown.status().message() == "the model has no input named \"z\" (inputs: x)");

  auto twice = (*session)->bind(NamedTensors{{"x", x}, {"x", x}});
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().code() == StatusCode::kInvalidArgument);
  CHECK(twice.status().message() == "input[0] \"x\" is given twice");

  auto missing = (*session)->bind(NamedTensors{});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "input[0] \"x\" is missing (inputs: x)");

  // A wrong shape is the executor's path-addressed error, through either form of run.
  auto bad = (*session)->run(NamedTensors{{"x", Tensor::from<float>({2, 4}, std::vector<float>(8, 1.0f))}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad.status().message(), Catch::Contains("\"x\""));
}

TEST_CASE("Session: optimization levels run the same outputs, kAll folds and fuses", "[api]") {
  Model model = verified(relu_affine_model());
  const Tensor x = Tensor::from<float>({2, 3}, {0.25f, -2, 3, 1, 2, -3});
  SessionOptions none;
  none.optimization = OptimizationLevel::kNone;
  auto plain = Session::create(model, none);
  auto optimized = Session::create(model);
  REQUIRE(plain.ok());
  REQUIRE(optimized.ok());
  CHECK((*plain)->placement().total_nodes == 4);
  // Add(one, one) is folded; Mul, Add, Relu become one fused elementwise node.
  CHECK((*optimized)->placement().total_nodes < 4);
  auto a = (*plain)->run(std::vector<Tensor>{x});
  auto b = (*optimized)->run(std::vector<Tensor>{x});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (int i = 0; i < 6; ++i) CHECK((*a)[0].data<float>()[i] == Approx((*b)[0].data<float>()[i]));
  // The session reports the model as given, not the copy it runs.
  CHECK((*optimized)->model().graph().main().nodes.size() == 4);

  SessionOptions skip;
  skip.skip_passes = {"no_such_pass"};
  auto rejected = Session::create(model, skip);
  REQUIRE_FALSE(rejected.ok());
  CHECK(rejected.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Session: bad options and empty models", "[api]") {
  CHECK(Session::create(Model()).status().code() == StatusCode::kInvalidArgument);
  SessionOptions o;
  o.max_loop_iterations = -1;
  CHECK(Session::create(verified(relu_affine_model()), o).status().code() == StatusCode::kInvalidArgument);
  o = SessionOptions();
  o.device = "no-such-device";
  auto s = Session::create(verified(relu_affine_model()), o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kNotFound);
}

TEST_CASE("Model: load and load_bytes name the file, ONNX needs the importer", "[api]") {
  auto missing = Model::load("/nonexistent/model.tsr");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK_THAT(missing.status().message(), Catch::Contains("/nonexistent/model.tsr"));

  // The unit tests link no importer: ONNX input is unsupported, by path and by bytes.
  auto onnx = Model::load("model.onnx");
  REQUIRE_FALSE(onnx.ok());
  CHECK(onnx.status().code() == StatusCode::kUnsupported);
  const char not_tsr[] = "\x08\x07\x12\x04test-onnx-like-bytes";
  auto bytes = Model::load_bytes(not_tsr, sizeof not_tsr, "upload.onnx");
  REQUIRE_FALSE(bytes.ok());
  CHECK(bytes.status().code() == StatusCode::kUnsupported);
  CHECK_THAT(bytes.status().message(), Catch::StartsWith("upload.onnx: "));

  // Round trip through .tsr bytes and a file.
  Model model = verified(relu_affine_model());
  auto serialized = model.serialize();
  REQUIRE(serialized.ok());
  auto again = Model::load_bytes(serialized->data(), serialized->size(), "mem");
  REQUIRE(again.ok());
  CHECK(again->inputs()[0].str() == "x: f32[batch, 3]");
  const std::string path = "session_api_test_model.tsr";
  REQUIRE(model.save(path).ok());
  auto loaded = Model::load(path);
  std::remove(path.c_str());
  REQUIRE(loaded.ok());
  CHECK(loaded->outputs()[0].name == "y");

  // Corrupt .tsr bytes: an invalid model naming the buffer.
  std::vector<uint8_t> corrupt = *serialized;
  for (size_t i = 8; i < corrupt.size() && i < 64; ++i) corrupt[i] ^= 0x5a;
  auto broken = Model::load_bytes(corrupt.data(), corrupt.size(), "corrupt.tsr");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.status().code() == StatusCode::kInvalidModel);
  CHECK_THAT(broken.status().message(), Catch::StartsWith("corrupt.tsr"));
}

TEST_CASE("Model: a training signature's bound inputs are not the caller's", "[api]") {
  auto m = relu_affine_model();
  ir::Graph& g = m->main();
  // Make "b" a graph input bound to the variable "bias" (a weight kept in the session).
  const int32_t b = g.find_tensor("b");
  REQUIRE(b >= 0);
  Tensor bias = g.tensors[size_t(b)].constant;
  g.tensors[size_t(b)].constant = Tensor();
  g.inputs.push_back(b);
  m->variables.push_back({"bias", bias});
  m->signatures.push_back({"infer", 0, {"", "bias"}, {}});
  auto session = Session::create(verified(m));
  REQUIRE(session.ok());
  REQUIRE((*session)->inputs().size() == 1);
  CHECK((*session)->inputs()[0].name == "x");
  auto out = (*session)->run(NamedTensors{{"x", Tensor::from<float>({1, 3}, {1, 1, 1})}});
  REQUIRE(out.ok());
  CHECK((*out)[0].second.data<float>()[0] == Approx(2.5f));
}

TEST_CASE("StatusCode values are the exit codes and the C API's error codes", "[api]") {
  CHECK(static_cast<int>(StatusCode::kOk) == TSR_OK);
  CHECK(static_cast<int>(StatusCode::kInvalidModel) == TSR_ERR_INVALID_MODEL);
  CHECK(static_cast<int>(StatusCode::kInvalidArgument) == TSR_ERR_INVALID_ARGUMENT);
  CHECK(static_cast<int>(StatusCode::kUnsupported) == TSR_ERR_UNSUPPORTED);
  CHECK(static_cast<int>(StatusCode::kNotFound) == TSR_ERR_NOT_FOUND);
  CHECK(static_cast<int>(StatusCode::kResource) == TSR_ERR_RESOURCE);
  CHECK(static_cast<int>(StatusCode::kBackend) == TSR_ERR_BACKEND);
  CHECK(static_cast<int>(StatusCode::kInternal) == TSR_ERR_INTERNAL);
  // The CLI's documented table (tools/cli/main.cpp exit_code_table) uses the same numbers.
  CHECK(static_cast<int>(StatusCode::kInvalidModel) == 3);
  CHECK(static_cast<int>(StatusCode::kInternal) == 9);
}
