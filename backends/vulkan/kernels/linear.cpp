// MatMul, Gemm (matmul.comp: 16x16 shared-memory tiles, transposes as strides) and Conv
// (conv2d.comp: direct convolution with groups, strides, dilations and pads; 1-D and 2-D).
#include "backends/device_common/linear.h"
#include "backends/vulkan/kernels/common.h"

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

struct VulkanMatMul {
  static constexpr const char* kName = "Vulkan";
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
};
using MatMulKernel = device_common::MatMulKernel<VulkanMatMul>;

class GemmKernel final : public exec::DeviceKernel {
 public:
  explicit GemmKernel(const exec::KernelInit& init) : attrs_(device_common::gemm_attrs(init.node)) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& a = *ctx.device_input(0);
    const exec::DeviceTensor& b = *ctx.device_input(1);
    const exec::DeviceTensor* c = ctx.device_input(2);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    MatPush p;
    p.M = static_cast<uint32_t>(y->shape[0]);
    p.N = static_cast<uint32_t>(y->shape[1]);
    p.K = static_cast<uint32_t>(attrs_.ta ? a.shape[0] : a.shape[1]);
    p.a_rs = attrs_.ta ? 1 : p.K;
    p.a_cs = attrs_.ta ? p.M : 1;
    p.b_rs = attrs_.tb ? 1 : p.N;
    p.b_cs = attrs_.tb ? p.K : 1;
    p.alpha = attrs_.alpha;
    p.beta = attrs_.beta;
    if (c) {
      p.has_c = 1;
      const Shape& cs = c->shape;
      const int64_t cm = cs.size() == 2 ? cs[0] : 1, cn = cs.empty() ? 1 : cs.back();
      p.c_rs = cm == 1 ? 0 : static_cast<uint32_t>(cn);
      p.c_cs = cn == 1 ? 0 : 1;
    }
    return record_matmul(ctx, a, b, c, *y, p, 1);
  }

 private:
  device_common::GemmAttrs attrs_;
};

bool conv_check(const ir::Node&, const std::vector<ops::ValueType>& in) {
  return (in[0].shape.size() == 3 || in[0].shape.size() == 4) && in[1].has_shape && in[1].shape.size() == in[0].shape.size();
}

class ConvKernel final : public exec::DeviceKernel {
 public:
  explicit ConvKernel(const exec::KernelInit& init) : node_(init.node) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& x = *ctx.device_input(0);
    const exec::DeviceTensor& w = *ctx.device_input(1);
    const exec::DeviceTensor* bias = ctx.device_input(2);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    TSR_ASSIGN_OR_RETURN(const device_common::ConvGeom g, device_common::conv_geometry(ctx, node_, x.shape, w.shape, y->shape));
    struct {
      uint32_t N, C, H, W, M, OH, OW, KH, KW, sh, sw, dh, dw;
      int32_t ph, pw;
      uint32_t group, has_bias;
    } p{static_cast<uint32_t>(g.N),  static_cast<uint32_t>(g.C),  static_cast<uint32_t>(g.H),  static_cast<uint32_t>(g.W),
        static_cast<uint32_t>(g.M),  static_cast<uint32_t>(g.OH), static_cast<uint32_t>(g.OW), static_cast<uint32_t>(g.KH),
        static_cast<uint32_t>(g.KW), static_cast<uint32_t>(g.sh), static_cast<uint32_t>(g.sw), static_cast<uint32_t>(g.dh),
        static_cast<uint32_t>(g.dw), static_cast<int32_t>(g.ph),  static_cast<int32_t>(g.pw),  static_cast<uint32_t>(g.group),
        0};
    p.has_bias = bias ? 1 : 0;
    const exec::DeviceTensor& bb = bias ? *bias : w;
    return vk(ctx).dispatch_1d("conv2d",
                               {VulkanBackend::binding(x), VulkanBackend::binding(w), VulkanBackend::binding(bb),
                                VulkanBackend::binding(*y)},
                               &p, sizeof p, y->numel());
  }

 private:
  const ir::Node& node_;
};

}  // namespace

void register_linear(VkOpTable& t) {
  t["MatMul"] = {0, &device_common::matmul_check, &make_kernel<MatMulKernel>};
  t["Gemm"] = {0, nullptr, &make_kernel<GemmKernel>};
  t["Conv"] = {0, &conv_check, &make_kernel<ConvKernel>};
}

}  // namespace tsr::vulkan
