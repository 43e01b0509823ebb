// Tests for the inference graph optimizations (core/passes/optimize.h, opt_*.cpp) and the fused
// kernels they produce (FusedConv/FusedGemm epilogues, backends/cpu/kernels/epilogue.h).
//
// Each case builds a small graph, checks what the passes turned it into (node ops and counts) and
// that the optimized graph's outputs equal the original graph's at 1e-5, the original run by the
// unfused Conv/BatchNormalization/activation kernels that ops_nn_test and the ONNX conformance
// suite check against their definitions. Every Conv code path is covered (depthwise, pointwise
// 1x1 GEMM, im2col, Winograd) with every activation. Real models: tests/models run `tessera run`, which
// optimizes by default, against onnxruntime at 1e-4.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/exec/optimized_model.h"
#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/ops/fused_activation.h"
#include "core/passes/optimize.h"
#include "core/passes/verify_model.h"
#include "tests/unit/optimize_test_util.h"

using namespace tsr;
using namespace tsr::opt_test;

namespace {

// The options for tests of the other passes, whose leftover elementwise nodes would otherwise
// fuse (fused_elementwise_test.cpp tests that pass).
passes::OptimizeOptions without_elementwise_fusion() {
  passes::OptimizeOptions o;
  o.fuse_elementwise = false;
  return o;
}

// An activation node over `x` in the builder, by name.
int32_t activation(Builder& b, const std::string& act, int32_t x) {
  if (act == "Clip")
    return b.node("Clip", {x, b.constant(Tensor::scalar<float>(0.f)), b.constant(Tensor::scalar<float>(6.f))});
  if (act == "ClipMin") return b.node("Clip", {x, b.constant(Tensor::scalar<float>(-0.25f))});
  if (act == "LeakyRelu") return b.node("LeakyRelu", {x}, {ir::Attribute::make_float("alpha", 0.1)});
  if (act == "HardSigmoid")
    return b.node("HardSigmoid", {x}, {ir::Attribute::make_float("alpha", 0.3), ir::Attribute::make_float("beta", 0.4)});
  if (act == "Silu") return b.node("Mul", {x, b.node("Sigmoid", {x})});  // PyTorch's SiLU export
  if (act == "SiluSwapped") return b.node("Mul", {b.node("Sigmoid", {x}), x});
  return b.node(act, {x});
}

}  // namespace

