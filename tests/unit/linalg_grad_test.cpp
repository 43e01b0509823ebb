// Finite-difference cases for the MatMul and Gemm gradient rules (core/ops/grads/linalg.cpp).
#include <catch2/catch.hpp>

#include "core/ops/graph_builder.h"
#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

TSR_GRAD_CASES(linalg) {
  const auto ta = Attribute::make_int("transA", 1);
  const auto tb = Attribute::make_int("transB", 1);
  return {
      {"MatMul", "2-D x 2-D", {x(uniform({3, 4}, 1)), x(uniform({4, 2}, 2))}},
      {"MatMul", "1-D x 2-D", {x(uniform({4}, 3)), x(uniform({4, 3}, 4))}},
      {"MatMul", "2-D x 1-D", {x(uniform({3, 4}, 5)), x(uniform({4}, 6))}},
      {"MatMul", "1-D x 1-D (dot)", {x(uniform({4}, 7)), x(uniform({4}, 8))}},
      {"MatMul", "batched x 2-D (shared B)", {x(uniform({2, 3, 4}, 9)), x(uniform({4, 2}, 10))}},
      {"MatMul", "2-D x batched (shared A)", {x(uniform({3, 4}, 11)), x(uniform({2, 4, 2}, 12))}},
      {"MatMul", "batch broadcast [2,1,3,4] x [3,4,2]", {x(uniform({2, 1, 3, 4}, 13)), x(uniform({3, 4, 2}, 14))}},
      {"MatMul", "1-D x batched", {x(uniform({4}, 15)), x(uniform({2, 4, 3}, 16))}},
      {"MatMul", "batched x 1-D", {x(uniform({2, 3, 4}, 17)), x(uniform({4}, 18))}},
      {"MatMul", "only B differentiated", {fixed(uniform({2, 3, 4}, 19)), x(uniform({2, 4, 2}, 20))}},
      {"Gemm", "C [M, N]", {x(uniform({3, 4}, 21)), x(uniform({4, 2}, 22)), x(uniform({3, 2}, 23))}},
      {"Gemm", "transA, C [N]", {x(uniform({4, 3}, 24)), x(uniform({4, 2}, 25)), x(uniform({2}, 26))}, {ta}},
      {"Gemm", "transB, scalar C, alpha 0.5, beta 2",
       {x(uniform({3, 4}, 27)), x(uniform({2, 4}, 28)), x(uniform({}, 29))},
       {tb, Attribute::make_float("alpha", 0.5), Attribute::make_float("beta", 2.0)}},
      {"Gemm", "transA transB, C [M, 1]", {x(uniform({4, 3}, 30)), x(uniform({2, 4}, 31)), x(uniform({3, 1}, 32))},
       {ta, tb}},
      {"Gemm", "no C, alpha -1.5", {x(uniform({3, 4}, 33)), x(uniform({4, 5}, 34))}, {Attribute::make_float("alpha", -1.5)}},
      {"Gemm", "C [1, N], beta 0", {x(uniform({3, 4}, 35)), x(uniform({4, 2}, 36)), x(uniform({1, 2}, 37))},
       {Attribute::make_float("beta", 0.0)}},
  };
}

namespace {
// loss = ReduceSum(MatMul(a, b) * w) with a and b declared without a rank (as a dynamic-rank
// export leaves them), so the rule cannot pick its case from the ranks when it builds the backward.
ir::Model rankless_matmul(const Shape& sa, const Shape& sb, const Tensor& w) {
  ir::Model m;
  ops::GraphBuilder g(m);
  ops::Value a = g.input("a", DType::kF64, sa);
  ops::Value b = g.input("b", DType::kF64, sb);
  ops::Value y = g.op("MatMul", {a, b});
  g.output(g.op("ReduceSum", {g.op("Mul", {y, g.constant(w, "w")})}, {Attribute::make_int("keepdims", 0)}));
  REQUIRE(g.status().ok());
  for (auto& t : m.graphs[0].tensors)
    if (!t.constant.defined()) {
      t.has_shape = false;
      t.shape.clear();
      t.dim_names.clear();
    }
  return m;
}
}  // namespace

TEST_CASE("MatMul gradient with ranks unknown until run time matches finite differences") {
  // Batched A with a shared B (batch broadcast), and a 2-D A with a batched B.
  ir::Model m1 = rankless_matmul({2, 3, 4}, {4, 5}, uniform({2, 3, 5}, 41));
  CHECK(check_model(m1, {uniform({2, 3, 4}, 42), uniform({4, 5}, 43)}, {"a", "b"}) == "");
  ir::Model m2 = rankless_matmul({3, 4}, {2, 4, 5}, uniform({2, 3, 5}, 44));
  CHECK(check_model(m2, {uniform({3, 4}, 45), uniform({2, 4, 5}, 46)}, {"a", "b"}) == "");
}
