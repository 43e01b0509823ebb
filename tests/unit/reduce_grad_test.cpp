// Finite-difference cases for the reduction gradient rules (core/ops/grads/reduce.cpp). Ops
// with kinks (L1 at 0, Prod through 0) get inputs away from them.
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
      {"ReduceMax", "axes=[1] keepdims=0", {x(uniform({2, 3, 2}, 6))}, {Attribute::make_ints("axes", {1}), Attribute::make_int("keepdims", 0)}},
      {"ReduceMax", "all axes keepdims=1", {x(uniform({2, 3}, 7))}},
      // A tie: the central difference of max over two equal entries is 1/2 each, which is the
      // even split the rule uses.
      {"ReduceMax", "ties split evenly", {x(Tensor::from<double>({2, 3}, {0.2, 0.7, 0.7, -0.1, -0.4, -0.1}))}, {Attribute::make_ints("axes", {1})}},
      {"ReduceMax", "f32 axes input [1]", {x(as_f32(uniform({3, 5}, 8))), cst(axes1)}, {}, 1, 2e-3, 1e-2, 1e-2},
      {"ReduceMin", "axes=[0] keepdims=0", {x(uniform({3, 2}, 9))}, {Attribute::make_ints("axes", {0}), Attribute::make_int("keepdims", 0)}},
      {"ReduceMin", "ties split evenly", {x(Tensor::from<double>({3, 2}, {0.5, -0.3, 0.5, 0.9, 0.8, -0.3}))}, {Attribute::make_ints("axes", {0})}},
      {"ReduceProd", "axes=[1] keepdims=0, both signs", {x(away_from_zero({2, 3, 2}, 10, 0.3, 1.5)), cst(axes1)}, {Attribute::make_int("keepdims", 0)}},
      {"ReduceProd", "all axes", {x(away_from_zero({2, 3}, 11, 0.3, 1.5))}},
      {"ReduceSumSquare", "axes=[-1]", {x(uniform({2, 3}, 12))}, {Attribute::make_ints("axes", {-1})}},
      {"ReduceSumSquare", "all axes keepdims=0", {x(uniform({2, 3}, 13))}, {Attribute::make_int("keepdims", 0)}},
      {"ReduceL1", "axes=[1] keepdims=0", {x(away_from_zero({2, 3, 2}, 14)), cst(axes1)}, {Attribute::make_int("keepdims", 0)}},
      {"ReduceL1", "all axes", {x(away_from_zero({2, 3}, 15))}},
      {"ReduceL2", "axes=[1]", {x(uniform({2, 3, 2}, 16)), cst(axes1)}},
      {"ReduceL2", "all axes keepdims=0", {x(uniform({2, 3}, 17))}, {Attribute::make_int("keepdims", 0)}},
      {"ReduceLogSum", "axes=[1] keepdims=0", {x(uniform({2, 3}, 18, 0.2, 2.0))}, {Attribute::make_ints("axes", {1}), Attribute::make_int("keepdims", 0)}},
      {"ReduceLogSum", "all axes", {x(uniform({2, 3}, 19, 0.2, 2.0))}},
      {"ReduceLogSumExp", "axes=[1] keepdims=0", {x(uniform({2, 3, 2}, 20, -3, 3)), cst(axes1)}, {Attribute::make_int("keepdims", 0)}},
      {"ReduceLogSumExp", "all axes", {x(uniform({2, 3}, 21, -3, 3))}},
  };
}
