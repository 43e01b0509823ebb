// f32 GEMM benchmark: tsr::cpu::sgemm against OpenBLAS's cblas_sgemm on the shape classes the
// models run (large square, attention's tall-skinny, K-large, decode-step small M; B row-major and
// transposed as in Linear layers), at 1 and 2 threads, for the best Highway target and for AVX2
// (Highway's dispatch restricted with hwy::SetSupportedTargetsForTest). Prints markdown tables:
// GFLOP/s, % of a peak measured by an FMA loop on the same core and target (independent
// accumulators, so the loop is bound by FMA throughput, not latency), and the ratio to OpenBLAS.
//
//   tessera_bench_gemm [--threads 1,2] [--samples 5] [--flops 5e7] [--targets best,avx2] [--quick]
//                      [--shape M,N,K,T ...]   (T = 1: B transposed; only these shapes)
//                      [--stat median|best]    (best: the shortest sample, for a loaded machine)
//                      [--suite f32,int8]      (f32: sgemm vs OpenBLAS; int8: qgemm vs sgemm)
// The int8 suite times tsr::cpu::qgemm (u8 A x s8 B packed once, f32 output stage as dynamic
// quantization's MatMulIntegerToFloat) against sgemm on the same shapes (transformer Linear layers
// at M 128 / 512 and a decode step M 1; a conv as im2col GEMM), in GOP/s (2 MNK per second) each.
// Each sample times enough calls for about --flops flops; tessera and OpenBLAS alternate sample by
// sample on each shape (a shared machine's load hits both alike), the median sample is reported.
// OpenBLAS picks its own kernels by CPU (its core name is printed): for an AVX2-only OpenBLAS run
// with OPENBLAS_CORETYPE=Haswell.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/gemm/bench_gemm.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/unroll.h"

HWY_BEFORE_NAMESPACE();
namespace tsr_bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// iters x kAcc independent FMA chains of full vectors: at least latency x ports (4 x 2) chains on
// every x86 target, and all in registers (16 of AVX-512's 32; 12 of AVX2's 16, leaving two for the
// operands: 16 spilled there and measured 65 of OpenBLAS's 80 GFLOP/s). Returns the flops done
// (and a sum the compiler must keep).
constexpr size_t kAcc = HWY_MAX_BYTES >= 64 ? 16 : 12;
double fma_loop_impl(int64_t iters, float* sink) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  V acc[kAcc];
  tsr::cpu::unroll<kAcc>([&](auto i) { acc[i] = hn::Set(d, 1.0f + 0.1f * static_cast<float>(i)); });
  const auto m = hn::Set(d, 0.999999f), c = hn::Set(d, 1e-7f);
  for (int64_t it = 0; it < iters; ++it) tsr::cpu::unroll<kAcc>([&](auto i) { acc[i] = hn::MulAdd(acc[i], m, c); });
  V s = hn::Zero(d);
  tsr::cpu::unroll<kAcc>([&](auto i) { s = hn::Add(s, acc[i]); });
  *sink += hn::GetLane(hn::SumOfLanes(d, s));
  return 2.0 * static_cast<double>(kAcc) * static_cast<double>(hn::Lanes(d)) * static_cast<double>(iters);
}

const char* target_name_impl() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace tsr_bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/qgemm.h"
#include "core/base/thread_pool.h"

#ifdef TSR_HAVE_OPENBLAS
// The CBLAS entry points (declared here: the header's location differs between distributions).
extern "C" {
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);
void openblas_set_num_threads(int num_threads);
char* openblas_get_corename(void);
}
#endif

