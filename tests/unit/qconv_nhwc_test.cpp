// The channels-last quantized kernels quantize_layout makes (backends/cpu/kernels/qconv.cpp's
// com.microsoft::QLinearConv with channels_last = 1, qpool_nhwc.cpp's com.microsoft::NhwcMaxPool)
// against plain loops over the NHWC tensors, bit for bit: the taps read in place (C a multiple of
// 16), pointwise convs as rows (any C), the stems' row form, im2col rows (other C), and the convs
// that run on NCHW copies (depthwise, groups); odd maps, strides, pads, dilations, s8 inputs,
// per-channel weight zero points, batch 2, 1 and 2 threads, and without the dot-product paths.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/kernels/qgemm.h"
#include "core/ir/single_node.h"
#include "tests/unit/op_case.h"

using namespace tsr;
using namespace tsr::test;

namespace {

Tensor run_one(const ir::Node& node, const std::vector<ir::NodeInput>& inputs, int threads) {
  auto y = run_node(node, inputs, threads);
  REQUIRE(y.ok());
  return (*y)[0];
}

int code(const Tensor& t, int64_t i) { return t.dtype() == DType::kI8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i]; }

}  // namespace

TEST_CASE("com.microsoft::QLinearConv channels_last equals the definition on NHWC tensors", "[quantize]") {
  struct Cfg {
    int64_t n, c, m, group, h, w, kh, kw;
    std::vector<int64_t> strides, dil, pads;
    bool x_signed, w_zp_nonuniform;
  };
  const Cfg cfgs[] = {
      {1, 16, 13, 1, 9, 11, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false},  // taps in place
      {2, 32, 37, 1, 10, 7, 3, 3, {2, 2}, {1, 1}, {1, 0, 1, 1}, false, false},  // batch 2, strided, asymmetric
      {1, 48, 19, 1, 8, 9, 3, 3, {1, 2}, {2, 2}, {2, 3, 2, 1}, false, true},    // dilated, per-channel w_zp
      {1, 16, 9, 1, 11, 6, 5, 5, {3, 1}, {1, 1}, {2, 2, 2, 2}, true, false},    // 5x5, s8 x
      {1, 32, 20, 1, 48, 47, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false}, // a large padded map (taps in place)
      {1, 64, 40, 1, 15, 15, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, false, false}, // strided 1x1 (downsample)
      {1, 32, 70, 1, 13, 17, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, false}, // pointwise, in place
      {1, 24, 20, 1, 7, 9, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, true},     // pointwise, C not x16
      {1, 3, 20, 1, 29, 30, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}, false, false},  // stem: the row form
      {1, 5, 8, 1, 12, 17, 3, 3, {1, 3}, {2, 1}, {2, 1, 2, 1}, false, false},   // few channels: the row form
      {1, 5, 8, 1, 12, 17, 3, 3, {1, 2}, {1, 2}, {2, 1, 2, 1}, false, false},   // dilated rows: im2col
      {2, 24, 11, 1, 9, 8, 3, 3, {2, 1}, {1, 1}, {1, 1, 0, 1}, true, true},     // s8, C not x16: im2col
      {1, 24, 24, 24, 9, 10, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, false}, // depthwise: NCHW copy
      {2, 32, 22, 2, 7, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false},    // groups: NCHW copy
  };
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> byte(0, 255), sym(-127, 127), b32(-5000, 5000);
  for (const Cfg& cfg : cfgs) {
    CAPTURE(cfg.n, cfg.c, cfg.m, cfg.group, cfg.h, cfg.w, cfg.kh, cfg.x_signed, cfg.w_zp_nonuniform);
    const int64_t cg = cfg.c / cfg.group, mg = cfg.m / cfg.group;
    const int64_t oh = (cfg.h + cfg.pads[0] + cfg.pads[2] - cfg.dil[0] * (cfg.kh - 1) - 1) / cfg.strides[0] + 1;
    const int64_t ow = (cfg.w + cfg.pads[1] + cfg.pads[3] - cfg.dil[1] * (cfg.kw - 1) - 1) / cfg.strides[1] + 1;
    Tensor x = Tensor::empty(cfg.x_signed ? DType::kI8 : DType::kU8, {cfg.n, cfg.h, cfg.w, cfg.c}).value();
    for (int64_t i = 0; i < x.numel(); ++i) x.mut_data<uint8_t>()[i] = uint8_t(byte(rng));
    Tensor wt = Tensor::empty(DType::kI8, {cfg.m, cg, cfg.kh, cfg.kw}).value();
    for (int64_t i = 0; i < wt.numel(); ++i) wt.mut_data<int8_t>()[i] = int8_t(sym(rng));
    std::vector<float> ws;
    std::vector<int8_t> wz;
    std::vector<int32_t> bias;
    for (int64_t j = 0; j < cfg.m; ++j) {
      ws.push_back((0.004f + 0.0007f * float(j % 9)) / float(cfg.kh * cfg.kw));
      wz.push_back(int8_t(cfg.w_zp_nonuniform ? j % 5 - 2 : 0));
      bias.push_back(b32(rng));
    }
    const int x_zp = cfg.x_signed ? -5 : 117, y_zp = 121;
    const float xs = 0.03f, ys = 0.45f;
    Tensor xzp = cfg.x_signed ? Tensor::scalar<int8_t>(int8_t(x_zp)) : Tensor::scalar<uint8_t>(uint8_t(x_zp));
    ir::Node node;
    node.op = "com.microsoft::QLinearConv";
    node.name = "n0";
    node.outputs = {0};
    node.attributes = {ir::Attribute::make_int("group", cfg.group), ir::Attribute::make_ints("strides", cfg.strides),
                       ir::Attribute::make_ints("dilations", cfg.dil), ir::Attribute::make_ints("pads", cfg.pads),
                       ir::Attribute::make_ints("kernel_shape", {cfg.kh, cfg.kw}), ir::Attribute::make_int("channels_last", 1)};
    const std::vector<ir::NodeInput> inputs = {
        {x}, {Tensor::scalar<float>(xs), true}, {xzp, true}, {wt, true}, {Tensor::from<float>({cfg.m}, ws), true},
        {Tensor::from<int8_t>({cfg.m}, wz), true}, {Tensor::scalar<float>(ys), true},
        {Tensor::scalar<uint8_t>(uint8_t(y_zp)), true}, {Tensor::from<int32_t>({cfg.m}, bias), true}};
    for (int run : {0, 1, 2}) {  // 1 thread, 2 threads, 1 thread without VNNI / sdot (no row form)
      cpu::qgemm_disable_dot_for_test(run == 2);
      const Tensor y = run_one(node, inputs, run == 1 ? 2 : 1);
      cpu::qgemm_disable_dot_for_test(false);
      REQUIRE(y.shape() == Shape{cfg.n, oh, ow, cfg.m});
      int64_t bad = 0;
      for (int64_t b = 0; b < cfg.n; ++b)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox)
            for (int64_t j = 0; j < cfg.m; ++j) {
              int64_t sum = 0;
              for (int64_t i = 0; i < cfg.kh; ++i)
                for (int64_t k = 0; k < cfg.kw; ++k) {
                  const int64_t iy = oy * cfg.strides[0] - cfg.pads[0] + i * cfg.dil[0];
                  const int64_t ix = ox * cfg.strides[1] - cfg.pads[1] + k * cfg.dil[1];
                  if (iy < 0 || iy >= cfg.h || ix < 0 || ix >= cfg.w) continue;
                  for (int64_t ch = 0; ch < cg; ++ch) {
                    const int xv = code(x, ((b * cfg.h + iy) * cfg.w + ix) * cfg.c + (j / mg) * cg + ch);
                    const int wv = wt.data<int8_t>()[((j * cg + ch) * cfg.kh + i) * cfg.kw + k] - wz[size_t(j)];
                    sum += int64_t(xv - x_zp) * wv;
                  }
                }
              const float v = std::nearbyint(float(sum + bias[size_t(j)]) * (xs * ws[size_t(j)] / ys)) + float(y_zp);
              bad += y.data<uint8_t>()[((b * oh + oy) * ow + ox) * cfg.m + j] != uint8_t(std::clamp(v, 0.0f, 255.0f));
            }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("com.microsoft::NhwcMaxPool equals the max over each window's taps", "[quantize]") {
  struct Cfg {
    int64_t n, h, w, c, kh, kw;
    std::vector<int64_t> strides, dil, pads;
    int64_t ceil;
    bool s8;
  };
  const Cfg cfgs[] = {{1, 17, 13, 64, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0, false},
                      {2, 9, 11, 5, 2, 3, {2, 1}, {1, 2}, {0, 1, 1, 0}, 1, true},
                      {1, 7, 7, 33, 3, 3, {3, 3}, {1, 1}, {0, 0, 0, 0}, 1, false},
                      {1, 120, 100, 16, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0, false}};  // split over threads
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const Cfg& cfg : cfgs) {
    CAPTURE(cfg.h, cfg.w, cfg.c, cfg.ceil, cfg.s8);
    Tensor x = Tensor::empty(cfg.s8 ? DType::kI8 : DType::kU8, {cfg.n, cfg.h, cfg.w, cfg.c}).value();
    for (int64_t i = 0; i < x.numel(); ++i) x.mut_data<uint8_t>()[i] = uint8_t(byte(rng));
    ir::Node node;
    node.op = "com.microsoft::NhwcMaxPool";
    node.name = "n0";
    node.outputs = {0};
    node.attributes = {ir::Attribute::make_ints("kernel_shape", {cfg.kh, cfg.kw}), ir::Attribute::make_ints("strides", cfg.strides),
                       ir::Attribute::make_ints("dilations", cfg.dil), ir::Attribute::make_ints("pads", cfg.pads),
                       ir::Attribute::make_int("ceil_mode", cfg.ceil)};
    for (int threads : {1, 2}) {
      const Tensor y = run_one(node, {{x}}, threads);
      REQUIRE(y.rank() == 4);
      const int64_t oh = y.dim(1), ow = y.dim(2);
      int64_t bad = 0;
      for (int64_t b = 0; b < cfg.n; ++b)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox)
            for (int64_t ch = 0; ch < cfg.c; ++ch) {
              int best = cfg.s8 ? -128 : 0;
              for (int64_t i = 0; i < cfg.kh; ++i)
                for (int64_t k = 0; k < cfg.kw; ++k) {
                  const int64_t iy = oy * cfg.strides[0] - cfg.pads[0] + i * cfg.dil[0];
                  const int64_t ix = ox * cfg.strides[1] - cfg.pads[1] + k * cfg.dil[1];
                  if (iy >= 0 && iy < cfg.h && ix >= 0 && ix < cfg.w)
                    best = std::max(best, code(x, ((b * cfg.h + iy) * cfg.w + ix) * cfg.c + ch));
                }
              bad += code(y, ((b * oh + oy) * ow + ox) * cfg.c + ch) != best;
            }
      CHECK(bad == 0);
    }
  }
}
