// passes::fix_dims (free-dimension overrides, core/passes/fix_dims.h) and how a run reports
// inputs that a node cannot take (Session: invalid_argument naming the input and the node).
#include <catch2/catch.hpp>

#include <string>

#include "core/passes/fix_dims.h"
#include "core/passes/verify_model.h"
#include "tessera/tessera.h"
#include "tests/unit/graph_test_util.h"

using namespace tsr;

namespace {

// y = x + c: x f32[batch, 3] ("batch" named), c a constant f32[2, 3], so batch must be 1 or 2.
std::shared_ptr<ir::Model> add_model() {
  auto m = std::make_shared<ir::Model>();
  ir::Graph& g = m->graphs.emplace_back();
  const int32_t x = test::add_value(g, "x");
  ir::TensorInfo& xi = g.tensors[size_t(x)];
  xi.dtype = DType::kF32;
  xi.has_shape = true;
  xi.shape = {-1, 3};
  xi.dim_names = {"batch", ""};
  const int32_t c = test::add_value(g, "c", Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  const int32_t y = test::add_node(g, "Add", {x, c});
  g.tensors[size_t(y)].name = "y";
  g.inputs = {x};
  g.outputs = {y};
  REQUIRE(passes::verify_model(*m).ok());
  return m;
}

}  // namespace

TEST_CASE("fix_dims: a named dim becomes static in the inputs and what follows", "[fix_dims]") {
  auto m = add_model();
  REQUIRE(passes::fix_dims(*m, {{"batch", 2}}).ok());
  Model model(m);
  CHECK(model.inputs()[0].str() == "x: f32[2, 3]");
  CHECK(model.outputs()[0].str() == "y: f32[2, 3]");
  auto session = Session::create(model);
  REQUIRE(session.ok());
  auto ok = (*session)->run({{"x", Tensor::from<float>({2, 3}, {0, 0, 0, 1, 1, 1})}});
  REQUIRE(ok.ok());
  CHECK((*ok)[0].second.data<float>()[5] == 7.0f);
  auto other = (*session)->run({{"x", Tensor::from<float>({1, 3}, {0, 0, 0})}});
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().code() == StatusCode::kInvalidArgument);
  CHECK(other.status().message() == "input[0] \"x\": shape [1, 3], expected [2, 3] (dim 0)");
}

TEST_CASE("fix_dims: unknown names, bad sizes and sizes the graph contradicts", "[fix_dims]") {
  auto m = add_model();
  Status unknown = passes::fix_dims(*m, {{"seq", 2}});
  CHECK(unknown.code() == StatusCode::kNotFound);
  CHECK(unknown.message() == "free dimension \"seq\": no input of the model has a dynamic dim of that name (named: \"batch\")");
  Status negative = passes::fix_dims(*m, {{"batch", -1}});
  CHECK(negative.code() == StatusCode::kInvalidArgument);
  Status contradiction = passes::fix_dims(*m, {{"batch", 4}});
  CHECK(contradiction.code() == StatusCode::kInvalidArgument);
  CHECK(contradiction.message().rfind("free dimensions {batch=4}: graph[0].node[0] (Add", 0) == 0);
  CHECK(passes::fix_dims(*m, {}).ok());
}

TEST_CASE("Session::run: an input a node cannot take is invalid_argument naming the input and the node", "[fix_dims]") {
  auto session = Session::create(Model(add_model()));
  REQUIRE(session.ok());
  // Load-time inference left batch open; at run time 4 does not broadcast with c's 2.
  auto out = (*session)->run({{"x", Tensor::from<float>({4, 3}, std::vector<float>(12, 0.0f))}});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == StatusCode::kInvalidArgument);
  INFO(out.status().message());
  CHECK(out.status().message().rfind("input \"x\" f32[4, 3] does not fit the model: graph[0].node[0] (Add", 0) == 0);
}
