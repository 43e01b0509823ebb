#include "backends/vulkan/vulkan_backend.h"

#include <algorithm>
#include <cstring>

#include "backends/device_common/support.h"

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
  register_elementwise(b->ops_);
  register_linear(b->ops_);
  register_data_movement(b->ops_);
  register_reduce(b->ops_);
  return b;
}

std::vector<DType> VulkanBackend::kernel_dtypes(std::string_view op) const {
  return ops_.count(op) ? std::vector<DType>{DType::kF32} : std::vector<DType>{};
}

exec::DeviceSupport VulkanBackend::device_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const {
  auto it = ops_.find(node.op);
  if (it == ops_.end() || node.inputs.size() > 32) return {};
  const VkOpDef& def = it->second;
  return device_common::table_support(node, inputs, def.host_inputs, 0, def.check);
}

Expected<std::unique_ptr<exec::DeviceKernel>> VulkanBackend::create_device_kernel(const exec::KernelInit& init) {
  auto it = ops_.find(init.node.op);
  if (it == ops_.end()) return unsupported(init.place, ": no Vulkan kernel for ", init.node.op);
  return it->second.create(*this, init);
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

Expected<exec::DeviceTensor> VulkanBackend::upload(const Tensor& src) {
  if (src.kind() != ValueKind::kTensor) return unsupported("vulkan: only tensors can be uploaded");
  exec::DeviceTensor d;
  d.dtype = src.dtype();
  d.shape = src.shape();
  TSR_ASSIGN_OR_RETURN(d.buffer, allocate(std::max<size_t>(src.nbytes(), 4)));
  TSR_RETURN_IF_ERROR(ctx_->upload(src.raw(), src.nbytes(), binding(d)));
  return d;
}

Expected<Tensor> VulkanBackend::download(const exec::DeviceTensor& src) {
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(src.dtype, src.shape));
  TSR_RETURN_IF_ERROR(ctx_->download(binding(src), t.raw_mut(), t.nbytes()));
  return t;
}

Expected<exec::DeviceTensor> VulkanBackend::copy(const exec::DeviceTensor& src) {
  exec::DeviceTensor d = src;
  d.byte_offset = 0;
  TSR_ASSIGN_OR_RETURN(d.buffer, allocate(std::max<size_t>(src.nbytes(), 4)));
  TSR_RETURN_IF_ERROR(ctx_->copy(binding(src), binding(d), src.nbytes()));
  return d;
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
