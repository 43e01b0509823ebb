// The CPU conv kernels' fast paths against references written here: sgemm_direct
// (backends/cpu/kernels/gemm_direct.h) against the naive product in double, and Conv/FusedConv
// with constant weights (as in a loaded model: the weights are packed when the kernel is created)
// on every path (sgemm_direct for <= 64 output channels per group, the packed SGEMM above,
// pointwise, implicit GEMM and im2col, depthwise on padded rows, Winograd with dilations) against the
// convolution by definition plus the residual Z and the activation. Odd sizes, strides, pads,
// dilations and groups, 1 and 3 threads, every SIMD target this CPU runs. FusedSeparableConv
// (depthwise + 1x1 in bands) against the two convolutions by definition.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm_direct.h"
#include "backends/cpu/kernels/huge_pages.h"
#include "backends/cpu/kernels/nn_window.h"
#include "backends/cpu/kernels/winograd.h"
#include "core/ops/fused_activation.h"
#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/ir/single_node.h"
#include "core/passes/infer_types.h"
#include "core/exec/scratch_arena.h"
#include "tests/unit/kernel_test_util.h"

using namespace tsr;
using namespace tsr::test;

namespace {

std::vector<float> uniform(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// C = A B + bias + Z through sgemm_direct (A raw or packed), checked against double sums; C's
// padding columns (ldc > n) must stay untouched, and C is NaN before the call (never read).
// act: 0 none; 1 LeakyRelu(0.1) (applied in the tiles' stores); 2 the same + the affine 2y + 0.5
// and 3 HardSigmoid(0.3, 0.4) (both over each stored tile); 4 Silu (in the tiles' stores).
void check_direct(int64_t m, int64_t n, int64_t k, bool bias, bool z, bool packed, int act, std::mt19937& rng) {
  ops::ActivationSpec spec{act == 3 ? ops::FusedActivation::kHardSigmoid : ops::FusedActivation::kLeakyRelu,
                           act == 3 ? 0.3f : 0.1f, 0.4f};
  if (act == 2) spec.scale = 2.0f, spec.shift = 0.5f;
  if (act == 4) spec = ops::ActivationSpec{ops::FusedActivation::kSilu};
  auto expect = [&](double v) {
    if (act == 3) return std::clamp(0.3 * v + 0.4, 0.0, 1.0);
    if (act == 4) return v / (1 + std::exp(-v));
    if (act > 0) v = v < 0 ? 0.1 * v : v;
    return act == 2 ? 2 * v + 0.5 : v;
  };
  const int64_t lda = k + 1, ldb = n + 3, ldc = n + 2, ldz = n + 5;
  const auto a = uniform(static_cast<size_t>(m * lda), rng), b = uniform(static_cast<size_t>(k * ldb), rng);
  const auto bv = uniform(static_cast<size_t>(m), rng), zv = uniform(static_cast<size_t>(m * ldz), rng);
  std::vector<float> c(static_cast<size_t>(m * ldc), NAN);
  for (int64_t i = 0; i < m; ++i) c[static_cast<size_t>(i * ldc + n)] = 7.0f;  // padding sentinel
  const float* pbias = bias ? bv.data() : nullptr;
  const float* pz = z ? zv.data() : nullptr;
  if (packed) {
    const cpu::SgemmDirectA pa = cpu::sgemm_direct_pack_a(m, k, a.data(), lda);
    cpu::sgemm_direct(pa, n, b.data(), ldb, pbias, pz, ldz, c.data(), ldc, act ? &spec : nullptr);
  } else {
    cpu::sgemm_direct(m, n, k, a.data(), lda, b.data(), ldb, pbias, pz, ldz, c.data(), ldc, act ? &spec : nullptr);
  }
  double max_err = 0;
  for (int64_t i = 0; i < m; ++i) {
    CHECK(c[static_cast<size_t>(i * ldc + n)] == 7.0f);
    for (int64_t j = 0; j < n; ++j) {
      double s = (bias ? bv[i] : 0.0) + (z ? zv[static_cast<size_t>(i * ldz + j)] : 0.0);
      for (int64_t p = 0; p < k; ++p) s += double(a[static_cast<size_t>(i * lda + p)]) * b[static_cast<size_t>(p * ldb + j)];
      s = expect(s);
      max_err = std::max(max_err, std::fabs(c[static_cast<size_t>(i * ldc + j)] - s));  // NaN fails below
    }
  }
  INFO("m=" << m << " n=" << n << " k=" << k << " bias " << bias << " z " << z << " packed A " << packed << " act "
              << act);
  CHECK(max_err <= 1e-5 * (1 + k));
}

}  // namespace

TEST_CASE("sgemm_direct matches the naive product over rows, column tails, K blocks and epilogues") {
  std::mt19937 rng(3);
  const int64_t ms[] = {1, 2, 5, 6, 7, 12, 13, 24, 31, 64};
  const int64_t ns[] = {1, 7, 15, 16, 17, 33, 48, 63, 64, 65, 100, 129};
  const int64_t ks[] = {0, 1, 3, 24, 75, 255, 256, 257, 600};
  for (int64_t target : runnable_targets()) {
    use_target(target);
    INFO("target " << hwy::TargetName(target));
    size_t step = 0;
    for (int64_t m : ms)
      for (int64_t n : ns) {
        const int64_t k = ks[step % std::size(ks)];
        check_direct(m, n, k, step % 2 == 0, step % 3 != 0, step % 5 < 2, static_cast<int>(step / 2 % 5), rng);
        ++step;
      }
  }
  use_target(0);
}

TEST_CASE("sgemm_direct: Z may be C itself") {
  std::mt19937 rng(5);
  const int64_t m = 13, n = 70, k = 9;
  const auto a = uniform(static_cast<size_t>(m * k), rng), b = uniform(static_cast<size_t>(k * n), rng);
  std::vector<float> c = uniform(static_cast<size_t>(m * n), rng);
  const std::vector<float> z = c;
  cpu::sgemm_direct(m, n, k, a.data(), k, b.data(), n, nullptr, c.data(), n, c.data(), n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = z[static_cast<size_t>(i * n + j)];
      for (int64_t p = 0; p < k; ++p) s += double(a[static_cast<size_t>(i * k + p)]) * b[static_cast<size_t>(p * n + j)];
      REQUIRE(std::fabs(c[static_cast<size_t>(i * n + j)] - s) <= 1e-5);
    }
}

TEST_CASE("advise_huge_pages: any range (null, small, unaligned, written or not yet) keeps its contents") {
  cpu::advise_huge_pages(nullptr, 0);
  cpu::advise_huge_pages(nullptr, size_t{8} << 20);
  std::vector<float> small(100, 2.0f);
  cpu::advise_huge_pages(small.data(), small.size() * sizeof(float));
  REQUIRE(std::all_of(small.begin(), small.end(), [](float v) { return v == 2.0f; }));
  // Written, then advised (collapsed where whole 2 MiB pages lie inside), from an odd offset.
  const size_t n = size_t{5} << 18;  // 5 MiB of floats
  std::vector<float> big(n);
  for (size_t i = 0; i < n; ++i) big[i] = static_cast<float>(i % 1009);
  cpu::advise_huge_pages(big.data() + 3, (n - 7) * sizeof(float));
  bool same = true;
  for (size_t i = 0; i < n; ++i) same = same && big[i] == static_cast<float>(i % 1009);
  REQUIRE(same);
  // Reserved, advised before the first write (winograd_prepare's way), then written.
  std::vector<float> fresh;
  fresh.reserve(n);
  cpu::advise_huge_pages(fresh.data(), n * sizeof(float), false);
  fresh.resize(n, 1.5f);
  REQUIRE(std::all_of(fresh.begin(), fresh.end(), [](float v) { return v == 1.5f; }));
}

namespace {

struct ConvCase {
  const char* what;
  Shape x, w;
  int64_t group;
  std::vector<int64_t> strides, dil, pads;  // pads: begins then ends
  const char* act;                          // "" = none
  bool z;                                   // FusedConv's residual input
};

double activate(const std::string& act, double y) {
  if (act == "Relu") return std::max(y, 0.0);
  if (act == "HardSwish") return y * std::clamp(y / 6 + 0.5, 0.0, 1.0);
  if (act == "Silu") return y / (1 + std::exp(-y));
  if (act == "Clip") return std::clamp(y, -0.5, 0.75);  // activation_params {-0.5, 0.75} (check_separable)
  return y;
}

// A graph of one node (ir::single_node_model): add() its f32 inputs (constants, or graph inputs
// fed in order), then run().
struct OneConvNode {
  ir::Node node;
  std::vector<ir::NodeInput> inputs;

