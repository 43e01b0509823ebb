// Gradients through Scan (core/passes/autodiff_control_flow.cpp: scan_vjp), checked against
// central finite differences for every combination of scan axes and directions, with several
// states/scan inputs, non-float states and outputs, and nested control flow (Scan in If, Loop in
// Scan, Scan in Scan); and against PyTorch's autograd (tests/autodiff/torch_reference.py,
// program "scan_reverse"). All values are float64 unless said otherwise.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include "tessera/session.h"
#include "core/io/npy.h"
#include "core/passes/verify_model.h"
#include "core/ops/graph_builder.h"
#include "core/passes/autodiff.h"
#include "tests/unit/grad_check.h"

using namespace tsr;
using ir::Attribute;
using ops::GraphBuilder;
using ops::Value;

namespace {

using BodyFn = std::function<std::vector<Value>(GraphBuilder&, const std::vector<Value>&)>;

// A new subgraph of `m` with inputs of the given types and outputs fn(inputs).
int32_t subgraph(ir::Model& m, const std::vector<std::pair<DType, Shape>>& types, const BodyFn& fn) {
  m.graphs.emplace_back();
  const auto gi = static_cast<int32_t>(m.graphs.size() - 1);
  m.graphs.back().name = str_cat("body", gi);
  GraphBuilder g(m, gi);
  std::vector<Value> args;
  for (size_t k = 0; k < types.size(); ++k) args.push_back(g.input(str_cat("arg", k), types[k].first, types[k].second));
  for (const Value& v : fn(g, args)) g.output(v);
  REQUIRE(g.status().ok());
  return gi;
}

struct ScanAttrs {
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
};

std::vector<Value> scan(GraphBuilder& b, const std::vector<Value>& inputs, size_t num_outputs, int32_t body, int64_t m,
                        int64_t captures, const ScanAttrs& a) {
  std::vector<Attribute> attrs = {Attribute::make_graph("body", body), Attribute::make_int("num_scan_inputs", m),
                                  Attribute::make_int("num_captures", captures)};
  if (!a.in_axes.empty()) attrs.push_back(Attribute::make_ints("scan_input_axes", a.in_axes));
  if (!a.in_dirs.empty()) attrs.push_back(Attribute::make_ints("scan_input_directions", a.in_dirs));
  if (!a.out_axes.empty()) attrs.push_back(Attribute::make_ints("scan_output_axes", a.out_axes));
  if (!a.out_dirs.empty()) attrs.push_back(Attribute::make_ints("scan_output_directions", a.out_dirs));
  return b.op_n("Scan", inputs, num_outputs, attrs);
}

Value sum_all(GraphBuilder& b, Value v) { return b.op("ReduceSum", {v}, {Attribute::make_int("keepdims", 0)}); }
Value sq_sum(GraphBuilder& b, Value v) { return sum_all(b, b.op("Mul", {v, v})); }
Value cube_sum(GraphBuilder& b, Value v) { return sum_all(b, b.op("Mul", {b.op("Mul", {v, v}), v})); }

// s' = s * w + x_t;  y_t = s' * x_t - w;  loss = sum(s_final^2) + sum(ys^3).
// xs: [L, 2] scanned along axis 0, or [2, L] along axis 1 / -1.
ir::Model recurrence(DType dt, const Shape& xs_shape, const ScanAttrs& a) {
  ir::Model m;
  GraphBuilder b(m);
  const Value s0 = b.input("s0", dt, {2}), xs = b.input("xs", dt, xs_shape), w = b.input("w", dt, {2});
  const int32_t body = subgraph(m, {{dt, {2}}, {dt, {2}}, {dt, {2}}}, [](GraphBuilder& g, const std::vector<Value>& v) {
    const Value s1 = g.op("Add", {g.op("Mul", {v[0], v[2]}), v[1]});
    return std::vector<Value>{s1, g.op("Sub", {g.op("Mul", {s1, v[1]}), v[2]})};
  });
  const auto r = scan(b, {s0, xs, w}, 2, body, 1, 1, a);
  b.output(b.op("Add", {sq_sum(b, r[0]), cube_sum(b, r[1])}), "loss");
  b.output(r[1], "ys");
  REQUIRE(b.status().ok());
  return m;
}

Tensor u(const Shape& shape, uint64_t seed) { return gradcheck::uniform(shape, seed, -1.0, 1.0); }

}  // namespace

