// ScratchPool<T>: idle scratch objects of re-entrant code, handed out one per concurrent caller.
//
// Plan::run and the control-flow kernels may run on several threads at once (kernel.h), so
// their per-run scratch (value tables, argument vectors, loop frames) cannot be members. Each
// call leases an object for its duration and gives it back, so steady-state calls reuse the
// capacity the previous ones grew and allocate nothing; the pool holds at most as many objects
// as there were concurrent calls. Thread-safe (one mutex held for a pointer move).
#pragma once

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace tsr::exec {

template <typename T>
class ScratchPool {
 public:
  // Owns one leased object until destroyed, then returns it to the pool.
  class Lease {
   public:
    Lease(ScratchPool* pool, std::unique_ptr<T> obj) : pool_(pool), obj_(std::move(obj)) {}
    Lease(Lease&& o) noexcept = default;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (obj_) pool_->give(std::move(obj_));
    }
    T& operator*() const { return *obj_; }
    T* operator->() const { return obj_.get(); }

   private:
    ScratchPool* pool_;
    std::unique_ptr<T> obj_;
  };

  // An idle object, or a new default-constructed one when every object is in use.
  Lease acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        std::unique_ptr<T> obj = std::move(free_.back());
        free_.pop_back();
        return Lease(this, std::move(obj));
      }
    }
    return Lease(this, std::make_unique<T>());
  }

 private:
  void give(std::unique_ptr<T> obj) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(obj));
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<T>> free_;
};

}  // namespace tsr::exec
