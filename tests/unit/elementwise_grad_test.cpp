// Finite-difference cases for the elementwise gradient rules (core/ops/grads/elementwise.cpp).
#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;

TSR_GRAD_CASES(elementwise) {
  return {
      {"Add", "broadcast [2,3] + [3]", {x(uniform({2, 3}, 1)), x(uniform({3}, 2))}},
      {"Add", "broadcast [2,1] + [1,3]", {x(uniform({2, 1}, 3)), x(uniform({1, 3}, 4))}},
      {"Sub", "broadcast [3] - [2,3]", {x(uniform({3}, 5)), x(uniform({2, 3}, 6))}},
      {"Mul", "broadcast [2,3] * []", {x(uniform({2, 3}, 7)), x(uniform({}, 8))}},
      {"Div", "same shape", {x(uniform({2, 3}, 9)), x(uniform({2, 3}, 10, 0.5, 2.0))}},
      {"Div", "broadcast [2,3] / [2,1]", {x(uniform({2, 3}, 11)), x(uniform({2, 1}, 12, 0.5, 2.0))}},
      {"Neg", "", {x(uniform({4}, 13))}},
      {"Identity", "", {x(uniform({2, 2}, 14))}},
  };
}
