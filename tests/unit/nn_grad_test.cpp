// Finite-difference cases for the convolution and pooling gradient rules (core/ops/grads/nn.cpp)
// and their Tessera ops (ConvGradInput, ConvGradWeight, MaxPoolGrad, AveragePoolGrad), plus
// float32 / multi-threaded runs of the same cases against float64.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tests/unit/grad_check.h"
#include "tests/unit/one_node_test_util.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {

Attribute ints(const char* name, std::vector<int64_t> v) { return Attribute::make_ints(name, std::move(v)); }
Attribute int1(const char* name, int64_t v) { return Attribute::make_int(name, v); }
Attribute str(const char* name, const char* v) { return Attribute::make_string(name, v); }

std::vector<Case> conv_cases() {
  return {
      {"Conv", "3x3 pads 1 + bias", {x(uniform({2, 3, 5, 5}, 1)), x(uniform({4, 3, 3, 3}, 2)), x(uniform({4}, 3))},
       {ints("pads", {1, 1, 1, 1})}},
      {"Conv", "stride 2, asymmetric pads", {x(uniform({1, 2, 6, 5}, 4)), x(uniform({3, 2, 3, 2}, 5))},
       {ints("strides", {2, 2}), ints("pads", {0, 1, 1, 0})}},
      {"Conv", "dilation 2", {x(uniform({1, 2, 7, 7}, 6)), x(uniform({2, 2, 3, 3}, 7))}, {ints("dilations", {2, 2})}},
      {"Conv", "group 2 + bias", {x(uniform({2, 4, 5, 5}, 8)), x(uniform({6, 2, 3, 3}, 9)), x(uniform({6}, 10))},
       {int1("group", 2), ints("pads", {1, 0, 0, 1})}},
      {"Conv", "depthwise stride 2", {x(uniform({1, 3, 6, 6}, 11)), x(uniform({3, 1, 3, 3}, 12))},
       {int1("group", 3), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}},
      // The direct depthwise path (one channel per group): odd sizes, dilation, asymmetric pads,
      // stride 3 with uncovered inputs, 1-D and 3-D, and a 1x1 window.
      {"Conv", "depthwise 3x3 dilation 2 asymmetric pads + bias",
       {x(uniform({2, 5, 9, 7}, 100)), x(uniform({5, 1, 3, 3}, 101)), x(uniform({5}, 102))},
       {int1("group", 5), ints("dilations", {2, 2}), ints("pads", {2, 1, 0, 3})}},
      {"Conv", "depthwise 3x2 stride 3", {x(uniform({1, 4, 11, 10}, 103)), x(uniform({4, 1, 3, 2}, 104))},
       {int1("group", 4), ints("strides", {3, 3})}},
      {"Conv", "depthwise 1-D stride 2 pads 1", {x(uniform({3, 3, 13}, 105)), x(uniform({3, 1, 5}, 106))},
       {int1("group", 3), ints("strides", {2}), ints("pads", {1, 2})}},
      {"Conv", "depthwise 3-D", {x(uniform({1, 2, 4, 5, 3}, 107)), x(uniform({2, 1, 2, 3, 2}, 108))},
       {int1("group", 2), ints("pads", {1, 0, 1, 0, 1, 1})}},
      {"Conv", "depthwise 1x1", {x(uniform({2, 3, 3, 4}, 109)), x(uniform({3, 1, 1, 1}, 110))}, {int1("group", 3)}},
      {"Conv", "1-D stride 2 pads 1", {x(uniform({2, 3, 8}, 13)), x(uniform({4, 3, 3}, 14)), x(uniform({4}, 15))},
       {ints("strides", {2}), ints("pads", {1, 1})}},
      {"Conv", "auto_pad SAME_UPPER stride 2", {x(uniform({1, 2, 5, 5}, 16)), x(uniform({2, 2, 3, 3}, 17))},
       {str("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}},
      {"Conv", "auto_pad SAME_LOWER even kernel", {x(uniform({1, 1, 5, 6}, 18)), x(uniform({2, 1, 2, 2}, 19))},
       {str("auto_pad", "SAME_LOWER")}},
      {"Conv", "pointwise 1x1", {x(uniform({2, 3, 4, 4}, 20)), x(uniform({5, 3, 1, 1}, 21))}},
      {"Conv", "pointwise group 2", {x(uniform({1, 4, 3, 3}, 22)), x(uniform({4, 2, 1, 1}, 23))}, {int1("group", 2)}},
      {"Conv", "stride 3 leaves inputs uncovered", {x(uniform({1, 1, 7, 7}, 24)), x(uniform({1, 1, 2, 2}, 25))},
       {ints("strides", {3, 3}), str("auto_pad", "VALID")}},
      {"Conv", "3-D", {x(uniform({1, 2, 4, 4, 3}, 26)), x(uniform({2, 2, 2, 2, 2}, 27))}, {ints("pads", {1, 0, 0, 0, 1, 1})}},
      {"Conv", "only W and B differentiated",
       {fixed(uniform({2, 1, 6, 6}, 28)), x(uniform({3, 1, 5, 5}, 29)), x(uniform({3}, 30))}},
  };
}

std::vector<Case> conv_transpose_cases() {
  return {
      {"ConvTranspose", "stride 2 pads 1 output_padding 1 + bias",
       {x(uniform({1, 2, 3, 3}, 31)), x(uniform({2, 3, 3, 3}, 32)), x(uniform({3}, 33))},
       {ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}), ints("output_padding", {1, 1})}},
      {"ConvTranspose", "group 2", {x(uniform({1, 4, 3, 3}, 34)), x(uniform({4, 1, 2, 2}, 35))}, {int1("group", 2)}},
      {"ConvTranspose", "1-D stride 2", {x(uniform({2, 2, 4}, 36)), x(uniform({2, 3, 3}, 37))}, {ints("strides", {2})}},
      {"ConvTranspose", "dilation 2, asymmetric pads", {x(uniform({1, 1, 3, 3}, 38)), x(uniform({1, 2, 2, 2}, 39))},
       {ints("dilations", {2, 2}), ints("pads", {1, 0, 0, 1})}},
      {"ConvTranspose", "auto_pad SAME_UPPER stride 2", {x(uniform({1, 1, 3, 3}, 40)), x(uniform({1, 1, 3, 3}, 41))},
       {str("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}},
  };
}

std::vector<Case> pool_cases() {
  const auto k2 = ints("kernel_shape", {2, 2});
  const auto k3 = ints("kernel_shape", {3, 3});
  return {
      {"MaxPool", "2x2 stride 2", {x(uniform({2, 2, 4, 4}, 50))}, {k2, ints("strides", {2, 2})}},
      {"MaxPool", "3x3 stride 1 pads 1 (overlapping)", {x(uniform({1, 1, 5, 5}, 51))}, {k3, ints("pads", {1, 1, 1, 1})}},
      {"MaxPool", "3x3 stride 2 ceil_mode", {x(uniform({1, 2, 6, 6}, 52))},
       {k3, ints("strides", {2, 2}), int1("ceil_mode", 1)}},
      {"MaxPool", "dilation 2", {x(uniform({1, 1, 7, 7}, 53))}, {k2, ints("dilations", {2, 2})}},
      {"MaxPool", "1-D stride 2 asymmetric pads", {x(uniform({2, 2, 9}, 54))},
       {ints("kernel_shape", {3}), ints("strides", {2}), ints("pads", {1, 0})}},
      {"MaxPool", "with Indices output", {x(uniform({1, 2, 4, 4}, 55))}, {k2, ints("strides", {2, 2})}, 2},
      {"MaxPool", "auto_pad SAME_UPPER", {x(uniform({1, 1, 5, 5}, 56))},
       {k2, ints("strides", {2, 2}), str("auto_pad", "SAME_UPPER")}},
      {"MaxPool", "3-D", {x(uniform({1, 1, 4, 4, 4}, 57))}, {ints("kernel_shape", {2, 2, 2}), ints("strides", {2, 1, 2})}},
      {"AveragePool", "3x3 stride 2 pads 1, pads not counted", {x(uniform({1, 2, 5, 5}, 60))},
       {k3, ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}},
      {"AveragePool", "3x3 stride 2 pads 1, pads counted", {x(uniform({1, 2, 5, 5}, 61))},
       {k3, ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}), int1("count_include_pad", 1)}},
      {"AveragePool", "ceil_mode, pads counted (overhang not)", {x(uniform({1, 1, 6, 6}, 62))},
       {k3, ints("strides", {2, 2}), ints("pads", {1, 1, 0, 0}), int1("ceil_mode", 1), int1("count_include_pad", 1)}},
      {"AveragePool", "ceil_mode, pads not counted", {x(uniform({1, 1, 6, 7}, 63))},
       {k2, ints("strides", {2, 3}), int1("ceil_mode", 1)}},
      {"AveragePool", "1-D dilation 2", {x(uniform({2, 2, 9}, 64))},
       {ints("kernel_shape", {3}), ints("dilations", {2}), ints("pads", {2, 1})}},
      {"AveragePool", "2x2 stride 2", {x(uniform({2, 3, 4, 4}, 65))}, {k2, ints("strides", {2, 2})}},
      {"AveragePool", "3-D", {x(uniform({1, 1, 4, 3, 4}, 66))}, {ints("kernel_shape", {2, 2, 2})}},
      {"GlobalAveragePool", "2-D", {x(uniform({2, 3, 4, 4}, 70))}},
      {"GlobalAveragePool", "1-D", {x(uniform({2, 3, 5}, 71))}},
      {"GlobalMaxPool", "2-D", {x(uniform({2, 3, 4, 4}, 72))}},
      {"GlobalMaxPool", "1-D", {x(uniform({2, 3, 5}, 73))}},
      // At a two-way tie the central difference is 1/2 for each maximum: the even split.
      {"GlobalMaxPool", "two tied maxima share the gradient",
       {x(Tensor::from<double>({1, 2, 4}, {0.1, 0.9, -0.3, 0.9, 0.5, 0.2, 0.4, -0.1}))}},
  };
}

}  // namespace

TSR_GRAD_CASES(nn) {
  std::vector<Case> all = conv_cases();
  for (auto* more : {conv_transpose_cases, pool_cases})
    for (Case& c : more()) all.push_back(std::move(c));
  return all;
}

TEST_CASE("conv and pool gradients in float32 on 3 threads match float64", "[grad]") {
  std::vector<Case> all = conv_cases();
  for (auto* more : {conv_transpose_cases, pool_cases})
    for (Case& c : more()) all.push_back(std::move(c));
  // LeNet-sized: the batch split over threads with per-thread weight-gradient partial sums.
  all.push_back({"Conv", "LeNet conv2 batch 5",
                 {x(uniform({5, 6, 12, 12}, 80)), x(uniform({16, 6, 5, 5}, 81)), x(uniform({16}, 82))}});
  // The direct f32 weight gradient (conv_small.h: stride 1, <= 16 output channels):
  // LeNet's conv1 (1 channel, 28 wide: runs of whole vectors), a 3x2 window with asymmetric pads
  // and 5 output channels (4 + 1 and 2 + 2 + 1 blocks), 7 taps of a 1x7 window.
  all.push_back({"Conv", "LeNet conv1 batch 3 pads 2",
                 {x(uniform({3, 1, 28, 28}, 85)), x(uniform({6, 1, 5, 5}, 86)), x(uniform({6}, 87))},
                 {ints("pads", {2, 2, 2, 2})}});
  all.push_back({"Conv", "3x2 window, pads 0,1,2,0, 5 outputs",
                 {x(uniform({2, 3, 7, 9}, 88)), x(uniform({5, 3, 3, 2}, 89))}, {ints("pads", {0, 1, 2, 0})}});
  all.push_back({"Conv", "1x7 window, 16 outputs", {x(uniform({2, 2, 3, 11}, 90)), x(uniform({16, 2, 1, 7}, 91))}});
  // Pointwise on small planes: several images' dY side by side in one GEMM for dX.
  all.push_back({"Conv", "1x1 on 2x3 planes, batch 5", {x(uniform({5, 7, 2, 3}, 92)), x(uniform({9, 7, 1, 1}, 93))}});
  all.push_back({"Conv", "grouped 1x1 on 2x2 planes, batch 4", {x(uniform({4, 6, 2, 2}, 94)), x(uniform({6, 3, 1, 1}, 95))},
                 {int1("group", 2)}});
  all.push_back({"Conv", "MobileNet depthwise batch 6 stride 2",
                 {x(uniform({6, 8, 17, 17}, 111)), x(uniform({8, 1, 3, 3}, 112))},
                 {int1("group", 8), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}});
  // The f32 polyphase depthwise kernels (depthwise_grad.h) against the f64 direct loops: planes
  // longer than a block of vectors, 7 channels over 3 threads, TF-style pads, 5x5 stride 2, stride
  // 2 with dilation 2 (every tap in phase 0), a 2x1 output.
  all.push_back({"Conv", "depthwise 3x3 33x35 pads 1", {x(uniform({2, 7, 33, 35}, 113)), x(uniform({7, 1, 3, 3}, 114))},
                 {int1("group", 7), ints("pads", {1, 1, 1, 1})}});
  all.push_back({"Conv", "depthwise 3x3 stride 2 pads 0,0,1,1", {x(uniform({3, 7, 16, 14}, 115)), x(uniform({7, 1, 3, 3}, 116))},
                 {int1("group", 7), ints("strides", {2, 2}), ints("pads", {0, 0, 1, 1})}});
  all.push_back({"Conv", "depthwise 5x5 stride 2 pads 2", {x(uniform({2, 5, 19, 12}, 117)), x(uniform({5, 1, 5, 5}, 118))},
                 {int1("group", 5), ints("strides", {2, 2}), ints("pads", {2, 2, 2, 2})}});
  all.push_back({"Conv", "depthwise 3x3 stride 2 dilation 2", {x(uniform({1, 3, 11, 9}, 119)), x(uniform({3, 1, 3, 3}, 120))},
                 {int1("group", 3), ints("strides", {2, 2}), ints("dilations", {2, 2}), ints("pads", {1, 2, 2, 1})}});
  all.push_back({"Conv", "depthwise 3x3 stride 2 to 2x1", {x(uniform({4, 6, 3, 2}, 121)), x(uniform({6, 1, 3, 3}, 122))},
                 {int1("group", 6), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}});
  // Small planes (MobileNetV2's late layers): ConvGradInput's groups of 4 planes (35 and 27
  // planes: full groups and a short last one per thread), stride-2 rows of 16, 13 and 8 in
  // narrowing vectors (split and merge).
  all.push_back({"Conv", "depthwise 3x3 4x4 batch 5", {x(uniform({5, 7, 4, 4}, 123)), x(uniform({7, 1, 3, 3}, 124))},
                 {int1("group", 7), ints("pads", {1, 1, 1, 1})}});
  all.push_back({"Conv", "depthwise 3x3 2x2 batch 3", {x(uniform({3, 9, 2, 2}, 125)), x(uniform({9, 1, 3, 3}, 126))},
                 {int1("group", 9), ints("pads", {1, 1, 1, 1})}});
  all.push_back({"Conv", "depthwise 3x3 stride 2 rows of 16", {x(uniform({2, 5, 9, 16}, 127)), x(uniform({5, 1, 3, 3}, 128))},
                 {int1("group", 5), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}});
  all.push_back({"Conv", "depthwise 3x3 stride 2 rows of 13", {x(uniform({2, 5, 6, 13}, 131)), x(uniform({5, 1, 3, 3}, 132))},
                 {int1("group", 5), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}});
  all.push_back({"Conv", "depthwise 3x3 stride 2 rows of 8", {x(uniform({3, 6, 8, 8}, 129)), x(uniform({6, 1, 3, 3}, 130))},
                 {int1("group", 6), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}});
  all.push_back({"Conv", "batch 1 (threads inside the GEMMs)",
                 {x(uniform({1, 4, 9, 9}, 83)), x(uniform({8, 4, 3, 3}, 84))}, {ints("pads", {1, 1, 1, 1})}});
  for (const Case& c : all) {
    if (c.op == "GlobalMaxPool" && c.label.find("tied") != std::string::npos) continue;  // f32 rounding may untie
    INFO(c.op << " " << c.label);
    CHECK(check_f32(c, 3) == "");
  }
}

TEST_CASE("ConvTranspose gradient rejects output padding no Conv window covers", "[grad]") {
  // stride 1, dilation 2, output_padding 1: the last output column feeds no input.
  const Case c{"ConvTranspose", "", {x(uniform({1, 1, 3}, 90)), x(uniform({1, 1, 2}, 91))},
               {ints("dilations", {2}), ints("output_padding", {1})}};
  CHECK(check(c).find("not supported") != std::string::npos);
}

// MaxPoolGrad for 2x2 windows of stride 2 (LeNet's pools) writes dX once, vectors of windows
// then single ones: against the argmax rule (the first tap seeds it, only a strictly greater
// value replaces it) on a plane 45 wide (22 windows: vectors and a tail) and 9 high (an
// uncovered last row and column), with ties, NaN and -inf, in f32 and f64.
TEST_CASE("MaxPoolGrad 2x2 stride 2 matches the argmax rule (ties, NaN, uncovered row and column)", "[grad]") {
  const int64_t n = 2, c = 3, h = 9, w = 45, oh = h / 2, ow = w / 2;
  std::vector<double> xv(static_cast<size_t>(n * c * h * w)), gv(static_cast<size_t>(n * c * oh * ow));
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = double((i * 7919) % 13) - 6;  // many ties
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  xv[0] = nan;         // NaN as the first tap: it stays the argmax
  xv[3] = nan;         // NaN as a later tap: ignored
  xv[2 * w + 4] = inf;
  xv[4 * w + 6] = -inf, xv[4 * w + 7] = -inf, xv[5 * w + 6] = -inf, xv[5 * w + 7] = -inf;  // all -inf: the first
  for (size_t i = 0; i < gv.size(); ++i) gv[i] = 0.25 * double(i % 17) + 1;
  std::vector<double> want(xv.size(), 0.0);
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t best = p * h * w + 2 * i * w + 2 * j;
        for (int64_t t : {int64_t{1}, w, w + 1}) {
          const int64_t at = p * h * w + 2 * i * w + 2 * j + t;
          if (xv[static_cast<size_t>(at)] > xv[static_cast<size_t>(best)]) best = at;
        }
        want[static_cast<size_t>(best)] += gv[static_cast<size_t>((p * oh + i) * ow + j)];
      }
  const std::vector<Attribute> attrs = {ints("kernel_shape", {2, 2}), ints("strides", {2, 2})};
  const Tensor d64 = test::run_ok("MaxPoolGrad", {Tensor::from<double>({n, c, h, w}, xv),
                                                  Tensor::from<double>({n, c, oh, ow}, gv)}, attrs);
  std::vector<float> xf(xv.begin(), xv.end()), gf(gv.begin(), gv.end());
  const Tensor d32 = test::run_ok("MaxPoolGrad", {Tensor::from<float>({n, c, h, w}, xf),
                                                  Tensor::from<float>({n, c, oh, ow}, gf)}, attrs);
  int64_t wrong = 0;
  for (size_t i = 0; i < want.size(); ++i)
    wrong += d64.data<double>()[i] != want[i] || d32.data<float>()[i] != static_cast<float>(want[i]);
  CHECK(wrong == 0);
  CHECK(d32.data<float>()[0] == static_cast<float>(gv[0]));  // the NaN first tap took dY
}
