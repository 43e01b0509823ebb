// Gradients through If and Loop, checked against PyTorch's eager autograd on the same programs
// (tests/autodiff/torch_reference.py wrote the inputs and gradients as .npy files) and against
// central finite differences. All values are float64.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "tessera/session.h"
#include "core/ops/graph_builder.h"
#include "core/io/npy.h"
#include "core/passes/verify_model.h"
#include "core/passes/autodiff.h"
#include "tests/unit/grad_check.h"

using namespace tsr;
using ops::GraphBuilder;
using ir::Attribute;
using ops::Value;

namespace {

const std::string kRef = std::string(TSR_SOURCE_DIR) + "/tests/autodiff/reference/";

Tensor ref(const std::string& program, const std::string& name) {
  auto t = io::read_npy_file(kRef + program + "/" + name + ".npy");
  INFO(t.status().to_string());
  REQUIRE(t.ok());
  return *t;
}

Value sum_all(GraphBuilder& b, Value v) { return b.op("ReduceSum", {v}, {Attribute::make_int("keepdims", 0)}); }
Value sq_sum(GraphBuilder& b, Value v) { return sum_all(b, b.op("Mul", {v, v})); }
Value input_like(GraphBuilder& b, const std::string& name, const Tensor& t) { return b.input(name, t.dtype(), t.shape()); }

// Runs passes::gradient_model(m) (loss = first output, gradients w.r.t. `wrt`) on `feeds`.
std::vector<Tensor> run_gradient_model(const ir::Model& m, const std::vector<std::string>& wrt,
                                       const std::vector<Tensor>& feeds) {
  auto gm = passes::gradient_model(m, {"", wrt});
  INFO(gm.status().to_string());
  REQUIRE(gm.ok());
  REQUIRE(passes::verify_model(*gm).ok());
  auto s = Session::create(std::make_shared<ir::Model>(std::move(gm).value()));
  REQUIRE(s.ok());
  auto out = (*s)->run(feeds);
  INFO(out.status().to_string());
  REQUIRE(out.ok());
  return std::move(out).value();
}

// Differentiates `m` (first output: the loss) with respect to `wrt`, runs it on the reference
// inputs and compares loss and gradients with PyTorch's; then checks finite differences.
void check_against_torch(const std::string& program, const ir::Model& m, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& wrt) {
  std::vector<Tensor> feeds;
  for (const auto& n : inputs) feeds.push_back(ref(program, n));
  const std::vector<Tensor> out = run_gradient_model(m, wrt, feeds);
  CHECK(out[0].scalar_f64(0) == Approx(ref(program, "loss").scalar_f64(0)).epsilon(1e-12));
  for (size_t w = 0; w < wrt.size(); ++w) {
    const Tensor expected = ref(program, wrt[w] + "_grad");
    const Tensor& got = out[1 + w];
    REQUIRE(got.shape() == expected.shape());
    for (int64_t i = 0; i < got.numel(); ++i) {
      INFO(program << ": d loss / d " << wrt[w] << "[" << i << "]");
      CHECK(std::abs(got.scalar_f64(i) - expected.scalar_f64(i)) <= 1e-5 * (1.0 + std::abs(expected.scalar_f64(i))));
    }
  }
  CHECK(gradcheck::check_model(m, feeds, wrt, 1e-6, 1e-5) == "");
}

// if flag > 0: y = W1 @ X else: y = W2 @ X;  y = relu(y + b);  loss = sum(y * y)
ir::Model seeds_program(const std::string& program) {
  ir::Model m;
  GraphBuilder b(m);
  const Value x = input_like(b, "X", ref(program, "X")), w1 = input_like(b, "W1", ref(program, "W1"));
  const Value w2 = input_like(b, "W2", ref(program, "W2")), bias = input_like(b, "b", ref(program, "b"));
  const Value flag = input_like(b, "flag", ref(program, "flag"));
  const auto y = b.cond(b.op("Greater", {flag, b.constant(Tensor::scalar(0.0))}),
                        [&](GraphBuilder& t) { return std::vector<Value>{t.op("MatMul", {w1, x})}; },
                        [&](GraphBuilder& e) { return std::vector<Value>{e.op("MatMul", {w2, x})}; });
  const Value r = b.op("Relu", {b.op("Add", {y[0], bias})});
  b.output(sq_sum(b, r), "loss");
  REQUIRE(b.status().ok());
  return m;
}

}  // namespace

TEST_CASE("gradient of If matches PyTorch for both branches", "[grad][autodiff]") {
  for (const std::string program : {"if_then", "if_else"})
    check_against_torch(program, seeds_program(program), {"X", "W1", "W2", "b", "flag"}, {"X", "W1", "W2", "b"});
}

TEST_CASE("gradient of a while loop with a data-dependent trip count matches PyTorch", "[grad][autodiff]") {
  const std::string p = "while_data_dependent";
  ir::Model m;
  GraphBuilder b(m);
  const Value x = input_like(b, "x", ref(p, "x")), w = input_like(b, "w", ref(p, "w"));
  const Value c = input_like(b, "c", ref(p, "c")), limit = input_like(b, "limit", ref(p, "limit"));
  const auto r = b.while_loop(
      [&](GraphBuilder& g, const std::vector<Value>& v) { return g.op("Less", {sum_all(g, v[0]), limit}); },
      [&](GraphBuilder& body, Value, const std::vector<Value>& v) {
        return std::vector<Value>{body.op("Add", {body.op("Mul", {v[0], w}), c})};
      },
      {x});
  b.output(sq_sum(b, r[0]), "loss");
  REQUIRE(b.status().ok());
  check_against_torch(p, m, {"x", "w", "c", "limit"}, {"x", "w", "c"});
}

