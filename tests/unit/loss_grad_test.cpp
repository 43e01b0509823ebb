// Finite-difference cases for the loss gradient rules (core/ops/grads/loss.cpp), and the mean
// squared error composition (Sub, Mul, ReduceMean), which needs no op of its own.
#include <catch2/catch.hpp>

#include "core/ops/graph_builder.h"
#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {

Attribute reduction(const char* r) { return Attribute::make_string("reduction", r); }
Attribute ignore(int64_t i) { return Attribute::make_int("ignore_index", i); }
Tensor labels(const Shape& s, std::vector<int64_t> v) { return Tensor::from<int64_t>(s, std::move(v)); }

}  // namespace

TSR_GRAD_CASES(loss) {
  const Tensor t3 = labels({3}, {1, 4, 0});
  const Tensor w5 = uniform({5}, 90, 0.2, 2.0);
  // [2, 4, 3] scores (C = 4) with labels [2, 3]; label 2 is ignored where used.
  const Tensor t23 = labels({2, 3}, {2, 0, 3, 1, 2, 2});
  const Tensor w4 = uniform({4}, 91, 0.2, 2.0);
  const Tensor t222 = labels({2, 2, 2}, {0, 1, 2, 1, 1, 0, 2, 2});
  const Tensor t32 = Tensor::from<int32_t>({3}, {2, 2, 0});
  std::vector<Case> cases = {
      {"SoftmaxCrossEntropyLoss", "[3,5] mean", {x(uniform({3, 5}, 1, -2, 2)), fixed(t3)}},
      {"SoftmaxCrossEntropyLoss", "[3,5] sum, weights", {x(uniform({3, 5}, 2, -2, 2)), fixed(t3), fixed(w5)},
       {reduction("sum")}},
      {"SoftmaxCrossEntropyLoss", "[3,5] none", {x(uniform({3, 5}, 3, -2, 2)), fixed(t3)}, {reduction("none")}},
      {"SoftmaxCrossEntropyLoss", "[3,5] mean, weights, ignore_index, int32 labels",
       {x(uniform({3, 5}, 4, -2, 2)), fixed(t32), fixed(w5)}, {ignore(0)}},
      {"SoftmaxCrossEntropyLoss", "[2,4,3] mean, weights, ignore_index",
       {x(uniform({2, 4, 3}, 5, -2, 2)), fixed(t23), fixed(w4)}, {ignore(2)}},
      {"SoftmaxCrossEntropyLoss", "[2,3,2,2] none, ignore_index",
       {x(uniform({2, 3, 2, 2}, 6, -2, 2)), fixed(t222)}, {reduction("none"), ignore(1)}},
      {"SoftmaxCrossEntropyLoss", "[2,3,2,2] sum", {x(uniform({2, 3, 2, 2}, 7, -2, 2)), fixed(t222)},
       {reduction("sum")}},
      {"SoftmaxCrossEntropyLoss", "[3,5] mean, log_prob output", {x(uniform({3, 5}, 8, -2, 2)), fixed(t3)}, {}, 2},
      {"SoftmaxCrossEntropyLoss", "[2,4,3] none, weights, log_prob output",
       {x(uniform({2, 4, 3}, 9, -2, 2)), fixed(t23), fixed(w4)}, {reduction("none")}, 2},
      {"SoftmaxCrossEntropyLoss", "mean, every label ignored (zero gradient)",
       {x(uniform({3, 5}, 10)), fixed(labels({3}, {4, 4, 4}))}, {ignore(4)}},

      {"NegativeLogLikelihoodLoss", "[3,5] mean", {x(uniform({3, 5}, 20, -3, 0)), fixed(t3)}},
      {"NegativeLogLikelihoodLoss", "[3,5] none, weights", {x(uniform({3, 5}, 21, -3, 0)), fixed(t3), fixed(w5)},
       {reduction("none")}},
      {"NegativeLogLikelihoodLoss", "[2,4,3] mean, weights, ignore_index",
       {x(uniform({2, 4, 3}, 22, -3, 0)), fixed(t23), fixed(w4)}, {ignore(2)}},
      {"NegativeLogLikelihoodLoss", "[2,3,2,2] sum, ignore_index", {x(uniform({2, 3, 2, 2}, 23, -3, 0)), fixed(t222)},
       {reduction("sum"), ignore(0)}},
  };
  for (Case c : {cases[0], cases[4], cases[10]}) {  // the float32 kernels
    cases.push_back(as_f32_case(c, 1e-3, 1e-2));
  }
  return cases;
}

TEST_CASE("mean squared error composition (Sub, Mul, ReduceMean) matches finite differences", "[grad]") {
  ir::Model m;
  ops::GraphBuilder b(m);
  const auto pred = b.input("pred", DType::kF64, {4, 3});
  const auto target = b.input("target", DType::kF64, {4, 3});
  const auto d = b.op("Sub", {pred, target});
  b.output(b.op("ReduceMean", {b.op("Mul", {d, d})}, {Attribute::make_int("keepdims", 0)}), "mse");
  REQUIRE(b.status().ok());
  CHECK(check_model(m, {uniform({4, 3}, 1), uniform({4, 3}, 2)}, {"pred", "target"}) == "");
}

TEST_CASE("loss gradients: class weights are not differentiated", "[grad]") {
  Case c{"SoftmaxCrossEntropyLoss", "wrt weights", {x(uniform({3, 5}, 1)), fixed(labels({3}, {1, 4, 0})),
                                                    x(uniform({5}, 2, 0.5, 1.5))}};
  CHECK(check(c).find("class weights") != std::string::npos);
}
