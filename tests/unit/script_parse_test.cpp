// The script language's front end: diagnostics with file:line:col and a caret line, and the
// constructs outside the subset named in their errors.
#include <catch2/catch.hpp>

#include "core/frontend/script/lexer.h"
#include "core/frontend/script/script.h"

using namespace tsr;
using namespace tsr::frontend::script;

namespace {

Status parse_error(const std::string& text) {
  auto m = parse_module("t.py", text);
  return m.ok() ? Status() : m.status();
}

Status convert_error(const std::string& text, const std::string& entry = "f") {
  ScriptOptions o;
  o.entry = entry;
  o.mode = Mode::kConvert;
  o.inputs = {{"x", Tensor::from<float>({2}, {1, 2})}};
  auto r = run_script("t.py", text, o);
  return r.ok() ? Status() : r.status();
}

}  // namespace

TEST_CASE("script parse: a syntax error gives file:line:col, the line and a caret", "[script]") {
  const Status s = parse_error("def f(x)\n    return x\n");
  REQUIRE(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == "t.py:1:9: error: expected ':' after the function header, found end of line\n"
                       "    def f(x)\n"
                       "            ^");
}

TEST_CASE("script parse: caret under the column of a bad token inside an expression", "[script]") {
  const Status s = parse_error("def f(x):\n    y = x + * 2\n");
  CHECK(s.message() == "t.py:2:13: error: expected an expression, found '*'\n"
                       "        y = x + * 2\n"
                       "                ^");
}

TEST_CASE("script parse: indentation errors", "[script]") {
  CHECK(parse_error("def f(x):\n        y = x\n    return y\n").message().find("unindent does not match") != std::string::npos);
  CHECK(parse_error("def f(x):\nreturn x\n").message().find("expected an indented block") != std::string::npos);
  CHECK(parse_error("x = 1\n  y = 2\n").message().find("unexpected indent") != std::string::npos);
}

