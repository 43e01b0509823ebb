// Elementwise ops on CUDA: the family is written once in device_common/elementwise.h; this file
// supplies CUDA's primitives (kernels/elementwise.cu via launch.h), comparisons (bool output)
// included, and adds Where.
#include "backends/device_common/elementwise.h"

#include "backends/cuda/ops/common.h"

namespace tsr::cuda {

namespace {

using device_common::BinaryOp;

// The shared codes are k::Unary's and k::Binary's / k::Compare's order.
static_assert(static_cast<int32_t>(k::Unary::kSoftplus) == 16 && static_cast<int32_t>(k::Unary::kSoftsign) == 23);
static_assert(static_cast<int32_t>(k::Binary::kPRelu) == static_cast<int32_t>(BinaryOp::kPRelu));
static_assert(static_cast<int32_t>(k::Compare::kLessOrEqual) ==
              static_cast<int32_t>(BinaryOp::kLessOrEqual) - static_cast<int32_t>(BinaryOp::kGreater));

struct CudaElementwise : CudaPolicy {
  static constexpr bool kComparisons = true;
  static Status unary(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, exec::DeviceTensor& y,
                      const device_common::UnaryParams& u) {
    return launched(ctx, k::unary(stream_of(ctx), static_cast<k::Unary>(u.code), u.a, u.b, ptr(x), ptr(y), x.numel()));
  }
  static Status binary(exec::DeviceKernelContext& ctx, BinaryOp op, const exec::DeviceTensor& a, const exec::DeviceTensor& b,
                       exec::DeviceTensor& y, const Shape& sa, const Shape& sb) {
    TSR_ASSIGN_OR_RETURN(const k::Strided st, strided(ctx, y.shape, {sa, sb}));
    if (device_common::is_comparison(op)) {
      const auto c = static_cast<k::Compare>(static_cast<int32_t>(op) - static_cast<int32_t>(BinaryOp::kGreater));
      return launched(ctx, k::compare(stream_of(ctx), c, st, ptr(a), ptr(b), ptr<uint8_t>(y), y.numel()));
    }
    return launched(ctx, k::binary(stream_of(ctx), static_cast<k::Binary>(op), st, ptr(a), ptr(b), ptr(y), y.numel()));
  }
};

// Where(cond, x, z) with broadcasting; cond is bool.
class WhereKernel final : public exec::DeviceKernel {
 public:
  explicit WhereKernel(const exec::KernelInit&) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    const size_t r = y->shape.size();
    const exec::DeviceTensor* in[3];  // cond, x, z
    Shape strides[3];
    for (size_t j = 0; j < 3; ++j) {
      in[j] = ctx.device_input(j);
      strides[j] = broadcast_strides(in[j]->shape, r);
    }
    TSR_ASSIGN_OR_RETURN(const k::Strided st, strided(ctx, y->shape, {strides[0], strides[1], strides[2]}));
    return launched(ctx, k::where(stream_of(ctx), st, ptr<uint8_t>(*in[0]), ptr(*in[1]), ptr(*in[2]), ptr(*y), y->numel()));
  }
};

}  // namespace

}  // namespace tsr::cuda

// This backend's instance of the family (declared in device_common/op_table.h).
template <>
void tsr::device_common::register_elementwise<tsr::cuda::CudaBackend>(OpTable<cuda::CudaBackend>& t) {
  register_elementwise_ops<cuda::CudaElementwise>(t);
  t.add("Where", 0, nullptr, &make_kernel<cuda::WhereKernel, cuda::CudaBackend>, 0b1);
}
