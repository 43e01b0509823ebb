// The CUDA backend's caching allocator: device blocks are rounded up to a size class (bin) and,
// when freed, kept in their bin for the next request of that class instead of going back to the
// driver. This is safe without any synchronization because of the device contract's ordering rule
// (core/exec/device.h): the backend has one stream, so a block freed after its last recorded use
// is next used by work recorded, and therefore run, later.
//
// Memory cap: reserved bytes (in use + cached) never exceed `cap`. A request that would exceed it
// first returns every cached block to the driver (the raw free, cudaFree, waits for the device, so
// no pending kernel still uses them), then fails with kResource naming the sizes.
//
// The raw allocation functions are parameters so that the bin logic runs in host tests with
// malloc. Thread safety: none; one Session (one thread at a time) owns the backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "core/base/status.h"

namespace tsr::cuda {

class CachingAllocator {
 public:
  using RawAlloc = std::function<void*(size_t)>;  // nullptr when out of memory
  using RawFree = std::function<void(void*)>;

  CachingAllocator(RawAlloc alloc, RawFree free, size_t cap) : alloc_(std::move(alloc)), free_(std::move(free)), cap_(cap) {}
  ~CachingAllocator() { release_cached(); }
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // The size class of a request: at least 512 bytes, then steps of a quarter of the power of two
  // below the size (at most 25% over the request; every class a multiple of 128 bytes).
  static size_t bin_size(size_t bytes);

  struct Block {
    void* ptr = nullptr;
    size_t size = 0;  // the bin size (what deallocate() takes back)
  };
  // A block of at least `bytes` (> 0). kResource past the cap or when the driver has no memory.
  Expected<Block> allocate(size_t bytes);
  // Returns a block from allocate() to its bin.
  void deallocate(Block b);
  // Gives every cached (free) block back to the driver.
  void release_cached();

  size_t cap() const { return cap_; }
  size_t reserved() const { return reserved_; }  // in use + cached
  size_t in_use() const { return in_use_; }
  size_t cached() const { return reserved_ - in_use_; }
  uint64_t raw_allocations() const { return raw_allocs_; }  // driver calls so far (tests, profiling)

 private:
  RawAlloc alloc_;
  RawFree free_;
  size_t cap_;
  size_t reserved_ = 0, in_use_ = 0;
  uint64_t raw_allocs_ = 0;
  std::map<size_t, std::vector<void*>> bins_;
};

}  // namespace tsr::cuda
