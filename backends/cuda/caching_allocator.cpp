#include "backends/cuda/caching_allocator.h"

namespace tsr::cuda {

size_t CachingAllocator::bin_size(size_t bytes) {
  if (bytes <= 512) return 512;
  size_t p = 512;
  while (p * 2 < bytes) p *= 2;  // p < bytes <= 2p
  const size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

Expected<CachingAllocator::Block> CachingAllocator::allocate(size_t bytes) {
  if (bytes == 0) return invalid_argument("cuda allocator: a request of 0 bytes");
  if (bytes > (size_t{1} << 62)) return resource_error("cuda allocator: a request of ", bytes, " bytes");
  const size_t size = bin_size(bytes);
  auto it = bins_.find(size);
  if (it != bins_.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    in_use_ += size;
    return Block{p, size};
  }
  if (reserved_ + size > cap_) release_cached();
  if (reserved_ + size > cap_)
    return resource_error("cuda: out of memory: ", size, " bytes requested with ", in_use_, " in use, over the cap of ", cap_,
                          " bytes (TSR_CUDA_MEMORY_CAP)");
  void* p = alloc_(size);
  if (!p) {  // the driver may hold what we cached: give it back and try once more
    release_cached();
    p = alloc_(size);
  }
  if (!p) return resource_error("cuda: out of device memory: ", size, " bytes requested with ", in_use_, " in use");
  ++raw_allocs_;
  reserved_ += size;
  in_use_ += size;
  return Block{p, size};
}

void CachingAllocator::deallocate(Block b) {
  if (!b.ptr) return;
  bins_[b.size].push_back(b.ptr);
  in_use_ -= b.size;
}

void CachingAllocator::release_cached() {
  for (auto& [size, ptrs] : bins_) {
    for (void* p : ptrs) free_(p);
    reserved_ -= size * ptrs.size();
    ptrs.clear();
  }
}

}  // namespace tsr::cuda
