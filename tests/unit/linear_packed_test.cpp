// MatMul / Gemm / FusedGemm with a constant 2-D B (backends/cpu/kernels/linalg.cpp's packed
// kernel: op(B) packed once at session creation) against the product by definition: odd sizes,
// K over two blocks, N over the packed slices' width, transB, Gemm's bias broadcasts and
// alpha/beta, batched A folded into rows, and the row counts that fall back to the plain kernels
// (few rows known at load, or only at run time through a dynamic declared shape). Every SIMD
// target this CPU runs, 1 and 3 threads. FusedGemm's epilogue with Relu and with the tanh-form Gelu
// (GeluTanh: GPT-2's MLP) against the f64 formula.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/kernel_test_util.h"
#include "tests/unit/one_node_test_util.h"

using namespace tsr;
using namespace tsr::test;

namespace {

Tensor uniform(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(shape_numel(s)));
  for (float& x : v) x = u(rng);
  return Tensor::from<float>(s, v);
}

struct LinearCase {
  std::string op;        // MatMul, Gemm or FusedGemm (Relu)
  Shape a;               // A as fed (MatMul: any rank >= 2; Gemm: [M, K])
  int64_t k, n;
  bool trans_b = false;  // Gemm only
  int cmode = -1;        // Gemm's C: -1 absent, 0 [M, N], 1 [N], 2 [M, 1], 3 scalar, 4 [1, N]
  std::optional<Shape> declared_a = std::nullopt;  // A's declared shape (dynamic dims: -1)
  double beta = -1.5;    // Gemm's beta (1 with a [N] or [1, N] C: FusedGemm adds it in its activation's pass)
  std::string act = "Relu";  // FusedGemm's activation: Relu or GeluTanh
};

// FusedGemm's activation `act` in f64 (fused_activation.h).
double activate_ref(const std::string& act, double s) {
  if (act == "GeluTanh") return 0.5 * s * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (s + 0.044715 * s * s * s)));
  return std::max(s, 0.0);
}

void check_linear(const LinearCase& lc, int threads, std::mt19937& rng) {
  const bool gemm = lc.op != "MatMul";
  const Tensor a = uniform(lc.a, rng);
  const Tensor b = uniform(lc.trans_b ? Shape{lc.n, lc.k} : Shape{lc.k, lc.n}, rng);
  const int64_t m = a.numel() / lc.k;
  const Shape cs = lc.cmode == 0   ? Shape{m, lc.n}
                   : lc.cmode == 1 ? Shape{lc.n}
                   : lc.cmode == 2 ? Shape{m, 1}
                   : lc.cmode == 4 ? Shape{1, lc.n}
                                   : Shape{};
  const Tensor c = lc.cmode < 0 ? Tensor() : uniform(cs, rng);
  std::vector<ir::Attribute> attrs;
  if (gemm) {
    attrs = {ir::Attribute::make_int("transB", lc.trans_b ? 1 : 0), ir::Attribute::make_float("alpha", 0.75),
             ir::Attribute::make_float("beta", lc.beta)};
    if (lc.op == "FusedGemm") attrs.push_back(ir::Attribute::make_string("activation", lc.act));
  }
  std::vector<Tensor> inputs = {a, b};
  if (gemm && lc.cmode >= 0) inputs.push_back(c);
  std::vector<Shape> declared;
  if (lc.declared_a) declared.push_back(*lc.declared_a);
  OneNode one(lc.op, inputs, attrs, {false, true, true}, declared);  // B and C constants
  REQUIRE(one.infer_status.ok());
  auto out = one.run(threads);
  REQUIRE(out.ok());
  const Tensor& y = *out;
  REQUIRE(y.numel() == m * lc.n);
  double max_err = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < lc.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < lc.k; ++p)
        s += a.scalar_f64(i * lc.k + p) * b.scalar_f64(lc.trans_b ? j * lc.k + p : p * lc.n + j);
      if (gemm) {
        double cv = 0;
        if (lc.cmode == 0) cv = c.scalar_f64(i * lc.n + j);
        if (lc.cmode == 1 || lc.cmode == 4) cv = c.scalar_f64(j);
        if (lc.cmode == 2) cv = c.scalar_f64(i);
        if (lc.cmode == 3) cv = c.scalar_f64(0);
        s = 0.75 * s + lc.beta * cv;
        if (lc.op == "FusedGemm") s = activate_ref(lc.act, s);
      }
      max_err = std::max(max_err, std::fabs(y.data<float>()[i * lc.n + j] - s) / (1 + std::fabs(s)));
    }
  CHECK(max_err <= 2e-6 * std::sqrt(static_cast<double>(lc.k)));  // NaN fails too
}

}  // namespace

