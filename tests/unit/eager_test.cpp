// The eager emitter and the public eager API: results equal the graph executor's (the same
// programs, written once against ops::Emitter), tape gradients equal the graph autodiff pass's
// and central finite differences, and a few values are checked against PyTorch.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "core/include/tessera/eager.h"
#include "core/ops/grad.h"
#include "core/passes/autodiff.h"
#include "tests/unit/eager_test_util.h"

using namespace tsr;
using eagertest::Program;
using ir::Attribute;
using ops::Emitter;
using ops::Value;

namespace {

Tensor f32(const Shape& s, std::vector<float> v) { return Tensor::from<float>(s, v); }
Tensor f64(const Shape& s, std::vector<double> v) { return Tensor::from<double>(s, v); }
Value ints(Emitter& e, std::vector<int64_t> v) { return ops::ints_const(e, v); }

// Many ops at once, with broadcasting, attributes and attribute-like inputs.
std::vector<Value> many_ops(Emitter& e, const std::vector<Value>& in) {
  const Value x = in[0], w = in[1], b = in[2];  // [2,3], [3,4], [4]
  const Value y = e.emit("Add", {e.emit("MatMul", {x, w}), b});
  const Value act = e.emit("Mul", {e.emit("Tanh", {y}), e.emit("Sigmoid", {y})});
  const Value sm = e.emit("Softmax", {e.emit("Relu", {act})}, {Attribute::make_int("axis", 0)});
  const Value t = e.emit("Transpose", {sm}, {Attribute::make_ints("perm", {1, 0})});
  const Value r = e.emit("Reshape", {t, ints(e, {2, -1})});
  const Value c = e.emit("Concat", {r, e.emit("Neg", {r})}, {Attribute::make_int("axis", 1)});
  const Value d = e.emit("Div", {e.emit("Sub", {c, e.emit("Exp", {c})}), ops::scalar(e, DType::kF32, 3.0)});
  const Value s = e.emit("ReduceSum", {d, ints(e, {1})}, {Attribute::make_int("keepdims", 1)});
  const Value m = e.emit("ReduceMean", {e.emit("Abs", {d})}, {Attribute::make_int("keepdims", 0)});
  return {d, s, m};
}

// Ops that have gradient rules on this branch: Add/Sub/Mul/Div/Neg/ReduceSum/ReduceMean.
std::vector<Value> arith_loss(Emitter& e, const std::vector<Value>& in) {
  const Value x = in[0], y = in[1];  // [2,3], [3]
  const Value q = e.emit("Div", {x, e.emit("Add", {y, ops::scalar(e, DType::kF64, 2.5)})});
  const Value p = e.emit("Mul", {e.emit("Sub", {x, y}), e.emit("Neg", {q})});
  const Value rows = e.emit("ReduceSum", {e.emit("Mul", {p, x}), ints(e, {1})}, {Attribute::make_int("keepdims", 0)});
  const Value mean = e.emit("ReduceMean", {e.emit("Mul", {y, y})}, {Attribute::make_int("keepdims", 0)});
  return {e.emit("Add", {e.emit("ReduceSum", {rows}, {Attribute::make_int("keepdims", 0)}), mean})};
}

// MatMul / Relu / Tanh: rules added on other branches.
std::vector<Value> mlp_loss(Emitter& e, const std::vector<Value>& in) {
  const Value h = e.emit("Relu", {e.emit("MatMul", {in[0], in[1]})});
  return {e.emit("ReduceSum", {e.emit("Tanh", {h})}, {Attribute::make_int("keepdims", 0)})};
}

// d out0 / d feeds[k] by the graph pass (passes::gradient_model), run with a Session.
std::vector<Tensor> graph_gradients(const Program& p, const std::vector<Tensor>& feeds) {
  passes::GradientModelOptions opts;
  for (size_t k = 0; k < feeds.size(); ++k) opts.wrt.push_back(eagertest::input_name(k));
  auto gm = passes::gradient_model(eagertest::build_model(p, feeds), opts);
  INFO(gm.status().to_string());
  REQUIRE(gm.ok());
  std::vector<Tensor> out = eagertest::run_model(std::move(gm).value(), feeds);
  return std::vector<Tensor>(out.end() - static_cast<std::ptrdiff_t>(feeds.size()), out.end());
}

// d out0 / d feeds[k] through the eager tape.
Expected<std::vector<Tensor>> eager_gradients(const Program& p, const std::vector<Tensor>& feeds) {
  frontend::EagerEmitter e;
  std::vector<Value> ins;
  for (const Tensor& t : feeds) ins.push_back(e.wrap(t, /*requires_grad=*/true));
  const Value loss = p(e, ins)[0];
  TSR_RETURN_IF_ERROR(e.status());
  TSR_ASSIGN_OR_RETURN(std::vector<Value> g, e.gradients(loss, ins));
  std::vector<Tensor> out;
  for (const Value& v : g) out.push_back(e.tensor(v));
  return out;
}

// Central finite differences of out0 (a float64 scalar) with respect to feeds[k].
Tensor finite_difference(const Program& p, const std::vector<Tensor>& feeds, size_t k, double h = 1e-6) {
  Tensor g = *Tensor::zeros(DType::kF64, feeds[k].shape());
  for (int64_t i = 0; i < feeds[k].numel(); ++i) {
    double at[2];
    for (int side = 0; side < 2; ++side) {
      std::vector<Tensor> f = feeds;
      f[k] = *feeds[k].clone();
      f[k].mut_data<double>()[i] += side == 0 ? h : -h;
      at[side] = eagertest::run_eager(p, f)[0].scalar_f64(0);
    }
    g.mut_data<double>()[i] = (at[0] - at[1]) / (2 * h);
  }
  return g;
}

void check_gradients(const Program& p, const std::vector<Tensor>& feeds) {
  auto eager = eager_gradients(p, feeds);
  INFO(eager.status().to_string());
  REQUIRE(eager.ok());
  const std::vector<Tensor> graph = graph_gradients(p, feeds);
  for (size_t k = 0; k < feeds.size(); ++k) {
    INFO("input " << k);
    CHECK(eagertest::max_abs_diff((*eager)[k], graph[k]) < 1e-12);
    CHECK(eagertest::max_abs_diff((*eager)[k], finite_difference(p, feeds, k)) < 1e-6);
  }
}

bool has_rule(const char* op) {
  const ops::OpDef* d = ops::OpRegistry::global().find(op);
  return d && d->grad;
}

}  // namespace

