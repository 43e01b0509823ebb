// quantize_layout (core/passes/opt_quantize_layout.cpp): a ResNet-like chain of QLinearConv /
// MaxPool / QLinearAdd on the codes runs channels last between one Transpose in and one out, with
// outputs equal bit for bit to the graph optimized without the pass (1 and 2 threads); chains
// where the Transposes would not pay (only plain 1x1 convs, a depthwise conv splitting the chain)
// stay NCHW.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "core/exec/optimized_model.h"
#include "tests/unit/optimize_test_util.h"

namespace tsr::opt_test {
namespace {

int count_of(const ir::Model& m, const std::string& op) {
  const std::vector<std::string> ops = ops_of(m);
  return static_cast<int>(std::count(ops.begin(), ops.end(), op));
}

struct QBuilder {
  Builder b;
  std::mt19937 rng{7};

  int32_t f(float v) { return b.constant(Tensor::scalar<float>(v)); }
  int32_t u8(int v) { return b.constant(Tensor::scalar<uint8_t>(uint8_t(v))); }

  // QLinearConv(x (c channels) -> m channels), k x k window, symmetric s8 weights, an i32 bias.
  int32_t conv(int32_t x, int64_t c, int64_t m, int64_t k, int64_t stride, int64_t pad, int64_t group = 1) {
    std::uniform_int_distribution<int> sym(-90, 90), bias(-3000, 3000);
    Tensor w = Tensor::empty(DType::kI8, {m, c / group, k, k}).value();
    for (int64_t i = 0; i < w.numel(); ++i) w.mut_data<int8_t>()[i] = int8_t(sym(rng));
    std::vector<int32_t> bv(static_cast<size_t>(m));
    for (auto& v : bv) v = bias(rng);
    const int32_t ws = b.constant(Tensor::from<float>({m}, std::vector<float>(size_t(m), 0.02f / float(k * k))));
    const int32_t wz = b.constant(Tensor::from<int8_t>({m}, std::vector<int8_t>(size_t(m), 0)));
    return b.node("QLinearConv",
                  {x, f(0.05f), u8(120), b.constant(std::move(w)), ws, wz, f(0.07f), u8(110), b.constant(Tensor::from<int32_t>({m}, bv))},
                  {ir::Attribute::make_int("group", group), ir::Attribute::make_ints("kernel_shape", {k, k}),
                   ir::Attribute::make_ints("strides", {stride, stride}), ir::Attribute::make_ints("pads", {pad, pad, pad, pad})});
  }
  int32_t add(int32_t a, int32_t c) { return b.node("com.microsoft::QLinearAdd", {a, f(0.07f), u8(110), c, f(0.07f), u8(110), f(0.09f), u8(100)}); }
  int32_t quantize(int32_t x) { return b.node("QuantizeLinear", {x, f(0.05f), u8(120)}); }
  int32_t dequantize(int32_t x, float s, int zp) { return b.node("DequantizeLinear", {x, f(s), u8(zp)}); }
};

passes::OptimizeOptions options(bool layout) {
  passes::OptimizeOptions o;
  o.evaluate = evaluate_node;
  o.quantize_layout = layout;
  return o;
}

// Optimizes `q`'s model with and without the pass: equal outputs at 1 and 2 threads; the model
// with the pass.
ir::Model check_same(QBuilder& q) {
  REQUIRE(passes::verify_model(q.b.model).ok());
  ir::Model with = q.b.model, without = q.b.model;
  REQUIRE(passes::optimize(with, options(true)).ok());
  REQUIRE(passes::optimize(without, options(false)).ok());
  for (int threads : {1, 2}) check_equal(run(with, q.b.feeds, threads), run(without, q.b.feeds, threads), 0.0);
  return with;
}

}  // namespace

TEST_CASE("quantize_layout: a ResNet-like chain runs channels last, bit-identical", "[optimize]") {
  QBuilder q;
  const int32_t x = q.b.input({1, 3, 19, 17});
  const int32_t stem = q.conv(q.quantize(x), 3, 16, 3, 1, 1);  // the row form
  const int32_t pool = q.b.node("MaxPool", {stem}, {ir::Attribute::make_ints("kernel_shape", {3, 3}),
                                                   ir::Attribute::make_ints("strides", {2, 2}),
                                                   ir::Attribute::make_ints("pads", {1, 1, 1, 1})});
  const int32_t a = q.conv(q.conv(pool, 16, 16, 3, 1, 1), 16, 16, 3, 1, 1);  // taps in place
  const int32_t sum = q.add(a, pool);
  const int32_t down = q.conv(sum, 16, 32, 1, 2, 0);                         // strided 1x1
  const int32_t up = q.conv(down, 32, 48, 1, 1, 0);                          // pointwise
  q.b.output(q.dequantize(up, 0.07f, 110));
  q.b.output(q.dequantize(sum, 0.09f, 100));  // a value read outside the chain too
  const ir::Model m = check_same(q);
  CHECK(count_of(m, "com.microsoft::QLinearConv") == 5);
  CHECK(count_of(m, "QLinearConv") == 0);
  CHECK(count_of(m, "com.microsoft::NhwcMaxPool") == 1);
  CHECK(count_of(m, "Transpose") == 3);  // in; out before each DequantizeLinear
}

TEST_CASE("quantize_layout: chains where the Transposes would not pay stay NCHW", "[optimize]") {
  SECTION("plain 1x1 convs only") {
    QBuilder q;
    const int32_t x = q.b.input({1, 16, 9, 9});
    q.b.output(q.dequantize(q.conv(q.conv(q.quantize(x), 16, 32, 1, 1, 0), 32, 16, 1, 1, 0), 0.07f, 110));
    const ir::Model m = check_same(q);
    CHECK(count_of(m, "QLinearConv") == 2);
    CHECK(count_of(m, "Transpose") == 0);
  }
  SECTION("a depthwise conv between gathering convs") {
    QBuilder q;
    const int32_t x = q.b.input({1, 16, 9, 9});
    const int32_t c1 = q.conv(q.quantize(x), 16, 16, 3, 1, 1);
    const int32_t dw = q.conv(c1, 16, 16, 3, 1, 1, 16);
    q.b.output(q.dequantize(q.conv(dw, 16, 16, 3, 1, 1), 0.07f, 110));
    const ir::Model m = check_same(q);
    CHECK(count_of(m, "com.microsoft::QLinearConv") == 0);
    CHECK(count_of(m, "Transpose") == 0);
  }
}

}  // namespace tsr::opt_test
