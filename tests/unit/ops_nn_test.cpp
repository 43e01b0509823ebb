// Tests for the nn and linalg op families (core/ops/families/nn*.cpp, linalg.cpp and their CPU
// kernels). References are naive loops by definition (written here) or numpy values (the
// script is in a comment next to them).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/ir/single_node.h"
#include "core/passes/infer_types.h"
#include "tests/unit/kernel_test_util.h"
#include "tests/unit/op_case.h"

using namespace tsr;
using namespace tsr::test;

namespace {

template <typename T>
Tensor random_tensor(const Shape& s, std::mt19937& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(static_cast<size_t>(shape_numel(s)));
  for (auto& x : v) x = static_cast<T>(u(rng));
  return Tensor::from<T>(s, v);
}

template <typename T>
void check_close(const Tensor& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.numel() == static_cast<int64_t>(want.size()));
  double max_err = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = static_cast<double>(got.data<T>()[i]), w = want[static_cast<size_t>(i)];
    max_err = std::max(max_err, std::fabs(g - w) / (1 + std::fabs(w)));
  }
  CHECK(max_err <= tol);
}

}  // namespace

TEST_CASE("Conv f32 (im2col/1x1/depthwise paths) matches direct convolution over many configs") {
  std::mt19937 rng(7);
  struct Cfg {
    Shape x, w;
    int64_t group;
    std::vector<int64_t> strides, dil, pads;
    bool bias;
  };
  const std::vector<Cfg> cfgs = {
      {{1, 3, 9, 11}, {4, 3, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
      {{2, 4, 8, 8}, {6, 2, 3, 3}, 2, {2, 2}, {1, 1}, {0, 1, 1, 0}, false},
      {{1, 8, 10, 13}, {8, 1, 3, 3}, 8, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},     // depthwise
      {{1, 8, 10, 13}, {8, 1, 5, 5}, 8, {2, 2}, {1, 1}, {2, 2, 2, 2}, true},     // depthwise s2
      {{1, 6, 9, 40}, {6, 1, 3, 3}, 6, {1, 1}, {2, 2}, {2, 2, 2, 2}, false},     // depthwise dilated
      {{1, 4, 9, 37}, {4, 1, 3, 3}, 4, {2, 2}, {1, 1}, {1, 1, 1, 1}, true},      // depthwise s2, odd pad
      {{1, 4, 9, 70}, {4, 1, 3, 3}, 4, {2, 2}, {1, 1}, {0, 0, 1, 1}, false},     // depthwise s2, no pad
      {{1, 3, 8, 50}, {3, 1, 3, 3}, 3, {1, 3}, {1, 2}, {0, 2, 1, 0}, true},      // depthwise s3 dilated
      {{1, 2, 3, 70}, {2, 1, 1, 7}, 2, {1, 2}, {1, 1}, {0, 3, 0, 3}, false},     // depthwise 1x7
      // Small planes (<= 16 outputs, <= 64 inputs: 16 channels per vector, depthwise_grad.h):
      // a block of 16 and a tail of 5, 2x2, stride 2 with asymmetric pads, 5x5 taps, dilation 2.
      {{3, 21, 4, 4}, {21, 1, 3, 3}, 21, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},   // depthwise 4x4
      {{2, 18, 2, 2}, {18, 1, 3, 3}, 18, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},  // depthwise 2x2
      {{2, 17, 5, 3}, {17, 1, 3, 3}, 17, {2, 2}, {1, 1}, {1, 0, 0, 1}, true},   // depthwise 5x3 s2
      {{1, 5, 8, 8}, {5, 1, 5, 5}, 5, {2, 2}, {1, 1}, {2, 2, 2, 2}, false},     // depthwise 8x8 5x5 s2
      {{2, 16, 6, 6}, {16, 1, 3, 3}, 16, {2, 2}, {2, 2}, {2, 2, 2, 2}, true},   // depthwise 6x6 dilated
      {{2, 16, 5, 7}, {24, 16, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},    // pointwise
      {{1, 16, 5, 7}, {24, 4, 1, 1}, 4, {1, 1}, {1, 1}, {0, 0, 0, 0}, false},    // grouped pointwise
      // Pointwise on small planes with over 64 outputs (images side by side in one GEMM, nn.cpp):
      // 2x2 planes of 5 images (3 threads: blocks of 2, 2 and 1), 3x5 planes of 3.
      {{5, 7, 2, 2}, {70, 7, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},     // pointwise 2x2
      {{3, 9, 3, 5}, {80, 9, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false},    // pointwise 3x5
      {{1, 5, 9, 9}, {7, 5, 1, 1}, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, true},       // 1x1 strided
      {{1, 3, 12, 12}, {5, 3, 3, 2}, 1, {2, 1}, {2, 1}, {1, 0, 2, 1}, true},     // asym everything
      {{1, 2, 33}, {4, 2, 5}, 1, {3}, {1}, {2, 2}, true},                        // 1-D
      {{2, 4, 50}, {4, 1, 7}, 4, {1}, {2}, {6, 6}, false},                       // 1-D depthwise
      {{1, 1, 400}, {32, 1, 64}, 1, {16}, {1}, {0, 0}, false},                   // STFT-like
      {{1, 2, 4, 5, 6}, {3, 2, 2, 3, 2}, 1, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 0, 1, 1}, true},  // 3-D
      {{1, 64, 6, 40}, {96, 64, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},   // larger GEMM
      // Enough output blocks for the threads to take whole blocks each (nn.cpp, conv_into):
      {{1, 8, 64, 64}, {16, 8, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},    // pointwise
      {{1, 4, 40, 40}, {8, 4, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},     // im2col
      {{2, 4, 32, 32}, {8, 2, 3, 3}, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},    // batch x groups
  };
  for (int threads : {1, 3}) {
    for (const Cfg& cfg : cfgs) {
      const size_t r = cfg.x.size() - 2;
      Tensor x = random_tensor<float>(cfg.x, rng), w = random_tensor<float>(cfg.w, rng);
      Tensor b = cfg.bias ? random_tensor<float>({cfg.w[0]}, rng) : Tensor();
      OpCase c{"Conv", {x, w, b}, {ir::Attribute::make_int("group", cfg.group),
                                   ir::Attribute::make_ints("strides", cfg.strides),
                                   ir::Attribute::make_ints("dilations", cfg.dil),
                                   ir::Attribute::make_ints("pads", cfg.pads)}};
      auto out = run_case(c, threads);
      INFO("x " << shape_str(cfg.x) << " w " << shape_str(cfg.w) << " threads " << threads);
      REQUIRE(out.ok());
      const Tensor& y = (*out)[0];
      Shape want_shape = {cfg.x[0], cfg.w[0]};
      for (size_t d = 0; d < r; ++d) {
        const int64_t dk = (cfg.w[d + 2] - 1) * cfg.dil[d] + 1;
        want_shape.push_back((cfg.x[d + 2] + cfg.pads[d] + cfg.pads[d + r] - dk) / cfg.strides[d] + 1);
      }
      REQUIRE(y.shape() == want_shape);
      std::vector<int64_t> pb(cfg.pads.begin(), cfg.pads.begin() + static_cast<long>(r));
      check_close<float>(y, conv_ref(x, w, cfg.bias ? &b : nullptr, cfg.group, cfg.strides, cfg.dil, pb, y.shape()), 1e-4);
    }
  }
}

// With constant weights, 3x3 stride-1 group-1 convs with >= 8 input and output channels take
// Winograd F(4x4, 3x3) (backends/cpu/kernels/winograd.cpp): partial tiles at the right and bottom
// edges, asymmetric pads, dilations (run as d x d phases), batches and thread counts. Winograd
// rounds more than a direct sum: the transforms scale tile values by up to 100 before the
// channel sums, so its error grows with the C * 9 terms of each output (measured here: 1.5e-5
// at C = 8 to 1.3e-4 at C = 64, relative to 1 + |y|); the tolerance is 1e-6 per term. A wrong
// transform or tile offset gives errors of order 1.
TEST_CASE("Conv f32 3x3 stride 1 with constant weights (Winograd) matches direct convolution") {
  std::mt19937 rng(11);
  struct Cfg {
    Shape x, w;
    int64_t dil;
    std::vector<int64_t> pads;
    bool bias;
  };
  const std::vector<Cfg> cfgs = {
      {{1, 16, 13, 18}, {24, 16, 3, 3}, 1, {1, 1, 1, 1}, true},
      {{2, 8, 4, 4}, {8, 8, 3, 3}, 1, {1, 1, 1, 1}, false},      // one tile per image
      {{1, 32, 23, 9}, {16, 32, 3, 3}, 1, {0, 2, 1, 0}, true},   // asymmetric pads
      {{1, 9, 7, 7}, {8, 9, 3, 3}, 1, {0, 0, 0, 0}, true},       // unpadded, 5x5 output
      {{1, 12, 30, 31}, {10, 12, 3, 3}, 5, {5, 5, 5, 5}, true},  // dilation 5 (M-LSD's)
      {{2, 8, 20, 17}, {9, 8, 3, 3}, 2, {2, 1, 2, 1}, false},    // dilation 2, odd phases
      {{1, 64, 12, 18}, {64, 64, 3, 3}, 1, {1, 1, 1, 1}, true},  // several blocks
      {{1, 8, 3, 50}, {8, 8, 3, 3}, 1, {1, 1, 1, 1}, true},      // too short for a tile: im2col
  };
  for (int threads : {1, 3}) {
    for (const Cfg& cfg : cfgs) {
      Tensor x = random_tensor<float>(cfg.x, rng), w = random_tensor<float>(cfg.w, rng);
      Tensor b = cfg.bias ? random_tensor<float>({cfg.w[0]}, rng) : Tensor();
      OpCase c{"Conv", {x, w, b}, {ir::Attribute::make_ints("dilations", {cfg.dil, cfg.dil}),
                                   ir::Attribute::make_ints("pads", cfg.pads)}};
      ir::Model model = make_model(c);
      // The weights (and bias) become constants, as in a loaded model.
      ir::Graph& g = model.main();
      for (size_t k = 1; k < c.inputs.size(); ++k) {
        if (!c.inputs[k].defined()) continue;
        g.tensors[static_cast<size_t>(g.nodes[0].inputs[k])].constant = c.inputs[k];
      }
      g.inputs.resize(1);
      REQUIRE(passes::infer_types(model).ok());
      SessionOptions opt;
      opt.num_threads = threads;
      auto session = Session::create(std::make_shared<const ir::Model>(std::move(model)), opt);
      REQUIRE(session.ok());
      auto out = (*session)->run({x});
      INFO("x " << shape_str(cfg.x) << " w " << shape_str(cfg.w) << " dilation " << cfg.dil << " threads " << threads);
      REQUIRE(out.ok());
      const Tensor& y = (*out)[0];
      const int64_t dk = 2 * cfg.dil + 1;
      REQUIRE(y.shape() == Shape{cfg.x[0], cfg.w[0], cfg.x[2] + cfg.pads[0] + cfg.pads[2] - dk + 1,
                                 cfg.x[3] + cfg.pads[1] + cfg.pads[3] - dk + 1});
      check_close<float>(y, conv_ref(x, w, cfg.bias ? &b : nullptr, 1, {1, 1}, {cfg.dil, cfg.dil},
                                     {cfg.pads[0], cfg.pads[1]}, y.shape()), 1e-6 * static_cast<double>(cfg.x[1] * 9));
    }
  }
}

TEST_CASE("Conv f64 and auto_pad SAME_UPPER / SAME_LOWER / VALID") {
  std::mt19937 rng(11);
  Tensor x = random_tensor<double>({1, 2, 7, 6}, rng), w = random_tensor<double>({3, 2, 4, 3}, rng);
  struct AP {
    const char* mode;
    Shape out;
    std::vector<int64_t> pb;
  };
  // SAME with stride 2: out = ceil(7/2)=4, ceil(6/2)=3; total pad H = (4-1)*2+4-7 = 3, W = (3-1)*2+3-6 = 1.
  for (const AP& ap : {AP{"SAME_UPPER", {1, 3, 4, 3}, {1, 0}}, AP{"SAME_LOWER", {1, 3, 4, 3}, {2, 1}},
                       AP{"VALID", {1, 3, 2, 2}, {0, 0}}}) {
    OpCase c{"Conv", {x, w}, {ir::Attribute::make_string("auto_pad", ap.mode), ir::Attribute::make_ints("strides", {2, 2})}};
    auto out = run_case(c);
    INFO(ap.mode);
    REQUIRE(out.ok());
    REQUIRE((*out)[0].shape() == ap.out);
    check_close<double>((*out)[0], conv_ref(x, w, nullptr, 1, {2, 2}, {1, 1}, ap.pb, ap.out), 1e-12);
  }
}

TEST_CASE("Conv shape inference keeps dynamic dims and errors name the node and attribute") {
  OpCase c{"Conv", {Tensor::from<float>({1, 4, 8, 8}, {}), Tensor::from<float>({6, 2, 3, 3}, {})},
           {ir::Attribute::make_int("group", 2), ir::Attribute::make_ints("strides", {2, 1}),
            ir::Attribute::make_ints("pads", {1, 1, 1, 1})}};
  const std::vector<Shape> dyn = {{-1, 4, -1, 8}, {6, 2, 3, 3}};
  ir::Model m = make_model(c, &dyn);
  REQUIRE(passes::infer_types(m).ok());
  const ir::TensorInfo& y = m.main().tensors[static_cast<size_t>(m.main().outputs[0])];
  CHECK(y.dtype == DType::kF32);
  CHECK(y.shape == Shape{-1, 6, -1, 8});

  OpCase bad_group = c;
  bad_group.attrs[0] = ir::Attribute::make_int("group", 3);
  ir::Model m2 = make_model(bad_group);
  Status s = passes::infer_types(m2);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("(Conv \"n0\")") != std::string::npos);
  CHECK(s.message().find("group") != std::string::npos);

  OpCase bad_rank{"Conv", {Tensor::from<float>({1, 4, 8, 8}, {}), Tensor::from<float>({6, 4}, {})}};
  ir::Model m3 = make_model(bad_rank);
  s = passes::infer_types(m3);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("(Conv \"n0\")") != std::string::npos);
  CHECK(s.message().find("W") != std::string::npos);

  OpCase bad_pads = c;
  bad_pads.attrs[2] = ir::Attribute::make_ints("pads", {1, 1});
  ir::Model m4 = make_model(bad_pads);
  s = passes::infer_types(m4);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("pads") != std::string::npos);

  OpCase bad_wc = c;
  bad_wc.inputs[1] = Tensor::from<float>({6, 3, 3, 3}, {});
  ir::Model m5 = make_model(bad_wc);
  CHECK_FALSE(passes::infer_types(m5).ok());
}

namespace {

std::vector<float> iota_f(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  return v;
}

}  // namespace

// The expected values below are the ONNX operator documentation's examples
// (onnx/backend/test/case/node/maxpool.py, averagepool.py), inputs 1..16 (4x4) or 1..25 (5x5).
TEST_CASE("MaxPool: ceil_mode, dilations, SAME_UPPER, Indices with both storage orders") {
  const Tensor x4 = Tensor::from<float>({1, 1, 4, 4}, iota_f(16));
  const Tensor x5 = Tensor::from<float>({1, 1, 5, 5}, iota_f(25));
  using A = ir::Attribute;
  auto out = run_case({"MaxPool", {x4}, {A::make_ints("kernel_shape", {3, 3}), A::make_ints("strides", {2, 2}), A::make_int("ceil_mode", 1)}});
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == Shape{1, 1, 2, 2});
  check_close<float>((*out)[0], {11, 12, 15, 16}, 0);
  out = run_case({"MaxPool", {x4}, {A::make_ints("kernel_shape", {2, 2}), A::make_ints("dilations", {2, 2})}});
  REQUIRE(out.ok());
  check_close<float>((*out)[0], {11, 12, 15, 16}, 0);
  out = run_case({"MaxPool", {x5}, {A::make_ints("kernel_shape", {3, 3}), A::make_ints("strides", {2, 2}), A::make_string("auto_pad", "SAME_UPPER")}});
  REQUIRE(out.ok());
  check_close<float>((*out)[0], {7, 9, 10, 17, 19, 20, 22, 24, 25}, 0);
  out = run_case({"MaxPool", {x5}, {A::make_ints("kernel_shape", {5, 5}), A::make_ints("pads", {2, 2, 2, 2})}, 2});
  REQUIRE(out.ok());
  check_close<float>((*out)[0], {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25}, 0);
  REQUIRE((*out)[1].dtype() == DType::kI64);
  check_close<int64_t>((*out)[1], {12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24}, 0);
  out = run_case({"MaxPool", {x5}, {A::make_ints("kernel_shape", {2, 2}), A::make_ints("strides", {2, 2}), A::make_int("storage_order", 1)}, 2});
  REQUIRE(out.ok());
  check_close<float>((*out)[0], {7, 9, 17, 19}, 0);
  check_close<int64_t>((*out)[1], {6, 16, 8, 18}, 0);
  // 1-D with batch/channel offsets in Indices: x = arange(12).reshape(2, 2, 3), k=2 ->
  // values [1,2, 4,5, 7,8, 10,11], flat indices the same (x[i] == i).
  std::vector<float> v12(12);
  for (int i = 0; i < 12; ++i) v12[static_cast<size_t>(i)] = static_cast<float>(i);
  out = run_case({"MaxPool", {Tensor::from<float>({2, 2, 3}, v12)}, {A::make_ints("kernel_shape", {2})}, 2});
  REQUIRE(out.ok());
  check_close<float>((*out)[0], {1, 2, 4, 5, 7, 8, 10, 11}, 0);
  check_close<int64_t>((*out)[1], {1, 2, 4, 5, 7, 8, 10, 11}, 0);
}

// The no-Indices MaxPool splits outputs by rows (one large plane spreads over the threads) and
// runs windows inside the input without bounds checks: checked against the definition on random
// data with pads, strides, dilations, ceil_mode, 1-D to 3-D, one plane and many, 1 and 3 threads.
TEST_CASE("MaxPool without Indices matches the definition across row splits and threads") {
  std::mt19937 rng(5);
  using A = ir::Attribute;
  struct Cfg {
    Shape x;
    std::vector<int64_t> k, s, d, pads;
    int64_t ceil;
  };
  const std::vector<Cfg> cfgs = {
      {{1, 1, 160, 160}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0},  // M-LSD's peak pooling
      {{2, 3, 17, 23}, {3, 2}, {2, 1}, {1, 2}, {1, 0, 2, 1}, 0},
      {{1, 4, 9, 9}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1},
      {{1, 2, 40}, {5}, {3}, {1}, {2, 2}, 1},
      {{1, 2, 5, 6, 7}, {2, 3, 2}, {1, 2, 1}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}, 0},
      {{1, 1, 6, 6}, {3, 3}, {1, 1}, {1, 1}, {3, 3, 3, 3}, 0},  // windows wholly in the padding
      // 2x2 windows with stride 2 along rows (their own loop): even and odd sizes, pads, ceil_mode.
      {{1, 3, 12, 18}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 0},
      {{2, 2, 9, 37}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 1, 1}, 1},
      {{1, 2, 8, 35}, {2, 2}, {1, 2}, {1, 1}, {1, 1, 0, 0}, 0},
      // 3 taps with stride 2 along rows (their own loop): ResNet's stem pool, odd and even widths.
      {{1, 3, 21, 26}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0},
      {{1, 2, 9, 31}, {2, 3}, {1, 2}, {2, 1}, {0, 1, 1, 0}, 1},
      // Rows wide enough for the f32 vector loop of 3x3 stride 2 (16 lanes on AVX-512): SqueezeNet's
      // first pool (111 wide, no pads), ResNet's (pads 1), a width whose last vector would read past
      // the row, ceil_mode, and a dilated row step.
      {{1, 3, 15, 111}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1},
      {{1, 2, 12, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0},
      {{1, 2, 7, 67}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 0},
      {{1, 2, 11, 70}, {3, 3}, {2, 2}, {2, 1}, {1, 0, 0, 1}, 1},
  };
  for (int threads : {1, 3}) {
    for (const Cfg& cfg : cfgs) {
      Tensor x = random_tensor<float>(cfg.x, rng);
      // NaN in some taps: the first in-range tap seeds a window's max and a later tap replaces it
      // only when greater, so a NaN first tap gives NaN and a NaN later tap is passed over.
      for (int64_t i = 5; i < x.numel(); i += 97) x.mut_data<float>()[i] = NAN;
      auto out = run_case({"MaxPool", {x}, {A::make_ints("kernel_shape", cfg.k), A::make_ints("strides", cfg.s),
                                            A::make_ints("dilations", cfg.d), A::make_ints("pads", cfg.pads),
                                            A::make_int("ceil_mode", cfg.ceil)}},
                          threads);
      INFO("x " << shape_str(cfg.x) << " threads " << threads);
      REQUIRE(out.ok());
      const Tensor& y = (*out)[0];
      const size_t r = cfg.k.size();
      Shape want_shape = {cfg.x[0], cfg.x[1]};
      for (size_t a = 0; a < r; ++a) {
        const int64_t span = cfg.x[a + 2] + cfg.pads[a] + cfg.pads[a + r] - ((cfg.k[a] - 1) * cfg.d[a] + 1);
        want_shape.push_back((cfg.ceil ? (span + cfg.s[a] - 1) / cfg.s[a] : span / cfg.s[a]) + 1);
      }
      REQUIRE(y.shape() == want_shape);
      // The definition: the max over the window's taps inside the input; -inf for none.
      const int64_t planes = cfg.x[0] * cfg.x[1];
      const int64_t in_sp = shape_numel(Shape(cfg.x.begin() + 2, cfg.x.end()));
      const int64_t out_sp = shape_numel(Shape(want_shape.begin() + 2, want_shape.end()));
      const int64_t k_sp = shape_numel(Shape(cfg.k.begin(), cfg.k.end()));
      std::vector<double> want(static_cast<size_t>(planes * out_sp));
      std::vector<int64_t> o(r), kk(r);
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t op = 0; op < out_sp; ++op) {
          int64_t t = op;
          for (size_t a = r; a-- > 0;) o[a] = t % want_shape[a + 2], t /= want_shape[a + 2];
          double best = -INFINITY;
          bool seeded = false;
          for (int64_t kp = 0; kp < k_sp; ++kp) {
            int64_t t2 = kp, off = 0;
            bool inside = true;
            for (size_t a = r; a-- > 0;) kk[a] = t2 % cfg.k[a], t2 /= cfg.k[a];
            for (size_t a = 0; a < r; ++a) {
              const int64_t i = o[a] * cfg.s[a] - cfg.pads[a] + kk[a] * cfg.d[a];
              inside = inside && i >= 0 && i < cfg.x[a + 2];
              off = off * cfg.x[a + 2] + i;
            }
            if (!inside) continue;
            const double v = x.scalar_f64(p * in_sp + off);
            if (!seeded || v > best) best = v;
            seeded = true;
          }
          want[static_cast<size_t>(p * out_sp + op)] = best;
        }
      for (int64_t i = 0; i < y.numel(); ++i) {
        const double g = y.scalar_f64(i), wv = want[static_cast<size_t>(i)];
        if (std::isnan(wv)) CHECK(std::isnan(g));
        else if (std::isinf(wv)) CHECK(std::isinf(g));
        else CHECK(g == wv);
      }
    }
  }
}

TEST_CASE("AveragePool: pads with and without count_include_pad, ceil_mode") {
  const Tensor x5 = Tensor::from<float>({1, 1, 5, 5}, iota_f(25));
  using A = ir::Attribute;
  // numpy: x=np.arange(1,26.).reshape(5,5); p=np.pad(x,2); m=np.pad(np.ones((5,5)),2)
  //   exclude pad: p[i:i+5,j:j+5].sum()/m[i:i+5,j:j+5].sum(); include pad: p[i:i+5,j:j+5].mean()
  auto out = run_case({"AveragePool", {x5}, {A::make_ints("kernel_shape", {5, 5}), A::make_ints("pads", {2, 2, 2, 2})}});
  REQUIRE(out.ok());
  check_close<float>((*out)[0], {7, 7.5, 8, 8.5, 9, 9.5, 10, 10.5, 11, 11.5, 12, 12.5, 13, 13.5, 14, 14.5, 15, 15.5, 16, 16.5, 17, 17.5, 18, 18.5, 19}, 1e-6);
  out = run_case({"AveragePool", {x5}, {A::make_ints("kernel_shape", {5, 5}), A::make_ints("pads", {2, 2, 2, 2}), A::make_int("count_include_pad", 1)}});
  REQUIRE(out.ok());
  check_close<float>((*out)[0], {2.52, 3.6, 4.8, 4.08, 3.24, 4.56, 6.4, 8.4, 7.04, 5.52, 7.2, 10, 13, 10.8, 8.4, 6.96, 9.6, 12.4, 10.24, 7.92, 6.12, 8.4, 10.8, 8.88, 6.84}, 1e-6);
  // averagepool_2d_ceil: 4x4 1..16, k 3, s 2, ceil -> [[6, 7.5], [12, 13.5]].
  out = run_case({"AveragePool", {Tensor::from<float>({1, 1, 4, 4}, iota_f(16))}, {A::make_ints("kernel_shape", {3, 3}), A::make_ints("strides", {2, 2}), A::make_int("ceil_mode", 1)}});
  REQUIRE(out.ok());
  check_close<float>((*out)[0], {6, 7.5, 12, 13.5}, 1e-6);
}

// AveragePool 2x2 stride 2 without pads (DenseNet's transitions) has its own loop (vectors of
// deinterleaved columns, then single lanes): bit for bit the plain window sum over 4, on odd and
// even sizes (the last row and column dropped), widths around the vector steps, f32 and f64,
// 3-D (1x2x2 windows) too.
TEST_CASE("AveragePool 2x2 stride 2 matches the plain window sum, bit for bit") {
  std::mt19937 rng(5);
  using A = ir::Attribute;
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 3, 2, 2}, {2, 3, 7, 9}, {1, 2, 6, 33}, {1, 1, 5, 66}, {1, 4, 4, 17}, {1, 2, 3, 4, 40}};
  for (const auto& sh : shapes) {
    for (const bool f64 : {false, true}) {
      const Tensor x = f64 ? random_tensor<double>(sh, rng) : random_tensor<float>(sh, rng);
      const bool three_d = sh.size() == 5;
      const std::vector<int64_t> k = three_d ? std::vector<int64_t>{1, 2, 2} : std::vector<int64_t>{2, 2};
      auto out = run_case({"AveragePool", {x}, {A::make_ints("kernel_shape", k), A::make_ints("strides", k)}});
      REQUIRE(out.ok());
      const Tensor& y = (*out)[0];
      const int64_t depth = three_d ? sh[2] : 1, h = sh[sh.size() - 2], w = sh.back();
      const int64_t oh_n = h / 2, ow_n = w / 2, planes = sh[0] * sh[1];
      REQUIRE(y.numel() == planes * depth * oh_n * ow_n);
      int64_t i = 0;
      for (int64_t p = 0; p < planes * depth; ++p)
        for (int64_t oh = 0; oh < oh_n; ++oh)
          for (int64_t ow = 0; ow < ow_n; ++ow, ++i) {
            const int64_t base = p * h * w + 2 * oh * w + 2 * ow;
            if (f64) {
              double sum = 0;
              for (const int64_t off : {int64_t{0}, int64_t{1}, w, w + 1}) sum += x.data<double>()[base + off];
              CHECK(y.data<double>()[i] == sum / 4);
            } else {
              float sum = 0;
              for (const int64_t off : {int64_t{0}, int64_t{1}, w, w + 1}) sum += x.data<float>()[base + off];
              CHECK(y.data<float>()[i] == sum / 4);
            }
          }
    }
  }
}

