// Elementwise CUDA ops: unary activations, broadcasting binary ops, comparisons (bool output),
// Where, and the ops that are views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, inference
// Dropout): a view shares its input's buffer with the inferred shape and records no work.
#include "backends/cuda/ops/common.h"
#include "backends/device_common/elementwise.h"

namespace tsr::cuda {

namespace {

using device_common::unary_ops;

struct CudaUnary {
  static Status unary(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, exec::DeviceTensor& y,
                      const device_common::UnaryParams& u) {
    return launched(ctx, k::unary(stream_of(ctx), static_cast<k::Unary>(u.code), u.a, u.b, ptr(x), ptr(y), x.numel()));
  }
};
using UnaryKernel = device_common::UnaryKernel<CudaUnary>;

// The shared codes are k::Unary's order.
static_assert(static_cast<int32_t>(k::Unary::kSoftplus) == 16 && static_cast<int32_t>(k::Unary::kSoftsign) == 23);

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