TEST_CASE("eager results equal the graph executor's", "[eager]") {
  const std::vector<Tensor> feeds = {f32({2, 3}, {0.5f, -1, 2, 1.5f, 0.25f, -0.75f}),
                                     f32({3, 4}, {1, -2, 0.5f, 0.3f, -1.2f, 0.8f, 2, 1, -0.5f, 0.1f, 0.7f, -0.9f}),
                                     f32({4}, {0.1f, -0.2f, 0.3f, 0.05f})};
  const std::vector<Tensor> eager = eagertest::run_eager(many_ops, feeds);
  const std::vector<Tensor> graph = eagertest::run_model(eagertest::build_model(many_ops, feeds), feeds);
  REQUIRE(eager.size() == graph.size());
  for (size_t k = 0; k < eager.size(); ++k) {
    INFO("output " << k);
    CHECK(eager[k].shape() == graph[k].shape());
    // The same kernels on the same inputs: bit-identical.
    CHECK(eagertest::max_abs_diff(eager[k], graph[k]) == 0.0);
  }
  CHECK(eager[0].shape() == Shape{2, 8});
  CHECK(eager[1].shape() == Shape{2, 1});
  CHECK(eager[2].shape() == Shape{});
}

TEST_CASE("eager tape gradients equal the graph pass and finite differences", "[eager]") {
  check_gradients(arith_loss, {f64({2, 3}, {0.5, -1, 2, 1.5, 0.25, -0.75}), f64({3}, {0.3, -0.4, 1.1})});
}

