// qgemm (backends/cpu/kernels/qgemm.h) against an exact integer reference computed here from the
// unpacked inputs, on every SIMD target this CPU runs (and, where the target has one, its
// widening fallback beside the VNNI / sdot path), 1 and 3 threads.
#include <catch2/catch.hpp>

#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/qgemm.h"
#include "core/base/thread_pool.h"
#include "tests/unit/kernel_test_util.h"

using namespace tsr;
using namespace tsr::cpu;
using tsr::test::runnable_targets;
using tsr::test::use_target;

namespace {

struct Case {
  int64_t m, n, k;
  bool a_signed, b_signed, trans_b;
  int zp_mode;  // 0: none, 1: per tensor, 2: per column
};

struct Inputs {
  std::vector<uint8_t> a, b, bzp;  // raw bytes (s8 as two's complement)
  int32_t a_zp = 0;
  int64_t lda = 0, ldb = 0;
};

int32_t val(const std::vector<uint8_t>& v, bool is_signed, int64_t i) {
  return is_signed ? static_cast<int8_t>(v[static_cast<size_t>(i)]) : v[static_cast<size_t>(i)];
}

Inputs make_inputs(const Case& c, std::mt19937& rng, bool extreme) {
  Inputs in;
  in.lda = c.k + 3;
  in.ldb = (c.trans_b ? c.k : c.n) + 2;
  std::uniform_int_distribution<int> byte(0, 255);
  in.a.resize(static_cast<size_t>(c.m * in.lda + 1));
  in.b.resize(static_cast<size_t>((c.trans_b ? c.n : c.k) * in.ldb + 1));
  for (auto& v : in.a) v = static_cast<uint8_t>(extreme ? (byte(rng) & 1 ? 255 : 0) : byte(rng));
  for (auto& v : in.b) v = static_cast<uint8_t>(extreme ? (byte(rng) & 1 ? 0x80 : 0x7f) : byte(rng));
  if (extreme && c.b_signed)  // all -128: the largest products with a u8 A
    for (auto& v : in.b) v = 0x80;
  // Zero points at the range ends (extreme) or random.
  if (c.a_signed) in.a_zp = extreme ? 127 : byte(rng) - 128;
  else in.a_zp = extreme ? 255 : byte(rng);
  const int64_t zc = c.zp_mode == 0 ? 0 : (c.zp_mode == 1 ? 1 : c.n);
  in.bzp.resize(static_cast<size_t>(std::max<int64_t>(zc, 1)));
  for (auto& v : in.bzp) v = static_cast<uint8_t>(extreme ? (c.b_signed ? 0x7f : 255) : byte(rng));
  return in;
}

// acc[i][j] = sum_k (A - a_zp)(B - b_zp[j]), in int64.
std::vector<int64_t> reference(const Case& c, const Inputs& in) {
  std::vector<int64_t> acc(static_cast<size_t>(c.m * c.n));
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      const int32_t zb = c.zp_mode == 0 ? 0 : val(in.bzp, c.b_signed, c.zp_mode == 1 ? 0 : j);
      int64_t s = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const int32_t av = val(in.a, c.a_signed, i * in.lda + p);
        const int32_t bv = val(in.b, c.b_signed, c.trans_b ? j * in.ldb + p : p * in.ldb + j);
        s += int64_t{av - in.a_zp} * (bv - zb);
      }
      acc[static_cast<size_t>(i * c.n + j)] = s;
    }
  return acc;
}

QgemmPackedB pack(const Case& c, const Inputs& in) {
  const int64_t zc = c.zp_mode == 0 ? 0 : (c.zp_mode == 1 ? 1 : c.n);
  return qgemm_pack_b(c.k, c.n, in.b.data(), c.b_signed, in.ldb, c.trans_b, in.bzp.data(), zc);
}

