// If / Loop / Scan built with the GraphBuilder, verified, saved, loaded and run. Expected values
// are derived by hand in the comments.
#include <catch2/catch.hpp>

#include <cstdio>
#include <memory>

#include "core/exec/plan.h"
#include "tessera/session.h"
#include "core/ops/graph_builder.h"
#include "core/io/tsr_io.h"
#include "core/passes/verify_model.h"

using namespace tsr;
using ops::GraphBuilder;
using ops::Value;

namespace {

std::unique_ptr<Session> make_session(ir::Model model, int64_t max_iters = 0) {
  REQUIRE(passes::verify_model(model).ok());
  SessionOptions opts;
  opts.max_loop_iterations = max_iters;
  auto s = Session::create(std::make_shared<ir::Model>(std::move(model)), opts);
  INFO(s.status().to_string());
  REQUIRE(s.ok());
  return std::move(s).value();
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<float>(t.scalar_f64(i));
  return v;
}

// The seeds' example:  if flag > 0: Y = W1 @ X  else: Y = W2 @ X;  Y = relu(Y + b)
ir::Model seeds_model() {
  ir::Model m;
  GraphBuilder b(m);
  Value x = b.input("X", DType::kF32, {2, 1});
  Value flag = b.input("flag", DType::kF32, {});
  Value w1 = b.constant(Tensor::from<float>({2, 2}, {1, 2, 3, 4}), "W1");
  Value w2 = b.constant(Tensor::from<float>({2, 2}, {-1, 0, 0, -1}), "W2");
  Value bias = b.constant(Tensor::from<float>({2, 1}, {0.5f, -20}), "b");
  Value pred = b.op("Greater", {flag, b.constant(Tensor::scalar(0.0f))});
  auto y = b.cond(
      pred, [&](GraphBuilder& t) { return std::vector<Value>{t.op("MatMul", {w1, x})}; },
      [&](GraphBuilder& e) { return std::vector<Value>{e.op("MatMul", {w2, x})}; });
  b.output(b.op("Relu", {b.op("Add", {y[0], bias})}), "Y");
  REQUIRE(b.status().ok());
  return m;
}

}  // namespace

TEST_CASE("seeds' If example: built, saved, loaded and run for both flags") {
  ir::Model m = seeds_model();
  REQUIRE(passes::verify_model(m).ok());
  const std::string path = "control_flow_seeds.tsr";
  REQUIRE(io::save_model_file(m, path).ok());
  auto loaded = io::load_model_file(path);
  INFO(loaded.status().to_string());
  REQUIRE(loaded.ok());
  CHECK(loaded->graphs.size() == 3);  // main + two branches
  auto s = make_session(std::move(loaded).value());
  const Tensor x = Tensor::from<float>({2, 1}, {1, 2});
  // flag > 0: W1 @ X = [1*1+2*2, 3*1+4*2] = [5, 11]; + b = [5.5, -9]; relu = [5.5, 0]
  auto pos = s->run({x, Tensor::scalar(1.0f)});
  REQUIRE(pos.ok());
  CHECK(floats((*pos)[0]) == std::vector<float>{5.5f, 0});
  // flag <= 0: W2 @ X = [-1, -2]; + b = [-0.5, -22]; relu = [0, 0]
  auto neg = s->run({x, Tensor::scalar(-1.0f)});
  REQUIRE(neg.ok());
  CHECK(floats((*neg)[0]) == std::vector<float>{0, 0});
  std::remove(path.c_str());
}

TEST_CASE("fori_loop carries values and reads a captured outer value") {
  // x_{i+1} = x_i * k + i with k = 2 (captured), x_0 = 1, 4 iterations:
  // x1 = 2, x2 = 5, x3 = 12, x4 = 27
  ir::Model m;
  GraphBuilder b(m);
  Value x0 = b.input("x0", DType::kF32, {1});
  Value k = b.constant(Tensor::from<float>({1}, {2}), "k");
  Value n = b.constant(Tensor::scalar<int64_t>(4), "n");
  auto out = b.fori_loop(
      n,
      [&](GraphBuilder& body, Value i, const std::vector<Value>& vars) {
        Value fi = body.op("Cast", {i}, {ir::Attribute::make_int("to", static_cast<int64_t>(DType::kF32))});
        return std::vector<Value>{body.op("Add", {body.op("Mul", {vars[0], k}), fi})};
      },
      {x0});
  b.output(out[0], "x");
  REQUIRE(b.status().ok());
  auto s = make_session(std::move(m));
  auto r = s->run({Tensor::from<float>({1}, {1})});
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  CHECK(floats((*r)[0]) == std::vector<float>{27});
}

