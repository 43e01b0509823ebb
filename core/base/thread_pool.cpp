#include "core/base/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace tsr {

namespace {

thread_local bool t_inside_pool = false;

// How long an idle thread keeps polling before it blocks: longer than the serial stretch between
// two parallel kernels of a model (small ops run inline, up to a few hundred microseconds), since
// a futex wake-up costs tens of microseconds in a VM and the last chunk waits for it (BlazeFace
// back at 2 threads: 8.3 ms with 1 ms, 8.4 with 100 us, 13.3 without polling). Polling yields,
// so on a busy machine the core goes to whoever is runnable.
constexpr auto kSpin = std::chrono::microseconds(1000);

template <typename Pred>
bool spin_until(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (done()) return true;
    if ((i & 15) == 15 && std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads, std::function<void()> thread_init) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  num_threads = 1;
#endif
  if (num_threads <= 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  num_threads_ = num_threads;
  claims_ = std::vector<Claim>(static_cast<size_t>(num_threads_));
  for (int i = 1; i < num_threads_; ++i)
    workers_.emplace_back([this, i, thread_init] {
      if (thread_init) thread_init();
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++inited_;
      }
      cv_done_.notify_all();
      worker_loop(i);
    });
#if !defined(__EMSCRIPTEN__)
  // A browser's main thread must not block on workers that may still be loading (they start
  // through its event loop); there each worker runs thread_init before its first task instead.
  std::unique_lock<std::mutex> lock(mu_);
  cv_done_.wait(lock, [&] { return inited_ == num_threads_ - 1; });
#endif
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  cv_start_.notify_all();
  for (auto& w : workers_) w.join();
}

bool ThreadPool::inside_task() { return t_inside_pool; }

double ThreadPool::thread_cpu_ms() {
#if defined(CLOCK_THREAD_CPUTIME_ID) && !defined(__EMSCRIPTEN__)
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
#else
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

void ThreadPool::set_accounting(bool on) {
  if (on && chunk_ms_.empty()) {
    // The most chunks a job has (parallel_for_slots: 4 per thread).
    chunk_ms_.assign(static_cast<size_t>(num_threads_) * 4, 0.0);
    chunk_slot_.assign(chunk_ms_.size(), 0);
  }
  accounting_.store(on);
}

ThreadPool::WorkTally ThreadPool::take_tally() {
  WorkTally t = tally_;
  tally_ = WorkTally();
  return t;
}

int64_t ThreadPool::claim_chunk(int slot) {
  for (int i = 0; i < num_threads_; ++i) {
    int s = slot + i;
    if (s >= num_threads_) s -= num_threads_;
    Claim& cl = claims_[static_cast<size_t>(s)];
    // A relaxed look first: a run already taken costs no write to another thread's line.
    if (cl.begin + cl.next.load(std::memory_order_relaxed) >= cl.end) continue;
    const int64_t c = cl.begin + cl.next.fetch_add(1);
    if (c < cl.end) return c;
  }
  return -1;
}

void ThreadPool::run_chunks(int slot) {
  const auto& fn = *job_;
  const int64_t n = job_n_, chunks = job_chunks_;
  const bool timed = accounting_.load(std::memory_order_relaxed);
  for (;;) {
    const int64_t c = claim_chunk(slot);
    if (c < 0) return;
    const double t0 = timed ? thread_cpu_ms() : 0.0;
    fn(slot, c * n / chunks, (c + 1) * n / chunks);
    if (timed) {
      chunk_ms_[static_cast<size_t>(c)] = thread_cpu_ms() - t0;
      chunk_slot_[static_cast<size_t>(c)] = slot;
    }
    if (chunks_done_.fetch_add(1) + 1 == chunks) {
      std::lock_guard<std::mutex> lock(mu_);
      if (waiting_) cv_done_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) {
  parallel_for_slots(n, grain, [&fn](int, int64_t b, int64_t e) { fn(b, e); });
}

void ThreadPool::parallel_for_slots(int64_t n, int64_t grain, FunctionRef<void(int, int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  bool expected = false;
  if (num_threads_ == 1 || n <= grain || t_inside_pool || !busy_.compare_exchange_strong(expected, true)) {
    const bool was_inside = t_inside_pool;
    t_inside_pool = true;
    fn(0, 0, n);
    t_inside_pool = was_inside;
    return;
  }
  // At most 4 chunks per thread, and a multiple of the thread count where n allows: 3 chunks of
  // a grain on 2 threads leave one thread idle for a third of the job.
  // Chunk c is [c * n / chunks, (c + 1) * n / chunks): sizes differ by at most one (chunks of
  // ceil(n / chunks) left fewer or a short last one: 28 items in 8 chunks were 7 chunks of 4,
  // split 4 : 3 between 2 threads).
  int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, int64_t{num_threads_} * 4);
  chunks = std::min<int64_t>(n, (chunks + num_threads_ - 1) / num_threads_ * num_threads_);
  job_ = &fn;
  job_n_ = n;
  job_chunks_ = chunks;
  for (int s = 0; s < num_threads_; ++s) {
    Claim& cl = claims_[static_cast<size_t>(s)];
    cl.begin = s * chunks / num_threads_;
    cl.end = (s + 1) * chunks / num_threads_;
    cl.next.store(0, std::memory_order_relaxed);
  }
  chunks_done_.store(0);
  const uint64_t open = generation_.fetch_add(1) + 1;  // odd: a job is open
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (sleepers_ > 0) cv_start_.notify_all();
  }
  const bool timed = accounting_.load(std::memory_order_relaxed);
  t_inside_pool = true;
  run_chunks(0);
  t_inside_pool = false;
  const double wait0 = timed ? thread_cpu_ms() : 0.0;
  const auto all_done = [&] { return chunks_done_.load() == job_chunks_; };
  if (!spin_until(all_done)) {
    std::unique_lock<std::mutex> lock(mu_);
    waiting_ = true;
    cv_done_.wait(lock, all_done);
    waiting_ = false;
  }
  if (timed) account_job(thread_cpu_ms() - wait0);
  // Close the job, then wait for workers that saw it open to leave it: only then may the job's
  // fields be rewritten by the next parallel_for.
  generation_.store(open + 1);
  while (active_.load() != 0) std::this_thread::yield();
  busy_.store(false);
}

void ThreadPool::account_job(double wait_ms) {
  // List scheduling in claim order: each chunk goes to the ideal thread that is free first.
  double free_at[64] = {};
  const int lanes = std::min(num_threads_, 64);
  double span = 0;
  for (int64_t c = 0; c < job_chunks_; ++c) {
    const double ms = chunk_ms_[static_cast<size_t>(c)];
    tally_.chunk_ms += ms;
    if (chunk_slot_[static_cast<size_t>(c)] == 0) tally_.caller_chunk_ms += ms;
    double* lane = std::min_element(free_at, free_at + lanes);
    *lane += ms;
    span = std::max(span, *lane);
  }
  tally_.span_ms += span;
  tally_.wait_ms += wait_ms;
  ++tally_.jobs;
}

void ThreadPool::worker_loop(int slot) {
  t_inside_pool = true;
  uint64_t seen = 0;
  for (;;) {
    if (stop_.load()) return;
    const uint64_t g = generation_.load();
    if ((g & 1) && g != seen) {
      seen = g;
      active_.fetch_add(1);
      // Re-checked after announcing itself: a job closed in between is left alone.
      if (generation_.load() == g) run_chunks(slot);
      active_.fetch_sub(1);
      continue;
    }
    const auto changed = [&] { return stop_.load() || generation_.load() != g; };
    if (spin_until(changed)) continue;
    std::unique_lock<std::mutex> lock(mu_);
    ++sleepers_;
    cv_start_.wait(lock, changed);
    --sleepers_;
  }
}

}  // namespace tsr
