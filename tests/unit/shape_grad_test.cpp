// Finite-difference cases for the shape-op gradient rules (core/ops/grads/shape.cpp).
#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {
Tensor i64(std::vector<int64_t> v) { return Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v); }
}  // namespace

TSR_GRAD_CASES(shape) {
  const Attribute b2 = Attribute::make_int("blocksize", 2);
  return {
      {"Reshape", "[2,3,4] -> [4,-1]", {x(uniform({2, 3, 4}, 1)), cst(i64({4, -1}))}},
      {"Reshape", "0 copies a dim", {x(uniform({2, 3, 4}, 2)), cst(i64({0, 12}))}},
      {"Flatten", "axis=2", {x(uniform({2, 3, 4}, 3))}, {Attribute::make_int("axis", 2)}},
      {"Flatten", "axis=-3 (0)", {x(uniform({2, 3, 4}, 4))}, {Attribute::make_int("axis", -3)}},
      {"Squeeze", "axes=[-1]", {x(uniform({2, 1, 3, 1}, 5)), cst(i64({-1}))}},
      {"Squeeze", "all size-1 dims", {x(uniform({2, 1, 3, 1}, 6))}},
      {"Unsqueeze", "axes=[0,-1]", {x(uniform({2, 3}, 7)), cst(i64({0, -1}))}},
      {"Expand", "[3,1] -> [2,3,4]", {x(uniform({3, 1}, 8)), cst(i64({2, 3, 4}))}},
      {"Expand", "[2,3] -> [1,3] (no-op broadcast)", {x(uniform({2, 3}, 9)), cst(i64({1, 3}))}},
      {"Tile", "[2,3] x [2,1]", {x(uniform({2, 3}, 10)), cst(i64({2, 1}))}},
      {"Tile", "[2,1,3] x [1,3,2]", {x(uniform({2, 1, 3}, 11)), cst(i64({1, 3, 2}))}},
      {"Tile", "all ones", {x(uniform({2, 3}, 12)), cst(i64({1, 1}))}},
      {"Transpose", "default (reverse)", {x(uniform({2, 3, 4}, 13))}},
      {"Transpose", "perm=[1,2,0]", {x(uniform({2, 3, 4}, 14))}, {Attribute::make_ints("perm", {1, 2, 0})}},
      {"Transpose", "perm=[0,3,1,2]", {x(uniform({2, 3, 2, 2}, 15))}, {Attribute::make_ints("perm", {0, 3, 1, 2})}},
      {"DepthToSpace", "DCR b=2", {x(uniform({2, 8, 2, 3}, 16))}, {b2}},
      {"DepthToSpace", "CRD b=2", {x(uniform({1, 8, 3, 2}, 17))}, {b2, Attribute::make_string("mode", "CRD")}},
      {"SpaceToDepth", "b=2", {x(uniform({2, 2, 4, 6}, 18))}, {b2}},
  };
}
