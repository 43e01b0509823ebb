// Elementwise, comparison/logic, Where, Cast and activation ops: inference + CPU kernels.
// Expected values come from numpy (the expression is in a comment) or are derived by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <memory>

#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/passes/infer_types.h"
#include "tests/unit/one_node_test_util.h"

using namespace tsr;
using tsr::test::OneNode;
using tsr::test::run_ok;

namespace {

constexpr float NAN_F = std::numeric_limits<float>::quiet_NaN();
constexpr float INF = std::numeric_limits<float>::infinity();

template <typename T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

void check_f32(const Tensor& t, const std::vector<float>& expect, double eps = 1e-6) {
  REQUIRE(t.dtype() == DType::kF32);
  REQUIRE(t.numel() == static_cast<int64_t>(expect.size()));
  for (size_t i = 0; i < expect.size(); ++i) {
    const float v = t.data<float>()[i];
    INFO("element " << i << ": got " << v << ", expected " << expect[i]);
    if (std::isnan(expect[i])) CHECK(std::isnan(v));
    else if (std::isinf(expect[i])) CHECK(v == expect[i]);
    else CHECK(v == Approx(expect[i]).epsilon(eps).margin(1e-6));
  }
}

Tensor f32(Shape s, std::vector<float> v) { return Tensor::from<float>(s, v); }

}  // namespace