namespace {

// One conv of each CPU code path, with its output shape.
struct ConvShape {
  const char* what;
  Shape x, w;
  int64_t group;
  std::vector<int64_t> pads, strides;
  Shape y;
};
const ConvShape kConvShapes[] = {
    {"3x3 im2col", {1, 3, 9, 11}, {8, 3, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, {1, 8, 9, 11}},
    {"1x1 pointwise GEMM", {2, 5, 7, 6}, {6, 5, 1, 1}, 1, {0, 0, 0, 0}, {1, 1}, {2, 6, 7, 6}},
    {"3x3 depthwise stride 2", {1, 4, 10, 9}, {4, 1, 3, 3}, 4, {1, 1, 1, 1}, {2, 2}, {1, 4, 5, 5}},
    {"3x3 grouped", {1, 6, 8, 8}, {6, 3, 3, 3}, 2, {1, 1, 1, 1}, {1, 1}, {1, 6, 8, 8}},
    {"3x3 Winograd", {1, 16, 13, 18}, {24, 16, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, {1, 24, 13, 18}},
};

int32_t conv_node(Builder& b, const ConvShape& cs, int32_t x, bool bias = true) {
  std::vector<int32_t> in = {x, b.constant(b.random(cs.w))};
  if (bias) in.push_back(b.constant(b.random({cs.w[0]})));
  return b.node("Conv", in,
                {ir::Attribute::make_int("group", cs.group), ir::Attribute::make_ints("pads", cs.pads),
                 ir::Attribute::make_ints("strides", cs.strides)});
}

}  // namespace

TEST_CASE("optimize: Conv + activation -> FusedConv on every conv path", "[optimize]") {
  for (const ConvShape& cs : kConvShapes) {
    for (const char* act : {"Relu", "Clip", "ClipMin", "HardSwish", "Sigmoid", "LeakyRelu", "HardSigmoid", "Silu",
                            "SiluSwapped"}) {
      for (int threads : {1, 2}) {
        INFO(cs.what << " + " << act << ", " << threads << " thread(s)");
        Builder b;
        b.output(activation(b, act, conv_node(b, cs, b.input(cs.x))));
        const ir::Model opt = optimize_and_compare(b, threads);
        CHECK(ops_of(opt) == std::vector<std::string>{"FusedConv"});
      }
    }
  }
}

TEST_CASE("optimize: Conv + residual Add [+ activation] -> FusedConv(X, W, B, Z) on every conv path", "[optimize]") {
  for (const ConvShape& cs : kConvShapes) {
    for (const char* act : {"", "Relu", "HardSwish"}) {
      for (bool bias : {true, false}) {
        for (int threads : {1, 3}) {
          INFO(cs.what << " + Add + " << act << (bias ? ", bias" : ", no bias") << ", " << threads << " thread(s)");
          // BlazeFace's skip connection: Z is a Relu output also read by the next block.
          Builder b;
          const int32_t x = b.input(cs.x);
          const int32_t z = b.node("Relu", {b.input(cs.y)});
          const int32_t y = conv_node(b, cs, x, bias);
          const int32_t sum = b.node("Add", bias ? std::vector<int32_t>{z, y} : std::vector<int32_t>{y, z});
          b.output(*act ? activation(b, act, sum) : sum);
          b.output(b.node("Neg", {z}));
          const ir::Model opt = optimize_and_compare(b, threads);
          CHECK(ops_of(opt) == std::vector<std::string>{"Relu", "FusedConv", "Neg"});
          const ir::Node& f = opt.main().nodes[1];
          REQUIRE(f.inputs.size() == 4);
          CHECK(f.inputs[3] == z);
          CHECK((f.inputs[2] >= 0) == bias);
          CHECK((f.attr("activation") != nullptr) == (*act != 0));
        }
      }
    }
  }
}

namespace {

// A depthwise conv block: x -> depthwise (window, optional activation) -> 1x1 conv (M channels)
// [+ residual z] [+ activation].
struct SeparableCase {
  const char* what;
  Shape x;
  int64_t k, stride, dil;
  std::vector<int64_t> pads;
  const char* dw_act;  // "" = none
  int64_t m;
  bool residual;
  const char* act;
};

int32_t separable_block(Builder& b, const SeparableCase& sc, int32_t x, int32_t z) {
  const int64_t c = sc.x[1];
  const int32_t d = b.node("Conv", {x, b.constant(b.random({c, 1, sc.k, sc.k})), b.constant(b.random({c}))},
                           {ir::Attribute::make_int("group", c), ir::Attribute::make_ints("pads", sc.pads),
                            ir::Attribute::make_ints("strides", {sc.stride, sc.stride}),
                            ir::Attribute::make_ints("dilations", {sc.dil, sc.dil})});
  const int32_t da = *sc.dw_act ? activation(b, sc.dw_act, d) : d;
  int32_t y = b.node("Conv", {da, b.constant(b.random({sc.m, c, 1, 1})), b.constant(b.random({sc.m}))});
  if (sc.residual) y = b.node("Add", {y, z});
  return *sc.act ? activation(b, sc.act, y) : y;
}

}  // namespace

TEST_CASE("optimize: depthwise Conv [+ act] -> 1x1 Conv [+ Z] [+ act] -> FusedSeparableConv", "[optimize]") {
  const SeparableCase cases[] = {
      // BlazeFace: 3x3 depthwise, then 1x1 + the block input + Relu.
      {"BlazeFace block", {1, 24, 20, 70}, 3, 1, 1, {1, 1, 1, 1}, "", 24, true, "Relu"},
      // MobileNetV2: depthwise + Relu6, then the 1x1 projection (+ residual when shapes allow).
      {"MobileNetV2 projection", {1, 16, 9, 13}, 3, 1, 1, {1, 1, 1, 1}, "Clip", 8, false, ""},
      {"stride 2, asymmetric pads", {2, 8, 11, 17}, 3, 2, 1, {0, 0, 1, 1}, "Relu", 12, false, "HardSwish"},
      {"5x5, narrow planes", {1, 6, 7, 9}, 5, 1, 1, {2, 2, 2, 2}, "HardSwish", 6, true, ""},
      {"dilated, 96 outputs (packed SGEMM)", {1, 10, 12, 40}, 3, 1, 2, {2, 2, 2, 2}, "", 96, false, "Relu"},
  };
  for (const SeparableCase& sc : cases) {
    for (int threads : {1, 3}) {
      INFO(sc.what << ", " << threads << " thread(s)");
      Builder b;
      const int32_t x = b.input(sc.x);
      const int64_t oh = (sc.x[2] + sc.pads[0] + sc.pads[2] - sc.dil * (sc.k - 1) - 1) / sc.stride + 1;
      const int64_t ow = (sc.x[3] + sc.pads[1] + sc.pads[3] - sc.dil * (sc.k - 1) - 1) / sc.stride + 1;
      const int32_t z = sc.residual ? b.input({sc.x[0], sc.m, oh, ow}) : -1;
      b.output(separable_block(b, sc, x, z));
      const ir::Model opt = optimize_and_compare(b, threads);
      REQUIRE(ops_of(opt) == std::vector<std::string>{"FusedSeparableConv"});
      const ir::Node& f = opt.main().nodes[0];
      CHECK(f.inputs.size() == (sc.residual ? 6u : 5u));  // X, W_dw, W_pw, B_dw, B_pw [, Z]
      CHECK((f.attr("dw_activation") != nullptr) == (*sc.dw_act != 0));
      CHECK((f.attr("activation") != nullptr) == (*sc.act != 0));
      CHECK(f.attr_int("group", 1) == sc.x[1]);
    }
  }
}

TEST_CASE("optimize: 1x1 Conv [+ act] -> depthwise -> 1x1 joins FusedSeparableConv on large planes", "[optimize]") {
  // MobileNetV2's inverted residual block: expansion 1x1 + Relu6, depthwise + Relu6, projection
  // 1x1 + the block input. 24 x 64 x 180 expanded (>= 2^18 floats, >= 17 columns): the expansion
  // is the node's inputs 6 and 7; 9 rows (fewer floats) or 9 columns with 24 channels: it stays a
  // conv of its own; 9 columns with >= 128 channels (the kernel's channels-last stage, which then
  // computes the expansion channels-last): it joins.
  const std::tuple<int64_t, int64_t, int64_t> planes[] = {{64, 180, 24}, {9, 21, 24}, {1300, 9, 24}, {7, 9, 144}};
  for (const auto& [ht, wd, c] : planes) {
    for (int threads : {1, 3}) {
      INFO(ht << " x " << wd << " x " << c << ", " << threads << " thread(s)");
      const SeparableCase sc = {"", {1, c, ht, wd}, 3, 1, 1, {1, 1, 1, 1}, "Clip", 8, true, ""};
      Builder b;
      const int32_t x = b.input({1, 8, ht, wd});
      const int32_t e = activation(b, "Clip", b.node("Conv", {x, b.constant(b.random({c, 8, 1, 1})),
                                                              b.constant(b.random({c}))}));
      b.output(separable_block(b, sc, e, x));
      const ir::Model opt = optimize_and_compare(b, threads);
      if (wd < 17 ? c < 128 : ht < 64) {
        CHECK(ops_of(opt) == std::vector<std::string>{"FusedConv", "FusedSeparableConv"});
        continue;
      }
      REQUIRE(ops_of(opt) == std::vector<std::string>{"FusedSeparableConv"});
      const ir::Node& f = opt.main().nodes[0];
      CHECK(f.inputs.size() == 8u);  // X, W_dw, W_pw, B_dw, B_pw, Z, W_ex, B_ex
      CHECK(f.attr("ex_activation") != nullptr);
      CHECK(f.attr("dw_activation") != nullptr);
    }
  }
}

TEST_CASE("optimize: depthwise convs that feed more than a plain 1x1 conv stay apart", "[optimize]") {
  const SeparableCase sc = {"", {1, 4, 6, 6}, 3, 1, 1, {1, 1, 1, 1}, "", 5, false, ""};
  {
    Builder b;  // the depthwise output is also a graph output
    const int32_t x = b.input(sc.x);
    const int32_t d = b.node("Conv", {x, b.constant(b.random({4, 1, 3, 3}))},
                             {ir::Attribute::make_int("group", 4), ir::Attribute::make_ints("pads", {1, 1, 1, 1})});
    b.output(b.node("Conv", {d, b.constant(b.random({5, 4, 1, 1}))}));
    b.output(d);
    CHECK(ops_of(optimize_and_compare(b)) == std::vector<std::string>{"Conv", "Conv"});
  }
  {
    Builder b;  // the 1x1 conv is strided
    const int32_t x = b.input(sc.x);
    const int32_t d = b.node("Conv", {x, b.constant(b.random({4, 1, 3, 3}))},
                             {ir::Attribute::make_int("group", 4), ir::Attribute::make_ints("pads", {1, 1, 1, 1})});
    b.output(b.node("Conv", {d, b.constant(b.random({5, 4, 1, 1}))}, {ir::Attribute::make_ints("strides", {2, 2})}));
    CHECK(ops_of(optimize_and_compare(b)) == std::vector<std::string>{"Conv", "Conv"});
  }
  {
    Builder b;  // a grouped (not depthwise) first conv
    const int32_t x = b.input(sc.x);
    const int32_t d = b.node("Conv", {x, b.constant(b.random({4, 2, 3, 3}))},
                             {ir::Attribute::make_int("group", 2), ir::Attribute::make_ints("pads", {1, 1, 1, 1})});
    b.output(b.node("Conv", {d, b.constant(b.random({5, 4, 1, 1}))}));
    CHECK(ops_of(optimize_and_compare(b)) == std::vector<std::string>{"Conv", "Conv"});
  }
}

namespace {

// A squeeze-excitation block: depthwise conv [+ act] -> GlobalAveragePool -> 1x1 conv -> act ->
// 1x1 conv -> gate act -> Mul with the depthwise output (MobileNetV3: HardSwish / Relu /
// HardSigmoid; EfficientNet: Silu / Silu / Sigmoid).
struct SECase {
  const char* what;
  Shape x;
  int64_t k, stride, r;
  const char *dw_act, *se_act, *gate_act;
  bool gate_first, biases;
};

int32_t se_block(Builder& b, const SECase& sc, int32_t x) {
  const int64_t c = sc.x[1], p = sc.k / 2;
  std::vector<int32_t> dw_in = {x, b.constant(b.random({c, 1, sc.k, sc.k}))};
  if (sc.biases) dw_in.push_back(b.constant(b.random({c})));
  int32_t d = b.node("Conv", dw_in,
                     {ir::Attribute::make_int("group", c), ir::Attribute::make_ints("pads", {p, p, p, p}),
                      ir::Attribute::make_ints("strides", {sc.stride, sc.stride})});
  if (*sc.dw_act) d = activation(b, sc.dw_act, d);
  auto fc = [&](int32_t in, int64_t m, int64_t k) {
    std::vector<int32_t> ins = {in, b.constant(b.random({m, k, 1, 1}))};
    if (sc.biases) ins.push_back(b.constant(b.random({m})));
    return b.node("Conv", ins);
  };
  const int32_t h = activation(b, sc.se_act, fc(b.node("GlobalAveragePool", {d}), sc.r, c));
  const int32_t gate = activation(b, sc.gate_act, fc(h, c, sc.r));
  return sc.gate_first ? b.node("Mul", {gate, d}) : b.node("Mul", {d, gate});
}

}  // namespace

TEST_CASE("optimize: depthwise Conv + squeeze-excitation -> FusedDepthwiseSE", "[optimize]") {
  const SECase cases[] = {
      {"MobileNetV3 5x5", {1, 12, 9, 11}, 5, 1, 4, "HardSwish", "Relu", "HardSigmoid", true, true},
      {"EfficientNet 3x3 stride 2, batch 2", {2, 20, 13, 7}, 3, 2, 5, "Silu", "Silu", "Sigmoid", false, true},
      {"no dw activation, no biases, 3x3 planes", {1, 37, 5, 5}, 3, 2, 17, "", "Relu", "Sigmoid", true, false},
      {"14x14 planes, 40 channels", {1, 40, 14, 14}, 5, 1, 8, "Relu", "Relu", "HardSigmoid", false, true},
      // Planes of one vector per row (the kernel's row-reuse loop, strides 1 and 2): 7 rows at a
      // time, 8 or 4 with a short last block, rows of 4 lanes.
      {"3x3 on 7x7, 24 channels", {1, 24, 7, 7}, 3, 1, 6, "HardSwish", "Relu", "HardSigmoid", true, true},
      {"3x3 on 6x3", {1, 9, 6, 3}, 3, 1, 3, "Relu", "Relu", "Sigmoid", false, true},
      {"5x5 on 5x4, batch 2", {2, 5, 5, 4}, 5, 1, 2, "Silu", "Silu", "Sigmoid", true, true},
      {"5x5 stride 2 on 13x11 (7x6 out)", {1, 16, 13, 11}, 5, 2, 4, "HardSwish", "Relu", "HardSigmoid", false, true},
      {"5x5 stride 2 on 9x9 (5x5 out)", {1, 8, 9, 9}, 5, 2, 2, "Relu", "Relu", "Sigmoid", true, true},
  };
  for (const SECase& sc : cases) {
    for (int threads : {1, 3}) {
      INFO(sc.what << ", " << threads << " thread(s)");
      Builder b;
      b.output(se_block(b, sc, b.input(sc.x)));
      const ir::Model opt = optimize_and_compare(b, threads);
      REQUIRE(ops_of(opt) == std::vector<std::string>{"FusedDepthwiseSE"});
      const ir::Node& f = opt.main().nodes[0];
      CHECK(f.inputs.size() == (sc.biases ? 7u : 4u));  // X, W_dw, W1, W2 [, B_dw, B1, B2]
      CHECK((f.attr("activation") != nullptr) == (*sc.dw_act != 0));
      CHECK(f.attr_string("gate_activation") == sc.gate_act);
    }
  }
  {
    Builder b;  // the depthwise output is also a graph output: left alone
    const SECase sc = cases[0];
    b.output(se_block(b, sc, b.input(sc.x)));
    b.output(b.g().nodes[1].outputs[0]);  // the HardSwish of the depthwise conv
    const std::vector<std::string> ops = ops_of(optimize_and_compare(b));
    CHECK(std::find(ops.begin(), ops.end(), "FusedDepthwiseSE") == ops.end());
  }
}

TEST_CASE("FusedSeparableConv: weights that do not fit are load errors naming the node", "[optimize]") {
  Builder b;
  const int32_t x = b.input({1, 4, 5, 5});
  b.output(b.node("FusedSeparableConv",
                  {x, b.constant(b.random({4, 1, 3, 3})), b.constant(b.random({6, 3, 1, 1}))},
                  {ir::Attribute::make_int("group", 4), ir::Attribute::make_ints("pads", {1, 1, 1, 1})}));
  Status s = passes::verify_model(b.model);
  REQUIRE_FALSE(s.ok());
  INFO(s.message());
  CHECK(s.message().find("W_pw") != std::string::npos);
  CHECK(s.message().find("FusedSeparableConv") != std::string::npos);
}

TEST_CASE("optimize: an Add that broadcasts or reads the conv twice is not a residual", "[optimize]") {
  const ConvShape& cs = kConvShapes[0];
  {
    Builder b;  // Z [1, C, 1, 1]: the kernel adds no broadcast operand
    const int32_t y = conv_node(b, cs, b.input(cs.x));
    b.output(b.node("Add", {y, b.input({1, cs.y[1], 1, 1})}));
    CHECK(ops_of(optimize_and_compare(b)) == std::vector<std::string>{"Conv", "Add"});
  }
  {
    Builder b;  // Y + Y
    const int32_t y = conv_node(b, cs, b.input(cs.x));
    b.output(b.node("Add", {y, y}));
    CHECK(ops_of(optimize_and_compare(b)) == std::vector<std::string>{"Conv", "Add"});
  }
  {
    Builder b;  // Conv + Conv: one of them takes the other as Z
    const int32_t y1 = conv_node(b, cs, b.input(cs.x));
    const int32_t y2 = conv_node(b, cs, b.input(cs.x));
    b.output(b.node("Relu", {b.node("Add", {y1, y2})}));
    CHECK(ops_of(optimize_and_compare(b)) == std::vector<std::string>{"Conv", "FusedConv"});
  }
}

TEST_CASE("FusedConv: a residual Z of the wrong shape is a load error naming the node", "[optimize]") {
  Builder b;
  const int32_t x = b.input({1, 1, 3, 3});
  b.output(b.node("FusedConv", {x, b.constant(b.random({2, 1, 1, 1})), -1, b.input({1, 1, 3, 3})}));
  Status s = passes::verify_model(b.model);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("input[3] (Z)") != std::string::npos);
  CHECK(s.message().find("FusedConv") != std::string::npos);
}

TEST_CASE("optimize: Conv + BatchNormalization folds, then fuses the Relu", "[optimize]") {
  for (bool bias : {true, false}) {
    Builder b;
    const int32_t x = b.input({2, 3, 8, 8});
    std::vector<int32_t> conv_in = {x, b.constant(b.random({6, 3, 3, 3}))};
    if (bias) conv_in.push_back(b.constant(b.random({6})));
    const int32_t y = b.node("Conv", conv_in, {ir::Attribute::make_ints("pads", {1, 1, 1, 1})});
    const int32_t bn = b.node("BatchNormalization",
                              {y, b.constant(b.random({6}, 0.5, 2)), b.constant(b.random({6})), b.constant(b.random({6})),
                               b.constant(b.random({6}, 0.1, 3))},
                              {ir::Attribute::make_float("epsilon", 1e-3)});
    b.output(b.node("Relu", {bn}));
    const ir::Model opt = optimize_and_compare(b);
    CHECK(ops_of(opt) == std::vector<std::string>{"FusedConv"});
  }
}

TEST_CASE("optimize: a Conv output read twice is neither folded nor fused", "[optimize]") {
  Builder b;
  const int32_t x = b.input({1, 2, 5, 5});
  const int32_t y = b.node("Conv", {x, b.constant(b.random({3, 2, 1, 1}))});
  b.output(b.node("Relu", {y}));
  b.output(y);
  const ir::Model opt = optimize_and_compare(b);
  CHECK(ops_of(opt) == std::vector<std::string>{"Conv", "Relu"});
}

TEST_CASE("optimize: MatMul + Add -> Gemm, + Relu -> FusedGemm", "[optimize]") {
  for (bool bias_first : {false, true}) {
    Builder b;
    const int32_t x = b.input({4, 7});
    const int32_t mm = b.node("MatMul", {x, b.constant(b.random({7, 5}))});
    const int32_t bias = b.constant(b.random({5}));
    const int32_t add = bias_first ? b.node("Add", {bias, mm}) : b.node("Add", {mm, bias});
    b.output(b.node("Relu", {add}));
    const ir::Model opt = optimize_and_compare(b);
    CHECK(ops_of(opt) == std::vector<std::string>{"FusedGemm"});
  }
  // A rank-3 MatMul of static shape runs as a Gemm between two (aliasing) Reshapes; a dynamic
  // one stays.
  Builder b;
  const int32_t x = b.input({2, 4, 7});
  b.output(b.node("Add", {b.node("MatMul", {x, b.constant(b.random({7, 5}))}), b.constant(b.random({5}))}));
  const ir::Model opt = optimize_and_compare(b);
  CHECK(ops_of(opt) == std::vector<std::string>{"Reshape", "Gemm", "Reshape"});
  Builder d;
  const int32_t xd = d.input({2, 4, 7});
  d.g().tensors[size_t(xd)].shape = {-1, 4, 7};
  d.output(d.node("Add", {d.node("MatMul", {xd, d.constant(d.random({7, 5}))}), d.constant(d.random({5}))}));
  REQUIRE(passes::verify_model(d.model).ok());
  ir::Model optd = d.model;
  REQUIRE(passes::optimize(optd).ok());
  CHECK(ops_of(optd) == std::vector<std::string>{"MatMul", "Add"});
}

TEST_CASE("optimize: the importer's Softmax wrapper folds when one flattened dim is not 1", "[optimize]") {
  for (const Shape& s : {Shape{2, 5, 1}, Shape{2, 1, 5}, Shape{3, 4}}) {
    Builder b;
    const int32_t x = b.input(s);
    const int32_t shp = b.node("Shape", {x});
    const int32_t flat = b.node("Flatten", {x}, {ir::Attribute::make_int("axis", 1)});
    const int32_t sm = b.node("Softmax", {flat}, {ir::Attribute::make_int("axis", 1)});
    b.output(b.node("Reshape", {sm, shp}));
    const ir::Model opt = optimize_and_compare(b);
    CHECK(ops_of(opt) == std::vector<std::string>{"Softmax"});
  }
  // [2, 3, 4] at axis 1 normalizes over 12 values: the wrapper stays.
  Builder b;
  const int32_t x = b.input({2, 3, 4});
  const int32_t shp = b.node("Shape", {x});
  const int32_t flat = b.node("Flatten", {x}, {ir::Attribute::make_int("axis", 1)});
  const int32_t sm = b.node("Softmax", {flat}, {ir::Attribute::make_int("axis", 1)});
  b.output(b.node("Reshape", {sm, shp}));
  const ir::Model opt = optimize_and_compare(b);
  CHECK(opt.main().nodes.size() == 4);
}

TEST_CASE("optimize: CSE merges equal nodes, DCE drops dead ones, random ops stay", "[optimize]") {
  Builder b;
  const int32_t x = b.input({3, 4});
  const int32_t a = b.node("Exp", {x});
  const int32_t c = b.node("Exp", {x});  // same as a
  const int32_t d = b.node("Neg", {a});
  const int32_t e = b.node("Neg", {c});  // same as d once c is a
  b.node("Sigmoid", {x});                // dead
  b.output(b.node("Add", {d, e}));
  const ir::Model opt = optimize_and_compare(b, 1, without_elementwise_fusion());
  CHECK(ops_of(opt) == std::vector<std::string>{"Exp", "Neg", "Add"});

  // Two unseeded RandomUniformLike nodes draw different values: not merged.
  Builder r;
  const int32_t y = r.input({64});
  const int32_t d1 = r.node("RandomUniformLike", {y});
  const int32_t d2 = r.node("RandomUniformLike", {y});
  r.output(r.node("Sub", {d1, d2}));
  ir::Model ro = r.model;
  REQUIRE(passes::verify_model(ro).ok());
  REQUIRE(passes::optimize(ro).ok());
  CHECK(ro.main().nodes.size() == 3);
}

TEST_CASE("optimize: training models are left unchanged", "[optimize]") {
  Builder b;
  const int32_t x = b.input({2, 2});
  b.output(b.node("Relu", {b.node("Exp", {x})}));
  b.node("Neg", {x});  // dead, but the model is a train_step
  b.model.variables.push_back({"w", Tensor::from<float>({2, 2}, {1, 2, 3, 4})});
  b.model.signatures.push_back({"train_step", 0, {"w"}, {""}});
  REQUIRE(passes::verify_model(b.model).ok());
  ir::Model m = b.model;
  auto report = passes::optimize(m);
  REQUIRE(report.ok());
  CHECK(report->skipped_training);
  CHECK(m.main().nodes.size() == 3);
}

TEST_CASE("FusedConv: bad activation attributes are load errors naming the node", "[optimize]") {
  // A 1x1 FusedConv with `activation` (and no activation_params), verified.
  auto verify_with = [](const std::string& activation) {
    Builder b;
    const int32_t x = b.input({1, 1, 3, 3});
    b.output(b.node("FusedConv", {x, b.constant(b.random({1, 1, 1, 1}))},
                    {ir::Attribute::make_string("activation", activation)}));
    return passes::verify_model(b.model);
  };
  Status s = verify_with("Tanh");
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("unknown activation 'Tanh'") != std::string::npos);
  CHECK(s.message().find("FusedConv") != std::string::npos);
  Status s2 = verify_with("Clip");
  REQUIRE_FALSE(s2.ok());
  CHECK(s2.message().find("takes 2 activation_params") != std::string::npos);
}

