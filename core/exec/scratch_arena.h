// ScratchArena: temporary memory for kernel calls (KernelContext::scratch).
//
// A bump allocator over a chain of blocks taken with Tensor::empty_fresh (charged to the
// session's budget; fresh blocks, so that growing an arena never takes a recycled block that a
// later run's tensors expect). reset() after each call releases everything at once. A request
// that does not fit the current block moves on to the next block of the chain, or appends a new
// one at least twice the last, so the chain stays short and stops growing once it holds the
// largest call. The executor keeps one arena per run slot (the RunState, and each task of an
// inter-op wave), so the requests an arena sees repeat exactly from run to run whatever thread
// runs a node, and a steady-state run allocates nothing (issue 12), where kernels that grew
// per-thread buffers or took blocks from the shared cache concurrently allocated whenever the
// threads' timing changed.
//
// Not thread-safe: one arena serves one kernel call at a time (a kernel hands its slots of a
// parallel_for_slots call separate pieces of one request).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/tensor/tensor.h"

namespace tsr::exec {

class ScratchArena {
 public:
  static constexpr size_t kAlign = 64;

  // `bytes` (rounded up to kAlign), kAlign-aligned, uninitialized, valid until reset(). Errors:
  // kResource from Tensor::empty_fresh (memory budget, out of memory).
  Expected<void*> allocate(size_t bytes) {
    bytes = (bytes + kAlign - 1) / kAlign * kAlign;
    for (; current_ < blocks_.size(); ++current_, used_ = 0) {
      Tensor& b = blocks_[current_];
      if (used_ + bytes <= b.nbytes()) {
        void* p = static_cast<char*>(b.raw_mut()) + used_;
        used_ += bytes;
        return p;
      }
    }
    const size_t last = blocks_.empty() ? 0 : blocks_.back().nbytes();
    TSR_ASSIGN_OR_RETURN(Tensor block,
                         Tensor::empty_fresh(DType::kU8, Shape{static_cast<int64_t>(std::max(bytes, 2 * last))}));
    blocks_.push_back(std::move(block));
    current_ = blocks_.size() - 1;
    used_ = bytes;
    return blocks_.back().raw_mut();
  }

  // Ends a call: everything allocated since the last reset is free again.
  void reset() {
    current_ = 0;
    used_ = 0;
  }

  // Bytes held (for tests).
  size_t capacity() const {
    size_t total = 0;
    for (const Tensor& b : blocks_) total += b.nbytes();
    return total;
  }

 private:
  std::vector<Tensor> blocks_;
  size_t current_ = 0;  // the block being filled
  size_t used_ = 0;     // bytes used in blocks_[current_]
};

}  // namespace tsr::exec