namespace tsr_bench {
HWY_EXPORT(fma_loop_impl);
HWY_EXPORT(target_name_impl);

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The median sample time, or with `best` the shortest (on a machine shared with other work the
// least disturbed sample; the peak is a best-of too).
double pick(std::vector<double> v, bool best) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[best ? 0 : v.size() / 2];
}

// Peak GFLOP/s of one core for the dispatched target: the best of several FMA-loop runs.
double measure_peak() {
  float sink = 0;
  HWY_DYNAMIC_DISPATCH(fma_loop_impl)(1 << 22, &sink);  // warm-up (frequency, dispatch)
  double best = 0;
  // Many short runs (about 1 ms): on a shared machine the best of them is the one no other process
  // interrupted, as the GEMM's median sample is.
  for (int r = 0; r < 100; ++r) {
    const auto t0 = Clock::now();
    const double flops = HWY_DYNAMIC_DISPATCH(fma_loop_impl)(int64_t{1} << 17, &sink);
    best = std::max(best, flops / seconds_since(t0) * 1e-9);
  }
  if (sink == 12345.0f) std::printf(" ");
  return best;
}

struct Shape {
  const char* cls;
  int64_t m, n, k;
  bool tb;
};

std::vector<Shape> shapes(bool quick, const std::vector<Shape>& only) {
  if (!only.empty()) return only;
  std::vector<Shape> out;
  for (int tb = 0; tb < 2; ++tb) {
    for (int64_t s : {256, 512, 1024}) out.push_back({"square", s, s, s, tb != 0});
    for (int64_t m : {1500, 4096})
      for (int64_t k : {64, 384}) out.push_back({"tall-skinny", m, 64, k, tb != 0});
    for (int64_t s : {64, 256}) out.push_back({"K-large", s, s, 4096, tb != 0});
    for (int64_t m : {1, 4, 16})
      for (int64_t s : {384, 1024, 4096}) {
        if (quick && s == 4096) continue;
        out.push_back({"small M", m, s, s, tb != 0});
      }
  }
  return out;
}

struct Options {
  std::vector<int> threads = {1, 2};
  int samples = 5;
  double flops = 5e7;
  std::vector<std::string> targets = {"best", "avx2"};
  bool quick = false;
  bool best = false;        // --stat best: shortest sample instead of the median
  std::vector<Shape> only;  // --shape M,N,K,T (T: 0 B row-major, 1 B^T), repeatable
  bool f32 = true, int8 = true;  // --suite
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    const size_t q = std::min(s.find(',', p), s.size());
    if (q > p) out.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

void run_target(const Options& opt, const std::string& label) {
  const double peak1 = measure_peak();
  const char* target = HWY_DYNAMIC_DISPATCH(target_name_impl)();
  std::printf("\n### %s (%s sample): Highway target %s (sgemm runs %s), FMA-loop peak %.1f GFLOP/s per core\n\n", label.c_str(),
              opt.best ? "best" : "median", target, tsr::cpu::sgemm_target(), peak1);
#ifdef TSR_HAVE_OPENBLAS
  const std::string core = openblas_get_corename();
  std::printf("OpenBLAS core: %s\n\n", core.c_str());
  if (core == "Prescott" || core == "Core2" || core == "Nehalem")
    std::printf("(OpenBLAS did not recognise this CPU and runs SSE kernels: set OPENBLAS_CORETYPE=SkylakeX, or "
                "Haswell for an AVX2 comparison)\n\n");
#endif
  std::printf("| threads | class | M | N | K | B | tessera GFLOP/s | %% of peak | OpenBLAS GFLOP/s | tessera / OpenBLAS |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int nt : opt.threads) {
    tsr::ThreadPool pool(nt);
#ifdef TSR_HAVE_OPENBLAS
    openblas_set_num_threads(nt);
#endif
    std::vector<double> ratios;
    for (const Shape& s : shapes(opt.quick, opt.only)) {
      const int64_t lda = s.k, ldb = s.tb ? s.k : s.n, ldc = s.n;
      std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n)),
          c(static_cast<size_t>(s.m * s.n));
      for (auto& v : a) v = u(rng);
      for (auto& v : b) v = u(rng);
      const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
      const int reps = std::max(1, static_cast<int>(opt.flops / flops));
      auto run_tsr = [&] {
        for (int r = 0; r < reps; ++r)
          tsr::cpu::sgemm(false, s.tb, s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), ldc, &pool);
      };
#ifdef TSR_HAVE_OPENBLAS
      auto run_blas = [&] {
        for (int r = 0; r < reps; ++r)
          cblas_sgemm(101 /*RowMajor*/, 111 /*NoTrans*/, s.tb ? 112 : 111, static_cast<int>(s.m),
                      static_cast<int>(s.n), static_cast<int>(s.k), 1.0f, a.data(), static_cast<int>(lda), b.data(),
                      static_cast<int>(ldb), 0.0f, c.data(), static_cast<int>(ldc));
      };
      run_blas();
#endif
      run_tsr();  // warm-up: buffers, caches, pool threads
      std::vector<double> t_tsr, t_blas;
      for (int i = 0; i < opt.samples; ++i) {
        auto t0 = Clock::now();
        run_tsr();
        t_tsr.push_back(seconds_since(t0) / reps);
#ifdef TSR_HAVE_OPENBLAS
        t0 = Clock::now();
        run_blas();
        t_blas.push_back(seconds_since(t0) / reps);
#endif
      }
      const double g_tsr = flops / pick(t_tsr, opt.best) * 1e-9;
      std::printf("| %d | %s | %lld | %lld | %lld | %s | %.1f | %.0f%% |", nt, s.cls, static_cast<long long>(s.m),
                  static_cast<long long>(s.n), static_cast<long long>(s.k), s.tb ? "B^T" : "B", g_tsr,
                  100.0 * g_tsr / (peak1 * nt));
#ifdef TSR_HAVE_OPENBLAS
      const double g_blas = flops / pick(t_blas, opt.best) * 1e-9;
      ratios.push_back(g_tsr / g_blas);
      std::printf(" %.1f | %.2fx |\n", g_blas, g_tsr / g_blas);
#else
      std::printf(" OpenBLAS not found | - |\n");
#endif
      std::fflush(stdout);
    }
    if (!ratios.empty()) {
      double lg = 0;
      for (double r : ratios) lg += std::log(r);
      std::printf("\n%d thread(s): geo-mean tessera / OpenBLAS %.2fx, worst %.2fx\n\n", nt,
                  std::exp(lg / double(ratios.size())), *std::min_element(ratios.begin(), ratios.end()));
      std::printf("| threads | class | M | N | K | B | tessera GFLOP/s | %% of peak | OpenBLAS GFLOP/s | tessera / OpenBLAS |\n");
      std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    }
  }
}


