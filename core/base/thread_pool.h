// ThreadPool: a fixed set of worker threads for intra-op parallelism (kernels split their work)
// and inter-op parallelism (the executor runs independent nodes side by side).
//
// parallel_for(n, grain, fn) splits [0, n) into contiguous chunks of about `grain` items or more
// (at most 4 per thread, their count a multiple of the threads where n allows, sizes differing by
// at most one) and calls fn(begin, end) for each, on the workers and the calling thread,
// returning when all are done. Thread t (the caller 0) takes the t-th run of chunks/T chunks
// first (then helps with the others' that are still unclaimed), so kernels that split the same
// range alike keep their parts on the same threads (and caches) from one call to the next. With one thread (or under WASM without pthreads) it calls fn(0, n) inline. Calls from
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
  // `thread_init` (may be empty) runs once on each worker thread before it takes work; natively
  // the constructor returns after every worker has run it (a backend sizes its per-thread buffers
  // there, so that no run allocates them later: issue 12's allocation-free steady state). Under
  // Emscripten it does not wait (a browser's main thread cannot block on starting workers).
  explicit ThreadPool(int num_threads = 1, std::function<void()> thread_init = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // `fn` is referenced, not copied (no allocation per call); it is called before this returns.
  void parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn);
  // Like parallel_for, calling fn(slot, begin, end): `slot` in [0, num_threads()) is unique among
  // the chunks of this call that run at the same time (the caller's chunks get 0, worker w's get
  // w, an inline call 0). Per-chunk scratch can then be num_threads() buffers that the caller
  // allocates before the call, indexed by slot: which thread takes which chunk changes from run
  // to run, the caller's allocations do not (pthreadpool's parallelize_*_with_thread).
  void parallel_for_slots(int64_t n, int64_t grain, FunctionRef<void(int, int64_t, int64_t)> fn);
  // Whether the calling thread is inside a parallel_for task (its own calls then run inline).
  static bool inside_task();

  // Work accounting for `tessera run --profile` (off by default; when off, a job costs one
  // relaxed load more). With it on, every chunk of a job that runs on the workers is timed in
  // thread CPU time (CLOCK_THREAD_CPUTIME_ID), which other processes on the machine do not
  // inflate, and the chunks are list-scheduled, in the order they are claimed, on
  // num_threads() ideal threads that all start at once: `span_ms` is what the job would take
  // if every thread ran its chunks uninterrupted, so span vs chunk time measures how well the
  // work is split, whatever the load. Meant for one calling thread (the profiler turns inter-op
  // waves off); calls from several threads at once mix their tallies.
  struct WorkTally {
    double chunk_ms = 0;         // CPU time inside the chunks of pooled jobs, all threads
    double span_ms = 0;          // those jobs list-scheduled on num_threads() ideal threads
    double caller_chunk_ms = 0;  // the part of chunk_ms that ran on the calling thread
    double wait_ms = 0;          // the caller's CPU time spent waiting for the workers' last chunks
    int64_t jobs = 0;            // jobs that went to the workers (not run inline)
  };
  void set_accounting(bool on);
  // The tally since the last call, which resets it.
  WorkTally take_tally();
  // The calling thread's CPU time in milliseconds.
  static double thread_cpu_ms();

 private:
  void worker_loop(int slot);
  // Claims and runs chunks of the current job until none is left.
  void run_chunks(int slot);
  // Accounting: adds the finished job's chunk times and span to tally_.
  void account_job(double wait_ms);

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  // The current job: written by the owner before `generation_` is bumped (release), read by the
  // workers after they see the new generation (acquire).
  const FunctionRef<void(int, int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunks_ = 0;
  // Chunk ownership: slot s owns chunks [s * chunks / T, (s + 1) * chunks / T) of a job (T =
  // num_threads()) and claims them first, in order, with one atomic add on its own counter, then
  // takes what is left of the others' (in slot order). The same part of a kernel's range thus
  // goes to the same thread job after job, so consecutive kernels split the same way (rows of an
  // image) read what their thread wrote; claimed first-come (one shared counter), half of each
  // kernel's input came from the other core's cache: 200 ns a line between vCPUs that share no
  // last-level cache (MobileNetV2's convs did 1.7-2.1x their one-thread work at two threads).
  // Each counter on its own cache line, as the count of finished chunks.
  struct alignas(64) Claim {
    std::atomic<int64_t> next{0};  // chunks of the slot's range claimed (may run past its end)
    int64_t begin = 0, end = 0;    // the slot's range of chunks in the current job
  };
  // Claims one chunk (the slot's own first, then the others'); -1 when none is left.
  int64_t claim_chunk(int slot);
  std::vector<Claim> claims_;
  alignas(64) std::atomic<int64_t> chunks_done_{0};
  alignas(64) std::atomic<int> active_{0};  // workers inside run_chunks for the current job
  alignas(64) std::atomic<uint64_t> generation_{0};
  std::atomic<bool> busy_{false};    // a job owns the workers
  std::atomic<bool> stop_{false};
  int sleepers_ = 0;                 // workers blocked on cv_start_ (guarded by mu_)
  int inited_ = 0;                   // workers that ran thread_init (guarded by mu_)
  bool waiting_ = false;             // the owner is blocked on cv_done_ (guarded by mu_)
  // Accounting (set_accounting): per chunk of the current job, its CPU time; written by the
  // thread that ran the chunk, read by the owner after chunks_done_ says all are done.
  std::atomic<bool> accounting_{false};
  std::vector<double> chunk_ms_;
  std::vector<int> chunk_slot_;
  WorkTally tally_;
};

}  // namespace tsr