TEST_CASE("GlobalAveragePool and GlobalMaxPool reduce all spatial dims") {
  const Tensor x = Tensor::from<float>({1, 2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, 9});
  auto out = run_case({"GlobalAveragePool", {x}});
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == Shape{1, 2, 1, 1});
  check_close<float>((*out)[0], {3.5, -1.0}, 1e-6);
  out = run_case({"GlobalMaxPool", {x}});
  REQUIRE(out.ok());
  check_close<float>((*out)[0], {6, 9}, 0);
}

// f32 GlobalAveragePool runs through conv_se.cpp's vector plane_mean: the same additions as the
// plain loop it replaced (16 partial sums, the tail into the first, halved pairwise; one chain
// under 16), so bit for bit that loop, on plane sizes around the 16-wide steps.
TEST_CASE("GlobalAveragePool f32 sums each plane as its 16-partial-sum loop, bit for bit") {
  std::mt19937 rng(11);
  for (const int64_t size : {1, 3, 15, 16, 17, 33, 49, 50, 196}) {
    const Tensor x = random_tensor<float>({2, 3, 1, size}, rng);
    auto out = run_case({"GlobalAveragePool", {x}});
    REQUIRE(out.ok());
    const float* px = x.data<float>();
    for (int64_t p = 0; p < 6; ++p) {
      const float* s = px + p * size;
      float want = 0.0f;
      if (size < 16) {
        for (int64_t i = 0; i < size; ++i) want += s[i];
      } else {
        float acc[16] = {};
        int64_t i = 0;
        for (; i + 16 <= size; i += 16)
          for (int j = 0; j < 16; ++j) acc[j] += s[i + j];
        for (; i < size; ++i) acc[0] += s[i];
        for (int half = 8; half > 0; half /= 2)
          for (int j = 0; j < half; ++j) acc[j] += acc[j + half];
        want = acc[0];
      }
      want /= static_cast<float>(size);
      INFO("size " << size << " plane " << p);
      CHECK((*out)[0].data<float>()[p] == want);
    }
  }
}

