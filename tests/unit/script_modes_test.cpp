// The script language's eager and trace modes against convert mode, on the seeds' examples
// (examples/script/*.py): eager results against numpy, the trace's fixed branch and its warning,
// the converted If, the converted graph's gradients (passes::gradient_model) against the eager
// tape's (EagerEmitter::gradients) on the same function, and @static functions called from
// eager and traced code.
#include <catch2/catch.hpp>

#include "core/frontend/eager_emitter.h"
#include "core/passes/autodiff.h"
#include "tests/unit/script_test_util.h"

using namespace tsr;
using namespace tsr::frontend::script;
using namespace tsr::scripttest;

namespace {

// d output_0 / d wrt by the graph pass on the converted graph, run with a Session.
std::vector<Tensor> converted_gradients(const std::string& file, const std::string& text, const std::string& entry,
                                        const std::vector<std::pair<std::string, Tensor>>& inputs,
                                        const std::vector<std::string>& wrt) {
  ScriptOptions o;
  o.entry = entry;
  o.mode = Mode::kConvert;
  o.inputs = inputs;
  auto r = run_script(file, text, o);
  INFO((r.ok() ? std::string() : r.status().message()));
  REQUIRE(r.ok());
  passes::GradientModelOptions go;
  go.wrt = wrt;
  auto gm = passes::gradient_model(*r->model, go);
  INFO((gm.ok() ? std::string() : gm.status().message()));
  REQUIRE(gm.ok());
  auto s = Session::create(std::make_shared<ir::Model>(std::move(gm).value()));
  REQUIRE(s.ok());
  std::vector<Tensor> feeds;
  for (const auto& in : inputs) feeds.push_back(in.second);
  auto out = (*s)->run(feeds);
  REQUIRE(out.ok());
  return std::vector<Tensor>(out->end() - static_cast<std::ptrdiff_t>(wrt.size()), out->end());
}

// d output_0 / d wrt through the eager tape of the same script run in eager mode.
std::vector<Tensor> eager_gradients(const std::string& file, const std::string& text, const std::string& entry,
                                    const std::vector<std::pair<std::string, Tensor>>& inputs,
                                    const std::vector<std::string>& wrt) {
  frontend::EagerEmitter e;
  ScriptOptions o;
  o.entry = entry;
  o.mode = Mode::kEager;
  o.inputs = inputs;
  o.eager = &e;
  o.requires_grad = wrt;
  auto r = run_script(file, text, o);
  INFO((r.ok() ? std::string() : r.status().message()));
  REQUIRE(r.ok());
  std::vector<ops::Value> leaves;
  for (const std::string& name : wrt)
    for (size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k].first == name) leaves.push_back(r->input_values[k]);
  REQUIRE(leaves.size() == wrt.size());
  auto g = e.gradients(r->output_values[0], leaves);
  INFO((g.ok() ? std::string() : g.status().message()));
  REQUIRE(g.ok());
  std::vector<Tensor> out;
  for (const ops::Value& v : *g) out.push_back(e.tensor(v));
  return out;
}

void check_close(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol) {
  REQUIRE(a.size() == b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    REQUIRE(a[k].shape() == b[k].shape());
    for (int64_t i = 0; i < a[k].numel(); ++i) CHECK(a[k].scalar_f64(i) == Approx(b[k].scalar_f64(i)).margin(tol));
  }
}

}  // namespace

TEST_CASE("script eager: model(X, flag) runs the branch the flag picks, for both flags", "[script]") {
  const ScriptResult pos = run("model.py", Mode::kEager, "model", {{"X", kX}, {"flag", kPos}});
  const ScriptResult neg = run("model.py", Mode::kEager, "model", {{"X", kX}, {"flag", kNeg}});
  CHECK(!pos.model);  // eager mode makes no graph
  CHECK(values(pos.outputs[0]) == kThen);
  CHECK(values(neg.outputs[0]) == kElse);
  CHECK(pos.warnings.empty());
}

