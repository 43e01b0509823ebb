// MatMul and Gemm through cuBLAS (batched, transposes as operations, no TF32), Conv as im2col +
// cuBLAS GEMM (group 1; a 1x1 stride-1 unpadded conv skips im2col) or a direct kernel (groups,
// depthwise). 1-D convolutions run as 2-D with H = KH = 1.
#include <climits>

#include <cublas_v2.h>

#include "backends/cuda/cublas_api.h"
#include "backends/cuda/ops/common.h"
#include "backends/device_common/linear.h"

namespace tsr::cuda {

Status gemm_rm(exec::DeviceKernelContext& ctx, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
               int64_t lda, int64_t sa, const float* B, int64_t ldb, int64_t sb, float beta, float* C, int64_t ldc, int64_t sc,
               int64_t batch) {
  if (M == 0 || N == 0 || batch == 0) return ok_status();
  for (int64_t v : {M, N, K, lda, ldb, ldc, batch})
    if (v > INT_MAX) return unsupported(ctx.place(), ": GEMM dimension ", v, " exceeds cuBLAS's 32-bit sizes");
  if (K == 0) {  // an empty sum: C = beta C
    if (beta != 0) return unsupported(ctx.place(), ": GEMM with K = 0 and beta != 0");
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t m = 0; m < M; ++m)
        TSR_RETURN_IF_ERROR(launched(ctx, k::fill(stream_of(ctx), C + b * sc + m * ldc, 0.0f, N)));
    return ok_status();
  }
  auto h = reinterpret_cast<cublasHandle_t>(cu(ctx).cublas());
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const auto st = cu(ctx).blas().sgemm_strided_batched(
      h, opb, opa, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha, B, static_cast<int>(ldb), sb, A,
      static_cast<int>(lda), sa, &beta, C, static_cast<int>(ldc), sc, static_cast<int>(batch));
  return CudaBackend::check_cublas(st, ctx.place());
}

namespace {

struct CudaLinear : CudaPolicy {
  static Status matmul(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& a, const exec::DeviceTensor& b,
                       exec::DeviceTensor& y, const device_common::MatMulGeom& g) {
    return gemm_rm(ctx, false, false, g.M, g.N, g.K, 1.0f, ptr(a), g.K, g.sa, ptr(b), g.N, g.sb, 0.0f, ptr(y), g.N, g.M * g.N,
                   g.batch);
  }
  static Status gemm(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& a, const exec::DeviceTensor& b,
                     const exec::DeviceTensor* c, exec::DeviceTensor& y, const device_common::GemmGeom& g) {
    float beta = 0;
    if (c && g.beta != 0) {  // Y = broadcast(C), then the GEMM accumulates onto it
      TSR_RETURN_IF_ERROR(copy_strided(ctx, *c, y, y.shape, {g.c_rs, g.c_cs}, 0, {g.N, 1}, 0));
      beta = g.beta;
    }
    return gemm_rm(ctx, g.ta, g.tb, g.M, g.N, g.K, g.alpha, ptr(a), g.lda, 0, ptr(b), g.ldb, 0, beta, ptr(y), g.N, 0, 1);
  }
  // Group 1: im2col (skipped for a 1x1 stride-1 unpadded conv) + one batched GEMM over the
  // images; other groups: the direct kernel.
  static Status conv(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& x, const exec::DeviceTensor& w,
                     const exec::DeviceTensor* bias, exec::DeviceTensor& y, const k::ConvGeom& g) {
    const cudaStream_t s = stream_of(ctx);
    if (g.group != 1) return launched(ctx, k::conv_direct(s, g, ptr(x), ptr(w), bias ? ptr(*bias) : nullptr, ptr(y)));
    const int64_t P = g.OH * g.OW, CKK = g.C * g.KH * g.KW;
    float beta = 0;
    if (bias) {  // y[n, m, p] = bias[m], then the GEMM accumulates
      TSR_RETURN_IF_ERROR(copy_strided(ctx, *bias, y, {g.N, g.M, P}, {0, 1, 0}, 0, {g.M * P, P, 1}, 0));
      beta = 1;
    }
    const bool direct = g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.OH == g.H &&
                        g.OW == g.W;
    exec::DeviceTensor col;
    const float* cols = ptr(x);
    if (!direct) {
      TSR_ASSIGN_OR_RETURN(col, cu(ctx).scratch(DType::kF32, {g.N, CKK, P}));
      TSR_RETURN_IF_ERROR(launched(ctx, k::im2col(s, g, ptr(x), ptr(col))));
      cols = ptr(col);
    }
    // y[n] [M, P] = W [M, CKK] . col[n] [CKK, P]; `col` is freed after the last recorded use.
    return gemm_rm(ctx, false, false, g.M, P, CKK, 1.0f, ptr(w), CKK, 0, cols, P, CKK * P, beta, ptr(y), P, g.M * P, g.N);
  }
};

}  // namespace

}  // namespace tsr::cuda

// This backend's instance of the family (declared in device_common/op_table.h).
template <>
void tsr::device_common::register_linear<tsr::cuda::CudaBackend>(OpTable<cuda::CudaBackend>& t) {
  register_linear_ops<cuda::CudaLinear>(t);
}