// Runs all three output stages (transposed output for two of them) and checks each element.
void check(const Case& c, const Inputs& in, const QgemmPackedB& pb, ThreadPool* pool, std::mt19937& rng) {
  INFO("m " << c.m << " n " << c.n << " k " << c.k << " a_signed " << c.a_signed << " b_signed " << c.b_signed
            << " trans_b " << c.trans_b << " zp_mode " << c.zp_mode << " target " << qgemm_target());
  const std::vector<int64_t> ref = reference(c, in);
  const int64_t m = c.m, n = c.n;
  std::uniform_int_distribution<int> bias_d(-100000, 100000);
  std::uniform_real_distribution<float> f(-1.0f, 1.0f);
  std::vector<int32_t> bias(static_cast<size_t>(n));
  std::vector<float> scale(static_cast<size_t>(n)), bias_f(static_cast<size_t>(n));
  for (auto& v : bias) v = bias_d(rng);
  for (auto& v : scale) v = std::ldexp(f(rng), -12);
  for (auto& v : bias_f) v = f(rng);

  // kInt32, row-major with padded rows, bias.
  {
    const int64_t ldc = n + 5;
    std::vector<int32_t> out(static_cast<size_t>(m * ldc), -7);
    QgemmOutput o;
    o.kind = QgemmOutput::kInt32;
    o.out = out.data();
    o.row_stride = ldc;
    o.bias_i32 = bias.data();
    qgemm(m, in.a.data(), c.a_signed, in.lda, in.a_zp, pb, o, pool);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j)
        REQUIRE(out[static_cast<size_t>(i * ldc + j)] == ref[static_cast<size_t>(i * n + j)] + bias[static_cast<size_t>(j)]);
      for (int64_t j = n; j < ldc; ++j) REQUIRE(out[static_cast<size_t>(i * ldc + j)] == -7);  // padding untouched
    }
  }
  // kFloat: transposed (column-major) output, per-column scale, both biases; row-major with one
  // scale and an f32 bias or none (DynamicQuantizeMatMul's configuration). The product and the
  // bias add round separately, as the unfused Mul -> Add graph (no FMA).
  for (int variant = 0; variant < 3; ++variant) {
    const bool transposed = variant == 0;
    const float one_scale = scale[0];
    std::vector<float> out(static_cast<size_t>(m * n));
    QgemmOutput o;
    o.kind = QgemmOutput::kFloat;
    o.out = out.data();
    o.row_stride = transposed ? 1 : n;
    o.col_stride = transposed ? m : 1;
    o.bias_i32 = transposed ? bias.data() : nullptr;
    o.bias_f32 = variant == 2 ? nullptr : bias_f.data();
    o.scale = transposed ? scale.data() : &one_scale;
    o.scale_per_col = transposed;
    qgemm(m, in.a.data(), c.a_signed, in.lda, in.a_zp, pb, o, pool);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const auto J = static_cast<size_t>(j);
        const int64_t acc = ref[static_cast<size_t>(i * n + j)] + (transposed ? bias[J] : 0);
        volatile float prod = static_cast<float>(acc) * (transposed ? scale[J] : one_scale);  // rounded here
        const float want = o.bias_f32 ? prod + bias_f[J] : prod;
        REQUIRE(out[static_cast<size_t>(transposed ? j * m + i : i * n + j)] == want);
      }
  }
  // kQuant to u8 and s8: per-tensor scale (row-major) and per-column scale (transposed).
  for (int variant = 0; variant < 2; ++variant) {
    const bool out_signed = variant == 1;
    std::vector<uint8_t> out(static_cast<size_t>(m * n), 0);
    QgemmOutput o;
    o.kind = QgemmOutput::kQuant;
    o.out = out.data();
    o.out_signed = out_signed;
    o.out_zp = out_signed ? -3 : 131;
    // A scale that maps the typical magnitude onto a few hundred steps, so that some saturate.
    const float ts = 1.0f / static_cast<float>(std::max<int64_t>(1, 64 * c.k));
    std::vector<float> sc(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) sc[static_cast<size_t>(j)] = ts * (1.0f + 0.25f * static_cast<float>(j % 5));
    o.scale = variant == 0 ? &ts : sc.data();
    o.scale_per_col = variant == 1;
    o.bias_i32 = variant == 0 ? nullptr : bias.data();
    o.row_stride = variant == 0 ? n : 1;
    o.col_stride = variant == 0 ? 1 : m;
    qgemm(m, in.a.data(), c.a_signed, in.lda, in.a_zp, pb, o, pool);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const int64_t s = ref[static_cast<size_t>(i * n + j)] + (variant == 0 ? 0 : bias[static_cast<size_t>(j)]);
        const float v = static_cast<float>(s) * (variant == 0 ? ts : sc[static_cast<size_t>(j)]);
        const float lo = out_signed ? -128.0f : 0.0f, hi = out_signed ? 127.0f : 255.0f;
        const int want = static_cast<int>(std::clamp(std::nearbyint(v) + static_cast<float>(o.out_zp), lo, hi));
        const size_t at = static_cast<size_t>(variant == 0 ? i * n + j : j * m + i);
        const int got = out_signed ? static_cast<int8_t>(out[at]) : out[at];
        REQUIRE(got == want);
      }
  }
}

