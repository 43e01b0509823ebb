// MatMul and Gemm through cuBLAS (batched, transposes as operations, no TF32), Conv as im2col +
// cuBLAS GEMM (group 1; a 1x1 stride-1 unpadded conv skips im2col) or a direct kernel (groups,
// depthwise). 1-D convolutions run as 2-D with H = KH = 1.
#include <climits>

#include <cublas_v2.h>

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
  const auto st = cublasSgemmStridedBatched(h, opb, opa, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha, B,
                                            static_cast<int>(ldb), sb, A, static_cast<int>(lda), sa, &beta, C,
                                            static_cast<int>(ldc), sc, static_cast<int>(batch));
  return CudaBackend::check_cublas(st, ctx.place());
}

bool conv_rank_ok(const Shape& x) { return device_common::conv_rank_ok(x); }

Expected<k::ConvGeom> conv_geometry(const exec::DeviceKernelContext& ctx, const ir::Node& node, const Shape& x, const Shape& w,
                                    const Shape& y) {
  TSR_ASSIGN_OR_RETURN(const device_common::ConvGeom g, device_common::conv_geometry(ctx, node, x, w, y));
  return k::ConvGeom{g.N, g.C, g.H, g.W, g.M, g.OH, g.OW, g.KH, g.KW, g.sh, g.sw, g.dh, g.dw, g.ph, g.pw, g.group};
}

namespace {

struct CudaMatMul {
  static constexpr const char* kName = "CUDA";
  static Status matmul(exec::DeviceKernelContext& ctx, const exec::DeviceTensor& a, const exec::DeviceTensor& b,
                       exec::DeviceTensor& y, const device_common::MatMulGeom& g) {
    return gemm_rm(ctx, false, false, g.M, g.N, g.K, 1.0f, ptr(a), g.K, g.sa, ptr(b), g.N, g.sb, 0.0f, ptr(y), g.N, g.M * g.N,
                   g.batch);
  }
};
using MatMulKernel = device_common::MatMulKernel<CudaMatMul>;

class GemmKernel final : public exec::DeviceKernel {
 public:
  explicit GemmKernel(const exec::KernelInit& init) : attrs_(device_common::gemm_attrs(init.node)) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& a = *ctx.device_input(0);
    const exec::DeviceTensor& b = *ctx.device_input(1);
    const exec::DeviceTensor* c = ctx.device_input(2);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    if (a.shape.size() != 2 || b.shape.size() != 2) return ctx.error("Gemm operands must be matrices");
    const int64_t M = y->shape[0], N = y->shape[1], K = attrs_.ta ? a.shape[0] : a.shape[1];
    float beta = 0;
    if (c && attrs_.beta != 0) {  // Y = broadcast(C), then the GEMM accumulates onto it
      k::Strided st;
      TSR_RETURN_IF_ERROR(set_broadcast(ctx, st, 0, c->shape, y->shape));
      std::vector<int64_t> is(2), os = {N, 1};
      for (size_t d = 0; d < 2; ++d) is[d] = st.s[0][d];
      TSR_RETURN_IF_ERROR(copy_strided(ctx, *c, *y, y->shape, is, 0, os, 0));
      beta = attrs_.beta;
    }
    return gemm_rm(ctx, attrs_.ta, attrs_.tb, M, N, K, attrs_.alpha, ptr(a), a.shape[1], 0, ptr(b), b.shape[1], 0, beta, ptr(*y),
                   N, 0, 1);
  }

 private:
  device_common::GemmAttrs attrs_;
};

bool conv_check(const ir::Node&, const std::vector<ops::ValueType>& in) {
  return conv_rank_ok(in[0].shape) && in[1].has_shape && in[1].shape.size() == in[0].shape.size();
}

class ConvKernel final : public exec::DeviceKernel {
 public:
  explicit ConvKernel(const exec::KernelInit& init) : node_(init.node) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& x = *ctx.device_input(0);
    const exec::DeviceTensor& w = *ctx.device_input(1);
    const exec::DeviceTensor* bias = ctx.device_input(2);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    TSR_ASSIGN_OR_RETURN(const k::ConvGeom g, conv_geometry(ctx, node_, x.shape, w.shape, y->shape));
    if (bias && bias->numel() != g.M) return ctx.error("bias has ", bias->numel(), " elements for ", g.M, " output channels");
    const cudaStream_t s = stream_of(ctx);
    if (g.group != 1) return launched(ctx, k::conv_direct(s, g, ptr(x), ptr(w), bias ? ptr(*bias) : nullptr, ptr(*y)));
    const int64_t P = g.OH * g.OW, CKK = g.C * g.KH * g.KW;
    float beta = 0;
    if (bias) {  // y[n, m, p] = bias[m], then the GEMM accumulates
      TSR_RETURN_IF_ERROR(copy_strided(ctx, *bias, *y, {g.N, g.M, P}, {0, 1, 0}, 0, {g.M * P, P, 1}, 0));
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
    return gemm_rm(ctx, false, false, g.M, P, CKK, 1.0f, ptr(w), CKK, 0, cols, P, CKK * P, beta, ptr(*y), P, g.M * P, g.N);
  }

 private:
  const ir::Node& node_;
};

}  // namespace

void register_linear(CuOpTable& t) {
  t["MatMul"] = {0, 0, &device_common::matmul_check, &make_kernel<MatMulKernel>};
  t["Gemm"] = {0, 0, nullptr, &make_kernel<GemmKernel>};
  t["Conv"] = {0, 0, &conv_check, &make_kernel<ConvKernel>};
}

}  // namespace tsr::cuda
