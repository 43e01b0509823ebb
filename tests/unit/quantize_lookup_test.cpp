// quantize_lookup (core/passes/opt_quantize_lookup.cpp): QuantizeLinear(f(DequantizeLinear(x))),
// f elementwise, becomes tessera QLinearLookup(x, table) with outputs equal bit for bit to the
// unfused graph (run as loaded, and optimized without the pass), on every code, u8 and s8; and
// the near-misses stay. onnxruntime's agreement: tests/quantize/qlinear_lookup_test.py.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backends/cpu/kernels/qlookup.h"
#include "core/exec/optimized_model.h"
#include "tests/unit/optimize_test_util.h"

namespace tsr::opt_test {
namespace {

int count_of(const ir::Model& m, const std::string& op) {
  int c = 0;
  for (const std::string& o : ops_of(m)) c += o == op;
  return c;
}

// An input of [3, 87] codes (every code, then a tail that is no multiple of 8).
int32_t codes_input(Builder& b, DType t) {
  ir::Graph& g = b.g();
  const Shape s{3, 87};
  const int32_t id = g.add_tensor(ir::TensorInfo{"xq", ValueKind::kTensor, t, true, s});
  g.inputs.push_back(id);
  std::vector<uint8_t> v(3 * 87);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i * 7 + 3);
  if (t == DType::kU8) {
    b.feeds.push_back(Tensor::from<uint8_t>(s, v));
  } else {
    std::vector<int8_t> w(v.begin(), v.end());
    b.feeds.push_back(Tensor::from<int8_t>(s, w));
  }
  return id;
}

Tensor zp_of(DType t, int z) { return t == DType::kU8 ? Tensor::scalar<uint8_t>(uint8_t(z)) : Tensor::scalar<int8_t>(int8_t(z)); }

int32_t scalar(Builder& b, float v) { return b.constant(Tensor::scalar<float>(v)); }

// f applied to y (an f32 value): the activation named `act`.
int32_t activation(Builder& b, const std::string& act, int32_t y) {
  if (act == "SiLU") return b.node("Mul", {y, b.node("Sigmoid", {y})});
  if (act == "Clip") return b.node("Clip", {y, scalar(b, -1.0f), scalar(b, 2.5f)});
  if (act == "LeakyRelu") return b.node("LeakyRelu", {y}, {ir::Attribute::make_float("alpha", 0.1f)});
  if (act == "HardSigmoid")
    return b.node("HardSigmoid", {y}, {ir::Attribute::make_float("alpha", 0.25f), ir::Attribute::make_float("beta", 0.4f)});
  if (act == "Chain") return b.node("Tanh", {b.node("Mul", {b.node("HardSwish", {y}), scalar(b, 1.5f)})});
  return b.node(act, {y});
}

passes::OptimizeOptions options(bool lookup, bool fuse_elementwise = true) {
  passes::OptimizeOptions o;
  o.evaluate = evaluate_node;
  o.quantize_lookup = lookup;
  o.fuse_elementwise = fuse_elementwise;
  return o;
}

}  // namespace

TEST_CASE("quantize_lookup: DQ -> elementwise -> Q becomes one table lookup, bit-identical", "[optimize]") {
  const char* acts[] = {"Relu", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "Clip", "LeakyRelu", "SiLU", "Chain"};
  for (const DType in : {DType::kU8, DType::kI8}) {
    for (const DType out : {DType::kU8, DType::kI8}) {
      for (const char* act : acts) {
        for (const bool fuse : {true, false}) {  // the chain as FusedElementwise, or as its nodes
          INFO(act << " in " << dtype_name(in) << " out " << dtype_name(out) << " fuse_elementwise " << fuse);
          Builder b;
          const int32_t x = codes_input(b, in);
          const int32_t y = b.node("DequantizeLinear", {x, scalar(b, 0.047f), b.constant(zp_of(in, in == DType::kU8 ? 131 : -9))});
          const int32_t f = activation(b, act, y);
          b.output(b.node("QuantizeLinear", {f, scalar(b, 0.021f), b.constant(zp_of(out, out == DType::kU8 ? 40 : -70))}));
          REQUIRE(passes::verify_model(b.model).ok());  // infers the types the passes match on
          const std::vector<Tensor> want = run(b.model, b.feeds);
          ir::Model opt = b.model;
          REQUIRE(passes::optimize(opt, options(true, fuse)).ok());
          ir::Model unfused = b.model;
          REQUIRE(passes::optimize(unfused, options(false, fuse)).ok());
          CHECK(ops_of(opt) == std::vector<std::string>{"QLinearLookup"});
          check_equal(run(opt, b.feeds), want, 0.0);
          check_equal(run(unfused, b.feeds), want, 0.0);
        }
      }
    }
  }
}