TEST_CASE("Add/Sub/Mul/Div broadcast: scalar, row, column, 4-D vs 1-D and both sides") {
  const Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // np.add(a, 10)
  check_f32(run_ok("Add", {a, f32({}, {10})}), {11, 12, 13, 14, 15, 16});
  // 10 - a  (scalar on the left)
  check_f32(run_ok("Sub", {f32({}, {10}), a}), {9, 8, 7, 6, 5, 4});
  // a * [1, 10, 100]  (row)
  check_f32(run_ok("Mul", {a, f32({3}, {1, 10, 100})}), {1, 20, 300, 4, 50, 600});
  // a / [[1], [2]]  (column)
  check_f32(run_ok("Div", {a, f32({2, 1}, {1, 2})}), {1, 2, 3, 2, 2.5f, 3});
  // np.arange(3).reshape(3,1) - np.array([[10, 20]])  (both sides broadcast) -> [3, 2]
  Tensor both = run_ok("Sub", {f32({3, 1}, {0, 1, 2}), f32({1, 2}, {10, 20})});
  CHECK(both.shape() == Shape{3, 2});
  check_f32(both, {-10, -20, -9, -19, -8, -18});
  // 4-D [2,1,2,2] + 1-D [2]: x + [100, 200] along the last axis
  Tensor x4 = f32({2, 1, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor r4 = run_ok("Add", {x4, f32({2}, {100, 200})});
  CHECK(r4.shape() == Shape{2, 1, 2, 2});
  check_f32(r4, {100, 201, 102, 203, 104, 205, 106, 207});
  // [2,3,1] * [1,1,4] inner scalar runs on the left, contiguous on the right
  Tensor m = run_ok("Mul", {f32({2, 3, 1}, {1, 2, 3, 4, 5, 6}), f32({1, 1, 4}, {1, -1, 0.5f, 2})});
  CHECK(m.shape() == Shape{2, 3, 4});
  // np.array([1..6]).reshape(2,3,1) * [1,-1,.5,2] -> row k = k*[1,-1,.5,2]
  for (int k = 0; k < 6; ++k) {
    CHECK(m.data<float>()[k * 4 + 0] == float(k + 1));
    CHECK(m.data<float>()[k * 4 + 1] == -float(k + 1));
    CHECK(m.data<float>()[k * 4 + 2] == 0.5f * float(k + 1));
    CHECK(m.data<float>()[k * 4 + 3] == 2 * float(k + 1));
  }
}

TEST_CASE("large f32 Add/Max with threads matches the closed form (vector + tail + chunks)") {
  const int64_t n = 100003;  // not a multiple of any lane count or chunk size
  std::vector<float> av(n), bv(n);
  for (int64_t i = 0; i < n; ++i) {
    av[i] = 0.5f * float(i % 1000);
    bv[i] = 1.0f - float(i % 1000);
  }
  for (int threads : {1, 2}) {
    OneNode add("Add", {f32({n}, av), f32({n}, bv)});
    auto r = add.run(threads);
    REQUIRE(r.ok());
    bool ok = true;
    // a + b = 1 - 0.5 * (i % 1000), exact in f32
    for (int64_t i = 0; i < n; ++i) ok &= r->data<float>()[i] == 1.0f - 0.5f * float(i % 1000);
    CHECK(ok);
    OneNode mx("Max", {f32({n}, av), f32({1}, {100.0f})});
    auto rm = mx.run(threads);
    REQUIRE(rm.ok());
    ok = true;
    for (int64_t i = 0; i < n; ++i) ok &= rm->data<float>()[i] == std::max(av[i], 100.0f);
    CHECK(ok);
  }
}

TEST_CASE("Max/Min/Clip propagate NaN, Inf behaves as an ordinary extreme") {
  // np.maximum([nan, 1, 2, -inf], [0, nan, 3, 5]) -> [nan, nan, 3, 5]
  check_f32(run_ok("Max", {f32({4}, {NAN_F, 1, 2, -INF}), f32({4}, {0, NAN_F, 3, 5})}), {NAN_F, NAN_F, 3, 5});
  // np.minimum(...) -> [nan, nan, 2, -inf]
  check_f32(run_ok("Min", {f32({4}, {NAN_F, 1, 2, -INF}), f32({4}, {0, NAN_F, 3, 5})}), {NAN_F, NAN_F, 2, -INF});
  // np.clip([nan, -2, 0.5, 3, inf, -inf], 0, 1) -> [nan, 0, 0.5, 1, 1, 0]
  std::vector<float> cx = {NAN_F, -2, 0.5f, 3, INF, -INF};
  check_f32(run_ok("Clip", {f32({6}, cx), f32({}, {0}), f32({}, {1})}), {NAN_F, 0, 0.5f, 1, 1, 0});
  // only max given (min omitted): np.minimum(x, 1)
  check_f32(run_ok("Clip", {f32({6}, cx), Tensor(), f32({}, {1})}), {NAN_F, -2, 0.5f, 1, 1, -INF});
  // int32 Clip with min only: np.clip([-5, 3, 9], 0, None)
  CHECK(values<int32_t>(run_ok("Clip", {Tensor::from<int32_t>({3}, {-5, 3, 9}), Tensor::scalar<int32_t>(0)})) ==
        std::vector<int32_t>{0, 3, 9});
}

TEST_CASE("variadic Max/Min/Sum/Mean broadcast all inputs") {
  const Tensor a = f32({2, 2}, {1, 5, 3, 2});
  const Tensor b = f32({2}, {4, 0});
  const Tensor c = f32({}, {2});
  // np.maximum(np.maximum(a, b), c) -> [[4,5],[4,2]]
  check_f32(run_ok("Max", {a, b, c}), {4, 5, 4, 2});
  check_f32(run_ok("Min", {a, b, c}), {1, 0, 2, 0});
  // a + b + c -> [[7,7],[9,4]]; mean = /3
  check_f32(run_ok("Sum", {a, b, c}), {7, 7, 9, 4});
  check_f32(run_ok("Mean", {a, b, c}), {7.f / 3, 7.f / 3, 3, 4.f / 3});
  // one input: identity
  check_f32(run_ok("Sum", {a}), {1, 5, 3, 2});
}

TEST_CASE("integer Div truncates, Mod follows fmod, division by zero is an error") {
  auto i32 = [](std::vector<int32_t> v) { return Tensor::from<int32_t>({static_cast<int64_t>(v.size())}, v); };
  // C/onnxruntime truncation: [7,-7,7,-7] / [2,2,-2,-2] -> [3,-3,-3,3]
  CHECK(values<int32_t>(run_ok("Div", {i32({7, -7, 7, -7}), i32({2, 2, -2, -2})})) == std::vector<int32_t>{3, -3, -3, 3});
  // np.mod -> sign of divisor: [1, 1, -1, -1]
  CHECK(values<int32_t>(run_ok("Mod", {i32({7, -7, 7, -7}), i32({2, 2, -2, -2})})) == std::vector<int32_t>{1, 1, -1, -1});
  // np.fmod -> sign of dividend: [1, -1, 1, -1]
  CHECK(values<int32_t>(run_ok("Mod", {i32({7, -7, 7, -7}), i32({2, 2, -2, -2})}, {ir::Attribute::make_int("fmod", 1)})) ==
        std::vector<int32_t>{1, -1, 1, -1});
  // np.fmod([5.5, -5.5], 2) -> [1.5, -1.5]
  check_f32(run_ok("Mod", {f32({2}, {5.5f, -5.5f}), f32({}, {2})}, {ir::Attribute::make_int("fmod", 1)}), {1.5f, -1.5f});
  // INT_MIN / -1 wraps rather than trapping
  CHECK(values<int32_t>(run_ok("Div", {i32({INT32_MIN}), i32({-1})})) == std::vector<int32_t>{INT32_MIN});
  // int64 wrapping add: INT64_MAX + 1 -> INT64_MIN
  CHECK(values<int64_t>(run_ok("Add", {Tensor::scalar<int64_t>(INT64_MAX), Tensor::scalar<int64_t>(1)})) ==
        std::vector<int64_t>{INT64_MIN});
  // u8 arithmetic wraps: np.uint8(250) + np.uint8(10) -> 4
  CHECK(values<uint8_t>(run_ok("Add", {Tensor::scalar<uint8_t>(250), Tensor::scalar<uint8_t>(10)})) == std::vector<uint8_t>{4});

  OneNode z("Div", {i32({1, 2}), i32({1, 0})});
  REQUIRE(z.infer_status.ok());
  auto r = z.run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("by zero") != std::string::npos);
  CHECK(r.status().message().find("(Div \"n0\")") != std::string::npos);
  // Float Mod with fmod=0 is invalid per the spec.
  OneNode fm("Mod", {f32({1}, {1}), f32({1}, {1})});
  CHECK_FALSE(fm.infer_status.ok());
}

TEST_CASE("comparisons, logic and Where give bool outputs with broadcasting") {
  auto i64 = [](Shape s, std::vector<int64_t> v) { return Tensor::from<int64_t>(s, v); };
  // np.greater([[1,5],[3,3]], [2,3]) -> [[F,T],[T,F]]
  Tensor g = run_ok("Greater", {i64({2, 2}, {1, 5, 3, 3}), i64({2}, {2, 3})});
  REQUIRE(g.dtype() == DType::kBool);
  CHECK(values<bool>(g) == std::vector<bool>{false, true, true, false});
  CHECK(values<bool>(run_ok("LessOrEqual", {i64({2, 2}, {1, 5, 3, 3}), i64({2}, {2, 3})})) ==
        std::vector<bool>{true, false, false, true});
  CHECK(values<bool>(run_ok("GreaterOrEqual", {f32({3}, {1, NAN_F, 3}), f32({}, {1})})) == std::vector<bool>{true, false, true});
  CHECK(values<bool>(run_ok("Less", {f32({3}, {1, NAN_F, 3}), f32({}, {2})})) == std::vector<bool>{true, false, false});
  CHECK(values<bool>(run_ok("Equal", {f32({3}, {1, NAN_F, 3}), f32({3}, {1, NAN_F, 4})})) == std::vector<bool>{true, false, false});
  const Tensor p = Tensor::from<bool>({4}, {false, false, true, true});
  const Tensor q = Tensor::from<bool>({4}, {false, true, false, true});
  CHECK(values<bool>(run_ok("And", {p, q})) == std::vector<bool>{false, false, false, true});
  CHECK(values<bool>(run_ok("Or", {p, q})) == std::vector<bool>{false, true, true, true});
  CHECK(values<bool>(run_ok("Xor", {p, q})) == std::vector<bool>{false, true, true, false});
  CHECK(values<bool>(run_ok("Not", {p})) == std::vector<bool>{true, true, false, false});
  CHECK(values<bool>(run_ok("Equal", {p, Tensor::scalar<bool>(true)})) == std::vector<bool>{false, false, true, true});
  // np.where([[True],[False]], [[1,2,3]], -1.0) -> [[1,2,3],[-1,-1,-1]]
  Tensor w = run_ok("Where", {Tensor::from<bool>({2, 1}, {true, false}), f32({1, 3}, {1, 2, 3}), f32({}, {-1})});
  CHECK(w.shape() == Shape{2, 3});
  check_f32(w, {1, 2, 3, -1, -1, -1});
}

TEST_CASE("Where: contiguous and scalar-operand runs (the vectorized selects) match np.where") {
  // 37 elements: whole vectors and a tail; cond every third element, x = i, y = -i.
  const int64_t n = 37;
  std::vector<float> xs(n), ys(n);
  std::vector<uint8_t> cs(n);
  for (int64_t i = 0; i < n; ++i) {
    xs[i] = static_cast<float>(i);
    ys[i] = -static_cast<float>(i) - 0.5f;
    cs[i] = i % 3 == 0;
  }
  Tensor c = *Tensor::empty(DType::kBool, {n});
  for (int64_t i = 0; i < n; ++i) c.mut_data<bool>()[i] = cs[i] != 0;
  const Tensor x = f32({n}, xs), y = f32({n}, ys), zero = f32({}, {0.f});
  std::vector<float> all(n), x0(n), y0(n);
  for (int64_t i = 0; i < n; ++i) {
    all[i] = cs[i] ? xs[i] : ys[i];
    x0[i] = cs[i] ? 0.f : ys[i];
    y0[i] = cs[i] ? xs[i] : 0.f;
  }
  check_f32(run_ok("Where", {c, x, y}), all);
  check_f32(run_ok("Where", {c, zero, y}), x0);
  check_f32(run_ok("Where", {c, x, zero}), y0);
  // Both values broadcast scalars; NaN passes through the selected side.
  std::vector<float> both(n), nan_x(n);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 0; i < n; ++i) {
    both[i] = cs[i] ? 2.5f : 0.f;
    nan_x[i] = cs[i] ? nan : ys[i];
  }
  check_f32(run_ok("Where", {c, f32({}, {2.5f}), zero}), both);
  const Tensor w = run_ok("Where", {c, f32({}, {nan}), y});
  for (int64_t i = 0; i < n; ++i) CHECK((cs[i] ? std::isnan(w.data<float>()[i]) : w.data<float>()[i] == nan_x[i]));
}

