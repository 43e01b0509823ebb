#include <catch2/catch.hpp>

#include <hwy/targets.h>

#include <cmath>
#include <cstring>
#include <string>
#include <random>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#if defined(__unix__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#include <unistd.h>
#define TSR_TEST_GUARD_PAGES 1
#endif
#include "tests/unit/kernel_test_util.h"

using namespace tsr;
using tsr::test::runnable_targets;
using tsr::test::use_target;

namespace {

// Naive definition, double accumulation: C = alpha * op(A) op(B) + beta * C.
void naive(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const std::vector<float>& a,
           int64_t lda, const std::vector<float>& b, int64_t ldb, double beta, std::vector<double>& c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(ta ? a[p * lda + i] : a[i * lda + p]) * double(tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * s + (beta == 0 ? 0.0 : beta * c[i * ldc + j]);
    }
}

void check_case(int64_t m, int64_t n, int64_t k, bool ta, bool tb, float alpha, float beta, int64_t pad,
                ThreadPool* pool, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
  std::vector<float> a((ta ? k : m) * lda + 1), b((tb ? n : k) * ldb + 1), c(m * ldc + 1);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  for (auto& v : c) v = beta == 0 ? NAN : u(rng);  // beta == 0 must not read C
  std::vector<double> ref(c.begin(), c.end());
  naive(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, ref, ldc);
  cpu::sgemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc, pool);
  double max_err = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) max_err = std::max(max_err, std::fabs(c[i * ldc + j] - ref[i * ldc + j]));
  INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " alpha=" << alpha
            << " beta=" << beta << " pad=" << pad);
  CHECK(max_err <= 1e-5 * (1 + k));
  // Padding columns between rows of C stay untouched.
  if (pad > 0 && m > 0 && n > 0 && beta != 0) CHECK(c[n] == Approx(ref[n]));
}

// Dense operands in [-1, 1] for op(A) (m x k), op(B) (k x n) and C (m x n), and the naive
// op(A) op(B) + beta * C: the prepacked-operand tests' setup.
struct DenseProduct {
  int64_t lda, ldb;
  std::vector<float> a, b, c;
  std::vector<double> ref;
  DenseProduct(int64_t m, int64_t n, int64_t k, bool ta, bool tb, double beta, std::mt19937& rng)
      : lda(ta ? m : k), ldb(tb ? k : n), a(m * k), b(k * n), c(m * n) {
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : a) v = u(rng);
    for (auto& v : b) v = u(rng);
    for (auto& v : c) v = u(rng);
    ref.assign(c.begin(), c.end());
    naive(ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, ref, n);
  }
  double max_err(const std::vector<float>& got) const {
    double e = 0;
    for (size_t i = 0; i < got.size(); ++i) e = std::max(e, std::fabs(got[i] - ref[i]));
    return e;
  }
};

// C (m x n, dense) against the naive op(A) op(B), within the bound of k summed terms.
void check_naive(const std::vector<float>& c, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                 const std::vector<float>& a, int64_t lda, const std::vector<float>& b, int64_t ldb) {
  std::vector<double> ref(m * n, 0.0);
  naive(ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, ref, n);
  double max_err = 0;
  for (int64_t i = 0; i < m * n; ++i) max_err = std::max(max_err, std::fabs(c[i] - ref[i]));
  CHECK(max_err <= 1e-5 * (1 + k));
}

}  // namespace

TEST_CASE("sgemm matches the naive product over shapes, transposes, strides and alpha/beta") {
  std::mt19937 rng(42);
  ThreadPool one(1), three(3);
  const int64_t dims[][3] = {{1, 1, 1},   {1, 37, 5},   {2, 300, 17}, {5, 7, 3},     {6, 32, 256},
                             {7, 33, 257}, {13, 1, 40}, {64, 64, 64}, {97, 129, 300}, {130, 70, 600},
                             {3, 1000, 9}, {200, 5, 2},  {257, 5, 512}, {0, 4, 4},    {4, 0, 4},      {4, 4, 0}};
  for (auto& d : dims)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        check_case(d[0], d[1], d[2], ta, tb, 1.0f, 0.0f, 0, &one, rng);
        check_case(d[0], d[1], d[2], ta, tb, 0.5f, 2.0f, 3, &three, rng);
      }
  check_case(300, 4200, 20, false, false, -1.0f, 1.0f, 0, &three, rng);  // crosses the N block
  check_case(50, 50, 50, false, false, 1.0f, 0.0f, 0, nullptr, rng);
  // Few (M block, column chunk) tasks: one panel per task, a contiguous range per thread, B packed
  // by the tasks with one M block (ViT-Tiny's 197 x 576 x 192, a BERT's 128 x 384 x 384 with K
  // past the K block) and by a pass before them with several (900 rows).
  ThreadPool two(2);
  for (ThreadPool* pool : {&two, &three}) {
    check_case(197, 576, 192, false, false, 1.0f, 0.0f, 0, pool, rng);
    check_case(128, 384, 384, false, true, 0.5f, 1.0f, 2, pool, rng);
    check_case(900, 100, 40, true, false, 1.0f, 0.0f, 1, pool, rng);
  }
}