TEST_CASE("optimize: Conv + per-channel/scalar Mul, Add, Sub, Div fold into the Conv", "[optimize]") {
  Builder b;
  const int32_t x = b.input({1, 4, 6, 6});
  int32_t y = b.node("Conv", {x, b.constant(b.random({5, 4, 3, 3})), b.constant(b.random({5}))},
                     {ir::Attribute::make_ints("pads", {1, 1, 1, 1})});
  y = b.node("Mul", {b.constant(b.random({5, 1, 1}, 0.5, 2)), y});
  y = b.node("Add", {y, b.constant(b.random({1, 5, 1, 1}))});
  y = b.node("Div", {y, b.constant(Tensor::scalar<float>(3.f))});
  y = b.node("Sub", {y, b.constant(Tensor::from<float>({1}, {0.25f}))});
  b.output(y);
  const ir::Model opt = optimize_and_compare(b);
  CHECK(ops_of(opt) == std::vector<std::string>{"Conv"});

  // A constant that broadcasts along a spatial dim is no per-channel map.
  Builder c;
  const int32_t x2 = c.input({1, 2, 4, 4});
  const int32_t y2 = c.node("Conv", {x2, c.constant(c.random({3, 2, 1, 1}))});
  c.output(c.node("Mul", {y2, c.constant(c.random({1, 4}))}));
  const ir::Model opt2 = optimize_and_compare(c);
  CHECK(ops_of(opt2) == std::vector<std::string>{"Conv", "Mul"});
}

