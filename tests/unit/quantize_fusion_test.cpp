// quantize_fusion (core/passes/opt_quantize.cpp): onnxruntime quantize_dynamic's
// DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(x_scale * w_scale) [-> Add bias] becomes
// com.microsoft::DynamicQuantizeMatMul with bit-identical outputs; and the DynamicQuantizeLinear
// kernel against the op's formula (all-zero input, NaN, -0, ties).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "backends/cpu/kernels/quantize.h"
#include "core/base/thread_pool.h"
#include "kernel_test_util.h"
#include "optimize_test_util.h"

namespace tsr::opt_test {
namespace {

Tensor random_q(Builder& b, const Shape& s, bool is_signed) {
  std::uniform_int_distribution<int> u(is_signed ? -128 : 0, is_signed ? 127 : 255);
  const int64_t n = shape_numel(s);
  if (is_signed) {
    std::vector<int8_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<int8_t>(u(b.rng));
    return Tensor::from<int8_t>(s, v);
  }
  std::vector<uint8_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<uint8_t>(u(b.rng));
  return Tensor::from<uint8_t>(s, v);
}

struct Dql {
  int32_t q, scale, zp;
};

Dql dynamic_quantize(Builder& b, int32_t x) {
  ir::Graph& g = b.g();
  Dql d{};
  int32_t* outs[] = {&d.q, &d.scale, &d.zp};
  std::vector<int32_t> ids;
  for (int32_t* o : outs) {
    *o = g.add_tensor(ir::TensorInfo{"t" + std::to_string(g.tensors.size())});
    ids.push_back(*o);
  }
  g.nodes.push_back({"DynamicQuantizeLinear", 0, "dql" + std::to_string(g.nodes.size()), {x}, ids, {}});
  return d;
}

// MatMulInteger(xq, W, xz[, wz]) -> Cast -> Mul(., xs * ws) [-> Add b]; W K x N. bias 2: the bias
// first, through an Identity (torchvision ViT's export: Add(Identity(shared bias), y)).
int32_t dynamic_linear(Builder& b, const Dql& d, int64_t k, int64_t n, bool is_signed, bool per_col, bool zp, int bias,
                       int32_t a_zp = -1) {
  std::vector<int32_t> mm_in{d.q, b.constant(random_q(b, {k, n}, is_signed)), a_zp >= 0 ? a_zp : d.zp};
  if (zp) mm_in.push_back(b.constant(random_q(b, per_col ? Shape{n} : Shape{}, is_signed)));
  const int32_t acc = b.node("MatMulInteger", mm_in);
  const int32_t accf = b.node("Cast", {acc}, {ir::Attribute::make_int("to", 1)});
  const int32_t s = b.node("Mul", {d.scale, b.constant(b.random(per_col ? Shape{n} : Shape{}, 0.001, 0.02))});
  const int32_t y = b.node("Mul", {accf, s});
  if (bias == 2) return b.node("Add", {b.node("Identity", {b.constant(b.random({n}))}), y});
  return bias ? b.node("Add", {y, b.constant(b.random({n}))}) : y;
}

int count_of(const ir::Model& m, const std::string& op) {
  int c = 0;
  for (const std::string& o : ops_of(m)) c += o == op;
  return c;
}

}  // namespace

TEST_CASE("quantize_fusion: dynamic-quantized linears -> DynamicQuantizeMatMul, bit-identical", "[optimize]") {
  for (const bool is_signed : {true, false}) {
    for (const bool per_col : {false, true}) {
      for (const bool shared : {true, false}) {
        INFO("signed " << is_signed << " per_col " << per_col << " shared " << shared);
        Builder b;
        const int32_t x = b.input({2, 5, 24});
        const Dql d = dynamic_quantize(b, x);
        // Shared: one DynamicQuantizeLinear feeding three linears (Q, K and V): with a bias, without
        // one, and with a bias through an Identity, added first. Else one linear per quantization.
        const int32_t q = dynamic_linear(b, d, 24, 8, is_signed, per_col, /*zp=*/!is_signed || per_col, 1);
        if (shared) {
          const int32_t k = dynamic_linear(b, d, 24, 8, is_signed, per_col, false, 0);
          const int32_t v = dynamic_linear(b, d, 24, 8, is_signed, per_col, false, 2);
          b.output(b.node("Add", {b.node("Add", {q, k}), v}));
        } else {
          const int32_t v = dynamic_linear(b, dynamic_quantize(b, x), 24, 8, is_signed, per_col, false, 2);
          b.output(b.node("Add", {q, v}));
        }
        REQUIRE(passes::verify_model(b.model).ok());
        const std::vector<Tensor> before = run(b.model, b.feeds);
        ir::Model opt = b.model;
        passes::OptimizeOptions o;
        o.fuse_elementwise = false;
        auto report = passes::optimize(opt, o);
        REQUIRE(report.ok());
        // Shared: x quantized once, its codes read by each product.
        CHECK(count_of(opt, "com.microsoft::DynamicQuantizeMatMul") == (shared ? 0 : 2));
        CHECK(count_of(opt, "com.microsoft::MatMulIntegerToFloat") == (shared ? 3 : 0));
        CHECK(count_of(opt, "DynamicQuantizeLinear") == (shared ? 1 : 0));
        CHECK(count_of(opt, "Add") == (shared ? 2 : 1));  // the biases are in the fused nodes
        CHECK(count_of(opt, "MatMulInteger") == 0);
        CHECK(count_of(opt, "Mul") == 0);
        const std::vector<Tensor> after = run(opt, b.feeds);
        REQUIRE(after.size() == 1);
        REQUIRE(after[0].shape() == before[0].shape());
        CHECK(std::memcmp(after[0].data<float>(), before[0].data<float>(), before[0].nbytes()) == 0);
      }
    }
  }
}

// fuse_activation on the fused dynamic linears: a Gelu after DynamicQuantizeMatMul (a q8
// transformer's fc1) and a Relu after MatMulIntegerToFloat become those nodes' activation
// attributes, applied by qgemm per block of outputs. Relu is bit-identical to the separate node;
// Gelu too on whole vectors, but rows that are not whole vectors end in a masked vector where the
// Gelu kernel computes the tensor's last elements with std::erf (gelu-inl.h: within a few 1e-7),
// as for FusedGemm. Odd sizes: 3 x 7 = 21 rows (a partial A panel), 40 columns (a whole B panel
// and a partial one).
TEST_CASE("fuse_activation: Gelu / Relu into the dynamic linears", "[optimize]") {
  Builder b;
  const int32_t x = b.input({3, 7, 24});
  const Dql d = dynamic_quantize(b, x);
  const int32_t shared_a = dynamic_linear(b, d, 24, 40, true, true, false, 1);
  const int32_t shared_b = dynamic_linear(b, d, 24, 40, true, false, false, 0);
  b.output(b.node("Add", {b.node("Relu", {shared_a}), shared_b}));
  b.output(b.node("Gelu", {dynamic_linear(b, dynamic_quantize(b, x), 24, 40, false, true, true, 1)}));
  REQUIRE(passes::verify_model(b.model).ok());
  ir::Model opt = b.model;
  passes::OptimizeOptions o;
  o.fuse_elementwise = false;
  REQUIRE(passes::optimize(opt, o).ok());
  CHECK(count_of(opt, "Gelu") == 0);
  CHECK(count_of(opt, "Relu") == 0);
  int with_act = 0;
  for (const ir::Node& n : opt.graphs[0].nodes)
    if (const ir::Attribute* a = n.attr("activation")) {
      with_act += 1;
      CHECK(a->s == (n.op == "com.microsoft::DynamicQuantizeMatMul" ? "Gelu" : "Relu"));
    }
  CHECK(with_act == 2);
  // Every SIMD target this CPU runs (the epilogue's tails differ: masked vectors on AVX2 / AVX-512).
  for (const int64_t target : test::runnable_targets()) {
    INFO("target " << hwy::TargetName(target));
    test::use_target(target);
    const std::vector<Tensor> before = run(b.model, b.feeds);
    const std::vector<Tensor> after = run(opt, b.feeds);
    REQUIRE(after.size() == 2);
    REQUIRE(after[0].shape() == before[0].shape());
    CHECK(std::memcmp(after[0].data<float>(), before[0].data<float>(), before[0].nbytes()) == 0);
    REQUIRE(after[1].shape() == before[1].shape());
    const float* g0 = before[1].data<float>();
    const float* g1 = after[1].data<float>();
    int64_t off = 0;
    for (int64_t i = 0; i < before[1].numel(); ++i) off += !(std::fabs(g1[i] - g0[i]) <= 1e-6f * (1.0f + std::fabs(g0[i])));
    CHECK(off == 0);
  }
  test::use_target(0);
}

TEST_CASE("quantize_fusion: near-misses are left alone", "[optimize]") {
  Builder b;
  const int32_t x = b.input({6, 16});
  const Dql d = dynamic_quantize(b, x);
  // A zero point that is not the DynamicQuantizeLinear's.
  const int32_t other_zp = b.constant(Tensor::scalar<uint8_t>(3));
  b.output(dynamic_linear(b, d, 16, 4, true, false, false, true, other_zp));
  // The Cast output read twice.
  const int32_t y = dynamic_linear(b, d, 16, 4, true, false, false, false);
  const int32_t accf = b.g().nodes[b.g().nodes.size() - 1].inputs[0];
  b.output(b.node("Add", {y, accf}));
  passes::OptimizeOptions o;
  o.fuse_elementwise = false;
  const ir::Model opt = optimize_and_compare(b, 1, o);
  CHECK(count_of(opt, "com.microsoft::DynamicQuantizeMatMul") == 0);
  CHECK(count_of(opt, "MatMulInteger") == 2);
}

TEST_CASE("DynamicQuantizeLinear: the op's formula in f32, all-zero input, NaN and -0 ignored") {
  auto run_dql = [](const std::vector<float>& v) {
    Builder b;
    const int32_t x = b.input({int64_t(v.size())});
    b.feeds[0] = Tensor::from<float>({int64_t(v.size())}, v);
    const Dql d = dynamic_quantize(b, x);
    b.output(d.q);
    b.output(d.scale);
    b.output(d.zp);
    return run(b.model, b.feeds);
  };
  // Reference: the sequential formula.
  auto check = [&](const std::vector<float>& v) {
    float lo = 0, hi = 0;
    for (float f : v) {
      lo = std::min(lo, f);
      hi = std::max(hi, f);
    }
    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const float zp = hi == lo ? 0.0f : std::min(255.0f, std::max(0.0f, std::nearbyint(-lo / scale)));
    const auto out = run_dql(v);
    CHECK(out[1].data<float>()[0] == scale);
    CHECK(out[2].data<uint8_t>()[0] == static_cast<uint8_t>(zp));
    for (size_t i = 0; i < v.size(); ++i) {
      const float q = std::min(255.0f, std::max(0.0f, std::nearbyint(v[i] / scale) + zp));
      INFO("element " << i << " = " << v[i]);
      CHECK(out[0].data<uint8_t>()[i] == static_cast<uint8_t>(q));
    }
  };
  // On every SIMD target (dynamic_quantize.cpp): vector bodies, two-vector steps and tails.
  for (int64_t target : test::runnable_targets()) {
    test::use_target(target);
    INFO("hwy target " << hwy::TargetName(target));
    check(std::vector<float>(37, 0.0f));
    check({-0.0f, 0.0f, -0.0f});
    for (const int len : {103, 1000}) {
      std::vector<float> v;
      for (int i = 0; i < len; ++i) v.push_back(std::sin(0.37f * float(i)) * 3.0f + (i == 50 ? 9.0f : 0.0f));
      v[7] = std::numeric_limits<float>::quiet_NaN();
      v[len - 2] = std::numeric_limits<float>::quiet_NaN();  // in the tail
      v[20] = -0.0f;
      check(v);
    }
    // All values of one sign: the range still includes 0 (zero point 0 or 255).
    std::vector<float> pos(71), neg(71);
    for (int i = 0; i < 71; ++i) {
      pos[size_t(i)] = 0.25f + 0.125f * float(i);
      neg[size_t(i)] = -pos[size_t(i)];
    }
    check(pos);
    check(neg);
    // An infinite range: scale inf, every quotient 0 or NaN (code 0 or the zero point).
    check({1.0f, -2.0f, std::numeric_limits<float>::infinity(), 3.0f, -0.5f});
    check({1.0f, -std::numeric_limits<float>::infinity(), 3.0f, -0.5f, 0.0f, 7.0f, 2.0f, 1.0f, 1.0f, 1.0f, 1.0f,
           1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f});
    // Exact ties: range [0, 255] gives scale 1, so x.5 rounds half to even.
    check({0.5f, 1.5f, 2.5f, 254.5f, 255.0f, 3.0f, 100.5f, 7.5f, 8.5f});
    std::vector<float> ties;
    for (int i = 0; i < 255; ++i) ties.push_back(float(i) + 0.5f);
    ties.push_back(255.0f);
    check(ties);
  }
  test::use_target(0);
}

TEST_CASE("DynamicQuantizeLinear: split over threads, the same scale, zero point and codes") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-3.0f, 5.0f);
  ThreadPool pool3(3);
  // Above and below the parallel threshold (2^16), lengths off the chunk alignment; the extremes
  // in the last chunk, a NaN and a -0 in the first.
  for (const int64_t n : {int64_t{1000}, int64_t{65536}, int64_t{200003}}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = u(rng);
    x[3] = std::numeric_limits<float>::quiet_NaN();
    x[5] = -0.0f;
    x[static_cast<size_t>(n - 2)] = -7.25f;
    x[static_cast<size_t>(n - 1)] = 9.5f;
    std::vector<uint8_t> one(x.size()), three(x.size());
    const cpu::DynamicQuantParams a = cpu::dynamic_quantize_u8(x.data(), n, one.data(), nullptr);
    const cpu::DynamicQuantParams b = cpu::dynamic_quantize_u8(x.data(), n, three.data(), &pool3);
    INFO("n " << n);
    CHECK(a.scale == (9.5f + 7.25f) / 255.0f);
    CHECK(a.scale == b.scale);
    CHECK(a.zero_point == b.zero_point);
    CHECK(one == three);
  }
}

}  // namespace tsr::opt_test