TEST_CASE("gemm_reference handles doubles and integers") {
  const std::vector<int64_t> a = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const std::vector<int64_t> b = {7, 8, 9, 10, 11, 12};  // [3, 2]
  std::vector<int64_t> c(4, 100);
  cpu::gemm_reference<int64_t>(false, false, 2, 2, 3, 1, a.data(), 3, b.data(), 2, 1, c.data(), 2);
  // numpy: np.array([[1,2,3],[4,5,6]]) @ np.array([[7,8],[9,10],[11,12]]) + 100
  CHECK(c == std::vector<int64_t>{158, 164, 239, 254});
}

TEST_CASE("sgemm_prepacked matches the naive product (A packed once, reused)") {
  std::mt19937 rng(7);
  ThreadPool one(1), three(3);
  // Shapes across the M block (96 on AVX2), K block (256) and the small-N / small-M paths.
  const int64_t dims[][3] = {{3, 40, 9}, {24, 2368, 9}, {97, 129, 300}, {130, 70, 600}, {257, 5, 512}, {480, 17, 480}};
  for (auto& d : dims)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        const int64_t m = d[0], n = d[1], k = d[2];
        const DenseProduct p(m, n, k, ta, tb, 1.0, rng);
        const cpu::SgemmPackedA pa = cpu::sgemm_pack_a(ta, m, k, p.a.data(), p.lda);
        // Run several times: the packed A must not be consumed by a product. Without the raw A
        // (null, as Winograd passes it) every shape takes the packed path.
        for (ThreadPool* pool : {&one, &three})
          for (const float* raw : {static_cast<const float*>(p.a.data()), static_cast<const float*>(nullptr)}) {
            std::vector<float> cc = p.c;
            cpu::sgemm_prepacked(pa, raw, p.lda, tb, n, 1.0f, p.b.data(), p.ldb, 1.0f, cc.data(), n, pool);
            INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " raw A " << (raw != nullptr));
            CHECK(p.max_err(cc) <= 1e-5 * (1 + k));
          }
      }
}

TEST_CASE("sgemm_prepacked_b matches the naive product: B packed once, run by every target (others read B raw)") {
  std::mt19937 rng(9);
  ThreadPool one(1), two(2), three(3);
  // Rows from 1 (every shape takes the blocked path) past the M block, columns around the panels
  // (32 / 16 wide) and the N block (4096), K around the K block (256); 512 x 49 x 600 takes the
  // tile split on three threads (ResNet's 7x7 convs), which reads the packed panels as they are.
  // With threads, one M block over more than two panels takes the panel split through all K
  // blocks (sgemm_panel_split): 49 x 512 x 600, and 14 x 97 x 1030 (five K blocks, the last partial);
  // so do few rows on a large B whose panels split evenly over the threads, where the tile split
  // would pay (panel_split_reads_b_once: 49 x 192 x 672, 37 x 288 x 500, and 49 x 96 x 576: 3
  // panels on two threads go 2 : 1).
  const int64_t dims[][3] = {{1, 40, 9},      {17, 33, 300},  {49, 512, 600}, {196, 95, 64},
                             {460, 4130, 7}, {512, 49, 600}, {14, 97, 1030}, {49, 192, 672},
                             {37, 288, 500}, {49, 96, 576}};
  const std::vector<int64_t> targets = runnable_targets();  // before use_target narrows them
  for (int64_t target : targets) {
    use_target(target);
    for (auto& d : dims)
      for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
          const int64_t m = d[0], n = d[1], k = d[2];
          const DenseProduct p(m, n, k, ta, tb, 0.5, rng);
          const cpu::SgemmPackedB pb = cpu::sgemm_pack_b(tb, k, n, p.b.data(), p.ldb);
          // Run under every target: the packing target's layout, or raw B under the others.
          for (int64_t run_target : targets) {
            use_target(run_target);
            for (ThreadPool* pool : {&one, &two, &three}) {
              std::vector<float> cc = p.c;
              cpu::sgemm_prepacked_b(ta, m, 1.0f, p.a.data(), p.lda, pb, p.b.data(), p.ldb, 0.5f, cc.data(), n, pool);
              INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " packed by "
                        << hwy::TargetName(target) << " run by " << hwy::TargetName(run_target));
              CHECK(p.max_err(cc) <= 1e-5 * (1 + k));
            }
          }
          use_target(target);
        }
  }
  use_target(0);
}

