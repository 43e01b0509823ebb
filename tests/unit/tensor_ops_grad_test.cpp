// Finite-difference cases for the data-movement gradient rules (core/ops/grads/tensor_ops.cpp),
// and the rules' dynamic-shape paths on models with -1 dims.
#include "tests/unit/grad_check.h"

#include <catch2/catch.hpp>

#include <limits>

#include "core/ops/graph_builder.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {
Tensor i64(std::vector<int64_t> v) { return Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v); }
Tensor i64s(int64_t v) { return Tensor::from<int64_t>({}, {v}); }
Tensor f32(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<float>(t.scalar_f64(i)));
  return Tensor::from<float>(t.shape(), v);
}
constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
}  // namespace

TSR_GRAD_CASES(tensor_ops) {
  const auto axis = [](int64_t a) { return Attribute::make_int("axis", a); };
  Case slice_f32{"Slice", "f32, step 2", {x(f32(uniform({4, 5}, 40))), cst(i64({0, 1})), cst(i64({kMax, 5})),
                                          cst(i64({0, 1})), cst(i64({2, 2}))}};
  slice_f32.atol = 1e-3, slice_f32.rtol = 1e-3, slice_f32.step = 1e-2;
  Case pad_f32{"Pad", "f32", {x(f32(uniform({2, 3}, 41))), cst(i64({1, 0, 0, 2}))}};
  pad_f32.atol = 1e-3, pad_f32.rtol = 1e-3, pad_f32.step = 1e-2;
  return {
      {"Concat", "axis 0, three inputs", {x(uniform({2, 3}, 1)), x(uniform({1, 3}, 2)), x(uniform({3, 3}, 3))}, {axis(0)}},
      {"Concat", "middle axis", {x(uniform({2, 1, 3}, 4)), x(uniform({2, 2, 3}, 5))}, {axis(1)}},
      {"Concat", "axis -1, one input not differentiated", {x(uniform({2, 2}, 6)), fixed(uniform({2, 3}, 7))}, {axis(-1)}},
      {"Split", "uneven split input [1,3,2]", {x(uniform({2, 6}, 8)), cst(i64({1, 3, 2}))}, {axis(1)}, 3},
      {"Split", "equal parts, axis -1", {x(uniform({2, 2, 4}, 9))}, {axis(-1)}, 2},
      {"Split", "num_outputs=3 of 7 (3,3,1)", {x(uniform({7, 2}, 10))}, {axis(0), Attribute::make_int("num_outputs", 3)}, 3},
      {"Slice", "step 1, one axis", {x(uniform({3, 4}, 11)), cst(i64({1})), cst(i64({3})), cst(i64({1}))}},
      {"Slice", "negative step, out-of-range end", {x(uniform({5}, 12)), cst(i64({-1})), cst(i64({-100})), cst(i64({0})),
                                                     cst(i64({-1}))}},
      {"Slice", "step -2 from a clamped start", {x(uniform({3, 7}, 13)), cst(i64({100})), cst(i64({kMin})), cst(i64({-1})),
                                                  cst(i64({-2}))}},
      {"Slice", "two axes, negative axis, step 3", {x(uniform({4, 3, 8}, 14)), cst(i64({1, -7})), cst(i64({kMax, 8})),
                                                     cst(i64({0, -1})), cst(i64({1, 3}))}},
      {"Slice", "empty slice", {x(uniform({3, 2}, 15)), cst(i64({2})), cst(i64({1})), cst(i64({0}))}},
      slice_f32,
      {"SliceGrad", "adjoint of step -2", {x(uniform({3, 3}, 16)), cst(i64({3, 5})), cst(i64({-1})), cst(i64({kMin})),
                                           cst(i64({1})), cst(i64({-2}))}},
      {"Pad", "constant, positive pads", {x(uniform({2, 3}, 17)), cst(i64({1, 0, 2, 1}))}},
      {"Pad", "constant, crop and pad", {x(uniform({3, 4}, 18)), cst(i64({-1, 2, 1, -2}))}},
      {"Pad", "constant value differentiated", {x(uniform({2, 2}, 19)), cst(i64({1, 1, 0, 1})), x(uniform({}, 20))}},
      pad_f32,
      {"Pad", "reflect", {x(uniform({3, 4}, 28)), cst(i64({2, 1, 1, 3}))}, {Attribute::make_string("mode", "reflect")}},
      {"Pad", "reflect, crop and pad", {x(uniform({2, 3, 4}, 29)), cst(i64({0, -1, 2, 0, 1, -1}))},
       {Attribute::make_string("mode", "reflect")}},
      {"Pad", "edge", {x(uniform({3, 2}, 30)), cst(i64({2, 0, 1, 3}))}, {Attribute::make_string("mode", "edge")}},
      {"Pad", "edge, size-1 axis", {x(uniform({1, 3}, 31)), cst(i64({2, 1, 0, 1}))}, {Attribute::make_string("mode", "edge")}},
      {"PadGrad", "adjoint is Pad reflect", {x(uniform({5, 7}, 32)), cst(i64({1, 2, 1, 2})), cst(i64({3, 3}))},
       {Attribute::make_string("mode", "reflect")}},
      {"CumSum", "axis 0", {x(uniform({3, 2}, 21)), cst(i64s(0))}},
      {"CumSum", "axis -1 exclusive", {x(uniform({2, 4}, 22)), cst(i64s(-1))}, {Attribute::make_int("exclusive", 1)}},
      {"CumSum", "reverse", {x(uniform({4, 2}, 23)), cst(i64s(0))}, {Attribute::make_int("reverse", 1)}},
      {"CumSum", "exclusive reverse", {x(uniform({2, 5}, 24)), cst(i64s(1))},
       {Attribute::make_int("exclusive", 1), Attribute::make_int("reverse", 1)}},
      {"Trilu", "upper", {x(uniform({3, 4}, 25))}},
      {"Trilu", "lower, k=1", {x(uniform({4, 3}, 26)), cst(i64s(1))}, {Attribute::make_int("upper", 0)}},
      {"Trilu", "batched upper, k=-1", {x(uniform({2, 3, 4}, 27)), cst(i64s(-1))}},
  };
}