TEST_CASE("gradient of Scan: every scan axis and direction", "[grad][autodiff][scan]") {
  for (int64_t in_axis : {0, 1, -1})
    for (int64_t in_dir : {0, 1})
      for (int64_t out_axis : {0, 1, -2})
        for (int64_t out_dir : {0, 1}) {
          const Shape xs_shape = in_axis == 0 ? Shape{3, 2} : Shape{2, 3};
          INFO("in_axis=" << in_axis << " in_dir=" << in_dir << " out_axis=" << out_axis << " out_dir=" << out_dir);
          const ir::Model m = recurrence(DType::kF64, xs_shape, {{in_axis}, {in_dir}, {out_axis}, {out_dir}});
          CHECK(gradcheck::check_model(m, {u({2}, 1), u(xs_shape, 2), u({2}, 3)}, {"s0", "xs", "w"}) == "");
        }
}

TEST_CASE("gradient of Scan: default attributes, f32 agrees with f64", "[grad][autodiff][scan]") {
  const ir::Model m64 = recurrence(DType::kF64, {4, 2}, {});
  const std::vector<Tensor> feeds = {u({2}, 4), u({4, 2}, 5), u({2}, 6)};
  CHECK(gradcheck::check_model(m64, feeds, {"s0", "xs", "w"}) == "");
  // The same program in float32: gradients within float32 rounding of the float64 ones.
  auto run = [](const ir::Model& m, const std::vector<Tensor>& f) {
    auto gm = passes::gradient_model(m, {"", {"s0", "xs", "w"}});
    INFO(gm.status().to_string());
    REQUIRE(gm.ok());
    REQUIRE(passes::verify_model(*gm).ok());
    auto s = Session::create(std::make_shared<ir::Model>(std::move(gm).value()));
    REQUIRE(s.ok());
    auto out = (*s)->run(f);
    INFO(out.status().to_string());
    REQUIRE(out.ok());
    return std::move(out).value();
  };
  std::vector<Tensor> feeds32;
  for (const Tensor& t : feeds) {
    std::vector<float> d;
    for (int64_t i = 0; i < t.numel(); ++i) d.push_back(static_cast<float>(t.scalar_f64(i)));
    feeds32.push_back(Tensor::from<float>(t.shape(), d));
  }
  const auto g64 = run(m64, feeds), g32 = run(recurrence(DType::kF32, {4, 2}, {}), feeds32);
  for (size_t k = 2; k < g64.size(); ++k) {
    REQUIRE(g32[k].dtype() == DType::kF32);
    for (int64_t i = 0; i < g64[k].numel(); ++i)
      CHECK(g32[k].scalar_f64(i) == Approx(g64[k].scalar_f64(i)).epsilon(1e-4).margin(1e-5));
  }
}

TEST_CASE("gradient of Scan: two states, two scan inputs, an integer state and output", "[grad][autodiff][scan]") {
  // States (a [2], b [], n i64); scan inputs x [3, 2] (axis 0, reversed), z [2, 3] (axis 1);
  // a' = a * z_t + x_t / (1 + b^2);  b' = b + sum(a' * x_t);  n' = n + 1;
  // outputs a, b, n, scan (a' - z_t, n'); loss = sum(a^2) + b^2 + sum(ys^3) (the i64 ones ignored).
  ir::Model m;
  GraphBuilder b(m);
  const DType f = DType::kF64;
  const Value a0 = b.input("a0", f, {2}), b0 = b.input("b0", f, {}), n0 = b.input("n0", DType::kI64, {});
  const Value x = b.input("x", f, {3, 2}), z = b.input("z", f, {2, 3});
  const int32_t body = subgraph(m, {{f, {2}}, {f, {}}, {DType::kI64, {}}, {f, {2}}, {f, {2}}},
                                [](GraphBuilder& g, const std::vector<Value>& v) {
                                  const Value one = g.constant(Tensor::scalar(1.0));
                                  const Value den = g.op("Add", {one, g.op("Mul", {v[1], v[1]})});
                                  const Value a1 = g.op("Add", {g.op("Mul", {v[0], v[4]}), g.op("Div", {v[3], den})});
                                  const Value b1 = g.op("Add", {v[1], sum_all(g, g.op("Mul", {a1, v[3]}))});
                                  const Value n1 = g.op("Add", {v[2], g.constant(Tensor::scalar<int64_t>(1))});
                                  return std::vector<Value>{a1, b1, n1, g.op("Sub", {a1, v[4]}), n1};
                                });
  const auto r = scan(b, {a0, b0, n0, x, z}, 5, body, 2, 0, {{0, 1}, {1, 0}, {}, {}});
  const Value loss = b.op("Add", {b.op("Add", {sq_sum(b, r[0]), b.op("Mul", {r[1], r[1]})}), cube_sum(b, r[3])});
  b.output(loss, "loss");
  b.output(r[2], "n");
  b.output(r[4], "ns");
  REQUIRE(b.status().ok());
  const std::vector<Tensor> feeds = {u({2}, 7), Tensor::scalar(0.3), Tensor::scalar<int64_t>(5), u({3, 2}, 8), u({2, 3}, 9)};
  CHECK(gradcheck::check_model(m, feeds, {"a0", "b0", "x", "z"}) == "");
  CHECK(gradcheck::check_model(m, feeds, {"z"}) == "");  // only a scan input wanted
}

