// Reduce* and ArgMax/ArgMin: inference + CPU kernels against numpy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/passes/infer_types.h"
#include "tests/unit/one_node_test_util.h"

using namespace tsr;

namespace {

using ReduceModel = test::OneNode;
using test::run_ok;

void check_f32(const Tensor& t, const Shape& shape, const std::vector<float>& expect) {
  REQUIRE(t.dtype() == DType::kF32);
  CHECK(t.shape() == shape);
  REQUIRE(t.numel() == static_cast<int64_t>(expect.size()));
  for (size_t i = 0; i < expect.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(expect[i])) CHECK(std::isnan(t.data<float>()[i]));
    else if (std::isinf(expect[i])) CHECK(t.data<float>()[i] == expect[i]);
    else CHECK(t.data<float>()[i] == Approx(expect[i]).epsilon(1e-6).margin(1e-6));
  }
}

// x = np.array([[[1,-2,3,0.5],[4,5,-6,2],[0,1,2,3]],[[-1,2,-3,1.5],[7,0,1,-2],[2,2,2,2]]], np.float32)
Tensor x234() {
  return Tensor::from<float>({2, 3, 4}, {1, -2, 3, 0.5f, 4, 5, -6, 2, 0, 1, 2, 3, -1, 2, -3, 1.5f, 7, 0, 1, -2, 2, 2, 2, 2});
}
ir::Attribute axes(std::vector<int64_t> a) { return ir::Attribute::make_ints("axes", std::move(a)); }
ir::Attribute keep(int64_t k) { return ir::Attribute::make_int("keepdims", k); }
Tensor axes_input(std::vector<int64_t> a) { return Tensor::from<int64_t>({static_cast<int64_t>(a.size())}, a); }

}  // namespace

TEST_CASE("Reduce* over leading, middle, trailing and irregular axes match numpy") {
  const Tensor x = x234();
  // x.sum(axis=1, keepdims=True), axes as a constant input (opset 13 ReduceSum)
  check_f32(run_ok("ReduceSum", {x, axes_input({1})}, {}, {false, true}), {2, 1, 4}, {5, 4, -1, 5.5f, 8, 4, 0, 1.5f});
  // the same with axes as a runtime input: inference keeps the rank with dynamic dims
  ReduceModel dyn("ReduceSum", {x, axes_input({1})});
  REQUIRE(dyn.infer_status.ok());
  CHECK(dyn.out_info().shape == Shape{-1, -1, -1});
  auto dr = dyn.run();
  REQUIRE(dr.ok());
  check_f32(*dr, {2, 1, 4}, {5, 4, -1, 5.5f, 8, 4, 0, 1.5f});
  // x.mean(axis=(0, 2))  (irregular: kept dim between reduced ones)
  check_f32(run_ok("ReduceMean", {x}, {axes({0, 2}), keep(0)}), {3}, {0.25f, 1.375f, 1.75f});
  // x.max(axis=0)
  check_f32(run_ok("ReduceMax", {x}, {axes({0}), keep(0)}), {3, 4}, {1, 2, 3, 1.5f, 7, 5, 1, 2, 2, 2, 2, 3});
  // x.min(keepdims=True): no axes -> all
  check_f32(run_ok("ReduceMin", {x}), {1, 1, 1}, {-6});
  // x.prod(axis=2)
  check_f32(run_ok("ReduceProd", {x}, {axes({2}), keep(0)}), {2, 3}, {-3, -240, 0, 9, 0, 16});
  // np.abs(x).sum(axis=-1)
  check_f32(run_ok("ReduceL1", {x}, {axes({-1}), keep(0)}), {2, 3}, {6.5f, 17, 6, 7.5f, 10, 8});
  // np.sqrt((x**2).sum(axis=1))
  check_f32(run_ok("ReduceL2", {x}, {axes({1}), keep(0)}), {2, 4},
            {4.12310553f, 5.47722578f, 7, 3.64005494f, 7.34846926f, 2.82842708f, 3.7416575f, 3.20156217f});
  // (x**2).sum(axis=(0,2))
  check_f32(run_ok("ReduceSumSquare", {x}, {axes({2, 0}), keep(0)}), {3}, {30.5f, 135, 30});
  // np.log((np.abs(x) + 1).sum(axis=2)) -- build |x|+1 by hand
  std::vector<float> xp;
  for (int64_t i = 0; i < x.numel(); ++i) xp.push_back(std::fabs(x.data<float>()[i]) + 1);
  check_f32(run_ok("ReduceLogSum", {Tensor::from<float>({2, 3, 4}, xp)}, {axes({2}), keep(0)}), {2, 3},
            {2.35137534f, 3.04452252f, 2.30258512f, 2.44234705f, 2.6390574f, 2.48490667f});
  // np.log(np.exp(x).sum(axis=1))
  check_f32(run_ok("ReduceLogSumExp", {x}, {axes({1}), keep(0)}), {2, 4},
            {4.06588411f, 5.01904488f, 3.31335187f, 3.37153912f, 7.00704861f, 2.7586236f, 2.31817532f, 2.48541331f});
  // np.log(np.exp(x).sum(axis=(0,2)))
  check_f32(run_ok("ReduceLogSumExp", {x}, {axes({0, 2}), keep(0)}), {3}, {3.60756874f, 7.17846107f, 4.1067524f});
}