// The int8 suite's shapes: MiniLM / BERT-small Linear layers (hidden 384, FFN 1536) at sequence
// 128 and 512 and a decode step, and a ResNet-like 3x3 conv (56 x 56 pixels, 64 -> 64 channels).
std::vector<Shape> int8_shapes(const std::vector<Shape>& only) {
  if (!only.empty()) return only;
  std::vector<Shape> out;
  for (int64_t m : {1, 128, 512}) {
    const char* cls = m == 1 ? "decode" : "transformer";
    out.push_back({cls, m, 384, 384, false});
    out.push_back({cls, m, 1536, 384, false});
    out.push_back({cls, m, 384, 1536, false});
  }
  out.push_back({"conv 3x3", 3136, 64, 576, false});
  return out;
}

// qgemm against sgemm on the same shapes, alternating sample by sample.
void run_int8(const Options& opt, const std::string& label) {
  std::printf("\n### int8 %s (%s sample): qgemm path %s, sgemm target %s\n\n", label.c_str(),
              opt.best ? "best" : "median", tsr::cpu::qgemm_target(), tsr::cpu::sgemm_target());
  const char* head =
      "| threads | class | M | N | K | qgemm GOP/s | sgemm GFLOP/s | int8 / f32 |\n|---|---|---|---|---|---|---|---|\n";
  std::printf("%s", head);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-1, 1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int nt : opt.threads) {
    tsr::ThreadPool pool(nt);
    std::vector<double> ratios;
    for (const Shape& s : int8_shapes(opt.only)) {
      std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n)),
          c(static_cast<size_t>(s.m * s.n));
      for (auto& v : a) v = u(rng);
      for (auto& v : b) v = u(rng);
      std::vector<uint8_t> qa(a.size()), qb(b.size());
      for (auto& v : qa) v = static_cast<uint8_t>(byte(rng));
      for (auto& v : qb) v = static_cast<uint8_t>(byte(rng));
      const int8_t bzp = 0;
      const tsr::cpu::QgemmPackedB pb = tsr::cpu::qgemm_pack_b(s.k, s.n, qb.data(), true, s.tb ? s.k : s.n, s.tb,
                                                               &bzp, 1);
      const float scale = 1e-4f;
      tsr::cpu::QgemmOutput o;
      o.kind = tsr::cpu::QgemmOutput::kFloat;
      o.out = c.data();
      o.row_stride = s.n;
      o.scale = &scale;
      const double ops = 2.0 * double(s.m) * double(s.n) * double(s.k);
      const int reps = std::max(1, static_cast<int>(opt.flops / ops));
      auto run_q = [&] {
        for (int r = 0; r < reps; ++r) tsr::cpu::qgemm(s.m, qa.data(), false, s.k, 128, pb, o, &pool);
      };
      auto run_f = [&] {
        for (int r = 0; r < reps; ++r)
          tsr::cpu::sgemm(false, s.tb, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.tb ? s.k : s.n, 0.0f,
                          c.data(), s.n, &pool);
      };
      run_q();
      run_f();
      std::vector<double> tq, tf;
      for (int i = 0; i < opt.samples; ++i) {
        auto t0 = Clock::now();
        run_q();
        tq.push_back(seconds_since(t0) / reps);
        t0 = Clock::now();
        run_f();
        tf.push_back(seconds_since(t0) / reps);
      }
      const double gq = ops / pick(tq, opt.best) * 1e-9, gf = ops / pick(tf, opt.best) * 1e-9;
      ratios.push_back(gq / gf);
      std::printf("| %d | %s | %lld | %lld | %lld | %.1f | %.1f | %.2fx |\n", nt, s.cls, static_cast<long long>(s.m),
                  static_cast<long long>(s.n), static_cast<long long>(s.k), gq, gf, gq / gf);
      std::fflush(stdout);
    }
    double lg = 0;
    for (double r : ratios) lg += std::log(r);
    std::printf("\n%d thread(s): geo-mean int8 / f32 %.2fx\n\n", nt, std::exp(lg / double(ratios.size())));
    if (nt != opt.threads.back()) std::printf("%s", head);
  }
}

}  // namespace
}  // namespace tsr_bench

