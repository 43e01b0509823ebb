// Shape family ops (core/ops/families/shape.cpp) against numpy. Each expected array names the
// numpy expression that produced it.
#include "tests/unit/ops_shape_test_util.h"

using namespace tsr;
using namespace tsr::shape_test;

TEST_CASE("Reshape copies 0 dims, infers -1 and returns a view") {
  Tensor x = f32({2, 3, 4});
  auto r = run_op("Reshape", {}, {in(x), cst(i64v({0, -1}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, 12});  // load time, from the constant shape
  check_tensor<float>(r.outputs[0], {2, 12}, iota_f(24));
  CHECK(r.outputs[0].raw() == x.raw());  // a view, no copy

  r = run_op("Reshape", {}, {in(x), cst(i64v({-1, 0, 2}))});  // np.reshape(x, (4, 3, 2))
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {4, 3, 2}, iota_f(24));

  // allowzero=1: 0 is a real zero-size dim (empty tensor).
  r = run_op("Reshape", {Attribute::make_int("allowzero", 1)}, {in(f32({0, 4})), cst(i64v({4, 0}))});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].shape() == Shape{4, 0});
}

TEST_CASE("Reshape inference with unknown values or dims") {
  // Dynamic input dims, constant shape: 0 copies an unknown dim, -1 cannot be resolved.
  auto r = run_op("Reshape", {}, {dyn(f32({2, 3, 4})), cst(i64v({0, -1}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{-1, -1});
  check_tensor<float>(r.outputs[0], {2, 12}, iota_f(24));
  // Shape fed at run time: the rank is the shape input's length.
  r = run_op("Reshape", {}, {in(f32({2, 3, 4})), in(i64v({6, 4}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{-1, -1});
  CHECK(r.outputs[0].shape() == Shape{6, 4});
}

TEST_CASE("Reshape element-count mismatch is an error naming the node") {
  auto r = run_op("Reshape", {}, {in(f32({2, 3, 4})), cst(i64v({5, 5}))});
  REQUIRE_FALSE(r.load.ok());
  CHECK(r.load.message().find("node[0] (Reshape \"n0\")") != std::string::npos);
  CHECK(r.load.message().find("cannot reshape") != std::string::npos);
  // Same mismatch only visible at run time.
  r = run_op("Reshape", {}, {in(f32({2, 3, 4})), in(i64v({5, -1}))});
  REQUIRE(r.load.ok());
  REQUIRE_FALSE(r.run.ok());
  CHECK(r.run.code() == StatusCode::kInvalidArgument);
  CHECK(r.run.message().find("Reshape \"n0\"") != std::string::npos);
}

TEST_CASE("Shape with start/end and Size") {
  Tensor x = f32({2, 3, 4});
  auto r = run_op("Shape", {Attribute::make_int("start", 1)}, {in(x)});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2});
  check_tensor<int64_t>(r.outputs[0], {2}, {3, 4});
  r = run_op("Shape", {Attribute::make_int("end", -1)}, {dyn(x)});  // x.shape[:-1]
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2});  // known at load time from the rank alone
  check_tensor<int64_t>(r.outputs[0], {2}, {2, 3});
  r = run_op("Size", {}, {in(x)});
  REQUIRE(r.ok());
  check_tensor<int64_t>(r.outputs[0], {}, {24});
}

TEST_CASE("Flatten, Squeeze and Unsqueeze with negative axes") {
  Tensor x = f32({2, 3, 4});
  auto r = run_op("Flatten", {Attribute::make_int("axis", -1)}, {in(x)});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {6, 4}, iota_f(24));
  r = run_op("Flatten", {Attribute::make_int("axis", 0)}, {in(x)});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].shape() == Shape{1, 24});

  Tensor y = f32({2, 1, 3, 1});
  r = run_op("Squeeze", {}, {in(y), cst(i64v({-1}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, 1, 3});
  CHECK(r.outputs[0].shape() == Shape{2, 1, 3});
  r = run_op("Squeeze", {}, {in(y)});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {2, 3}, iota_f(6));
  r = run_op("Squeeze", {}, {in(y), cst(i64v({0}))});
  REQUIRE_FALSE(r.load.ok());
  CHECK(r.load.message().find("expected 1") != std::string::npos);

  r = run_op("Unsqueeze", {}, {in(f32({2, 3})), cst(i64v({0, -1}))});  // np.expand_dims(x, (0, -1))
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{1, 2, 3, 1});
  check_tensor<float>(r.outputs[0], {1, 2, 3, 1}, iota_f(6));
}