TEST_CASE("sgemm_prepacked_b with Cin ([N] row or [M, N]) read in the tiles' store: bit-identical to C copied first") {
  std::mt19937 rng(31);
  ThreadPool one(1), three(3);
  // The blocked path (one and several M blocks, partial panels and K blocks), the tile split
  // (460 x 49 x 300 on three threads), the panel split (49 x 512 x 300, 14 x 97 x 1030), N past
  // the N block (4130); then alpha 0 (no product: C given Cin's rows).
  const int64_t dims[][3] = {{17, 33, 300}, {49, 512, 300}, {197, 95, 64}, {100, 4130, 7},
                             {460, 49, 300}, {14, 97, 1030}, {1, 40, 9}};
  const std::vector<int64_t> targets = runnable_targets();
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t target : targets) {
    use_target(target);
    for (auto& d : dims)
      for (int tb = 0; tb < 2; ++tb) {
        const int64_t m = d[0], n = d[1], k = d[2];
        const DenseProduct p(m, n, k, false, tb, 0.0, rng);
        std::vector<float> row(static_cast<size_t>(n));
        for (float& v : row) v = u(rng);
        const cpu::SgemmPackedB pb = cpu::sgemm_pack_b(tb, k, n, p.b.data(), p.ldb);
        for (int64_t run_target : targets) {  // another target's packing: Cin copied into C first
          use_target(run_target);
          for (ThreadPool* pool : {&one, &three})
            for (int form = 0; form < 2; ++form)
              for (float alpha : {1.0f, 0.75f, 0.0f}) {
                const float beta = alpha == 0.75f ? -1.5f : 1.0f;
                const float* cin = form == 0 ? row.data() : p.c.data();
                const int64_t ld_cin = form == 0 ? 0 : n;
                std::vector<float> want(static_cast<size_t>(m * n));
                for (int64_t i = 0; i < m; ++i) std::copy(cin + i * ld_cin, cin + i * ld_cin + n, want.begin() + i * n);
                cpu::sgemm_prepacked_b(false, m, alpha, p.a.data(), p.lda, pb, p.b.data(), p.ldb, beta, want.data(), n,
                                       pool);
                std::vector<float> got(static_cast<size_t>(m * n), std::nanf(""));
                cpu::sgemm_prepacked_b(false, m, alpha, p.a.data(), p.lda, pb, p.b.data(), p.ldb, beta, got.data(), n,
                                       pool, cin, ld_cin);
                INFO("m=" << m << " n=" << n << " k=" << k << " tb=" << tb << " form " << form << " alpha " << alpha
                          << " packed by " << hwy::TargetName(target) << " run by " << hwy::TargetName(run_target)
                          << " threads " << pool->num_threads());
                CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
                if (alpha == 1.0f && form == 1 && pool == &one) {  // against the naive sum too
                  double e = 0;
                  for (size_t i = 0; i < got.size(); ++i) e = std::max(e, std::fabs(got[i] - (p.ref[i] + p.c[i])));
                  CHECK(e <= 1e-5 * (1 + k));
                }
              }
        }
        use_target(target);
      }
  }
  use_target(0);
}

