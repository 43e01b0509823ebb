// Sub-allocating device memory allocator for the Vulkan backend.
//
// Memory is taken from the driver in large blocks (64 MiB, or one dedicated block for a larger
// request), each bound to one VkBuffer covering the whole block; allocations are byte ranges of a
// block (first fit over a sorted free list, neighbours coalesced on free). Kernels bind
// (block buffer, offset, range), so one allocation costs no driver call. Offsets are aligned to
// the device's minStorageBufferOffsetAlignment (and 16 bytes). Blocks are kept until the pool is
// destroyed (after the device is idle).
//
// Thread safety: none (one Session drives a backend at a time).
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/base/status.h"

namespace tsr::vulkan {

struct MemoryRange {
  VkBuffer buffer = VK_NULL_HANDLE;  // the block's buffer
  VkDeviceSize offset = 0, size = 0;
  void* mapped = nullptr;  // host pointer to `offset` for host-visible pools, else null
  uint32_t block = 0;
};

class MemoryPool {
 public:
  // `properties` selects the memory type (DEVICE_LOCAL for tensors, HOST_VISIBLE|HOST_COHERENT
  // for staging); host-visible blocks stay mapped.
  MemoryPool(VkPhysicalDevice phys, VkDevice device, VkMemoryPropertyFlags properties, VkDeviceSize alignment);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  Expected<MemoryRange> allocate(VkDeviceSize bytes);
  void free(const MemoryRange& r);
  VkDeviceSize bytes_in_use() const { return in_use_; }
  size_t blocks() const { return blocks_.size(); }

 private:
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    void* mapped = nullptr;
    std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size
  };
  Status add_block(VkDeviceSize size);

  VkPhysicalDevice phys_;
  VkDevice device_;
  VkMemoryPropertyFlags properties_;
  VkDeviceSize alignment_;
  std::vector<Block> blocks_;
  VkDeviceSize in_use_ = 0;
};

}  // namespace tsr::vulkan