TEST_CASE("gradient of Scan without states", "[grad][autodiff][scan]") {
  // ys_t = x_t * z_t + w (a map over two sequences with a captured w); loss = sum(ys^3).
  ir::Model m;
  GraphBuilder b(m);
  const DType f = DType::kF64;
  const Value x = b.input("x", f, {4, 3}), z = b.input("z", f, {4, 3}), w = b.input("w", f, {3});
  const int32_t body = subgraph(m, {{f, {3}}, {f, {3}}, {f, {3}}}, [](GraphBuilder& g, const std::vector<Value>& v) {
    return std::vector<Value>{g.op("Add", {g.op("Mul", {v[0], v[1]}), v[2]})};
  });
  const auto r = scan(b, {x, z, w}, 1, body, 2, 1, {{}, {0, 1}, {}, {1}});
  b.output(cube_sum(b, r[0]), "loss");
  REQUIRE(b.status().ok());
  CHECK(gradcheck::check_model(m, {u({4, 3}, 10), u({4, 3}, 11), u({3}, 12)}, {"x", "z", "w"}) == "");
}

TEST_CASE("gradient of Scan nested in If, and of Loop and Scan nested in Scan", "[grad][autodiff][scan]") {
  const DType f = DType::kF64;
  SECTION("Scan in If") {
    ir::Model m;
    GraphBuilder b(m);
    const Value s0 = b.input("s0", f, {2}), xs = b.input("xs", f, {3, 2}), w = b.input("w", f, {2});
    const Value flag = b.input("flag", DType::kBool, {});
    const int32_t body = subgraph(m, {{f, {2}}, {f, {2}}, {f, {2}}}, [](GraphBuilder& g, const std::vector<Value>& v) {
      const Value s1 = g.op("Add", {g.op("Mul", {v[0], v[2]}), v[1]});
      return std::vector<Value>{s1, g.op("Mul", {s1, v[1]})};
    });
    const auto y = b.cond(
        flag,
        [&](GraphBuilder& t) {
          const auto r = scan(t, {s0, xs, w}, 2, body, 1, 1, {{}, {1}, {}, {}});
          return std::vector<Value>{t.op("Add", {r[0], sum_all(t, r[1])})};
        },
        [&](GraphBuilder& e) { return std::vector<Value>{e.op("Mul", {s0, w})}; });
    b.output(cube_sum(b, y[0]), "loss");
    REQUIRE(b.status().ok());
    for (bool taken : {true, false}) {
      INFO("flag=" << taken);
      CHECK(gradcheck::check_model(m, {u({2}, 13), u({3, 2}, 14), u({2}, 15), Tensor::scalar(taken)}, {"s0", "xs", "w"}) ==
            "");
    }
  }
  SECTION("Loop in Scan") {
    // Each step runs s = s * w + x_t twice (an inner counted Loop); ys_t = s.
    ir::Model m;
    GraphBuilder b(m);
    const Value s0 = b.input("s0", f, {2}), xs = b.input("xs", f, {3, 2}), w = b.input("w", f, {2});
    const int32_t body = subgraph(m, {{f, {2}}, {f, {2}}, {f, {2}}}, [](GraphBuilder& g, const std::vector<Value>& v) {
      const auto r = g.fori_loop(
          g.constant(Tensor::scalar<int64_t>(2)),
          [&](GraphBuilder& inner, Value, const std::vector<Value>& s) {
            return std::vector<Value>{inner.op("Add", {inner.op("Mul", {s[0], v[2]}), v[1]})};
          },
          {v[0]});
      return std::vector<Value>{r[0], g.op("Mul", {r[0], r[0]})};
    });
    const auto r = scan(b, {s0, xs, w}, 2, body, 1, 1, {});
    b.output(b.op("Add", {cube_sum(b, r[0]), sum_all(b, r[1])}), "loss");
    REQUIRE(b.status().ok());
    CHECK(gradcheck::check_model(m, {u({2}, 16), u({3, 2}, 17), u({2}, 18)}, {"s0", "xs", "w"}) == "");
  }
  SECTION("Scan in Scan") {
    // Outer scan over rows of X [3, 2, 2]; each step scans the row's 2 elements (reversed).
    ir::Model m;
    GraphBuilder b(m);
    const Value s0 = b.input("s0", f, {2}), xs = b.input("xs", f, {3, 2, 2});
    const int32_t inner = subgraph(m, {{f, {2}}, {f, {2}}}, [](GraphBuilder& g, const std::vector<Value>& v) {
      const Value s1 = g.op("Add", {g.op("Mul", {v[0], v[1]}), v[1]});
      return std::vector<Value>{s1};
    });
    const int32_t outer = subgraph(m, {{f, {2}}, {f, {2, 2}}}, [&](GraphBuilder& g, const std::vector<Value>& v) {
      const auto r = scan(g, {v[0], v[1]}, 1, inner, 1, 0, {{}, {1}, {}, {}});
      return std::vector<Value>{g.op("Div", {r[0], g.op("Add", {g.constant(Tensor::scalar(1.0)), sq_sum(g, r[0])})}), r[0]};
    });
    const auto r = scan(b, {s0, xs}, 2, outer, 1, 0, {});
    b.output(b.op("Add", {cube_sum(b, r[0]), cube_sum(b, r[1])}), "loss");
    REQUIRE(b.status().ok());
    CHECK(gradcheck::check_model(m, {u({2}, 19), u({3, 2, 2}, 20)}, {"s0", "xs"}) == "");
  }
}