TEST_CASE("while_loop on a tensor condition, with a data-dependent trip count and an If inside") {
  // while x < limit: x = x * 3 if x is odd-ish (x < 10) else x + 100
  // from 1: 3, 9, 27 (27 >= 10: next would add), 27 < 200 -> 127, 127 < 200 -> 227 stop.
  ir::Model m;
  GraphBuilder b(m);
  Value x0 = b.input("x0", DType::kF32, {});
  Value limit = b.constant(Tensor::scalar(200.0f), "limit");
  Value ten = b.constant(Tensor::scalar(10.0f), "ten");
  auto out = b.while_loop(
      [&](GraphBuilder& g, const std::vector<Value>& v) { return g.op("Less", {v[0], limit}); },
      [&](GraphBuilder& body, Value, const std::vector<Value>& v) {
        auto r = body.cond(
            body.op("Less", {v[0], ten}),
            [&](GraphBuilder& t) { return std::vector<Value>{t.op("Mul", {v[0], t.constant(Tensor::scalar(3.0f))})}; },
            // `limit` is captured two levels down: main -> body -> else branch.
            [&](GraphBuilder& e) {
              return std::vector<Value>{e.op("Add", {v[0], e.op("Div", {limit, e.constant(Tensor::scalar(2.0f))})})};
            });
        return std::vector<Value>{r[0]};
      },
      {x0});
  b.output(out[0], "x");
  REQUIRE(b.status().ok());
  auto s = make_session(std::move(m));
  auto r = s->run({Tensor::scalar(1.0f)});
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  CHECK(floats((*r)[0]) == std::vector<float>{227});
  auto r2 = s->run({Tensor::scalar(500.0f)});  // zero iterations
  REQUIRE(r2.ok());
  CHECK(floats((*r2)[0]) == std::vector<float>{500});
}

TEST_CASE("a runaway loop hits the session's iteration limit instead of hanging") {
  ir::Model m;
  GraphBuilder b(m);
  Value x0 = b.input("x0", DType::kF32, {});
  auto out = b.while_loop(
      [&](GraphBuilder& g, const std::vector<Value>& v) { return g.op("Greater", {v[0], g.constant(Tensor::scalar(-1.0f))}); },
      [&](GraphBuilder& body, Value, const std::vector<Value>& v) {
        return std::vector<Value>{body.op("Add", {v[0], body.constant(Tensor::scalar(1.0f))})};
      },
      {x0});
  b.output(out[0]);
  REQUIRE(b.status().ok());
  auto s = make_session(std::move(m), /*max_iters=*/1000);
  auto r = s->run({Tensor::scalar(0.0f)});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResource);
  CHECK(r.status().message().find("limit of 1000 iterations") != std::string::npos);
}

TEST_CASE("Scan computes a running sum and stacks per-step outputs (forward and reverse)") {
  // state s, scan input rows r_t: s_{t+1} = s_t + r_t; scan output = s_{t+1}.
  // rows [1,2],[3,4],[5,6]: forward outputs [1,2],[4,6],[9,12]; final state [9,12].
  for (int64_t direction : {0, 1}) {
    ir::Model m;
    GraphBuilder b(m);
    Value s0 = b.input("s0", DType::kF32, {2});
    Value xs = b.input("xs", DType::kF32, {3, 2});
    m.graphs.emplace_back();
    m.graphs[1].name = "body";
    {
      auto& g = m.graphs[1];
      ir::TensorInfo f;
      f.dtype = DType::kF32;
      f.has_shape = true;
      f.shape = {2};
      f.name = "s";
      const int32_t s_in = g.add_tensor(f);
      f.name = "r";
      const int32_t r_in = g.add_tensor(f);
      f.name = "s_next";
      const int32_t s_out = g.add_tensor(f);
      f.name = "y";
      const int32_t y = g.add_tensor(f);
      g.inputs = {s_in, r_in};
      ir::Node add;
      add.op = "Add";
      add.inputs = {s_in, r_in};
      add.outputs = {s_out};
      ir::Node id;
      id.op = "Identity";
      id.inputs = {s_out};
      id.outputs = {y};
      g.nodes = {add, id};
      g.outputs = {s_out, y};
    }
    auto outs = b.op_n("Scan", {s0, xs}, 2,
                       {ir::Attribute::make_graph("body", 1), ir::Attribute::make_int("num_scan_inputs", 1),
                        ir::Attribute::make_ints("scan_input_directions", {direction})});
    b.output(outs[0], "final");
    b.output(outs[1], "ys");
    INFO(b.status().to_string());
    REQUIRE(b.status().ok());
    auto s = make_session(std::move(m));
    auto r = s->run({Tensor::from<float>({2}, {0, 0}), Tensor::from<float>({3, 2}, {1, 2, 3, 4, 5, 6})});
    INFO(r.status().to_string());
    REQUIRE(r.ok());
    CHECK(floats((*r)[0]) == std::vector<float>{9, 12});
    CHECK((*r)[1].shape() == Shape{3, 2});
    if (direction == 0) CHECK(floats((*r)[1]) == std::vector<float>{1, 2, 4, 6, 9, 12});
    else CHECK(floats((*r)[1]) == std::vector<float>{5, 6, 8, 10, 9, 12});  // rows taken last-first
  }
}

