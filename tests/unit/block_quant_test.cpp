// com.microsoft MatMulNBits and GatherBlockQuantized on the CPU backend, for what the
// onnxruntime comparisons (tests/transformers/gen_int4.py, one thread) do not reach: results
// against a float64 dequantize-then-matmul reference with 1 and 2 threads (the GEMV row chunks and
// the parallel dequantized panels), constant vs run-time weights (parameters unpacked once at
// load vs per run), and GatherBlockQuantized's zero rows for out-of-range indices (onnxruntime
// 1.30 rejects those; its current spec gives zeros).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "one_node_test_util.h"

namespace tsr {
namespace {

using test::OneNode;

struct Quantized {
  std::vector<uint8_t> codes;  // [N, kb, blob], low bits first
  std::vector<float> scale;    // [N, kb]
  std::vector<uint8_t> zp;     // packed [N, ceil(kb * bits / 8)]
  std::vector<double> w;       // dequantized [N, K]
};

// Random codes, scales and zero points in the MatMulNBits layout; padding codes random too.
Quantized make_weights(int64_t n, int64_t k, int64_t block, int64_t bits, std::mt19937& gen) {
  const int64_t kb = (k + block - 1) / block, per = 8 / bits, blob = block / per, zrow = (kb + per - 1) / per;
  std::uniform_int_distribution<int> code(0, (1 << bits) - 1);
  std::uniform_real_distribution<float> sc(0.01f, 0.1f);
  Quantized q;
  q.codes.assign(static_cast<size_t>(n * kb * blob), 0);
  q.zp.assign(static_cast<size_t>(n * zrow), 0);
  q.w.assign(static_cast<size_t>(n * k), 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t b = 0; b < kb; ++b) {
      const float s = sc(gen);
      const int z = code(gen);
      q.scale.push_back(s);
      q.zp[static_cast<size_t>(r * zrow + b / per)] |= static_cast<uint8_t>(z << ((b % per) * bits));
      for (int64_t i = 0; i < block; ++i) {
        const int c = code(gen);
        q.codes[static_cast<size_t>((r * kb + b) * blob + i / per)] |= static_cast<uint8_t>(c << ((i % per) * bits));
        if (b * block + i < k) q.w[static_cast<size_t>(r * k + b * block + i)] = (c - z) * static_cast<double>(s);
      }
    }
  return q;
}

std::vector<ir::Attribute> nbits_attrs(int64_t k, int64_t n, int64_t block, int64_t bits) {
  return {ir::Attribute::make_int("K", k), ir::Attribute::make_int("N", n), ir::Attribute::make_int("block_size", block),
          ir::Attribute::make_int("bits", bits)};
}

TEST_CASE("MatMulNBits matches a float64 reference with 1 and 2 threads, constant or run-time weights") {
  std::mt19937 gen(7);
  std::normal_distribution<float> nd;
  struct Cfg {
    int64_t m, k, n, block, bits;
  };
  // M 1, 3 and 9 (groups of 4 rows and a rest; N 650: several 64-row chunks): the GEMV (4 and
  // 8-bit); M 20 and 2-bit: the dequantized panels. K 100: a partial block.
  for (const Cfg& c : {Cfg{1, 100, 300, 32, 4}, Cfg{3, 100, 130, 16, 4}, Cfg{1, 256, 200, 16, 8}, Cfg{9, 100, 200, 32, 4},
                       Cfg{20, 100, 200, 32, 4}, Cfg{3, 100, 70, 16, 2}, Cfg{9, 96, 650, 64, 8}}) {
    const Quantized q = make_weights(c.n, c.k, c.block, c.bits, gen);
    const int64_t kb = (c.k + c.block - 1) / c.block;
    std::vector<float> a(static_cast<size_t>(c.m * c.k));
    for (float& v : a) v = nd(gen);
    std::vector<float> bias(static_cast<size_t>(c.n));
    for (float& v : bias) v = nd(gen);
    const std::vector<Tensor> inputs = {Tensor::from<float>({c.m, c.k}, a),
                                        Tensor::from<uint8_t>({c.n, kb, c.block * c.bits / 8}, q.codes),
                                        Tensor::from<float>({c.n, kb}, q.scale),
                                        Tensor::from<uint8_t>({c.n, static_cast<int64_t>(q.zp.size()) / c.n}, q.zp),
                                        Tensor(),
                                        Tensor::from<float>({c.n}, bias)};
    for (bool constant : {true, false}) {
      OneNode node("com.microsoft::MatMulNBits", inputs, nbits_attrs(c.k, c.n, c.block, c.bits),
                   {false, constant, constant, constant, false, constant});
      REQUIRE(node.infer_status.ok());
      for (int threads : {1, 2}) {
        INFO("M " << c.m << " K " << c.k << " N " << c.n << " block " << c.block << " bits " << c.bits
                  << (constant ? " constant" : " run-time") << " weights, threads " << threads);
        auto y = node.run(threads);
        REQUIRE(y.ok());
        REQUIRE(y->shape() == Shape{c.m, c.n});
        for (int64_t i = 0; i < c.m; ++i)
          for (int64_t j = 0; j < c.n; ++j) {
            double ref = bias[static_cast<size_t>(j)], mag = std::abs(ref);
            for (int64_t p = 0; p < c.k; ++p) {
              const double t = a[static_cast<size_t>(i * c.k + p)] * q.w[static_cast<size_t>(j * c.k + p)];
              ref += t;
              mag += std::abs(t);
            }
            REQUIRE(std::abs(y->data<float>()[i * c.n + j] - ref) <= 1e-5 * mag + 1e-6);
          }
      }
    }
  }
}

TEST_CASE("GatherBlockQuantized gives zero rows for out-of-range indices") {
  // data [3, 16] 4-bit codes = 32 values per row, block 16: two scales per row, default zero 8.
  std::vector<uint8_t> data(3 * 16);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i * 37) & 0xFF);
  const std::vector<float> scales = {0.5f, 2.0f, 1.0f, 0.25f, 3.0f, 0.125f};
  const Tensor y = test::run_ok("com.microsoft::GatherBlockQuantized",
                                {Tensor::from<uint8_t>({3, 16}, data), Tensor::from<int64_t>({4}, {2, 3, -1, -4}),
                                 Tensor::from<float>({3, 2}, scales)},
                                {ir::Attribute::make_int("block_size", 16)}, {true, false, true});
  REQUIRE(y.shape() == Shape{4, 32});
  for (int64_t j = 0; j < 32; ++j) {
    const int code = (data[static_cast<size_t>(2 * 16 + j / 2)] >> ((j % 2) * 4)) & 15;
    const float want = static_cast<float>(code - 8) * scales[static_cast<size_t>(2 * 2 + j / 16)];
    CHECK(y.data<float>()[j] == want);            // index 2
    CHECK(y.data<float>()[64 + j] == want);       // index -1 = 2
    CHECK(y.data<float>()[32 + j] == 0.0f);       // index 3: out of range
    CHECK(y.data<float>()[96 + j] == 0.0f);       // index -4: out of range
  }
}

}  // namespace
}  // namespace tsr
