// Helpers shared by the CUDA op families (host side; not part of the backend's interface).
#pragma once

#include <algorithm>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "backends/device_common/host_inputs.h"
#include "backends/cuda/kernels/launch.h"

namespace tsr::cuda {

// The device-independent helpers, shared with the other device backends.
using device_common::dense_strides;
using device_common::host_ints;
using device_common::host_scalar;
using device_common::make_kernel;
using device_common::norm_axis;
using device_common::numel_of;

// The add(name, host_inputs, check, factory) callback of device_common's register_*_ops.
inline auto table_adder(CuOpTable& t) {
  return [&t](const char* name, uint32_t host, auto check, auto create) { t[name] = {host, 0, check, create}; };
}

inline CudaBackend& cu(exec::DeviceKernelContext& ctx) { return static_cast<CudaBackend&>(ctx.backend()); }
inline cudaStream_t stream_of(exec::DeviceKernelContext& ctx) { return reinterpret_cast<cudaStream_t>(cu(ctx).stream()); }

template <typename T = float> T* ptr(const exec::DeviceTensor& t) { return static_cast<T*>(CudaBackend::data(t)); }

// The status of a launcher call, naming the node.
inline Status launched(exec::DeviceKernelContext& ctx, cudaError_t e) {
  return CudaBackend::check(static_cast<int>(e), ctx.place());
}

// Broadcast strides of `in` against the output shape `out` (numpy rules: leading dims padded,
// dims of 1 get stride 0) into st.s[j]; st.shape/rank = out. kUnsupported past kMaxRank.
inline Status set_broadcast(const exec::DeviceKernelContext& ctx, k::Strided& st, int j, const Shape& in, const Shape& out) {
  if (out.size() > static_cast<size_t>(k::kMaxRank) || in.size() > out.size())
    return unsupported(ctx.place(), ": rank ", out.size(), " exceeds the CUDA kernels' ", k::kMaxRank);
  st.rank = static_cast<int32_t>(out.size());
  const std::vector<int64_t> s = dense_strides(in);
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < out.size(); ++d) {
    st.shape[d] = out[d];
    st.s[j][d] = d < lead || in[d - lead] == 1 ? 0 : s[d - lead];
  }
  return ok_status();
}

// Records y[oo + window . os] = x[io + window . is] over `shape` (element strides / offsets).
inline Status copy_strided(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& y,
                           const Shape& shape, const std::vector<int64_t>& is, int64_t io, const std::vector<int64_t>& os,
                           int64_t oo) {
  if (shape.size() > static_cast<size_t>(k::kMaxRank))
    return unsupported(ctx.place(), ": copy of rank ", shape.size(), " (at most ", k::kMaxRank, ")");
  k::Strided st;
  st.rank = static_cast<int32_t>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    st.shape[d] = shape[d];
    st.s[0][d] = is[d];
    st.s[1][d] = os[d];
  }
  const int eb = static_cast<int>(dtype_size(x.dtype));
  return launched(ctx, k::copy_strided(stream_of(ctx), st, CudaBackend::data(x), io, CudaBackend::data(y), oo, numel_of(shape), eb));
}

}  // namespace tsr::cuda

namespace tsr::cuda {

// Row-major batched C[b] = alpha op(A[b]) op(B[b]) + beta C[b] through cuBLAS (col-major, so it
// computes C^T = op(B)^T op(A)^T). lda/ldb/ldc: the stored row lengths; sa/sb/sc: the batch
// strides (0 = shared). beta == 0 never reads C. Defined in linear.cpp.
Status gemm_rm(exec::DeviceKernelContext& ctx, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
               int64_t lda, int64_t sa, const float* B, int64_t ldb, int64_t sb, float beta, float* C, int64_t ldc, int64_t sc,
               int64_t batch);

// Conv geometry of a Conv / ConvGradInput / ConvGradWeight node: x [N, C, (H,) W], w [M, C/group,
// (KH,) KW], y [N, M, (OH,) OW]; pads from `pads` or auto_pad. Defined in linear.cpp.
Expected<k::ConvGeom> conv_geometry(const exec::DeviceKernelContext& ctx, const ir::Node& node, const Shape& x, const Shape& w,
                                    const Shape& y);
// Whether a conv-family node's shapes are ones the CUDA kernels take (rank 3 or 4).
bool conv_rank_ok(const Shape& x);

// Pool geometry of a MaxPool / AveragePool / MaxPoolGrad node (x [N, C, (H,) W] -> y). Defined in
// reduce.cpp. mode: k::PoolGeom::mode.
Expected<k::PoolGeom> pool_geometry(const exec::DeviceKernelContext& ctx, const ir::Node& node, const Shape& x, const Shape& y,
                                    int32_t mode);

}  // namespace tsr::cuda