TEST_CASE("ReduceLogSumExp is stable, ReduceMax propagates NaN, empty axes and noop") {
  // log(e^1000 + e^1000) = 1000 + log 2
  check_f32(run_ok("ReduceLogSumExp", {Tensor::from<float>({2}, {1000, 1000})}, {keep(0)}), {}, {1000.6931472f});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // np.max([[1, nan, 3], [4, 5, 6]], axis=1) -> [nan, 6]
  check_f32(run_ok("ReduceMax", {Tensor::from<float>({2, 3}, {1, nan, 3, 4, 5, 6})}, {axes({1}), keep(0)}), {2}, {nan, 6});
  // noop_with_empty_axes=1 with no axes: identity
  check_f32(run_ok("ReduceSum", {Tensor::from<float>({2}, {1, 2})}, {ir::Attribute::make_int("noop_with_empty_axes", 1)}),
            {2}, {1, 2});
  // empty axes input without noop reduces everything
  check_f32(run_ok("ReduceSum", {Tensor::from<float>({2, 2}, {1, 2, 3, 4}), Tensor::from<int64_t>({0}, {})}, {keep(0)},
                      {false, true}),
            {}, {10});
  // reducing an empty dim gives the identity: np.sum(np.zeros((0, 3)), axis=0) -> [0, 0, 0]
  check_f32(run_ok("ReduceSum", {Tensor::from<float>({0, 3}, {})}, {axes({0}), keep(0)}), {3}, {0, 0, 0});
  check_f32(run_ok("ReduceProd", {Tensor::from<float>({0, 2}, {})}, {axes({0}), keep(0)}), {2}, {1, 1});
  // reducing size-1 axes still applies the map: ReduceL1 of [[-3]] over axis 0 = 3
  check_f32(run_ok("ReduceL1", {Tensor::from<float>({1, 1}, {-3})}, {axes({0})}), {1, 1}, {3});
}

TEST_CASE("large reductions (vector rows, middle axis, threads) match closed forms") {
  const int64_t rows = 37, cols = 5003;
  std::vector<float> v(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) v[r * cols + c] = float(c % 7) - 3.0f + float(r);
  const Tensor x = Tensor::from<float>({rows, cols}, v);
  for (int threads : {1, 2}) {
    // Row sums: sum_c (c % 7 - 3) + cols * r. Over 5003 = 714*7 + 5 columns, sum of (c%7 - 3) is
    // 714 * 0 + (0+1+2+3+4 - 15) = -5.
    ReduceModel m("ReduceSum", {x, axes_input({1})}, {keep(0)}, {false, true});
    auto r = m.run(threads);
    REQUIRE(r.ok());
    for (int64_t i = 0; i < rows; ++i) CHECK(r->data<float>()[i] == Approx(-5.0 + double(cols) * double(i)).epsilon(1e-6));
    ReduceModel mx("ReduceMax", {x}, {axes({1}), keep(0)});
    auto rm = mx.run(threads);
    REQUIRE(rm.ok());
    for (int64_t i = 0; i < rows; ++i) CHECK(rm->data<float>()[i] == 3.0f + float(i));
    // Column sums over the middle/leading axis: sum_r (c%7 - 3 + r) = rows*(c%7-3) + rows*(rows-1)/2
    ReduceModel mc("ReduceSum", {x, axes_input({0})}, {keep(0)}, {false, true});
    auto rc = mc.run(threads);
    REQUIRE(rc.ok());
    bool ok = true;
    for (int64_t c = 0; c < cols; ++c)
      ok &= rc->data<float>()[c] == float(rows) * (float(c % 7) - 3.0f) + float(rows * (rows - 1) / 2);
    CHECK(ok);
  }
}

