// The executor's memory planner (core/exec/memory_plan.h) and the signature plans of a Plan
// (core/exec/signature_plan.h): types recorded once per input signature, shape subgraphs folded,
// intermediate values in one arena with in-place elementwise ops, data-dependent steps left
// dynamic, at most Plan::kMaxSignatures signatures kept.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/exec/memory_plan.h"
#include "core/exec/plan.h"
#include "tessera/session.h"
#include "core/passes/infer_types.h"
#include "tests/unit/graph_test_util.h"

using namespace tsr;
using test::add_node;
using test::add_value;

TEST_CASE("plan_greedy_by_size: buffers live at the same time never overlap, dead ones share bytes") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<exec::BufferLifetime> buffers;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const auto first = static_cast<int32_t>(rng() % 30);
      buffers.push_back({1 + rng() % 5000, first, first + static_cast<int32_t>(rng() % 8)});
    }
    const exec::MemoryPlan plan = exec::plan_greedy_by_size(buffers, 64);
    REQUIRE(plan.offsets.size() == buffers.size());
    size_t sum = 0, peak_live = 0;
    for (int32_t step = 0; step < 40; ++step) {
      size_t live = 0;
      for (const auto& b : buffers)
        if (b.first <= step && step <= b.last) live += (b.bytes + 63) / 64 * 64;
      peak_live = std::max(peak_live, live);
    }
    for (size_t i = 0; i < buffers.size(); ++i) {
      sum += (buffers[i].bytes + 63) / 64 * 64;
      CHECK(plan.offsets[i] % 64 == 0);
      CHECK(plan.offsets[i] + buffers[i].bytes <= plan.arena_bytes);
      for (size_t j = 0; j < i; ++j) {
        const bool together = !(buffers[i].last < buffers[j].first || buffers[j].last < buffers[i].first);
        const bool overlap = plan.offsets[i] < plan.offsets[j] + buffers[j].bytes &&
                             plan.offsets[j] < plan.offsets[i] + buffers[i].bytes;
        INFO("trial " << trial << " buffers " << i << ", " << j);
        CHECK_FALSE((together && overlap));
      }
    }
    CHECK(plan.arena_bytes >= peak_live);
    CHECK(plan.arena_bytes <= sum);
  }
  // A chain a -> b -> c where each dies at the next step: a and c share bytes.
  const exec::MemoryPlan chain = exec::plan_greedy_by_size({{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}}, 64);
  CHECK(chain.arena_bytes == 2 * 1024);
  CHECK(chain.offsets[0] == chain.offsets[2]);
}

namespace {

// y = Reshape(Exp(Sigmoid(Relu(x) * c + x)), [x.shape[0], -1]) with x: f32 [?, 6]: an elementwise
// chain the plan writes in place, and a shape subgraph (Shape -> Gather -> Unsqueeze -> Concat)
// it folds; z = NonZero(x > 0): data-dependent, inferred at every run.
std::shared_ptr<ir::Model> make_model() {
  auto model = std::make_shared<ir::Model>();
  model->graphs.emplace_back();
  ir::Graph& g = model->main();
  g.name = "planned";
  ir::TensorInfo xi;
  xi.name = "x";
  xi.dtype = DType::kF32;
  xi.has_shape = true;
  xi.shape = {-1, 6};
  const int32_t x = g.add_tensor(xi);
  g.inputs.push_back(x);
  const int32_t c = add_value(g, "c", Tensor::from<float>({6}, {0.5f, -1, 2, 0.25f, 1, -0.5f}));
  const int32_t zero = add_value(g, "zero", Tensor::scalar<int64_t>(0));
  const int32_t axes = add_value(g, "axes", Tensor::from<int64_t>({1}, {0}));
  const int32_t rest = add_value(g, "rest", Tensor::from<int64_t>({1}, {-1}));
  const int32_t fzero = add_value(g, "fzero", Tensor::scalar<float>(0));
  const int32_t r = add_node(g, "Relu", {x});
  const int32_t a = add_node(g, "Add", {add_node(g, "Mul", {r, c}), x});
  const int32_t e = add_node(g, "Exp", {add_node(g, "Sigmoid", {a})});
  const int32_t n = add_node(g, "Unsqueeze", {add_node(g, "Gather", {add_node(g, "Shape", {x}), zero}), axes});
  const int32_t target = add_node(g, "Concat", {n, rest}, {ir::Attribute::make_int("axis", 0)});
  const int32_t y = add_node(g, "Reshape", {e, target});
  const int32_t z = add_node(g, "NonZero", {add_node(g, "Greater", {x, fzero})});
  g.outputs = {y, z};
  REQUIRE(passes::infer_types(*model).ok());
  return model;
}

Tensor input(int64_t rows, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(rows * 6));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  for (float& f : v) f = dist(rng);
  return Tensor::from<float>({rows, 6}, v);
}

