// Reductions on Vulkan: Reduce*, Softmax/LogSoftmax, pooling and inference BatchNormalization are
// written once in device_common/reduce.h; this file supplies Vulkan's primitives: reduce.comp,
// softmax.comp, pool2d.comp and channel_affine.comp.
#include "backends/device_common/reduce.h"

#include "backends/vulkan/ops/common.h"

namespace tsr::vulkan {

namespace {

using exec::DeviceKernelContext;
using exec::DeviceTensor;

struct VulkanReduce : VulkanPolicy {
  static Status reduce(DeviceKernelContext& ctx, int32_t op, const DeviceTensor& x, DeviceTensor& y, uint32_t mask) {
    struct { uint32_t n_out, op, rank, mask, shape[6]; } p{};
    p.n_out = static_cast<uint32_t>(y.numel());
    p.op = static_cast<uint32_t>(op);
    p.rank = static_cast<uint32_t>(x.shape.size());
    p.mask = mask;
    for (size_t d = 0; d < x.shape.size(); ++d) p.shape[d] = static_cast<uint32_t>(x.shape[d]);
    return vk(ctx).dispatch_1d("reduce", {VulkanBackend::binding(x), VulkanBackend::binding(y)}, &p, sizeof p, p.n_out, 64);
  }
  static Status softmax(DeviceKernelContext& ctx, const DeviceTensor& x, DeviceTensor& y, int64_t rows, int64_t len,
                        int64_t inner, bool log) {
    struct { uint32_t rows, len, inner, log; } p{static_cast<uint32_t>(rows), static_cast<uint32_t>(len),
                                                  static_cast<uint32_t>(inner), log ? 1u : 0u};
    return vk(ctx).dispatch_1d("softmax", {VulkanBackend::binding(x), VulkanBackend::binding(y)}, &p, sizeof p, p.rows, 64);
  }
  static Status pool(DeviceKernelContext& ctx, const DeviceTensor& x, DeviceTensor& y, const device_common::PoolGeom& g) {
    struct { uint32_t NC, H, W, OH, OW, KH, KW, sh, sw, dh, dw; int32_t ph, pw, peh, pew; uint32_t mode; } p{
        static_cast<uint32_t>(g.NC), static_cast<uint32_t>(g.H),  static_cast<uint32_t>(g.W),  static_cast<uint32_t>(g.OH),
        static_cast<uint32_t>(g.OW), static_cast<uint32_t>(g.KH), static_cast<uint32_t>(g.KW), static_cast<uint32_t>(g.sh),
        static_cast<uint32_t>(g.sw), static_cast<uint32_t>(g.dh), static_cast<uint32_t>(g.dw), static_cast<int32_t>(g.ph),
        static_cast<int32_t>(g.pw),  static_cast<int32_t>(g.peh), static_cast<int32_t>(g.pew), static_cast<uint32_t>(g.mode)};
    return vk(ctx).dispatch_1d("pool2d", {VulkanBackend::binding(x), VulkanBackend::binding(y)}, &p, sizeof p, y.numel());
  }
  static Status channel_affine(DeviceKernelContext& ctx, const DeviceTensor& x, const DeviceTensor& s, const DeviceTensor& b,
                               DeviceTensor& y, int64_t C, int64_t inner) {
    struct { uint32_t n, C, inner; } p{static_cast<uint32_t>(x.numel()), static_cast<uint32_t>(C), static_cast<uint32_t>(inner)};
    return vk(ctx).dispatch_1d(
        "channel_affine",
        {VulkanBackend::binding(x), VulkanBackend::binding(s), VulkanBackend::binding(b), VulkanBackend::binding(y)}, &p,
        sizeof p, p.n);
  }
};

}  // namespace

}  // namespace tsr::vulkan

// This backend's instance of the family (declared in device_common/op_table.h).
template <>
void tsr::device_common::register_reduce<tsr::vulkan::VulkanBackend>(OpTable<vulkan::VulkanBackend>& t) {
  register_reduce_ops<vulkan::VulkanReduce>(t);
}
