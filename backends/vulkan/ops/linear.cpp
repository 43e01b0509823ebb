// MatMul, Gemm (matmul.comp: 16x16 shared-memory tiles, transposes as strides) and Conv
// (conv2d.comp: direct convolution with groups, strides, dilations and pads; 1-D and 2-D).
#include "backends/device_common/linear.h"
#include "backends/vulkan/ops/common.h"

namespace tsr::vulkan {

namespace {

struct MatPush {
  uint32_t M = 0, N = 0, K = 0, has_c = 0;
  uint32_t a_bs = 0, a_rs = 0, a_cs = 0;
  uint32_t b_bs = 0, b_rs = 0, b_cs = 0;
  uint32_t c_rs = 0, c_cs = 0;
  float alpha = 1, beta = 0;
};

Status record_matmul(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& a, const exec::DeviceTensor& b,
                     const exec::DeviceTensor* c, const exec::DeviceTensor& y, MatPush p, uint32_t batch) {
  if (batch > 65535) return ctx.error("batch of ", batch, " matrices exceeds the Vulkan grid");
  const exec::DeviceTensor& cc = c ? *c : y;  // an unused binding still needs a buffer
  const uint32_t gx = (p.N + 15) / 16, gy = (p.M + 15) / 16;
  return vk(ctx).context().dispatch("matmul",
                                    {VulkanBackend::binding(a), VulkanBackend::binding(b), VulkanBackend::binding(cc),
                                     VulkanBackend::binding(y)},
                                    &p, sizeof p, gx, gy, batch);
}

struct VulkanLinear : VulkanPolicy {
  static Status matmul(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& a, const exec::DeviceTensor& b,
                       exec::DeviceTensor& y, const device_common::MatMulGeom& g) {
    MatPush p;
    p.M = static_cast<uint32_t>(g.M);
    p.K = static_cast<uint32_t>(g.K);
    p.N = static_cast<uint32_t>(g.N);
    p.a_bs = static_cast<uint32_t>(g.sa);
    p.a_rs = p.K;
    p.a_cs = 1;
    p.b_bs = static_cast<uint32_t>(g.sb);
    p.b_rs = p.N;
    p.b_cs = 1;
    return record_matmul(ctx, a, b, nullptr, y, p, static_cast<uint32_t>(g.batch));
  }
  static Status gemm(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& a, const exec::DeviceTensor& b,
                     const exec::DeviceTensor* c, exec::DeviceTensor& y, const device_common::GemmGeom& g) {
    MatPush p;
    p.M = static_cast<uint32_t>(g.M);
    p.N = static_cast<uint32_t>(g.N);
    p.K = static_cast<uint32_t>(g.K);
    // op(A)[m, k] at m * a_rs + k * a_cs (likewise B): a transpose swaps the strides.
    p.a_rs = static_cast<uint32_t>(g.ta ? 1 : g.lda);
    p.a_cs = static_cast<uint32_t>(g.ta ? g.lda : 1);
    p.b_rs = static_cast<uint32_t>(g.tb ? 1 : g.ldb);
    p.b_cs = static_cast<uint32_t>(g.tb ? g.ldb : 1);
    p.alpha = g.alpha;
    p.beta = g.beta;
    p.has_c = c ? 1 : 0;
    p.c_rs = static_cast<uint32_t>(g.c_rs);
    p.c_cs = static_cast<uint32_t>(g.c_cs);
    return record_matmul(ctx, a, b, c, y, p, 1);
  }
  static Status conv(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& w,
                     const exec::DeviceTensor* bias, exec::DeviceTensor& y, const device_common::ConvGeom& g) {
    struct {
      uint32_t N, C, H, W, M, OH, OW, KH, KW, sh, sw, dh, dw;
      int32_t ph, pw;
      uint32_t group, has_bias;
    } p{static_cast<uint32_t>(g.N),  static_cast<uint32_t>(g.C),  static_cast<uint32_t>(g.H),  static_cast<uint32_t>(g.W),
        static_cast<uint32_t>(g.M),  static_cast<uint32_t>(g.OH), static_cast<uint32_t>(g.OW), static_cast<uint32_t>(g.KH),
        static_cast<uint32_t>(g.KW), static_cast<uint32_t>(g.sh), static_cast<uint32_t>(g.sw), static_cast<uint32_t>(g.dh),
        static_cast<uint32_t>(g.dw), static_cast<int32_t>(g.ph),  static_cast<int32_t>(g.pw),  static_cast<uint32_t>(g.group),
        bias ? 1u : 0u};
    const exec::DeviceTensor& bb = bias ? *bias : w;  // an unused binding still needs a buffer
    return vk(ctx).dispatch_1d("conv2d",
                               {VulkanBackend::binding(x), VulkanBackend::binding(w), VulkanBackend::binding(bb),
                                VulkanBackend::binding(y)},
                               &p, sizeof p, y.numel());
  }
};

}  // namespace

}  // namespace tsr::vulkan

// This backend's instance of the family (declared in device_common/op_table.h).
template <>
void tsr::device_common::register_linear<tsr::vulkan::VulkanBackend>(OpTable<vulkan::VulkanBackend>& t) {
  register_linear_ops<vulkan::VulkanLinear>(t);
}
