#include "core/base/thread_pool.h"

#include <algorithm>

namespace tsr {

namespace {
thread_local bool t_inside_pool = false;
}

ThreadPool::ThreadPool(int num_threads) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  num_threads = 1;
#endif
  if (num_threads <= 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  num_threads_ = num_threads;
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_start_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (num_threads_ == 1 || n <= grain || t_inside_pool) {
    fn(0, n);
    return;
  }
  const int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, int64_t{num_threads_} * 4);
  const int64_t chunk = (n + chunks - 1) / chunks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    job_n_ = n;
    job_chunk_ = chunk;
    job_chunks_ = (n + chunk - 1) / chunk;
    next_chunk_ = 0;
    chunks_done_ = 0;
    in_job_ = true;
    ++generation_;
  }
  cv_start_.notify_all();
  t_inside_pool = true;
  for (;;) {
    int64_t c;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (next_chunk_ >= job_chunks_) break;
      c = next_chunk_++;
    }
    fn(c * chunk, std::min(n, (c + 1) * chunk));
    std::lock_guard<std::mutex> lock(mu_);
    ++chunks_done_;
  }
  t_inside_pool = false;
  std::unique_lock<std::mutex> lock(mu_);
  cv_done_.wait(lock, [&] { return chunks_done_ == job_chunks_; });
  in_job_ = false;
  job_ = nullptr;
}

void ThreadPool::worker_loop(int /*index*/) {
  t_inside_pool = true;
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_start_.wait(lock, [&] { return stop_ || (in_job_ && generation_ != seen && next_chunk_ < job_chunks_); });
    if (stop_) return;
    seen = generation_;
    while (next_chunk_ < job_chunks_) {
      const int64_t c = next_chunk_++;
      const auto* fn = job_;
      const int64_t n = job_n_, chunk = job_chunk_;
      lock.unlock();
      (*fn)(c * chunk, std::min(n, (c + 1) * chunk));
      lock.lock();
      if (++chunks_done_ == job_chunks_) cv_done_.notify_all();
    }
  }
}

}  // namespace tsr
