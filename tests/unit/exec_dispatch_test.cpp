// Runtime SIMD dispatch (every compiled Highway target gives the same results), the re-entrant
// Plan (one Plan run from two threads at once) and the thread pool under concurrent callers.
#include <catch2/catch.hpp>

#include <hwy/targets.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/gemm.h"
#include "core/base/thread_pool.h"
#include "core/exec/backend.h"
#include "core/exec/plan.h"
#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/passes/infer_types.h"
#include "tests/catch/catch_skip.h"
#include "tests/unit/graph_test_util.h"
#include "tests/unit/kernel_test_util.h"

using namespace tsr;
using namespace tsr::test;

namespace {

// The single-threaded wasm build cannot start threads (std::thread throws there): the tests that
// start their own callers are skipped (tsr_skip); the pool itself runs everything inline in that build.
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
constexpr bool kCanStartThreads = false;
#else
constexpr bool kCanStartThreads = true;
#endif

// Deterministic values in [-1, 1).
std::vector<float> pseudo_random(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

// A model whose main graph `name` has one f32 input "x" of `shape`.
std::shared_ptr<ir::Model> model_with_input(const std::string& name, const Shape& shape) {
  auto model = std::make_shared<ir::Model>();
  model->graphs.emplace_back();
  ir::Graph& g = model->main();
  g.name = name;
  ir::TensorInfo xi;
  xi.name = "x";
  xi.dtype = DType::kF32;
  xi.has_shape = true;
  xi.shape = shape;
  g.inputs.push_back(g.add_tensor(xi));
  return model;
}

// A small CNN touching every Highway-dispatched kernel family: Conv (im2col + packed SGEMM, and
// depthwise), Sigmoid/Tanh (elementwise_unary), Mul/Add (elementwise), Softmax (nn_norm),
// ReduceSum (reduce) and MatMul (SGEMM).
std::shared_ptr<ir::Model> make_cnn() {
  auto model = model_with_input("cnn", {1, 4, 13, 11});
  ir::Graph& g = model->main();
  const int32_t x = g.inputs[0];
  const int32_t w = add_value(g, "w", Tensor::from<float>({8, 4, 3, 3}, pseudo_random(8 * 4 * 9, 1)));
  const int32_t b = add_value(g, "b", Tensor::from<float>({8}, pseudo_random(8, 2)));
  const int32_t dw = add_value(g, "dw", Tensor::from<float>({8, 1, 3, 3}, pseudo_random(8 * 9, 3)));
  const int32_t mw = add_value(g, "mw", Tensor::from<float>({11, 19}, pseudo_random(11 * 19, 4)));
  const int32_t axes = add_value(g, "axes", Tensor::from<int64_t>({1}, {3}));
  const auto pads = ir::Attribute::make_ints("pads", {1, 1, 1, 1});
  const int32_t c = add_node(g, "Conv", {x, w, b}, {pads});
  const int32_t d = add_node(g, "Conv", {c, dw}, {pads, ir::Attribute::make_int("group", 8)});
  const int32_t s = add_node(g, "Sigmoid", {d});
  const int32_t t = add_node(g, "Tanh", {add_node(g, "Mul", {d, s})});
  const int32_t m = add_node(g, "MatMul", {add_node(g, "Add", {t, c}), mw});
  const int32_t sm = add_node(g, "Softmax", {m});
  const int32_t r = add_node(g, "ReduceSum", {m, axes});
  g.outputs = {sm, r};
  REQUIRE(passes::infer_types(*model).ok());
  return model;
}

Tensor cnn_input(uint32_t seed) { return Tensor::from<float>({1, 4, 13, 11}, pseudo_random(4 * 13 * 11, seed)); }

void check_close(const Tensor& got, const Tensor& want, double tol) {
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double a = got.data<float>()[i], e = want.data<float>()[i];
    INFO("element " << i << ": " << a << " vs " << e);
    REQUIRE(std::abs(a - e) <= tol * (1 + std::abs(e)));
  }
}

}  // namespace

