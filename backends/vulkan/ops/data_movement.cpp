// Data movement on Vulkan: the ops themselves are written once in device_common/data_movement.h;
// this file supplies Vulkan's primitives: copy_strided.comp, fill.comp, gather.comp, resize.comp.
#include "backends/device_common/data_movement.h"

#include "backends/vulkan/ops/common.h"

namespace tsr::vulkan {

namespace {

struct VulkanDataMovement : VulkanPolicy {
  static constexpr auto copy_strided = &vulkan::copy_strided;
  static Status fill(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& y, float value) {
    struct { uint32_t n; float value; } fp{static_cast<uint32_t>(y.numel()), value};
    return vk(ctx).dispatch_1d("fill", {VulkanBackend::binding(y)}, &fp, sizeof fp, fp.n);
  }
  static Status gather(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& idx,
                       const exec::DeviceTensor& y, const device_common::GatherGeom& g) {
    struct { uint32_t n, axis_len, n_idx, inner; } p{static_cast<uint32_t>(y.numel()), static_cast<uint32_t>(g.axis_len),
                                                      static_cast<uint32_t>(g.n_idx), static_cast<uint32_t>(g.inner)};
    return vk(ctx).dispatch_1d("gather", {VulkanBackend::binding(x), VulkanBackend::binding(idx), VulkanBackend::binding(y)},
                               &p, sizeof p, p.n);
  }
  static Status resize(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& y,
                       const device_common::ResizeGeom& g) {
    struct { uint32_t NC, H, W, OH, OW, mode, coord, nearest; float sh, sw; } p{
        static_cast<uint32_t>(g.NC), static_cast<uint32_t>(g.H),    static_cast<uint32_t>(g.W),
        static_cast<uint32_t>(g.OH), static_cast<uint32_t>(g.OW),   static_cast<uint32_t>(g.mode),
        static_cast<uint32_t>(g.coord), static_cast<uint32_t>(g.nearest), g.sh, g.sw};
    return vk(ctx).dispatch_1d("resize", {VulkanBackend::binding(x), VulkanBackend::binding(y)}, &p, sizeof p, y.numel());
  }
};

}  // namespace

}  // namespace tsr::vulkan

// This backend's instance of the family (declared in device_common/op_table.h).
template <>
void tsr::device_common::register_data_movement<tsr::vulkan::VulkanBackend>(OpTable<vulkan::VulkanBackend>& t) {
  register_data_movement_ops<vulkan::VulkanDataMovement>(t);
}
