// The quantized matmuls and convolutions (backends/cpu/kernels/qlinear.cpp, qconv.cpp, qdepthwise.cpp, on
// qgemm) against their definitions, bit for bit: zero points per row / column / channel, the
// requantization's rounding, depthwise windows (strides, dilations, pads, the f32 path's 2^24
// limit and the integer loop past it, rows shorter than a vector, s8 outputs, biases near 2^24),
// the vector output stage's ties (requant-inl.h), pointwise convs either way round, im2col and
// groups, taps read in place (qgemm_gather) and the stems' row form; per-tensor
// (De)QuantizeLinear over the pool.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "backends/cpu/kernels/qdepthwise.h"
#include "backends/cpu/kernels/qpointwise.h"
#include "core/ir/single_node.h"
#include "tests/unit/op_case.h"

using namespace tsr;
using namespace tsr::test;

namespace {

// Runs `node` as a one-node model (inputs flagged constant are the model's constants, as in a
// loaded model: the kernels pack them once) at `threads` threads; its first output.
Tensor run_single(const ir::Node& node, const std::vector<ir::NodeInput>& inputs, int threads) {
  auto y = run_node(node, inputs, threads);
  REQUIRE(y.ok());
  return (*y)[0];
}

}  // namespace

TEST_CASE("quantized matmul and conv: per-row / per-column / per-channel zero points, requantization rounding") {
  // MatMulInteger: A - a_zp (per row) = [[0, 1], [1, 2]], B - b_zp (per column) = [[0, 6], [2, 8]];
  // their product by hand: [[2, 8], [4, 22]].
  OpCase mm;
  mm.op = "MatMulInteger";
  mm.inputs = {Tensor::from<uint8_t>({2, 2}, {1, 2, 3, 4}), Tensor::from<uint8_t>({2, 2}, {5, 6, 7, 8}),
               Tensor::from<uint8_t>({2}, {1, 2}), Tensor::from<uint8_t>({2}, {5, 0})};
  auto y = run_case(mm);
  REQUIRE(y.ok());
  REQUIRE((*y)[0].dtype() == DType::kI32);
  CHECK(std::vector<int32_t>((*y)[0].data<int32_t>(), (*y)[0].data<int32_t>() + 4) == std::vector<int32_t>{2, 8, 4, 22});

  // QLinearMatMul (i8): acc = [-2, 4] . ([3, -1] - 1) = -12; -12 * 0.5 * 0.25 / 1.0 = -1.5, which
  // rounds half to even to -2; + y_zp 10 = 8.
  OpCase q;
  q.op = "QLinearMatMul";
  q.inputs = {Tensor::from<int8_t>({1, 2}, {-2, 4}), Tensor::scalar<float>(0.5f), Tensor::scalar<int8_t>(0),
              Tensor::from<int8_t>({2, 1}, {3, -1}), Tensor::scalar<float>(0.25f), Tensor::scalar<int8_t>(1),
              Tensor::scalar<float>(1.0f), Tensor::scalar<int8_t>(10)};
  auto qy = run_case(q);
  REQUIRE(qy.ok());
  REQUIRE((*qy)[0].dtype() == DType::kI8);
  REQUIRE((*qy)[0].shape() == Shape{1, 1});
  CHECK((*qy)[0].data<int8_t>()[0] == 8);

  // ConvInteger, 1x1 kernel: x - 1 = [0, 1, 2, 3]; w - w_zp per output channel = [2, 0].
  OpCase c;
  c.op = "ConvInteger";
  c.inputs = {Tensor::from<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor::from<uint8_t>({2, 1, 1, 1}, {3, 5}),
              Tensor::scalar<uint8_t>(1), Tensor::from<uint8_t>({2}, {1, 5})};
  auto cy = run_case(c);
  REQUIRE(cy.ok());
  REQUIRE((*cy)[0].shape() == Shape{1, 2, 2, 2});
  CHECK(std::vector<int32_t>((*cy)[0].data<int32_t>(), (*cy)[0].data<int32_t>() + 8) ==
        std::vector<int32_t>{0, 2, 4, 6, 0, 0, 0, 0});

  // A per-row zero point of the wrong length is a run-time error, not a crash.
  mm.inputs[2] = Tensor::from<uint8_t>({3}, {1, 2, 3});
  CHECK_FALSE(run_case(mm).ok());
}