TEST_CASE("Pow with mixed exponent dtype, integer Pow, BitShift, Bitwise*, PRelu") {
  // np.power(np.float32([2, 4, 9]), np.int64([3, -1, 0])) -> [8, 0.25, 1]
  check_f32(run_ok("Pow", {f32({3}, {2, 4, 9}), Tensor::from<int64_t>({3}, {3, -1, 0})}), {8, 0.25f, 1});
  // np.power(np.float32([[1,2],[3,4]]), 2.0)
  check_f32(run_ok("Pow", {f32({2, 2}, {1, 2, 3, 4}), f32({}, {2})}), {1, 4, 9, 16});
  // x ** 0.5 -> sqrt
  check_f32(run_ok("Pow", {f32({2}, {4, 2}), f32({}, {0.5f})}), {2, 1.41421356f});
  // np.power(np.int32([2, -3, 5]), np.int32([10, 3, 0])) -> [1024, -27, 1]
  CHECK(values<int32_t>(run_ok("Pow", {Tensor::from<int32_t>({3}, {2, -3, 5}), Tensor::from<int32_t>({3}, {10, 3, 0})})) ==
        std::vector<int32_t>{1024, -27, 1});
  // np.left_shift(np.uint8([1, 3, 255]), [2, 1, 9]) -> [4, 6, 0] (shift >= 8 gives 0)
  CHECK(values<uint8_t>(run_ok("BitShift", {Tensor::from<uint8_t>({3}, {1, 3, 255}), Tensor::from<uint8_t>({3}, {2, 1, 9})},
                               {ir::Attribute::make_string("direction", "LEFT")})) == std::vector<uint8_t>{4, 6, 0});
  CHECK(values<uint32_t>(run_ok("BitShift", {Tensor::from<uint32_t>({2}, {16, 255}), Tensor::scalar<uint32_t>(4)},
                                {ir::Attribute::make_string("direction", "RIGHT")})) == std::vector<uint32_t>{1, 15});
  CHECK(values<int16_t>(run_ok("BitwiseAnd", {Tensor::from<int16_t>({2}, {12, -1}), Tensor::scalar<int16_t>(10)})) ==
        std::vector<int16_t>{8, 10});
  CHECK(values<int16_t>(run_ok("BitwiseXor", {Tensor::from<int16_t>({2}, {12, -1}), Tensor::scalar<int16_t>(10)})) ==
        std::vector<int16_t>{6, -11});
  CHECK(values<int16_t>(run_ok("BitwiseNot", {Tensor::from<int16_t>({2}, {0, 5})})) == std::vector<int16_t>{-1, -6});
  // PRelu X [2,2,1] with slope [2,1,1]: channel 0 slope 0.1, channel 1 slope 2
  check_f32(run_ok("PRelu", {f32({2, 2, 1}, {-1, 2, -3, 4}), f32({2, 1, 1}, {0.1f, 2})}), {-0.1f, 2, -6, 4});
}

