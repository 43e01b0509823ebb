// Tests of the optimizer passes for DenseNet's patterns (core/passes/opt_pool_before_conv.cpp,
// opt_concat_affine.cpp) and the FusedConcatAffine kernel they feed (concat_affine.cpp): what each
// graph becomes, and that the optimized graph's outputs equal the original's (run by the unfused
// Conv/AveragePool/Concat/BatchNormalization/Relu kernels) at 1e-5, as optimize_test.cpp does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/passes/optimize.h"
#include "core/passes/verify_model.h"
#include "tests/unit/optimize_test_util.h"

using namespace tsr;
using namespace tsr::opt_test;

namespace {

Tensor i64(std::vector<int64_t> v) { return Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v); }

// Leftover elementwise nodes (the Relu, Neg) stay as they are.
passes::OptimizeOptions without_elementwise_fusion() {
  passes::OptimizeOptions o;
  o.fuse_elementwise = false;
  return o;
}

}  // namespace

// DenseNet's transitions: Relu -> 1x1 Conv -> Pad(all zeros) -> AveragePool 2x2 stride 2. The pool
// moves before the Conv (a pointwise linear map commutes with the mean of pixels), which then
// runs on a quarter of the pixels; with and without the Pad and the bias, grouped, odd sizes
// (the last row and column dropped), overlapping 3x3 windows with stride 2.
TEST_CASE("optimize: AveragePool after a 1x1 Conv moves before it", "[optimize]") {
  for (int variant = 0; variant < 4; ++variant) {
    INFO("variant " << variant);
    Builder b;
    const int64_t group = variant == 2 ? 2 : 1, k = variant == 3 ? 3 : 2;
    const int32_t x = b.node("Relu", {b.input({1, 8, 11, 13})});
    std::vector<int32_t> conv_in = {x, b.constant(b.random({6, 8 / group, 1, 1}))};
    if (variant != 1) conv_in.push_back(b.constant(b.random({6})));
    int32_t y = b.node("Conv", conv_in, {ir::Attribute::make_int("group", group)});
    if (variant != 3) y = b.node("Pad", {y, b.constant(i64({0, 0, 0, 0, 0, 0, 0, 0}))});
    b.output(b.node("AveragePool", {y}, {ir::Attribute::make_ints("kernel_shape", {k, k}), ir::Attribute::make_ints("strides", {2, 2})}));
    const ir::Model opt = optimize_and_compare(b);
    REQUIRE(ops_of(opt) == std::vector<std::string>{"Relu", "AveragePool", "Conv"});
    const ir::Graph& g = opt.main();
    CHECK(g.tensors[size_t(g.nodes[1].outputs[0])].shape == Shape{1, 8, 5, 6});
    CHECK(g.nodes[2].outputs[0] == g.outputs[0]);
  }
}

TEST_CASE("optimize: an AveragePool that does not halve the pixels, pads, or follows a 3x3 Conv stays after it", "[optimize]") {
  for (int variant = 0; variant < 4; ++variant) {
    INFO("variant " << variant);
    Builder b;
    const int32_t x = b.input({1, 4, 8, 8});
    const int64_t kw = variant == 2 ? 3 : 1;
    const int32_t y = b.node("Conv", {x, b.constant(b.random({5, 4, kw, kw}))},
                             {ir::Attribute::make_ints("pads", {kw / 2, kw / 2, kw / 2, kw / 2})});
    std::vector<ir::Attribute> attrs = {ir::Attribute::make_ints("kernel_shape", {2, 2}),
                                        ir::Attribute::make_ints("strides", {variant == 0 ? 1 : 2, variant == 0 ? 1 : 2})};
    if (variant == 1) attrs.push_back(ir::Attribute::make_ints("pads", {1, 1, 1, 1}));
    b.output(b.node("AveragePool", {y}, attrs));
    if (variant == 3) b.output(y);  // the Conv's output is read twice
    CHECK(ops_of(optimize_and_compare(b)) == std::vector<std::string>{"Conv", "AveragePool"});
  }
}

// DenseNet's layers: Concat(earlier maps, axis 1) -> BatchNormalization -> Relu becomes one
// FusedConcatAffine reading the inputs in place: batch 2, three inputs (one of a single channel),
// planes of 35 (vectors and a tail), axis given as 1 and as -3; without a Relu, and with the BN
// output read twice (the Relu stays); a Concat along another axis or read twice stays.
TEST_CASE("optimize: Concat -> BatchNormalization [-> Relu] -> FusedConcatAffine", "[optimize]") {
  for (int variant = 0; variant < 6; ++variant) {
    INFO("variant " << variant);
    Builder b;
    const int64_t axis = variant == 4 ? 2 : variant == 1 ? -3 : 1;
    const std::vector<int32_t> in =
        axis == 2 ? std::vector<int32_t>{b.input({2, 3, 5, 7}), b.input({2, 3, 1, 7}), b.input({2, 3, 4, 7})}
                  : std::vector<int32_t>{b.input({2, 3, 5, 7}), b.input({2, 1, 5, 7}), b.input({2, 4, 5, 7})};
    const int32_t cat = b.node("Concat", in, {ir::Attribute::make_int("axis", axis)});
    const int64_t c = axis == 2 ? 3 : 8;
    const int32_t bn = b.node("BatchNormalization",
                              {cat, b.constant(b.random({c}, 0.5, 2)), b.constant(b.random({c})), b.constant(b.random({c})),
                               b.constant(b.random({c}, 0.1, 3))},
                              {ir::Attribute::make_float("epsilon", 1e-3)});
    if (variant == 2) {
      b.output(bn);
    } else {
      const int32_t r = b.node("Relu", {bn});
      b.output(r);
      if (variant == 3) b.output(b.node("Neg", {bn}));
      if (variant == 5) b.output(cat);
    }
    const std::vector<std::string> ops = ops_of(optimize_and_compare(b, variant == 0 ? 3 : 1, without_elementwise_fusion()));
    const bool fused = variant <= 3;
    CHECK(std::count(ops.begin(), ops.end(), "FusedConcatAffine") == (fused ? 1 : 0));
    CHECK(std::count(ops.begin(), ops.end(), "Relu") == (variant == 3 || !fused ? 1 : 0));
  }
}

TEST_CASE("FusedConcatAffine: a scale of the wrong length or inputs of other sizes are load errors naming the node",
          "[optimize]") {
  for (bool bad_scale : {true, false}) {
    Builder b;
    const int32_t x0 = b.input({1, 2, 3, 3}), x1 = b.input({1, 1, 3, bad_scale ? 3 : 4});
    b.output(b.node("FusedConcatAffine", {b.constant(b.random({bad_scale ? 4 : 3})), b.constant(b.random({3})), x0, x1}));
    Status s = passes::verify_model(b.model);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().find(bad_scale ? "input[0] (scale)" : "input[3]") != std::string::npos);
    CHECK(s.message().find("FusedConcatAffine") != std::string::npos);
  }
}