TEST_CASE("QLinearMatMul's vector output stage rounds ties to even before the odd zero point, and saturates") {
  // Scales that are powers of two make acc * scale land on .5 for every odd acc; with an odd
  // output zero point, rounding after adding it would move half of those ties (requant-inl.h).
  // 70 columns: whole vector panels and a partial one.
  const int64_t m = 5, n = 70;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> av(0, 40), bv(-100, 100);
  std::vector<uint8_t> a(static_cast<size_t>(m));
  std::vector<int8_t> b(static_cast<size_t>(n));
  for (auto& v : a) v = uint8_t(av(rng));
  for (auto& v : b) v = int8_t(bv(rng));
  std::vector<float> bs(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) bs[size_t(j)] = j % 3 == 0 ? 1.0f : j % 3 == 1 ? 0.25f : 4.0f;
  for (bool y_signed : {false, true}) {
    const int y_zp = y_signed ? -3 : 7;
    OpCase q;
    q.op = "QLinearMatMul";
    q.inputs = {Tensor::from<uint8_t>({m, 1}, a), Tensor::scalar<float>(0.5f), Tensor::scalar<uint8_t>(20),
                Tensor::from<int8_t>({1, n}, b), Tensor::from<float>({n}, bs), Tensor::from<int8_t>({n}, std::vector<int8_t>(size_t(n), 0)),
                Tensor::scalar<float>(1.0f),
                y_signed ? Tensor::scalar<int8_t>(int8_t(y_zp)) : Tensor::scalar<uint8_t>(uint8_t(y_zp))};
    auto y = run_case(q);
    REQUIRE(y.ok());
    const Tensor& out = (*y)[0];
    int64_t mismatches = 0, ties = 0, saturated = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const int acc = (a[size_t(i)] - 20) * b[size_t(j)];
        const float v = float(acc) * (0.5f * bs[size_t(j)] / 1.0f);
        ties += v != std::floor(v) && v * 2 == std::floor(v * 2);
        const float r = std::nearbyint(v) + float(y_zp);
        const float lo = y_signed ? -128.0f : 0.0f, hi = y_signed ? 127.0f : 255.0f;
        saturated += r < lo || r > hi;
        const int want = int(std::clamp(r, lo, hi));
        const int got = y_signed ? out.data<int8_t>()[i * n + j] : out.data<uint8_t>()[i * n + j];
        mismatches += got != want;
      }
    CHECK(ties > 20);
    CHECK(saturated > 5);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("QLinearConv depthwise (strides, dilations, pads, u8/s8) matches the definition bit for bit") {
  struct Cfg {
    Shape x;  // [N, C, H, W]
    int64_t k0, k1;
    std::vector<int64_t> strides, dil, pads;
    bool x_signed;
    bool extreme = false;  // x = 255 (zp 0), w - w_zp = -255: every product -65025, the f32 path's limit
    bool y_signed = false;    // s8 output (else u8)
    bool w_per_tensor = false;  // one weight scale and zero point (else per channel)
    bool big_bias = false;    // |bias| ~ 2^24: float(acc + bias) rounds (the sums cannot start at the bias)
  };
  const Cfg cfgs[] = {
      {{1, 5, 12, 37}, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},
      {{1, 4, 13, 29}, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, false},  // MobileNet's stride 2
      {{2, 3, 9, 40}, 5, 5, {2, 3}, {1, 1}, {2, 2, 2, 2}, true},
      {{1, 3, 11, 31}, 3, 3, {1, 2}, {2, 3}, {0, 3, 2, 1}, true},   // dilated, asymmetric pads
      {{1, 2, 6, 50}, 1, 7, {2, 4}, {1, 1}, {0, 3, 0, 3}, false},
      {{1, 2, 15, 16}, 15, 15, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, true},  // 225 taps: sums near 2^24
      {{1, 2, 20, 23}, 17, 17, {1, 2}, {1, 1}, {8, 8, 8, 8}, false},       // 289 taps: the integer loop
      // MobileNet's small maps: rows shorter than a vector (partial vectors stored whole, then
      // overwritten by the next row; the plane's last row not), s8 output, one weight scale.
      {{1, 6, 7, 7}, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false, true, true},
      {{2, 3, 14, 14}, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, false, false, false, true},
      {{1, 5, 5, 19}, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false, true, false, true},
      {{1, 3, 3, 33}, 3, 3, {1, 2}, {1, 1}, {0, 1, 2, 0}, false, false, false, true},
  };
  std::mt19937 rng(7);
  for (const Cfg& cfg : cfgs) {
    CAPTURE(cfg.x, cfg.k0, cfg.k1, cfg.strides, cfg.pads);
    const int64_t n = cfg.x[0], c = cfg.x[1], h = cfg.x[2], w = cfg.x[3];
    Tensor x = cfg.x_signed ? Tensor::empty(DType::kI8, cfg.x).value() : Tensor::empty(DType::kU8, cfg.x).value();
    Tensor wt = Tensor::empty(DType::kI8, {c, 1, cfg.k0, cfg.k1}).value();
    std::uniform_int_distribution<int> byte(0, 255), sbyte(-128, 127), b32(-3000, 3000);
    for (int64_t i = 0; i < x.numel(); ++i)
      cfg.x_signed ? void(x.mut_data<int8_t>()[i] = int8_t(sbyte(rng))) : void(x.mut_data<uint8_t>()[i] = uint8_t(byte(rng)));
    for (int64_t i = 0; i < wt.numel(); ++i) wt.mut_data<int8_t>()[i] = int8_t(sbyte(rng));
    std::vector<float> ws;
    std::vector<int8_t> wz;
    std::vector<int32_t> bias;
    for (int64_t m = 0; m < c; ++m) {
      ws.push_back(cfg.w_per_tensor ? 0.013f : 0.01f + 0.003f * float(m));
      wz.push_back(int8_t(cfg.extreme ? 127 : cfg.w_per_tensor ? 2 : m % 3 - 1));
      // big_bias: +-(2^24 - 1 + a few thousand), odd and even: float(acc + bias) rounds to even.
      bias.push_back(cfg.big_bias ? (m % 2 ? -1 : 1) * ((1 << 24) - 1 + b32(rng) + 3000) : b32(rng));
    }
    if (cfg.extreme) {
      std::fill_n(x.mut_data<uint8_t>(), x.numel(), uint8_t{255});
      std::fill_n(wt.mut_data<int8_t>(), wt.numel(), int8_t{-128});
    }
    // big_bias: scale ~ 6e-6, so the outputs are bias * scale ~ +-100 (around y_zp) plus a few
    // codes from the sums.
    const float xs = 0.02f, ys = cfg.extreme ? 30.0f : cfg.big_bias ? 0.02f * 0.013f / 6e-6f : 0.37f;
    const int x_zp = cfg.x_signed ? -3 : cfg.extreme ? 0 : 131;
    const int y_zp = cfg.y_signed ? (cfg.big_bias ? 0 : -9) : cfg.extreme ? 200 : cfg.big_bias ? 128 : 7;
    Tensor xzp = cfg.x_signed ? Tensor::scalar<int8_t>(int8_t(x_zp)) : Tensor::scalar<uint8_t>(uint8_t(x_zp));
    Tensor yzp = cfg.y_signed ? Tensor::scalar<int8_t>(int8_t(y_zp)) : Tensor::scalar<uint8_t>(uint8_t(y_zp));
    Tensor wscale = cfg.w_per_tensor ? Tensor::scalar<float>(ws[0]) : Tensor::from<float>({c}, ws);
    Tensor wzp = cfg.w_per_tensor ? Tensor::scalar<int8_t>(wz[0]) : Tensor::from<int8_t>({c}, wz);
    OpCase q;
    q.op = "QLinearConv";
    q.inputs = {x, Tensor::scalar<float>(xs), xzp, wt, wscale, wzp, Tensor::scalar<float>(ys), yzp,
                Tensor::from<int32_t>({c}, bias)};
    q.attrs = {ir::Attribute::make_int("group", c), ir::Attribute::make_ints("strides", cfg.strides),
               ir::Attribute::make_ints("dilations", cfg.dil), ir::Attribute::make_ints("pads", cfg.pads),
               ir::Attribute::make_ints("kernel_shape", {cfg.k0, cfg.k1})};
    for (int threads : {1, 2}) {
      auto y = run_case(q, threads);
      REQUIRE(y.ok());
      const Tensor& out = (*y)[0];
      const int64_t oh = (h + cfg.pads[0] + cfg.pads[2] - cfg.dil[0] * (cfg.k0 - 1) - 1) / cfg.strides[0] + 1;
      const int64_t ow = (w + cfg.pads[1] + cfg.pads[3] - cfg.dil[1] * (cfg.k1 - 1) - 1) / cfg.strides[1] + 1;
      REQUIRE(out.shape() == Shape{n, c, oh, ow});
      int64_t mismatches = 0;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t m = 0; m < c; ++m)
          for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
              int64_t acc = 0;
              for (int64_t i = 0; i < cfg.k0; ++i)
                for (int64_t j = 0; j < cfg.k1; ++j) {
                  const int64_t iy = oy * cfg.strides[0] - cfg.pads[0] + i * cfg.dil[0];
                  const int64_t ix = ox * cfg.strides[1] - cfg.pads[1] + j * cfg.dil[1];
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                  const int64_t xi = ((b * c + m) * h + iy) * w + ix;
                  const int xv = cfg.x_signed ? x.data<int8_t>()[xi] : x.data<uint8_t>()[xi];
                  acc += int64_t(xv - x_zp) * (wt.data<int8_t>()[(m * cfg.k0 + i) * cfg.k1 + j] - wz[size_t(m)]);
                }
              const float scale = xs * ws[size_t(m)] / ys;
              const float v = std::nearbyint(float(int32_t(acc) + bias[size_t(m)]) * scale) + float(y_zp);
              const int64_t o = ((b * c + m) * oh + oy) * ow + ox;
              if (cfg.y_signed) mismatches += out.data<int8_t>()[o] != int8_t(std::clamp(v, -128.0f, 127.0f));
              else mismatches += out.data<uint8_t>()[o] != uint8_t(std::clamp(v, 0.0f, 255.0f));
            }
      CHECK(mismatches == 0);
    }
    if (cfg.extreme) {
      // ConvInteger returns the sums themselves: all exactly 225 * -65025.
      OpCase ci;
      ci.op = "ConvInteger";
      ci.inputs = {x, wt, Tensor::scalar<uint8_t>(0), Tensor::from<int8_t>({c}, wz)};
      ci.attrs = {ir::Attribute::make_int("group", c)};
      auto acc = run_case(ci);
      REQUIRE(acc.ok());
      const Tensor& a = (*acc)[0];
      CHECK(std::all_of(a.data<int32_t>(), a.data<int32_t>() + a.numel(), [](int32_t v) { return v == 225 * -65025; }));
    }
  }
}