TEST_CASE("Transpose: small, NCHW->NHWC (blocked path) and strings") {
  // np.arange(24).reshape(2,3,4).transpose(1,0,2)
  auto r = run_op("Transpose", {Attribute::make_ints("perm", {1, 0, 2})}, {in(f32({2, 3, 4}))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {3, 2, 4},
                      {0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10, 11, 20, 21, 22, 23});

  // By definition out[n][h][w][c] = x[n][c][h][w]; sizes large enough for the tiled path.
  const int64_t N = 2, C = 37, H = 9, W = 11;
  Tensor x = f32({N, C, H, W});
  r = run_op("Transpose", {Attribute::make_ints("perm", {0, 2, 3, 1})}, {in(x)});
  REQUIRE(r.ok());
  REQUIRE(r.outputs[0].shape() == Shape{N, H, W, C});
  const float* o = r.outputs[0].data<float>();
  int bad = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        for (int64_t c = 0; c < C; ++c)
          bad += o[((n * H + h) * W + w) * C + c] != static_cast<float>(((n * C + c) * H + h) * W + w);
  CHECK(bad == 0);

  // Default perm reverses the axes; a 2-D transpose of 50x70 i16 (element size 2).
  std::vector<int16_t> v(3500);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int16_t>(i);
  r = run_op("Transpose", {}, {in(Tensor::from<int16_t>({50, 70}, v))});
  REQUIRE(r.ok());
  REQUIRE(r.outputs[0].shape() == Shape{70, 50});
  bad = 0;
  for (int64_t i = 0; i < 70; ++i)
    for (int64_t j = 0; j < 50; ++j) bad += r.outputs[0].data<int16_t>()[i * 50 + j] != j * 70 + i;
  CHECK(bad == 0);

  auto s = Tensor::empty(DType::kString, {2, 2});
  REQUIRE(s.ok());
  std::string* sp = s->mut_data<std::string>();
  sp[0] = "a"; sp[1] = "b"; sp[2] = "c"; sp[3] = "d";
  r = run_op("Transpose", {}, {in(*s)});
  REQUIRE(r.ok());
  const std::string* so = r.outputs[0].data<std::string>();
  CHECK((so[0] == "a" && so[1] == "c" && so[2] == "b" && so[3] == "d"));
}

TEST_CASE("Expand and Tile") {
  // np.broadcast_to([[1],[2],[3]], (2,3,4))
  auto r = run_op("Expand", {}, {in(f32({3, 1}, {1, 2, 3})), cst(i64v({2, 1, 4}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, 3, 4});
  check_tensor<float>(r.outputs[0], {2, 3, 4}, {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  r = run_op("Expand", {}, {in(f32({3, 2})), cst(i64v({4, 2}))});
  REQUIRE_FALSE(r.load.ok());
  // np.tile(np.arange(6).reshape(2,3), (2,2))
  r = run_op("Tile", {}, {in(f32({2, 3})), cst(i64v({2, 2}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{4, 6});
  check_tensor<float>(r.outputs[0], {4, 6}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  r = run_op("Tile", {}, {in(f32({2, 3})), in(i64v({0, 2}))});  // an empty result
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{-1, -1});
  CHECK(r.outputs[0].shape() == Shape{0, 6});
}

TEST_CASE("Range, ConstantOfShape and Constant") {
  // np.arange(1, 2.5, 0.5, dtype=np.float32)
  auto r = run_op("Range", {}, {cst(Tensor::scalar<float>(1)), cst(Tensor::scalar<float>(2.5f)), cst(Tensor::scalar<float>(0.5f))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{3});
  check_tensor<float>(r.outputs[0], {3}, {1.0f, 1.5f, 2.0f});
  // np.arange(10, 1, -3)
  r = run_op("Range", {}, {in(Tensor::scalar<int64_t>(10)), in(Tensor::scalar<int64_t>(1)), in(Tensor::scalar<int64_t>(-3))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{-1});
  check_tensor<int64_t>(r.outputs[0], {3}, {10, 7, 4});
  r = run_op("Range", {}, {in(Tensor::scalar<int32_t>(5)), in(Tensor::scalar<int32_t>(1)), in(Tensor::scalar<int32_t>(1))});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].shape() == Shape{0});

  r = run_op("ConstantOfShape", {Attribute::make_tensor("value", Tensor::from<int32_t>({1}, {7}))}, {cst(i64v({2, 3}))});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{2, 3});
  check_tensor<int32_t>(r.outputs[0], {2, 3}, {7, 7, 7, 7, 7, 7});
  r = run_op("ConstantOfShape", {}, {in(i64v({2, 0}))});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].dtype() == DType::kF32);
  CHECK(r.outputs[0].shape() == Shape{2, 0});

  r = run_op("Constant", {Attribute::make_ints("value_ints", {4, -2})}, {});
  REQUIRE(r.ok());
  check_tensor<int64_t>(r.outputs[0], {2}, {4, -2});
  r = run_op("Constant", {Attribute::make_tensor("value", f32({2, 2}))}, {});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {2, 2}, {0, 1, 2, 3});
  r = run_op("Constant", {Attribute::make_float("value_float", 0.25)}, {});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {}, {0.25f});
  r = run_op("Constant", {}, {});
  CHECK_FALSE(r.load.ok());
}

TEST_CASE("DepthToSpace (DCR, CRD) and SpaceToDepth") {
  Tensor x = f32({1, 8, 2, 3});
  // x.reshape(1,2,2,2,2,3).transpose(0,3,4,1,5,2).reshape(1,2,4,6)
  auto r = run_op("DepthToSpace", {Attribute::make_int("blocksize", 2)}, {in(x)});
  REQUIRE(r.ok());
  CHECK(r.inferred[0].shape == Shape{1, 2, 4, 6});
  check_tensor<float>(r.outputs[0], {1, 2, 4, 6},
                      {0,  12, 1,  13, 2,  14, 24, 36, 25, 37, 26, 38, 3,  15, 4,  16, 5,  17, 27, 39, 28, 40, 29, 41,
                       6,  18, 7,  19, 8,  20, 30, 42, 31, 43, 32, 44, 9,  21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47});
  // x.reshape(1,2,2,2,2,3).transpose(0,1,4,2,5,3).reshape(1,2,4,6)
  r = run_op("DepthToSpace", {Attribute::make_int("blocksize", 2), Attribute::make_string("mode", "CRD")}, {in(x)});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {1, 2, 4, 6},
                      {0,  6,  1,  7,  2,  8,  12, 18, 13, 19, 14, 20, 3,  9,  4,  10, 5,  11, 15, 21, 16, 22, 17, 23,
                       24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47});
  // s = arange(48).reshape(1,2,4,6); s.reshape(1,2,2,2,3,2).transpose(0,3,5,1,2,4).reshape(1,8,2,3)
  r = run_op("SpaceToDepth", {Attribute::make_int("blocksize", 2)}, {in(f32({1, 2, 4, 6}))});
  REQUIRE(r.ok());
  check_tensor<float>(r.outputs[0], {1, 8, 2, 3},
                      {0, 2,  4,  12, 14, 16, 24, 26, 28, 36, 38, 40, 1, 3,  5,  13, 15, 17, 25, 27, 29, 37, 39, 41,
                       6, 8,  10, 18, 20, 22, 30, 32, 34, 42, 44, 46, 7, 9,  11, 19, 21, 23, 31, 33, 35, 43, 45, 47});
  r = run_op("SpaceToDepth", {Attribute::make_int("blocksize", 2)}, {in(f32({1, 2, 3, 6}))});
  CHECK_FALSE(r.load.ok());
}