TEST_CASE("optimize: Mul(y, Sigmoid(y)) fuses as Silu only where y and the Sigmoid feed nothing else", "[optimize]") {
  const ConvShape& cs = kConvShapes[0];
  {  // Silu, then a residual-free Add: the Mul is the activation, the Add stays.
    Builder b;
    const int32_t y = conv_node(b, cs, b.input(cs.x));
    b.output(b.node("Add", {activation(b, "Silu", y), b.input(cs.y)}));
    const ir::Model opt = optimize_and_compare(b, 1, without_elementwise_fusion());
    CHECK(ops_of(opt) == std::vector<std::string>{"FusedConv", "Add"});
    const ir::Attribute* a = opt.main().nodes[0].attr("activation");
    REQUIRE(a);
    CHECK(a->s == "Silu");
  }
  {  // y read by a third node: no fusion.
    Builder b;
    const int32_t y = conv_node(b, cs, b.input(cs.x));
    b.output(activation(b, "Silu", y));
    b.output(b.node("Neg", {y}));
    const ir::Model opt = optimize_and_compare(b, 1, without_elementwise_fusion());
    CHECK(ops_of(opt) == std::vector<std::string>{"Conv", "Sigmoid", "Mul", "Neg"});
  }
  {  // the Sigmoid's output read elsewhere too: no fusion.
    Builder b;
    const int32_t y = conv_node(b, cs, b.input(cs.x));
    const int32_t s = b.node("Sigmoid", {y});
    b.output(b.node("Mul", {y, s}));
    b.output(s);
    const ir::Model opt = optimize_and_compare(b, 1, without_elementwise_fusion());
    CHECK(ops_of(opt) == std::vector<std::string>{"Conv", "Sigmoid", "Mul"});
  }
  {  // Mul(Sigmoid(y), z) of another tensor: not SiLU.
    Builder b;
    const int32_t y = conv_node(b, cs, b.input(cs.x));
    b.output(b.node("Mul", {b.node("Sigmoid", {y}), b.input(cs.y)}));
    const ir::Model opt = optimize_and_compare(b, 1, without_elementwise_fusion());
    CHECK(ops_of(opt) == std::vector<std::string>{"FusedConv", "Mul"});  // the Sigmoid fuses
  }
}