TEST_CASE("SIMD dispatch: SGEMM under every target this CPU runs matches the reference") {
  // Checks at least the one target every build has.
  const std::vector<int64_t> targets = runnable_targets();
  REQUIRE(!targets.empty());
  // Awkward sizes: edge tiles, K blocks, the small-M and small-N paths.
  struct Case { bool ta, tb; int64_t m, n, k; };
  const std::vector<Case> cases = {{false, false, 37, 53, 300}, {true, false, 19, 70, 33}, {false, true, 2, 129, 65},
                                   {false, false, 1, 1030, 17}, {false, false, 45, 5, 77}};
  for (int64_t target : targets) {
    use_target(target);
    INFO("target " << hwy::TargetName(target));
    CHECK(std::string(cpu::simd_target()) == hwy::TargetName(target));
    for (const Case& c : cases) {
      const auto a = pseudo_random(static_cast<size_t>(c.m * c.k), 11), b = pseudo_random(static_cast<size_t>(c.k * c.n), 12);
      std::vector<float> got(static_cast<size_t>(c.m * c.n), NAN), want(got.size());
      const int64_t lda = c.ta ? c.m : c.k, ldb = c.tb ? c.k : c.n;
      ThreadPool pool(2);
      cpu::sgemm(c.ta, c.tb, c.m, c.n, c.k, 0.5f, a.data(), lda, b.data(), ldb, 0.0f, got.data(), c.n, &pool);
      cpu::gemm_reference<float>(c.ta, c.tb, c.m, c.n, c.k, 0.5f, a.data(), lda, b.data(), ldb, 0.0f, want.data(), c.n);
      for (size_t i = 0; i < got.size(); ++i) REQUIRE(std::abs(got[i] - want[i]) <= 1e-4f * (1 + std::abs(want[i])));
    }
  }
  use_target(0);
}

TEST_CASE("SIMD dispatch: every compiled target this CPU runs gives the same results") {
  const std::vector<int64_t> targets = runnable_targets();
  INFO("compiled: " << cpu::compiled_simd_targets() << "; runnable here: " << targets.size());
  if (targets.size() < 2) {
    tsr_skip("only one SIMD target runs here (" + std::string(cpu::compiled_simd_targets()) + "): nothing to compare it with");
    return;
  }
  auto model = make_cnn();
  const Tensor x = cnn_input(7);
  std::vector<std::vector<Tensor>> outs;
  for (int64_t target : targets) {
    use_target(target);
    INFO("target " << hwy::TargetName(target));
    CHECK(std::string(cpu::simd_target()) == hwy::TargetName(target));
    SessionOptions opt;
    auto session = Session::create(model, opt);
    REQUIRE(session.ok());
    auto r = (*session)->run({x});
    INFO(r.status().to_string());
    REQUIRE(r.ok());
    outs.push_back(std::move(r).value());
  }
  use_target(0);
  for (size_t t = 1; t < outs.size(); ++t) {
    INFO("target " << hwy::TargetName(targets[t]) << " vs " << hwy::TargetName(targets[0]));
    for (size_t k = 0; k < outs[t].size(); ++k) check_close(outs[t][k], outs[0][k], 1e-5);
  }
}