// The model computed directly.
void check_outputs(const Tensor& x, const std::vector<Tensor>& out) {
  const float c[6] = {0.5f, -1, 2, 0.25f, 1, -0.5f};
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].shape() == x.shape());
  int64_t positive = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.data<float>()[i];
    const float want = std::exp(1.0f / (1.0f + std::exp(-(std::max(v, 0.0f) * c[i % 6] + v))));
    REQUIRE(std::abs(out[0].data<float>()[i] - want) <= 1e-5f * want);
    positive += v > 0;
  }
  REQUIRE(out[1].shape() == Shape{2, positive});
  int64_t k = 0;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.data<float>()[i] > 0) {
      REQUIRE(out[1].data<int64_t>()[k] == i / 6);
      REQUIRE(out[1].data<int64_t>()[positive + k] == i % 6);
      ++k;
    }
}

}  // namespace

TEST_CASE("Signature plans: recorded once per input shape, folded shape subgraph, in-place arena, dynamic NonZero") {
  auto model = make_model();
  SessionOptions as_built;  // the plan of the graph as built, node for node
  as_built.optimization = OptimizationLevel::kNone;
  auto session = Session::create(model, as_built);
  REQUIRE(session.ok());
  const exec::Plan& plan = (*session)->main_plan();
  std::vector<Tensor> kept;  // outputs of earlier runs must survive later runs unchanged
  std::vector<Tensor> kept_inputs;
  for (uint32_t run = 0; run < 4; ++run) {
    const Tensor x = input(3, 10 + run);  // one signature, new data every run
    auto out = (*session)->run({x});
    REQUIRE(out.ok());
    check_outputs(x, *out);
    kept.insert(kept.end(), out->begin(), out->end());
    kept_inputs.push_back(x);
  }
  for (size_t run = 0; run < kept_inputs.size(); ++run)
    check_outputs(kept_inputs[run], {kept[2 * run], kept[2 * run + 1]});

  auto sigs = plan.signature_plans();
  REQUIRE(sigs.size() == 1);
  const exec::SignaturePlan& sig = *sigs[0];
  size_t folded = 0, recorded = 0;
  for (size_t s = 0; s < plan.steps().size(); ++s) {
    folded += sig.folded[s];
    recorded += !sig.types[s].empty();
    if (plan.steps()[s].node->op == "NonZero") CHECK(sig.types[s].empty());  // data-dependent
  }
  CHECK(folded == 4);  // Shape, Gather, Unsqueeze, Concat
  CHECK(recorded >= 8);
  // Relu, Mul, Add, Sigmoid share one buffer (each written over the last) and Greater's bool
  // output has one; Exp's output is viewed by the graph output (Reshape), so it and its view stay
  // out of the arena.
  CHECK(sig.planned_values == 5);
  CHECK(sig.inplace_values == 3);
  CHECK(sig.arena_bytes == 128 + 64);  // 72 and 18 bytes, live at the same time, 64-byte aligned

  // Other shapes: one plan each, at most kMaxSignatures kept.
  for (int64_t rows = 1; rows <= 12; ++rows) {
    const Tensor x = input(rows, static_cast<uint32_t>(100 + rows));
    for (int rep = 0; rep < 2; ++rep) {
      auto out = (*session)->run({x});
      REQUIRE(out.ok());
      check_outputs(x, *out);
    }
  }
  CHECK(plan.signature_plans().size() == exec::Plan::kMaxSignatures);
  CHECK(plan.signature_plans().front()->inputs[0].shape == Shape{12, 6});  // most recent first
}

TEST_CASE("Signature plans: the arena is charged to the session's memory budget") {
  auto model = make_model();
  SessionOptions opt;
  opt.optimization = OptimizationLevel::kNone;
  opt.max_memory_bytes = 1 << 20;
  auto session = Session::create(model, opt);
  REQUIRE(session.ok());
  const Tensor x = input(1000, 3);  // 24 KB per intermediate
  for (int run = 0; run < 3; ++run) {
    auto out = (*session)->run({x});
    REQUIRE(out.ok());
    check_outputs(x, *out);
  }
  const auto sigs = (*session)->main_plan().signature_plans();
  REQUIRE(sigs.size() == 1);
  CHECK(sigs[0]->arena_bytes >= 1000 * 6 * 4);
  // Too small a budget for the run: an error naming the limit, not a crash.
  SessionOptions tight;
  tight.optimization = OptimizationLevel::kNone;
  tight.max_memory_bytes = 40000;
  auto small = Session::create(model, tight);
  REQUIRE(small.ok());
  auto r = (*small)->run({input(4000, 4)});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResource);
}