TEST_CASE("eager gradients through MatMul/Relu/Tanh", "[eager]") {
  const std::vector<Tensor> feeds = {f64({2, 3}, {0.5, -1.0, 2.0, 1.5, 0.25, -0.75}),
                                     f64({3, 2}, {1.0, -2.0, 0.5, 0.3, -1.2, 0.8})};
  check_gradients(mlp_loss, feeds);
  // PyTorch 1.13 (/usr/bin/python3): a, b as above, requires_grad; l = torch.tanh(torch.relu(a @ b)).sum();
  // l.backward(); print(a.grad, b.grad)
  auto g = eager_gradients(mlp_loss, feeds);
  REQUIRE(g.ok());
  const std::vector<double> da = {-1.8302739236532584, 0.27454108854798875, 0.7321095694613033,
                                  0.02531183006822001, 0.012655915034110005, -0.03037419608186401};
  const std::vector<double> db = {0.03796774510233002, 0.4575684809133146, 0.0063279575170550025,
                                  -0.9151369618266292, -0.01898387255116501, 1.8302739236532584};
  CHECK(eagertest::max_abs_diff((*g)[0], f64({2, 3}, da)) < 1e-12);
  CHECK(eagertest::max_abs_diff((*g)[1], f64({3, 2}, db)) < 1e-12);
}

TEST_CASE("eager gradients: one error lists every op without a rule", "[eager]") {
  // Shrink and Mod have no gradient rule (README's op table); if one gains a rule, pick another
  // op without one here rather than letting this test pass vacuously.
  REQUIRE(ops::OpRegistry::global().find("Shrink"));
  REQUIRE(ops::OpRegistry::global().find("Mod"));
  REQUIRE_FALSE(has_rule("Shrink"));
  REQUIRE_FALSE(has_rule("Mod"));
  frontend::EagerEmitter e;
  const Value x = e.wrap(f64({3}, {0.3, 1.7, -2.2}), true);
  const Value a = e.emit("Shrink", {x}, {Attribute::make_float("lambd", 0.5f)});
  const Value b = e.emit("Mod", {e.emit("Mul", {x, x}), x}, {Attribute::make_int("fmod", 1)});
  const Value loss = e.emit("ReduceSum", {e.emit("Add", {a, b})}, {Attribute::make_int("keepdims", 0)});
  REQUIRE(e.status().ok());
  auto g = e.gradients(loss, {x});
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().code() == StatusCode::kUnsupported);
  CHECK_THAT(g.status().message(), Catch::Contains("2 eager ops have no gradient rule"));
  CHECK_THAT(g.status().message(), Catch::Contains("(Shrink)"));
  CHECK_THAT(g.status().message(), Catch::Contains("(Mod)"));
  CHECK(e.status().ok());  // reported through the result only
}

TEST_CASE("eager emitter: tape only with requires_grad, values freed, unconnected gradients are zeros", "[eager]") {
  frontend::EagerEmitter e;
  const Value a = e.wrap(f32({2}, {1, 2}));
  const Value b = e.wrap(f32({2}, {3, 4}), true);
  const Value c = e.emit("Add", {a, a});
  CHECK(e.tape_size() == 0);
  CHECK_FALSE(e.requires_grad(c));
  const Value d = e.emit("Mul", {c, b});
  CHECK(e.tape_size() == 1);
  CHECK(e.requires_grad(d));
  CHECK(eagertest::values(e.tensor(d)) == std::vector<double>{6, 16});
  const size_t live = e.live_values();
  auto g = e.gradients(d, {b, a, c}, /*consume=*/true);
  REQUIRE(g.ok());
  CHECK(eagertest::values(e.tensor((*g)[0])) == std::vector<double>{2, 4});  // d sum(c*b)/db = c
  CHECK(eagertest::values(e.tensor((*g)[1])) == std::vector<double>{0, 0});  // a is not on a taped path
  CHECK(eagertest::values(e.tensor((*g)[2])) == std::vector<double>{3, 4});  // c is a taped input
  CHECK(e.tape_size() == 0);
  // The results are the only new live values: the rules' intermediates are released.
  CHECK(e.live_values() == live + 3);
  for (const Value& v : *g) e.release(v);
  for (const Value& v : {a, b, c, d}) e.release(v);
  CHECK(e.live_values() == 0);

  e.set_grad_enabled(false);
  const Value x = e.wrap(f32({1}, {1}), true);
  e.release(e.emit("Neg", {x}));
  CHECK(e.tape_size() == 0);
}

