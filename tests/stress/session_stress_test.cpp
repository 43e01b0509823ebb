// Concurrency stress test, run under ThreadSanitizer by the `tsan` stage (scripts/test.sh) and
// as an ordinary test elsewhere. What the API allows (core/include/tessera/session.h, core/include/tessera/
// eager.h) is exercised from 2 to 8 threads at once, and every result is compared with the one
// computed on a single thread beforehand:
//   - one immutable Model shared by many Sessions, each created and run on its own thread;
//   - Sessions with their own intra-op thread pools (num_threads 2 and 4) running at the same time;
//   - one Session handed from thread to thread (runs serialized by a mutex: run() is not
//     thread-safe, but nothing in a Session may be tied to the thread that created it);
//   - the same .tsr bytes loaded and verified on many threads at once;
//   - eager Contexts, one per thread.
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tessera/session.h"
#include "core/include/tessera/eager.h"
#include "core/io/tsr_io.h"
#include "core/passes/verify_model.h"
#include "core/ops/graph_builder.h"

using namespace tsr;
using ops::GraphBuilder;
using ops::Value;

namespace {

constexpr int kRunsPerThread = 20;

// Y = relu(W @ X + b) through If (on the sign of sum(X)) and a 3-step Loop (x = tanh(x * 0.5 + i)),
// then Softmax: matmul, elementwise, control flow and a reduction, with per-session Plans.
ir::Model stress_model() {
  ir::Model m;
  GraphBuilder b(m);
  Value x = b.input("X", DType::kF32, {16, 8});
  std::vector<float> w(16 * 16), bias(16 * 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 7 % 13) - 6) / 8.0f;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i % 5) / 10.0f;
  Value wv = b.constant(Tensor::from<float>({16, 16}, w), "W");
  Value bv = b.constant(Tensor::from<float>({16, 8}, bias), "b");
  Value y = b.op("Relu", {b.op("Add", {b.op("MatMul", {wv, x}), bv})});
  Value pos = b.op("Greater", {b.op("ReduceSum", {x}, {ir::Attribute::make_int("keepdims", 0)}),
                               b.constant(Tensor::scalar(0.0f))});
  auto branch = b.cond(
      pos, [&](GraphBuilder& t) { return std::vector<Value>{t.op("Mul", {y, y})}; },
      [&](GraphBuilder& e) { return std::vector<Value>{e.op("Neg", {y})}; });
  auto looped = b.fori_loop(
      b.constant(Tensor::scalar<int64_t>(3), "n"),
      [&](GraphBuilder& body, Value i, const std::vector<Value>& vars) {
        Value fi = body.op("Cast", {i}, {ir::Attribute::make_int("to", static_cast<int64_t>(DType::kF32))});
        Value half = body.constant(Tensor::scalar(0.5f));
        return std::vector<Value>{body.op("Tanh", {body.op("Add", {body.op("Mul", {vars[0], half}), fi})})};
      },
      {branch[0]});
  b.output(b.op("Softmax", {looped[0]}, {ir::Attribute::make_int("axis", 0)}), "Y");
  REQUIRE(b.status().ok());
  REQUIRE(passes::verify_model(m).ok());
  return m;
}

Tensor input_for(int k) {
  std::vector<float> v(16 * 8);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i + 3 * k) % 11) - 5 + k % 3) / 4.0f;
  return Tensor::from<float>({16, 8}, v);
}

std::vector<float> values(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

// Results of inputs 0..n-1 on one thread: the references.
std::vector<std::vector<float>> references(const std::shared_ptr<const ir::Model>& model, int n) {
  auto s = Session::create(model);
  REQUIRE(s.ok());
  std::vector<std::vector<float>> refs;
  for (int k = 0; k < n; ++k) {
    auto r = (*s)->run({input_for(k)});
    REQUIRE(r.ok());
    refs.push_back(values(r->front()));
  }
  return refs;
}

// Runs body(thread index) on `n` threads started together; returns the number of failures.
template <typename F>
int on_threads(int n, F body) {
  std::atomic<int> failures{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();  // start together for more overlap
      if (!body(t)) failures.fetch_add(1);
    });
  for (auto& th : threads) th.join();
  return failures.load();
}

}  // namespace

