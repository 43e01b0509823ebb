// Device-independent parts of the device backends' elementwise families (Vulkan, CUDA): the
// placement checks the backends share and the ops that are views. Header-only.
#pragma once

#include <cfloat>
#include <map>
#include <string>
#include <vector>

#include "backends/device_common/host_inputs.h"
#include "core/ir/graph.h"

namespace tsr::device_common {

// A unary op's kernel code and its two float parameters (a, b) with their attribute names and
// defaults (null name: fixed). Codes are the order of CUDA's k::Unary and of unary.comp's cases.
struct UnaryInfo {
  int32_t code;
  const char* alpha_attr;
  float alpha;
  const char* beta_attr;
  float beta;
};

inline const std::map<std::string, UnaryInfo, std::less<>>& unary_ops() {
  static const std::map<std::string, UnaryInfo, std::less<>> k = {
      {"Relu", {0, nullptr, 0, nullptr, 0}},         {"Sigmoid", {1, nullptr, 0, nullptr, 0}},
      {"Tanh", {2, nullptr, 0, nullptr, 0}},         {"Exp", {3, nullptr, 0, nullptr, 0}},
      {"Log", {4, nullptr, 0, nullptr, 0}},          {"Sqrt", {5, nullptr, 0, nullptr, 0}},
      {"Abs", {6, nullptr, 0, nullptr, 0}},          {"Neg", {7, nullptr, 0, nullptr, 0}},
      {"Reciprocal", {8, nullptr, 0, nullptr, 0}},   {"HardSigmoid", {9, "alpha", 0.2f, "beta", 0.5f}},
      {"HardSwish", {10, nullptr, 0, nullptr, 0}},   {"LeakyRelu", {11, "alpha", 0.01f, nullptr, 0}},
      {"Clip", {12, "min", -FLT_MAX, "max", FLT_MAX}}, {"Erf", {13, nullptr, 0, nullptr, 0}},
      {"Floor", {14, nullptr, 0, nullptr, 0}},       {"Ceil", {15, nullptr, 0, nullptr, 0}},
      {"Softplus", {16, nullptr, 0, nullptr, 0}},    {"Elu", {17, "alpha", 1.0f, nullptr, 0}},
      {"Sin", {18, nullptr, 0, nullptr, 0}},         {"Cos", {19, nullptr, 0, nullptr, 0}},
      {"Round", {20, nullptr, 0, nullptr, 0}},       {"Sign", {21, nullptr, 0, nullptr, 0}},
      {"Gelu", {22, nullptr, 0, nullptr, 0}},        {"Softsign", {23, nullptr, 0, nullptr, 0}},
  };
  return k;
}

// The code and load-time parameters of unary node `node` (an op of unary_ops()).
struct UnaryParams {
  int32_t code;
  float a, b;
};
inline UnaryParams unary_params(const ir::Node& node) {
  const UnaryInfo& u = unary_ops().at(node.op);
  return {u.code, u.alpha_attr ? static_cast<float>(node.attr_float(u.alpha_attr, u.alpha)) : u.alpha,
          u.beta_attr ? static_cast<float>(node.attr_float(u.beta_attr, u.beta)) : u.beta};
}

// Clip opset >= 11: min and max are optional f32 scalar inputs 1 and 2 (read on the host); they
// replace a and b. kInvalidArgument naming the input otherwise. Other ops: unchanged.
inline Status apply_clip_inputs(const exec::DeviceKernelContext& ctx, UnaryParams& p) {
  if (ctx.node().op != "Clip") return ok_status();
  for (size_t k = 1; k <= 2; ++k) {
    const Tensor* t = ctx.host_input(k);
    if (!t) continue;
    if (t->dtype() != DType::kF32 || t->numel() != 1) return ctx.error("input[", k, "] must be an f32 scalar");
    (k == 1 ? p.a : p.b) = t->data<float>()[0];
  }
  return ok_status();
}

// Elementwise binary ops take exactly two inputs on a device (variadic Sum/Max/... stay on the CPU).
inline bool binary_check(const ir::Node& node, const std::vector<ops::ValueType>&) { return node.inputs.size() == 2; }
// Gelu: the exact (erf) form only.
inline bool gelu_check(const ir::Node& node, const std::vector<ops::ValueType>&) {
  return node.attr_string("approximate", "none") == "none";
}
// Dropout at inference only: no training_mode input, no mask output.
inline bool dropout_check(const ir::Node& node, const std::vector<ops::ValueType>&) {
  return node.inputs.size() <= 2 && (node.outputs.size() < 2 || node.outputs[1] < 0);
}

// A unary op of unary_ops(); P::unary(ctx, x, y, params) records y = f(x) on the backend.
template <class P>
class UnaryKernel final : public exec::DeviceKernel {
 public:
  explicit UnaryKernel(const exec::KernelInit& init) : params_(unary_params(init.node)) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    UnaryParams u = params_;
    TSR_RETURN_IF_ERROR(apply_clip_inputs(ctx, u));
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    return P::unary(ctx, *ctx.device_input(0), *y, u);
  }

 private:
  UnaryParams params_;
};

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, inference Dropout: the input's buffer with the
// inferred output shape (no work recorded; the output aliases the input).
class ViewKernel final : public exec::DeviceKernel {
 public:
  explicit ViewKernel(const exec::KernelInit&) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    exec::DeviceTensor v = *ctx.device_input(0);
    v.shape = ctx.output_type(0).shape;
    ctx.set_output(0, std::move(v));
    return ok_status();
  }
};

// Adds the view ops through add(name, host_inputs_mask, check_or_null, factory); B: the backend class.
template <class B, class Add>
void register_view_ops(Add&& add) {
  add("Reshape", 0b10u, nullptr, &make_kernel<ViewKernel, B>);
  add("Flatten", 0u, nullptr, &make_kernel<ViewKernel, B>);
  add("Squeeze", 0b10u, nullptr, &make_kernel<ViewKernel, B>);
  add("Unsqueeze", 0b10u, nullptr, &make_kernel<ViewKernel, B>);
  add("Identity", 0u, nullptr, &make_kernel<ViewKernel, B>);
  add("Dropout", 0b110u, &dropout_check, &make_kernel<ViewKernel, B>);
}

}  // namespace tsr::device_common
