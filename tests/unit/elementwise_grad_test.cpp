// Finite-difference cases for the elementwise gradient rules (core/ops/grads/elementwise.cpp),
// and the tie rule of variadic Max/Min (not a finite-difference property).
#include "tests/unit/grad_check.h"

#include <catch2/catch.hpp>

#include <memory>

#include "tessera/session.h"
#include "core/ops/graph_builder.h"
#include "core/passes/autodiff.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

TSR_GRAD_CASES(elementwise) {
  const auto to = [](DType d) { return Attribute::make_int("to", static_cast<int64_t>(d)); };
  // Distinct values (no ties) for Max/Min.
  const Tensor mx_a = Tensor::from<double>({2, 3}, {0.1, -0.7, 0.9, 0.4, -0.2, 0.6});
  const Tensor mx_b = Tensor::from<double>({3}, {0.3, -0.5, 0.2});
  const Tensor mx_c = Tensor::from<double>({2, 1}, {-0.35, 0.5});
  const Tensor cond = Tensor::from<bool>({2, 3}, {true, false, true, false, false, true});
  return {
      {"Pow", "same shape", {x(uniform({2, 3}, 20, 0.5, 2.0)), x(uniform({2, 3}, 21, -1.5, 2.0))}},
      {"Pow", "broadcast [2,3] ^ [3]", {x(uniform({2, 3}, 22, 0.5, 2.0)), x(uniform({3}, 23, -1.0, 2.5))}},
      {"Pow", "negative base, constant exponent 2", {x(uniform({2, 3}, 24)), cst(Tensor::from<double>({}, {2.0}))}},
      {"Pow", "int64 exponent 3", {x(uniform({4}, 25)), fixed(Tensor::from<int64_t>({}, {3}))}},
      {"Max", "one input", {x(mx_a)}},
      {"Max", "broadcast [2,3], [3]", {x(mx_a), x(mx_b)}},
      {"Max", "three inputs [2,3], [3], [2,1]", {x(mx_a), x(mx_b), x(mx_c)}},
      {"Min", "broadcast [3], [2,3]", {x(mx_b), x(mx_a)}},
      {"Min", "three inputs [2,1], [2,3], [3]", {x(mx_c), x(mx_a), x(mx_b)}},
      {"Sum", "one input", {x(uniform({2, 3}, 26))}},
      {"Sum", "three inputs broadcast", {x(uniform({2, 3}, 27)), x(uniform({3}, 28)), x(uniform({2, 1}, 29))}},
      {"Mean", "two inputs", {x(uniform({2, 3}, 30)), x(uniform({2, 3}, 31))}},
      {"Mean", "three inputs broadcast", {x(uniform({3}, 32)), x(uniform({2, 3}, 33)), x(uniform({}, 34))}},
      {"Where", "X, Y broadcast [2,3] / [3]", {fixed(cond), x(uniform({2, 3}, 35)), x(uniform({3}, 36))}},
      {"Where", "condition [3] broadcast, X [2,1]",
       {fixed(Tensor::from<bool>({3}, {false, true, true})), x(uniform({2, 1}, 37)), x(uniform({2, 3}, 38))}},
      {"Cast", "f64 -> f64", {x(uniform({2, 3}, 39))}, {to(DType::kF64)}},
      // The loss is computed in f32 after the cast: a larger step keeps rounding small.
      {"Cast", "f64 -> f32", {x(uniform({2, 3}, 40))}, {to(DType::kF32)}, 1, 1e-4, 1e-4, 1e-2},
      {"Cast", "f32 -> f64", {x(as_f32(uniform({2, 3}, 41)))}, {to(DType::kF64)}, 1, 1e-4, 1e-4, 1e-2},
      {"CastLike", "f64 like f32", {x(uniform({2, 3}, 42)), fixed(as_f32(uniform({1}, 43)))}, {}, 1, 1e-4, 1e-4, 1e-2},

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

namespace {

// d(sum(op(A, B))) / dA and dB with A == B everywhere: the tie rule of the variadic extrema.
std::vector<Tensor> tie_gradients(const std::string& op) {
  ir::Model m;
  ops::GraphBuilder b(m);
  const ops::Value a = b.input("a", DType::kF64, {3}), c = b.input("b", DType::kF64, {3});
  b.output(b.op("ReduceSum", {b.op(op, {a, c})}, {Attribute::make_int("keepdims", 0)}), "loss");
  REQUIRE(b.status().ok());
  auto gm = passes::gradient_model(std::move(m), {"loss", {"a", "b"}});
  REQUIRE(gm.ok());
  auto s = Session::create(std::make_shared<ir::Model>(std::move(gm).value()));
  REQUIRE(s.ok());
  const Tensor v = Tensor::from<double>({3}, {0.5, -1, 2});
  auto out = (*s)->run({v, v});
  REQUIRE(out.ok());
  return {(*out)[1], (*out)[2]};
}

}  // namespace

TEST_CASE("variadic Max/Min send the gradient of a tie to the first input only", "[grad]") {
  for (const char* op : {"Max", "Min"}) {
    INFO(op);
    const std::vector<Tensor> g = tie_gradients(op);
    for (int64_t i = 0; i < 3; ++i) {
      CHECK(g[0].scalar_f64(i) == 1.0);
      CHECK(g[1].scalar_f64(i) == 0.0);
    }
  }
}
