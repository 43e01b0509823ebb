// Typed views of kernel scratch memory (KernelContext::scratch, core/exec/scratch_arena.h).
//
// Scratch<T>::make(ctx, n): n uninitialized elements of a trivially copyable T, valid until the
// kernel returns. A std::vector would call operator new on every run; this memory comes from the
// run's ScratchArena, so a steady-state run allocates nothing (issue 12).
//
// SlotScratch<T> is the per-chunk form for ThreadPool::parallel_for_slots: one buffer per slot,
// taken by the caller before the call. (A thread_local buffer grown inside the chunk would grow
// whenever a thread first takes a large chunk, which varies from run to run with the threads'
// timing.)
//
// grow_scratch: the older per-thread form (thread_local vectors grown to what a call needs, never
// shrunk): steady-state runs on one thread reuse it, but a pool worker grows its own whenever it
// first takes a larger chunk, so a run can still allocate there; prefer the two above.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/exec/kernel.h"

namespace tsr::cpu {

template <typename T>
class Scratch {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= exec::ScratchArena::kAlign);

 public:
  Scratch() = default;
  static Expected<Scratch> make(exec::KernelContext& ctx, size_t n) {
    TSR_ASSIGN_OR_RETURN(void* p, ctx.scratch(n * sizeof(T)));
    return Scratch(static_cast<T*>(p), n);
  }
  // The same, every element set to `value`.
  static Expected<Scratch> filled(exec::KernelContext& ctx, size_t n, T value) {
    TSR_ASSIGN_OR_RETURN(Scratch s, make(ctx, n));
    for (size_t i = 0; i < n; ++i) s[i] = value;
    return s;
  }

  T* data() const { return p_; }
  size_t size() const { return n_; }
  T& operator[](size_t i) const { return p_[i]; }
  T* begin() const { return p_; }
  T* end() const { return p_ + n_; }

 private:
  Scratch(T* p, size_t n) : p_(p), n_(n) {}
  T* p_ = nullptr;
  size_t n_ = 0;
};

template <typename T>
class SlotScratch {
 public:
  // `per_slot` elements for each slot a parallel_for_slots call on ctx.pool() can use: all of
  // them when `parallel`, else (the call runs inline, or is not made) one.
  static Expected<SlotScratch> make(exec::KernelContext& ctx, size_t per_slot, bool parallel = true) {
    // Each slot's buffer starts on a 64-byte boundary (no false sharing between threads).
    const size_t stride = (per_slot * sizeof(T) + 63) / 64 * 64 / sizeof(T);
    const size_t slots = parallel && !ThreadPool::inside_task() ? static_cast<size_t>(ctx.pool().num_threads()) : 1;
    TSR_ASSIGN_OR_RETURN(Scratch<T> buf, Scratch<T>::make(ctx, stride * slots));
    return SlotScratch(buf.data(), stride);
  }
  T* slot(int s) const { return p_ + static_cast<size_t>(s) * stride_; }

 private:
  SlotScratch(T* p, size_t stride) : p_(p), stride_(stride) {}
  T* p_;
  size_t stride_;
};

template <typename T>
T* grow_scratch(std::vector<T>& buf, int64_t n) {
  if (buf.size() < static_cast<size_t>(n)) buf.resize(static_cast<size_t>(n));
  return buf.data();
}

}  // namespace tsr::cpu