TEST_CASE("script trace: the trace fixes the branch taken, warns where, and is wrong for the other flag", "[script]") {
  const ScriptResult pos = run("model.py", Mode::kTrace, "model", {{"X", kX}, {"flag", kPos}});
  REQUIRE(pos.model);
  CHECK(count_op(*pos.model, "If") == 0);
  CHECK(count_op(*pos.model, "MatMul") == 1);
  CHECK(values(pos.outputs[0]) == kThen);
  REQUIRE(pos.warnings.size() == 1);
  // model.py line 10 is "    if flag > 0:"; column 13 is the comparison.
  CHECK(pos.warnings[0].rfind("model.py:10:13: warning: tracing fixed this branch (the condition was true)", 0) == 0);
  CHECK(run_model(*pos.model, {kX, kPos}) == kThen);
  // The traced graph ignores the flag: for flag <= 0 it still computes the then-branch.
  CHECK(run_model(*pos.model, {kX, kNeg}) == kThen);
  CHECK(run_model(*pos.model, {kX, kNeg}) != kElse);

  const ScriptResult neg = run("model.py", Mode::kTrace, "model", {{"X", kX}, {"flag", kNeg}});
  CHECK(count_op(*neg.model, "If") == 0);
  REQUIRE(neg.warnings.size() == 1);
  CHECK(neg.warnings[0].find("(the condition was false)") != std::string::npos);
  CHECK(run_model(*neg.model, {kX, kPos}) == kElse);  // wrong the other way round
}

TEST_CASE("script: eager, trace and convert agree on the traced flag, only convert is right for both", "[script]") {
  for (const Tensor& flag : {kPos, kNeg}) {
    const bool positive = flag.scalar_f64(0) > 0;
    const std::vector<float>& right = positive ? kThen : kElse;
    const std::vector<float>& other = positive ? kElse : kThen;
    const Tensor& other_flag = positive ? kNeg : kPos;
    const ScriptResult eager = run("model.py", Mode::kEager, "model", {{"X", kX}, {"flag", flag}});
    const ScriptResult trace = run("model.py", Mode::kTrace, "model", {{"X", kX}, {"flag", flag}});
    const ScriptResult conv = run("model.py", Mode::kConvert, "model", {{"X", kX}, {"flag", flag}});
    CHECK(values(eager.outputs[0]) == right);
    CHECK(values(trace.outputs[0]) == right);
    CHECK(values(conv.outputs[0]) == right);
    CHECK(count_op(*conv.model, "If") == 1);
    CHECK(conv.warnings.empty());
    CHECK(run_model(*conv.model, {kX, other_flag}) == other);
    CHECK(run_model(*trace.model, {kX, other_flag}) == right);
  }
}

TEST_CASE("script: gradients of the converted graph equal the eager tape's", "[script]") {
  SECTION("model.py (If) with respect to X, against numpy") {
    // numpy: d sum(relu(X @ W + b)) / dX = ((X @ W + b) > 0) @ W.T
    //   /usr/bin/python3 -c "import numpy as np; X=np.array([[1,2],[3,-4.]]); W1=np.array([[1,2,0],[0,1,-1.]]);
    //   W2=np.array([[-1,0,1],[2,-2,.5]]); b=np.array([.5,-1,.25]);
    //   [print((((X@W+b)>0)*1.)@W.T) for W in (W1,W2)]"
    const std::vector<float> then_dx = {3, 1, 3, 0}, else_dx = {0, 2.5f, 1, -1.5f};
    for (const Tensor& flag : {kPos, kNeg}) {
      const std::vector<std::pair<std::string, Tensor>> in = {{"X", kX}, {"flag", flag}};
      const std::vector<Tensor> g = converted_gradients("model.py", example("model.py"), "model", in, {"X"});
      const std::vector<Tensor> e = eager_gradients("model.py", example("model.py"), "model", in, {"X"});
      check_close(g, e, 1e-6);
      CHECK(values(e[0]) == (flag.scalar_f64(0) > 0 ? then_dx : else_dx));
    }
  }
  SECTION("an If on f64 inputs, with respect to two inputs") {
    const char* text =
        "def f(x, w, flag):\n"
        "    if flag > 0:\n"
        "        y = tanh(x * w) + w\n"
        "    else:\n"
        "        y = x / (w * w + 1.0)\n"
        "    return reduce_sum(y * y)\n";
    for (double flag : {1.0, -1.0}) {
      const std::vector<std::pair<std::string, Tensor>> in = {{"x", Tensor::from<double>({3}, {0.5, -1.0, 2.0})},
                                                              {"w", Tensor::from<double>({3}, {1.5, 0.25, -0.75})},
                                                              {"flag", Tensor::scalar<double>(flag)}};
      check_close(converted_gradients("t.py", text, "f", in, {"x", "w"}),
                  eager_gradients("t.py", text, "f", in, {"x", "w"}), 1e-12);
    }
  }
  SECTION("while_loop.py (Loop) with respect to x") {
    const std::vector<std::pair<std::string, Tensor>> in = {{"x", kX}, {"limit", Tensor::scalar<float>(100.0f)}};
    const std::string text = example("while_loop.py");
    const std::vector<Tensor> g = converted_gradients("while_loop.py", text, "double_until", in, {"x"});
    const std::vector<Tensor> e = eager_gradients("while_loop.py", text, "double_until", in, {"x"});
    check_close(g, e, 1e-6);
    CHECK(values(e[0]) == std::vector<float>{64, 64, 64, 64});  // six doublings
  }
}