TEST_CASE("optimize: spelled-out HardSwish becomes one node and fuses into the Conv", "[optimize]") {
  for (int form = 0; form < 3; ++form) {
    INFO("form " << form);
    Builder b;
    const int32_t x = b.input({1, 3, 5, 5});
    const int32_t y = b.node("Conv", {x, b.constant(b.random({4, 3, 3, 3}))}, {ir::Attribute::make_ints("pads", {1, 1, 1, 1})});
    const int32_t a = b.node("Add", {y, b.constant(Tensor::scalar<float>(3.f))});
    const int32_t c = b.node("Clip", {a, b.constant(Tensor::scalar<float>(0.f)), b.constant(Tensor::scalar<float>(6.f))});
    int32_t out = -1;
    if (form == 0) out = b.node("Div", {b.node("Mul", {y, c}), b.constant(Tensor::scalar<float>(6.f))});
    if (form == 1) out = b.node("Mul", {b.node("Mul", {c, y}), b.constant(Tensor::scalar<float>(1.f / 6.f))});
    if (form == 2) out = b.node("Mul", {y, b.node("Div", {c, b.constant(Tensor::scalar<float>(6.f))})});
    b.output(out);
    const ir::Model opt = optimize_and_compare(b);
    CHECK(ops_of(opt) == std::vector<std::string>{"FusedConv"});
  }
  // x + 3 read elsewhere too: no rewrite.
  Builder b;
  const int32_t x = b.input({2, 3});
  const int32_t a = b.node("Add", {x, b.constant(Tensor::scalar<float>(3.f))});
  const int32_t c = b.node("Clip", {a, b.constant(Tensor::scalar<float>(0.f)), b.constant(Tensor::scalar<float>(6.f))});
  b.output(b.node("Div", {b.node("Mul", {x, c}), b.constant(Tensor::scalar<float>(6.f))}));
  b.output(a);
  const ir::Model opt = optimize_and_compare(b, 1, without_elementwise_fusion());
  CHECK(opt.main().nodes.size() == 4);
}