TEST_CASE("the verifier rejects a branch whose signature does not match the If node") {
  ir::Model m = seeds_model();
  m.graphs[1].inputs.pop_back();  // then_branch now takes one capture fewer
  const Status s = passes::verify_model(m);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("then_branch takes") != std::string::npos);
}

TEST_CASE("a loop-carried value changes shape every iteration") {
  // x_{i+1} = concat(x_i, x_i + 1): [0] -> [0,1] -> [0,1,1,2] -> [0,1,1,2,1,2,2,3]
  ir::Model m;
  GraphBuilder b(m);
  Value x0 = b.input("x0", DType::kF32, {1});
  Value n = b.input("n", DType::kI64, {});
  auto out = b.fori_loop(
      n,
      [&](GraphBuilder& body, Value, const std::vector<Value>& v) {
        Value inc = body.op("Add", {v[0], body.constant(Tensor::scalar(1.0f))});
        return std::vector<Value>{body.op("Concat", {v[0], inc}, {ir::Attribute::make_int("axis", 0)})};
      },
      {x0});
  b.output(out[0], "x");
  REQUIRE(b.status().ok());
  CHECK(m.graphs[0].tensors[static_cast<size_t>(out[0].id)].shape == Shape{-1});  // dynamic after the loop
  auto s = make_session(std::move(m));
  auto r = s->run({Tensor::from<float>({1}, {0}), Tensor::scalar<int64_t>(3)});
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  CHECK((*r)[0].shape() == Shape{8});
  CHECK(floats((*r)[0]) == std::vector<float>{0, 1, 1, 2, 1, 2, 2, 3});
}

TEST_CASE("sessions have loop and memory limits by default") {
  const SessionOptions defaults;
  CHECK(defaults.max_loop_iterations == kDefaultMaxLoopIterations);
  CHECK(exec::PlanOptions{}.max_loop_iterations == kDefaultMaxLoopIterations);
  CHECK(defaults.max_memory_bytes == 0);  // 0 = default_memory_limit(), never "unlimited"
  CHECK(default_memory_limit() >= (size_t{256} << 20));

  // A graph whose intermediate (Tile of a 1 MiB input, 8x) needs 8 MiB: fails under a 4 MiB cap
  // with kResource naming the node, runs under the default, and the budget is returned afterwards.
  ir::Model m;
  GraphBuilder b(m);
  Value x = b.input("x", DType::kF32, {256, 1024});
  Value reps = b.constant(Tensor::from<int64_t>({2}, {8, 1}), "reps");
  b.output(b.op("ReduceSum", {b.op("Tile", {x, reps})}, {ir::Attribute::make_int("keepdims", 0)}));
  REQUIRE(b.status().ok());
  REQUIRE(passes::verify_model(m).ok());
  auto model = std::make_shared<ir::Model>(std::move(m));
  const Tensor input = Tensor::zeros(DType::kF32, {256, 1024}).value();
  SessionOptions small;
  small.max_memory_bytes = 4 << 20;
  auto s = Session::create(model, small);
  REQUIRE(s.ok());
  auto r = (*s)->run({input});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResource);
  CHECK_THAT(r.status().message(), Catch::Contains("Tile"));
  CHECK_THAT(r.status().message(), Catch::Contains("memory limit of 4194304 bytes"));
  auto big = Session::create(model);
  REQUIRE(big.ok());
  auto ok = (*big)->run({input});
  REQUIRE(ok.ok());
  CHECK((*ok)[0].scalar_f64() == 0.0);
  // Errors for a negative iteration cap.
  SessionOptions neg;
  neg.max_loop_iterations = -1;
  CHECK(Session::create(model, neg).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("a memory budget is credited when tensors die, also after its scope") {
  auto budget = std::make_shared<MemoryBudget>(1 << 20);
  Tensor kept;
  {
    MemoryBudgetScope scope(budget);
    auto a = Tensor::empty(DType::kF32, {1024, 128});  // 512 KiB
    REQUIRE(a.ok());
    CHECK(budget->used() >= (512u << 10));
    auto over = Tensor::empty(DType::kF32, {1024, 160});  // 640 KiB more: past 1 MiB
    CHECK(over.status().code() == StatusCode::kResource);
    kept = std::move(a).value();
  }
  CHECK(budget->used() >= (512u << 10));  // still held by `kept`
  auto outside = Tensor::empty(DType::kF32, {1024, 1024});  // no scope on this thread: no cap
  CHECK(outside.ok());
  kept = Tensor();
  CHECK(budget->used() == 0);
}