TEST_CASE("stress: one model, a session per thread, 2 to 8 threads, per-session pools") {
  auto model = std::make_shared<const ir::Model>(stress_model());
  const auto refs = references(model, 8);
  for (int threads : {2, 4, 8})
    for (int pool : {1, 2, 4}) {
      if (threads * pool > 16) continue;
      INFO(threads << " threads, " << pool << " intra-op threads per session");
      const int failures = on_threads(threads, [&](int t) {
        SessionOptions opts;
        opts.num_threads = pool;
        auto s = Session::create(model, opts);
        if (!s.ok()) return false;
        for (int r = 0; r < kRunsPerThread; ++r) {
          const int k = (t + r) % 8;
          auto out = (*s)->run({input_for(k)});
          if (!out.ok() || values(out->front()) != refs[static_cast<size_t>(k)]) return false;
        }
        return true;
      });
      CHECK(failures == 0);
    }
}

TEST_CASE("stress: one session handed between threads (runs serialized)") {
  auto model = std::make_shared<const ir::Model>(stress_model());
  const auto refs = references(model, 8);
  SessionOptions opts;
  opts.num_threads = 2;
  auto s = Session::create(model, opts);
  REQUIRE(s.ok());
  std::mutex mu;  // run() is not thread-safe: one caller at a time, on any thread
  const int failures = on_threads(4, [&](int t) {
    for (int r = 0; r < kRunsPerThread; ++r) {
      const int k = (t * 3 + r) % 8;
      std::lock_guard<std::mutex> lock(mu);
      auto out = (*s)->run({input_for(k)});
      if (!out.ok() || values(out->front()) != refs[static_cast<size_t>(k)]) return false;
    }
    return true;
  });
  CHECK(failures == 0);
}

TEST_CASE("stress: the same .tsr bytes loaded and run on 8 threads at once") {
  auto bytes = io::serialize_model(stress_model());
  REQUIRE(bytes.ok());
  auto shared = std::make_shared<const std::vector<uint8_t>>(std::move(bytes).value());
  auto first = io::load_model_buffer(shared->data(), shared->size(), shared);
  REQUIRE(first.ok());
  const auto refs = references(std::make_shared<const ir::Model>(std::move(first).value()), 8);
  const int failures = on_threads(8, [&](int t) {
    auto m = io::load_model_buffer(shared->data(), shared->size(), shared);
    if (!m.ok()) return false;
    auto s = Session::create(std::make_shared<const ir::Model>(std::move(m).value()));
    if (!s.ok()) return false;
    auto out = (*s)->run({input_for(t)});
    return out.ok() && values(out->front()) == refs[static_cast<size_t>(t)];
  });
  CHECK(failures == 0);
}

TEST_CASE("stress: eager contexts on 8 threads") {
  // Each thread computes softmax(relu(x @ w)) in its own (default, thread-local) context.
  auto compute = [](int k) {
    namespace e = tsr::eager;
    e::Tensor x = e::Tensor::from(input_for(k));
    e::Tensor w = e::Tensor::from(input_for(k + 1));
    e::Tensor y = e::op("Softmax", {e::relu(e::matmul(x, e::op("Transpose", {w})))});
    return y.ok() ? y.to_vector<float>() : std::vector<float>{};
  };
  std::vector<std::vector<float>> refs;
  for (int k = 0; k < 8; ++k) refs.push_back(compute(k));
  for (const auto& r : refs) REQUIRE(r.size() == 16 * 16);
  const int failures = on_threads(8, [&](int t) {
    for (int r = 0; r < kRunsPerThread; ++r)
      if (compute(t) != refs[static_cast<size_t>(t)]) return false;
    return true;
  });
  CHECK(failures == 0);
}
