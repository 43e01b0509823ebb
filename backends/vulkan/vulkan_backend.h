// The Vulkan compute backend (DESIGN.md §9): a device backend on the contract of
// core/exec/device.h. f32 tensors live in device memory (vk_memory.h), kernels are GLSL compute
// shaders compiled to SPIR-V by glslc at build time and recorded into one command buffer per
// placed segment (vk_context.h).
//
// Layout, the same in every device backend: ops/<family>.cpp is host code (one file per op
// family: elementwise, linear, data_movement, reduce; most of each family is written once in
// backends/device_common/<family>.h), shaders/*.comp is device code. Each op names the inputs it
// reads on the host (shapes, axes, scales, BatchNormalization statistics) and may add a shape
// check that placement runs on the load-time types. Ops, dtypes and attributes outside the table
// stay on the CPU (see README.md, "Backends").
//
// Thread safety: one Session at a time.
#pragma once

#include <memory>
#include <string>

#include "backends/device_common/device_base.h"
#include "backends/vulkan/vk_context.h"
#include "core/exec/device.h"

namespace tsr::vulkan {

class VulkanBackend final : public device_common::TableBackend<VulkanBackend> {
  static_assert(exec::DeviceBackend::kApiVersion == 2, "written against the version 2 contract");

 public:
  // kBackend "no Vulkan device ..." when the machine has none.
  static Expected<std::unique_ptr<VulkanBackend>> create();
  // The op table (ops/*.cpp). Needs no device: placement and the table's self-check
  // (device_common::check_op_table, run by the device tests) work on any machine.
  static const device_common::OpTable<VulkanBackend>& op_table();

  std::string_view name() const override { return "vulkan"; }
  Expected<std::shared_ptr<exec::DeviceBuffer>> allocate(size_t bytes) override;
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

 private:
  VulkanBackend() : TableBackend(op_table()) {}
  Status write(const exec::DeviceTensor& dst, const void* src, size_t n) override;
  Status read(const exec::DeviceTensor& src, void* dst, size_t n) override;
  Status copy_bytes(const exec::DeviceTensor& src, const exec::DeviceTensor& dst, size_t n) override;

  std::unique_ptr<VkContext> ctx_;
};

}  // namespace tsr::vulkan
