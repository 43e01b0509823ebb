// Reductions on the device: Reduce* over any axes (reduce.comp), Softmax/LogSoftmax
// (softmax.comp), Max/Average/Global pooling (pool2d.comp) and inference BatchNormalization
// (channel_affine.comp with the statistics folded on the host).
#include <cmath>

#include "backends/vulkan/kernels/common.h"

namespace tsr::vulkan {

namespace {

using exec::DeviceKernelContext;
using exec::DeviceTensor;

const std::map<std::string, uint32_t, std::less<>>& reduce_ops() {
  static const std::map<std::string, uint32_t, std::less<>> k = {
      {"ReduceSum", 0}, {"ReduceMean", 1},      {"ReduceMax", 2}, {"ReduceMin", 3},       {"ReduceProd", 4},
      {"ReduceSumSquare", 5}, {"ReduceL1", 6}, {"ReduceL2", 7}, {"ReduceLogSum", 8}, {"ReduceLogSumExp", 9}};
  return k;
}

class ReduceKernel final : public exec::DeviceKernel {
 public:
  explicit ReduceKernel(const exec::KernelInit& init) : node_(init.node), op_(reduce_ops().at(init.node.op)) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const size_t r = x.shape.size();
    std::vector<int64_t> axes = node_.attr_ints("axes");
    if (ctx.host_input(1)) {
      TSR_ASSIGN_OR_RETURN(axes, host_ints(ctx, 1));
    }
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    struct { uint32_t n_out, op, rank, mask, shape[6]; } p{};
    if (axes.empty()) {
      if (node_.attr_int("noop_with_empty_axes", 0) != 0) {
        p.mask = 0;
      } else {
        p.mask = (1u << r) - 1;
      }
    }
    for (int64_t a : axes) {
      const int64_t ax = norm_axis(a, r);
      if (ax < 0 || ax >= static_cast<int64_t>(r)) return ctx.error("axis ", a, " out of range");
      p.mask |= 1u << ax;
    }
    p.n_out = static_cast<uint32_t>(y->numel());
    p.op = op_;
    p.rank = static_cast<uint32_t>(r);
    for (size_t d = 0; d < r; ++d) p.shape[d] = static_cast<uint32_t>(x.shape[d]);
    if (x.numel() == 0) return unsupported(ctx.place(), ": empty reduction on the device");
    return vk(ctx).dispatch_1d("reduce", {VulkanBackend::binding(x), VulkanBackend::binding(*y)}, &p, sizeof p, p.n_out,
                               64);
  }

 private:
  const ir::Node& node_;
  uint32_t op_;
};

// Opset < 13 Softmax flattens [axis, rank) into one row (version 0 means the latest opset).
bool legacy(const ir::Node& n) { return n.version != 0 && n.version < 13; }

class SoftmaxKernel final : public exec::DeviceKernel {
 public:
  explicit SoftmaxKernel(const exec::KernelInit& init)
      : axis_(init.node.attr_int("axis", legacy(init.node) ? 1 : -1)), legacy_(legacy(init.node)),
        log_(init.node.op == "LogSoftmax") {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    const size_t r = x.shape.size();
    const size_t ax = static_cast<size_t>(norm_axis(axis_, r));
    int64_t outer = 1, len = 1, inner = 1;
    for (size_t d = 0; d < r; ++d) (d < ax ? outer : d == ax ? len : inner) *= x.shape[d];
    if (legacy_) {  // opset < 13: softmax over the flattened [axis, rank) block
      len *= inner;
      inner = 1;
    }
    struct { uint32_t rows, len, inner, log; } p{static_cast<uint32_t>(outer * inner), static_cast<uint32_t>(len),
                                                  static_cast<uint32_t>(inner), log_ ? 1u : 0u};
    return vk(ctx).dispatch_1d("softmax", {VulkanBackend::binding(x), VulkanBackend::binding(*y)}, &p, sizeof p, p.rows,
                               64);
  }

 private:
  int64_t axis_;
  bool legacy_, log_;
};

bool pool_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  const size_t r = in[0].shape.size();
  if (r != 3 && r != 4) return false;
  if (node.outputs.size() > 1 && node.outputs[1] >= 0) return false;  // MaxPool's Indices
  return node.op != "LpPool";
}