TEST_CASE("Plan::run is re-entrant: one Plan run from two threads at once") {
  if (!kCanStartThreads) {
    tsr_skip("this build has no threads: nothing runs concurrently");
    return;
  }
  auto model = make_cnn();
  auto backend = exec::create_backend("cpu");
  REQUIRE(backend.ok());
  auto plan = exec::Plan::create(*model, 0, **backend);
  REQUIRE(plan.ok());
  ThreadPool pool(2);  // shared by both callers, as a Session's pool would be
  std::vector<std::vector<Tensor>> expect;
  for (uint32_t s = 0; s < 2; ++s) {
    auto r = (*plan)->run({cnn_input(100 + s)}, pool);
    REQUIRE(r.ok());
    expect.push_back(std::move(r).value());
  }
  std::atomic<int> mismatches{0}, failures{0};
  auto worker = [&](uint32_t s) {
    for (int i = 0; i < 40; ++i) {
      auto r = (*plan)->run({cnn_input(100 + s)}, pool);
      if (!r.ok()) {
        ++failures;
        continue;
      }
      for (size_t k = 0; k < r->size(); ++k)
        for (int64_t e = 0; e < (*r)[k].numel(); ++e)
          if ((*r)[k].data<float>()[e] != expect[s][k].data<float>()[e]) ++mismatches;
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  CHECK(failures.load() == 0);
  CHECK(mismatches.load() == 0);
}

TEST_CASE("Inter-op: independent branches side by side give the sequential results") {
  // x -> {Conv A -> Relu, Conv B -> Sigmoid, Conv C} -> Add -> Add: three heavy nodes per level.
  auto model = model_with_input("branches", {1, 16, 40, 40});
  ir::Graph& g = model->main();
  const int32_t x = g.inputs[0];
  const auto pads = ir::Attribute::make_ints("pads", {1, 1, 1, 1});
  std::vector<int32_t> heads;
  for (uint32_t k = 0; k < 3; ++k) {
    const int32_t w = add_value(g, "w" + std::to_string(k), Tensor::from<float>({16, 16, 3, 3}, pseudo_random(16 * 16 * 9, 20 + k)));
    const int32_t c = add_node(g, "Conv", {x, w}, {pads});
    heads.push_back(k == 0 ? add_node(g, "Relu", {c}) : k == 1 ? add_node(g, "Sigmoid", {c}) : c);
  }
  g.outputs = {add_node(g, "Add", {add_node(g, "Add", {heads[0], heads[1]}), heads[2]})};
  REQUIRE(passes::infer_types(*model).ok());
  const Tensor in = Tensor::from<float>({1, 16, 40, 40}, pseudo_random(16 * 40 * 40, 9));
  std::vector<Tensor> results;
  for (bool inter_op : {false, true}) {
    SessionOptions opt;
    opt.optimization = OptimizationLevel::kNone;  // the three branches as built, not fused
    opt.num_threads = 2;
    opt.inter_op = inter_op;
    auto session = Session::create(model, opt);
    REQUIRE(session.ok());
    auto r = (*session)->run({in});
    REQUIRE(r.ok());
    results.push_back(r->at(0));
  }
  // Each node computes the same thing either way (only the threads differ): equal bit for bit.
  REQUIRE(results[0].shape() == results[1].shape());
  for (int64_t i = 0; i < results[0].numel(); ++i) REQUIRE(results[0].data<float>()[i] == results[1].data<float>()[i]);
}

TEST_CASE("ThreadPool: every index once") {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 7, 64, 1000, 4097}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, 3, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (auto& h : hits) REQUIRE(h.load() == 1);
  }
}

TEST_CASE("ThreadPool: chunks differ in size by at most one, the work accounting adds up") {
  if (!kCanStartThreads) {
    tsr_skip("this build has no threads: every call runs inline");
    return;
  }
  ThreadPool pool(2);
  pool.set_accounting(true);
  pool.take_tally();
  // 28 items in 8 chunks: 3 or 4 each (chunks of ceil(28 / 8) = 4 were 7, split 4 : 3).
  std::mutex mu;
  std::vector<int64_t> sizes;
  pool.parallel_for(28, 1, [&](int64_t b, int64_t e) {
    volatile double x = 0;
    for (int i = 0; i < 20000; ++i) x = x + i;  // some CPU time to account
    std::lock_guard<std::mutex> lock(mu);
    sizes.push_back(e - b);
  });
  CHECK(sizes.size() == 8);
  for (int64_t sz : sizes) CHECK((sz == 3 || sz == 4));
  const ThreadPool::WorkTally t = pool.take_tally();
  CHECK(t.jobs == 1);
  CHECK(t.chunk_ms > 0);
  // The span of 8 chunks on 2 ideal threads: at least half the work, at most all of it.
  CHECK(t.span_ms >= t.chunk_ms / 2 - 1e-9);
  CHECK(t.span_ms <= t.chunk_ms + 1e-9);
  CHECK(t.caller_chunk_ms <= t.chunk_ms + 1e-9);
  CHECK(pool.take_tally().jobs == 0);  // reset by the take
  pool.set_accounting(false);
}