TEST_CASE("QLinearConv / ConvInteger (pointwise either way round, im2col, groups) match the definition bit for bit") {
  struct Cfg {
    int64_t n, c, m, group, h, w, k;
    std::vector<int64_t> strides, dil, pads;
    bool x_signed, w_zp_nonuniform;
  };
  const Cfg cfgs[] = {
      {1, 16, 96, 1, 28, 28, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, false},  // pointwise, W x X
      {2, 24, 20, 4, 5, 7, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false},     // grouped, batch 2, s8 x
      {1, 5, 7, 1, 9, 9, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, true},       // per-channel w_zp: X x W
      {1, 33, 130, 1, 3, 41, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, false},  // 130 channels > 123 pixels: X x W
      {1, 8, 16, 1, 14, 15, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false},   // 3x3
      {2, 6, 12, 2, 11, 13, 3, {2, 2}, {1, 1}, {1, 0, 0, 2}, true, false},    // strided, asymmetric pads, groups
      {1, 4, 8, 1, 12, 17, 3, {1, 3}, {2, 1}, {2, 1, 2, 1}, false, false},    // dilated, stride 3
      {1, 64, 96, 1, 4, 4, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false},    // small map, many channels
      // The requantized NCHW store (16 x 16 byte transposes): channels not a multiple of a panel,
      // 13x17 (96-pixel blocks and a partial 16), 7x7, 1x1, and a 7x7 stride-2 stem.
      {1, 9, 37, 1, 13, 17, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false},
      {1, 10, 70, 1, 7, 7, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false},
      {1, 6, 19, 1, 1, 1, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false},
      {1, 3, 20, 1, 29, 30, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}, false, false},
      // Large enough for im2col to split over threads (2-thread runs), with short and long runs.
      {1, 3, 16, 1, 64, 70, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}, false, false},
      {1, 16, 24, 1, 40, 44, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false},
      // Channels per group a multiple of 16: the taps read in place (qgemm_gather), padding taps at
      // the zero-point run. Odd output channels and maps, strides, asymmetric / wide pads,
      // dilation, a 5x5 window, groups of 16, per-channel w_zp (the row sums), s8 x.
      {1, 16, 13, 1, 9, 11, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false},
      {1, 32, 37, 1, 10, 7, 3, {2, 2}, {1, 1}, {1, 0, 1, 1}, true, false},
      {1, 48, 19, 1, 8, 9, 3, {1, 2}, {2, 2}, {2, 3, 2, 1}, false, true},
      {2, 32, 22, 2, 7, 7, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false},
      {1, 16, 9, 1, 11, 6, 5, {3, 1}, {1, 1}, {2, 2, 2, 2}, true, true},
      {1, 64, 67, 1, 15, 15, 3, {2, 2}, {1, 1}, {0, 0, 0, 0}, false, false},
  };
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255), sbyte(-128, 127), b32(-5000, 5000);
  for (const Cfg& cfg : cfgs) {
    const int64_t cg = cfg.c / cfg.group, mg = cfg.m / cfg.group, kk = cfg.k * cfg.k;
    const int64_t oh = (cfg.h + cfg.pads[0] + cfg.pads[2] - cfg.dil[0] * (cfg.k - 1) - 1) / cfg.strides[0] + 1;
    const int64_t ow = (cfg.w + cfg.pads[1] + cfg.pads[3] - cfg.dil[1] * (cfg.k - 1) - 1) / cfg.strides[1] + 1;
    Tensor x = Tensor::empty(cfg.x_signed ? DType::kI8 : DType::kU8, {cfg.n, cfg.c, cfg.h, cfg.w}).value();
    for (int64_t i = 0; i < x.numel(); ++i)
      cfg.x_signed ? void(x.mut_data<int8_t>()[i] = int8_t(sbyte(rng))) : void(x.mut_data<uint8_t>()[i] = uint8_t(byte(rng)));
    Tensor wt = Tensor::empty(DType::kI8, {cfg.m, cg, cfg.k, cfg.k}).value();
    for (int64_t i = 0; i < wt.numel(); ++i) wt.mut_data<int8_t>()[i] = int8_t(sbyte(rng));
    std::vector<float> ws;
    std::vector<int8_t> wz;
    std::vector<int32_t> bias;
    for (int64_t j = 0; j < cfg.m; ++j) {
      ws.push_back((0.004f + 0.0007f * float(j % 9)) / float(kk));
      wz.push_back(int8_t(cfg.w_zp_nonuniform ? j % 5 - 2 : 0));
      bias.push_back(b32(rng));
    }
    const int x_zp = cfg.x_signed ? 5 : 117, y_zp = 121;
    const float xs = 0.03f, ys = 0.45f;
    Tensor xzp = cfg.x_signed ? Tensor::scalar<int8_t>(int8_t(x_zp)) : Tensor::scalar<uint8_t>(uint8_t(x_zp));
    const std::vector<ir::Attribute> attrs = {
        ir::Attribute::make_int("group", cfg.group), ir::Attribute::make_ints("strides", cfg.strides),
        ir::Attribute::make_ints("dilations", cfg.dil), ir::Attribute::make_ints("pads", cfg.pads),
        ir::Attribute::make_ints("kernel_shape", {cfg.k, cfg.k})};
    OpCase q;
    q.op = "QLinearConv";
    q.inputs = {x, Tensor::scalar<float>(xs), xzp, wt, Tensor::from<float>({cfg.m}, ws), Tensor::from<int8_t>({cfg.m}, wz),
                Tensor::scalar<float>(ys), Tensor::scalar<uint8_t>(uint8_t(y_zp)), Tensor::from<int32_t>({cfg.m}, bias)};
    q.attrs = attrs;
    OpCase ci;
    ci.op = "ConvInteger";
    ci.inputs = {x, wt, xzp, Tensor::from<int8_t>({cfg.m}, wz)};
    ci.attrs = attrs;
    for (int threads : {1, 2}) {
      auto y = run_case(q, threads);
      auto acc = run_case(ci, threads);
      REQUIRE(y.ok());
      REQUIRE(acc.ok());
      REQUIRE((*y)[0].shape() == Shape{cfg.n, cfg.m, oh, ow});
      int64_t bad_q = 0, bad_acc = 0;
      for (int64_t b = 0; b < cfg.n; ++b)
        for (int64_t j = 0; j < cfg.m; ++j)
          for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
              const int64_t g = j / mg;
              int64_t sum = 0;
              for (int64_t ch = 0; ch < cg; ++ch)
                for (int64_t i = 0; i < cfg.k; ++i)
                  for (int64_t t = 0; t < cfg.k; ++t) {
                    const int64_t iy = oy * cfg.strides[0] - cfg.pads[0] + i * cfg.dil[0];
                    const int64_t ix = ox * cfg.strides[1] - cfg.pads[1] + t * cfg.dil[1];
                    if (iy < 0 || iy >= cfg.h || ix < 0 || ix >= cfg.w) continue;
                    const int64_t xi = ((b * cfg.c + g * cg + ch) * cfg.h + iy) * cfg.w + ix;
                    const int xv = cfg.x_signed ? x.data<int8_t>()[xi] : x.data<uint8_t>()[xi];
                    sum += int64_t(xv - x_zp) * (wt.data<int8_t>()[((j * cg + ch) * cfg.k + i) * cfg.k + t] - wz[size_t(j)]);
                  }
              const int64_t o = ((b * cfg.m + j) * oh + oy) * ow + ox;
              bad_acc += (*acc)[0].data<int32_t>()[o] != sum;
              const float v = std::nearbyint(float(sum + bias[size_t(j)]) * (xs * ws[size_t(j)] / ys)) + float(y_zp);
              bad_q += (*y)[0].data<uint8_t>()[o] != uint8_t(std::clamp(v, 0.0f, 255.0f));
            }
      CHECK(bad_acc == 0);
      CHECK(bad_q == 0);
    }
  }
}