namespace tsr::opt_test {

TEST_CASE("quantize_fusion: QDQ MatMul -> QLinearMatMul, but not with a weight scale along K", "[optimize]") {
  for (const bool along_k : {false, true}) {
    Builder b;
    ir::Graph& g = b.g();
    ir::TensorInfo xi{"xq", ValueKind::kTensor, DType::kU8, true, {3, 16}};
    const int32_t xq = g.add_tensor(xi);
    g.inputs.push_back(xq);
    b.feeds.push_back(random_q(b, {3, 16}, false));
    const int32_t xf = b.node("DequantizeLinear", {xq, b.constant(Tensor::scalar<float>(0.05f)),
                                                   b.constant(Tensor::scalar<uint8_t>(120))});
    const int64_t axis_len = along_k ? 16 : 5;
    const int32_t wf = b.node("DequantizeLinear",
                              {b.constant(random_q(b, {16, 5}, true)), b.constant(b.random({axis_len}, 0.005, 0.02)),
                               b.constant(Tensor::from<int8_t>({axis_len}, std::vector<int8_t>(size_t(axis_len), 0)))},
                              {ir::Attribute::make_int("axis", along_k ? 0 : 1)});
    const int32_t yf = b.node("MatMul", {xf, wf});
    b.output(b.node("QuantizeLinear", {yf, b.constant(Tensor::scalar<float>(0.2f)), b.constant(Tensor::scalar<uint8_t>(128))}));
    passes::OptimizeOptions o;
    o.fold_constants = false;
    const ir::Model opt = optimize_and_compare(b, 1, o);
    CHECK(count_of(opt, "QLinearMatMul") == (along_k ? 0 : 1));
  }
}

TEST_CASE("quantize_fusion: a Relu/Clip before QuantizeLinear is absorbed only when Q saturates the same way",
          "[optimize]") {
  struct Case {
    const char* act;
    float lo, hi;  // Clip bounds
    float ys;
    int zp;          // output zero point
    bool s8;         // output type
    bool absorbed;
  };
  const Case cases[] = {
      {"Relu", 0, 0, 0.05f, 0, false, true},           // u8, zp 0: Q's floor is Relu's
      {"Relu", 0, 0, 0.05f, 100, false, false},        // negative values keep codes 0..99
      {"Relu", 0, 0, 0.05f, -128, true, true},         // s8, zp -128
      {"Clip", 0, 6, 6.0f / 255.0f, 0, false, true},   // ReLU6 with the calibrated range [0, 6]
      {"Clip", 0, 6, 0.1f, 0, false, false},           // Q(6) = 60: Clip's ceiling matters
      {"Clip", -1, 6, 6.0f / 255.0f, 0, false, true},  // Q(-1) = 0: (-1, 0) saturates to 0 either way
      {"Clip", 0.5f, 6, 6.0f / 255.0f, 0, false, false},  // Q(0.5) = 21: Clip's floor matters
  };
  for (const Case& c : cases) {
    Builder b;
    ir::Graph& g = b.g();
    const int32_t xq = g.add_tensor(ir::TensorInfo{"xq", ValueKind::kTensor, DType::kU8, true, {4, 16}});
    g.inputs.push_back(xq);
    b.feeds.push_back(random_q(b, {4, 16}, false));
    const int32_t xf = b.node("DequantizeLinear", {xq, b.constant(Tensor::scalar<float>(0.05f)),
                                                   b.constant(Tensor::scalar<uint8_t>(120))});
    const int32_t wf = b.node("DequantizeLinear", {b.constant(random_q(b, {16, 6}, true)), b.constant(Tensor::scalar<float>(0.01f)),
                                                   b.constant(Tensor::scalar<int8_t>(0))});
    const int32_t yf = b.node("MatMul", {xf, wf});
    const int32_t a = std::string(c.act) == "Relu"
                          ? b.node("Relu", {yf})
                          : b.node("Clip", {yf, b.constant(Tensor::scalar<float>(c.lo)), b.constant(Tensor::scalar<float>(c.hi))});
    const Tensor zp = c.s8 ? Tensor::scalar<int8_t>(int8_t(c.zp)) : Tensor::scalar<uint8_t>(uint8_t(c.zp));
    b.output(b.node("QuantizeLinear", {a, b.constant(Tensor::scalar<float>(c.ys)), b.constant(zp)}));
    passes::OptimizeOptions o;
    o.fold_constants = false;
    const ir::Model opt = optimize_and_compare(b, 1, o);
    INFO(c.act << " [" << c.lo << ", " << c.hi << "] ys " << c.ys << " zp " << c.zp);
    CHECK(count_of(opt, "QLinearMatMul") == (c.absorbed ? 1 : 0));
    CHECK(count_of(opt, c.act) == (c.absorbed ? 0 : 1));
  }
}

}  // namespace tsr::opt_test