TEST_CASE("ThreadPool: concurrent callers, nested calls inline, back-to-back jobs") {
  if (!kCanStartThreads) {
    tsr_skip("this build has no threads: no concurrent callers");
    return;
  }
  ThreadPool pool(3);
  // Thousands of tiny jobs in a row (a model's small kernels), from two callers at once, each
  // job with a nested parallel_for that must run inline.
  std::atomic<int64_t> total{0}, nested_outside{0};
  auto caller = [&] {
    for (int j = 0; j < 3000; ++j)
      pool.parallel_for(16, 1, [&](int64_t b, int64_t e) {
        pool.parallel_for(4, 1, [&](int64_t b2, int64_t e2) {
          if (!ThreadPool::inside_task()) ++nested_outside;
          total += (e - b) * (e2 - b2);
        });
      });
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  CHECK(nested_outside.load() == 0);
  CHECK(total.load() == 2 * 3000 * 16 * 4);
}

TEST_CASE("ThreadPool: parallel_for_slots gives each concurrently running chunk its own slot") {
  ThreadPool pool(3);
  for (int64_t n : {1, 5, 64, 1000}) {
    std::vector<std::atomic<int>> in_use(3);
    std::atomic<int> bad{0};
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for_slots(n, 1, [&](int slot, int64_t b, int64_t e) {
      if (slot < 0 || slot >= 3 || in_use[static_cast<size_t>(slot)].fetch_add(1) != 0) ++bad;
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      std::this_thread::yield();  // let other chunks start while this one holds its slot
      if (slot >= 0 && slot < 3) in_use[static_cast<size_t>(slot)]--;
    });
    CHECK(bad.load() == 0);
    for (auto& h : hits) REQUIRE(h.load() == 1);
  }
  // An inline call (nested in a task) uses slot 0. Counted, and checked on this thread: Catch2's
  // assertions are not thread-safe (TSan reports a CHECK on a worker as a race).
  std::atomic<int> nonzero_slots{0};
  pool.parallel_for(2, 1, [&](int64_t, int64_t) {
    pool.parallel_for_slots(8, 1, [&](int slot, int64_t, int64_t) { nonzero_slots += slot != 0; });
  });
  CHECK(nonzero_slots.load() == 0);
}

TEST_CASE("ThreadPool: each thread takes its own run of chunks first, in order") {
  // Two threads, 8 chunks: the caller (slot 0) owns chunks 0-3, the worker 4-7. The caller starts
  // with chunk 0 and goes through its run in order before it helps with the worker's (if the
  // worker is late); the worker likewise from chunk 4. Every index still runs once.
  ThreadPool pool(2);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::atomic<int>> hits(64);
    std::vector<int64_t> order[2];
    std::atomic<int> bad{0};
    pool.parallel_for_slots(64, 1, [&](int slot, int64_t b, int64_t e) {
      if (slot < 0 || slot > 1) {
        ++bad;
        return;
      }
      order[slot].push_back(b);  // one thread per slot at a time
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    CHECK(bad.load() == 0);
    for (auto& h : hits) REQUIRE(h.load() == 1);
    REQUIRE(!order[0].empty());
    CHECK(order[0][0] == 0);
    for (int s = 0; s < 2; ++s) {
      // The slot's own run (begins in [32 s, 32 s + 32)) first and ascending, then the other's.
      size_t i = 0;
      for (; i < order[s].size() && order[s][i] / 32 == s; ++i)
        if (i > 0) CHECK(order[s][i] > order[s][i - 1]);
      for (; i < order[s].size(); ++i) CHECK(order[s][i] / 32 != s);
    }
  }
}

TEST_CASE("ThreadPool: thread_init runs once on every worker before the constructor returns") {
  std::atomic<int> inits{0};
  {
    ThreadPool pool(3, [&] { ++inits; });
#if !defined(__EMSCRIPTEN__)  // there the constructor does not wait for the workers
    CHECK(inits.load() == (kCanStartThreads ? 2 : 0));  // the workers; the caller is not one
#endif
  }
  CHECK(inits.load() == (kCanStartThreads ? 2 : 0));
}