TEST_CASE("unary math matches numpy (f32)") {
  const Tensor x = f32({11}, {-3.5f, -1, -0.25f, 0, 0.3f, 0.5f, 1, 2.5f, 4, 10, -10});
  struct Case {
    const char* op;
    std::vector<float> expect;  // numpy, float64 evaluation rounded to f32 (see test header)
  };
  const Case cases[] = {
      {"Abs", {3.5f, 1, 0.25f, 0, 0.3f, 0.5f, 1, 2.5f, 4, 10, 10}},
      {"Neg", {3.5f, 1, 0.25f, -0.f, -0.3f, -0.5f, -1, -2.5f, -4, -10, 10}},
      {"Sign", {-1, -1, -1, 0, 1, 1, 1, 1, 1, 1, -1}},
      {"Ceil", {-3, -1, -0.f, 0, 1, 1, 1, 3, 4, 10, -10}},
      {"Floor", {-4, -1, -1, 0, 0, 0, 1, 2, 4, 10, -10}},
      // np.exp(x)
      {"Exp", {0.0301973838f, 0.36787945f, 0.778800786f, 1, 1.34985888f, 1.64872122f, 2.71828175f, 12.1824942f, 54.5981483f, 22026.4648f, 4.5399931e-05f}},
      // math.erf per element
      {"Erf", {-0.999999285f, -0.842700779f, -0.276326388f, 0, 0.328626782f, 0.520499885f, 0.842700779f, 0.999593019f, 1, 1, -1}},
      {"Sin", {0.350783229f, -0.841470957f, -0.247403964f, 0, 0.295520216f, 0.47942555f, 0.841470957f, 0.598472118f, -0.756802499f, -0.54402113f, 0.54402113f}},
      {"Cos", {-0.93645668f, 0.540302277f, 0.968912423f, 1, 0.955336511f, 0.87758255f, 0.540302277f, -0.801143587f, -0.653643608f, -0.839071512f, -0.839071512f}},
      {"Tan", {-0.374585629f, -1.55740774f, -0.255341917f, 0, 0.309336275f, 0.546302497f, 1.55740774f, -0.747022271f, 1.1578213f, 0.648360848f, -0.648360848f}},
      {"Atan", {-1.29249668f, -0.785398185f, -0.244978666f, 0, 0.291456819f, 0.463647604f, 0.785398185f, 1.19028997f, 1.3258177f, 1.47112763f, -1.47112763f}},
      {"Sinh", {-16.5426273f, -1.17520118f, -0.252612323f, 0, 0.304520309f, 0.521095276f, 1.17520118f, 6.05020428f, 27.289917f, 11013.2324f, -11013.2324f}},
      {"Cosh", {16.5728245f, 1.54308069f, 1.03141308f, 1, 1.04533851f, 1.12762594f, 1.54308069f, 6.13228941f, 27.3082333f, 11013.2334f, 11013.2334f}},
      {"Asinh", {-1.96572042f, -0.881373584f, -0.24746646f, 0, 0.295673072f, 0.481211811f, 0.881373584f, 1.6472311f, 2.0947125f, 2.99822307f, -2.99822307f}},
  };
  for (const Case& c : cases) {
    INFO(c.op);
    check_f32(run_ok(c.op, {x}), c.expect, 2e-6);
  }
  const Tensor u = f32({5}, {-0.9f, -0.5f, 0, 0.3f, 0.7f});
  check_f32(run_ok("Asin", {u}), {-1.11976945f, -0.52359879f, 0, 0.304692656f, 0.77539748f});    // np.arcsin
  check_f32(run_ok("Acos", {u}), {2.69056582f, 2.09439516f, 1.57079637f, 1.26610363f, 0.795398831f});  // np.arccos
  check_f32(run_ok("Atanh", {u}), {-1.47221935f, -0.549306154f, 0, 0.309519619f, 0.86730051f});  // np.arctanh
  const Tensor p = f32({5}, {1, 1.5f, 3, 10, 100});
  check_f32(run_ok("Acosh", {p}), {0, 0.962423623f, 1.76274717f, 2.99322295f, 5.29829216f});
  check_f32(run_ok("Log", {p}), {0, 0.405465096f, 1.09861231f, 2.30258512f, 4.60517025f});
  check_f32(run_ok("Sqrt", {p}), {1, 1.22474492f, 1.73205078f, 3.1622777f, 10});
  check_f32(run_ok("Reciprocal", {p}), {1, 0.666666687f, 0.333333343f, 0.100000001f, 0.00999999978f});
  // np.round (half to even): [0.5, 1.5, 2.5, -0.5, -1.5, 2.4] -> [0, 2, 2, -0, -2, 2]
  check_f32(run_ok("Round", {f32({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f})}), {0, 2, 2, -0.f, -2, 2});
  // Exp edge cases: exp(nan) = nan, exp(100) = inf, exp(-200) = 0
  check_f32(run_ok("Exp", {f32({4}, {NAN_F, 100, -200, 88})}), {NAN_F, INF, 0, 1.65163625e38f}, 1e-5);
  CHECK(values<bool>(run_ok("IsNaN", {f32({3}, {NAN_F, INF, 1})})) == std::vector<bool>{true, false, false});
  const Tensor inf = f32({4}, {INF, -INF, NAN_F, 1});
  CHECK(values<bool>(run_ok("IsInf", {inf})) == std::vector<bool>{true, true, false, false});
  CHECK(values<bool>(run_ok("IsInf", {inf}, {ir::Attribute::make_int("detect_positive", 0)})) ==
        std::vector<bool>{false, true, false, false});
  CHECK(values<bool>(run_ok("IsInf", {inf}, {ir::Attribute::make_int("detect_negative", 0)})) ==
        std::vector<bool>{true, false, false, false});
  // integer Abs/Neg/Sign
  CHECK(values<int8_t>(run_ok("Abs", {Tensor::from<int8_t>({3}, {-5, 0, 7})})) == std::vector<int8_t>{5, 0, 7});
  CHECK(values<int64_t>(run_ok("Neg", {Tensor::from<int64_t>({2}, {-5, 7})})) == std::vector<int64_t>{5, -7});
  CHECK(values<int32_t>(run_ok("Sign", {Tensor::from<int32_t>({3}, {-5, 0, 7})})) == std::vector<int32_t>{-1, 0, 1});
}