TEST_CASE("eager emitter: errors poison values and are kept once", "[eager]") {
  frontend::EagerEmitter e;
  const Value a = e.wrap(f32({2}, {1, 2}));
  const Value b = e.wrap(f32({3}, {1, 2, 3}));
  const Value bad = e.emit("Add", {a, b});
  REQUIRE_FALSE(e.status().ok());
  const std::string first = e.status().message();
  CHECK_THAT(first, Catch::Contains("eager Add"));
  CHECK_FALSE(e.tensor(bad).defined());
  CHECK(e.type(bad).dtype == DType::kUndefined);
  const Value worse = e.emit("NoSuchOp", {e.emit("Relu", {bad})});
  CHECK_FALSE(e.tensor(worse).defined());
  CHECK(e.status().message() == first);
  e.clear_status();
  e.emit("NoSuchOp", {a});
  CHECK_THAT(e.status().message(), Catch::Contains("unsupported op 'NoSuchOp'"));
  e.clear_status();
  e.emit("If", {e.wrap(Tensor::scalar(true))}, {Attribute::make_graph("then_branch", 1)});
  CHECK(e.status().code() == StatusCode::kUnsupported);
}

TEST_CASE("eager kernel cache keys on attributes and dtypes", "[eager]") {
  frontend::EagerEmitter e;
  const Value x = e.wrap(f32({2, 2}, {1, 2, 3, 5}));
  const Value s0 = e.emit("Softmax", {x}, {Attribute::make_int("axis", 0)});
  const Value s1 = e.emit("Softmax", {x}, {Attribute::make_int("axis", 1)});
  const Tensor& t0 = e.tensor(s0);
  const Tensor& t1 = e.tensor(s1);
  CHECK(std::fabs(t0.scalar_f64(0) + t0.scalar_f64(2) - 1) < 1e-6);  // columns sum to 1
  CHECK(std::fabs(t1.scalar_f64(0) + t1.scalar_f64(1) - 1) < 1e-6);  // rows sum to 1
  CHECK(std::fabs(t0.scalar_f64(0) - t1.scalar_f64(0)) > 0.01);
  const Value d = e.wrap(f64({2}, {0.25, 0.5}));
  const Value sum64 = e.emit("Add", {d, d});
  const Value sum32 = e.emit("Add", {x, x});
  CHECK(e.tensor(sum64).dtype() == DType::kF64);
  CHECK(eagertest::values(e.tensor(sum64)) == std::vector<double>{0.5, 1.0});
  CHECK(eagertest::values(e.tensor(sum32)) == std::vector<double>{2, 4, 6, 10});
  // Fills with many distinct values (ConstantOfShape's value attribute): right values each time.
  for (int i = 0; i < 40; ++i) {
    const Value f = ops::fill_like(e, x, i);
    REQUIRE(e.tensor(f).scalar_f64(3) == i);
  }
  CHECK(e.status().ok());
}

