// Elementwise Vulkan kernels: unary activations (unary.comp), broadcasting binary ops
// (binary.comp) and the ops that are views (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// Dropout at inference): a view shares its input's buffer with the inferred shape.
#include <cfloat>

#include "backends/device_common/elementwise.h"
#include "backends/vulkan/kernels/common.h"

namespace tsr::vulkan {

namespace {

struct UnaryInfo {
  uint32_t code;
  const char* alpha_attr;
  float alpha;
  const char* beta_attr;
  float beta;
};

const std::map<std::string, UnaryInfo, std::less<>>& unary_ops() {
  static const std::map<std::string, UnaryInfo, std::less<>> k = {
      {"Relu", {0, nullptr, 0, nullptr, 0}},         {"Sigmoid", {1, nullptr, 0, nullptr, 0}},
      {"Tanh", {2, nullptr, 0, nullptr, 0}},         {"Exp", {3, nullptr, 0, nullptr, 0}},
      {"Log", {4, nullptr, 0, nullptr, 0}},          {"Sqrt", {5, nullptr, 0, nullptr, 0}},
      {"Abs", {6, nullptr, 0, nullptr, 0}},          {"Neg", {7, nullptr, 0, nullptr, 0}},
      {"Reciprocal", {8, nullptr, 0, nullptr, 0}},   {"HardSigmoid", {9, "alpha", 0.2f, "beta", 0.5f}},
      {"HardSwish", {10, nullptr, 0, nullptr, 0}},   {"LeakyRelu", {11, "alpha", 0.01f, nullptr, 0}},
      {"Clip", {12, "min", -FLT_MAX, "max", FLT_MAX}}, {"Erf", {13, nullptr, 0, nullptr, 0}},
      {"Floor", {14, nullptr, 0, nullptr, 0}},       {"Ceil", {15, nullptr, 0, nullptr, 0}},
      {"Softplus", {17, nullptr, 0, nullptr, 0}},    {"Elu", {18, "alpha", 1.0f, nullptr, 0}},
      {"Sin", {19, nullptr, 0, nullptr, 0}},         {"Cos", {20, nullptr, 0, nullptr, 0}},
      {"Round", {21, nullptr, 0, nullptr, 0}},       {"Sign", {22, nullptr, 0, nullptr, 0}},
      {"Gelu", {23, nullptr, 0, nullptr, 0}},        {"Softsign", {24, nullptr, 0, nullptr, 0}},
  };
  return k;
}

class UnaryKernel final : public exec::DeviceKernel {
 public:
  explicit UnaryKernel(const exec::KernelInit& init) {
    const UnaryInfo& u = unary_ops().at(init.node.op);
    push_.op = u.code;
    push_.a = u.alpha_attr ? static_cast<float>(init.node.attr_float(u.alpha_attr, u.alpha)) : u.alpha;
    push_.b = u.beta_attr ? static_cast<float>(init.node.attr_float(u.beta_attr, u.beta)) : u.beta;
  }
  Status record(exec::DeviceKernelContext& ctx) override {
    Push p = push_;
    if (ctx.node().op == "Clip") {  // opset >= 11: min and max are optional inputs (read on the host)
      for (size_t k = 1; k <= 2; ++k) {
        const Tensor* t = ctx.host_input(k);
        if (!t) continue;
        if (t->dtype() != DType::kF32 || t->numel() != 1) return ctx.error("input[", k, "] must be an f32 scalar");
        (k == 1 ? p.a : p.b) = t->data<float>()[0];
      }
    }
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    const exec::DeviceTensor& x = *ctx.device_input(0);
    p.n = static_cast<uint32_t>(x.numel());
    return vk(ctx).dispatch_1d("unary", {VulkanBackend::binding(x), VulkanBackend::binding(*y)}, &p, sizeof p, p.n);
  }

 private:
  struct Push {
    uint32_t n = 0, op = 0;
    float a = 0, b = 0;
  } push_;
};

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