  OneConvNode(const char* op, std::vector<ir::Attribute> attrs) {
    node.op = op;
    node.name = "n0";
    node.attributes = std::move(attrs);
    node.outputs = {0};
  }
  void add(const Tensor& t, bool constant) { inputs.push_back({t, constant}); }
  Tensor run(int threads) {
    ir::SingleNodeModel built = ir::single_node_model(node, inputs);
    auto model = std::make_shared<ir::Model>(std::move(built.model));
    REQUIRE(passes::infer_types(*model).ok());
    SessionOptions opt;
    opt.num_threads = threads;
    auto session = Session::create(model, opt);
    REQUIRE(session.ok());
    auto out = (*session)->run(built.feeds);
    REQUIRE(out.ok());
    return (*out)[0];
  }
};

// Runs the case as one Conv (no activation, no Z) or FusedConv node with constant weights and
// bias (graph inputs instead with `runtime_weights`, as a training step feeds them), and compares
// with conv_ref + Z, then the activation.
void check_conv(const ConvCase& cc, int threads, std::mt19937& rng, bool runtime_weights = false) {
  const size_t r = cc.x.size() - 2;
  Shape y_shape = {cc.x[0], cc.w[0]};
  for (size_t d = 0; d < r; ++d) {
    const int64_t dk = (cc.w[d + 2] - 1) * cc.dil[d] + 1;
    y_shape.push_back((cc.x[d + 2] + cc.pads[d] + cc.pads[d + r] - dk) / cc.strides[d] + 1);
  }
  const Tensor x = Tensor::from<float>(cc.x, uniform(static_cast<size_t>(shape_numel(cc.x)), rng));
  const Tensor w = Tensor::from<float>(cc.w, uniform(static_cast<size_t>(shape_numel(cc.w)), rng));
  const Tensor b = Tensor::from<float>({cc.w[0]}, uniform(static_cast<size_t>(cc.w[0]), rng));
  const Tensor z = Tensor::from<float>(y_shape, uniform(static_cast<size_t>(shape_numel(y_shape)), rng));

  std::vector<ir::Attribute> attrs = {ir::Attribute::make_int("group", cc.group),
                                      ir::Attribute::make_ints("strides", cc.strides),
                                      ir::Attribute::make_ints("dilations", cc.dil), ir::Attribute::make_ints("pads", cc.pads)};
  if (*cc.act) attrs.push_back(ir::Attribute::make_string("activation", cc.act));
  OneConvNode one(cc.z || *cc.act ? "FusedConv" : "Conv", attrs);
  one.add(x, false);
  one.add(w, !runtime_weights);
  one.add(b, !runtime_weights);
  if (cc.z) one.add(z, false);
  INFO(cc.what << ": x " << shape_str(cc.x) << " w " << shape_str(cc.w) << " threads " << threads);
  const Tensor y = one.run(threads);
  REQUIRE(y.shape() == y_shape);
  const std::vector<int64_t> pb(cc.pads.begin(), cc.pads.begin() + static_cast<long>(r));
  std::vector<double> want = conv_ref(x, w, &b, cc.group, cc.strides, cc.dil, pb, y_shape);
  double max_err = 0;
  const int64_t terms = shape_numel(Shape(cc.w.begin() + 1, cc.w.end()));
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double e = activate(cc.act, want[static_cast<size_t>(i)] + (cc.z ? z.data<float>()[i] : 0.0));
    max_err = std::max(max_err, std::fabs(y.data<float>()[i] - e) / (1 + std::fabs(e)));
  }
  // Winograd rounds more than a direct sum (ops_nn_test: about 1e-6 per term); NaN fails too.
  CHECK(max_err <= 1e-6 * static_cast<double>(std::max<int64_t>(terms, 10)));
}

}  // namespace

