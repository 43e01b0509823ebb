// Finite-difference cases for the unary/activation gradient rules (core/ops/grads/
// elementwise_unary.cpp). Ops with kinks get inputs away from them (away_from_zero, or explicit
// values away from the corners); "f32" cases check the rule on the dtype training uses.
#include "tests/unit/grad_check.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {

Tensor vals(const Shape& s, std::vector<double> v) { return Tensor::from<double>(s, std::move(v)); }
Tensor scalar_f64(double v) { return Tensor::from<double>({}, {v}); }

// An f32 variant of a case: larger step (f32 rounding) and tolerances.
Case f32_case(std::string op, std::string label, Tensor v, std::vector<Attribute> attrs = {}) {
  return {std::move(op), "f32 " + label, {x(as_f32(v))}, std::move(attrs), 1, 2e-3, 1e-2, 1e-2};
}

}  // namespace

TSR_GRAD_CASES(elementwise_unary) {
  // HardSigmoid corners at alpha x + beta in {0, 1}; HardSwish corners at +-3.
  const Tensor hs_x = vals({2, 3}, {-4, -1, 0.3, 2, 3.5, -2});
  const Tensor hswish_x = vals({2, 4}, {-4, -2, -0.5, 0.7, 2.9, 5, 3.2, -3.3});
  // Away from integers and half-integers (Sign, Floor, Ceil, Round: zero gradient).
  const Tensor steps_x = vals({2, 3}, {-1.7, -0.3, 0.4, 1.2, 2.6, -2.2});
  const Tensor clip_x = vals({2, 4}, {-0.9, -0.45, -0.2, 0.1, 0.35, 0.55, 0.8, -0.6});
  return {
      {"Relu", "[2,3]", {x(away_from_zero({2, 3}, 1))}},
      f32_case("Relu", "[17]", away_from_zero({17}, 2)),
      {"LeakyRelu", "default alpha", {x(away_from_zero({2, 3}, 3))}},
      {"LeakyRelu", "alpha=0.3", {x(away_from_zero({3, 2}, 4))}, {Attribute::make_float("alpha", 0.3)}},
      {"Sigmoid", "", {x(uniform({2, 3}, 5, -4, 4))}},
      f32_case("Sigmoid", "[17]", uniform({17}, 6, -4, 4)),
      {"Tanh", "", {x(uniform({2, 3}, 7, -2, 2))}},
      f32_case("Tanh", "[17]", uniform({17}, 8, -2, 2)),
      {"HardSigmoid", "defaults (flat and sloped parts)", {x(hs_x)}},
      {"HardSigmoid", "alpha=0.5 beta=0.4", {x(hs_x)}, {Attribute::make_float("alpha", 0.5), Attribute::make_float("beta", 0.4)}},
      {"HardSwish", "both flat parts and the curve", {x(hswish_x)}},
      {"Exp", "", {x(uniform({2, 3}, 9, -2, 2))}},
      {"Log", "", {x(uniform({2, 3}, 10, 0.2, 3))}},
      {"Sqrt", "", {x(uniform({2, 3}, 11, 0.2, 3))}},
      {"Reciprocal", "both signs", {x(away_from_zero({2, 3}, 12, 0.4, 2))}},
      {"Abs", "both signs", {x(away_from_zero({2, 3}, 13))}},
      {"Erf", "", {x(uniform({2, 3}, 14, -2, 2))}},
      {"Elu", "default alpha", {x(away_from_zero({2, 3}, 15, 0.1, 2))}},
      {"Elu", "alpha=0.5", {x(away_from_zero({2, 3}, 16, 0.1, 2))}, {Attribute::make_float("alpha", 0.5)}},
      {"Softplus", "", {x(uniform({2, 3}, 17, -4, 4))}},
      f32_case("Softplus", "[9]", uniform({9}, 18, -4, 4)),
      {"Gelu", "approximate=none", {x(uniform({2, 4}, 19, -3, 3))}},
      {"Gelu", "approximate=tanh", {x(uniform({2, 4}, 20, -3, 3))}, {Attribute::make_string("approximate", "tanh")}},
      f32_case("Gelu", "none [17]", uniform({17}, 21, -3, 3)),
      f32_case("Gelu", "tanh [17]", uniform({17}, 22, -3, 3), {Attribute::make_string("approximate", "tanh")}),
      {"Clip", "min and max fixed", {x(clip_x), fixed(scalar_f64(-0.5)), fixed(scalar_f64(0.5))}},
      // ReLU6 as training runs it (f32, fixed bounds: the fused ClipGrad), odd length, both flat parts.
      {"Clip", "f32 ReLU6 [37] fixed bounds", {x(as_f32(uniform({37}, 23, -2, 8))), fixed(as_f32(scalar_f64(0))),
                                              fixed(as_f32(scalar_f64(6)))}, {}, 1, 2e-3, 1e-2, 1e-2},
      {"Clip", "min and max differentiated", {x(clip_x), x(scalar_f64(-0.5)), x(scalar_f64(0.5))}},
      {"Clip", "min only ([1])", {x(clip_x), x(Tensor::from<double>({1}, {-0.3}))}},
      {"Clip", "max only (min omitted)", {x(clip_x), omitted(), x(scalar_f64(0.3))}},
      {"Clip", "neither (identity)", {x(clip_x)}},
      {"Sign", "zero gradient", {x(steps_x)}},
      {"Floor", "zero gradient", {x(steps_x)}},
      {"Ceil", "zero gradient", {x(steps_x)}},
      {"Round", "zero gradient", {x(steps_x)}},
  };
}

// The float32 kernels behind these rules (vector paths, threads) agree with float64.
TEST_CASE("elementwise, unary, reduce and Dropout gradients in float32 on 3 threads match float64", "[grad]") {
  const std::set<std::string> mine = {"elementwise_unary", "elementwise", "reduce", "random"};
  for (const auto& fam : families()) {
    if (!mine.count(fam.name)) continue;
    for (const Case& c : fam.cases()) {
      INFO(fam.name << ": " << c.op << " " << c.label);
      CHECK(check_f32(c, 3) == "");
    }
  }
}