TEST_CASE("quantize_lookup: near-misses are left alone", "[optimize]") {
  enum Miss { kSharedIntermediate, kPerChannelIn, kPerChannelOut, kSecondInput, kImplicitZp };
  for (const Miss m : {kSharedIntermediate, kPerChannelIn, kPerChannelOut, kSecondInput, kImplicitZp}) {
    INFO("case " << int(m));
    Builder b;
    const int32_t x = codes_input(b, DType::kU8);
    const int32_t in_scale = m == kPerChannelIn ? b.constant(b.random({87}, 0.01, 0.05)) : scalar(b, 0.047f);
    const int32_t in_zp = b.constant(m == kPerChannelIn ? Tensor::from<uint8_t>({87}, std::vector<uint8_t>(87, 128))
                                                        : zp_of(DType::kU8, 128));
    const int32_t y = b.node("DequantizeLinear", {x, in_scale, in_zp});
    const int32_t s = b.node("Sigmoid", {y});
    int32_t f = b.node("Mul", {y, s});
    if (m == kSecondInput) f = b.node("Mul", {f, b.input({3, 87})});
    const int32_t out_scale = m == kPerChannelOut ? b.constant(b.random({87}, 0.01, 0.05)) : scalar(b, 0.021f);
    std::vector<int32_t> q_in{f, out_scale};
    if (m == kPerChannelOut) q_in.push_back(b.constant(Tensor::from<uint8_t>({87}, std::vector<uint8_t>(87, 7))));
    else if (m != kImplicitZp) q_in.push_back(b.constant(zp_of(DType::kU8, 7)));
    b.output(b.node("QuantizeLinear", q_in));
    if (m == kSharedIntermediate) b.output(s);
    const ir::Model opt = optimize_and_compare(b, 1, options(true));
    CHECK(count_of(opt, "QLinearLookup") == 0);
    CHECK(count_of(opt, "QuantizeLinear") == 1);
  }
}

TEST_CASE("QLinearLookup kernel: the VBMI, AVX2 and portable loops give table[x] at every length", "[optimize]") {
  std::mt19937 rng(7);
  uint8_t table[256];
  for (uint8_t& t : table) t = static_cast<uint8_t>(rng());
  for (const int64_t n : {0, 1, 7, 8, 63, 64, 65, 200, 1000}) {
    std::vector<uint8_t> x(static_cast<size_t>(n));
    for (uint8_t& v : x) v = static_cast<uint8_t>(rng());
    for (const int level : {2, 1, 0}) {
      INFO("n " << n << " level " << level);
      std::vector<uint8_t> y(x.size() + 1, 0xa5);  // one guard byte past the end
      cpu::qlookup_bytes(x.data(), n, table, y.data(), level);
      bool same = y.back() == 0xa5;
      for (int64_t i = 0; i < n; ++i) same = same && y[size_t(i)] == table[x[size_t(i)]];
      CHECK(same);
    }
  }
}

TEST_CASE("QLinearLookup kernel: rejects a table that is not [256] bytes", "[optimize]") {
  Builder b;
  const int32_t x = codes_input(b, DType::kU8);
  b.output(b.node("QLinearLookup", {x, b.constant(Tensor::from<uint8_t>({255}, std::vector<uint8_t>(255, 1)))}));
  SessionOptions so;
  so.optimization = OptimizationLevel::kNone;
  auto session = Session::create(std::make_shared<const ir::Model>(b.model), so);
  const Status st = session.ok() ? (*session)->run(b.feeds).status() : session.status();
  CHECK(!st.ok());
  CHECK(st.message().find("expected [256]") != std::string::npos);
}

}  // namespace tsr::opt_test
