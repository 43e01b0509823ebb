// Tests for elementwise fusion (core/passes/opt_fuse_elementwise.cpp) and the FusedElementwise
// kernel (backends/cpu/kernels/fused_elementwise.cpp): each fused graph against the same graph
// run by the unfused kernels (which ops_elementwise_test and the ONNX conformance suite check
// against their definitions), on odd sizes (vector tails), broadcasts, special values and 1 and
// 3 threads; what must not fuse; and malformed programs as load errors naming the node.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/ops/fused_elementwise.h"
#include "tests/unit/optimize_test_util.h"

using namespace tsr;
using namespace tsr::opt_test;

namespace {

int32_t scalar(Builder& b, float v) { return b.constant(Tensor::scalar<float>(v)); }

size_t count_op(const ir::Model& m, const std::string& op) {
  size_t n = 0;
  for (const ir::Node& node : m.main().nodes) n += node.op == op;
  return n;
}

// Elements equal up to `rtol` (relative, with 1 as the floor of the scale), NaN where the other
// is NaN, infinities of the same sign.
void check_same_values(const Tensor& got, const Tensor& want, double rtol) {
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double a = got.scalar_f64(i), b = want.scalar_f64(i);
    INFO("element " << i << ": fused " << a << ", unfused " << b);
    if (std::isnan(b)) {
      CHECK(std::isnan(a));
    } else if (std::isinf(b)) {
      CHECK(a == b);
    } else {
      CHECK(std::fabs(a - b) <= rtol * std::max(1.0, std::fabs(b)));
    }
  }
}

// Every elementwise op the kernel implements, chained over x [2, 5, 7, 9] (odd sizes: vector
// tails) with a per-channel input [5, 1, 1], a last-axis input [9] and scalar constants.
void build_every_op_chain(Builder& b, const Shape& xs) {
  const int32_t x = b.input(xs);
  const int32_t ch = b.input({xs[1], 1, 1});
  const int32_t last = b.input({xs[3]});
  int32_t t = b.node("Add", {x, scalar(b, 0.25f)});
  t = b.node("Mul", {t, ch});
  t = b.node("Clip", {t, scalar(b, -1.5f), scalar(b, 2.0f)});
  t = b.node("Exp", {t});
  t = b.node("Log", {t});
  t = b.node("Sub", {t, last});
  t = b.node("LeakyRelu", {t}, {ir::Attribute::make_float("alpha", 0.2)});
  t = b.node("HardSwish", {t});
  t = b.node("HardSigmoid", {t}, {ir::Attribute::make_float("alpha", 0.3), ir::Attribute::make_float("beta", 0.4)});
  t = b.node("Max", {t, last});
  t = b.node("Min", {ch, t});
  t = b.node("Tanh", {t});
  t = b.node("Neg", {t});
  t = b.node("Sigmoid", {t});
  t = b.node("Pow", {t, scalar(b, 3.0f)});
  t = b.node("Div", {t, b.node("Abs", {b.node("Add", {last, scalar(b, 2.0f)})})});
  t = b.node("Sqrt", {t});
  t = b.node("Reciprocal", {b.node("Add", {t, scalar(b, 1.0f)})});
  t = b.node("Relu", {b.node("Pow", {t, scalar(b, 2.0f)})});
  b.output(t);
}

}  // namespace

TEST_CASE("fuse_elementwise: a chain of every fusable op becomes one node equal to the unfused ops",
          "[optimize][fused_elementwise]") {
  for (int threads : {1, 3}) {
    // [2, 5, 7, 9] is one block with a tail; [1, 16, 96, 97] is split across threads and blocks.
    for (const Shape& xs : {Shape{2, 5, 7, 9}, Shape{1, 16, 96, 97}}) {
      INFO("x " << shape_str(xs) << ", " << threads << " thread(s)");
      Builder b;
      build_every_op_chain(b, xs);
      const ir::Model opt = optimize_and_compare(b, threads);
      // The chain on [last] (Add, Abs) has a smaller shape than the main chain: it fuses apart.
      CHECK(count_op(opt, "FusedElementwise") == 2);
      CHECK(opt.main().nodes.size() == 2);
    }
  }
}