TEST_CASE("eager API: operators, functions and backward against PyTorch", "[eager]") {
  using namespace tsr::eager;
  Context ctx;
  eager::Tensor x = eager::tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}, ctx).requires_grad_();
  eager::Tensor w = eager::tensor<float>({3}, {0.5f, -1, 2}, ctx).requires_grad_();
  // PyTorch 1.13 (/usr/bin/python3): x, w as above with requires_grad=True;
  // loss = (x*w - x/(w+3.0)).mean() + (-x).sum()*0.1; loss.backward(); print(loss, x.grad, w.grad)
  eager::Tensor loss = reduce_mean(x * w - x / (w + 3.0)) + reduce_sum(-x) * 0.1;
  REQUIRE(loss.ok());
  CHECK(loss.shape() == Shape{});
  CHECK(loss.item() == Approx(-0.971428632736206).epsilon(1e-6));
  REQUIRE(loss.backward().ok());
  const std::vector<float> dx = {-0.06428571790456772f, -0.3500000238418579f, 0.20000000298023224f,
                                 -0.06428571790456772f, -0.3500000238418579f, 0.20000000298023224f};
  const std::vector<float> dw = {0.9013605713844299f, 1.4583334922790527f, 1.559999942779541f};
  for (size_t i = 0; i < dx.size(); ++i) CHECK(x.grad().to_vector<float>()[i] == Approx(dx[i]).epsilon(1e-5));
  for (size_t i = 0; i < dw.size(); ++i) CHECK(w.grad().to_vector<float>()[i] == Approx(dw[i]).epsilon(1e-5));
  CHECK(ctx.emitter().tape_size() == 0);  // backward consumed the tape

  // A second backward accumulates into grad(); a non-scalar loss is summed.
  REQUIRE((w * 2.0).backward().ok());
  CHECK(w.grad().to_vector<float>()[0] == Approx(dw[0] + 2).epsilon(1e-5));
  w.zero_grad();
  CHECK_FALSE(w.grad().defined());

  // Comparisons, matmul, shape functions.
  const eager::Tensor a = eager::tensor<float>({2, 2}, {1, 2, 3, 4}, ctx);
  CHECK((a > 2.5).to_vector<int>() == std::vector<int>{0, 0, 1, 1});
  CHECK((a != a).to_vector<int>() == std::vector<int>{0, 0, 0, 0});
  CHECK((a <= eager::tensor<float>({2}, {1, 5}, ctx)).to_vector<int>() == std::vector<int>{1, 1, 0, 1});
  CHECK(matmul(a, a).to_vector<float>() == std::vector<float>{7, 10, 15, 22});
  CHECK(transpose(a).to_vector<float>() == std::vector<float>{1, 3, 2, 4});
  CHECK(reshape(a, {4}).shape() == Shape{4});
  CHECK(concat({a, a}, 0).shape() == Shape{4, 2});
  CHECK(reduce_sum(a, {1}).to_vector<float>() == std::vector<float>{3, 7});
  CHECK(reduce_max(a, {0}, true).shape() == Shape{1, 2});
  CHECK(relu(a - 2.5).to_vector<float>() == std::vector<float>{0, 0, 0.5f, 1.5f});
  CHECK(softmax(a).to_vector<float>()[0] == Approx(1 / (1 + std::exp(1.0))));
  CHECK(cast(a, DType::kI64).dtype() == DType::kI64);
  CHECK(eager::op("Max", {a, eager::full({2}, 2.5, DType::kF32, ctx)}).to_vector<float>() ==
        std::vector<float>{2.5f, 2.5f, 3, 4});
  CHECK((2.0 - a).to_vector<float>() == std::vector<float>{1, 0, -1, -2});
  CHECK(eager::zeros({3}, DType::kF64, ctx).to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK(ctx.status().ok());

  // NoGradGuard; errors poison.
  {
    NoGradGuard guard(ctx);
    const eager::Tensor y = x * 3.0;
    CHECK_FALSE(y.requires_grad());
  }
  const eager::Tensor bad = a + eager::tensor<float>({3}, {1, 2, 3}, ctx);
  CHECK_FALSE(bad.ok());
  CHECK_FALSE((bad * 2.0).ok());
  CHECK_FALSE(ctx.status().ok());
  CHECK_FALSE(bad.backward().ok());
  ctx.clear_status();
  CHECK_FALSE((a + eager::Tensor()).ok());  // an empty operand
  CHECK_FALSE(ctx.status().ok());
}

TEST_CASE("eager API: values are freed with their last handle", "[eager]") {
  using namespace tsr::eager;
  Context ctx;
  {
    eager::Tensor a = eager::tensor<float>({16}, std::vector<float>(16, 1.0f), ctx);
    eager::Tensor c;
    for (int i = 0; i < 100; ++i) c = a + a;
    CHECK(c.item(15) == 2.0);
    CHECK(ctx.emitter().live_values() == 2);
    eager::Tensor w = eager::tensor<float>({2}, {1, 2}, ctx).requires_grad_();
    eager::Tensor l = reduce_sum(w * w);
    REQUIRE(l.backward().ok());
    CHECK(w.grad().to_vector<float>() == std::vector<float>{2, 4});
  }
  CHECK(ctx.emitter().live_values() == 0);
  CHECK(ctx.emitter().tape_size() == 0);
}
