#include "backends/vulkan/vulkan_backend.h"

#include <algorithm>
#include <cstring>

namespace tsr::device_common {
TSR_DEVICE_FAMILIES(vulkan::VulkanBackend)
}  // namespace tsr::device_common

namespace tsr::vulkan {

namespace {

class VkDeviceBuffer final : public exec::DeviceBuffer {
 public:
  VkDeviceBuffer(MemoryPool& pool, MemoryRange r) : pool_(pool), range_(r) {}
  ~VkDeviceBuffer() override { pool_.free(range_); }
  size_t size() const override { return static_cast<size_t>(range_.size); }
  const MemoryRange& range() const { return range_; }

 private:
  MemoryPool& pool_;
  MemoryRange range_;
};

}  // namespace

Expected<std::unique_ptr<VulkanBackend>> VulkanBackend::create() {
  auto b = std::unique_ptr<VulkanBackend>(new VulkanBackend());
  TSR_ASSIGN_OR_RETURN(b->ctx_, VkContext::create());
  return b;
}

const device_common::OpTable<VulkanBackend>& VulkanBackend::op_table() {
  static const auto table = device_common::make_op_table<VulkanBackend>("Vulkan");
  return table;
}

Expected<std::shared_ptr<exec::DeviceBuffer>> VulkanBackend::allocate(size_t bytes) {
  TSR_ASSIGN_OR_RETURN(MemoryRange r, ctx_->memory().allocate(bytes));
  return std::shared_ptr<exec::DeviceBuffer>(new VkDeviceBuffer(ctx_->memory(), r));
}

Binding VulkanBackend::binding(const exec::DeviceTensor& t) {
  const MemoryRange& r = static_cast<const VkDeviceBuffer*>(t.buffer.get())->range();
  const VkDeviceSize bytes = std::max<VkDeviceSize>(t.nbytes(), 4);
  return {r.buffer, r.offset + t.byte_offset, bytes};
}

Status VulkanBackend::write(const exec::DeviceTensor& dst, const void* src, size_t n) {
  return ctx_->upload(src, n, binding(dst));
}

Status VulkanBackend::read(const exec::DeviceTensor& src, void* dst, size_t n) {
  return ctx_->download(binding(src), dst, n);
}

Status VulkanBackend::copy_bytes(const exec::DeviceTensor& src, const exec::DeviceTensor& dst, size_t n) {
  return ctx_->copy(binding(src), binding(dst), n);
}

Status VulkanBackend::dispatch_1d(const std::string& shader, const std::vector<Binding>& bindings, const void* push,
                                  size_t push_bytes, uint64_t n, uint32_t local) {
  if (n == 0) return ok_status();
  if (n > 0xFFFFFFFFull) return unsupported("vulkan: ", shader, ": ", n, " elements exceed the 32-bit index range");
  const uint64_t groups = (n + local - 1) / local;
  const uint64_t gx = std::min<uint64_t>(groups, 65535);
  const uint64_t gy = (groups + gx - 1) / gx;
  return ctx_->dispatch(shader, bindings, push, push_bytes, static_cast<uint32_t>(gx), static_cast<uint32_t>(gy));
}

}  // namespace tsr::vulkan