TEST_CASE("activations match numpy (f32 vector path and f64 scalar path)") {
  const std::vector<float> xv = {-3.5f, -1, -0.25f, 0, 0.3f, 0.5f, 1, 2.5f, 4, 10, -10};
  const Tensor x = f32({11}, xv);
  using ir::Attribute;
  struct Case {
    const char* op;
    std::vector<ir::Attribute> attrs;
    std::vector<float> expect;
  };
  const std::vector<Case> cases = {
      {"Relu", {}, {0, 0, 0, 0, 0.3f, 0.5f, 1, 2.5f, 4, 10, 0}},
      // np.where(x < 0, 0.1 * x, x)
      {"LeakyRelu", {Attribute::make_float("alpha", 0.1)}, {-0.35f, -0.1f, -0.025f, 0, 0.3f, 0.5f, 1, 2.5f, 4, 10, -1}},
      // 1 / (1 + np.exp(-x))
      {"Sigmoid", {}, {0.0293122306f, 0.268941432f, 0.437823504f, 0.5f, 0.574442506f, 0.622459352f, 0.731058598f, 0.924141824f, 0.982013762f, 0.999954581f, 4.53978682e-05f}},
      // np.clip(0.2 * x + 0.5, 0, 1)
      {"HardSigmoid", {}, {0, 0.3f, 0.45f, 0.5f, 0.56f, 0.6f, 0.7f, 1, 1, 1, 0}},
      // x * np.clip(x / 6 + 0.5, 0, 1)
      {"HardSwish", {}, {0, -0.333333343f, -0.114583336f, 0, 0.165000007f, 0.291666657f, 0.666666687f, 2.29166675f, 4, 10, 0}},
      {"Tanh", {}, {-0.998177886f, -0.761594176f, -0.244918659f, 0, 0.291312635f, 0.462117165f, 0.761594176f, 0.986614287f, 0.999329329f, 1, -1}},
      // np.where(x < 0, np.expm1(x), x)
      {"Elu", {}, {-0.969802618f, -0.63212055f, -0.221199214f, 0, 0.3f, 0.5f, 1, 2.5f, 4, 10, -0.999954581f}},
      {"Selu", {}, {-1.70500934f, -1.11133075f, -0.388890207f, 0, 0.315210313f, 0.525350511f, 1.05070102f, 2.62675261f, 4.20280409f, 10.5070105f, -1.75801957f}},
      // np.maximum(0, x) + np.minimum(0, 2 * np.expm1(x / 2))
      {"Celu", {Attribute::make_float("alpha", 2.0)}, {-1.65245211f, -0.786938667f, -0.235006198f, 0, 0.3f, 0.5f, 1, 2.5f, 4, 10, -1.98652411f}},
      // np.log1p(np.exp(x))
      {"Softplus", {}, {0.0297504179f, 0.313261688f, 0.575939417f, 0.693147182f, 0.854355276f, 0.974076986f, 1.31326163f, 2.57888985f, 4.01814985f, 10.0000458f, 4.53988978e-05f}},
      {"Softsign", {}, {-0.777777791f, -0.5f, -0.2f, 0, 0.230769247f, 0.333333343f, 0.5f, 0.714285731f, 0.8f, 0.909090936f, -0.909090936f}},
      {"ThresholdedRelu", {}, {0, 0, 0, 0, 0, 0, 0, 2.5f, 4, 10, 0}},
      // x * np.tanh(np.log1p(np.exp(x)))
      {"Mish", {}, {-0.104095757f, -0.30340147f, -0.129926965f, 0, 0.208001375f, 0.375245214f, 0.865098417f, 2.47139239f, 3.99741292f, 10, -0.000453988992f}},
  };
  for (const Case& c : cases) {
    INFO(c.op);
    check_f32(run_ok(c.op, {x}, c.attrs), c.expect, 2e-6);
    // The same op on f64 (scalar path) agrees.
    std::vector<double> xd(xv.begin(), xv.end());
    Tensor r = run_ok(c.op, {Tensor::from<double>({11}, xd)}, c.attrs);
    REQUIRE(r.dtype() == DType::kF64);
    for (size_t i = 0; i < xd.size(); ++i) CHECK(r.data<double>()[i] == Approx(c.expect[i]).epsilon(1e-6).margin(1e-6));
  }
  // NaN passes through Relu/Sigmoid/Tanh/HardSigmoid on the vector path.
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Exp"}) {
    INFO(op);
    Tensor r = run_ok(op, {f32({9}, {NAN_F, 1, 1, 1, 1, 1, 1, 1, NAN_F})});
    CHECK(std::isnan(r.data<float>()[0]));
    CHECK(std::isnan(r.data<float>()[8]));
  }
  // Sigmoid saturates without overflow: sigmoid(-100) ~ 3.7e-44, sigmoid(100) = 1
  check_f32(run_ok("Sigmoid", {f32({2}, {-100, 100})}), {3.72007598e-44f, 1});
}