// 3x3 depthwise convs with symmetric weights take the VNNI + VBMI path on CPUs that have it
// (qdepthwise.cpp: masked 64-byte row loads, vpermb, vpdpbusd): on widths around its 16-output
// blocks, both strides, asymmetric and wide pads, u8 and s8 inputs and outputs, ConvInteger's i32
// sums; "same" stride-1 windows on narrow maps (the flat form); constant weights (packed once). Its
// outputs must equal the f32 path's (forced with qdepthwise_disable_vnni_for_test) and the
// definition's (ConvInteger: the i32 sums, checked directly).
TEST_CASE("QLinearConv / ConvInteger 3x3 depthwise: the VNNI path equals the f32 path and the definition") {
  struct Cfg {
    Shape x;  // [N, C, H, W]
    int64_t stride;
    std::vector<int64_t> pads;
    bool x_signed, y_signed;
    bool mixed = false;  // QLinearConv: odd channels' centered weights leave s8 (w_zp 9, a -128)
  };
  const Cfg cfgs[] = {
      {{1, 3, 5, 1}, 1, {1, 1, 1, 1}, false, false},   {{1, 4, 9, 17}, 2, {0, 1, 1, 0}, true, false},
      {{2, 3, 4, 33}, 1, {1, 1, 1, 1}, false, true},   {{1, 2, 3, 130}, 2, {1, 1, 1, 1}, false, false},
      {{1, 2, 6, 64}, 1, {2, 2, 2, 2}, true, true},    {{1, 5, 7, 7}, 1, {1, 1, 1, 1}, false, false},
      {{1, 3, 14, 14}, 2, {1, 1, 1, 1}, false, false}, {{1, 2, 3, 16}, 1, {0, 0, 0, 0}, false, false},
      {{1, 2, 11, 47}, 2, {0, 0, 2, 2}, true, false},
      // "Same" windows at stride 1 on narrow maps (W <= 23) take the flat form: blocks of 16
      // outputs across row ends, 1 to 3 rows per block, one row, odd sizes, W = 24 not.
      {{1, 3, 14, 14}, 1, {1, 1, 1, 1}, false, true}, {{2, 2, 9, 23}, 1, {1, 1, 1, 1}, true, false},
      {{1, 2, 2, 2}, 1, {1, 1, 1, 1}, true, true},    {{1, 3, 1, 16}, 1, {1, 1, 1, 1}, false, false},
      {{1, 2, 5, 24}, 1, {1, 1, 1, 1}, false, false}, {{1, 4, 3, 5}, 1, {1, 1, 1, 1}, false, false},
      // More planes than one VNNI batch (32), some of them on the f32 path (qdepthwise_planes).
      {{2, 37, 7, 7}, 1, {1, 1, 1, 1}, false, false, true}, {{1, 41, 9, 14}, 2, {1, 1, 1, 1}, true, true, true},
  };
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255), sym(-127, 127), b32(-5000, 5000);
  for (const Cfg& cfg : cfgs) {
    CAPTURE(cfg.x, cfg.stride, cfg.pads, cfg.x_signed, cfg.y_signed);
    const int64_t c = cfg.x[1], h = cfg.x[2], w = cfg.x[3];
    Tensor x = Tensor::empty(cfg.x_signed ? DType::kI8 : DType::kU8, cfg.x).value();
    for (int64_t i = 0; i < x.numel(); ++i) x.mut_data<uint8_t>()[i] = uint8_t(byte(rng));
    Tensor wt = Tensor::empty(DType::kI8, {c, 1, 3, 3}).value();
    for (int64_t i = 0; i < wt.numel(); ++i) wt.mut_data<int8_t>()[i] = int8_t(sym(rng));
    std::vector<float> ws;
    std::vector<int32_t> bias;
    std::vector<int8_t> wzp(size_t(c), 0);
    for (int64_t m = 0; m < c; ++m) {
      ws.push_back(0.004f + 0.001f * float(m));
      bias.push_back(b32(rng));
      if (cfg.mixed && m % 2) {
        wzp[size_t(m)] = 9;
        wt.mut_data<int8_t>()[m * 9 + 4] = -128;
      }
    }
    const int x_zp = cfg.x_signed ? -5 : 121, y_zp = cfg.y_signed ? 3 : 100;
    Tensor xzp = cfg.x_signed ? Tensor::scalar<int8_t>(int8_t(x_zp)) : Tensor::scalar<uint8_t>(uint8_t(x_zp));
    Tensor yzp = cfg.y_signed ? Tensor::scalar<int8_t>(int8_t(y_zp)) : Tensor::scalar<uint8_t>(uint8_t(y_zp));
    const std::vector<ir::Attribute> attrs = {
        ir::Attribute::make_int("group", c), ir::Attribute::make_ints("strides", {cfg.stride, cfg.stride}),
        ir::Attribute::make_ints("pads", cfg.pads), ir::Attribute::make_ints("kernel_shape", {3, 3})};
    OpCase q;
    q.op = "QLinearConv";
    q.inputs = {x, Tensor::scalar<float>(0.05f), xzp, wt, Tensor::from<float>({c}, ws),
                Tensor::from<int8_t>({c}, wzp), Tensor::scalar<float>(0.3f), yzp,
                Tensor::from<int32_t>({c}, bias)};
    q.attrs = attrs;
    OpCase ci;
    ci.op = "ConvInteger";
    ci.inputs = {x, wt, xzp};
    ci.attrs = attrs;
    std::vector<Tensor> outs[2];
    for (bool no_vnni : {false, true}) {
      cpu::qdepthwise_disable_vnni_for_test(no_vnni);
      auto y = run_case(q, 1);
      auto a = run_case(ci, 2);
      cpu::qdepthwise_disable_vnni_for_test(false);
      REQUIRE(y.ok());
      REQUIRE(a.ok());
      outs[no_vnni] = {(*y)[0], (*a)[0]};
    }
    for (int k = 0; k < 2; ++k) {
      REQUIRE(outs[0][k].shape() == outs[1][k].shape());
      CHECK(std::memcmp(outs[0][k].raw(), outs[1][k].raw(), outs[0][k].nbytes()) == 0);
    }
    // Constant weights, as in a loaded model: packed once (qdepthwise_pack_3x3; none where some
    // channel's centered weights leave s8), at 1 and 2 threads: the same outputs.
    ir::Node node;
    node.op = "QLinearConv";
    node.name = "n0";
    node.outputs = {0};
    node.attributes = attrs;
    std::vector<ir::NodeInput> inputs = {{q.inputs[0]}};
    for (size_t k = 1; k < q.inputs.size(); ++k) inputs.push_back({q.inputs[k], true});
    for (int threads : {1, 2}) {
      const Tensor yc = run_single(node, inputs, threads);
      REQUIRE(yc.shape() == outs[1][0].shape());
      CHECK(std::memcmp(yc.raw(), outs[1][0].raw(), yc.nbytes()) == 0);
    }
    // The i32 sums against the definition.
    const Tensor& sums = outs[0][1];
    const int64_t oh = sums.dim(2), ow = sums.dim(3);
    int64_t mismatches = 0;
    for (int64_t b = 0; b < cfg.x[0]; ++b)
      for (int64_t m = 0; m < c; ++m)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox) {
            int64_t acc = 0;
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 3; ++j) {
                const int64_t iy = oy * cfg.stride - cfg.pads[0] + i, ix = ox * cfg.stride - cfg.pads[1] + j;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                const int64_t xi = ((b * c + m) * h + iy) * w + ix;
                const int xv = cfg.x_signed ? x.data<int8_t>()[xi] : x.data<uint8_t>()[xi];
                acc += int64_t(xv - x_zp) * wt.data<int8_t>()[(m * 3 + i) * 3 + j];
              }
            mismatches += sums.data<int32_t>()[((b * c + m) * oh + oy) * ow + ox] != acc;
          }
    CHECK(mismatches == 0);
  }
}