int main(int argc, char** argv) {
  using namespace tsr_bench;
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tessera_bench_gemm: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads") {
      opt.threads.clear();
      for (const auto& t : split(next())) opt.threads.push_back(std::max(1, std::atoi(t.c_str())));
    } else if (a == "--samples") {
      opt.samples = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--flops") {
      opt.flops = std::max(1.0, std::atof(next().c_str()));
    } else if (a == "--targets") {
      opt.targets = split(next());
    } else if (a == "--shape") {
      const auto f = split(next());
      if (f.size() != 4) {
        std::fprintf(stderr, "tessera_bench_gemm: --shape wants M,N,K,T\n");
        return 2;
      }
      opt.only.push_back({"custom", std::atoll(f[0].c_str()), std::atoll(f[1].c_str()), std::atoll(f[2].c_str()),
                          f[3] == "1"});
    } else if (a == "--stat") {
      const std::string v = next();
      if (v != "median" && v != "best") {
        std::fprintf(stderr, "tessera_bench_gemm: --stat median or best\n");
        return 2;
      }
      opt.best = v == "best";
    } else if (a == "--suite") {
      opt.f32 = opt.int8 = false;
      for (const auto& v : split(next())) {
        if (v == "f32") opt.f32 = true;
        else if (v == "int8") opt.int8 = true;
        else {
          std::fprintf(stderr, "tessera_bench_gemm: --suite f32,int8\n");
          return 2;
        }
      }
    } else if (a == "--quick") {
      opt.quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: tessera_bench_gemm [--threads 1,2] [--samples 5] [--flops 5e7] [--targets best,avx2] "
                   "[--quick] [--shape M,N,K,T] [--stat median|best] [--suite f32,int8]\n");
      return 2;
    }
  }
#ifndef TSR_HAVE_OPENBLAS
  std::printf("OpenBLAS not found (built without libopenblas): tessera figures only.\n");
#endif
  for (const std::string& t : opt.targets) {
    if (t == "best") {
      hwy::SetSupportedTargetsForTest(0);
      if (opt.f32) run_target(opt, "best target");
      if (opt.int8) {
        run_int8(opt, "best target");
        // The same target's widening fallback where it has VNNI / sdot (AVX-512 without VNNI, NEON
        // without dotprod).
        tsr::cpu::qgemm_disable_dot_for_test(true);
        const std::string fallback = tsr::cpu::qgemm_target();
        tsr::cpu::qgemm_disable_dot_for_test(false);
        if (fallback != tsr::cpu::qgemm_target()) {
          tsr::cpu::qgemm_disable_dot_for_test(true);
          run_int8(opt, "best target, VNNI / sdot off");
          tsr::cpu::qgemm_disable_dot_for_test(false);
        }
      }
    } else if (t == "avx2") {
#if HWY_ARCH_X86
      if ((hwy::SupportedTargets() & HWY_AVX2) == 0) {
        std::printf("\n### AVX2: not supported by this CPU or build\n");
        continue;
      }
      hwy::SetSupportedTargetsForTest(HWY_AVX2);
      if (opt.f32) run_target(opt, "AVX2 (restricted)");
      if (opt.int8) run_int8(opt, "AVX2 (restricted)");
      hwy::SetSupportedTargetsForTest(0);
#else
      std::printf("\n### AVX2: not an x86 build\n");
#endif
    } else {
      std::fprintf(stderr, "tessera_bench_gemm: unknown target '%s' (best, avx2)\n", t.c_str());
      return 2;
    }
  }
  return 0;
}
#endif  // HWY_ONCE