TEST_CASE("per-channel reductions over batch and space ([a, k, c], a conv bias's gradient) match f64 sums") {
  // x[3, 5, 7, 9] (rows of 63 floats: whole vectors and a tail) over axes {0, 2, 3}: each of the
  // 5 channels reduces 3 runs of 63; ReduceL2 and ReduceLogSumExp take the gather path, the rest
  // combine per-row results. Signed values, 1 and 2 threads.
  const int64_t A = 3, K = 5, C = 63;
  std::vector<float> v(A * K * C);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((i * 37) % 101) / 16.0f - 3.0f;
  const Tensor x = Tensor::from<float>({A, K, 7, 9}, v);
  for (int threads : {1, 2}) {
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceSumSquare",
                           "ReduceL2", "ReduceLogSumExp"}) {
      INFO(op << " threads " << threads);
      const std::string o = op;
      ReduceModel m(op, {x}, {axes({0, 2, 3}), keep(0)});
      auto r = m.run(threads);
      REQUIRE(r.ok());
      REQUIRE(r->shape() == Shape{K});
      for (int64_t k = 0; k < K; ++k) {
        double sum = 0, abs = 0, sq = 0, mx = -1e30, mn = 1e30, ex = 0;
        for (int64_t a = 0; a < A; ++a)
          for (int64_t c = 0; c < C; ++c) {
            const double e = v[static_cast<size_t>((a * K + k) * C + c)];
            sum += e, abs += std::fabs(e), sq += e * e, ex += std::exp(e);
            mx = std::max(mx, e), mn = std::min(mn, e);
          }
        const double want = o == "ReduceSum" ? sum : o == "ReduceMean" ? sum / double(A * C) : o == "ReduceMax" ? mx
                          : o == "ReduceMin" ? mn : o == "ReduceL1" ? abs : o == "ReduceSumSquare" ? sq
                          : o == "ReduceL2" ? std::sqrt(sq) : std::log(ex);
        CHECK(r->data<float>()[k] == Approx(want).epsilon(1e-5).margin(1e-5));
      }
    }
  }
  // Integers, [2, 3, 2] over {0, 2}: np.int32(...).sum(axis=(0, 2)); mean truncates the total.
  const Tensor xi = Tensor::from<int32_t>({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12});
  Tensor s = run_ok("ReduceSum", {xi}, {axes({0, 2}), keep(0)});
  CHECK(std::vector<int32_t>(s.data<int32_t>(), s.data<int32_t>() + 3) == std::vector<int32_t>{18, 26, 10});
  Tensor m = run_ok("ReduceMean", {xi}, {axes({0, 2}), keep(1)});
  CHECK(m.shape() == Shape{1, 3, 1});
  CHECK(std::vector<int32_t>(m.data<int32_t>(), m.data<int32_t>() + 3) == std::vector<int32_t>{4, 6, 2});
}