// Pointwise QLinearConvs with constant symmetric s8 weights take qpointwise on CPUs with AVX-512
// VNNI (qpointwise.h: the activations as vpdpbusd's u8 operand, requantized in registers): output
// channels and K not multiples of its 12-row tile and 4-byte quads, pixels not a multiple of its
// 32-pixel panel, groups, batch 2, u8 and s8 inputs and outputs, 1 and 2 threads. Against the
// definition, and equal to the qgemm path (qpointwise_disable_for_test).
TEST_CASE("QLinearConv pointwise with constant symmetric weights (qpointwise) matches the definition and qgemm") {
  struct Cfg {
    int64_t n, c, m, group, h, w;
    bool x_signed, y_signed;
  };
  const Cfg cfgs[] = {{1, 16, 96, 1, 28, 28, false, false}, {2, 10, 26, 2, 7, 9, true, false},
                      {1, 33, 37, 1, 17, 17, false, true},  {1, 5, 13, 1, 4, 5, true, true},
                      {1, 160, 24, 1, 14, 14, false, false},
                      // More output channels than pixels: W x X on qpointwise from 16 pixels (4x5),
                      // not below (3x3: the pixel-major qgemm path).
                      {1, 16, 96, 1, 4, 5, false, false},   {1, 8, 40, 1, 3, 3, true, false},
                      // One 128-pixel block (MobileNetV2's 7x7 maps): at 2 threads the output
                      // channels split into chunks, 9 weight panels (the last partial) over 8.
                      {1, 64, 100, 1, 7, 7, false, true},   {1, 160, 300, 1, 7, 7, false, false},
                      // Activations packed over the pool (C x H*W >= 2^16), a partial last panel.
                      {1, 32, 16, 1, 48, 48, false, false}, {1, 24, 10, 1, 50, 57, true, false},
                      // Last weight panels of 5 and 8 channels (the 8-row tile), 4 (the 4-row one).
                      {1, 12, 17, 1, 9, 11, false, true},   {1, 20, 20, 1, 12, 12, true, false},
                      {2, 32, 28, 2, 6, 7, false, false}};
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> byte(0, 255), sym(-127, 127), b32(-20000, 20000);
  for (const Cfg& cfg : cfgs) {
    CAPTURE(cfg.n, cfg.c, cfg.m, cfg.group, cfg.h, cfg.w, cfg.x_signed, cfg.y_signed);
    const int64_t cg = cfg.c / cfg.group, mg = cfg.m / cfg.group, pixels = cfg.h * cfg.w;
    Tensor x = Tensor::empty(cfg.x_signed ? DType::kI8 : DType::kU8, {cfg.n, cfg.c, cfg.h, cfg.w}).value();
    for (int64_t i = 0; i < x.numel(); ++i) x.mut_data<uint8_t>()[i] = uint8_t(byte(rng));
    Tensor wt = Tensor::empty(DType::kI8, {cfg.m, cg, 1, 1}).value();
    for (int64_t i = 0; i < wt.numel(); ++i) wt.mut_data<int8_t>()[i] = int8_t(sym(rng));
    std::vector<float> ws;
    std::vector<int32_t> bias;
    for (int64_t j = 0; j < cfg.m; ++j) {
      ws.push_back(0.002f + 0.0003f * float(j % 7));
      bias.push_back(b32(rng));
    }
    const int x_zp = cfg.x_signed ? -7 : 119, y_zp = cfg.y_signed ? -3 : 125;
    const float xs = 0.03f, ys = 0.25f;
    Tensor xzp = cfg.x_signed ? Tensor::scalar<int8_t>(int8_t(x_zp)) : Tensor::scalar<uint8_t>(uint8_t(x_zp));
    Tensor yzp = cfg.y_signed ? Tensor::scalar<int8_t>(int8_t(y_zp)) : Tensor::scalar<uint8_t>(uint8_t(y_zp));
    ir::Node node;
    node.op = "QLinearConv";
    node.name = "n0";
    node.outputs = {0};
    node.attributes = {ir::Attribute::make_int("group", cfg.group), ir::Attribute::make_ints("kernel_shape", {1, 1})};
    // x fed at run time; everything else a constant (the weights packed once, as in a model).
    const std::vector<ir::NodeInput> inputs = {
        {x}, {Tensor::scalar<float>(xs), true}, {xzp, true}, {wt, true}, {Tensor::from<float>({cfg.m}, ws), true},
        {Tensor::from<int8_t>({cfg.m}, std::vector<int8_t>(size_t(cfg.m), 0)), true}, {Tensor::scalar<float>(ys), true},
        {yzp, true}, {Tensor::from<int32_t>({cfg.m}, bias), true}};
    std::vector<Tensor> outs;
    for (bool off : {false, true})
      for (int threads : {1, 2}) {
        cpu::qpointwise_disable_for_test(off);
        outs.push_back(run_single(node, inputs, threads));
        cpu::qpointwise_disable_for_test(false);
      }
    for (const Tensor& o : outs) CHECK(std::memcmp(o.raw(), outs[0].raw(), o.nbytes()) == 0);
    int64_t bad = 0;
    for (int64_t b = 0; b < cfg.n; ++b)
      for (int64_t j = 0; j < cfg.m; ++j)
        for (int64_t p = 0; p < pixels; ++p) {
          int64_t sum = 0;
          for (int64_t ch = 0; ch < cg; ++ch) {
            const int64_t xi = (b * cfg.c + (j / mg) * cg + ch) * pixels + p;
            const int xv = cfg.x_signed ? x.data<int8_t>()[xi] : x.data<uint8_t>()[xi];
            sum += int64_t(xv - x_zp) * wt.data<int8_t>()[j * cg + ch];
          }
          const float v = std::nearbyint(float(sum + bias[size_t(j)]) * (xs * ws[size_t(j)] / ys)) + float(y_zp);
          const int64_t o = (b * cfg.m + j) * pixels + p;
          bad += cfg.y_signed ? outs[0].data<int8_t>()[o] != int8_t(std::clamp(v, -128.0f, 127.0f))
                              : outs[0].data<uint8_t>()[o] != uint8_t(std::clamp(v, 0.0f, 255.0f));
        }
    CHECK(bad == 0);
  }
}

