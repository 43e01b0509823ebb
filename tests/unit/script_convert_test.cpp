// The script language's three modes on the seeds' examples (examples/script/*.py): converted
// graphs keep every branch, loops become Loop nodes, unrolled and rolled stacks agree, and the
// gradients of a converted graph match finite differences. Eager and trace: script_modes_test.cpp.
#include <catch2/catch.hpp>

#include "tests/unit/grad_check.h"
#include "tests/unit/script_test_util.h"

using namespace tsr;
using namespace tsr::frontend::script;
using namespace tsr::scripttest;

TEST_CASE("script convert: model(X, flag) becomes an If, right for both flags", "[script]") {
  const ScriptResult r = run("model.py", Mode::kConvert, "model", {{"X", kX}, {"flag", kPos}});
  REQUIRE(r.model);
  CHECK(count_op(*r.model, "If") == 1);
  CHECK(values(r.outputs[0]) == kThen);
  CHECK(run_model(*r.model, {kX, kPos}) == kThen);
  CHECK(run_model(*r.model, {kX, kNeg}) == kElse);
}

TEST_CASE("script convert: a while loop on a tensor condition becomes a Loop", "[script]") {
  const ScriptResult r = run("while_loop.py", Mode::kConvert, "double_until",
                             {{"x", kX}, {"limit", Tensor::scalar<float>(100.0f)}});
  CHECK(count_op(*r.model, "Loop") == 1);
  // sum(x) = 2 doubles to 128 >= 100 after 6 steps.
  CHECK(values(r.outputs[0]) == std::vector<float>{64, 128, 192, -256});
  CHECK(r.outputs[1].scalar_i64(0) == 6);
  // The same graph with another limit runs another number of iterations.
  auto s = Session::create(r.model);
  REQUIRE(s.ok());
  auto out = (*s)->run({kX, Tensor::scalar<float>(10.0f)});
  REQUIRE(out.ok());
  CHECK((*out)[1].scalar_i64(0) == 3);
}

TEST_CASE("script convert: the transformer-style stack converts with and without unrolling", "[script]") {
  std::vector<float> ws(3 * 4 * 4);
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = 0.05f * static_cast<float>((i * 7) % 11) - 0.25f;
  const Tensor X = Tensor::from<float>({2, 4}, {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, -0.8f});
  const Tensor Ws = Tensor::from<float>({3, 4, 4}, ws);
  const Tensor gains = Tensor::from<float>({3, 1}, {0.5f, -1.0f, 2.0f});
  const std::vector<std::pair<std::string, Tensor>> in = {{"X", X}, {"Ws", Ws}, {"gains", gains}};
  const ScriptResult unrolled = run("transformer_stack.py", Mode::kConvert, "stack", in, true);
  const ScriptResult rolled = run("transformer_stack.py", Mode::kConvert, "stack", in, false);
  CHECK(count_op(*unrolled.model, "Loop") == 0);
  CHECK(count_op(*unrolled.model, "Softmax") == 3);
  CHECK(count_op(*rolled.model, "Loop") == 1);
  CHECK(count_op(*rolled.model, "Softmax") == 1);
  const std::vector<float> a = values(unrolled.outputs[0]), b = values(rolled.outputs[0]);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(1e-6));
}

TEST_CASE("script convert: gradients of a converted If graph match finite differences", "[script]") {
  const char* text =
      "def f(x, w, flag):\n"
      "    if flag > 0:\n"
      "        y = x * w + w\n"
      "    else:\n"
      "        y = x - w * w\n"
      "    return reduce_sum(y * y)\n";
  for (double flag : {1.0, -1.0}) {
    ScriptOptions o;
    o.entry = "f";
    o.mode = Mode::kConvert;
    const Tensor x = Tensor::from<double>({3}, {0.5, -1.0, 2.0});
    const Tensor w = Tensor::from<double>({3}, {1.5, 0.25, -0.75});
    o.inputs = {{"x", x}, {"w", w}, {"flag", Tensor::scalar<double>(flag)}};
    auto r = run_script("t.py", text, o);
    REQUIRE(r.ok());
    CHECK(count_op(*r->model, "If") == 1);
    INFO("flag " << flag);
    CHECK(gradcheck::check_model(*r->model, {x, w, Tensor::scalar<double>(flag)}, {"x", "w"}) == "");
  }
}

TEST_CASE("script convert: gradients through a converted Loop match finite differences", "[script]") {
  const char* text =
      "def f(x, n):\n"
      "    h = x\n"
      "    for i in range(n):\n"
      "        h = h * x + 1.0\n"
      "    return reduce_sum(h)\n";
  ScriptOptions o;
  o.entry = "f";
  o.mode = Mode::kConvert;
  const Tensor x = Tensor::from<double>({2}, {0.5, -0.75});
  o.inputs = {{"x", x}, {"n", Tensor::scalar<int64_t>(3)}};
  auto r = run_script("t.py", text, o);
  REQUIRE(r.ok());
  CHECK(count_op(*r->model, "Loop") == 1);
  CHECK(gradcheck::check_model(*r->model, {x, Tensor::scalar<int64_t>(3)}, {"x"}) == "");
}

TEST_CASE("script convert: @static functions inline, host loops unroll, returns in both branches", "[script]") {
  const ScriptResult r = run("add_and_relu.py", Mode::kConvert, "main", {{"x", kX}, {"y", kX}});
  CHECK(values(r.outputs[0]) == std::vector<float>{1, 2, 3, 4});  // relu(relu(2x) - x)
  ScriptOptions o;
  o.entry = "f";
  o.mode = Mode::kConvert;
  o.inputs = {{"x", kX}};
  const char* text =
      "def f(x):\n"
      "    if reduce_sum(x) > 0:\n"
      "        return x * 2.0, 1\n"
      "    return -x, 2\n";
  auto ret = run_script("t.py", text, o);
  REQUIRE(ret.ok());
  CHECK(count_op(*ret->model, "If") == 1);
  CHECK(values(ret->outputs[0]) == std::vector<float>{2, 4, 6, -8});  // sum(x) = 2 > 0
  CHECK(ret->outputs[1].scalar_i64(0) == 1);
  CHECK(run_model(*ret->model, {Tensor::from<float>({2, 2}, {-1, -2, -3, 4})}) == std::vector<float>{1, 2, 3, -4});
}