TEST_CASE("gradient of Scan matches PyTorch", "[grad][autodiff][scan]") {
  // tests/autodiff/torch_reference.py, "scan_reverse": xs [2, 4] scanned along axis 1 backwards,
  // ys stacked along axis 0 backwards.
  const std::string dir = std::string(TSR_SOURCE_DIR) + "/tests/autodiff/reference/scan_reverse/";
  auto ref = [&](const std::string& name) {
    auto t = io::read_npy_file(dir + name + ".npy");
    INFO(t.status().to_string());
    REQUIRE(t.ok());
    return *t;
  };
  const ir::Model m = recurrence(DType::kF64, {2, 4}, {{1}, {1}, {0}, {1}});
  const std::vector<Tensor> feeds = {ref("s0"), ref("xs"), ref("w")};
  auto gm = passes::gradient_model(m, {"", {"s0", "xs", "w"}});
  INFO(gm.status().to_string());
  REQUIRE(gm.ok());
  auto s = Session::create(std::make_shared<ir::Model>(std::move(gm).value()));
  REQUIRE(s.ok());
  auto out = (*s)->run(feeds);
  INFO(out.status().to_string());
  REQUIRE(out.ok());
  CHECK((*out)[0].scalar_f64(0) == Approx(ref("loss").scalar_f64(0)).epsilon(1e-12));
  const char* names[] = {"s0", "xs", "w"};
  for (size_t w = 0; w < 3; ++w) {
    const Tensor expected = ref(std::string(names[w]) + "_grad");
    const Tensor& got = (*out)[2 + w];
    REQUIRE(got.shape() == expected.shape());
    for (int64_t i = 0; i < got.numel(); ++i) {
      INFO("d loss / d " << names[w] << "[" << i << "]");
      CHECK(std::abs(got.scalar_f64(i) - expected.scalar_f64(i)) <= 1e-9 * (1.0 + std::abs(expected.scalar_f64(i))));
    }
  }
}