TEST_CASE("BatchNormalization inference and training_mode") {
  std::mt19937 rng(3);
  const Tensor x = random_tensor<float>({2, 3, 2, 2}, rng);
  const Tensor scale = Tensor::from<float>({3}, {1.0f, 0.5f, 2.0f});
  const Tensor bias = Tensor::from<float>({3}, {0.0f, 1.0f, -1.0f});
  const Tensor mean = Tensor::from<float>({3}, {0.1f, -0.2f, 0.3f});
  const Tensor var = Tensor::from<float>({3}, {1.0f, 0.25f, 4.0f});
  auto out = run_case({"BatchNormalization", {x, scale, bias, mean, var}, {ir::Attribute::make_float("epsilon", 1e-3)}});
  REQUIRE(out.ok());
  std::vector<double> want(24);
  for (int i = 0; i < 24; ++i) {
    const int c = (i / 4) % 3;
    want[static_cast<size_t>(i)] = (x.scalar_f64(i) - mean.scalar_f64(c)) / std::sqrt(var.scalar_f64(c) + 1e-3) * scale.scalar_f64(c) + bias.scalar_f64(c);
  }
  check_close<float>((*out)[0], want, 1e-5);

  out = run_case({"BatchNormalization", {x, scale, bias, mean, var},
                  {ir::Attribute::make_int("training_mode", 1), ir::Attribute::make_float("momentum", 0.8)}, 3});
  REQUIRE(out.ok());
  std::vector<double> bm(3, 0), bv(3, 0), rm(3), rv(3);
  for (int i = 0; i < 24; ++i) bm[static_cast<size_t>((i / 4) % 3)] += x.scalar_f64(i) / 8;
  for (int i = 0; i < 24; ++i) {
    const double d = x.scalar_f64(i) - bm[static_cast<size_t>((i / 4) % 3)];
    bv[static_cast<size_t>((i / 4) % 3)] += d * d / 8;
  }
  for (int c = 0; c < 3; ++c) {
    rm[static_cast<size_t>(c)] = mean.scalar_f64(c) * 0.8 + bm[static_cast<size_t>(c)] * 0.2;
    rv[static_cast<size_t>(c)] = var.scalar_f64(c) * 0.8 + bv[static_cast<size_t>(c)] * 0.2;
  }
  for (int i = 0; i < 24; ++i) {
    const size_t c = static_cast<size_t>((i / 4) % 3);
    want[static_cast<size_t>(i)] = (x.scalar_f64(i) - bm[c]) / std::sqrt(bv[c] + 1e-5) * scale.scalar_f64(static_cast<int64_t>(c)) + bias.scalar_f64(static_cast<int64_t>(c));
  }
  check_close<float>((*out)[0], want, 1e-5);
  check_close<float>((*out)[1], rm, 1e-6);
  check_close<float>((*out)[2], rv, 1e-6);

  OpCase bad{"BatchNormalization", {x, Tensor::from<float>({4}, {1, 1, 1, 1}), bias, mean, var}};
  ir::Model m = make_model(bad);
  Status s = passes::infer_types(m);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("scale") != std::string::npos);
}