TEST_CASE("integer and f16 reductions") {
  // np.int32([[1, 2, 3], [4, 5, 6]]).sum(axis=0) -> [5, 7, 9]; mean truncates: [2, 3, 4] -> //2
  const Tensor xi = Tensor::from<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor s = run_ok("ReduceSum", {xi, axes_input({0})}, {keep(0)}, {false, true});
  REQUIRE(s.dtype() == DType::kI32);
  CHECK(std::vector<int32_t>(s.data<int32_t>(), s.data<int32_t>() + 3) == std::vector<int32_t>{5, 7, 9});
  Tensor m = run_ok("ReduceMean", {xi}, {axes({0}), keep(0)});
  CHECK(std::vector<int32_t>(m.data<int32_t>(), m.data<int32_t>() + 3) == std::vector<int32_t>{2, 3, 4});
  Tensor mx = run_ok("ReduceMax", {Tensor::from<int8_t>({4}, {-5, 100, -128, 7})}, {keep(0)});
  CHECK(mx.data<int8_t>()[0] == 100);
  std::vector<Half> h;
  for (float f : {1.0f, 2.0f, 3.5f, 0.5f}) h.push_back(Half{f32_to_f16(f)});
  Tensor hm = run_ok("ReduceMean", {Tensor::from<Half>({2, 2}, h)}, {axes({1}), keep(0)});
  REQUIRE(hm.dtype() == DType::kF16);
  CHECK(f16_to_f32(hm.data<Half>()[0].bits) == 1.5f);
  CHECK(f16_to_f32(hm.data<Half>()[1].bits) == 2.0f);
}

TEST_CASE("ArgMax/ArgMin with keepdims and select_last_index") {
  const Tensor x = x234();
  // x.argmax(axis=1) -> [[1,1,0,2],[1,0,2,2]]
  Tensor a = run_ok("ArgMax", {x}, {ir::Attribute::make_int("axis", 1), keep(0)});
  REQUIRE(a.dtype() == DType::kI64);
  CHECK(a.shape() == Shape{2, 4});
  CHECK(std::vector<int64_t>(a.data<int64_t>(), a.data<int64_t>() + 8) == std::vector<int64_t>{1, 1, 0, 2, 1, 0, 2, 2});
  // select_last_index: column [2, 0, 2] of batch 1 now gives 2
  Tensor al = run_ok("ArgMax", {x}, {ir::Attribute::make_int("axis", 1), keep(0), ir::Attribute::make_int("select_last_index", 1)});
  CHECK(al.data<int64_t>()[5] == 2);
  // x.argmin(axis=2, keepdims) -> [[1,2,0],[2,3,0]] with shape [2,3,1]; last index for the all-2 row: 3
  Tensor b = run_ok("ArgMin", {x}, {ir::Attribute::make_int("axis", -1)});
  CHECK(b.shape() == Shape{2, 3, 1});
  CHECK(std::vector<int64_t>(b.data<int64_t>(), b.data<int64_t>() + 6) == std::vector<int64_t>{1, 2, 0, 2, 3, 0});
  Tensor bl = run_ok("ArgMin", {x}, {ir::Attribute::make_int("axis", 2), ir::Attribute::make_int("select_last_index", 1)});
  CHECK(bl.data<int64_t>()[5] == 3);
}

TEST_CASE("reduction inference errors name the node") {
  const Tensor x = x234();
  ReduceModel rep("ReduceMean", {x}, {axes({1, -2})});
  REQUIRE_FALSE(rep.infer_status.ok());
  CHECK(rep.infer_status.message().find("(ReduceMean \"n0\")") != std::string::npos);
  CHECK(rep.infer_status.message().find("repeated") != std::string::npos);
  ReduceModel oob("ReduceMax", {x}, {axes({3})});
  REQUIRE_FALSE(oob.infer_status.ok());
  CHECK(oob.infer_status.message().find("out of range") != std::string::npos);
  ReduceModel both("ReduceSum", {x, axes_input({0})}, {axes({0})}, {false, true});
  CHECK_FALSE(both.infer_status.ok());
  ReduceModel arg("ArgMax", {x}, {ir::Attribute::make_int("axis", 5)});
  CHECK_FALSE(arg.infer_status.ok());
  ReduceModel boolin("ReduceSum", {Tensor::from<bool>({2}, {true, false})});
  CHECK_FALSE(boolin.infer_status.ok());
  ReduceModel ok_shape("ReduceSum", {x}, {axes({0, 2}), keep(1)});
  REQUIRE(ok_shape.infer_status.ok());
  CHECK(ok_shape.out_info().shape == Shape{1, 3, 1});
}