const std::vector<Case>& cases() {
  static const std::vector<Case> cs = {
      {1, 1, 1, false, true, false, 0},    {3, 17, 5, false, true, false, 1},    {17, 33, 4, true, true, false, 2},
      {1, 100, 33, false, false, false, 1}, {16, 40, 64, true, false, true, 2},  {33, 3, 7, false, true, true, 0},
      {100, 130, 67, false, true, false, 2}, {13, 64, 0, true, true, false, 1},  {7, 1, 130, true, false, false, 2},
      {2, 257, 19, false, true, true, 1},   {29, 70, 258, true, true, false, 0}, {128, 96, 96, false, true, false, 0},
      {221, 37, 20, false, true, false, 2},  // transposed output: 96-row blocks, a 13-row tail, 37 columns
  };
  return cs;
}

// The paths of the current target: the VNNI / sdot one (where present) and the widening fallback.
template <typename Fn>
void for_paths(const Fn& fn) {
  for (bool no_dot : {false, true}) {
    qgemm_disable_dot_for_test(no_dot);
    fn();
  }
  qgemm_disable_dot_for_test(false);
}

}  // namespace

TEST_CASE("qgemm is exact on every target and path: shapes, signedness, zero points, output stages", "[qgemm]") {
  std::mt19937 rng(25);
  ThreadPool pool3(3);
  for (int64_t target : runnable_targets()) {
    use_target(target);
    INFO("hwy target " << hwy::TargetName(target));
    for_paths([&] {
      for (const Case& c : cases())
        for (bool extreme : {false, true}) {
          const Inputs in = make_inputs(c, rng, extreme);
          const QgemmPackedB pb = pack(c, in);
          for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool3}) check(c, in, pb, pool, rng);
        }
    });
  }
  use_target(0);
}

TEST_CASE("qgemm: B packed by another target (or a foreign layout) is repacked, never read", "[qgemm]") {
  std::mt19937 rng(7);
  const Case c{19, 45, 37, false, true, false, 2};
  const Inputs in = make_inputs(c, rng, false);
  const std::vector<int64_t> targets = runnable_targets();
  for (int64_t packer : targets) {
    use_target(packer);
    QgemmPackedB pb = pack(c, in);
    for (int64_t runner : targets) {
      use_target(runner);
      check(c, in, pb, nullptr, rng);
    }
  }
  // A layout no target wrote, with garbage in it: the result still comes from `plain`.
  use_target(0);
  QgemmPackedB pb = pack(c, in);
  REQUIRE(pb.target != 0);
  pb.target = -12345;
  std::fill(pb.data.begin(), pb.data.end(), int8_t{0x55});
  for_paths([&] { check(c, in, pb, nullptr, rng); });
}

