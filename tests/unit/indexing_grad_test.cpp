// Finite-difference cases for the gather gradient rules (core/ops/grads/indexing.cpp).
#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {
Tensor i64(Shape s, std::vector<int64_t> v) { return Tensor::from<int64_t>(std::move(s), v); }
}  // namespace

TSR_GRAD_CASES(indexing) {
  const auto axis = [](int64_t a) { return Attribute::make_int("axis", a); };
  std::vector<float> f(12);
  const Tensor u = uniform({4, 3}, 30);
  for (int64_t i = 0; i < 12; ++i) f[static_cast<size_t>(i)] = static_cast<float>(u.scalar_f64(i));
  Case gather_f32{"Gather", "f32, repeated", {x(Tensor::from<float>({4, 3}, f)), cst(i64({3}, {1, 1, -4}))}};
  gather_f32.atol = 1e-3, gather_f32.rtol = 1e-3, gather_f32.step = 1e-2;
  return {
      {"Gather", "axis 0, repeated and negative indices", {x(uniform({3, 4}, 1)), cst(i64({4}, {0, 2, 0, -1}))}},
      {"Gather", "axis 1, 2-D indices", {x(uniform({2, 3, 2}, 2)), cst(i64({2, 2}, {1, 1, 0, -3}))}, {axis(1)}},
      {"Gather", "axis -1, scalar index", {x(uniform({2, 3}, 3)), cst(i64({}, {-2}))}, {axis(-1)}},
      {"Gather", "i32 indices", {x(uniform({5}, 4)), cst(Tensor::from<int32_t>({3}, {4, 4, 0}))}},
      gather_f32,
      {"GatherGrad", "adjoint is Gather", {x(uniform({2, 3}, 5)), cst(i64({3}, {1, -1, 1})), cst(i64({2}, {2, 2}))},
       {axis(1)}},
      {"GatherElements", "axis 0, repeated", {x(uniform({3, 2}, 6)), cst(i64({2, 2}, {0, 2, 0, 2}))}},
      {"GatherElements", "axis -1, negative, smaller than data", {x(uniform({2, 4}, 7)), cst(i64({2, 3}, {-1, 0, -1, 3, 3, 1}))},
       {axis(-1)}},
      {"GatherND", "element tuples, repeated", {x(uniform({2, 3}, 8)), cst(i64({3, 2}, {0, 1, 0, 1, 1, -1}))}},
      {"GatherND", "slices", {x(uniform({2, 3, 2}, 9)), cst(i64({3, 1}, {1, 0, 1}))}},
  };
}