TEST_CASE("LayerNormalization with Mean/InvStdDev outputs and broadcast Scale") {
  std::mt19937 rng(5);
  const Tensor x = random_tensor<float>({2, 3, 4}, rng, -2, 2);
  const Tensor scale = random_tensor<float>({3, 4}, rng);
  const Tensor bias = random_tensor<float>({4}, rng);
  auto out = run_case({"LayerNormalization", {x, scale, bias}, {ir::Attribute::make_int("axis", 1)}, 3});
  REQUIRE(out.ok());
  CHECK((*out)[1].shape() == Shape{2, 1, 1});
  CHECK((*out)[1].dtype() == DType::kF32);
  std::vector<double> want(24), mu(2), inv(2);
  for (int r = 0; r < 2; ++r) {
    double s = 0, s2 = 0;
    for (int i = 0; i < 12; ++i) s += x.scalar_f64(r * 12 + i);
    mu[static_cast<size_t>(r)] = s / 12;
    for (int i = 0; i < 12; ++i) s2 += std::pow(x.scalar_f64(r * 12 + i) - mu[static_cast<size_t>(r)], 2);
    inv[static_cast<size_t>(r)] = 1 / std::sqrt(s2 / 12 + 1e-5);
    for (int i = 0; i < 12; ++i)
      want[static_cast<size_t>(r * 12 + i)] = (x.scalar_f64(r * 12 + i) - mu[static_cast<size_t>(r)]) * inv[static_cast<size_t>(r)] * scale.scalar_f64(i) + bias.scalar_f64(i % 4);
  }
  check_close<float>((*out)[0], want, 1e-5);
  check_close<float>((*out)[1], mu, 1e-6);
  check_close<float>((*out)[2], inv, 1e-5);
  // Mean omitted (-1), InvStdDev kept: the graph has outputs Y and InvStdDev.
  out = run_case({"LayerNormalization", {x, scale, bias}, {ir::Attribute::make_int("axis", 1)}, 3, {1}});
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  check_close<float>((*out)[1], inv, 1e-5);
  // Without the optional outputs and bias, default axis -1.
  out = run_case({"LayerNormalization", {x, Tensor::from<float>({4}, {1, 1, 1, 1})}});
  REQUIRE(out.ok());
  double row = 0;
  for (int i = 0; i < 4; ++i) row += (*out)[0].scalar_f64(i);
  CHECK(row == Approx(0).margin(1e-5));
}

