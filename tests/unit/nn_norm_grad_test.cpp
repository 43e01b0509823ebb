// Finite-difference cases for the normalization and softmax gradient rules
// (core/ops/grads/nn_norm.cpp), plus the running-statistics outputs of training-mode
// BatchNormalization (which pass no gradient).
#include <catch2/catch.hpp>

#include "core/ops/graph_builder.h"
#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {

Attribute axis(int64_t a) { return Attribute::make_int("axis", a); }
Attribute eps(double e) { return Attribute::make_float("epsilon", e); }
Attribute training() { return Attribute::make_int("training_mode", 1); }
// Variances (and scales) bounded away from zero.
Tensor positive(const Shape& s, uint64_t seed) { return uniform(s, seed, 0.5, 1.5); }

}  // namespace

TSR_GRAD_CASES(nn_norm) {
  const Tensor s3 = uniform({3}, 40), b3 = uniform({3}, 41), m3 = uniform({3}, 42), v3 = positive({3}, 43);
  std::vector<Case> cases = {
      {"Softmax", "[2,5] axis=-1", {x(uniform({2, 5}, 1, -2, 2))}},
      {"Softmax", "[2,3,4] axis=1", {x(uniform({2, 3, 4}, 2, -2, 2))}, {axis(1)}},
      {"Softmax", "[3,4] axis=0", {x(uniform({3, 4}, 3, -2, 2))}, {axis(0)}},
      {"Softmax", "[2,3,2] axis=-3", {x(uniform({2, 3, 2}, 4, -2, 2))}, {axis(-3)}},
      {"LogSoftmax", "[2,5] axis=-1", {x(uniform({2, 5}, 5, -2, 2))}},
      {"LogSoftmax", "[2,3,4] axis=1", {x(uniform({2, 3, 4}, 6, -2, 2))}, {axis(1)}},
      {"LogSoftmax", "[3,4] axis=0", {x(uniform({3, 4}, 7, -2, 2))}, {axis(0)}},
      {"LogSoftmax", "[1] single class", {x(uniform({1}, 8))}},

      {"BatchNormalization", "inference [2,3,2,2], every input",
       {x(uniform({2, 3, 2, 2}, 10)), x(s3), x(b3), x(m3), x(v3)}, {eps(1e-3)}},
      {"BatchNormalization", "inference [4,3], mean/var fixed",
       {x(uniform({4, 3}, 11)), x(s3), x(b3), fixed(m3), fixed(v3)}},
      {"BatchNormalization", "training [2,3,2,2]",
       {x(uniform({2, 3, 2, 2}, 12)), x(s3), x(b3), fixed(m3), fixed(v3)}, {training(), eps(1e-3)}},
      {"BatchNormalization", "training [4,3] (N only)",
       {x(uniform({4, 3}, 13)), x(s3), x(b3), fixed(m3), fixed(v3)}, {training()}},
      {"BatchNormalization", "training [1,3,5] (spatial only), wrt mean/var too",
       {x(uniform({1, 3, 5}, 14)), x(s3), x(b3), x(m3), x(v3)}, {training(), Attribute::make_float("momentum", 0.7)}},

      {"LayerNormalization", "[2,3,4] axis=-1",
       {x(uniform({2, 3, 4}, 20)), x(uniform({4}, 21)), x(uniform({4}, 22))}},
      {"LayerNormalization", "[2,3,4] axis=1, B broadcast [4]",
       {x(uniform({2, 3, 4}, 23)), x(uniform({3, 4}, 24)), x(uniform({4}, 25))}, {axis(1), eps(1e-3)}},
      {"LayerNormalization", "[2,3] axis=0, Scale [1], no B",
       {x(uniform({2, 3}, 26)), x(uniform({1}, 27)), omitted()}, {axis(0)}},
      {"LayerNormalization", "[3,4] Mean and InvStdDev outputs (stash f64)",
       {x(uniform({3, 4}, 28)), x(uniform({4}, 29)), x(uniform({4}, 30))},
       {Attribute::make_int("stash_type", static_cast<int64_t>(DType::kF64))}, 3},
      {"LayerNormalization", "[2,2,3] axis=1 Mean and InvStdDev outputs (stash f64)",
       {x(uniform({2, 2, 3}, 31)), x(uniform({2, 3}, 32))},
       {axis(1), Attribute::make_int("stash_type", static_cast<int64_t>(DType::kF64))}, 3},

      {"InstanceNormalization", "[2,3,4]", {x(uniform({2, 3, 4}, 50)), x(s3), x(b3)}},
      {"InstanceNormalization", "[1,2,3,3] epsilon=1e-2",
       {x(uniform({1, 2, 3, 3}, 51)), x(uniform({2}, 52)), x(uniform({2}, 53))}, {eps(1e-2)}},
      {"InstanceNormalization", "[2,1,2,2,2] scale fixed",
       {x(uniform({2, 1, 2, 2, 2}, 54)), fixed(uniform({1}, 55)), x(uniform({1}, 56))}},
  };
  // The float32 kernels (what training runs).
  cases.push_back(as_f32_case({"Softmax", "[4,6]", {x(uniform({4, 6}, 60, -2, 2))}}));
  cases.push_back(as_f32_case({"LogSoftmax", "[2,3,4] axis=1", {x(uniform({2, 3, 4}, 61, -2, 2))}, {axis(1)}}));
  cases.push_back(as_f32_case({"BatchNormalization", "training [4,3,2,2]",
                            {x(uniform({4, 3, 2, 2}, 62)), x(s3), x(b3), fixed(m3), fixed(v3)}, {training()}}));
  cases.push_back(as_f32_case({"BatchNormalization", "inference [2,3,2]",
                            {x(uniform({2, 3, 2}, 63)), x(s3), x(b3), x(m3), x(v3)}}));
  cases.push_back(as_f32_case({"LayerNormalization", "[4,8]",
                            {x(uniform({4, 8}, 64)), x(uniform({8}, 65)), x(uniform({8}, 66))}}));
  cases.push_back(as_f32_case({"InstanceNormalization", "[2,3,6]", {x(uniform({2, 3, 6}, 67)), x(s3), x(b3)}}));
  return cases;
}