TEST_CASE("fuse_elementwise: decomposed LayerNorm and Swish fuse around the reductions",
          "[optimize][fused_elementwise]") {
  Builder b;
  const int32_t x = b.input({2, 7, 37});
  const int32_t gamma = b.constant(b.random({37}));
  const int32_t beta = b.constant(b.random({37}));
  const auto mean = [&](int32_t v) {
    return b.node("ReduceMean", {v}, {ir::Attribute::make_ints("axes", {-1}), ir::Attribute::make_int("keepdims", 1)});
  };
  const int32_t d = b.node("Sub", {x, mean(x)});
  const int32_t var = mean(b.node("Pow", {d, scalar(b, 2.0f)}));
  const int32_t den = b.node("Sqrt", {b.node("Add", {var, scalar(b, 1e-5f)})});
  const int32_t y = b.node("Add", {b.node("Mul", {b.node("Div", {d, den}), gamma}), beta});
  b.output(b.node("Mul", {y, b.node("Sigmoid", {y})}));  // Swish: y is read twice
  // Without the layer_norm pass, which would make the chain one LayerNormalization
  // (transformer_passes_test.cpp).
  passes::OptimizeOptions no_ln;
  no_ln.layer_norm = false;
  const ir::Model opt = optimize_and_compare(b, 1, no_ln);
  // {Add eps, Sqrt} on [2, 7, 1]; {Div, Mul, Add} and {Sigmoid, Mul} on [2, 7, 37]; Sub and Pow
  // stay (d is read twice; Pow feeds a reduction alone).
  CHECK(count_op(opt, "FusedElementwise") == 3);
  CHECK(count_op(opt, "Sub") == 1);
  CHECK(count_op(opt, "Pow") == 1);
  CHECK(count_op(opt, "ReduceMean") == 2);
}

TEST_CASE("FusedElementwise: NaN, infinities, zeros and overflow as the unfused kernels",
          "[optimize][fused_elementwise]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> special = {nan, inf, -inf, 0.0f, -0.0f, -1.0f, 1e-40f, 1e30f, -1e30f, -3.0f, 3.0f,
                                      88.8f, -88.8f, 100.0f, -100.0f, 0.5f, 1e-3f, 7.0f, -7.0f};  // 19: a tail
  for (const char* op : {"Exp", "Log", "Sigmoid", "Tanh", "Sqrt", "Relu", "Abs", "Neg", "Reciprocal", "HardSwish",
                         "HardSigmoid", "LeakyRelu", "Clip", "Max", "Min"}) {
    INFO(op);
    Builder b;
    const int32_t x = b.input({19});
    b.feeds[0] = Tensor::from<float>({19}, special);
    const int32_t other = b.input({19});  // Max/Min: NaN on either side, and in the middle of x's values
    std::vector<float> o(special.rbegin(), special.rend());
    b.feeds[1] = Tensor::from<float>({19}, o);
    const std::string name = op;
    int32_t t;
    if (name == "Clip") t = b.node("Clip", {x, scalar(b, -2.0f), scalar(b, 50.0f)});
    else if (name == "Max" || name == "Min") t = b.node(name, {x, other});
    else t = b.node(name, {x});
    // A second step, so that the op is fused; multiplying by 1 keeps every value (and NaN).
    b.output(b.node("Mul", {t, scalar(b, 1.0f)}));
    REQUIRE(passes::verify_model(b.model).ok());
    const std::vector<Tensor> want = run(b.model, b.feeds);
    ir::Model opt = b.model;
    REQUIRE(passes::optimize(opt).ok());
    REQUIRE(count_op(opt, "FusedElementwise") == 1);
    check_same_values(run(opt, b.feeds)[0], want[0], 2e-6);
  }
}

