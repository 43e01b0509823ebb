// MatMul and Gemm through cuBLAS (batched, transposes as operations, no TF32), Conv as im2col +
// cuBLAS GEMM (group 1; a 1x1 stride-1 unpadded conv skips im2col) or a direct kernel (groups,
// depthwise). 1-D convolutions run as 2-D with H = KH = 1.
#include <climits>

#include <cublas_v2.h>

#include "backends/cuda/ops/common.h"
#include "backends/device_common/matmul.h"

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

bool conv_rank_ok(const Shape& x) { return x.size() == 3 || x.size() == 4; }

Expected<k::ConvGeom> conv_geometry(const exec::DeviceKernelContext& ctx, const ir::Node& node, const Shape& x, const Shape& w,
                                    const Shape& y) {
  if (!conv_rank_ok(x) || w.size() != x.size() || y.size() != x.size())
    return ctx.error("conv shapes ", shape_str(x), ", ", shape_str(w), ", ", shape_str(y), " are not 1-D or 2-D NC(H)W");
  const bool one_d = x.size() == 3;
  const size_t nsp = one_d ? 1 : 2;
  k::ConvGeom g{};
  g.N = x[0];
  g.C = x[1];
  g.H = one_d ? 1 : x[2];
  g.W = x.back();
  g.M = y[1];
  g.OH = one_d ? 1 : y[2];
  g.OW = y.back();
  g.KH = one_d ? 1 : w[2];
  g.KW = w.back();
  const std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(nsp, 1));
  const std::vector<int64_t> dil = node.attr_ints("dilations", std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * nsp, 0));
  if (strides.size() != nsp || dil.size() != nsp || pads.size() != 2 * nsp)
    return ctx.error("strides/dilations/pads do not match ", nsp, " spatial dims");
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const int64_t in_sp[2] = {g.H, g.W}, out_sp[2] = {g.OH, g.OW}, k_sp[2] = {g.KH, g.KW};
  for (size_t d = 0; d < nsp; ++d) {
    const size_t i = one_d ? 1 : d;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, (out_sp[i] - 1) * strides[d] + (k_sp[i] - 1) * dil[d] + 1 - in_sp[i]);
      pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad == "VALID") {
      pads[d] = 0;
    }
  }
  g.sh = one_d ? 1 : strides[0];
  g.sw = strides.back();
  g.dh = one_d ? 1 : dil[0];
  g.dw = dil.back();
  g.ph = one_d ? 0 : pads[0];
  g.pw = pads[nsp - 1];
  g.group = node.attr_int("group", 1);
  if (g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1) return ctx.error("strides and dilations must be >= 1");
  if (g.group <= 0 || g.C % g.group || g.M % g.group) return ctx.error("group ", g.group, " does not divide the channels");
  if (w[1] * g.group != g.C) return ctx.error("weights ", shape_str(w), " do not match ", g.C, " input channels");
  return g;
}

namespace {

class MatMulKernel final : public exec::DeviceKernel {
 public:
  explicit MatMulKernel(const exec::KernelInit&) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& a = *ctx.device_input(0);
    const exec::DeviceTensor& b = *ctx.device_input(1);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    TSR_ASSIGN_OR_RETURN(const device_common::MatMulGeom g, device_common::matmul_geometry(ctx, a.shape, b.shape, "CUDA"));
    return gemm_rm(ctx, false, false, g.M, g.N, g.K, 1.0f, ptr(a), g.K, g.sa, ptr(b), g.N, g.sb, 0.0f, ptr(*y), g.N, g.M * g.N,
                   g.batch);
  }
};

class GemmKernel final : public exec::DeviceKernel {
 public:
  explicit GemmKernel(const exec::KernelInit& init)
      : ta_(init.node.attr_int("transA", 0) != 0), tb_(init.node.attr_int("transB", 0) != 0),
        alpha_(static_cast<float>(init.node.attr_float("alpha", 1.0))),
        beta_(static_cast<float>(init.node.attr_float("beta", 1.0))) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& a = *ctx.device_input(0);
    const exec::DeviceTensor& b = *ctx.device_input(1);
    const exec::DeviceTensor* c = ctx.device_input(2);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    if (a.shape.size() != 2 || b.shape.size() != 2) return ctx.error("Gemm operands must be matrices");
    const int64_t M = y->shape[0], N = y->shape[1], K = ta_ ? a.shape[0] : a.shape[1];
    float beta = 0;
    if (c && beta_ != 0) {  // Y = broadcast(C), then the GEMM accumulates onto it
      k::Strided st;
      TSR_RETURN_IF_ERROR(set_broadcast(ctx, st, 0, c->shape, y->shape));
      std::vector<int64_t> is(2), os = {N, 1};
      for (size_t d = 0; d < 2; ++d) is[d] = st.s[0][d];
      TSR_RETURN_IF_ERROR(copy_strided(ctx, *c, *y, y->shape, is, 0, os, 0));
      beta = beta_;
    }
    return gemm_rm(ctx, ta_, tb_, M, N, K, alpha_, ptr(a), a.shape[1], 0, ptr(b), b.shape[1], 0, beta, ptr(*y), N, 0, 1);
  }

 private:
  bool ta_, tb_;
  float alpha_, beta_;
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
