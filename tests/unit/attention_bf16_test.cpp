// FastMath::kBf16 attention (backends/cpu/kernels/attention_bf16.cpp): ONNX Attention run by a
// session with fast_math = kBf16 against an f64 reference, on odd head sizes, key counts past
// one block of 256 keys, GQA, causal and masked problems, at 1 and 2 threads. The tolerance is
// bf16's (operands carry 8 significant bits: about 4e-3 relative each); the exact f32 path is
// checked at 1e-5 on the same problems, and where the CPU has AVX512_BF16 the bf16 output must
// differ from it (the bf16 kernel ran). A second case list checks the exact f32 path alone on
// the edges of its tiles (attention_flash-inl.h).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "core/base/fast_math.h"
#include "tests/unit/one_node_test_util.h"

using namespace tsr;

namespace {

struct Case {
  int64_t b, h, hkv, s, t, d, dv;
  bool causal;
  bool mask;  // a bool attn_mask [S, T]: key j hidden from query i when (i + 2 j) % 5 == 1
};

std::vector<float> uniform(size_t n, uint32_t seed) {
  std::vector<float> x(n);
  uint32_t st = seed * 2654435761u + 1;
  for (float& v : x) {
    st = st * 1664525u + 1013904223u;
    v = static_cast<float>(st >> 8) / 16777216.0f * 2.0f - 1.0f;
  }
  return x;
}

bool visible(const Case& c, int64_t i, int64_t j) {
  if (c.causal && j > i + (c.t - c.s)) return false;
  return !(c.mask && (i + 2 * j) % 5 == 1);
}

// Y [B, H, S, Dv] in f64.
std::vector<double> reference(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v) {
  std::vector<double> y(static_cast<size_t>(c.b * c.h * c.s * c.dv), 0.0), w(static_cast<size_t>(c.t));
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.h; ++h) {
      const int64_t kh = h / (c.h / c.hkv);
      for (int64_t i = 0; i < c.s; ++i) {
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t j = 0; j < c.t; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < c.d; ++e)
            dot += double(q[size_t(((b * c.h + h) * c.s + i) * c.d + e)]) * k[size_t(((b * c.hkv + kh) * c.t + j) * c.d + e)];
          w[size_t(j)] = visible(c, i, j) ? dot * scale : -std::numeric_limits<double>::infinity();
          mx = std::max(mx, w[size_t(j)]);
        }
        for (int64_t j = 0; j < c.t; ++j) sum += (w[size_t(j)] = std::exp(w[size_t(j)] - mx));
        for (int64_t j = 0; j < c.t; ++j)
          for (int64_t e = 0; e < c.dv; ++e)
            y[size_t(((b * c.h + h) * c.s + i) * c.dv + e)] +=
                w[size_t(j)] / sum * v[size_t(((b * c.hkv + kh) * c.t + j) * c.dv + e)];
      }
    }
  return y;
}

// ||got - ref|| / ||ref||.
double rel_l2(const Tensor& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t e = 0; e < ref.size(); ++e) {
    const double d = got.data<float>()[e] - ref[e];
    num += d * d;
    den += ref[e] * ref[e];
  }
  return std::sqrt(num / den);
}

// The ONNX Attention node of case c on [B, N, L, H] inputs q, k, v.
test::OneNode attention_node(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v) {
  std::vector<Tensor> in{Tensor::from<float>({c.b, c.h, c.s, c.d}, q), Tensor::from<float>({c.b, c.hkv, c.t, c.d}, k),
                         Tensor::from<float>({c.b, c.hkv, c.t, c.dv}, v)};
  if (c.mask) {
    std::vector<bool> keep(size_t(c.s * c.t));
    for (int64_t i = 0; i < c.s; ++i)
      for (int64_t j = 0; j < c.t; ++j) keep[size_t(i * c.t + j)] = (i + 2 * j) % 5 != 1;
    in.push_back(Tensor::from<bool>({c.s, c.t}, keep));
  }
  return test::OneNode("Attention", in, {ir::Attribute::make_int("is_causal", c.causal ? 1 : 0)});
}