class PoolKernel final : public exec::DeviceKernel {
 public:
  explicit PoolKernel(const exec::KernelInit& init) : node_(init.node) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    const bool one_d = x.shape.size() == 3;
    const size_t nsp = one_d ? 1 : 2;
    const bool global = node_.op == "GlobalAveragePool" || node_.op == "GlobalMaxPool";
    struct { uint32_t NC, H, W, OH, OW, KH, KW, sh, sw, dh, dw; int32_t ph, pw, peh, pew; uint32_t mode; } p{};
    p.NC = static_cast<uint32_t>(x.shape[0] * x.shape[1]);
    p.H = one_d ? 1 : static_cast<uint32_t>(x.shape[2]);
    p.W = static_cast<uint32_t>(x.shape.back());
    p.OH = one_d ? 1 : static_cast<uint32_t>(y->shape[2]);
    p.OW = static_cast<uint32_t>(y->shape.back());
    const bool is_max = node_.op == "MaxPool" || node_.op == "GlobalMaxPool";
    p.mode = is_max ? 0 : (node_.attr_int("count_include_pad", 0) ? 1 : 2);
    if (global) {
      p.KH = p.H;
      p.KW = p.W;
      p.sh = p.sw = p.dh = p.dw = 1;
    } else {
      const std::vector<int64_t> k = node_.attr_ints("kernel_shape");
      const std::vector<int64_t> s = node_.attr_ints("strides", std::vector<int64_t>(nsp, 1));
      const std::vector<int64_t> dl = node_.attr_ints("dilations", std::vector<int64_t>(nsp, 1));
      std::vector<int64_t> pads = node_.attr_ints("pads", std::vector<int64_t>(2 * nsp, 0));
      if (k.size() != nsp || s.size() != nsp || dl.size() != nsp || pads.size() != 2 * nsp)
        return ctx.error("kernel_shape/strides/dilations/pads do not match ", nsp, " spatial dims");
      const std::string auto_pad = node_.attr_string("auto_pad", "NOTSET");
      const int64_t in_sp[2] = {p.H, p.W}, out_sp[2] = {p.OH, p.OW};
      for (size_t d = 0; d < nsp; ++d) {
        const size_t i = one_d ? 1 : d;
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
          const int64_t total = std::max<int64_t>(0, (out_sp[i] - 1) * s[d] + (k[d] - 1) * dl[d] + 1 - in_sp[i]);
          pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
          pads[d + nsp] = total - pads[d];
        } else if (auto_pad == "VALID") {
          pads[d] = pads[d + nsp] = 0;
        }
      }
      p.KH = one_d ? 1 : static_cast<uint32_t>(k[0]);
      p.KW = static_cast<uint32_t>(k.back());
      p.sh = one_d ? 1 : static_cast<uint32_t>(s[0]);
      p.sw = static_cast<uint32_t>(s.back());
      p.dh = one_d ? 1 : static_cast<uint32_t>(dl[0]);
      p.dw = static_cast<uint32_t>(dl.back());
      p.ph = one_d ? 0 : static_cast<int32_t>(pads[0]);
      p.pw = static_cast<int32_t>(pads[nsp - 1]);
      p.peh = one_d ? 0 : static_cast<int32_t>(pads[nsp]);
      p.pew = static_cast<int32_t>(pads[2 * nsp - 1]);
    }
    return vk(ctx).dispatch_1d("pool2d", {VulkanBackend::binding(x), VulkanBackend::binding(*y)}, &p, sizeof p, y->numel());
  }

 private:
  const ir::Node& node_;
};

bool bn_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  if (node.attr_int("training_mode", 0) != 0) return false;
  if (node.outputs.size() > 1) {
    for (size_t i = 1; i < node.outputs.size(); ++i)
      if (node.outputs[i] >= 0) return false;
  }
  for (size_t k = 1; k < 5 && k < in.size(); ++k)
    if (in[k].dtype != DType::kF32) return false;
  return in[0].shape.size() >= 2;
}

// y = (x - mean) / sqrt(var + eps) * scale + bias = x * s + b, folded on the host once for
// constant statistics, per run otherwise.
class BatchNormKernel final : public exec::DeviceKernel {
 public:
  explicit BatchNormKernel(const exec::KernelInit& init)
      : eps_(static_cast<float>(init.node.attr_float("epsilon", 1e-5))),
        constant_(init.constant_inputs.size() >= 5 && init.constant_inputs[1] && init.constant_inputs[2] &&
                  init.constant_inputs[3] && init.constant_inputs[4]) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const int64_t C = x.shape[1];
    if (!constant_ || !s_.defined()) {
      std::vector<float> s(static_cast<size_t>(C)), b(static_cast<size_t>(C));
      const Tensor* in[4];
      for (size_t k = 0; k < 4; ++k) {
        in[k] = ctx.host_input(k + 1);
        if (!in[k] || in[k]->numel() != C || in[k]->dtype() != DType::kF32)
          return ctx.error("input[", k + 1, "] must be f32 of ", C, " elements");
      }
      for (int64_t c = 0; c < C; ++c) {
        const float inv = in[0]->data<float>()[c] / std::sqrt(in[3]->data<float>()[c] + eps_);
        s[static_cast<size_t>(c)] = inv;
        b[static_cast<size_t>(c)] = in[1]->data<float>()[c] - in[2]->data<float>()[c] * inv;
      }
      TSR_ASSIGN_OR_RETURN(s_, vk(ctx).upload(Tensor::from<float>({C}, s)));
      TSR_ASSIGN_OR_RETURN(b_, vk(ctx).upload(Tensor::from<float>({C}, b)));
    }
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    int64_t inner = 1;
    for (size_t d = 2; d < x.shape.size(); ++d) inner *= x.shape[d];
    struct { uint32_t n, C, inner; } p{static_cast<uint32_t>(x.numel()), static_cast<uint32_t>(C), static_cast<uint32_t>(inner)};
    Status st = vk(ctx).dispatch_1d("channel_affine",
                                    {VulkanBackend::binding(x), VulkanBackend::binding(s_), VulkanBackend::binding(b_),
                                     VulkanBackend::binding(*y)},
                                    &p, sizeof p, p.n);
    if (!constant_) s_ = b_ = DeviceTensor();
    return st;
  }

 private:
  float eps_;
  bool constant_;
  DeviceTensor s_, b_;
};

}  // namespace

void register_reduce(VkOpTable& t) {
  for (const auto& kv : reduce_ops()) t[kv.first] = {0b10, nullptr, &make_kernel<ReduceKernel>};
  t["Softmax"] = {0, nullptr, &make_kernel<SoftmaxKernel>};
  t["LogSoftmax"] = {0, nullptr, &make_kernel<SoftmaxKernel>};
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
    t[op] = {0, &pool_check, &make_kernel<PoolKernel>};
  t["BatchNormalization"] = {0b11110, &bn_check, &make_kernel<BatchNormKernel>};
}

}  // namespace tsr::vulkan
