// Finite-difference cases for the trigonometric, hyperbolic and remaining activation gradient
// rules (core/ops/grads/activation_math.cpp). Inputs stay inside each op's domain and away from
// its kinks.
#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

TSR_GRAD_CASES(activation_math) {
  return {
      {"Sin", "", {x(uniform({2, 3}, 301, -3, 3))}},
      {"Cos", "", {x(uniform({2, 3}, 302, -3, 3))}},
      {"Tan", "", {x(uniform({5}, 303, -1.2, 1.2))}},
      {"Asin", "", {x(uniform({5}, 304, -0.9, 0.9))}},
      {"Acos", "", {x(uniform({5}, 305, -0.9, 0.9))}},
      {"Atan", "", {x(uniform({5}, 306, -3, 3))}},
      {"Sinh", "", {x(uniform({5}, 307, -2, 2))}},
      {"Cosh", "", {x(uniform({5}, 308, -2, 2))}},
      {"Asinh", "", {x(uniform({5}, 309, -3, 3))}},
      {"Acosh", "x > 1", {x(uniform({5}, 310, 1.2, 4))}},
      {"Atanh", "", {x(uniform({5}, 311, -0.9, 0.9))}},
      {"Softsign", "", {x(away_from_zero({2, 3}, 312))}},
      {"Selu", "default alpha/gamma", {x(away_from_zero({2, 3}, 313, 0.1, 2))}},
      {"Selu", "alpha 2, gamma 1.5", {x(away_from_zero({2, 3}, 314, 0.1, 2))},
       {Attribute::make_float("alpha", 2.0), Attribute::make_float("gamma", 1.5)}},
      {"Celu", "alpha 1", {x(away_from_zero({2, 3}, 315, 0.1, 2))}},
      {"Celu", "alpha 0.5", {x(away_from_zero({2, 3}, 316, 0.1, 2))}, {Attribute::make_float("alpha", 0.5)}},
      {"ThresholdedRelu", "alpha 0.5", {x(away_from_zero({2, 4}, 317, 0.6, 2))}, {Attribute::make_float("alpha", 0.5)}},
      {"Mish", "", {x(uniform({2, 3}, 318, -3, 3))}},
      {"PRelu", "slope per channel [3, 1]", {x(away_from_zero({2, 3, 2}, 319)), x(uniform({3, 1}, 320, 0.1, 0.5))}},
      {"PRelu", "scalar-like slope [1]", {x(away_from_zero({4}, 321)), x(uniform({1}, 322, 0.1, 0.5))}},
  };
}