TEST_CASE("Conv/FusedConv f32 with constant weights: every fast path matches the definition") {
  std::mt19937 rng(17);
  const std::vector<ConvCase> cases = {
      // sgemm_direct (<= 64 output channels per group) and the packed SGEMM above it.
      {"pointwise 24x24", {1, 24, 16, 16}, {24, 24, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "Relu", true},
      {"pointwise, column tail", {2, 13, 5, 7}, {7, 13, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "", true},
      {"pointwise + Silu (EfficientNet)", {1, 16, 11, 13}, {40, 16, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "Silu", true},
      {"pointwise 96 rows + Silu (packed)", {1, 8, 7, 9}, {96, 8, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "Silu", false},
      {"pointwise 96 rows (packed)", {1, 16, 9, 13}, {96, 16, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "HardSwish", false},
      {"grouped pointwise", {1, 12, 6, 11}, {9, 4, 1, 1}, 3, {1, 1}, {1, 1}, {0, 0, 0, 0}, "Relu", true},
      // <= 8 positions: matrix-vector products from W^T (squeeze-excitation), rows in blocks of
      // 4 vectors and 1, a partial last vector, positions stored apart.
      {"pointwise on 1x1 (matrix-vector)", {2, 40, 1, 1}, {24, 40, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "Silu", true},
      {"grouped pointwise on 2x3 (matrix-vector)", {1, 38, 2, 3}, {10, 19, 1, 1}, 2, {1, 1}, {1, 1}, {0, 0, 0, 0}, "Relu", false},
      {"pointwise on 2x4, 70 rows (matrix-vector)", {1, 20, 2, 4}, {70, 20, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "HardSwish", true},
      {"pointwise on 1x1, 150 rows (matrix-vector)", {1, 12, 1, 1}, {150, 12, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "", false},
      {"5x5 stride 2, asymmetric pads", {1, 3, 37, 41}, {24, 3, 5, 5}, 1, {2, 2}, {1, 1}, {1, 1, 2, 2}, "Relu", false},
      // Implicit GEMM with output rows >= 64 wide: one GEMM per output row straight into y.
      {"7x7 stride 2 stem, rows 75 wide", {1, 3, 13, 150}, {13, 3, 7, 7}, 1, {2, 2}, {1, 1}, {3, 3, 3, 3}, "Relu", true},
      {"3x3 stride 2 stem, asymmetric pads", {2, 3, 17, 133}, {32, 3, 3, 3}, 1, {2, 2}, {1, 1}, {0, 1, 1, 0}, "HardSwish", false},
      {"3x3 stride 1, 64 wide, 17 outputs", {1, 5, 7, 64}, {17, 5, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", true},
      {"1x3 pad 1 (openWakeWord)", {1, 24, 11, 32}, {24, 24, 1, 3}, 1, {1, 1}, {1, 1}, {0, 1, 0, 1}, "", false},
      {"3x3 stride 2 dilated, grouped", {2, 8, 15, 17}, {10, 4, 3, 3}, 2, {2, 2}, {2, 1}, {2, 1, 0, 1}, "", true},
      // ResNeXt's grouped 3x3 convs (32 groups of few channels; stride-2 phase planes gathered
      // in vectors, odd and even widths past a vector's 2 x 16 columns).
      {"3x3 stride 2, 32 groups of 2 (ResNeXt)", {1, 64, 15, 41}, {64, 2, 3, 3}, 32, {2, 2}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"3x3 stride 2, 8 groups of 4, even width", {1, 32, 9, 70}, {24, 4, 3, 3}, 8, {2, 2}, {1, 1}, {1, 1, 0, 0}, "", false},
      {"3x3, 32 groups of 4 (ResNeXt)", {1, 128, 9, 13}, {128, 4, 3, 3}, 32, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      // Too few row blocks for two a thread: one block of about equal rows a thread (3 threads:
      // 9 + 9 + 9 and 9 + 9 + 8 rows of 30), a 1x1 stride-2 (ResNet's downsample) among them.
      {"3x3 stride 2, one block a thread", {1, 24, 54, 60}, {80, 24, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"3x3 stride 2, one block a thread, uneven", {1, 24, 52, 60}, {80, 24, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, "", false},
      {"1x1 stride 2, one block a thread", {1, 40, 54, 60}, {72, 40, 1, 1}, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, "", true},
      {"K over two blocks", {1, 40, 9, 10}, {30, 40, 3, 3}, 1, {2, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", false},
      {"pads wider than the window", {1, 4, 5, 6}, {6, 4, 3, 3}, 1, {2, 1}, {1, 1}, {4, 3, 4, 5}, "", true},
      {"3x1 on one column", {2, 5, 9, 1}, {7, 5, 3, 1}, 1, {1, 1}, {1, 1}, {1, 0, 1, 0}, "Relu", false},
      {"1-D", {1, 6, 50}, {5, 6, 7}, 1, {3}, {2}, {4, 1}, "", true},
      // One input channel, no padding: the windows read in place as B^T (Silero VAD's STFT).
      {"1-D one channel, windows in place", {2, 1, 600}, {96, 1, 64}, 1, {32}, {1}, {0, 0}, "Relu", true},
      {"1 x 48 on one row, windows in place", {1, 1, 1, 300}, {80, 1, 1, 48}, 1, {1, 16}, {1, 1}, {0, 0, 0, 0}, "", false},
      {"1-D one channel, padded (im2col)", {1, 1, 200}, {72, 1, 32}, 1, {16}, {1}, {8, 8}, "", false},
      // Depthwise on padded rows (borders, rows off the top and bottom, planes narrower than a
      // vector, partial last vectors), and the strided loop.
      {"depthwise 3x3", {1, 5, 12, 37}, {5, 1, 3, 3}, 5, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"depthwise 5x5 pad 2", {2, 3, 9, 70}, {3, 1, 5, 5}, 3, {1, 1}, {1, 1}, {2, 2, 2, 2}, "HardSwish", false},
      {"depthwise 3x3 dilated, asymmetric", {1, 4, 8, 21}, {4, 1, 3, 3}, 4, {1, 1}, {2, 3}, {0, 3, 2, 1}, "", true},
      {"depthwise 3x3 narrow plane", {1, 3, 2, 5}, {3, 1, 3, 3}, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"depthwise 3x3 wide pads", {1, 2, 4, 33}, {2, 1, 3, 3}, 2, {1, 1}, {1, 1}, {3, 4, 3, 4}, "", false},
      {"depthwise 3x3 unpadded", {1, 2, 6, 64}, {2, 1, 3, 3}, 2, {1, 1}, {1, 1}, {0, 0, 0, 0}, "", true},
      {"depthwise 3x3 stride 2", {1, 3, 11, 40}, {3, 1, 3, 3}, 3, {2, 2}, {1, 1}, {0, 0, 1, 1}, "Relu", true},
      // Stride-2 rows deinterleaved in whole, 8- and 4-lane vectors and a scalar tail.
      {"depthwise 3x3 stride 2, 56 wide", {1, 4, 9, 56}, {4, 1, 3, 3}, 4, {2, 2}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"depthwise 5x5 stride 2, odd width", {2, 3, 14, 29}, {3, 1, 5, 5}, 3, {2, 2}, {1, 1}, {2, 2, 2, 2}, "Silu", false},
      {"depthwise 3x3 stride 2, right pad only", {1, 2, 7, 45}, {2, 1, 3, 3}, 2, {2, 2}, {1, 1}, {0, 0, 1, 1}, "", true},
      // Tails of 7, 2 and 3 columns after the vectors (masked on AVX2 / AVX-512), odd left pads.
      {"depthwise 3x3 stride 2, 15 wide, pad 1", {1, 3, 9, 15}, {3, 1, 3, 3}, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"depthwise 3x3 stride 2, 26 wide, pad 1", {1, 2, 7, 26}, {2, 1, 3, 3}, 2, {2, 2}, {1, 1}, {1, 1, 1, 1}, "", false},
      {"depthwise 3x3 stride 2, 3 wide, left pad", {1, 2, 6, 3}, {2, 1, 3, 3}, 2, {2, 2}, {1, 1}, {0, 1, 0, 1}, "", true},
      // Rows in 4-, 8- and full-lane vectors, 8 (or 4 x 2 chunks) at a time: heights off those
      // counts, a second chunk past the row's end (40 wide), small planes of the late stages.
      {"depthwise 5x5 on 7x7 (8 lanes)", {1, 6, 7, 7}, {6, 1, 5, 5}, 6, {1, 1}, {1, 1}, {2, 2, 2, 2}, "Silu", true},
      {"depthwise 3x3 on 3 wide (4 lanes)", {1, 3, 11, 3}, {3, 1, 3, 3}, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", true},
      {"depthwise 3x3 on 14x14", {1, 5, 14, 14}, {5, 1, 3, 3}, 5, {1, 1}, {1, 1}, {1, 1, 1, 1}, "HardSwish", false},
      {"depthwise 5x5 stride 2, 14x14 -> 7x7", {1, 4, 14, 14}, {4, 1, 5, 5}, 4, {2, 2}, {1, 1}, {2, 2, 2, 2}, "Silu", false},
      {"depthwise 3x3 on 9x40, dilated", {1, 3, 9, 40}, {3, 1, 3, 3}, 3, {1, 1}, {2, 2}, {2, 2, 2, 2}, "", true},
      {"depthwise 3x3 on 150 wide (passes of 8 chunks)", {1, 2, 5, 150}, {2, 1, 3, 3}, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"depthwise 7x7 stride 2 on 19 x 20", {1, 2, 19, 20}, {2, 1, 7, 7}, 2, {2, 2}, {1, 1}, {3, 3, 3, 3}, "Relu", false},
      // Winograd (3x3 stride 1, >= 8 channels): sgemm_direct and packed GEMMs, dilated phases.
      {"Winograd 16->24", {1, 16, 13, 18}, {24, 16, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"Winograd 8->72 (packed)", {1, 8, 9, 22}, {72, 8, 3, 3}, 1, {1, 1}, {1, 1}, {1, 0, 1, 2}, "", false},
      {"Winograd dilation 5", {1, 12, 30, 31}, {10, 12, 3, 3}, 1, {1, 1}, {5, 5}, {5, 5, 5, 5}, "Relu", true},
      {"Winograd dilation 3, odd pads", {2, 8, 25, 19}, {9, 8, 3, 3}, 1, {1, 1}, {3, 3}, {2, 4, 3, 1}, "", true},
      // Few tiles for many channels (winograd_weights_bound): with threads, one block whose input
      // channels, 36 products and output channels the threads split.
      {"Winograd 96 on 14x14 (weights bound)", {1, 96, 14, 14}, {96, 96, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"Winograd 80->112 on 14x13 (weights bound)", {1, 80, 14, 13}, {112, 80, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", false},
      // Weights bound, the spare tiles taking another vector of GEMM columns: one block on the
      // tiles alone (move_spare_columns), 5 units of 3 tiles (15 of 20 columns), a batch of 2 x 2
      // units of 4 tiles with asymmetric pads.
      {"Winograd 96 on 17x12, spare tiles dropped", {1, 96, 17, 12}, {96, 96, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"Winograd 96 batch 2 on 7x13, spare tiles dropped", {2, 96, 7, 13}, {96, 96, 3, 3}, 1, {1, 1}, {1, 1}, {1, 0, 1, 2}, "", false},
      {"Winograd 128 dilation 2 (weights bound)", {1, 128, 14, 14}, {128, 128, 3, 3}, 1, {1, 1}, {2, 2}, {2, 2, 2, 2}, "Silu", true},
      // Small maps: im2col + GEMM where Winograd does not pay (winograd_pays), Winograd again
      // once a batch fills its tile columns.
      {"3x3 on 7x7, 64 channels (im2col)", {1, 64, 7, 7}, {64, 64, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"3x3 on 5x6, odd channels (im2col)", {1, 9, 5, 6}, {11, 9, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", false},
      {"3x3 on 7x7, batch 8 (Winograd)", {8, 16, 7, 7}, {16, 16, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Silu", true},
      // Small planes with the output channels on the lanes (conv_lanes_pays, AVX-512 and AVX2):
      // odd channel counts (a partial last panel), planes of 20..81 positions, strides, pads,
      // dilation, a pointwise conv read in place, batches.
      {"lanes: 3x3 on 6x6, 96 <- 37", {2, 37, 6, 6}, {96, 37, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"lanes: 3x3 on 6x6, 97 <- 53", {1, 53, 6, 6}, {97, 53, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", false},
      {"lanes: 3x3 stride 2, 13x13 -> 7x7", {1, 64, 13, 13}, {64, 64, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, "Relu", true},
      {"lanes: 3x3 on 4x5 (20 positions)", {1, 64, 4, 5}, {32, 64, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "HardSwish", true},
      {"lanes: 3x3 on 9x9, asymmetric pads", {1, 96, 9, 10}, {32, 96, 3, 3}, 1, {1, 1}, {1, 1}, {1, 0, 1, 1}, "Silu", false},
      {"lanes: 3x3 dilation 2 on 7x7", {1, 64, 11, 11}, {64, 64, 3, 3}, 1, {1, 1}, {2, 2}, {0, 0, 0, 0}, "", true},
      {"lanes: pointwise on 7x7, 64 <- 480", {2, 480, 7, 7}, {64, 480, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "Relu", true},
      {"lanes: 3x3 stride 2 on 10x9 -> 5x5, batch 3", {3, 64, 10, 9}, {64, 64, 3, 3}, 1, {2, 2}, {1, 1}, {1, 0, 0, 1}, "", true},
      // Enough outputs that threads split the transpose and epilogue, in runs of 16 channels (a
      // partial last run: 344 = 21.5 x 16).
      {"lanes: pointwise on 7x7, 344 <- 192, Z + Silu", {2, 192, 7, 7}, {344, 192, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "Silu", true},
  };
  for_targets_and_threads([&](int threads) {
    for (const ConvCase& cc : cases) check_conv(cc, threads, rng);
  });
}

TEST_CASE("FusedConv Silu epilogue: sigmoid within 5e-7 over [-30, 30], every target") {
  // A 1x1 conv with weight 1 and bias 0: y = x * sigmoid(x), on 6001 points of [-30, 30] (whole
  // vectors and a tail), so the rational approximation of sigmoid (2.3e-7) and its reciprocal's
  // Newton steps (one on x86) show: the error of y is that of sigmoid times |x|.
  const int64_t n = 6001;
  std::vector<float> xs(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xs[static_cast<size_t>(i)] = -30.0f + 0.01f * static_cast<float>(i);
  const Tensor x = Tensor::from<float>({1, 1, 1, n}, xs);
  for_targets_and_threads([&](int threads) {
    OneConvNode one("FusedConv", {ir::Attribute::make_int("group", 1), ir::Attribute::make_string("activation", "Silu")});
    one.add(x, false);
    one.add(Tensor::from<float>({1, 1, 1, 1}, {1.0f}), true);
    one.add(Tensor::from<float>({1}, {0.0f}), true);
    const Tensor y = one.run(threads);
    double max_err = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = xs[static_cast<size_t>(i)], want = v / (1 + std::exp(-v));
      max_err = std::max(max_err, std::fabs(y.data<float>()[i] - want) / std::max(1.0, std::fabs(v)));
    }
    CHECK(max_err <= 5e-7);
  });
}

TEST_CASE("winograd_pays: Winograd only where its padded tile columns beat im2col's work") {
  auto window = [](int64_t n_out, int64_t dil) {
    cpu::Window3 w;
    w.in = {1, n_out, n_out};
    w.k = {1, 3, 3};
    w.s = {1, 1, 1};
    w.d = {1, dil, dil};
    w.out = {1, n_out, n_out};
    return w;
  };
  CHECK_FALSE(cpu::winograd_pays(window(7, 1), 1));  // ResNet layer4: 4 tiles in 16 columns
  CHECK(cpu::winograd_pays(window(7, 1), 8));         // a batch fills the columns
  CHECK(cpu::winograd_pays(window(14, 1), 1));        // layer3
  CHECK(cpu::winograd_pays(window(28, 1), 1));
  CHECK(cpu::winograd_pays(window(56, 1), 1));
  CHECK_FALSE(cpu::winograd_pays(window(8, 1), 1));
  CHECK(cpu::winograd_pays(window(30, 5), 1));  // dilated phases of 6x6 outputs
}

namespace {

struct SeparableCase {
  const char* what;
  Shape x;
  int64_t k, stride, dil, m;
  std::vector<int64_t> pads;
  const char* dw_act;
  const char* act;
  bool z, const_pw;  // residual input; W_pw a constant (packed when the kernel is created)
  // With cin > 0, an expansion stage (W_ex [C, cin, 1, 1] constant, B_ex, ex_act) makes X's C
  // channels from an input of cin (then z must be set: the inputs are positional).
  int64_t cin = 0;
  const char* ex_act = "";
};

void check_separable(const SeparableCase& sc, int threads, std::mt19937& rng) {
  const int64_t c = sc.x[1];
  const Shape wd_shape = {c, 1, sc.k, sc.k}, wp_shape = {sc.m, c, 1, 1};
  Tensor x = Tensor::from<float>(sc.x, uniform(static_cast<size_t>(shape_numel(sc.x)), rng));
  // The expansion stage: x is then its output by definition, its activation rounded to f32.
  const Shape xin_shape = {sc.x[0], sc.cin, sc.x[2], sc.x[3]}, we_shape = {c, sc.cin, 1, 1};
  const Tensor xin = Tensor::from<float>(xin_shape, uniform(static_cast<size_t>(sc.cin > 0 ? shape_numel(xin_shape) : 0), rng));
  const Tensor we = Tensor::from<float>(we_shape, uniform(static_cast<size_t>(sc.cin > 0 ? shape_numel(we_shape) : 0), rng));
  const Tensor be = Tensor::from<float>({c}, uniform(static_cast<size_t>(c), rng));
  if (sc.cin > 0) {
    const std::vector<double> ex = conv_ref(xin, we, &be, 1, {1, 1}, {1, 1}, {0, 0}, sc.x);
    std::vector<float> ex_f(ex.size());
    for (size_t i = 0; i < ex.size(); ++i) ex_f[i] = static_cast<float>(activate(sc.ex_act, ex[i]));
    x = Tensor::from<float>(sc.x, ex_f);
  }
  const Tensor wd = Tensor::from<float>(wd_shape, uniform(static_cast<size_t>(shape_numel(wd_shape)), rng));
  const Tensor wp = Tensor::from<float>(wp_shape, uniform(static_cast<size_t>(shape_numel(wp_shape)), rng));
  const Tensor bd = Tensor::from<float>({c}, uniform(static_cast<size_t>(c), rng));
  const Tensor bp = Tensor::from<float>({sc.m}, uniform(static_cast<size_t>(sc.m), rng));
  // Reference: the depthwise conv by definition, its activation rounded to f32, then the 1x1.
  const int64_t oh = (sc.x[2] + sc.pads[0] + sc.pads[2] - sc.dil * (sc.k - 1) - 1) / sc.stride + 1;
  const int64_t ow = (sc.x[3] + sc.pads[1] + sc.pads[3] - sc.dil * (sc.k - 1) - 1) / sc.stride + 1;
  const Shape mid_shape = {sc.x[0], c, oh, ow}, y_shape = {sc.x[0], sc.m, oh, ow};
  const std::vector<double> mid = conv_ref(x, wd, &bd, c, {sc.stride, sc.stride}, {sc.dil, sc.dil},
                                           {sc.pads[0], sc.pads[1]}, mid_shape);
  std::vector<float> mid_f(mid.size());
  for (size_t i = 0; i < mid.size(); ++i) mid_f[i] = static_cast<float>(activate(sc.dw_act, mid[i]));
  const std::vector<double> want = conv_ref(Tensor::from<float>(mid_shape, mid_f), wp, &bp, 1, {1, 1}, {1, 1}, {0, 0}, y_shape);
  const Tensor z = Tensor::from<float>(y_shape, uniform(static_cast<size_t>(shape_numel(y_shape)), rng));

  std::vector<ir::Attribute> attrs = {ir::Attribute::make_int("group", c),
                                      ir::Attribute::make_ints("strides", {sc.stride, sc.stride}),
                                      ir::Attribute::make_ints("dilations", {sc.dil, sc.dil}),
                                      ir::Attribute::make_ints("pads", sc.pads)};
  if (*sc.dw_act) attrs.push_back(ir::Attribute::make_string("dw_activation", sc.dw_act));
  if (std::string(sc.dw_act) == "Clip") attrs.push_back(ir::Attribute::make_floats("dw_activation_params", {-0.5, 0.75}));
  if (*sc.act) attrs.push_back(ir::Attribute::make_string("activation", sc.act));
  if (*sc.ex_act) attrs.push_back(ir::Attribute::make_string("ex_activation", sc.ex_act));
  OneConvNode one("FusedSeparableConv", attrs);
  one.add(sc.cin > 0 ? xin : x, false);
  one.add(wd, true);
  one.add(wp, sc.const_pw);
  one.add(bd, true);
  one.add(bp, true);
  if (sc.z) one.add(z, false);
  if (sc.cin > 0) {
    one.add(we, true);
    one.add(be, true);
  }
  INFO(sc.what << ": x " << shape_str(sc.x) << " threads " << threads);
  const Tensor y = one.run(threads);
  REQUIRE(y.shape() == y_shape);
  double max_err = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double e = activate(sc.act, want[static_cast<size_t>(i)] + (sc.z ? z.data<float>()[i] : 0.0));
    max_err = std::max(max_err, std::fabs(y.data<float>()[i] - e) / (1 + std::fabs(e)));
  }
  // f32 sums over the channels, the taps and the expansion's inputs: the bound grows with their
  // count past ~100 terms (wasm has no fused multiply-add, so there every product rounds on its own:
  // 1.006e-5 on the 144-channel expansion case).
  CHECK(max_err <= 1e-5 * std::max(1.0, static_cast<double>(c + sc.k * sc.k + sc.cin) / 100.0));
}

}  // namespace

TEST_CASE("FusedSeparableConv f32 matches the depthwise and 1x1 convolutions by definition") {
  std::mt19937 rng(23);
  const std::vector<SeparableCase> cases = {
      // Stride 1, sgemm_direct; many bands, threaded ones.
      {"3x3", {1, 24, 37, 70}, 3, 1, 1, 24, {1, 1, 1, 1}, "", "Relu", true, true},
      {"3x3, threaded bands", {1, 32, 64, 100}, 3, 1, 1, 32, {1, 1, 1, 1}, "Relu", "Relu", true, true},
      {"5x5 dilated", {2, 5, 9, 75}, 5, 1, 2, 7, {4, 3, 4, 5}, "HardSwish", "", false, true},
      // Padded bands (narrow rows, strides), the packed SGEMM for 96 outputs, W_pw not constant.
      {"3x3 narrow rows", {1, 16, 16, 16}, 3, 1, 1, 16, {1, 1, 1, 1}, "Relu", "", true, false},
      {"3x3 stride 2", {1, 12, 33, 41}, 3, 2, 1, 8, {0, 0, 1, 1}, "", "HardSwish", false, true},
      {"3x3 stride 2, 96 outputs", {1, 8, 21, 19}, 3, 2, 1, 96, {1, 1, 1, 1}, "Relu", "Relu", true, true},
      {"3x3 stride 2, threaded bands", {1, 32, 96, 96}, 3, 2, 1, 96, {0, 0, 1, 1}, "", "", true, true},
      {"5x5 stride 2, W_pw an input", {2, 6, 15, 22}, 5, 2, 1, 70, {2, 2, 2, 2}, "", "", true, false},
      // Planes <= 16 wide, >= 128 channels: the depthwise stage channels-last (loops of 4 and 1
      // vectors, a channel tail), read by the packed product as B^T; threads take runs of output
      // positions end to end (runs starting mid-row; their input rows only, padding on one side).
      {"3x3 on 7x7, 131 channels", {1, 131, 7, 7}, 3, 1, 1, 80, {1, 1, 1, 1}, "Relu", "Relu", true, true},
      {"3x3 stride 2 on 15x11, 139 channels", {1, 139, 15, 11}, 3, 2, 1, 100, {0, 0, 1, 1}, "Relu", "Relu", true, true},
      {"3x3 stride 2 on 13x17, 133 channels", {2, 133, 13, 17}, 3, 2, 1, 67, {1, 1, 1, 1}, "HardSwish", "", true, true},
      {"3x3 on 14x14, 147 channels, 24 outputs, W_pw an input", {1, 147, 14, 14}, 3, 1, 1, 24, {1, 1, 1, 1}, "Relu", "", true, false},
      // <= 256 output positions: the 1x1 product as Y^T = D^T W_pw^T, transposed into place;
      // more: the packed product reading the depthwise output as B^T.
      {"3x3 on 7x7, 129 channels, 33 outputs, W_pw an input", {1, 129, 7, 7}, 3, 1, 1, 33, {1, 1, 1, 1}, "", "Relu", true, false},
      {"3x3 on 20x14 (280 positions), 130 channels", {1, 130, 20, 14}, 3, 1, 1, 50, {1, 1, 1, 1}, "Relu", "", true, true},
      {"5x5 dilated on 14x14, 149 channels", {1, 149, 14, 14}, 5, 1, 2, 96, {4, 3, 4, 5}, "", "Relu", false, false},
      // With the expansion stage (MobileNetV2's blocks): bands of expanded rows, the rows shared
      // with the band before kept (stride 1 and 2, threads taking runs of whole bands, or
      // sharing each band's products); one band of all rows for the packed product; on a small
      // plane, the expanded image whole first.
      {"expand 16 -> 96, 3x3 stride 2", {1, 96, 21, 100}, 3, 2, 1, 24, {1, 1, 1, 1}, "Relu", "", true, true, 16, "Relu"},
      {"expand 13 -> 64, 3x3", {1, 64, 30, 90}, 3, 1, 1, 40, {1, 1, 1, 1}, "", "Relu", true, true, 13, "HardSwish"},
      {"expand 8 -> 96, 3x3 on 20-wide rows", {1, 96, 40, 20}, 3, 1, 1, 32, {1, 1, 1, 1}, "Relu", "", true, true, 8, "Relu"},
      // Width stride 1 reads the expanded rows in place (masked edges, rows of zeros): no padding,
      // one-sided and asymmetric pads, rows that end mid-vector.
      {"expand 5 -> 7, 3x3, no padding, odd rows", {1, 7, 13, 35}, 3, 1, 1, 5, {0, 0, 0, 0}, "Relu", "", true, true, 5, "Relu"},
      {"expand 6 -> 9, 5x5, one-sided pads", {1, 9, 11, 37}, 5, 1, 1, 10, {0, 3, 2, 1}, "", "Relu", true, true, 6, ""},
      {"expand 16 -> 32, 3x3 on 113-wide rows", {1, 32, 12, 113}, 3, 1, 1, 16, {1, 1, 1, 1}, "Clip", "", true, true, 16, "Relu"},
      {"expand 11 -> 72, 3x3 stride 2, 70 outputs", {1, 72, 30, 34}, 3, 2, 1, 70, {0, 0, 1, 1}, "", "", true, true, 11, ""},
      // On small planes, the expansion channels-last (X^T W_ex^T), the input rows of each
      // thread's run of positions.
      {"expand 24 -> 131 on 7x7", {1, 131, 7, 7}, 3, 1, 1, 40, {1, 1, 1, 1}, "Relu", "", true, true, 24, "Relu"},
      {"expand 13 -> 136 on 15x13", {1, 136, 15, 13}, 3, 1, 1, 37, {1, 1, 1, 1}, "Clip", "Relu", true, true, 13, "HardSwish"},
      {"expand 11 -> 144, 3x3 stride 2 on 16x15", {1, 144, 16, 15}, 3, 2, 1, 40, {0, 0, 1, 1}, "", "", true, true, 11, ""},
  };
  for_targets_and_threads([&](int threads) {
    for (const SeparableCase& sc : cases) check_separable(sc, threads, rng);
  });
}

// Weights from graph inputs (a training step's forward) on small dense stride-1 convs: the
// direct loop of conv_small.h (LeNet's two convs; output channels in blocks of 8 with a remainder,
// position vectors in pairs and one; bias, Z and the activation in the epilogue), and the
// im2col path beside it (more than 16 outputs, stride 2).
TEST_CASE("Conv/FusedConv f32 with runtime weights: the small-conv loop matches the definition") {
  std::mt19937 rng(23);
  const std::vector<ConvCase> cases = {
      {"LeNet conv1", {3, 1, 28, 28}, {6, 1, 5, 5}, 1, {1, 1}, {1, 1}, {2, 2, 2, 2}, "", false},
      {"LeNet conv2", {2, 6, 14, 14}, {16, 6, 5, 5}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, "", false},
      {"3x2, asymmetric pads, 13 outputs, Relu + Z", {2, 3, 9, 11}, {13, 3, 3, 2}, 1, {1, 1}, {1, 1}, {0, 1, 2, 0}, "Relu", true},
      {"1x7 on 3 rows, HardSwish", {1, 2, 3, 19}, {5, 2, 1, 7}, 1, {1, 1}, {1, 1}, {0, 3, 0, 3}, "HardSwish", false},
      {"24 outputs (im2col)", {1, 3, 8, 9}, {24, 3, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", true},
      {"stride 2 (im2col)", {1, 2, 9, 9}, {4, 2, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, "Relu", false},
  };
  for_targets_and_threads([&](int threads) {
    for (const ConvCase& cc : cases) check_conv(cc, threads, rng, true);
  });
}

// Conv's and FusedDepthwiseSE's window resolved at kernel creation (cpu::presolve_window3) is the
// one resolve_spatial gives at run time, for explicit pads, strides, dilations and each auto_pad;
// a run at other dims resolves its own window; dims unknown at load presolve nothing.
TEST_CASE("PresolvedWindow: equals the run-time window, other dims resolve at run time") {
  using ir::Attribute;
  const std::vector<std::vector<Attribute>> cases = {
      {Attribute::make_ints("pads", {1, 2, 0, 1}), Attribute::make_ints("strides", {2, 1}),
       Attribute::make_ints("dilations", {1, 2}), Attribute::make_string("auto_pad", "NOTSET")},
      {Attribute::make_string("auto_pad", "SAME_UPPER"), Attribute::make_ints("strides", {2, 2})},
      {Attribute::make_string("auto_pad", "SAME_LOWER"), Attribute::make_ints("strides", {2, 3})},
      {Attribute::make_string("auto_pad", "VALID")},
      {Attribute::make_string("auto_pad", "NOTSET")}};
  auto same = [](const cpu::Window3& a, const cpu::Window3& b) {
    return a.in == b.in && a.out == b.out && a.k == b.k && a.s == b.s && a.d == b.d && a.pb == b.pb && a.pe == b.pe;
  };
  ThreadPool pool(1);
  exec::ScratchArena arena;
  const std::string place = "graph[0].node[0]";
  const std::vector<const Tensor*> inputs;
  const std::vector<ops::ValueType> out_types;
  std::vector<Tensor> outs;
  const Ints k{3, 5};
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    ir::Node node;
    node.op = "Conv";
    node.attributes = cases[i];
    const Ints in{13, 10};
    const cpu::PresolvedWindow pre = cpu::presolve_window3(node, in, k);
    REQUIRE(pre.valid);
    auto sp = ops::resolve_spatial(node, in, k, false);
    REQUIRE(sp.ok());
    CHECK(same(pre.w, cpu::window3_of(*sp, in)));
    exec::KernelContext ctx(node, place, inputs, out_types, outs, pool, arena);
    auto at_load = cpu::resolve_window3(ctx, in, k, &pre);
    REQUIRE(at_load.ok());
    CHECK(same(*at_load, pre.w));
    const Ints other{9, 11};
    auto with_pre = cpu::resolve_window3(ctx, other, k, &pre);
    auto plain = cpu::resolve_window3(ctx, other, k, false);
    REQUIRE(with_pre.ok());
    REQUIRE(plain.ok());
    CHECK(same(*with_pre, *plain));
    CHECK(with_pre->in[1] == 9);
    CHECK(!cpu::presolve_window3(node, Ints{-1, 10}, k).valid);
  }
}
