// The tracer: runs eagerly and records the executed ops; the recorded model verifies, runs with
// a Session and gives the eager results. The seeds' model(X, flag) shows what tracing loses:
//
//   def model(X, flag):
//       if flag > 0:          # model.py:2:5
//           y = X @ W1
//       else:
//           y = X @ W2
//       return relu(y + b)
//
// Traced with flag > 0, the graph holds only the then-branch (no If), so it answers as if
// flag > 0 for every flag: wrong for flag <= 0. decide() warns about exactly this.
#include <catch2/catch.hpp>

#include "core/frontend/tracer.h"
#include "core/include/tessera/eager.h"
#include "core/ops/grad.h"
#include "tests/unit/eager_test_util.h"

using namespace tsr;
using frontend::Tracer;
using ir::Attribute;
using ops::Emitter;
using ops::Value;

namespace {

const Tensor kW1 = Tensor::from<float>({2, 2}, {1, 2, 3, 4});
const Tensor kW2 = Tensor::from<float>({2, 2}, {-1, 0, 0, -1});
const Tensor kB = Tensor::from<float>({2}, {0.5f, 3});
const Tensor kX = Tensor::from<float>({1, 2}, {1, 2});

// model(X, flag) against any emitter; `decide` turns the tensor condition into a host bool.
template <typename Decide>
Value seeds_model(Emitter& e, Value x, Value flag, Decide&& decide) {
  const Value cond = e.emit("Greater", {flag, e.constant(Tensor::scalar(0.0f))});
  const Value y = decide(cond, "model.py:2:5") ? e.emit("MatMul", {x, e.constant(kW1)})
                                               : e.emit("MatMul", {x, e.constant(kW2)});
  return e.emit("Relu", {e.emit("Add", {y, e.constant(kB)})});
}

std::vector<double> eager_model(float flag) {
  frontend::EagerEmitter e;
  const Value y = seeds_model(e, e.wrap(kX), e.wrap(Tensor::scalar(flag)),
                              [&](Value c, const char*) { return e.tensor(c).scalar_f64(0) != 0; });
  REQUIRE(e.status().ok());
  return eagertest::values(e.tensor(y));
}

size_t count_op(const ir::Model& m, const std::string& op) {
  size_t n = 0;
  for (const ir::Graph& g : m.graphs)
    for (const ir::Node& node : g.nodes) n += node.op == op;
  return n;
}

}  // namespace

TEST_CASE("seeds' model(X, flag): eager for both flags, the trace keeps one branch and warns", "[trace]") {
  // By hand: X @ W1 = [7, 10], X @ W2 = [-1, -2]; + b = [7.5, 13] / [-0.5, 1]; relu.
  const std::vector<double> then_result = {7.5, 13}, else_result = {0, 1};
  CHECK(eager_model(1.0f) == then_result);
  CHECK(eager_model(-1.0f) == else_result);
  CHECK(eager_model(0.0f) == else_result);

  ir::Model m;
  Tracer t(m);
  const Value x = t.input("X", kX);
  const Value flag = t.input("flag", Tensor::scalar(1.0f));
  const Value y = seeds_model(t, x, flag, [&](Value c, const char* where) { return t.decide(c, where); });
  t.output(y, "Y");
  REQUIRE(t.status().ok());
  CHECK(eagertest::values(t.tensor(y)) == then_result);  // the tracer ran eagerly too

  REQUIRE(t.warnings().size() == 1);
  CHECK_THAT(t.warnings()[0], Catch::StartsWith("model.py:2:5: tracing fixed this branch"));
  CHECK_THAT(t.warnings()[0], Catch::Contains("ignores the other branch"));

  CHECK(count_op(m, "If") == 0);
  CHECK(count_op(m, "MatMul") == 1);
  CHECK(m.graphs.size() == 1);
  // The traced graph is right for the traced flag and wrong for flag <= 0: it still takes W1.
  const std::vector<Tensor> on = eagertest::run_model(m, {kX, Tensor::scalar(1.0f)});
  CHECK(eagertest::values(on[0]) == then_result);
  const std::vector<Tensor> off = eagertest::run_model(m, {kX, Tensor::scalar(-1.0f)});
  CHECK(eagertest::values(off[0]) == then_result);
  CHECK(eagertest::values(off[0]) != eager_model(-1.0f));
}

TEST_CASE("tracer: a condition computed from constants alone is traced silently", "[trace]") {
  ir::Model m;
  Tracer t(m);
  const Value x = t.input("X", kX);
  const Value c = t.emit("Less", {t.constant(Tensor::scalar(1.0f)), t.constant(Tensor::scalar(2.0f))});
  CHECK(t.decide(c, "f.py:1:1"));
  CHECK(t.warnings().empty());
  // A condition with more than one element is an error.
  CHECK_FALSE(t.decide(x, "f.py:2:1"));
  CHECK_THAT(t.status().message(), Catch::Contains("f.py:2:1"));
}

