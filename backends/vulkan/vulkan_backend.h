// The Vulkan compute backend (DESIGN.md §9): a device backend on the contract of
// core/exec/device.h. f32 tensors live in device memory (vk_memory.h), kernels are GLSL compute
// shaders compiled to SPIR-V by glslc at build time (shaders/*.comp) and recorded into one
// command buffer per placed segment (vk_context.h).
//
// Kernel families register in backends/vulkan/kernels/*.cpp: each op names the inputs it reads on
// the host (shapes, axes, scales, BatchNormalization statistics) and may add a shape check that
// placement runs on the load-time types. Ops, dtypes and attributes outside that set stay on the
// CPU (see README.md, "Backends").
//
// Thread safety: one Session at a time.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "backends/vulkan/vk_context.h"
#include "core/exec/device.h"

namespace tsr::vulkan {

class VulkanBackend;

struct VkOpDef {
  uint32_t host_inputs = 0;
  // Extra placement check on the node and its load-time input types (null: none).
  bool (*check)(const ir::Node&, const std::vector<ops::ValueType>&) = nullptr;
  Expected<std::unique_ptr<exec::DeviceKernel>> (*create)(VulkanBackend&, const exec::KernelInit&) = nullptr;
};
using VkOpTable = std::map<std::string, VkOpDef, std::less<>>;

// The op families (backends/vulkan/kernels/): each adds its ops to the table; a duplicate name
// is a programming error caught by the backend's self-check in tests.
void register_elementwise(VkOpTable& t);
void register_linear(VkOpTable& t);
void register_data_movement(VkOpTable& t);
void register_reduce(VkOpTable& t);

class VulkanBackend final : public exec::DeviceBackend {
  static_assert(exec::DeviceBackend::kApiVersion == 2, "written against the version 2 contract");

 public:
  // kBackend "no Vulkan device ..." when the machine has none.
  static Expected<std::unique_ptr<VulkanBackend>> create();

  std::string_view name() const override { return "vulkan"; }
  std::vector<DType> kernel_dtypes(std::string_view op) const override;
  exec::DeviceSupport device_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const override;
  Expected<std::unique_ptr<exec::DeviceKernel>> create_device_kernel(const exec::KernelInit& init) override;
  Expected<std::shared_ptr<exec::DeviceBuffer>> allocate(size_t bytes) override;
  Expected<exec::DeviceTensor> upload(const Tensor& src) override;
  Expected<Tensor> download(const exec::DeviceTensor& src) override;
  Expected<exec::DeviceTensor> copy(const exec::DeviceTensor& src) override;
  // One command buffer is in flight at a time, so flush() submits and waits like synchronize().
  Status flush() override { return ctx_->synchronize(); }
  Status synchronize() override { return ctx_->synchronize(); }

  VkContext& context() { return *ctx_; }
  const std::string& device_name() const { return ctx_->device_name(); }
  // Storage-buffer binding of a device tensor.
  static Binding binding(const exec::DeviceTensor& t);
  // Records a 1-D dispatch of `n` threads in groups of `local` (a 2-D grid past 65535 groups;
  // shaders rebuild the linear index from gl_NumWorkGroups).
  Status dispatch_1d(const std::string& shader, const std::vector<Binding>& bindings, const void* push,
                     size_t push_bytes, uint64_t n, uint32_t local = 256);
  const VkOpTable& ops() const { return ops_; }

 private:
  VulkanBackend() = default;
  std::unique_ptr<VkContext> ctx_;
  VkOpTable ops_;
};

}  // namespace tsr::vulkan