namespace {

// A Conv on a [1, 4, 7, 9] input: depthwise 3x3 (pads 1) or 1x1 to 6 channels.
int32_t small_conv(Builder& b, bool depthwise) {
  const int32_t x = b.input({1, 4, 7, 9});
  return b.node("Conv", {x, b.constant(b.random(depthwise ? Shape{4, 1, 3, 3} : Shape{6, 4, 1, 1}))},
                {ir::Attribute::make_int("group", depthwise ? 4 : 1),
                 ir::Attribute::make_ints("pads", depthwise ? std::vector<int64_t>{1, 1, 1, 1}
                                                            : std::vector<int64_t>{0, 0, 0, 0})});
}

}  // namespace

TEST_CASE("optimize: scalar Mul/Add/Sub/Div after a fused activation fold into activation_affine", "[optimize]") {
  for (bool depthwise : {false, true}) {
    Builder b;
    int32_t y = small_conv(b, depthwise);
    y = b.node("HardSwish", {y});
    y = b.node("Mul", {b.constant(Tensor::from<float>({1}, {0.75f})), y});
    y = b.node("Add", {y, b.constant(Tensor::from<float>({1}, {-0.5f}))});
    y = b.node("Div", {y, b.constant(Tensor::scalar<float>(2.f))});
    y = b.node("Sub", {y, b.constant(Tensor::scalar<float>(0.125f))});
    b.output(y);
    const ir::Model opt = optimize_and_compare(b, 2);
    CHECK(ops_of(opt) == std::vector<std::string>{"FusedConv"});
    CHECK(opt.main().nodes[0].attr_floats("activation_affine").size() == 2);
  }
}

