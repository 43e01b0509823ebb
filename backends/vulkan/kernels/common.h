// Helpers shared by the Vulkan kernel families (not part of the backend's interface).
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/device_common/host_inputs.h"
#include "backends/vulkan/vulkan_backend.h"

namespace tsr::vulkan {

// The device-independent helpers, shared with the other device backends.
using device_common::dense_strides;
using device_common::host_ints;
using device_common::host_scalar;
using device_common::make_kernel;
using device_common::norm_axis;
using device_common::numel_of;

// The add(name, host_inputs, check, factory) callback of device_common's register_*_ops.
inline auto table_adder(VkOpTable& t) {
  return [&t](const char* name, uint32_t host, auto check, auto create) { t[name] = {host, check, create}; };
}

inline VulkanBackend& vk(exec::DeviceKernelContext& ctx) { return static_cast<VulkanBackend&>(ctx.backend()); }

// Push constants of copy_strided.comp.
struct CopyPush {
  uint32_t n = 0, rank = 0;
  int32_t io = 0, oo = 0;
  uint32_t shape[6] = {};
  int32_t is[6] = {};
  int32_t os[6] = {};
};

// Records y[window] = x[window] over `shape` with element strides / offsets (rank <= 6).
inline Status copy_strided(VulkanBackend& b, const exec::DeviceTensor& x, const exec::DeviceTensor& y, const Shape& shape,
                           const std::vector<int64_t>& is, int64_t io, const std::vector<int64_t>& os, int64_t oo) {
  if (shape.size() > 6) return unsupported("vulkan: copy of rank ", shape.size(), " (at most 6)");
  CopyPush p;
  p.n = static_cast<uint32_t>(numel_of(shape));
  p.rank = static_cast<uint32_t>(shape.size());
  p.io = static_cast<int32_t>(io);
  p.oo = static_cast<int32_t>(oo);
  for (size_t d = 0; d < shape.size(); ++d) {
    p.shape[d] = static_cast<uint32_t>(shape[d]);
    p.is[d] = static_cast<int32_t>(is[d]);
    p.os[d] = static_cast<int32_t>(os[d]);
  }
  return b.dispatch_1d("copy_strided", {VulkanBackend::binding(x), VulkanBackend::binding(y)}, &p, sizeof p, p.n);
}

}  // namespace tsr::vulkan
