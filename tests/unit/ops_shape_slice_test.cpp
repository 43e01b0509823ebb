// Slice, Concat, Split, Pad, Trilu, ReverseSequence, CumSum (core/ops/families/tensor_ops.cpp)
// against numpy.
#include <limits>

#include "tests/unit/ops_shape_test_util.h"

using namespace tsr;
using namespace tsr::shape_test;

namespace {
Tensor x45() {  // np.arange(20).reshape(4, 5)
  std::vector<int64_t> v(20);
  for (int i = 0; i < 20; ++i) v[static_cast<size_t>(i)] = i;
  return i64({4, 5}, v);
}
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
}  // namespace

TEST_CASE("Slice with negative steps, clamping and omitted axes") {
  // x[1:1000, -1:-1000:-2] == x[1:, 4::-2]
  auto r = run_op("Slice", {}, {in(x45()), cst(i64v({1, -1})), cst(i64v({1000, -1000})), cst(i64v({0, 1})), cst(i64v({1, -2}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{3, 3});
  check_tensor<int64_t>(r.outputs[0], {3, 3}, {9, 7, 5, 14, 12, 10, 19, 17, 15});
  // x[:, -3:] with INT64_MAX as the end, axes given negatively.
  r = run_op("Slice", {}, {in(x45()), cst(i64v({-3})), cst(i64v({kMax})), cst(i64v({-1}))});
  REQUIRE(r.ok());
  check_tensor<int64_t>(r.outputs[0], {4, 3}, {2, 3, 4, 7, 8, 9, 12, 13, 14, 17, 18, 19});
  // x[::-1, ::-1] written the ONNX way: start -1, end INT64_MIN, step -1.
  r = run_op("Slice", {}, {in(x45()), cst(i64v({-1, -1})), cst(i64v({kMin, kMin})), none(), cst(i64v({-1, -1}))});
  REQUIRE(r.ok());
  check_tensor<int64_t>(r.outputs[0], {4, 5}, {19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  // x[3:1] is empty
  r = run_op("Slice", {}, {in(x45()), cst(i64v({3})), cst(i64v({1}))});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].shape() == Shape{0, 5});
  // Starts fed at run time: the sliced axis is unknown at load time.
  r = run_op("Slice", {}, {in(x45()), in(i64v({1})), cst(i64v({3})), cst(i64v({1}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{4, -1});
  check_tensor<int64_t>(r.outputs[0], {4, 2}, {1, 2, 6, 7, 11, 12, 16, 17});
  // A zero step is an error naming the node.
  r = run_op("Slice", {}, {in(x45()), cst(i64v({0})), cst(i64v({3})), cst(i64v({0})), cst(i64v({0}))});
  REQUIRE_FALSE(r.load.ok());
  CHECK(r.load.message().find("Slice \"n0\"") != std::string::npos);
  CHECK(r.load.message().find("steps[0] is 0") != std::string::npos);
}

TEST_CASE("Concat with a negative axis and an empty input, mismatches fail at load time") {
  // np.concatenate([[[1],[2]], np.arange(6).reshape(2,3)+10, np.zeros((2,0))], axis=-1)
  auto r = run_op("Concat", {Attribute::make_int("axis", -1)},
                  {in(f32({2, 1}, {1, 2})), in(f32({2, 3}, {10, 11, 12, 13, 14, 15})), in(f32({2, 0}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, 4});
  check_tensor<float>(r.outputs[0], {2, 4}, {1, 10, 11, 12, 2, 13, 14, 15});

  r = run_op("Concat", {Attribute::make_int("axis", 0)}, {in(f32({2, 3})), in(f32({3}))});
  REQUIRE_FALSE(r.load.ok());
  CHECK(r.load.message().find("Concat \"n0\"") != std::string::npos);
  CHECK(r.load.message().find("rank") != std::string::npos);
  r = run_op("Concat", {Attribute::make_int("axis", 0)}, {in(f32({2, 3})), in(f32({2, 4}))});
  REQUIRE_FALSE(r.load.ok());
  CHECK(r.load.message().find("differs in dim 1") != std::string::npos);
  // Dynamic dims: the axis dim is unknown at load time.
  r = run_op("Concat", {Attribute::make_int("axis", 0)}, {dyn(f32({1, 2})), in(f32({2, 2}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{-1, 2});
  check_tensor<float>(r.outputs[0], {3, 2}, {0, 1, 0, 1, 2, 3});
}

TEST_CASE("Split: equal parts and explicit sizes") {
  auto r = run_op("Split", {}, {in(f32({6}))}, 3);  // np.split(np.arange(6), 3)
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {2}, {0, 1});
  check_tensor<float>(r.outputs[2], {2}, {4, 5});
  // np.split(np.arange(12).reshape(2,6), [1, 3], axis=-1)
  r = run_op("Split", {Attribute::make_int("axis", -1)}, {in(f32({2, 6})), cst(i64v({1, 2, 3}))}, 3);
  REQUIRE(r.ok());
  CHECK(r.inferred[1].shape == Shape{2, 2});
  check_tensor<float>(r.outputs[0], {2, 1}, {0, 6});
  check_tensor<float>(r.outputs[1], {2, 2}, {1, 2, 7, 8});
  check_tensor<float>(r.outputs[2], {2, 3}, {3, 4, 5, 9, 10, 11});
  r = run_op("Split", {}, {in(f32({5}))}, 2);
  CHECK_FALSE(r.load.ok());
}

TEST_CASE("Pad: constant, reflect, edge and negative pads") {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // np.pad(x, ((1,0),(2,1)), constant_values=9)
  auto r = run_op("Pad", {}, {in(x), cst(i64v({1, 2, 0, 1})), cst(Tensor::scalar<float>(9))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{3, 6});
  check_tensor<float>(r.outputs[0], {3, 6}, {9, 9, 9, 9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9});
  // np.pad(x, ((1,1),(2,2)), mode='reflect')
  r = run_op("Pad", {Attribute::make_string("mode", "reflect")}, {in(x), cst(i64v({1, 2, 1, 2}))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {4, 7}, {6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1,
                                             6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1});
  // np.pad(x, ((0,1),(2,1)), mode='edge')
  r = run_op("Pad", {Attribute::make_string("mode", "edge")}, {in(x), in(i64v({0, 2, 1, 1}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{-1, -1});
  check_tensor<float>(r.outputs[0], {3, 6}, {1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6});
  // np.pad(x, ((0,1),(0,0)))[:, 1:]: negative pads crop
  r = run_op("Pad", {}, {in(x), cst(i64v({0, -1, 1, 0}))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {3, 2}, {2, 3, 5, 6, 0, 0});
  // Constant padding of an empty tensor: np.pad(np.zeros((0,2)), ((1,0),(0,0)), constant_values=3)
  r = run_op("Pad", {}, {in(f32({0, 2})), cst(i64v({1, 0, 0, 0})), cst(Tensor::scalar<float>(3))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {1, 2}, {3, 3});
  r = run_op("Pad", {Attribute::make_string("mode", "reflect")}, {in(x), cst(i64v({0, 3, 0, 0}))});
  CHECK_FALSE(r.load.ok());
}

TEST_CASE("Trilu, ReverseSequence and CumSum") {
  Tensor t = f32({3, 4}, iota_f(12, 1));
  // np.triu(t, 1)
  auto r = run_op("Trilu", {}, {in(t), cst(Tensor::scalar<int64_t>(1))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  // np.tril(t, -1)
  r = run_op("Trilu", {Attribute::make_int("upper", 0)}, {in(t), cst(Tensor::scalar<int64_t>(-1))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {3, 4}, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});

  // time_axis 0, batch_axis 1, lens [4,3,2,1]: out[:l, b] = x[:l, b][::-1]
  r = run_op("ReverseSequence", {Attribute::make_int("time_axis", 0), Attribute::make_int("batch_axis", 1)},
             {in(f32({4, 4})), in(i64v({4, 3, 2, 1}))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {4, 4}, {12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15});
  r = run_op("ReverseSequence", {}, {in(f32({4, 4})), in(i64v({4, 5, 2, 1}))});
  REQUIRE_FALSE(r.run.ok());
  CHECK(r.run.message().find("value 5") != std::string::npos);

  Tensor c = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // np.cumsum(c, axis=1)
  r = run_op("CumSum", {}, {in(c), cst(Tensor::scalar<int32_t>(-1))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {2, 3}, {1, 3, 6, 4, 9, 15});
  // exclusive + reverse: np.flip(np.cumsum(np.flip(c,1),1),1) - c
  r = run_op("CumSum", {Attribute::make_int("exclusive", 1), Attribute::make_int("reverse", 1)},
             {in(c), in(Tensor::scalar<int64_t>(1))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {2, 3}, {5, 3, 0, 11, 6, 0});
  // np.cumsum([[1,2],[3,4]], axis=0) in int64
  r = run_op("CumSum", {}, {in(i64({2, 2}, {1, 2, 3, 4})), cst(Tensor::scalar<int64_t>(0))});
  REQUIRE(r.ok());
  check_tensor<int64_t>(r.outputs[0], {2, 2}, {1, 2, 4, 6});
}

TEST_CASE("Extreme values from a model are errors or clamps, never overflow") {
  // Steps of INT64_MIN / INT64_MAX take one element: x[4:0:INT64_MIN] == [x[4]] per row
  auto r = run_op("Slice", {}, {in(x45()), cst(i64v({4})), cst(i64v({0})), cst(i64v({1})), cst(i64v({kMin}))});
  REQUIRE(r.ok());
  check_tensor<int64_t>(r.outputs[0], {4, 1}, {4, 9, 14, 19});
  r = run_op("Slice", {}, {in(x45()), cst(i64v({1})), cst(i64v({kMax})), cst(i64v({0})), cst(i64v({kMax}))});
  REQUIRE(r.ok());
  check_tensor<int64_t>(r.outputs[0], {1, 5}, {5, 6, 7, 8, 9});
  r = run_op("Pad", {}, {in(f32({2})), cst(i64v({kMax, 1}))});
  CHECK_FALSE(r.load.ok());
  r = run_op("Tile", {}, {in(f32({2, 3})), cst(i64v({kMax, 1}))});
  CHECK_FALSE(r.load.ok());
  r = run_op("Reshape", {}, {in(f32({2, 3})), cst(i64v({kMax, kMax, -1}))});
  CHECK_FALSE(r.load.ok());
  r = run_op("ConstantOfShape", {}, {cst(i64v({int64_t{1} << 40, int64_t{1} << 40}))});
  CHECK_FALSE(r.ok());  // far beyond max_tensor_bytes: a clean error, no allocation
  r = run_op("Range", {}, {cst(Tensor::scalar<int64_t>(kMin)), cst(Tensor::scalar<int64_t>(kMax)), cst(Tensor::scalar<int64_t>(1))});
  CHECK_FALSE(r.load.ok());
}