// Every compiled SIMD target this CPU runs (AVX3 and AVX2 here): the tile, its row/column edges and
// the cache blocks differ per target, so each is checked against the naive product, Highway's
// dispatch restricted to one target at a time.
TEST_CASE("sgemm on every target: tile edges, transposes, beta, strides, prepacked") {
  std::mt19937 rng(11);
  ThreadPool one(1), two(2);
  // Rows around the tiles (6 on AVX2, 14 on AVX-512; balanced chunks up to 16 rows read B in
  // place), columns around the vectors and strips (8/16 lanes, 2-4 vectors), K around the K block
  // (256) and not a multiple of any vector.
  const int64_t dims[][3] = {{1, 100, 300},  {2, 33, 17},   {3, 47, 1},    {4, 65, 257},  {5, 129, 40},
                             {7, 31, 513},   {13, 80, 9},   {14, 64, 256}, {15, 49, 31},  {16, 200, 70},
                             {17, 45, 260},  {29, 97, 33},  {43, 7, 100},  {100, 3, 600}, {113, 130, 270},
                             {500, 64, 64},  {450, 33, 384}};
  for (int64_t target : runnable_targets()) {
    use_target(target);
    INFO("target " << hwy::TargetName(target));
    CHECK(std::string(cpu::sgemm_target()) == hwy::TargetName(target));
    for (auto& d : dims)
      for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
          check_case(d[0], d[1], d[2], ta, tb, 1.0f, 0.0f, 0, &one, rng);
          check_case(d[0], d[1], d[2], ta, tb, 1.0f, 1.0f, 5, &two, rng);
          check_case(d[0], d[1], d[2], ta, tb, -0.5f, 0.25f, 1, &one, rng);
        }
  }
  use_target(0);
}

TEST_CASE("sgemm_prepacked: A packed by one target, used by another") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  const std::vector<int64_t> targets = runnable_targets();
  const int64_t m = 300, n = 70, k = 530;
  std::vector<float> a(m * k), b(k * n), c0(m * n);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  for (auto& v : c0) v = u(rng);
  std::vector<double> ref(c0.begin(), c0.end());
  naive(false, false, m, n, k, 1.0, a, k, b, n, 0.5, ref, n);
  for (int64_t packer : targets)
    for (int64_t runner : targets) {
      use_target(packer);
      const cpu::SgemmPackedA pa = cpu::sgemm_pack_a(false, m, k, a.data(), k);
      use_target(runner);
      for (const float* raw : {static_cast<const float*>(a.data()), static_cast<const float*>(nullptr)}) {
        std::vector<float> c = c0;
        cpu::sgemm_prepacked(pa, raw, k, false, n, 1.0f, b.data(), n, 0.5f, c.data(), n, nullptr);
        double max_err = 0;
        for (int64_t i = 0; i < m * n; ++i) max_err = std::max(max_err, std::fabs(c[i] - ref[i]));
        INFO("packed by " << hwy::TargetName(packer) << ", run by " << hwy::TargetName(runner) << ", raw A "
                          << (raw != nullptr));
        CHECK(max_err <= 1e-5 * (1 + k));
      }
    }
  use_target(0);
}

#ifdef TSR_TEST_GUARD_PAGES
// Each operand in turn ends right before an inaccessible page: a kernel that loads whole vectors
// past a row's or a K block's last float (Highway's MaskedLoad on NEON and WASM does) faults here
// instead of reading a neighbour's bytes. Runs natively and on aarch64 under qemu.
TEST_CASE("sgemm reads nothing past the end of its operands") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t span = 16 * page;
  void* mem = mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mem != MAP_FAILED);
  REQUIRE(mprotect(static_cast<char*>(mem) + span, page, PROT_NONE) == 0);
  float* const guard = reinterpret_cast<float*>(static_cast<char*>(mem) + span);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  // K tails of 1-3 floats (the dot path: few columns, B^T), edge panels (N not a multiple of the
  // vector), 1-row strips.
  const int64_t dims[][3] = {{1, 3, 5}, {2, 5, 13}, {7, 9, 33}, {3, 1, 7}, {1, 17, 3}, {16, 3, 10}, {30, 19, 21}};
  for (auto& d : dims)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (int last = 0; last < 2; ++last) {  // which operand sits at the guard page
          const int64_t m = d[0], n = d[1], k = d[2];
          const int64_t lda = ta ? m : k, ldb = tb ? k : n;
          std::vector<float> a(m * k), b(k * n);
          for (auto& v : a) v = u(rng);
          for (auto& v : b) v = u(rng);
          std::vector<float>& moved = last ? b : a;
          float* at_end = guard - moved.size();
          std::memcpy(at_end, moved.data(), moved.size() * sizeof(float));
          const float* pa = last ? a.data() : at_end;
          const float* pb = last ? at_end : b.data();
          std::vector<float> c(m * n, 0.0f);
          std::vector<double> ref(m * n, 0.0);
          naive(ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, ref, n);
          INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << (last ? " B" : " A")
                    << " at the guard page");
          cpu::sgemm(ta, tb, m, n, k, 1.0f, pa, lda, pb, ldb, 0.0f, c.data(), n, nullptr);
          double max_err = 0;
          for (int64_t i = 0; i < m * n; ++i) max_err = std::max(max_err, std::fabs(c[i] - ref[i]));
          CHECK(max_err <= 1e-5 * (1 + k));
        }
  munmap(mem, span + page);
}
#endif

