#include "backends/vulkan/vk_memory.h"

#include <iterator>

namespace tsr::vulkan {

namespace {
constexpr VkDeviceSize kBlockSize = VkDeviceSize{64} << 20;
VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }
}  // namespace

MemoryPool::MemoryPool(VkPhysicalDevice phys, VkDevice device, VkMemoryPropertyFlags properties, VkDeviceSize alignment)
    : phys_(phys), device_(device), properties_(properties), alignment_(alignment < 16 ? 16 : alignment) {}

MemoryPool::~MemoryPool() {
  for (Block& b : blocks_) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    if (b.mapped) vkUnmapMemory(device_, b.memory);
    vkFreeMemory(device_, b.memory, nullptr);
  }
}

Status MemoryPool::add_block(VkDeviceSize size) {
  Block b;
  b.size = size;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (vkCreateBuffer(device_, &bi, nullptr, &b.buffer) != VK_SUCCESS)
    return resource_error("vulkan: cannot create a buffer of ", size, " bytes");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(phys_, &mp);
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; ++i)
    if ((req.memoryTypeBits >> i & 1u) && (mp.memoryTypes[i].propertyFlags & properties_) == properties_) type = i;
  if (type == UINT32_MAX) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    return resource_error("vulkan: no memory type with properties 0x", properties_);
  }
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  if (vkAllocateMemory(device_, &ai, nullptr, &b.memory) != VK_SUCCESS) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    return resource_error("vulkan: out of device memory allocating a block of ", size, " bytes (",
                          in_use_, " bytes in use)");
  }
  vkBindBufferMemory(device_, b.buffer, b.memory, 0);
  if (properties_ & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    if (vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped) != VK_SUCCESS)
      return resource_error("vulkan: cannot map a staging block");
  }
  b.free[0] = size;
  blocks_.push_back(std::move(b));
  return ok_status();
}

Expected<MemoryRange> MemoryPool::allocate(VkDeviceSize bytes) {
  const VkDeviceSize need = align_up(bytes == 0 ? 1 : bytes, alignment_);
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t bi = 0; bi < blocks_.size(); ++bi) {
      Block& b = blocks_[bi];
      for (auto it = b.free.begin(); it != b.free.end(); ++it) {
        if (it->second < need) continue;
        const VkDeviceSize off = it->first, left = it->second - need;
        b.free.erase(it);
        if (left) b.free[off + need] = left;
        in_use_ += need;
        MemoryRange r;
        r.buffer = b.buffer;
        r.offset = off;
        r.size = need;
        r.block = static_cast<uint32_t>(bi);
        r.mapped = b.mapped ? static_cast<uint8_t*>(b.mapped) + off : nullptr;
        return r;
      }
    }
    if (pass == 0) TSR_RETURN_IF_ERROR(add_block(need > kBlockSize ? need : kBlockSize));
  }
  return internal_error("vulkan: a fresh block did not fit ", need, " bytes");
}

void MemoryPool::free(const MemoryRange& r) {
  Block& b = blocks_[r.block];
  in_use_ -= r.size;
  auto it = b.free.emplace(r.offset, r.size).first;
  auto next = std::next(it);
  if (next != b.free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    b.free.erase(next);
  }
  if (it != b.free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      b.free.erase(it);
    }
  }
}

}  // namespace tsr::vulkan