TEST_CASE("script eager: a @static function called from eager code", "[script]") {
  ScriptOptions o;
  o.entry = "main";
  o.mode = Mode::kEager;
  o.inputs = {{"x", kX}, {"y", kX}};
  std::ostringstream printed;
  o.out = &printed;
  auto r = run_script("add_and_relu.py", example("add_and_relu.py"), o);
  INFO((r.ok() ? std::string() : r.status().message()));
  REQUIRE(r.ok());
  // relu(x + y) = relu(2x) = [2, 4, 6, 0], then relu([2, 4, 6, 0] - x) = [1, 2, 3, 4].
  CHECK(values(r->outputs[0]) == std::vector<float>{1, 2, 3, 4});
  CHECK(printed.str().find("add_and_relu:") != std::string::npos);

  // A @static function with an If runs as one converted graph: right for both flags, and the
  // trace of its caller keeps the body as ordinary code with a warning.
  const char* text =
      "@static\n"
      "def pick(x, flag):\n"
      "    if flag > 0:\n"
      "        y = x * 2.0\n"
      "    else:\n"
      "        y = -x\n"
      "    return y\n"
      "def main(x, flag):\n"
      "    return pick(x, flag) + 1.0\n";
  for (const Tensor& flag : {kPos, kNeg}) {
    o.inputs = {{"x", kX}, {"flag", flag}};
    auto e = run_script("t.py", text, o);
    REQUIRE(e.ok());
    CHECK(values(e->outputs[0]) ==
          (flag.scalar_f64(0) > 0 ? std::vector<float>{3, 5, 7, -7} : std::vector<float>{0, -1, -2, 5}));
  }
  o.mode = Mode::kTrace;
  auto t = run_script("t.py", text, o);
  REQUIRE(t.ok());
  CHECK(values(t->outputs[0]) == std::vector<float>{0, -1, -2, 5});
  bool static_warning = false;
  for (const std::string& w : t->warnings)
    static_warning |= w.find("@static pick has control flow") != std::string::npos;
  CHECK(static_warning);
}

TEST_CASE("script ints: Python's floor division and modulo signs, 64-bit overflow is an error", "[script]") {
  // Expected values are Python's: 7 // -1 == -7, -7 // 2 == -4, -7 % 3 == 2, 7 % -3 == -2.
  const std::string src =
      "def main():\n"
      "    return 7 // -1, -7 // 2, -7 % 3, 7 % -3, 2 ** 62, 3 ** 39, (-2) ** 63\n";
  ScriptOptions o;
  o.entry = "main";
  std::ostringstream sink;
  o.out = &sink;
  auto r = frontend::script::run_script("ints.py", src, o);
  INFO((r.ok() ? std::string() : r.status().message()));
  REQUIRE(r.ok());
  std::vector<int64_t> got;
  for (const Tensor& t : r->outputs) got.push_back(t.to_i64_vector().at(0));
  CHECK(got == std::vector<int64_t>{-7, -4, 2, -2, int64_t{1} << 62, 4052555153018976267LL, INT64_MIN});
  for (const char* expr : {"2 ** 63", "9223372036854775807 + 1", "-9223372036854775807 - 2",
                           "4294967296 * 4294967296", "(-9223372036854775807 - 1) // -1", "9 ** 1000000000000000000"}) {
    auto bad = frontend::script::run_script("ints.py", std::string("def main():\n    return ") + expr + "\n", o);
    INFO(expr);
    REQUIRE(!bad.ok());
    CHECK(bad.status().message().find("integer overflow") != std::string::npos);
  }
}