TEST_CASE("BatchNormalization training_mode: running-statistics outputs pass no gradient", "[grad]") {
  // The node has all three outputs; the loss uses Y only. dX, dScale, dB must match finite
  // differences of that loss (the running mean/var are state updates, not part of it).
  ir::Model m;
  ops::GraphBuilder b(m);
  const auto xv = b.input("X", DType::kF64, {3, 2, 2});
  const auto sv = b.input("scale", DType::kF64, {2});
  const auto bv = b.input("B", DType::kF64, {2});
  const auto ys = b.op_n("BatchNormalization",
                         {xv, sv, bv, b.constant(uniform({2}, 3)), b.constant(uniform({2}, 4, 0.5, 1.5))}, 3,
                         {training()});
  const auto r = b.constant(uniform({3, 2, 2}, 5, 0.5, 1.5));
  b.output(b.op("ReduceSum", {b.op("Mul", {ys[0], r})}, {Attribute::make_int("keepdims", 0)}), "loss");
  b.output(ys[1], "running_mean");
  b.output(ys[2], "running_var");
  REQUIRE(b.status().ok());
  CHECK(check_model(m, {uniform({3, 2, 2}, 6), uniform({2}, 7), uniform({2}, 8)}, {"X", "scale", "B"}) == "");
}

TEST_CASE("BatchNormalization and its gradient in float32 (vector planes) on 3 threads match float64", "[grad]") {
  // Planes of 63 and 1 elements: whole vectors, the pairs-of-vectors loop and the scalar tail
  // of the Highway plane sweeps; float64 runs the scalar reference loops.
  const Tensor s5 = uniform({5}, 70), b5 = uniform({5}, 71), m5 = uniform({5}, 72), v5 = positive({5}, 73);
  const std::vector<Case> cases = {
      {"BatchNormalization", "training [3,5,7,9]",
       {x(uniform({3, 5, 7, 9}, 74, -2, 3)), x(s5), x(b5), fixed(m5), fixed(v5)}, {training()}},
      {"BatchNormalization", "inference [2,5,11,3]", {x(uniform({2, 5, 11, 3}, 75)), x(s5), x(b5), x(m5), x(v5)}},
      {"BatchNormalization", "training [7,5] (N only)", {x(uniform({7, 5}, 76)), x(s5), x(b5), fixed(m5), fixed(v5)},
       {training()}},
      // Planes under two full vectors take narrower ones (MobileNet's small layers): 16 (8 lanes),
      // 9 (4 lanes + 1), 6 (2 lanes), 3 (1 lane), 20 (8 lanes + 4).
      {"BatchNormalization", "training [4,5,4,4]", {x(uniform({4, 5, 4, 4}, 77, -2, 3)), x(s5), x(b5), fixed(m5), fixed(v5)},
       {training()}},
      {"BatchNormalization", "training [3,5,3,3]", {x(uniform({3, 5, 3, 3}, 78)), x(s5), x(b5), fixed(m5), fixed(v5)},
       {training()}},
      {"BatchNormalization", "training [6,5,2,3]", {x(uniform({6, 5, 2, 3}, 79)), x(s5), x(b5), fixed(m5), fixed(v5)},
       {training()}},
      {"BatchNormalization", "training [5,5,3]", {x(uniform({5, 5, 3}, 80)), x(s5), x(b5), fixed(m5), fixed(v5)},
       {training()}},
      {"BatchNormalization", "inference [2,5,4,5]", {x(uniform({2, 5, 4, 5}, 81)), x(s5), x(b5), x(m5), x(v5)}},
      // The one-sweep batch statistics (sums of x - k, k the mean of the channel's first plane):
      // an offset 8x the spread, where E[x^2] - E[x]^2 unshifted would cancel; 37-element planes
      // (vectors and a tail) over 5 images.
      {"BatchNormalization", "training [5,5,37] offset 8", {x(uniform({5, 5, 37}, 82, 8, 9)), x(s5), x(b5), fixed(m5), fixed(v5)},
       {training()}},
  };
  for (const Case& c : cases) {
    INFO(c.label);
    CHECK(check_f32(c, 3) == "");
  }
}
