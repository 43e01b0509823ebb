// ThreadPool: a fixed set of worker threads for intra-op parallelism (kernels split their work)
// and inter-op parallelism (the executor runs independent nodes side by side).
//
// parallel_for(n, grain, fn) splits [0, n) into contiguous chunks of at least `grain` items and
// calls fn(begin, end) for each, on the workers and the calling thread, returning when all are
// done. With one thread (or under WASM without pthreads) it calls fn(0, n) inline. Calls from
// inside a running parallel_for run inline (no nested parallelism), so an inter-op task that runs
// a multi-threaded kernel does not oversubscribe the machine.
//
// Why it is built this way (PP-OCRv4 rec ran slower with 2 threads than with 1 under the
// previous mutex-per-chunk pool): a model runs hundreds of small kernels, so the fixed cost of
// one parallel_for decides whether a second thread helps. Chunks are claimed with one atomic
// add each (no lock), the caller works on chunks too instead of waiting, and a worker that
// finished a job spins briefly (yielding) for the next one before it sleeps, so back-to-back
// kernels do not each pay a futex wake-up. A worker that has not started yet when the caller has
// finished every chunk costs nothing: the caller never waits for a chunk nobody claimed.
//
// Thread safety: parallel_for may be called from several threads at once (re-entrant Plans
// share a Session's pool); one job runs on the workers at a time and a caller that finds the
// workers busy runs its range inline, which is what the extra threads would have done anyway.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/base/function_ref.h"

namespace tsr {

class ThreadPool {
 public:
  // num_threads <= 0: std::thread::hardware_concurrency(). Includes the calling thread.
  explicit ThreadPool(int num_threads = 1);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // `fn` is referenced, not copied (FunctionRef): it must live until parallel_for returns, which
  // any lambda argument does.
  void parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn);
  // Whether the calling thread is inside a parallel_for task (its own calls then run inline).
  static bool inside_task();

 private:
  void worker_loop();
  // Claims and runs chunks of the current job until none is left.
  void run_chunks();

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  // The current job: written by the owner before `generation_` is bumped (release), read by the
  // workers after they see the new generation (acquire).
  const FunctionRef<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunk_ = 0, job_chunks_ = 0;
  std::atomic<int64_t> next_chunk_{0};
  std::atomic<int64_t> chunks_done_{0};
  std::atomic<int> active_{0};       // workers inside run_chunks for the current job
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> busy_{false};    // a job owns the workers
  std::atomic<bool> stop_{false};
  int sleepers_ = 0;                 // workers blocked on cv_start_ (guarded by mu_)
  bool waiting_ = false;             // the owner is blocked on cv_done_ (guarded by mu_)
};

}  // namespace tsr
