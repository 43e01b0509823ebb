// Helpers shared by the CUDA op families (host code; not part of the backend's interface).
#pragma once

#include <initializer_list>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/kernels/launch.h"
#include "backends/device_common/host_inputs.h"
#include "backends/device_common/op_table.h"

namespace tsr::cuda {

// The family only CUDA has (ops/training.cpp); the shared four: device_common/op_table.h.
void register_training(device_common::OpTable<CudaBackend>& t);

using device_common::host_ints;
using device_common::host_scalar;
using device_common::make_kernel;

// The base of this backend's policy classes (the P of device_common's family templates).
struct CudaPolicy {
  using Backend = CudaBackend;
  static constexpr const char* kName = "CUDA";
};

inline CudaBackend& cu(exec::DeviceKernelContext& ctx) { return static_cast<CudaBackend&>(ctx.backend()); }
inline cudaStream_t stream_of(exec::DeviceKernelContext& ctx) { return reinterpret_cast<cudaStream_t>(cu(ctx).stream()); }

template <typename T = float> T* ptr(const exec::DeviceTensor& t) { return static_cast<T*>(CudaBackend::data(t)); }

// The status of a launcher call, naming the node.
inline Status launched(exec::DeviceKernelContext& ctx, cudaError_t e) {
  return CudaBackend::check(static_cast<int>(e), ctx.place());
}

// The launchers' index space `shape` with up to three inputs' element strides (each of the
// shape's rank: broadcast_strides for broadcasting inputs). kUnsupported past kMaxRank.
inline Expected<k::Strided> strided(const exec::DeviceKernelContext& ctx, const Shape& shape,
                                    std::initializer_list<Shape> strides) {
  if (shape.size() > static_cast<size_t>(k::kMaxRank))
    return unsupported(ctx.place(), ": rank ", shape.size(), " exceeds the CUDA kernels' ", k::kMaxRank);
  k::Strided st;
  st.rank = static_cast<int32_t>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) st.shape[d] = shape[d];
  int j = 0;
  for (const Shape& s : strides) {
    for (size_t d = 0; d < shape.size(); ++d) st.s[j][d] = s[d];
    ++j;
  }
  return st;
}

// Records y[oo + i . os] = x[io + i . is] for every index i of `shape` (element strides / offsets).
inline Status copy_strided(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& y,
                           const Shape& shape, const Shape& is, int64_t io, const Shape& os, int64_t oo) {
  TSR_ASSIGN_OR_RETURN(const k::Strided st, strided(ctx, shape, {is, os}));
  const int eb = static_cast<int>(dtype_size(x.dtype));
  return launched(ctx, k::copy_strided(stream_of(ctx), st, CudaBackend::data(x), io, CudaBackend::data(y), oo,
                                       shape_numel(shape), eb));
}

// Row-major batched C[b] = alpha op(A[b]) op(B[b]) + beta C[b] through cuBLAS (col-major, so it
// computes C^T = op(B)^T op(A)^T). lda/ldb/ldc: the stored row lengths; sa/sb/sc: the batch
// strides (0 = shared). beta == 0 never reads C. Defined in linear.cpp.
Status gemm_rm(exec::DeviceKernelContext& ctx, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
               int64_t lda, int64_t sa, const float* B, int64_t ldb, int64_t sb, float beta, float* C, int64_t ldc, int64_t sc,
               int64_t batch);

}  // namespace tsr::cuda
