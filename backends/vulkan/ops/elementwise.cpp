// Elementwise ops on Vulkan: the family is written once in device_common/elementwise.h; this file
// supplies Vulkan's primitives: unary.comp and binary.comp (no comparisons: they write bool).
#include "backends/device_common/elementwise.h"

#include "backends/vulkan/ops/common.h"

namespace tsr::vulkan {

namespace {

struct VulkanElementwise : VulkanPolicy {
  static constexpr bool kComparisons = false;
  static Status unary(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, exec::DeviceTensor& y,
                      const device_common::UnaryParams& u) {
    struct { uint32_t n, op; float a, b; } p{static_cast<uint32_t>(x.numel()), static_cast<uint32_t>(u.code), u.a, u.b};
    return vk(ctx).dispatch_1d("unary", {VulkanBackend::binding(x), VulkanBackend::binding(y)}, &p, sizeof p, p.n);
  }
  static Status binary(exec::DeviceKernelContext& ctx, device_common::BinaryOp op, const exec::DeviceTensor& a,
                       const exec::DeviceTensor& b, exec::DeviceTensor& y, const Shape& sa, const Shape& sb) {
    struct {
      uint32_t n, op, rank, pad;
      uint32_t shape[6], sa[6], sb[6];
    } p{};
    p.n = static_cast<uint32_t>(y.numel());
    p.op = static_cast<uint32_t>(op);
    p.rank = static_cast<uint32_t>(y.shape.size());
    for (size_t d = 0; d < y.shape.size(); ++d) {
      p.shape[d] = static_cast<uint32_t>(y.shape[d]);
      p.sa[d] = static_cast<uint32_t>(sa[d]);
      p.sb[d] = static_cast<uint32_t>(sb[d]);
    }
    return vk(ctx).dispatch_1d("binary", {VulkanBackend::binding(a), VulkanBackend::binding(b), VulkanBackend::binding(y)},
                               &p, sizeof p, p.n);
  }
};

}  // namespace

}  // namespace tsr::vulkan

// This backend's instance of the family (declared in device_common/op_table.h).
template <>
void tsr::device_common::register_elementwise<tsr::vulkan::VulkanBackend>(OpTable<vulkan::VulkanBackend>& t) {
  register_elementwise_ops<vulkan::VulkanElementwise>(t);
}