TEST_CASE("Gelu (none and tanh) matches torch.nn.functional.gelu, GeluGrad matches its derivative") {
  // Reference values from:
  //   /usr/bin/python3 -c "import torch; x = torch.tensor([-3.0, -1.5, -0.5, 0.0, 0.3, 1.0, 2.5, 4.0],
  //     dtype=torch.float64); print(torch.nn.functional.gelu(x).tolist());
  //     print(torch.nn.functional.gelu(x, approximate='tanh').tolist())"
  const std::vector<double> xv = {-3.0, -1.5, -0.5, 0.0, 0.3, 1.0, 2.5, 4.0};
  const std::vector<double> exact = {-0.00404969409489031, -0.10021080190328704, -0.15426876936299344, 0.0,
                                     0.1853734266566858,   0.841344746068543,    2.4844758366855597,   3.9998733150326675};
  const std::vector<double> tanh_approx = {-0.0036373920817729943, -0.10042842301976707, -0.15428599017485606, 0.0,
                                           0.18537092354275922,    0.8411919906082768,   2.484915733910001,
                                           3.9999297540518075};
  using ir::Attribute;
  for (const bool tanh_form : {false, true}) {
    INFO("approximate=" << (tanh_form ? "tanh" : "none"));
    const std::vector<double>& expect = tanh_form ? tanh_approx : exact;
    std::vector<ir::Attribute> attrs;
    if (tanh_form) attrs.push_back(Attribute::make_string("approximate", "tanh"));
    // f64 (scalar path).
    Tensor r = run_ok("Gelu", {Tensor::from<double>({8}, xv)}, attrs);
    REQUIRE(r.dtype() == DType::kF64);
    for (size_t i = 0; i < xv.size(); ++i) CHECK(r.data<double>()[i] == Approx(expect[i]).epsilon(1e-12).margin(1e-14));
    // f32, 3 copies (vector body + tail).
    std::vector<float> x3, e3;
    for (int k = 0; k < 3; ++k)
      for (size_t i = 0; i < xv.size(); ++i) {
        x3.push_back(static_cast<float>(xv[i]));
        e3.push_back(static_cast<float>(expect[i]));
      }
    check_f32(run_ok("Gelu", {f32({24}, x3)}, attrs), e3, 2e-6);
    // GeluGrad(dY, X) against a central difference of the f64 Gelu: dY * (G(x+h) - G(x-h)) / 2h.
    const double h = 1e-5;
    std::vector<double> xp, xm;
    for (double v : xv) {
      xp.push_back(v + h);
      xm.push_back(v - h);
    }
    const Tensor gp = run_ok("Gelu", {Tensor::from<double>({8}, xp)}, attrs);
    const Tensor gm = run_ok("Gelu", {Tensor::from<double>({8}, xm)}, attrs);
    const std::vector<double> dy = {1.5, -2, 0.5, 1, 3, -1, 0.25, 2};
    const Tensor dx = run_ok("GeluGrad", {Tensor::from<double>({8}, dy), Tensor::from<double>({8}, xv)}, attrs);
    std::vector<float> dy3, fd3;
    for (size_t i = 0; i < xv.size(); ++i) {
      const double fd = dy[i] * (gp.data<double>()[i] - gm.data<double>()[i]) / (2 * h);
      CHECK(dx.data<double>()[i] == Approx(fd).epsilon(1e-7).margin(1e-9));
    }
    for (int k = 0; k < 3; ++k)
      for (size_t i = 0; i < xv.size(); ++i) {
        dy3.push_back(static_cast<float>(dy[i]));
        fd3.push_back(static_cast<float>(dx.data<double>()[i]));
      }
    check_f32(run_ok("GeluGrad", {f32({24}, dy3), f32({24}, x3)}, attrs), fd3, 1e-5);
  }
  // An unknown approximation is a model error.
  OneNode bad("Gelu", {f32({2}, {1, 2})}, {Attribute::make_string("approximate", "erf")});
  CHECK(bad.infer_status.code() == StatusCode::kInvalidModel);
}

TEST_CASE("f16, bf16 and f64 arithmetic go through float") {
  auto h = [](std::vector<float> v) {
    std::vector<Half> o;
    for (float f : v) o.push_back(Half{f32_to_f16(f)});
    return Tensor::from<Half>({static_cast<int64_t>(v.size())}, o);
  };
  Tensor r = run_ok("Add", {h({1.5f, -2, 1000}), h({0.25f, 2, 0.5f})});
  REQUIRE(r.dtype() == DType::kF16);
  // f16 spacing in [512, 1024) is 0.5, so 1000.5 is exact
  CHECK(f16_to_f32(r.data<Half>()[0].bits) == 1.75f);
  CHECK(f16_to_f32(r.data<Half>()[1].bits) == 0.0f);
  CHECK(f16_to_f32(r.data<Half>()[2].bits) == 1000.5f);
  std::vector<BFloat16> bv = {BFloat16{f32_to_bf16(3)}, BFloat16{f32_to_bf16(-0.5f)}};
  Tensor rb = run_ok("Mul", {Tensor::from<BFloat16>({2}, bv), Tensor::from<BFloat16>({}, {BFloat16{f32_to_bf16(2)}})});
  REQUIRE(rb.dtype() == DType::kBF16);
  CHECK(bf16_to_f32(rb.data<BFloat16>()[0].bits) == 6.0f);
  CHECK(bf16_to_f32(rb.data<BFloat16>()[1].bits) == -1.0f);
  Tensor rd = run_ok("Div", {Tensor::from<double>({2}, {1, 2}), Tensor::scalar<double>(3)});
  CHECK(values<double>(rd) == std::vector<double>{1.0 / 3, 2.0 / 3});
}

