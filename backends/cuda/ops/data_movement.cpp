// Data movement on CUDA: the ops themselves are written once in device_common/data_movement.h;
// this file supplies CUDA's primitives (kernels/data_movement.cu via launch.h).
#include "backends/device_common/data_movement.h"

#include "backends/cuda/ops/common.h"

namespace tsr::cuda {

namespace {

struct CudaDataMovement {
  using Backend = CudaBackend;
  static constexpr const char* kName = "CUDA";
  static Status copy_strided(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& y,
                             const Shape& shape, const std::vector<int64_t>& is, int64_t io, const std::vector<int64_t>& os,
                             int64_t oo) {
    return cuda::copy_strided(ctx, x, y, shape, is, io, os, oo);
  }
  static Status fill(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& y, float value) {
    return launched(ctx, k::fill(stream_of(ctx), ptr(y), value, y.numel()));
  }
  static Status gather(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& idx,
                       const exec::DeviceTensor& y, const device_common::GatherGeom& g) {
    return launched(ctx, k::gather(stream_of(ctx), ptr(x), ptr<int32_t>(idx), ptr(y), g.outer, g.axis_len, g.n_idx, g.inner));
  }
  static Status resize(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& y,
                       const device_common::ResizeGeom& g) {
    const k::ResizeParams p{g.NC, g.H, g.W, g.OH, g.OW, g.mode, g.coord, g.nearest, g.sh, g.sw};
    return launched(ctx, k::resize(stream_of(ctx), p, ptr(x), ptr(y)));
  }
};

}  // namespace

void register_data_movement(CuOpTable& t) {
  device_common::register_data_movement_ops<CudaDataMovement>(table_adder(t));
}

}  // namespace tsr::cuda
