// The elementwise family of a device backend, written once (Vulkan, CUDA): unary activations,
// broadcasting binary ops (and, where the backend has bool tensors, comparisons), and the ops
// that are views. Op codes and attributes are resolved when a kernel is created; a backend
// supplies a policy class P with static members (f32 device tensors unless said otherwise):
//   using Backend = ...;                          its op table's factories take it
//   static constexpr bool kComparisons;           whether it registers the comparisons (bool y)
//   Status unary(ctx, x, y, const UnaryParams&)   y = f(x)
//   Status binary(ctx, BinaryOp, a, b, y, sa, sb) y = a (op) b; sa/sb: a's and b's
//       broadcast_strides against y's rank (<= kMaxRank)
// Header-only.
#pragma once

#include <cfloat>
#include <map>
#include <string>
#include <vector>

#include "backends/device_common/geometry.h"
#include "backends/device_common/host_inputs.h"
#include "backends/device_common/op_table.h"
#include "core/ir/graph.h"
#include "core/tensor/broadcast.h"

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
// replace a and b. kInvalidArgument naming the input otherwise.
inline Status apply_clip_inputs(const exec::DeviceKernelContext& ctx, UnaryParams& p) {
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
  return node.attr_string("approximate") == "none";
}
// Dropout at inference only: no training_mode input, no mask output.
inline bool dropout_check(const ir::Node& node, const std::vector<ops::ValueType>&) {
  return node.inputs.size() <= 2 && (node.outputs.size() < 2 || node.outputs[1] < 0);
}

// A unary op of unary_ops(); P::unary(ctx, x, y, params) records y = f(x) on the backend.
template <class P>
class UnaryKernel final : public exec::DeviceKernel {
 public:
  explicit UnaryKernel(const exec::KernelInit& init) : params_(unary_params(init.node)), clip_(init.node.op == "Clip") {}
  Status record(exec::DeviceKernelContext& ctx) override {
    UnaryParams u = params_;
    if (clip_) TSR_RETURN_IF_ERROR(apply_clip_inputs(ctx, u));
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    return P::unary(ctx, *ctx.device_input(0), *y, u);
  }

 private:
  UnaryParams params_;
  bool clip_;
};

// Binary op codes: the order of binary.comp's cases and of CUDA's k::Binary / k::Compare (the
// comparisons from kGreater on).
enum class BinaryOp : int32_t {
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kPRelu, kGreater, kLess, kEqual, kGreaterOrEqual, kLessOrEqual
};
inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::kGreater; }

inline const std::map<std::string, BinaryOp, std::less<>>& binary_ops() {
  using B = BinaryOp;
  static const std::map<std::string, B, std::less<>> k = {
      {"Add", B::kAdd},         {"Sub", B::kSub},   {"Mul", B::kMul},     {"Div", B::kDiv},
      {"Pow", B::kPow},         {"Max", B::kMax},   {"Min", B::kMin},     {"PRelu", B::kPRelu},
      {"Greater", B::kGreater}, {"Less", B::kLess}, {"Equal", B::kEqual}, {"GreaterOrEqual", B::kGreaterOrEqual},
      {"LessOrEqual", B::kLessOrEqual}};
  return k;
}

// y = a (op) b with numpy broadcasting; comparisons write bool (u8) y.
template <class P>
class BinaryKernel final : public exec::DeviceKernel {
 public:
  explicit BinaryKernel(const exec::KernelInit& init) : op_(binary_ops().at(init.node.op)) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& a = *ctx.device_input(0);
    const exec::DeviceTensor& b = *ctx.device_input(1);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    const size_t r = y->shape.size();
    if (r > static_cast<size_t>(kMaxRank) || a.shape.size() > r || b.shape.size() > r)
      return unsupported(ctx.place(), ": rank ", r, " exceeds the device kernels' ", kMaxRank);
    return P::binary(ctx, op_, a, b, *y, broadcast_strides(a.shape, r), broadcast_strides(b.shape, r));
  }

 private:
  BinaryOp op_;
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

// Adds the family's ops to a backend's table.
template <class P>
void register_elementwise_ops(OpTable<typename P::Backend>& t) {
  using B = typename P::Backend;
  for (const auto& kv : unary_ops()) {
    const bool clip = kv.first == "Clip", gelu = kv.first == "Gelu";
    t.add(kv.first, clip ? 0b110u : 0u, gelu ? &gelu_check : nullptr, &make_kernel<UnaryKernel<P>, B>);
  }
  for (const auto& kv : binary_ops())
    if (P::kComparisons || !is_comparison(kv.second))
      t.add(kv.first, 0u, &binary_check, &make_kernel<BinaryKernel<P>, B>);
  t.add("Reshape", 0b10u, nullptr, &make_kernel<ViewKernel, B>);
  t.add("Flatten", 0u, nullptr, &make_kernel<ViewKernel, B>);
  t.add("Squeeze", 0b10u, nullptr, &make_kernel<ViewKernel, B>);
  t.add("Unsqueeze", 0b10u, nullptr, &make_kernel<ViewKernel, B>);
  t.add("Identity", 0u, nullptr, &make_kernel<ViewKernel, B>);
  t.add("Dropout", 0b110u, &dropout_check, &make_kernel<ViewKernel, B>);
}

}  // namespace tsr::device_common