namespace tsr::opt_test {

TEST_CASE("quantize_fusion: DQ -> MaxPool -> Q with the same parameters pools the codes, bit-identical",
          "[optimize]") {
  struct Case {
    float qs;       // the QuantizeLinear's scale (the DequantizeLinear's is 0.05)
    int64_t pad;    // pads on every side of the 3x3 stride-2 window
    int64_t ceil;   // ceil_mode
    bool s8;
    bool rewritten;
  };
  const Case cases[] = {
      {0.05f, 1, 0, false, true},   // ResNet's stem pool
      {0.05f, 0, 0, true, true},    // s8 codes, no padding
      {0.06f, 1, 0, false, false},  // another scale: Q(DQ(v)) != v
      {0.05f, 1, 1, false, false},  // ceil mode: a window may hold only padding
      {0.05f, 3, 0, false, false},  // pads as wide as the window
  };
  for (const Case& c : cases) {
    INFO("qs " << c.qs << " pad " << c.pad << " ceil " << c.ceil << " s8 " << c.s8);
    Builder b;
    ir::Graph& g = b.g();
    const DType qt = c.s8 ? DType::kI8 : DType::kU8;
    const int32_t xq = g.add_tensor(ir::TensorInfo{"xq", ValueKind::kTensor, qt, true, {1, 3, 13, 17}});
    g.inputs.push_back(xq);
    b.feeds.push_back(random_q(b, {1, 3, 13, 17}, c.s8));
    auto zp = [&] { return b.constant(c.s8 ? Tensor::scalar<int8_t>(-7) : Tensor::scalar<uint8_t>(120)); };
    const int32_t xf = b.node("DequantizeLinear", {xq, b.constant(Tensor::scalar<float>(0.05f)), zp()});
    const int32_t y = b.node("MaxPool", {xf},
                             {ir::Attribute::make_ints("kernel_shape", {3, 3}), ir::Attribute::make_ints("strides", {2, 2}),
                              ir::Attribute::make_ints("pads", {c.pad, c.pad, c.pad, c.pad}),
                              ir::Attribute::make_int("ceil_mode", c.ceil), ir::Attribute::make_string("auto_pad", "NOTSET")});
    b.output(b.node("QuantizeLinear", {y, b.constant(Tensor::scalar<float>(c.qs)), zp()}));
    b.output(b.node("Relu", {y}));  // y read elsewhere too (ResNet's residual Add)
    passes::OptimizeOptions o;
    o.fold_constants = false;
    const std::vector<Tensor> before = run(b.model, b.feeds, 1);
    const ir::Model opt = optimize_and_compare(b, 1, o);
    const std::vector<Tensor> after = run(opt, b.feeds, 1);
    REQUIRE(after.size() == before.size());
    for (size_t k = 0; k < after.size(); ++k)
      CHECK(std::memcmp(after[k].raw(), before[k].raw(), before[k].nbytes()) == 0);
    bool pools_codes = false;
    for (const ir::Node& n : opt.main().nodes)
      if (n.op == "MaxPool") pools_codes = opt.main().tensors[size_t(n.inputs[0])].dtype == qt;
    CHECK(pools_codes == c.rewritten);
    CHECK(count_of(opt, "QuantizeLinear") == (c.rewritten ? 0 : 1));
  }
}

TEST_CASE("quantize_fusion: Q(Add(DQ(a), DQ(b))) -> QLinearAdd, at most one code from the unfused graph",
          "[optimize]") {
  struct Case {
    Shape a, b;
    bool s8;
    float sc;  // the QuantizeLinear's scale (the DequantizeLinears' are 0.05 and 0.07)
    bool rewritten;
  };
  const Case cases[] = {
      {{1, 24, 13, 17}, {1, 24, 13, 17}, false, 0.09f, true},  // MobileNetV2's residual
      {{2, 37}, {2, 37}, true, 0.11f, true},                    // s8, odd length
      {{3, 5}, {1}, false, 0.09f, true},                        // a single-element B
      {{1, 4, 3, 3}, {1, 4, 1, 1}, false, 0.09f, false},        // per-channel broadcast: not run on codes
      {{2, 37}, {2, 37}, false, 1e-4f, false},                  // scale ratio 500: outside [2^-14, 2^8)
  };
  for (const Case& c : cases) {
    INFO("a " << shape_str(c.a) << " b " << shape_str(c.b) << " s8 " << c.s8 << " sc " << c.sc);
    Builder b;
    ir::Graph& g = b.g();
    const DType qt = c.s8 ? DType::kI8 : DType::kU8;
    auto zp = [&](int v) { return b.constant(c.s8 ? Tensor::scalar<int8_t>(int8_t(v - 128)) : Tensor::scalar<uint8_t>(uint8_t(v))); };
    int32_t in[2];
    const Shape* shapes[2] = {&c.a, &c.b};
    for (int k = 0; k < 2; ++k) {
      in[k] = g.add_tensor(ir::TensorInfo{k ? "bq" : "aq", ValueKind::kTensor, qt, true, *shapes[k]});
      g.inputs.push_back(in[k]);
      b.feeds.push_back(random_q(b, *shapes[k], c.s8));
    }
    const int32_t af = b.node("DequantizeLinear", {in[0], b.constant(Tensor::scalar<float>(0.05f)), zp(120)});
    const int32_t bf = b.node("DequantizeLinear", {in[1], b.constant(Tensor::scalar<float>(0.07f)), zp(131)});
    b.output(b.node("QuantizeLinear", {b.node("Add", {af, bf}), b.constant(Tensor::scalar<float>(c.sc)), zp(127)}));
    b.output(b.node("Relu", {af}));  // the skip path reads DQ(a) too
    passes::OptimizeOptions o;
    o.fold_constants = false;
    const std::vector<Tensor> before = run(b.model, b.feeds, 1);
    ir::Model opt = b.model;
    REQUIRE(passes::optimize(opt, o).ok());
    const std::vector<Tensor> after = run(opt, b.feeds, 1);
    REQUIRE(after.size() == before.size());
    CHECK(std::memcmp(after[1].raw(), before[1].raw(), before[1].nbytes()) == 0);
    int64_t apart = 0;
    for (int64_t i = 0; i < before[0].numel(); ++i) {
      const int64_t d = before[0].scalar_i64(i) - after[0].scalar_i64(i);
      CHECK(std::abs(d) <= 1);
      apart += d != 0;
    }
    CHECK(apart * 1000 <= before[0].numel());  // ties only
    CHECK(count_of(opt, "com.microsoft::QLinearAdd") == (c.rewritten ? 1 : 0));
    CHECK(count_of(opt, "Add") == (c.rewritten ? 0 : 1));
  }
}

}  // namespace tsr::opt_test
