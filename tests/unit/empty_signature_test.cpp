// Empty tensors across runs of one Session (issue 26): a KV-cache decoder runs the same graph with
// past length 0 at step 0 and > 0 afterwards, so one Session holds signature plans (and arenas)
// for empty and non-empty shapes side by side. tests/transformers/gen_empty.py checks each op with
// a 0-sized dim in a fresh process (a fresh, zeroed arena); this checks what it cannot: outputs
// that must be all zeros or identities although computed from an empty input (MatMul with K=0,
// ReduceSum / ReduceMean / ReduceMax over a 0-length axis) are written in full when the arena
// bytes under them were used by an earlier, non-empty run, at every optimization level.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/passes/infer_types.h"
#include "tessera/session.h"
#include "tests/unit/graph_test_util.h"

using namespace tsr;
using test::add_node;
using test::add_value;

namespace {

constexpr int64_t kD = 4;

// Inputs past f32[P, 4] (P symbolic), k f32[1, 4], q f32[1, 4]. Outputs:
//   att  = Softmax(q Kc^T) Kc with Kc = Concat(past, k)  [1, 4]   (one attention step)
//   gram = past^T past                                    [4, 4]   (K = P: zeros when P = 0)
//   sum  = ReduceSum(past, axis 0)                        [4]      (zeros when P = 0)
//   mean = ReduceMean(Exp(past), axis 0)                  [4]      (0 when P = 0, as onnxruntime)
//   max  = ReduceMax(past, axis 0) + 1                    [4]      (-inf when P = 0)
std::shared_ptr<ir::Model> make_model() {
  auto model = std::make_shared<ir::Model>();
  ir::Graph& g = model->graphs.emplace_back();
  g.name = "kv_step";
  auto input = [&](const char* name, Shape shape) {
    const int32_t t = add_value(g, name);
    g.tensors[size_t(t)].dtype = DType::kF32;
    g.tensors[size_t(t)].has_shape = true;
    g.tensors[size_t(t)].shape = std::move(shape);
    g.inputs.push_back(t);
    return t;
  };
  const int32_t past = input("past", {-1, kD});
  const int32_t k = input("k", {1, kD});
  const int32_t q = input("q", {1, kD});
  const int32_t axis0 = add_value(g, "axis0", Tensor::from<int64_t>({1}, {0}));
  const int32_t one = add_value(g, "one", Tensor::scalar<float>(1.0f));
  const auto int_attr = [](const char* n, int64_t v) { return ir::Attribute::make_int(n, v); };
  const auto perm = ir::Attribute::make_ints("perm", {1, 0});
  const int32_t kc = add_node(g, "Concat", {past, k}, {int_attr("axis", 0)});
  const int32_t scores = add_node(g, "MatMul", {q, add_node(g, "Transpose", {kc}, {perm})});
  const int32_t att = add_node(g, "MatMul", {add_node(g, "Softmax", {scores}, {int_attr("axis", -1)}), kc});
  const int32_t gram = add_node(g, "MatMul", {add_node(g, "Transpose", {past}, {perm}), past});
  const int32_t sum = add_node(g, "ReduceSum", {past, axis0}, {int_attr("keepdims", 0)});
  const int32_t mean = add_node(g, "ReduceMean", {add_node(g, "Exp", {past})},
                                {ir::Attribute::make_ints("axes", {0}), int_attr("keepdims", 0)});
  const int32_t max = add_node(g, "Add", {add_node(g, "ReduceMax", {past}, {ir::Attribute::make_ints("axes", {0}),
                                                                           int_attr("keepdims", 0)}),
                                          one});
  g.outputs = {att, gram, sum, mean, max};
  REQUIRE(passes::infer_types(*model).ok());
  return model;
}

Tensor random(int64_t rows, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(rows * kD));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  for (float& f : v) f = dist(rng);
  return Tensor::from<float>({rows, kD}, v);
}

// The outputs computed directly.
void check(const Tensor& past, const Tensor& k, const Tensor& q, const std::vector<Tensor>& out) {
  const int64_t P = past.shape()[0];
  const float* p = past.data<float>();
  REQUIRE(out.size() == 5);
  std::vector<float> kc(p, p + P * kD);
  kc.insert(kc.end(), k.data<float>(), k.data<float>() + kD);
  std::vector<double> w(static_cast<size_t>(P + 1));
  double wmax = -1e300, wsum = 0;
  for (int64_t r = 0; r <= P; ++r) {
    double s = 0;
    for (int64_t d = 0; d < kD; ++d) s += double(q.data<float>()[d]) * kc[size_t(r * kD + d)];
    w[size_t(r)] = s;
    wmax = std::max(wmax, s);
  }
  for (double& v : w) wsum += (v = std::exp(v - wmax));
  REQUIRE(out[0].shape() == Shape{1, kD});
  for (int64_t d = 0; d < kD; ++d) {
    double a = 0;
    for (int64_t r = 0; r <= P; ++r) a += w[size_t(r)] / wsum * kc[size_t(r * kD + d)];
    CHECK(out[0].data<float>()[d] == Approx(a).epsilon(1e-5).margin(1e-6));
  }
  REQUIRE(out[1].shape() == Shape{kD, kD});
  for (int64_t i = 0; i < kD; ++i)
    for (int64_t j = 0; j < kD; ++j) {
      double s = 0;
      for (int64_t r = 0; r < P; ++r) s += double(p[r * kD + i]) * p[r * kD + j];
      CHECK(out[1].data<float>()[i * kD + j] == Approx(s).epsilon(1e-5).margin(1e-5));
    }
  for (size_t o = 2; o <= 4; ++o) REQUIRE(out[o].shape() == Shape{kD});
  for (int64_t d = 0; d < kD; ++d) {
    double s = 0, e = 0, m = -std::numeric_limits<double>::infinity();
    for (int64_t r = 0; r < P; ++r) {
      s += p[r * kD + d];
      e += std::exp(double(p[r * kD + d]));
      m = std::max(m, double(p[r * kD + d]));
    }
    CHECK(out[2].data<float>()[d] == Approx(s).epsilon(1e-5).margin(1e-5));
    CHECK(out[3].data<float>()[d] == Approx(P ? e / double(P) : 0.0).epsilon(1e-5).margin(1e-6));
    if (P == 0) CHECK(out[4].data<float>()[d] == -std::numeric_limits<float>::infinity());
    else CHECK(out[4].data<float>()[d] == Approx(m + 1).epsilon(1e-6));
  }
}

}  // namespace

TEST_CASE("Empty past across runs of one Session: K=0 and empty-axis reductions are written in full",
          "[exec][empty]") {
  auto model = make_model();
  for (const OptimizationLevel level : {OptimizationLevel::kNone, OptimizationLevel::kAll}) {
    SessionOptions options;
    options.optimization = level;
    auto session = Session::create(model, options);
    REQUIRE(session.ok());
    // Non-empty first, so the arena bytes an empty run's zeros land on held data; then back and
    // forth, each shape's signature plan reused with new data.
    uint32_t seed = 1;
    for (const int64_t P : {3, 0, 5, 0, 1, 0, 3}) {
      INFO("optimization " << int(level) << ", past length " << P);
      const Tensor past = random(P, seed++), k = random(1, seed++), q = random(1, seed++);
      auto out = (*session)->run({past, k, q});
      REQUIRE(out.ok());
      check(past, k, q, *out);
    }
  }
}
