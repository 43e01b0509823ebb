// ThreadPool: a fixed set of worker threads for intra-op parallelism.
//
// parallel_for(n, grain, fn) splits [0, n) into contiguous chunks of at least `grain` items and
// calls fn(begin, end) for each, on the workers and the calling thread, returning when all are
// done. With one thread (or under WASM without pthreads) it calls fn(0, n) inline. Calls from
// inside a running parallel_for run inline (no nested parallelism). Not reentrant across
// concurrent callers: one parallel_for at a time per pool (a Session owns its pool).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tsr {

class ThreadPool {
 public:
  // num_threads <= 0: std::thread::hardware_concurrency(). Includes the calling thread.
  explicit ThreadPool(int num_threads = 1);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void worker_loop(int index);

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunk_ = 0, job_chunks_ = 0;
  int64_t next_chunk_ = 0, chunks_done_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  bool in_job_ = false;
};

}  // namespace tsr