// Convs of one group over few channels (not a multiple of 16: a stem conv over RGB) with constant
// symmetric weights and a u8 input take the row form where qgemm_gather reads in place (AVX-512
// VNNI): each output pixel's kernel rows read as runs of a zero-point-padded HWC copy, the run's
// bytes past kw * C against zero weights. Its outputs must equal those of the same conv with the
// weights fed at run time (im2col + qgemm, checked against the definition above), at 1 and 2
// threads; on other CPUs both take the im2col path.
TEST_CASE("QLinearConv row form (stems: few channels, constant symmetric weights) equals the im2col path") {
  struct Cfg {
    int64_t n, c, m, h, w, kh, kw;
    std::vector<int64_t> strides, dil, pads;
  };
  const Cfg cfgs[] = {
      {1, 3, 32, 23, 29, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}},   // MobileNetV2's stem, odd map
      {2, 3, 17, 30, 31, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}},   // ResNet's stem, batch 2, odd channels
      {1, 5, 13, 9, 14, 3, 3, {1, 1}, {2, 1}, {2, 0, 1, 2}},    // dilated rows, asymmetric pads: 15-byte runs
      {1, 4, 9, 8, 8, 3, 2, {1, 2}, {1, 1}, {0, 1, 0, 0}},      // 3x2 window: 8-byte runs
      {1, 24, 40, 10, 10, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}},  // 24 channels: 72-byte runs
      {1, 8, 20, 6, 7, 1, 2, {1, 1}, {1, 1}, {0, 0, 0, 1}},     // 1x2 window: one 16-byte run
  };
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> byte(0, 255), sym(-127, 127), b32(-20000, 20000);
  for (const Cfg& cfg : cfgs) {
    CAPTURE(cfg.n, cfg.c, cfg.m, cfg.h, cfg.w, cfg.kh, cfg.kw);
    Tensor x = Tensor::empty(DType::kU8, {cfg.n, cfg.c, cfg.h, cfg.w}).value();
    for (int64_t i = 0; i < x.numel(); ++i) x.mut_data<uint8_t>()[i] = uint8_t(byte(rng));
    Tensor wt = Tensor::empty(DType::kI8, {cfg.m, cfg.c, cfg.kh, cfg.kw}).value();
    for (int64_t i = 0; i < wt.numel(); ++i) wt.mut_data<int8_t>()[i] = int8_t(sym(rng));
    std::vector<float> ws;
    std::vector<int32_t> bias;
    for (int64_t j = 0; j < cfg.m; ++j) {
      ws.push_back((0.01f + 0.002f * float(j % 5)) / float(cfg.c * cfg.kh * cfg.kw));
      bias.push_back(b32(rng));
    }
    ir::Node node;
    node.op = "QLinearConv";
    node.name = "n0";
    node.outputs = {0};
    node.attributes = {ir::Attribute::make_ints("kernel_shape", {cfg.kh, cfg.kw}), ir::Attribute::make_ints("strides", cfg.strides),
                       ir::Attribute::make_ints("dilations", cfg.dil), ir::Attribute::make_ints("pads", cfg.pads)};
    std::vector<Tensor> outs;
    for (bool constant_w : {true, false})
      for (int threads : {1, 2}) {
        const std::vector<ir::NodeInput> inputs = {
            {x}, {Tensor::scalar<float>(0.02f), true}, {Tensor::scalar<uint8_t>(uint8_t(113)), true}, {wt, constant_w},
            {Tensor::from<float>({cfg.m}, ws), true}, {Tensor::from<int8_t>({cfg.m}, std::vector<int8_t>(size_t(cfg.m), 0)), true},
            {Tensor::scalar<float>(0.3f), true}, {Tensor::scalar<uint8_t>(uint8_t(121)), true},
            {Tensor::from<int32_t>({cfg.m}, bias), true}};
        outs.push_back(run_single(node, inputs, threads));
      }
    for (const Tensor& o : outs) CHECK(std::memcmp(o.raw(), outs.back().raw(), o.nbytes()) == 0);
  }
}