TEST_CASE("InstanceNormalization and LRN by definition") {
  std::mt19937 rng(9);
  const Tensor x = random_tensor<float>({2, 3, 5}, rng);
  const Tensor scale = Tensor::from<float>({3}, {1.0f, 2.0f, 0.5f});
  const Tensor bias = Tensor::from<float>({3}, {0.0f, -1.0f, 1.0f});
  auto out = run_case({"InstanceNormalization", {x, scale, bias}});
  REQUIRE(out.ok());
  std::vector<double> want(30);
  for (int p = 0; p < 6; ++p) {
    double s = 0, s2 = 0;
    for (int i = 0; i < 5; ++i) s += x.scalar_f64(p * 5 + i) / 5;
    for (int i = 0; i < 5; ++i) s2 += std::pow(x.scalar_f64(p * 5 + i) - s, 2) / 5;
    for (int i = 0; i < 5; ++i)
      want[static_cast<size_t>(p * 5 + i)] = (x.scalar_f64(p * 5 + i) - s) / std::sqrt(s2 + 1e-5) * scale.scalar_f64(p % 3) + bias.scalar_f64(p % 3);
  }
  check_close<float>((*out)[0], want, 1e-5);

  const Tensor y = random_tensor<float>({1, 5, 2, 2}, rng);
  out = run_case({"LRN", {y}, {ir::Attribute::make_int("size", 3), ir::Attribute::make_float("alpha", 0.01)}});
  REQUIRE(out.ok());
  std::vector<double> lw(20);
  for (int c = 0; c < 5; ++c)
    for (int i = 0; i < 4; ++i) {
      double sq = 0;
      for (int k = std::max(0, c - 1); k <= std::min(4, c + 1); ++k) sq += std::pow(y.scalar_f64(k * 4 + i), 2);
      lw[static_cast<size_t>(c * 4 + i)] = y.scalar_f64(c * 4 + i) / std::pow(1.0 + 0.01 / 3 * sq, 0.75);
    }
  check_close<float>((*out)[0], lw, 1e-6);
}