namespace {

using ops::GraphBuilder;
using ops::Value;

// L = sum(Y * Y) over `ys`, as the model's only output.
void square_loss(GraphBuilder& b, const std::vector<Value>& ys) {
  Value loss;
  for (Value y : ys) {
    const Value t = b.op("ReduceSum", {b.op("Mul", {y, y})}, {Attribute::make_int("keepdims", 0)});
    loss = loss.valid() ? b.op("Add", {loss, t}) : t;
  }
  b.output(loss, "loss");
}

}  // namespace

TEST_CASE("shape-op gradients with dynamic dims and unused outputs", "[grad]") {
  SECTION("Concat along a dynamic axis") {
    ir::Model m;
    GraphBuilder b(m);
    const Value a = b.input("a", DType::kF64, {2, -1}), c = b.input("c", DType::kF64, {2, -1});
    square_loss(b, {b.op("Concat", {a, c}, {Attribute::make_int("axis", 1)})});
    REQUIRE(b.status().ok());
    CHECK(check_model(m, {uniform({2, 3}, 1), uniform({2, 1}, 2)}, {"a", "c"}) == "");
  }
  SECTION("Tile with repeats fed at run time, dynamic dims") {
    ir::Model m;
    GraphBuilder b(m);
    const Value a = b.input("a", DType::kF64, {-1, 3}), reps = b.input("reps", DType::kI64, {2});
    square_loss(b, {b.op("Tile", {a, reps})});
    REQUIRE(b.status().ok());
    CHECK(check_model(m, {uniform({2, 3}, 3), i64({3, 2})}, {"a"}) == "");
  }
  SECTION("Slice with starts fed at run time") {
    ir::Model m;
    GraphBuilder b(m);
    const Value a = b.input("a", DType::kF64, {-1, 4}), st = b.input("starts", DType::kI64, {1});
    square_loss(b, {b.op("Slice", {a, st, b.constant(i64({-100})), b.constant(i64({1})), b.constant(i64({-1}))})});
    REQUIRE(b.status().ok());
    CHECK(check_model(m, {uniform({2, 4}, 4), i64({2})}, {"a"}) == "");
  }
  SECTION("Split outputs without a gradient contribute zeros") {
    ir::Model m;
    GraphBuilder b(m);
    const Value a = b.input("a", DType::kF64, {-1, 5});
    const std::vector<Value> ys = b.op_n("Split", {a, b.constant(i64({2, 1, 2}))}, 3, {Attribute::make_int("axis", 1)});
    square_loss(b, {ys[0], ys[2]});
    REQUIRE(b.status().ok());
    CHECK(check_model(m, {uniform({3, 5}, 5)}, {"a"}) == "");
  }
  SECTION("DepthToSpace CRD and Pad with a dynamic batch") {
    ir::Model m;
    GraphBuilder b(m);
    const Value a = b.input("a", DType::kF64, {-1, 4, -1, -1});
    const Value d = b.op("DepthToSpace", {a}, {Attribute::make_int("blocksize", 2), Attribute::make_string("mode", "CRD")});
    square_loss(b, {b.op("Pad", {d, b.constant(i64({0, 0, 1, -1, 0, 0, 2, 1}))})});
    REQUIRE(b.status().ok());
    CHECK(check_model(m, {uniform({2, 4, 2, 3}, 6)}, {"a"}) == "");
  }
}