// Per-tensor QuantizeLinear / DequantizeLinear of large tensors (a CNN's input) split over the
// pool in 32768-element pieces: the same values as one thread, and QuantizeLinear's formula
// (x / scale in f32, rounded half to even, + zero point, saturated), over a partial last piece.
TEST_CASE("QuantizeLinear / DequantizeLinear per tensor split over the pool equal the formula") {
  const int64_t n = 3 * 32768 + 1001;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> xs(size_t(n), 0.0f);
  for (auto& v : xs) v = u(rng);
  xs[7] = 0.25f;  // a tie: 0.25 / 0.02 = 12.5 in f32
  // NaN (the low end), infinities and a huge value (saturate), more ties (half to even, -0.5 -> 0).
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY, 1e30f, -1e30f, -0.01f, 0.03f, 0.05f, -0.07f};
  for (size_t i = 0; i < std::size(specials); ++i) xs[8 + i] = specials[i];
  const float scale = 0.02f;
  for (bool s8 : {false, true}) {
    OpCase q;
    q.op = "QuantizeLinear";
    q.inputs = {Tensor::from<float>({1, n}, xs), Tensor::scalar<float>(scale),
                s8 ? Tensor::scalar<int8_t>(int8_t(-3)) : Tensor::scalar<uint8_t>(uint8_t(131))};
    const auto y1 = run_case(q, 1), y2 = run_case(q, 2);
    REQUIRE(y1.ok());
    REQUIRE(y2.ok());
    CHECK(std::memcmp((*y1)[0].raw(), (*y2)[0].raw(), size_t(n)) == 0);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float lo = s8 ? -128.0f : 0.0f, hi = s8 ? 127.0f : 255.0f;
      const float v = std::nearbyint(xs[size_t(i)] / scale) + (s8 ? -3.0f : 131.0f);
      const int want = std::isnan(v) ? int(lo) : int(std::clamp(v, lo, hi));
      bad += (s8 ? int((*y2)[0].data<int8_t>()[i]) : int((*y2)[0].data<uint8_t>()[i])) != want;
    }
    CHECK(bad == 0);
    OpCase dq;
    dq.op = "DequantizeLinear";
    dq.inputs = {(*y2)[0], q.inputs[1], q.inputs[2]};
    const auto d1 = run_case(dq, 1), d2 = run_case(dq, 2);
    REQUIRE(d1.ok());
    REQUIRE(d2.ok());
    CHECK(std::memcmp((*d1)[0].raw(), (*d2)[0].raw(), size_t(n) * sizeof(float)) == 0);
    const int64_t code = s8 ? (*y2)[0].data<int8_t>()[n - 1] : (*y2)[0].data<uint8_t>()[n - 1];
    CHECK((*d2)[0].data<float>()[n - 1] == float(code - (s8 ? -3 : 131)) * scale);
  }
}
