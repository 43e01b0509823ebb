// Helpers shared by the Vulkan op families (host code; not part of the backend's interface).
#pragma once

#include <vector>

#include "backends/device_common/host_inputs.h"
#include "backends/device_common/op_table.h"
#include "backends/vulkan/vulkan_backend.h"

namespace tsr::vulkan {

using device_common::make_kernel;

// The base of this backend's policy classes (the P of device_common's family templates).
struct VulkanPolicy {
  using Backend = VulkanBackend;
  static constexpr const char* kName = "Vulkan";
};

inline VulkanBackend& vk(exec::DeviceKernelContext& ctx) { return static_cast<VulkanBackend&>(ctx.backend()); }

// Push constants of copy_strided.comp.
struct CopyPush {
  uint32_t n = 0, rank = 0;
  int32_t io = 0, oo = 0;
  uint32_t shape[6] = {};
  int32_t is[6] = {};
  int32_t os[6] = {};
};

// Records y[oo + i . os] = x[io + i . is] for every index i of `shape` (rank <= 6).
inline Status copy_strided(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& y,
                           const Shape& shape, const Shape& is, int64_t io, const Shape& os, int64_t oo) {
  if (shape.size() > 6) return unsupported(ctx.place(), ": copy of rank ", shape.size(), " (at most 6)");
  CopyPush p;
  p.n = static_cast<uint32_t>(shape_numel(shape));
  p.rank = static_cast<uint32_t>(shape.size());
  p.io = static_cast<int32_t>(io);
  p.oo = static_cast<int32_t>(oo);
  for (size_t d = 0; d < shape.size(); ++d) {
    p.shape[d] = static_cast<uint32_t>(shape[d]);
    p.is[d] = static_cast<int32_t>(is[d]);
    p.os[d] = static_cast<int32_t>(os[d]);
  }
  return vk(ctx).dispatch_1d("copy_strided", {VulkanBackend::binding(x), VulkanBackend::binding(y)}, &p, sizeof p, p.n);
}

}  // namespace tsr::vulkan
