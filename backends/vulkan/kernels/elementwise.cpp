// Elementwise Vulkan kernels: unary activations (unary.comp), broadcasting binary ops
// (binary.comp) and the ops that are views (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// Dropout at inference): a view shares its input's buffer with the inferred shape.
#include "backends/device_common/elementwise.h"
#include "backends/vulkan/kernels/common.h"

namespace tsr::vulkan {

namespace {

using device_common::unary_ops;

struct VulkanUnary {
  static Status unary(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, exec::DeviceTensor& y,
                      const device_common::UnaryParams& u) {
    struct { uint32_t n, op; float a, b; } p{static_cast<uint32_t>(x.numel()), static_cast<uint32_t>(u.code), u.a, u.b};
    return vk(ctx).dispatch_1d("unary", {VulkanBackend::binding(x), VulkanBackend::binding(y)}, &p, sizeof p, p.n);
  }
};
using UnaryKernel = device_common::UnaryKernel<VulkanUnary>;

const std::map<std::string, uint32_t, std::less<>>& binary_ops() {
  static const std::map<std::string, uint32_t, std::less<>> k = {
      {"Add", 0}, {"Sub", 1}, {"Mul", 2}, {"Div", 3}, {"Pow", 4}, {"Max", 5}, {"Min", 6}, {"PRelu", 7}};
  return k;
}

class BinaryKernel final : public exec::DeviceKernel {
 public:
  explicit BinaryKernel(const exec::KernelInit& init) : op_(binary_ops().at(init.node.op)) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& a = *ctx.device_input(0);
    const exec::DeviceTensor& b = *ctx.device_input(1);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    const Shape& out = y->shape;
    if (out.size() > 6) return ctx.error("rank ", out.size(), " exceeds the Vulkan kernel's 6");
    struct {
      uint32_t n, op, rank, pad;
      uint32_t shape[6], sa[6], sb[6];
    } p{};
    p.n = static_cast<uint32_t>(y->numel());
    p.op = op_;
    p.rank = static_cast<uint32_t>(out.size());
    auto fill = [&](const exec::DeviceTensor& t, uint32_t* s) {
      const std::vector<int64_t> st = dense_strides(t.shape);
      const size_t lead = out.size() - t.shape.size();
      for (size_t d = 0; d < out.size(); ++d) {
        if (d < lead) { s[d] = 0; continue; }
        const size_t td = d - lead;
        s[d] = t.shape[td] == 1 ? 0 : static_cast<uint32_t>(st[td]);
      }
    };
    for (size_t d = 0; d < out.size(); ++d) p.shape[d] = static_cast<uint32_t>(out[d]);
    fill(a, p.sa);
    fill(b, p.sb);
    return vk(ctx).dispatch_1d("binary", {VulkanBackend::binding(a), VulkanBackend::binding(b), VulkanBackend::binding(*y)},
                               &p, sizeof p, p.n);
  }

 private:
  uint32_t op_;
};

}  // namespace

void register_elementwise(VkOpTable& t) {
  for (const auto& kv : unary_ops()) t[kv.first] = {0, nullptr, &make_kernel<UnaryKernel>};
  t["Clip"].host_inputs = 0b110;
  t["Gelu"].check = &device_common::gelu_check;
  for (const auto& kv : binary_ops()) t[kv.first] = {0, &device_common::binary_check, &make_kernel<BinaryKernel>};
  device_common::register_view_ops<VulkanBackend>(table_adder(t));
}

}  // namespace tsr::vulkan