TEST_CASE("Softmax / LogSoftmax / Hardmax along last and inner axes") {
  std::mt19937 rng(13);
  for (int64_t axis : {-1, 1, 0}) {
    const Tensor x = random_tensor<float>({3, 4, 37}, rng, -5, 5);
    const int64_t ax = axis < 0 ? 2 : axis;
    const Shape s = x.shape();
    int64_t inner = 1;
    for (int64_t d = ax + 1; d < 3; ++d) inner *= s[static_cast<size_t>(d)];
    const int64_t len = s[static_cast<size_t>(ax)], outer = x.numel() / (len * inner);
    std::vector<double> sm(static_cast<size_t>(x.numel())), lsm(sm.size()), hm(sm.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double mx = -1e300, sum = 0;
        int64_t arg = 0;
        for (int64_t a = 0; a < len; ++a) {
          const double v = x.scalar_f64((o * len + a) * inner + i);
          if (v > mx) mx = v, arg = a;
        }
        for (int64_t a = 0; a < len; ++a) sum += std::exp(x.scalar_f64((o * len + a) * inner + i) - mx);
        for (int64_t a = 0; a < len; ++a) {
          const size_t k = static_cast<size_t>((o * len + a) * inner + i);
          sm[k] = std::exp(x.scalar_f64(static_cast<int64_t>(k)) - mx) / sum;
          lsm[k] = x.scalar_f64(static_cast<int64_t>(k)) - mx - std::log(sum);
          hm[k] = a == arg ? 1 : 0;
        }
      }
    INFO("axis " << axis);
    const std::vector<ir::Attribute> attrs = {ir::Attribute::make_int("axis", axis)};
    auto out = run_case({"Softmax", {x}, attrs});
    REQUIRE(out.ok());
    check_close<float>((*out)[0], sm, 1e-6);
    out = run_case({"LogSoftmax", {x}, attrs});
    REQUIRE(out.ok());
    check_close<float>((*out)[0], lsm, 1e-5);
    out = run_case({"Hardmax", {x}, attrs});
    REQUIRE(out.ok());
    check_close<float>((*out)[0], hm, 0);
  }
  // numpy: x=np.array([[1.,2.,3.],[-1.,0.,5.]]); e=np.exp(x-x.max(-1,keepdims=True)); e/e.sum(-1,keepdims=True)
  auto out = run_case({"Softmax", {Tensor::from<double>({2, 3}, {1, 2, 3, -1, 0, 5})}});
  REQUIRE(out.ok());
  check_close<double>((*out)[0], {0.09003057317038043, 0.24472847105479767, 0.6652409557748218,
                                  0.0024561149044509535, 0.006676412513376451, 0.9908674725821726}, 1e-12);
}

