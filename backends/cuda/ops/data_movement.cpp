// Data movement on CUDA: the ops themselves are written once in device_common/data_movement.h;
// this file supplies CUDA's primitives (kernels/data_movement.cu via launch.h).
#include "backends/device_common/data_movement.h"

#include "backends/cuda/ops/common.h"

namespace tsr::cuda {

namespace {

struct CudaDataMovement : CudaPolicy {
  static constexpr auto copy_strided = &cuda::copy_strided;
  static Status fill(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& y, float value) {
    return launched(ctx, k::fill(stream_of(ctx), ptr(y), value, y.numel()));
  }
  static Status gather(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& idx,
                       const exec::DeviceTensor& y, const device_common::GatherGeom& g) {
    return launched(ctx, k::gather(stream_of(ctx), ptr(x), ptr<int32_t>(idx), ptr(y), g.outer, g.axis_len, g.n_idx, g.inner));
  }
  static Status resize(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& y,
                       const device_common::ResizeGeom& g) {
    return launched(ctx, k::resize(stream_of(ctx), g, ptr(x), ptr(y)));
  }
};

}  // namespace

}  // namespace tsr::cuda

// This backend's instance of the family (declared in device_common/op_table.h).
template <>
void tsr::device_common::register_data_movement<tsr::cuda::CudaBackend>(OpTable<cuda::CudaBackend>& t) {
  register_data_movement_ops<cuda::CudaDataMovement>(t);
}
