// Finite-difference cases for the reduction gradient rules (core/ops/grads/reduce.cpp).
#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

TSR_GRAD_CASES(reduce) {
  const Tensor axes1 = Tensor::from<int64_t>({1}, {1});
  return {
      {"ReduceSum", "all axes, keepdims=0", {x(uniform({2, 3}, 1))}, {Attribute::make_int("keepdims", 0)}},
      {"ReduceSum", "axes=[1] keepdims=1", {x(uniform({2, 3, 2}, 2)), cst(axes1)}},
      {"ReduceSum", "axes=[1] keepdims=0", {x(uniform({2, 3, 2}, 3)), cst(axes1)}, {Attribute::make_int("keepdims", 0)}},
      {"ReduceMean", "axes=[-1] keepdims=0", {x(uniform({2, 3}, 4))},
       {Attribute::make_ints("axes", {-1}), Attribute::make_int("keepdims", 0)}},
      {"ReduceMean", "all axes", {x(uniform({2, 3}, 5))}},
  };
}