namespace {

// numpy.matmul by definition (broadcast batch dims, 1-D promotion) in double.
std::vector<double> matmul_ref(const Tensor& a, const Tensor& b, const Shape& out_shape) {
  Shape sa = a.shape(), sb = b.shape();
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  const size_t br = std::max(sa.size(), sb.size()) - 2;
  Shape batch(br);
  auto dim_at = [&](const Shape& s, size_t d) {  // batch dim d of s right-aligned to br
    const size_t sr = s.size() - 2;
    return d + sr >= br ? s[d + sr - br] : int64_t{1};
  };
  for (size_t d = 0; d < br; ++d) batch[d] = std::max(dim_at(sa, d), dim_at(sb, d));
  std::vector<double> out;
  const int64_t nb = shape_numel(batch);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t oa = 0, ob = 0, rem = bi, mula = 1, mulb = 1;
    for (size_t d = br; d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += (dim_at(sa, d) == 1 ? 0 : idx) * mula;
      ob += (dim_at(sb, d) == 1 ? 0 : idx) * mulb;
      mula *= dim_at(sa, d);
      mulb *= dim_at(sb, d);
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += a.scalar_f64(oa * m * k + i * k + p) * b.scalar_f64(ob * k * n + p * n + j);
        out.push_back(s);
      }
  }
  REQUIRE(static_cast<int64_t>(out.size()) == shape_numel(out_shape));
  return out;
}

}  // namespace