Tensor run(const test::OneNode& m, FastMath fm, int threads) {
  REQUIRE(m.infer_status.ok());
  SessionOptions opt;
  opt.num_threads = threads;
  opt.fast_math = fm;
  auto s = Session::create(std::make_shared<ir::Model>(m.model), opt);
  REQUIRE(s.ok());
  auto outs = (*s)->run(m.feeds);
  INFO(outs.status().to_string());
  REQUIRE(outs.ok());
  return outs->at(0);
}

}  // namespace

TEST_CASE("attention bf16: ONNX Attention with fast_math bf16 against f64", "[attention][bf16]") {
  const Case cases[] = {
      {1, 2, 2, 37, 301, 13, 11, false, false},  // odd sizes, two key blocks (256 + 45)
      {2, 4, 2, 45, 45, 7, 9, true, false},      // GQA, causal
      {1, 3, 1, 20, 33, 64, 64, false, true},    // MQA, bool mask
      {1, 2, 2, 300, 300, 16, 20, true, true},   // causal and masked, two query and key blocks
  };
  for (const Case& c : cases)
    for (int threads : {1, 2}) {
      const auto q = uniform(size_t(c.b * c.h * c.s * c.d), 1), k = uniform(size_t(c.b * c.hkv * c.t * c.d), 2),
                 v = uniform(size_t(c.b * c.hkv * c.t * c.dv), 3);
      const test::OneNode m = attention_node(c, q, k, v);
      const std::vector<double> ref = reference(c, q, k, v);
      const Tensor exact = run(m, FastMath::kNone, threads), fast = run(m, FastMath::kBf16, threads);
      INFO("S " << c.s << " T " << c.t << " d " << c.d << " dv " << c.dv << " threads " << threads);
      CHECK(rel_l2(exact, ref) < 1e-5);
      const double err = rel_l2(fast, ref);
      CHECK(err < 1e-2);
      double max_abs = 0, max_ref = 0;
      for (size_t e = 0; e < ref.size(); ++e) {
        max_abs = std::max(max_abs, std::abs(fast.data<float>()[e] - ref[e]));
        max_ref = std::max(max_ref, std::abs(ref[e]));
      }
      CHECK(max_abs < 3e-2 * max_ref);
      if (fast_math_supported(FastMath::kBf16)) CHECK(err > 1e-5);  // the bf16 kernel ran
      else CHECK(err < 1e-5);                                        // f32, as documented
    }
}

// The exact f32 path alone (attention_flash-inl.h on AVX-512: packed K^T, register tiles, blocks
// of 512 keys; sgemm's blocks elsewhere) on the shapes its tiles split: several key blocks with a
// partial last one, query rows not a multiple of the tile rows, value widths of one, two and
// five vectors with a partial last vector (P·V in two column passes), causal across key blocks,
// GQA with a mask. Measured errors are ~1e-7 (f32 sums of random-signed terms grow like the
// square root of their count: 1100 keys stay far below the 1e-5 bound, with or without FMA).
TEST_CASE("attention f32: ONNX Attention against f64 on the tiled path's edges", "[attention]") {
  const Case cases[] = {
      {1, 2, 2, 70, 1100, 64, 64, false, false},  // three key blocks (512 + 512 + 76), 70 rows
      {1, 2, 1, 33, 40, 80, 72, false, false},    // dv 72: a pass of 4 vectors and one of 8 lanes
      {2, 4, 2, 50, 530, 32, 32, false, true},    // MiniLM's head size, GQA, bool mask, two key blocks
      {1, 2, 2, 600, 600, 24, 20, true, false},   // causal over two key blocks, dv 20
  };
  for (const Case& c : cases)
    for (int threads : {1, 2}) {
      const auto q = uniform(size_t(c.b * c.h * c.s * c.d), 4), k = uniform(size_t(c.b * c.hkv * c.t * c.d), 5),
                 v = uniform(size_t(c.b * c.hkv * c.t * c.dv), 6);
      const test::OneNode m = attention_node(c, q, k, v);
      INFO("S " << c.s << " T " << c.t << " d " << c.d << " dv " << c.dv << " threads " << threads);
      CHECK(rel_l2(run(m, FastMath::kNone, threads), reference(c, q, k, v)) < 1e-5);
    }
}