// Few (M block, column chunk) tasks for the threads (ResNet's 512 x 49 3x3 convs on 7x7 maps):
// C is split into tiles instead (gemm_tile_split-inl.h). Each element still sums its K blocks in
// the same order, so the result is the one-thread result bit for bit, whatever the thread count.
TEST_CASE("sgemm tile split: naive product, and equal across thread counts") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  ThreadPool one(1), two(2), three(3);
  // M past one or two M blocks (448 on AVX-512, 96 on AVX2), N under one panel to a few, K past
  // the K block; with packed A, A packed per K block, and A read in place (N <= 2 panels).
  const int64_t dims[][3] = {{512, 49, 600}, {576, 196, 96}, {100, 49, 300}, {1000, 64, 70}, {60, 20, 513}};
  for (auto& d : dims)
    for (int ta = 0; ta < 2; ++ta)
      for (int prepacked = 0; prepacked < 2; ++prepacked) {
        const int64_t m = d[0], n = d[1], k = d[2], lda = ta ? m : k;
        std::vector<float> a(m * k), b(k * n);
        for (auto& v : a) v = u(rng);
        for (auto& v : b) v = u(rng);
        const cpu::SgemmPackedA pa = cpu::sgemm_pack_a(ta, m, k, a.data(), lda);
        auto run = [&](ThreadPool& pool) {
          std::vector<float> c(m * n, NAN);
          if (prepacked) cpu::sgemm_prepacked(pa, nullptr, lda, false, n, 1.0f, b.data(), n, 0.0f, c.data(), n, &pool);
          else cpu::sgemm(ta, false, m, n, k, 1.0f, a.data(), lda, b.data(), n, 0.0f, c.data(), n, &pool);
          return c;
        };
        INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " prepacked=" << prepacked);
        const std::vector<float> c1 = run(one);
        check_naive(c1, ta, false, m, n, k, a, lda, b, n);
        CHECK(run(two) == c1);
        CHECK(run(three) == c1);
      }
}

TEST_CASE("sgemm few rows from a 1 MiB B (a decode step's projection): split over threads, equal to one") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  ThreadPool one(1), two(2);
  // Under kMinParallelMacs but with B of 2^18 floats: the few-row paths split B's columns (B raw,
  // B^T raw; an odd N and M for the edge strips); the sums per column stay in one thread's order.
  const int64_t dims[][3] = {{1, 512, 512}, {3, 1031, 255}, {1, 255, 1031}};
  for (auto& d : dims)
    for (int tb = 0; tb < 2; ++tb) {
      const int64_t m = d[0], n = d[1], k = d[2], ldb = tb ? k : n;
      std::vector<float> a(m * k), b(k * n);
      for (auto& v : a) v = u(rng);
      for (auto& v : b) v = u(rng);
      auto run = [&](ThreadPool& pool) {
        std::vector<float> c(m * n, NAN);
        cpu::sgemm(false, tb, m, n, k, 1.0f, a.data(), k, b.data(), ldb, 0.0f, c.data(), n, &pool);
        return c;
      };
      INFO("m=" << m << " n=" << n << " k=" << k << " tb=" << tb);
      const std::vector<float> c1 = run(one);
      check_naive(c1, false, tb, m, n, k, a, k, b, ldb);
      CHECK(run(two) == c1);
    }
}