TEST_CASE("fuse_elementwise: shared, output, non-f32 and unsupported links are not fused",
          "[optimize][fused_elementwise]") {
  SECTION("an intermediate read twice or that is a graph output ends a tree") {
    Builder b;
    const int32_t x = b.input({3, 33});
    const int32_t s = b.node("Sigmoid", {x});
    const int32_t t = b.node("Tanh", {x});
    b.output(b.node("Add", {b.node("Mul", {s, scalar(b, 2.0f)}), s}));  // s read twice
    b.output(b.node("Exp", {t}));
    b.output(t);  // t is an output itself
    const ir::Model opt = optimize_and_compare(b);
    CHECK(count_op(opt, "Sigmoid") == 1);
    CHECK(count_op(opt, "Tanh") == 1);
    CHECK(count_op(opt, "Exp") == 1);
    CHECK(count_op(opt, "FusedElementwise") == 1);  // Mul + Add
  }
  SECTION("f64 chains, Pow with another exponent and a smaller intermediate stay apart") {
    Builder b;
    const int32_t x = b.input({2, 5, 7, 9});
    const int32_t small = b.input({5, 1, 1});
    ir::TensorInfo d{"d", ValueKind::kTensor, DType::kF64, true, {4, 3}};
    const int32_t xd = b.g().add_tensor(d);
    b.g().inputs.push_back(xd);
    b.feeds.push_back(Tensor::from<double>({4, 3}, std::vector<double>(12, 0.5)));
    b.output(b.node("Exp", {b.node("Neg", {xd})}));
    b.output(b.node("Exp", {b.node("Pow", {x, scalar(b, 0.5f)})}));
    // Add on [5, 1, 1] then Mul on [2, 5, 7, 9]: fusing would compute the Add 126 times over.
    b.output(b.node("Mul", {b.node("Add", {small, scalar(b, 1.0f)}), x}));
    const ir::Model opt = optimize_and_compare(b);
    CHECK(count_op(opt, "FusedElementwise") == 0);
  }
  SECTION("a tree with more distinct inputs than a program takes is left as it is") {
    Builder b;
    int32_t t = b.input({4, 17});
    for (int k = 0; k < ops::EwProgram::kMaxInputs + 1; ++k) t = b.node("Add", {t, b.input({4, 17})});
    b.output(t);
    const ir::Model opt = optimize_and_compare(b);
    CHECK(count_op(opt, "FusedElementwise") == 0);
    CHECK(count_op(opt, "Add") == static_cast<size_t>(ops::EwProgram::kMaxInputs + 1));
  }
}

TEST_CASE("FusedElementwise: malformed programs are load errors naming the node and the step",
          "[optimize][fused_elementwise]") {
  struct Case {
    std::vector<std::string> ops;
    std::vector<int64_t> args;
    std::vector<double> imm;
    const char* expect;
  };
  const Case cases[] = {
      {{"Add", "Erf"}, {0, 1, 0, 2, 0, 0}, {}, "step 1: 'Erf' is not a fusable elementwise op"},
      {{"Add"}, {0, 1}, {}, "'args' has 2 operands, expected 3 per step"},
      {{"Add", "Mul"}, {0, 3, 0, 2, 1, 0}, {}, "step 0 (Add): operand 1 = 3 names neither"},
      {{"Neg"}, {0, -2, 0}, {1.0}, "step 0 (Neg): operand 1 is unused but -2"},
      {{"Add"}, {0, -2, 0}, {1.0}, "operand 1 = -2 names neither one of the 2 registers"},
      {{"Pow"}, {0, -1, 0}, {0.5}, "step 0 (Pow): exponent 0.5 is not 1, 2 or 3"},
      {{"Clip"}, {0, 1, -1}, {1.0}, "step 0 (Clip): operand 1 must be an immediate"},
      {{}, {}, {}, "FusedElementwise has no steps"},
  };
  for (const Case& c : cases) {
    INFO(c.expect);
    Builder b;
    const int32_t x = b.input({3});
    const int32_t y = b.input({3});
    std::vector<ir::Attribute> attrs = {ir::Attribute::make_strings("ops", c.ops), ir::Attribute::make_ints("args", c.args)};
    if (!c.imm.empty()) attrs.push_back(ir::Attribute::make_floats("immediates", c.imm));
    b.output(b.node("FusedElementwise", {x, y}, attrs));
    const Status st = passes::verify_model(b.model);
    REQUIRE_FALSE(st.ok());
    CHECK(st.code() == StatusCode::kInvalidModel);
    CHECK_THAT(st.message(), Catch::Contains("graph[0].node[0] (FusedElementwise \"n0\")") && Catch::Contains(c.expect));
  }
  SECTION("a non-f32 input") {
    Builder b;
    ir::TensorInfo d{"d", ValueKind::kTensor, DType::kF64, true, {3}};
    const int32_t xd = b.g().add_tensor(d);
    b.g().inputs.push_back(xd);
    b.output(b.node("FusedElementwise", {xd},
                    {ir::Attribute::make_strings("ops", {"Neg"}), ir::Attribute::make_ints("args", {0, 0, 0})}));
    const Status st = passes::verify_model(b.model);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains("input[0]") && Catch::Contains("f64"));
  }
}