// qgemm_gather reads row i of A as K / seg runs at a + off[i * (K / seg) + s]: the same sums as
// qgemm on the rows written out. The runs lie shuffled in a buffer, some shared by several rows
// (as a conv's padding taps share one run of zero points; others the `pad` run), rows past a multiple of 4 and of a
// panel, per-column B zero points (the row sums) and none; every target and path, 1 and 3 threads;
// i32 and requantized outputs, transposed and row-major.
TEST_CASE("qgemm_gather equals qgemm on the gathered rows, on every target and path", "[qgemm]") {
  struct G {
    int64_t m, n, seg, runs;
    bool a_signed;
    int zp_mode;
  };
  const G gs[] = {{1, 5, 16, 1, false, 0}, {37, 13, 16, 9, false, 2}, {101, 70, 32, 9, true, 0},
                  {19, 33, 48, 25, false, 1}, {230, 64, 64, 9, true, 2}, {64, 40, 32, 9, false, 0}};
  std::mt19937 rng(41);
  std::uniform_int_distribution<int> byte(0, 255);
  ThreadPool pool3(3);
  for (int64_t target : runnable_targets()) {
    use_target(target);
    INFO("hwy target " << hwy::TargetName(target));
    for_paths([&] {
      for (const G& g : gs) {
        INFO("m " << g.m << " n " << g.n << " seg " << g.seg << " runs " << g.runs);
        const int64_t k = g.seg * g.runs, pool_runs = g.m * g.runs / 2 + 1;
        std::vector<uint8_t> buf(static_cast<size_t>(pool_runs * g.seg));
        for (auto& v : buf) v = static_cast<uint8_t>(byte(rng));
        std::uniform_int_distribution<int64_t> pick(0, pool_runs - 1);
        std::vector<int32_t> off(static_cast<size_t>(g.m * g.runs));
        std::vector<uint8_t> a(static_cast<size_t>(g.m * k));
        // Every 8th run (on average) is the `pad` run, named by offset -1.
        std::vector<uint8_t> pad(static_cast<size_t>(g.seg));
        for (auto& v : pad) v = static_cast<uint8_t>(byte(rng));
        for (int64_t i = 0; i < g.m * g.runs; ++i) {
          const bool is_pad = byte(rng) < 32;
          off[static_cast<size_t>(i)] = is_pad ? -1 : static_cast<int32_t>(pick(rng) * g.seg);
          std::copy_n(is_pad ? pad.data() : buf.data() + off[static_cast<size_t>(i)], g.seg, a.data() + i * g.seg);
        }
        const Case c{g.m, g.n, k, g.a_signed, true, false, g.zp_mode};
        Inputs in = make_inputs(c, rng, false);
        const QgemmPackedB pb = pack(c, in);
        std::vector<float> scale(static_cast<size_t>(g.n));
        for (int64_t j = 0; j < g.n; ++j) scale[static_cast<size_t>(j)] = 1.0f / static_cast<float>(40 * k + j);
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool3})
          // kQuant also row-major (channels last: the VNNI tiles requantize in registers), with
          // u8 and s8 codes, per-column and uniform scales.
          for (int form = 0; form < 5; ++form) {
            const QgemmOutput::Kind kind = form == 0 ? QgemmOutput::kInt32 : QgemmOutput::kQuant;
            const bool rows_out = form >= 2;
            std::vector<int32_t> want(static_cast<size_t>(g.m * g.n), -1), got(want);
            QgemmOutput o;
            o.kind = kind;
            o.scale = scale.data();
            o.scale_per_col = form != 4;
            o.out_signed = form == 3;
            o.out_zp = form == 3 ? -5 : 7;
            o.row_stride = rows_out ? g.n : 1;  // channels last, or NCHW-like: the transposed store
            o.col_stride = rows_out ? 1 : g.m;
            o.out = want.data();
            qgemm(g.m, a.data(), g.a_signed, k, in.a_zp, pb, o, pool);
            o.out = got.data();
            qgemm_gather(g.m, buf.data(), off.data(), g.seg, g.a_signed, in.a_zp, pb, o, pool, pad.data());
            REQUIRE(got == want);
          }
      }
    });
  }
  use_target(0);
}

TEST_CASE("qgemm names its path", "[qgemm]") {
  const std::string t = qgemm_target();
  CHECK((t == "AVX512-VNNI" || t == "AVX512" || t == "AVX2" || t == "NEON-dot" || t == "NEON" || t == "WASM" ||
         t == "scalar"));
}

TEST_CASE("transpose_bytes: 16 x 16 register blocks and byte-loop edges, on every target", "[qgemm]") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  struct Dims {
    int64_t rows, cols;
  };
  // Whole 16 x 16 and 16 x 32 blocks, partial rows and columns, 1 x 1, the 3-channel stem.
  const Dims dims[] = {{1, 1}, {16, 16}, {16, 32}, {17, 33}, {37, 70}, {64, 49}, {3, 45}, {48, 7}, {3, 200}};
  for (int64_t target : runnable_targets()) {
    use_target(target);
    INFO("hwy target " << hwy::TargetName(target));
    for (const Dims& dm : dims) {
      INFO("rows " << dm.rows << " cols " << dm.cols);
      // Strides wider than the extents; 3 rows also into packed triples (their own loop).
      for (const int64_t ld : {dm.rows + 5, dm.rows}) {
        const int64_t ls = dm.cols + 3;
        std::vector<uint8_t> src(static_cast<size_t>(dm.rows * ls));
        for (auto& v : src) v = static_cast<uint8_t>(byte(rng));
        std::vector<uint8_t> dst(static_cast<size_t>(dm.cols * ld), 0xA5);
        transpose_bytes(src.data(), dm.rows, dm.cols, ls, dst.data(), ld);
        int64_t bad = 0;
        for (int64_t c = 0; c < dm.cols; ++c)
          for (int64_t r = 0; r < ld; ++r) {
            const uint8_t want = r < dm.rows ? src[static_cast<size_t>(r * ls + c)] : 0xA5;  // padding untouched
            bad += dst[static_cast<size_t>(c * ld + r)] != want;
          }
        CHECK(bad == 0);
      }
    }
  }
  use_target(0);
}