TEST_CASE("Cast and CastLike between dtypes") {
  using ir::Attribute;
  auto to = [](DType d) { return std::vector<Attribute>{Attribute::make_int("to", static_cast<int64_t>(d))}; };
  // np.float32([1.9, -1.9, 0.5]).astype(np.int32) -> [1, -1, 0]
  CHECK(values<int32_t>(run_ok("Cast", {f32({3}, {1.9f, -1.9f, 0.5f})}, to(DType::kI32))) == std::vector<int32_t>{1, -1, 0});
  // numpy on x86-64: np.float32([300, -1, 3e9]).astype(np.int8) -> [44, -1, 0]
  CHECK(values<int8_t>(run_ok("Cast", {f32({3}, {300, -1, 3e9f})}, to(DType::kI8))) == std::vector<int8_t>{44, -1, 0});
  // np.float32([-1, 1.9, 255.9]).astype(np.uint8) -> [255, 1, 255]
  CHECK(values<uint8_t>(run_ok("Cast", {f32({3}, {-1, 1.9f, 255.9f})}, to(DType::kU8))) == std::vector<uint8_t>{255, 1, 255});
  // np.float64([3e9]).astype(np.int32) -> [-2147483648]
  CHECK(values<int32_t>(run_ok("Cast", {Tensor::scalar<double>(3e9)}, to(DType::kI32))) == std::vector<int32_t>{INT32_MIN});
  CHECK(values<bool>(run_ok("Cast", {Tensor::from<int64_t>({3}, {0, -2, 7})}, to(DType::kBool))) ==
        std::vector<bool>{false, true, true});
  check_f32(run_ok("Cast", {Tensor::from<bool>({2}, {true, false})}, to(DType::kF32)), {1, 0});
  // int64 -> int16 wraps: np.int64([70000]).astype(np.int16) -> [4464]
  CHECK(values<int16_t>(run_ok("Cast", {Tensor::scalar<int64_t>(70000)}, to(DType::kI16))) == std::vector<int16_t>{4464});
  Tensor h = run_ok("Cast", {f32({2}, {1.0f / 3, 65520})}, to(DType::kF16));
  REQUIRE(h.dtype() == DType::kF16);
  CHECK(h.data<Half>()[0].bits == 0x3555);  // np.float16(1/3).view(np.uint16) == 0x3555
  CHECK(h.data<Half>()[1].bits == 0x7c00);  // 65520 rounds to +inf in f16
  Tensor back = run_ok("Cast", {h}, to(DType::kF64));
  CHECK(back.data<double>()[0] == 0.333251953125);
  Tensor cl = run_ok("CastLike", {f32({2}, {2.7f, -3.2f}), Tensor::scalar<int64_t>(0)});
  CHECK(values<int64_t>(cl) == std::vector<int64_t>{2, -3});
  OneNode bad("Cast", {f32({1}, {1})}, {Attribute::make_int("to", 99)});
  CHECK_FALSE(bad.infer_status.ok());
}

Tensor strings(const Shape& shape, const std::vector<std::string>& v) {
  Tensor t = Tensor::empty(DType::kString, shape).value();
  for (size_t i = 0; i < v.size(); ++i) t.mut_data<std::string>()[i] = v[i];
  return t;
}

TEST_CASE("Cast between numbers and strings") {
  using ir::Attribute;
  auto to = [](DType d) { return std::vector<Attribute>{Attribute::make_int("to", static_cast<int64_t>(d))}; };
  // np.array([...], np.float32).astype(np.str_) (numpy 1.24)
  Tensor s = run_ok("Cast", {f32({10}, {1e-5f, 1e16f, 123456.0f, -0.0f, 0.0001f, 1.5e20f, 3.4028235e38f, 100.0f, 0.1f, -2.5e-7f})},
                    to(DType::kString));
  REQUIRE(s.dtype() == DType::kString);
  CHECK(values<std::string>(s) == std::vector<std::string>{"1e-05", "1e+16", "123456.0", "-0.0", "1e-04", "1.5e+20",
                                                           "3.4028235e+38", "100.0", "0.1", "-2.5e-07"});
  Tensor special = run_ok("Cast", {f32({3}, {NAN_F, INF, -INF})}, to(DType::kString));
  CHECK(values<std::string>(special) == std::vector<std::string>{"nan", "inf", "-inf"});
  // np.array([0.1, 1e-7, 1e22]).astype(np.str_) (f64: shortest double digits)
  Tensor d = run_ok("Cast", {Tensor::from<double>({3}, {0.1, 1e-7, 1e22})}, to(DType::kString));
  CHECK(values<std::string>(d) == std::vector<std::string>{"0.1", "1e-07", "1e+22"});
  // np.float16([0.1, 65504, 6e-08]).astype(np.str_) -> ['0.1', '65500.0', '6e-08']
  Tensor h16 = run_ok("Cast", {f32({3}, {0.1f, 65504.0f, 6e-08f})}, to(DType::kF16));
  CHECK(values<std::string>(run_ok("Cast", {h16}, to(DType::kString))) == std::vector<std::string>{"0.1", "65500.0", "6e-08"});
  Tensor i = run_ok("Cast", {Tensor::from<int8_t>({2}, {-5, 7})}, to(DType::kString));
  CHECK(values<std::string>(i) == std::vector<std::string>{"-5", "7"});

  // ONNX Cast spec: plain / scientific notation, case-insensitive "INF", "+INF", "-INF", "NaN".
  Tensor strs = strings({6}, {"1e-5", "1E8", "+INF", "-inf", "nan", "-3.25"});
  Tensor f = run_ok("Cast", {strs}, to(DType::kF32));
  const float* pf = f.data<float>();
  CHECK(pf[0] == 1e-5f);
  CHECK(pf[1] == 1e8f);
  CHECK(pf[2] == INF);
  CHECK(pf[3] == -INF);
  CHECK(std::isnan(pf[4]));
  CHECK(pf[5] == -3.25f);
  // "100.5" -> int 100 (spec example); 2^53 + 1 parses exactly into i64.
  CHECK(values<int32_t>(run_ok("Cast", {strings({1}, {"100.5"})}, to(DType::kI32))) ==
        std::vector<int32_t>{100});
  CHECK(values<int64_t>(run_ok("Cast", {strings({1}, {"9007199254740993"})}, to(DType::kI64))) ==
        std::vector<int64_t>{9007199254740993});
  OneNode bad("Cast", {strings({1}, {"abc"})}, to(DType::kF32));
  REQUIRE(bad.infer_status.ok());
  CHECK_FALSE(bad.run().ok());
}