TEST_CASE("MatMul: batch broadcasting, 1-D promotion, dtypes") {
  std::mt19937 rng(17);
  struct MC {
    Shape a, b, out;
  };
  const std::vector<MC> cases = {
      {{3, 4}, {4, 5}, {3, 5}},           {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}}, {{4}, {4}, {}},
      {{3, 4}, {4}, {3}},                 {{4}, {2, 4, 5}, {2, 5}},                {{2, 7, 33}, {33, 65}, {2, 7, 65}},
      {{8, 40, 16}, {8, 16, 40}, {8, 40, 40}}, {{1, 64}, {64, 300}, {1, 300}},      {{2, 0, 3}, {3, 4}, {2, 0, 4}},
  };
  for (int threads : {1, 2}) {
    for (const MC& c : cases) {
      INFO(shape_str(c.a) << " x " << shape_str(c.b));
      const Tensor a = random_tensor<float>(c.a, rng), b = random_tensor<float>(c.b, rng);
      auto out = run_case({"MatMul", {a, b}}, threads);
      REQUIRE(out.ok());
      REQUIRE((*out)[0].shape() == c.out);
      check_close<float>((*out)[0], matmul_ref(a, b, c.out), 1e-5);
    }
  }
  const Tensor ad = random_tensor<double>({2, 3, 4}, rng), bd = random_tensor<double>({4, 2}, rng);
  auto out = run_case({"MatMul", {ad, bd}});
  REQUIRE(out.ok());
  check_close<double>((*out)[0], matmul_ref(ad, bd, {2, 3, 2}), 1e-14);
  // numpy: np.array([[1,2],[3,4]]) @ np.array([[5,6],[7,8]]) -> [[19,22],[43,50]]
  out = run_case({"MatMul", {Tensor::from<int64_t>({2, 2}, {1, 2, 3, 4}), Tensor::from<int64_t>({2, 2}, {5, 6, 7, 8})}});
  REQUIRE(out.ok());
  check_close<int64_t>((*out)[0], {19, 22, 43, 50}, 0);
  out = run_case({"MatMul", {Tensor::from<int32_t>({2}, {1, 2}), Tensor::from<int32_t>({2, 2}, {5, 6, 7, 8})}});
  REQUIRE(out.ok());
  check_close<int32_t>((*out)[0], {19, 22}, 0);

  ir::Model bad = make_model({"MatMul", {Tensor::from<float>({2, 3}, {}), Tensor::from<float>({4, 2}, {})}});
  Status s = passes::infer_types(bad);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("(MatMul \"n0\")") != std::string::npos);
  // Load-time inference with dynamic dims.
  OpCase dyn_case{"MatMul", {Tensor::from<float>({2, 3, 4}, {}), Tensor::from<float>({4, 5}, {})}};
  const std::vector<Shape> dyn = {{-1, -1, 4}, {4, -1}};
  ir::Model dm = make_model(dyn_case, &dyn);
  REQUIRE(passes::infer_types(dm).ok());
  CHECK(dm.main().tensors[static_cast<size_t>(dm.main().outputs[0])].shape == Shape{-1, -1, -1});
}

TEST_CASE("Gemm: transA/transB, alpha/beta, C broadcast or absent") {
  std::mt19937 rng(19);
  using A = ir::Attribute;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int cmode = 0; cmode < 5; ++cmode) {
        const int64_t m = 5, n = 7, k = 9;
        const Tensor a = random_tensor<float>(ta ? Shape{k, m} : Shape{m, k}, rng);
        const Tensor b = random_tensor<float>(tb ? Shape{n, k} : Shape{k, n}, rng);
        const Shape cs = cmode == 0 ? Shape{m, n} : cmode == 1 ? Shape{n} : cmode == 2 ? Shape{m, 1} : Shape{};
        const Tensor c = cmode == 4 ? Tensor() : random_tensor<float>(cs, rng);
        auto out = run_case({"Gemm", {a, b, c}, {A::make_int("transA", ta), A::make_int("transB", tb), A::make_float("alpha", 0.5), A::make_float("beta", -2.0)}});
        INFO("ta " << ta << " tb " << tb << " cmode " << cmode);
        REQUIRE(out.ok());
        REQUIRE((*out)[0].shape() == Shape{m, n});
        std::vector<double> want;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t p = 0; p < k; ++p) s += a.scalar_f64(ta ? p * m + i : i * k + p) * b.scalar_f64(tb ? j * k + p : p * n + j);
            double cv = 0;
            if (cmode == 0) cv = c.scalar_f64(i * n + j);
            if (cmode == 1) cv = c.scalar_f64(j);
            if (cmode == 2) cv = c.scalar_f64(i);
            if (cmode == 3) cv = c.scalar_f64(0);
            want.push_back(0.5 * s - 2.0 * cv);
          }
        check_close<float>((*out)[0], want, 1e-5);
      }
  ir::Model bad = make_model({"Gemm", {Tensor::from<float>({2, 3}, {}), Tensor::from<float>({3, 4}, {}), Tensor::from<float>({3}, {})}});
  Status s = passes::infer_types(bad);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("(Gemm \"n0\")") != std::string::npos);
}

TEST_CASE("f16 Conv is rejected with kUnsupported by the cpu backend") {
  OpCase c{"Conv", {Tensor::from<Half>({1, 1, 3, 3}, std::vector<Half>(9, Half{0x3c00})), Tensor::from<Half>({1, 1, 1, 1}, {Half{0x3c00}})}};
  auto out = run_case(c);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == StatusCode::kUnsupported);
}
