// Reductions on CUDA: Reduce*, Softmax/LogSoftmax, pooling and inference BatchNormalization are
// written once in device_common/reduce.h; this file supplies CUDA's primitives (kernels/*.cu via
// launch.h) and adds SumTo (the reduction kernel with a mask of broadcast dims).
#include "backends/device_common/reduce.h"

#include "backends/cuda/ops/common.h"

namespace tsr::cuda {

using exec::DeviceKernelContext;
using exec::DeviceTensor;

namespace {

using R = k::Reduce;

Status record_reduce(DeviceKernelContext& ctx, R op, const DeviceTensor& x, DeviceTensor& y, uint32_t mask) {
  if (x.shape.size() > static_cast<size_t>(k::kMaxRank))
    return unsupported(ctx.place(), ": rank ", x.shape.size(), " exceeds the CUDA kernels' ", k::kMaxRank);
  if (x.numel() == 0) return unsupported(ctx.place(), ": empty reduction on the device");
  return launched(ctx, k::reduce(stream_of(ctx), op, x.shape.data(), static_cast<int32_t>(x.shape.size()), mask, ptr(x),
                                 ptr(y), y.numel()));
}

// The dims SumTo(X, shape) sums: those `to` (right-aligned to x's rank) lacks or has as 1 where x
// is wider. kInvalidArgument where `to` does not broadcast to x.
Expected<uint32_t> sum_to_mask(const DeviceKernelContext& ctx, const Shape& x, const Shape& to) {
  if (to.size() > x.size()) return ctx.error("target rank ", to.size(), " exceeds the input's ", x.size());
  const size_t lead = x.size() - to.size();
  uint32_t mask = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    const int64_t want = d < lead ? 1 : to[d - lead];
    if (want == x[d]) continue;
    if (want != 1) return ctx.error("cannot sum ", shape_str(x), " to ", shape_str(to));
    mask |= 1u << d;
  }
  return mask;
}

// SumTo(X, shape): the sum of X over the dims it was broadcast along to reach `shape`.
class SumToKernel final : public exec::DeviceKernel {
 public:
  explicit SumToKernel(const exec::KernelInit&) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    TSR_ASSIGN_OR_RETURN(const uint32_t mask, sum_to_mask(ctx, x.shape, y->shape));
    if (mask == 0)  // nothing to sum: a copy
      return copy_strided(ctx, x, *y, x.shape, shape_strides(x.shape), 0, shape_strides(x.shape), 0);
    return record_reduce(ctx, R::kSum, x, *y, mask);
  }
};

struct CudaReduce : CudaPolicy {
  static Status reduce(DeviceKernelContext& ctx, int32_t op, const DeviceTensor& x, DeviceTensor& y, uint32_t mask) {
    return record_reduce(ctx, static_cast<R>(op), x, y, mask);
  }
  static Status softmax(DeviceKernelContext& ctx, const DeviceTensor& x, DeviceTensor& y, int64_t rows, int64_t len,
                        int64_t inner, bool log) {
    return launched(ctx, k::softmax(stream_of(ctx), ptr(x), ptr(y), rows, len, inner, log));
  }
  static Status pool(DeviceKernelContext& ctx, const DeviceTensor& x, DeviceTensor& y, const device_common::PoolGeom& g) {
    return launched(ctx, k::pool(stream_of(ctx), g, ptr(x), ptr(y)));
  }
  // s and b are freed by the caller after their last recorded use (stream-ordered).
  static Status channel_affine(DeviceKernelContext& ctx, const DeviceTensor& x, const DeviceTensor& s, const DeviceTensor& b,
                               DeviceTensor& y, int64_t C, int64_t inner) {
    return launched(ctx, k::channel_affine(stream_of(ctx), ptr(x), ptr(s), ptr(b), ptr(y), x.numel(), C, inner));
  }
};

}  // namespace

}  // namespace tsr::cuda

// This backend's instance of the family (declared in device_common/op_table.h).
template <>
void tsr::device_common::register_reduce<tsr::cuda::CudaBackend>(OpTable<cuda::CudaBackend>& t) {
  register_reduce_ops<cuda::CudaReduce>(t);
  t.add("SumTo", 0b10, nullptr, &make_kernel<cuda::SumToKernel, cuda::CudaBackend>);
}