TEST_CASE("optimize: scalar Max/Min after a fused activation fold into activation_bounds", "[optimize]") {
  for (bool depthwise : {false, true}) {
    INFO((depthwise ? "depthwise" : "1x1"));
    Builder b;
    int32_t y = small_conv(b, depthwise);
    y = b.node("LeakyRelu", {y}, {ir::Attribute::make_float("alpha", 0.2f)});
    y = b.node("Mul", {y, b.constant(Tensor::scalar<float>(1.5f))});
    // openWakeWord's pattern (a Max with a scalar right after the activation), then a Min.
    y = b.node("Max", {b.constant(Tensor::scalar<float>(-0.05f)), y});
    y = b.node("Min", {y, b.constant(Tensor::from<float>({1}, {0.4f}))});
    b.output(y);
    const ir::Model opt = optimize_and_compare(b, 2);
    CHECK(ops_of(opt) == std::vector<std::string>{"FusedConv"});
    CHECK(opt.main().nodes[0].attr_floats("activation_bounds") == std::vector<double>{-0.05f, 0.4f});
    // An affine op after the bounds stays a node of its own (the epilogue applies the bounds last).
    Builder b2;
    const int32_t x2 = b2.input({1, 4, 7, 9});
    int32_t y2 = b2.node("Conv", {x2, b2.constant(b2.random(Shape{6, 4, 1, 1}))});
    y2 = b2.node("Relu", {y2});
    y2 = b2.node("Min", {y2, b2.constant(Tensor::scalar<float>(0.3f))});
    y2 = b2.node("Add", {y2, b2.constant(Tensor::scalar<float>(1.0f))});
    b2.output(y2);
    const ir::Model opt2 = optimize_and_compare(b2, 2);
    CHECK(ops_of(opt2) == std::vector<std::string>{"FusedConv", "Add"});
  }
  // Bounds the wrong way round are an invalid model, naming the node.
  ir::Node n;
  n.op = "FusedConv";
  n.attributes = {ir::Attribute::make_string("activation", "Relu"), ir::Attribute::make_floats("activation_bounds", {1.0, 0.0})};
  const auto bad = ops::activation_of(n, "graph[0].node[3]");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("graph[0].node[3]: activation_bounds must be 2 floats {lo, hi}") != std::string::npos);
}

namespace {

// The optimizer as the CLI and the web package run it: constants folded by the CPU kernels.
passes::OptimizeOptions with_folding() {
  passes::OptimizeOptions o;
  o.evaluate = evaluate_node;
  return o;
}

Tensor i64(std::vector<int64_t> v) { return Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v); }

}  // namespace

TEST_CASE("optimize: constant chains fold, then a zero Pad folds into the strided Conv it feeds", "[optimize]") {
  // MLSD's shape (tf2onnx): the NCHW pads come out of a Concat of constants, the Pad feeds a
  // stride-2 depthwise conv with asymmetric "same" padding.
  for (bool depthwise : {true, false}) {
    INFO((depthwise ? "depthwise" : "3x3 dense"));
    Builder b;
    const int32_t x = b.input({1, 4, 9, 10});
    const int32_t pads = b.node("Concat", {b.constant(i64({0, 0, 0, 1})), b.constant(i64({0, 0, 1, 2}))},
                                {ir::Attribute::make_int("axis", 0)});
    const int32_t p = b.node("Pad", {x, pads, b.constant(Tensor::scalar<float>(0.0f))});
    const int32_t y = b.node("Conv", {p, b.constant(b.random({4, depthwise ? 1 : 4, 3, 3}))},
                             {ir::Attribute::make_int("group", depthwise ? 4 : 1),
                              ir::Attribute::make_ints("strides", {2, 2}), ir::Attribute::make_ints("pads", {1, 0, 0, 0})});
    b.output(b.node("Relu", {y}));
    const ir::Model opt = optimize_and_compare(b, 1, with_folding());
    REQUIRE(ops_of(opt) == std::vector<std::string>{"FusedConv"});
    CHECK(opt.main().nodes[0].attr_ints("pads") == std::vector<int64_t>{1, 1, 1, 2});
    CHECK(opt.main().nodes[0].inputs[0] == x);
  }
}

