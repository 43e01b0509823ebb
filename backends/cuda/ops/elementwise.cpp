// Elementwise CUDA ops: unary activations, broadcasting binary ops, comparisons (bool output),
// Where, and the ops that are views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, inference
// Dropout): a view shares its input's buffer with the inferred shape and records no work.
#include <cfloat>

#include "backends/cuda/ops/common.h"
#include "backends/device_common/elementwise.h"

namespace tsr::cuda {

namespace {

using U = k::Unary;

struct UnaryInfo {
  U code;
  const char* alpha_attr;
  float alpha;
  const char* beta_attr;
  float beta;
};

const std::map<std::string, UnaryInfo, std::less<>>& unary_ops() {
  static const std::map<std::string, UnaryInfo, std::less<>> k = {
      {"Relu", {U::kRelu, nullptr, 0, nullptr, 0}},
      {"Sigmoid", {U::kSigmoid, nullptr, 0, nullptr, 0}},
      {"Tanh", {U::kTanh, nullptr, 0, nullptr, 0}},
      {"Exp", {U::kExp, nullptr, 0, nullptr, 0}},
      {"Log", {U::kLog, nullptr, 0, nullptr, 0}},
      {"Sqrt", {U::kSqrt, nullptr, 0, nullptr, 0}},
      {"Abs", {U::kAbs, nullptr, 0, nullptr, 0}},
      {"Neg", {U::kNeg, nullptr, 0, nullptr, 0}},
      {"Reciprocal", {U::kReciprocal, nullptr, 0, nullptr, 0}},
      {"HardSigmoid", {U::kHardSigmoid, "alpha", 0.2f, "beta", 0.5f}},
      {"HardSwish", {U::kHardSwish, nullptr, 0, nullptr, 0}},
      {"LeakyRelu", {U::kLeakyRelu, "alpha", 0.01f, nullptr, 0}},
      {"Clip", {U::kClip, "min", -FLT_MAX, "max", FLT_MAX}},
      {"Erf", {U::kErf, nullptr, 0, nullptr, 0}},
      {"Floor", {U::kFloor, nullptr, 0, nullptr, 0}},
      {"Ceil", {U::kCeil, nullptr, 0, nullptr, 0}},
      {"Softplus", {U::kSoftplus, nullptr, 0, nullptr, 0}},
      {"Elu", {U::kElu, "alpha", 1.0f, nullptr, 0}},
      {"Sin", {U::kSin, nullptr, 0, nullptr, 0}},
      {"Cos", {U::kCos, nullptr, 0, nullptr, 0}},
      {"Round", {U::kRound, nullptr, 0, nullptr, 0}},
      {"Sign", {U::kSign, nullptr, 0, nullptr, 0}},
      {"Gelu", {U::kGelu, nullptr, 0, nullptr, 0}},
      {"Softsign", {U::kSoftsign, nullptr, 0, nullptr, 0}},
  };
  return k;
}

class UnaryKernel final : public exec::DeviceKernel {
 public:
  explicit UnaryKernel(const exec::KernelInit& init) : info_(unary_ops().at(init.node.op)) {
    a_ = info_.alpha_attr ? static_cast<float>(init.node.attr_float(info_.alpha_attr, info_.alpha)) : info_.alpha;
    b_ = info_.beta_attr ? static_cast<float>(init.node.attr_float(info_.beta_attr, info_.beta)) : info_.beta;
  }
  Status record(exec::DeviceKernelContext& ctx) override {
    float a = a_, b = b_;
    if (info_.code == U::kClip) {  // opset >= 11: min and max are optional inputs (read on the host)
      for (size_t k = 1; k <= 2; ++k) {
        const Tensor* t = ctx.host_input(k);
        if (!t) continue;
        if (t->dtype() != DType::kF32 || t->numel() != 1) return ctx.error("input[", k, "] must be an f32 scalar");
        (k == 1 ? a : b) = t->data<float>()[0];
      }
    }
    const exec::DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    return launched(ctx, k::unary(stream_of(ctx), info_.code, a, b, ptr(x), ptr(*y), x.numel()));
  }

 private:
  UnaryInfo info_;
  float a_ = 0, b_ = 0;
};

const std::map<std::string, k::Binary, std::less<>>& binary_ops() {
  using B = k::Binary;
  static const std::map<std::string, B, std::less<>> k = {{"Add", B::kAdd}, {"Sub", B::kSub}, {"Mul", B::kMul},
                                                          {"Div", B::kDiv}, {"Pow", B::kPow}, {"Max", B::kMax},
                                                          {"Min", B::kMin}, {"PRelu", B::kPRelu}};
  return k;
}

const std::map<std::string, k::Compare, std::less<>>& compare_ops() {
  using C = k::Compare;
  static const std::map<std::string, C, std::less<>> k = {{"Greater", C::kGreater},
                                                          {"Less", C::kLess},
                                                          {"Equal", C::kEqual},
                                                          {"GreaterOrEqual", C::kGreaterOrEqual},
                                                          {"LessOrEqual", C::kLessOrEqual}};
  return k;
}

class BinaryKernel final : public exec::DeviceKernel {
 public:
  explicit BinaryKernel(const exec::KernelInit& init) : op_(init.node.op) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& a = *ctx.device_input(0);
    const exec::DeviceTensor& b = *ctx.device_input(1);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    k::Strided st;
    TSR_RETURN_IF_ERROR(set_broadcast(ctx, st, 0, a.shape, y->shape));
    TSR_RETURN_IF_ERROR(set_broadcast(ctx, st, 1, b.shape, y->shape));
    auto c = compare_ops().find(op_);
    if (c != compare_ops().end())
      return launched(ctx, k::compare(stream_of(ctx), c->second, st, ptr(a), ptr(b), ptr<uint8_t>(*y), y->numel()));
    return launched(ctx, k::binary(stream_of(ctx), binary_ops().at(op_), st, ptr(a), ptr(b), ptr(*y), y->numel()));
  }

 private:
  std::string op_;
};

class WhereKernel final : public exec::DeviceKernel {
 public:
  explicit WhereKernel(const exec::KernelInit&) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& c = *ctx.device_input(0);
    const exec::DeviceTensor& x = *ctx.device_input(1);
    const exec::DeviceTensor& z = *ctx.device_input(2);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    k::Strided st;
    TSR_RETURN_IF_ERROR(set_broadcast(ctx, st, 0, c.shape, y->shape));
    TSR_RETURN_IF_ERROR(set_broadcast(ctx, st, 1, x.shape, y->shape));
    TSR_RETURN_IF_ERROR(set_broadcast(ctx, st, 2, z.shape, y->shape));
    return launched(ctx, k::where(stream_of(ctx), st, ptr<uint8_t>(c), ptr(x), ptr(z), ptr(*y), y->numel()));
  }
};

}  // namespace

void register_elementwise(CuOpTable& t) {
  for (const auto& kv : unary_ops()) t[kv.first] = {0, 0, nullptr, &make_kernel<UnaryKernel>};
  t["Clip"].host_inputs = 0b110;
  t["Gelu"].check = &device_common::gelu_check;
  for (const auto& kv : binary_ops()) t[kv.first] = {0, 0, &device_common::binary_check, &make_kernel<BinaryKernel>};
  for (const auto& kv : compare_ops()) t[kv.first] = {0, 0, &device_common::binary_check, &make_kernel<BinaryKernel>};
  t["Where"] = {0, 0b1, nullptr, &make_kernel<WhereKernel>};
  device_common::register_view_ops<CudaBackend>(table_adder(t));
}

}  // namespace tsr::cuda
