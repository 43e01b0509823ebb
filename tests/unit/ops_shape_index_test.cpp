// Index-driven ops (core/ops/families/indexing.cpp) against numpy.
#include "tests/unit/ops_shape_test_util.h"

using namespace tsr;
using namespace tsr::shape_test;

TEST_CASE("Gather with negative indices along axis 1") {
  Tensor data = f32({3, 4});  // np.arange(12).reshape(3,4)
  // np.take(data, [[-1,0],[2,-4]], axis=1)
  auto r = run_op("Gather", {Attribute::make_int("axis", 1)}, {in(data), in(i64({2, 2}, {-1, 0, 2, -4}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{3, 2, 2});
  check_tensor<float>(r.outputs[0], {3, 2, 2}, {3, 0, 2, 0, 7, 4, 6, 4, 11, 8, 10, 8});
  // i32 indices, scalar index drops the axis: data[-1]
  r = run_op("Gather", {}, {in(data), in(Tensor::scalar<int32_t>(-1))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {4}, {8, 9, 10, 11});
  // Empty indices give an empty result.
  r = run_op("Gather", {}, {in(data), in(i64({0}, {}))});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].shape() == Shape{0, 4});
}

TEST_CASE("Gather out-of-range index names the node, the input and the value") {
  auto r = run_op("Gather", {Attribute::make_int("axis", 1)}, {in(f32({3, 4})), in(i64v({1, 4}))});
  REQUIRE(r.load.ok());
  REQUIRE_FALSE(r.run.ok());
  const std::string& m = r.run.message();
  CHECK(r.run.code() == StatusCode::kInvalidArgument);
  CHECK(m.find("graph[0].node[0] (Gather \"n0\")") != std::string::npos);
  CHECK(m.find("input[1] (indices)") != std::string::npos);
  CHECK(m.find("index 4") != std::string::npos);
  // Constant indices: caught at load time with the same message.
  r = run_op("Gather", {Attribute::make_int("axis", 1)}, {in(f32({3, 4})), cst(i64v({1, -5}))});
  REQUIRE_FALSE(r.load.ok());
  CHECK(r.load.message().find("Gather \"n0\"") != std::string::npos);
  CHECK(r.load.message().find("index -5") != std::string::npos);
  r = run_op("Gather", {}, {in(f32({3, 4})), in(i64v({-4}))});
  REQUIRE_FALSE(r.run.ok());
  CHECK(r.run.message().find("index -4") != std::string::npos);
}

TEST_CASE("GatherElements and GatherND with batch_dims") {
  Tensor data = f32({3, 4});
  // np.take_along_axis(data, [[0,2],[1,3],[2,0]], axis=1) (index -1 == 3)
  auto r = run_op("GatherElements", {Attribute::make_int("axis", 1)}, {in(data), in(i64({3, 2}, {0, 2, 1, -1, 2, 0}))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {3, 2}, {0, 2, 5, 7, 10, 8});
  r = run_op("GatherElements", {}, {in(data), in(i64({1, 1}, {3}))});
  REQUIRE_FALSE(r.run.ok());
  CHECK(r.run.message().find("index 3") != std::string::npos);

  // gd = np.arange(12).reshape(2,3,2); batch_dims=1, indices [[[1]],[[2]]]: [gd[b][idx] ...]
  r = run_op("GatherND", {Attribute::make_int("batch_dims", 1)}, {in(f32({2, 3, 2})), in(i64({2, 1, 1}, {1, 2}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, 1, 2});
  check_tensor<float>(r.outputs[0], {2, 1, 2}, {2, 3, 10, 11});
  // Plain GatherND: data[[0,1],[1,0]] element tuples on np.arange(4).reshape(2,2)
  r = run_op("GatherND", {}, {in(f32({2, 2})), in(i64({2, 2}, {0, 1, 1, 0}))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {2}, {1, 2});
}

TEST_CASE("ScatterElements add and ScatterND mul") {
  // out = zeros((3,3)); out[idx[i,j], j] += upd[i,j]
  Tensor upd = f32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f});
  auto r = run_op("ScatterElements", {Attribute::make_string("reduction", "add")},
                  {in(f32({3, 3}, std::vector<float>(9, 0))), in(i64({2, 3}, {1, 0, 2, 0, 2, 1})), in(upd)});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {3, 3}, {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f});
  // reduction none with a negative index: data[0, -1] = 7
  r = run_op("ScatterElements", {Attribute::make_int("axis", 1)},
             {in(f32({2, 2})), in(i64({1, 1}, {-1})), in(f32({1, 1}, {7}))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {2, 2}, {0, 7, 2, 3});
  // out = arange(1,9); for k,u in zip([4,3,1,4],[9,10,11,12]): out[k] *= u  (duplicates multiply)
  r = run_op("ScatterND", {Attribute::make_string("reduction", "mul")},
             {in(f32({8}, iota_f(8, 1))), in(i64({4, 1}, {4, 3, 1, 4})), in(f32({4}, {9, 10, 11, 12}))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {8}, {1, 22, 3, 40, 540, 6, 7, 8});
  r = run_op("ScatterND", {}, {in(f32({8})), in(i64({1, 1}, {8})), in(f32({1}, {1}))});
  REQUIRE_FALSE(r.run.ok());
  CHECK(r.run.message().find("index 8") != std::string::npos);
}

TEST_CASE("OneHot, NonZero and Compress") {
  // axis 0, depth 3, values (0, 5); index 3 is out of range -> an all-off column, -1 == 2
  auto r = run_op("OneHot", {Attribute::make_int("axis", 0)},
                  {in(i64v({0, -1, 3, 1})), cst(Tensor::scalar<int64_t>(3)), in(f32({2}, {0, 5}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{3, 4});
  check_tensor<float>(r.outputs[0], {3, 4}, {5, 0, 0, 0, 0, 0, 0, 5, 0, 5, 0, 0});

  // np.array(np.nonzero([[1,0,0],[0,2,3]]))
  r = run_op("NonZero", {}, {in(f32({2, 3}, {1, 0, 0, 0, 2, 3}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, -1});
  check_tensor<int64_t>(r.outputs[0], {2, 3}, {0, 1, 1, 0, 1, 2});
  r = run_op("NonZero", {}, {in(f32({0, 3}))});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].shape() == Shape{2, 0});

  Tensor data = f32({3, 4});
  // np.compress([False, True, True], data, axis=0)
  auto cond = Tensor::from<bool>({3}, {false, true, true});
  r = run_op("Compress", {Attribute::make_int("axis", 0)}, {in(data), in(cond)});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {2, 4}, {4, 5, 6, 7, 8, 9, 10, 11});
  // np.compress([True, False, True, True], data) (flattened)
  r = run_op("Compress", {}, {in(data), cst(Tensor::from<bool>({4}, {true, false, true, true}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{3});
  check_tensor<float>(r.outputs[0], {3}, {0, 2, 3});
}

TEST_CASE("TopK largest and smallest with stable ties") {
  Tensor x = f32({2, 5}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
  // o = np.argsort(-x, axis=1, kind='stable')[:, :3]
  auto r = run_op("TopK", {}, {in(x), cst(i64v({3}))}, 2);
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, 3});
  check_tensor<float>(r.outputs[0], {2, 3}, {5, 4, 3, 9, 6, 5});
  check_tensor<int64_t>(r.outputs[1], {2, 3}, {4, 2, 0, 0, 2, 3});
  // o = np.argsort(x, axis=1, kind='stable')[:, :2]  (the tie 1, 1 keeps index order)
  r = run_op("TopK", {Attribute::make_int("largest", 0), Attribute::make_int("axis", -1)}, {in(x), in(i64v({2}))}, 2);
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, -1});
  check_tensor<float>(r.outputs[0], {2, 2}, {1, 1, 2, 3});
  check_tensor<int64_t>(r.outputs[1], {2, 2}, {1, 3, 1, 4});
  r = run_op("TopK", {}, {in(x), cst(i64v({6}))}, 2);
  CHECK_FALSE(r.load.ok());
}

TEST_CASE("Unique: sorted, first-occurrence order and along an axis") {
  Tensor x = f32({6}, {2, 1, 1, 3, 4, 3});
  // np.unique(x, return_index=True, return_inverse=True, return_counts=True)
  auto r = run_op("Unique", {}, {in(x)}, 4);
  REQUIRE(r.ok());
  CHECK(r.inferred[2].shape == Shape{6});
  check_tensor<float>(r.outputs[0], {4}, {1, 2, 3, 4});
  check_tensor<int64_t>(r.outputs[1], {4}, {1, 0, 3, 4});
  check_tensor<int64_t>(r.outputs[2], {6}, {1, 0, 0, 2, 3, 2});
  check_tensor<int64_t>(r.outputs[3], {4}, {2, 1, 2, 1});
  // sorted=0 (the ONNX spec's example): order of first occurrence
  r = run_op("Unique", {Attribute::make_int("sorted", 0)}, {in(x)}, 4);
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {4}, {2, 1, 3, 4});
  check_tensor<int64_t>(r.outputs[1], {4}, {0, 1, 3, 4});
  check_tensor<int64_t>(r.outputs[2], {6}, {0, 1, 1, 2, 3, 2});
  check_tensor<int64_t>(r.outputs[3], {4}, {1, 2, 2, 1});
  // np.unique([[1,0,1],[1,0,1]], axis=1, ...): columns [1,1], [0,0], [1,1]
  r = run_op("Unique", {Attribute::make_int("axis", -1)}, {in(i64({2, 3}, {1, 0, 1, 1, 0, 1}))}, 4);
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, -1});
  check_tensor<int64_t>(r.outputs[0], {2, 2}, {0, 1, 0, 1});
  check_tensor<int64_t>(r.outputs[1], {2}, {1, 0});
  check_tensor<int64_t>(r.outputs[2], {3}, {1, 0, 1});
  check_tensor<int64_t>(r.outputs[3], {2}, {1, 2});
  // Empty input: np.unique(np.zeros(0))
  r = run_op("Unique", {}, {in(f32({0}))}, 1);
  REQUIRE(r.ok());
  CHECK(r.outputs[0].shape() == Shape{0});
}