TEST_CASE("tracer: the recorded graph gives the eager results, also on new inputs", "[trace]") {
  auto program = [](Emitter& e, const std::vector<Value>& in) {
    const Value h = e.emit("Tanh", {e.emit("Add", {e.emit("MatMul", {in[0], in[1]}), in[2]})});
    const Value s = e.emit("Softmax", {h}, {Attribute::make_int("axis", -1)});
    const Value r = e.emit("ReduceMean", {e.emit("Mul", {s, h}), ops::ints_const(e, {0})},
                           {Attribute::make_int("keepdims", 0)});
    return std::vector<Value>{s, e.emit("Sub", {r, ops::scalar(e, DType::kF32, 0.25)})};
  };
  const std::vector<Tensor> feeds = {Tensor::from<float>({2, 3}, {0.5f, -1, 2, 1.5f, 0.25f, -0.75f}),
                                     Tensor::from<float>({3, 2}, {1, -2, 0.5f, 0.3f, -1.2f, 0.8f}),
                                     Tensor::from<float>({2}, {0.1f, -0.2f})};
  ir::Model m;
  Tracer t(m);
  std::vector<Value> ins;
  for (size_t k = 0; k < feeds.size(); ++k) ins.push_back(t.input(eagertest::input_name(k), feeds[k]));
  const std::vector<Value> outs = program(t, ins);
  for (size_t k = 0; k < outs.size(); ++k) t.output(outs[k], "out" + std::to_string(k));
  REQUIRE(t.status().ok());
  CHECK(t.warnings().empty());

  const std::vector<Tensor> graph = eagertest::run_model(m, feeds);
  REQUIRE(graph.size() == outs.size());
  for (size_t k = 0; k < outs.size(); ++k) CHECK(eagertest::max_abs_diff(graph[k], t.tensor(outs[k])) == 0.0);

  // No branches: the trace is the program for any input of these shapes.
  std::vector<Tensor> other = feeds;
  other[0] = Tensor::from<float>({2, 3}, {-0.3f, 0.7f, 1.1f, -2, 0.9f, 0.4f});
  const std::vector<Tensor> g2 = eagertest::run_model(m, other);
  const std::vector<Tensor> e2 = eagertest::run_eager(program, other);
  for (size_t k = 0; k < outs.size(); ++k) CHECK(eagertest::max_abs_diff(g2[k], e2[k]) == 0.0);
}

namespace {

// model(X, flag) once more, written with the public eager API.
eager::Tensor seeds_model_api(const eager::Tensor& x, const eager::Tensor& flag) {
  eager::Context& ctx = *x.context();
  const eager::Tensor y = eager::decide(flag > 0.0, "model.cpp:2:5") ? eager::matmul(x, eager::Tensor::from(kW1, false, ctx))
                                                                    : eager::matmul(x, eager::Tensor::from(kW2, false, ctx));
  return eager::relu(y + eager::Tensor::from(kB, false, ctx));
}

}  // namespace

TEST_CASE("tracer under the eager API: the same C++ code runs eagerly or traces", "[trace]") {
  const std::vector<double> then_result = {7.5, 13}, else_result = {0, 1};
  {
    eager::Context ctx;
    const eager::Tensor x = eager::Tensor::from(kX, false, ctx);
    CHECK(eagertest::values(seeds_model_api(x, eager::scalar(2.0, DType::kF32, ctx)).data()) == then_result);
    CHECK(eagertest::values(seeds_model_api(x, eager::scalar(-2.0, DType::kF32, ctx)).data()) == else_result);
    CHECK(ctx.status().ok());
  }
  ir::Model m;
  Tracer t(m);
  {
    eager::Context ctx(t);
    const eager::Tensor x = eager::Tensor::adopt(ctx, t.input("X", kX));
    const eager::Tensor flag = eager::Tensor::adopt(ctx, t.input("flag", Tensor::scalar(-3.0f)));
    const eager::Tensor y = seeds_model_api(x, flag);
    CHECK(eagertest::values(y.data()) == else_result);
    t.output(y.value(), "Y");
    REQUIRE(ctx.status().ok());
  }
  REQUIRE(t.warnings().size() == 1);
  CHECK_THAT(t.warnings()[0], Catch::StartsWith("model.cpp:2:5: tracing fixed this branch"));
  CHECK(count_op(m, "If") == 0);
  // Traced with flag <= 0: right for flag <= 0, wrong for flag > 0.
  CHECK(eagertest::values(eagertest::run_model(m, {kX, Tensor::scalar(-1.0f)})[0]) == else_result);
  CHECK(eagertest::values(eagertest::run_model(m, {kX, Tensor::scalar(1.0f)})[0]) == else_result);
}