TEST_CASE("script parse: unsupported constructs are named", "[script]") {
  struct Case {
    const char* text;
    const char* names;
  };
  const Case cases[] = {
      {"class A:\n    pass\n", "class definitions are not supported"},
      {"f = lambda x: x\n", "lambda expressions are not supported"},
      {"import numpy\n", "imports"},
      {"def f(x):\n    with x:\n        pass\n", "with statements are not supported"},
      {"def f(x):\n    try:\n        pass\n", "exceptions (try/except/raise) are not supported"},
      {"y = [i for i in range(3)]\n", "list comprehensions are not supported"},
      {"def f(x):\n    return x[1:2]\n", "slices"},
      {"def f(x):\n    return x.shape\n", "attribute and method accesses ('.shape'"},
      {"def f(x):\n    while x:\n        break\n", "break/continue are not supported"},
      {"d = {1: 2}\n", "dicts and sets are not supported"},
      {"y = 1 if x else 2\n", "conditional expressions"},
      {"y = a | b\n", "bitwise operators are not supported"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const Status s = parse_error(c.text);
    CHECK(s.code() == StatusCode::kUnsupported);
    CHECK(s.message().find(c.names) != std::string::npos);
    CHECK(s.message().rfind("t.py:", 0) == 0);
  }
}

TEST_CASE("script parse: a bracketed expression over lines ends its statement at the closing line", "[script]") {
  // The newline after the closing bracket ends the assignment; it used to be read as a blank
  // line, so the def after it was "expected end of line".
  CHECK(parse_error("W = [[1.0, 2.0],\n     [3.0, 4.0]]\n\ndef f(x):\n    return x\n").ok());
  CHECK(parse_error("y = (1 +\n 2)\nz = 3\n").ok());
}

TEST_CASE("script parse: precedence follows Python", "[script]") {
  // -2 ** 2 == -4, 2 + 3 * 4 ** 2 // 5 == 11, comparisons chain, not binds looser than ==.
  ScriptOptions o;
  o.entry = "f";
  o.mode = Mode::kConvert;
  const char* text =
      "def f():\n"
      "    a = -2 ** 2\n"
      "    b = 2 + 3 * 4 ** 2 // 5\n"
      "    c = 1 < 2 < 3 and not 1 == 2\n"
      "    d = 7 % -3\n"
      "    e = 2 ** -1\n"
      "    return tensor([a, b, c, d, e], dtype=\"f64\")\n";
  auto r = run_script("t.py", text, o);
  REQUIRE(r.ok());
  const Tensor& t = r->outputs[0];
  CHECK(t.scalar_f64(0) == -4);
  CHECK(t.scalar_f64(1) == 11);
  CHECK(t.scalar_f64(2) == 1);
  CHECK(t.scalar_f64(3) == -2);  // Python's modulo takes the divisor's sign
  CHECK(t.scalar_f64(4) == 0.5);
}

TEST_CASE("script runtime errors carry the location and a caret", "[script]") {
  const Status s = convert_error("W1 = ones([2, 2])\ndef f(x):\n    y = x @ W3\n    return y\n");
  REQUIRE(s.code() == StatusCode::kNotFound);
  CHECK(s.message() == "t.py:3:13: error: unknown name 'W3'\n"
                       "        y = x @ W3\n"
                       "                ^");
  // An op error (shape mismatch from inference) at the operator.
  const Status m = convert_error("def f(x):\n    return x @ ones([3, 2])\n");
  CHECK(m.message().rfind("t.py:2:14: error: ", 0) == 0);
  CHECK(m.message().find("MatMul") != std::string::npos);
  // An unknown attribute lists the op's attributes.
  const Status a = convert_error("def f(x):\n    return softmax(x, axes=0)\n");
  CHECK(a.message().find("Softmax has no attribute 'axes' (its attributes: axis") != std::string::npos);
}

TEST_CASE("script convert: a variable assigned in one branch only is an error where it is read", "[script]") {
  const char* used =
      "def f(x):\n"
      "    if reduce_sum(x) > 0:\n"
      "        z = x * 2.0\n"
      "    return z\n";
  const Status s = convert_error(used);
  REQUIRE(!s.ok());
  CHECK(s.message().rfind("t.py:4:12: error: 'z' is assigned in only one branch of the if at t.py:2:5", 0) == 0);
  // Dead afterwards: fine.
  const char* dead =
      "def f(x):\n"
      "    y = x\n"
      "    if reduce_sum(x) > 0:\n"
      "        z = x * 2.0\n"
      "        y = z + 1.0\n"
      "    return y\n";
  CHECK(convert_error(dead).ok());
}

TEST_CASE("script: every op is callable by snake_case and lowercase names", "[script]") {
  CHECK(find_script_op("matmul")->name == "MatMul");
  CHECK(find_script_op("mat_mul")->name == "MatMul");
  CHECK(find_script_op("reduce_sum")->name == "ReduceSum");
  CHECK(find_script_op("global_average_pool")->name == "GlobalAveragePool");
  CHECK(find_script_op("gather_nd")->name == "GatherND");
  CHECK(find_script_op("relu")->name == "Relu");
  CHECK(find_script_op("if") == nullptr);
  CHECK(script_op_names().size() >= 2 * 100);
}

TEST_CASE("script lexer: each token's byte span is its text in the source", "[script]") {
  // The playground colours the editor by these spans; strings keep their quotes in the span
  // (the token's text is the decoded value), comments and NEWLINE/INDENT/DEDENT have none.
  const std::string text = "def f(x):  # c\n    y = x * 2.5e1 + len('a#b')\n    return y\n";
  auto tokens = tokenize(SourceFile("t.py", text));
  REQUIRE(tokens.ok());
  std::vector<std::string> spans;
  for (const Token& t : *tokens)
    if (t.end > t.begin) spans.push_back(text.substr(t.begin, t.end - t.begin));
    else CHECK(t.begin == 0);
  const std::vector<std::string> want = {"def", "f", "(", "x", ")", ":", "y", "=", "x", "*", "2.5e1",
                                         "+", "len", "(", "'a#b'", ")", "return", "y"};
  CHECK(spans == want);
  CHECK(is_keyword("def"));
  CHECK(is_keyword("lambda"));  // reserved though outside the subset
  CHECK_FALSE(is_keyword("len"));
}