TEST_CASE("MatMul/Gemm with constant B: the packed weights match the product by definition") {
  std::mt19937 rng(24);
  const std::vector<LinearCase> cases = {
      {"MatMul", {2, 19, 37}, 37, 45},                        // batch folded into 38 rows
      {"MatMul", {23, 300}, 300, 33},                         // K over two blocks, a partial panel
      {"MatMul", {17, 3}, 3, 4103},                           // N over the packed slices' width
      {"MatMul", {1, 5, 37}, 37, 29},                         // 5 rows known at load: plain kernel
      {"MatMul", {1, 6, 40}, 40, 50, false, -1, Shape{1, -1, 40}},   // rows unknown at load, 6 at run time: plain
      {"MatMul", {1, 70, 40}, 40, 50, false, -1, Shape{1, -1, 40}},  // rows unknown at load, 70 at run time: packed then
      {"Gemm", {29, 41}, 41, 35, false, 1},
      {"Gemm", {29, 41}, 41, 35, true, 0},
      {"Gemm", {18, 263}, 263, 66, true, 2},
      {"Gemm", {31, 7}, 7, 97, false, 3},
      {"Gemm", {40, 16}, 16, 19, true, -1},
      {"Gemm", {9, 16}, 16, 19, true, 1},                     // 9 rows: plain kernel
      {"FusedGemm", {33, 50}, 50, 70, true, 1},
      {"FusedGemm", {20, 130}, 130, 48, false, 0},
      // Outputs of 2^16 floats and more: the bias broadcast and the epilogue split over the threads.
      {"Gemm", {65, 9}, 9, 1100, false, 1},
      {"FusedGemm", {70, 20}, 20, 1000, true, 2},
      // 56 rows a thread and more: the threads split the rows (C's rows and the activation with them).
      {"Gemm", {171, 33}, 33, 45, true, 0},
      {"FusedGemm", {200, 20}, 20, 30, false, 2},
      {"MatMul", {3, 60, 19}, 19, 23},
      // FusedGemm with a [N] / [1, N] bias and beta 1: the bias added in the activation's pass (one
      // thread, the column split, the row split).
      {"FusedGemm", {33, 50}, 50, 70, true, 1, std::nullopt, 1.0},
      {"FusedGemm", {70, 20}, 20, 1000, false, 4, std::nullopt, 1.0},
      {"FusedGemm", {197, 19}, 19, 77, true, 1, std::nullopt, 1.0},
      {"Gemm", {33, 50}, 50, 70, false, 1, std::nullopt, 1.0},
      // Gemm's C with whole rows ([N], [1, N], [M, N]) read by the product's tiles as they store
      // (one thread, the column split, the row split); [M, 1] and scalars copied into Y first.
      {"Gemm", {70, 20}, 20, 1000, false, 0, std::nullopt, 1.0},
      {"Gemm", {197, 19}, 19, 77, true, 4, std::nullopt, 1.0},
      {"Gemm", {171, 33}, 33, 45, true, 1},
      {"Gemm", {65, 9}, 9, 1100, true, 4},
      {"Gemm", {200, 20}, 20, 30, false, 3, std::nullopt, 1.0},
      // The tanh Gelu: few rows (plain kernel), packed, the column split, the row split; odd N
      // leaves a masked tail of the epilogue's vectors.
      {"FusedGemm", {5, 19}, 19, 37, true, 1, std::nullopt, 1.0, "GeluTanh"},
      {"FusedGemm", {33, 50}, 50, 71, false, 1, std::nullopt, 1.0, "GeluTanh"},
      {"FusedGemm", {70, 20}, 20, 1001, true, 4, std::nullopt, 1.0, "GeluTanh"},
      {"FusedGemm", {197, 19}, 19, 77, false, 0, std::nullopt, -1.5, "GeluTanh"},
  };
  for_targets_and_threads([&](int threads) {
    for (const LinearCase& lc : cases) {
      INFO(lc.op << " " << lc.act << " A " << shape_str(lc.a) << " k " << lc.k << " n " << lc.n << " transB " << lc.trans_b << " C "
                 << lc.cmode << " threads " << threads);
      check_linear(lc, threads, rng);
    }
  });
}