// EfficientNet-B0 q8's squeeze-excitation convs: DequantizeLinear(s8 [1152, 48, 1, 1], per channel)
// -> f32 Conv. The f32 weight (216 KiB) exceeds fold_constants' 64 KiB and is 4x its codes, yet
// folds where compute ops alone read it and nothing else reads the codes (which go with the node),
// up to 1 MiB of f32 (case 3: 1152 x 240, 1.05 MiB, stays).
TEST_CASE("optimize: a dequantized weight above 64 KiB folds only where compute ops alone read it", "[optimize]") {
  for (int other : {0, 1, 2, 3}) {  // 1: a Relu reads the f32 weight too; 2: a second DequantizeLinear the codes
    INFO("other reader " << other);
    Builder b;
    const int64_t cin = other == 3 ? 240 : 48;
    const int32_t x = b.input({1, cin, 1, 1});
    std::uniform_int_distribution<int> code(-127, 127);
    std::vector<int8_t> codes(size_t(1152 * cin));
    for (auto& v : codes) v = static_cast<int8_t>(code(b.rng));
    const int32_t wq = b.constant(Tensor::from<int8_t>({1152, cin, 1, 1}, codes));
    auto dequantize = [&] {
      return b.node("DequantizeLinear",
                    {wq, b.constant(b.random({1152}, 0.001, 0.01)), b.constant(Tensor::from<int8_t>({1152}, std::vector<int8_t>(1152, 0)))},
                    {ir::Attribute::make_int("axis", 0)});
    };
    const int32_t w = dequantize();
    b.output(b.node("Conv", {x, w, b.constant(b.random({1152}))}));
    if (other == 1) b.output(b.node("Relu", {w}));
    if (other == 2) b.output(b.node("Conv", {x, dequantize()}));
    const std::vector<std::string> ops = ops_of(optimize_and_compare(b, 1, with_folding()));
    CHECK(std::count(ops.begin(), ops.end(), "DequantizeLinear") == (other == 0 ? 0 : other == 2 ? 2 : 1));
  }
}

TEST_CASE("optimize: Pads that are not a zero spatial padding of one Conv input stay", "[optimize]") {
  struct Case {
    const char* what;
    std::vector<int64_t> pads;
    float value;
    const char* mode;
  };
  const Case cases[] = {
      {"reflect mode", {0, 0, 1, 1, 0, 0, 1, 1}, 0, "reflect"},
      {"nonzero value", {0, 0, 1, 1, 0, 0, 1, 1}, 0.5f, "constant"},
      {"channel padding", {0, 1, 1, 1, 0, 0, 1, 1}, 0, "constant"},
      {"a crop", {0, 0, -1, 0, 0, 0, 1, 1}, 0, "constant"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Builder b;
    const int32_t p = b.node("Pad", {b.input({1, 2, 6, 6}), b.constant(i64(c.pads)), b.constant(Tensor::scalar<float>(c.value))},
                             {ir::Attribute::make_string("mode", c.mode)});
    const int64_t cin = 2 + c.pads[1] + c.pads[5];
    b.output(b.node("Conv", {p, b.constant(b.random({3, cin, 3, 3}))}));
    CHECK(ops_of(optimize_and_compare(b, 1, with_folding())) == std::vector<std::string>{"Pad", "Conv"});
  }
  Builder b;  // the padded tensor is also an output
  const int32_t p = b.node("Pad", {b.input({1, 2, 6, 6}), b.constant(i64({0, 0, 1, 1, 0, 0, 1, 1}))});
  b.output(b.node("Conv", {p, b.constant(b.random({3, 2, 3, 3}))}));
  b.output(p);
  CHECK(ops_of(optimize_and_compare(b, 1, with_folding())) == std::vector<std::string>{"Pad", "Conv"});
}

TEST_CASE("optimize: constant folding keeps random ops, large results and graph outputs", "[optimize]") {
  Builder b;
  const int32_t x = b.input({2, 3});
  // 4 MB from 16 bytes of shape: left for run time, the model stays small.
  const int32_t big = b.node("ConstantOfShape", {b.constant(i64({1000, 1000}))});
  b.output(b.node("ReduceSum", {big}, {ir::Attribute::make_int("keepdims", 0)}));
  // A small constant result folds, even with a graph input elsewhere in the graph.
  const int32_t small = b.node("Mul", {b.constant(b.random({2, 3})), b.constant(b.random({2, 3}))});
  b.output(b.node("Add", {x, small}));
  // A graph output computed from constants alone keeps its node.
  b.output(b.node("Neg", {b.constant(b.random({3}))}));
  const ir::Model opt = optimize_and_compare(b, 1, with_folding());
  CHECK(ops_of(opt) == std::vector<std::string>{"ConstantOfShape", "ReduceSum", "Add", "Neg"});
  // Without an evaluator nothing folds.
  Builder c;
  c.output(c.node("Add", {c.input({3}), c.node("Neg", {c.constant(c.random({3}))})}));
  CHECK(ops_of(optimize_and_compare(c, 1, without_elementwise_fusion())) == std::vector<std::string>{"Neg", "Add"});
}

TEST_CASE("evaluate_node runs one node on constants and names it on error", "[optimize]") {
  ir::Node concat{"Concat", 0, "cat", {0, 1}, {2}, {ir::Attribute::make_int("axis", 0)}};
  const Tensor a = i64({1, 2}), c = i64({3});
  auto out = evaluate_node(concat, {&a, &c});
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  CHECK((*out)[0].to_i64_vector() == std::vector<int64_t>{1, 2, 3});
  ir::Node bad{"Concat", 0, "cat", {0, 1}, {2}, {ir::Attribute::make_int("axis", 3)}};
  auto err = evaluate_node(bad, {&a, &c});
  REQUIRE_FALSE(err.ok());
  CHECK(err.status().message().find("cat") != std::string::npos);
}