TEST_CASE("elementwise inference: dynamic dims, dtype errors, broadcast errors name the node and shapes") {
  OneNode dyn("Add", {f32({2, 3}, {0, 0, 0, 0, 0, 0}), f32({3}, {0, 0, 0})}, {}, {}, {{-1, 3}, {3}});
  REQUIRE(dyn.infer_status.ok());
  CHECK(dyn.out_info().shape == Shape{-1, 3});
  CHECK(dyn.out_info().dtype == DType::kF32);
  auto r = dyn.run();
  REQUIRE(r.ok());
  CHECK(r->shape() == Shape{2, 3});

  OneNode cmp("Less", {f32({2}, {0, 0}), f32({1}, {0})});
  REQUIRE(cmp.infer_status.ok());
  CHECK(cmp.out_info().dtype == DType::kBool);

  OneNode bad("Add", {f32({2, 3}, {0, 0, 0, 0, 0, 0}), f32({4}, {0, 0, 0, 0})});
  REQUIRE_FALSE(bad.infer_status.ok());
  const std::string& m = bad.infer_status.message();
  CHECK(m.find("graph[0].node[0] (Add \"n0\")") != std::string::npos);
  CHECK(m.find("[2, 3]") != std::string::npos);
  CHECK(m.find("[4]") != std::string::npos);

  OneNode mixed("Mul", {f32({1}, {0}), Tensor::from<int32_t>({1}, {0})});
  REQUIRE_FALSE(mixed.infer_status.ok());
  CHECK(mixed.infer_status.message().find("input[1]") != std::string::npos);
  CHECK(mixed.infer_status.message().find("i32") != std::string::npos);

  OneNode wrong("Sqrt", {Tensor::from<int32_t>({1}, {4})});
  REQUIRE_FALSE(wrong.infer_status.ok());
  CHECK(wrong.infer_status.message().find("input[0]: dtype i32") != std::string::npos);

  OneNode where_bad("Where", {f32({1}, {1}), f32({1}, {1}), f32({1}, {1})});
  CHECK_FALSE(where_bad.infer_status.ok());
  OneNode logic_bad("And", {f32({1}, {1}), f32({1}, {1})});
  CHECK_FALSE(logic_bad.infer_status.ok());
  OneNode clip_bad("Clip", {f32({2}, {1, 2}), f32({2}, {0, 0})});
  CHECK_FALSE(clip_bad.infer_status.ok());
  OneNode shift_bad("BitShift", {Tensor::from<uint8_t>({1}, {1}), Tensor::from<uint8_t>({1}, {1})},
                    {ir::Attribute::make_string("direction", "UP")});
  CHECK_FALSE(shift_bad.infer_status.ok());
}

TEST_CASE("ClipGrad (ReLU6's gradient) passes dY at the bounds and at NaN, zero outside, as Clip's masks") {
  // 37 values (vector body + tail): below min, at min, inside, at max, above max, NaN, -0.
  const std::vector<float> pattern = {-1.0f, 0.0f, 0.5f, 6.0f, 6.5f, NAN_F, -0.0f, 3.0f, -INF, INF};
  std::vector<float> xv, dyv, expect;
  for (int i = 0; i < 37; ++i) {
    const float x = pattern[static_cast<size_t>(i) % pattern.size()], dy = 0.25f * static_cast<float>(i + 1);
    xv.push_back(x);
    dyv.push_back(dy);
    expect.push_back(x < 0.0f || x > 6.0f ? 0.0f : dy);  // NaN compares false: dY passes
  }
  const Tensor lo = Tensor::from<float>({}, {0.0f}), hi = Tensor::from<float>({}, {6.0f});
  check_f32(run_ok("ClipGrad", {f32({37}, dyv), f32({37}, xv), lo, hi}), expect, 0);
  // f64 takes the scalar path.
  const Tensor d = run_ok("ClipGrad", {Tensor::from<double>({3}, {1, 2, 3}), Tensor::from<double>({3}, {-1, 0, 7}),
                                       Tensor::from<double>({}, {0}), Tensor::from<double>({}, {6})});
  CHECK(values<double>(d) == std::vector<double>{0, 2, 0});
  // Shapes of dY and X must agree; min and max are scalars.
  CHECK(OneNode("ClipGrad", {f32({2}, {1, 2}), f32({3}, {1, 2, 3}), lo, hi}).infer_status.ok() == false);
  CHECK(OneNode("ClipGrad", {f32({2}, {1, 2}), f32({2}, {1, 2}), f32({2}, {0, 0}), hi}).infer_status.ok() == false);
}