TEST_CASE("gradient of a loop containing an If containing a loop matches PyTorch", "[grad][autodiff]") {
  const std::string p = "nested_loop_if_loop";
  ir::Model m;
  GraphBuilder b(m);
  const Value x = input_like(b, "x", ref(p, "x")), w = input_like(b, "w", ref(p, "w"));
  const Value c = input_like(b, "c", ref(p, "c"));
  const auto r = b.fori_loop(
      b.constant(Tensor::scalar<int64_t>(4)),
      [&](GraphBuilder& body, Value, const std::vector<Value>& v) {
        const auto y = body.cond(
            body.op("Greater", {sum_all(body, v[0]), body.constant(Tensor::scalar(0.0))}),
            [&](GraphBuilder& t) {
              return t.fori_loop(t.constant(Tensor::scalar<int64_t>(2)),
                                 [&](GraphBuilder& inner, Value, const std::vector<Value>& u) {
                                   return std::vector<Value>{inner.op("Add", {inner.op("Mul", {u[0], w}), c})};
                                 },
                                 {v[0]});
            },
            [&](GraphBuilder& e) {
              return std::vector<Value>{e.op("Sub", {v[0], e.op("Mul", {c, e.constant(Tensor::scalar(0.5))})})};
            });
        const Value denom = body.op("Add", {body.constant(Tensor::scalar(1.0)), sq_sum(body, y[0])});
        return std::vector<Value>{body.op("Div", {y[0], denom})};
      },
      {x});
  b.output(sq_sum(b, r[0]), "loss");
  REQUIRE(b.status().ok());
  check_against_torch(p, m, {"x", "w", "c"}, {"x", "w", "c"});
}

TEST_CASE("gradient errors name every op without a rule", "[grad][autodiff]") {
  ir::Model m;
  GraphBuilder b(m);
  const Value x = b.input("x", DType::kF64, {3});
  // Two ops no rule covers.
  const Value y = b.op("Hardmax", {b.op("Einsum", {x}, {ir::Attribute::make_string("equation", "i->i")})});
  b.output(sum_all(b, b.op("Mul", {y, x})), "loss");
  REQUIRE(b.status().ok());
  auto gm = passes::gradient_model(m, {"", {"x"}});
  REQUIRE_FALSE(gm.ok());
  CHECK(gm.status().code() == StatusCode::kUnsupported);
  CHECK_THAT(gm.status().message(), Catch::Contains("2 nodes have no gradient rule (2 ops)") && Catch::Contains("(Einsum") &&
                                        Catch::Contains("(Hardmax"));
}

TEST_CASE("gradient_model rejects unknown loss and wrt names", "[grad][autodiff]") {
  ir::Model m;
  GraphBuilder b(m);
  const Value x = b.input("x", DType::kF64, {3});
  b.output(sum_all(b, x), "loss");
  auto bad_loss = passes::gradient_model(m, {"nope", {"x"}});
  REQUIRE_FALSE(bad_loss.ok());
  CHECK_THAT(bad_loss.status().message(), Catch::Contains("--loss \"nope\"") && Catch::Contains("outputs: loss"));
  auto bad_wrt = passes::gradient_model(m, {"", {"y", "z"}});
  REQUIRE_FALSE(bad_wrt.ok());
  CHECK_THAT(bad_wrt.status().message(), Catch::Contains("\"y\", \"z\""));
}

TEST_CASE("gradients reach a constant copied into a branch (as the ONNX importer does)", "[grad][autodiff]") {
  // Main graph: constant k [2], inputs x [2], flag; out = If(flag, then: k' * k', else: x) where
  // k' is the branch's own copy of k (same name); loss = sum(out * x). d loss / d k = 2 k x when
  // flag holds, else 0.
  const Tensor k = Tensor::from<double>({2}, {0.5, -1.5});
  for (bool flag : {true, false}) {
    ir::Model m;
    GraphBuilder b(m);
    const Value x = b.input("x", DType::kF64, {2});
    const Value f = b.input("flag", DType::kBool, {});
    const Value kc = b.constant(k, "k");
    b.op("Identity", {kc});  // k is a main-graph tensor that the branch copy is named after
    const auto gi = static_cast<int32_t>(m.graphs.size());
    const auto add_branch = [&](bool then) {
      m.graphs.emplace_back();
      m.graphs.back().name = then ? "then" : "else";
      GraphBuilder g(m, static_cast<int32_t>(m.graphs.size() - 1));
      if (then) {
        const Value kk = g.constant(k, "k");
        g.output(g.op("Mul", {kk, kk}));
      } else {
        g.output(g.constant(Tensor::from<double>({2}, {3, 4}), "c"));
      }
      REQUIRE(g.status().ok());
    };
    add_branch(true);
    add_branch(false);
    const auto out = b.op_n("If", {f}, 1, {Attribute::make_graph("then_branch", gi), Attribute::make_graph("else_branch", gi + 1)});
    b.output(sum_all(b, b.op("Mul", {out[0], x})), "loss");
    REQUIRE(b.status().ok());
    for (const std::vector<std::string>& wrt : {std::vector<std::string>{"k"}, std::vector<std::string>{}}) {
      INFO("flag=" << flag << " default wrt=" << wrt.empty());
      // By default only weights the loss depends on: k does, through the then branch, whatever
      // the flag.
      const std::vector<Tensor> r = run_gradient_model(m, wrt, {Tensor::from<double>({2}, {2, 3}), Tensor::scalar(flag)});
      REQUIRE(r.size() == 2);
      const double want[2] = {flag ? 2 * 0.5 * 2 : 0.0, flag ? 2 * -1.5 * 3 : 0.0};
      for (int64_t i = 0; i < 2; ++i) CHECK(r[1].scalar_f64(i) == Approx(want[i]));
    }
  }
}
