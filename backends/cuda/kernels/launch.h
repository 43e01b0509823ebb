// The CUDA kernels' launchers: the only interface between the device code (kernels/*.cu, compiled
// by nvcc as CUDA C++17, which sees no Tessera header but this one and the plain geometry structs
// of backends/device_common/geometry.h) and the host code (ops/*.cpp).
//
// Conventions, for every launcher:
//   - tensors are dense, row-major, f32 unless named otherwise (u8 = bool, i32 = indices);
//   - shapes and strides are in elements, rank <= kMaxRank, with the output's rank: an input's
//     stride is 0 along a dim it is broadcast over;
//   - work is enqueued on `s` and never waited for; the return value is the launch status
//     (cudaGetLastError), not the kernels' completion;
//   - n == 0 launches nothing.
// Thread safety: none needed (pure functions of their arguments).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "backends/device_common/geometry.h"

namespace tsr::cuda::k {

using device_common::ConvGeom;
using device_common::kMaxRank;
using device_common::PoolGeom;
using device_common::ResizeGeom;

// Shape of the output and element strides of up to three inputs (broadcast dims: stride 0).
struct Strided {
  int32_t rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t s[3][kMaxRank] = {};
};

// ---- elementwise.cu ----
enum class Unary : int32_t {
  kRelu, kSigmoid, kTanh, kExp, kLog, kSqrt, kAbs, kNeg, kReciprocal, kHardSigmoid, kHardSwish, kLeakyRelu,
  kClip, kErf, kFloor, kCeil, kSoftplus, kElu, kSin, kCos, kRound, kSign, kGelu, kSoftsign
};
// y = f(x) elementwise (a, b: the op's attributes: alpha/beta, min/max).
cudaError_t unary(cudaStream_t s, Unary op, float a, float b, const float* x, float* y, int64_t n);

enum class Binary : int32_t { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kPRelu };
// y = a (op) b with broadcasting: st.s[0] for a, st.s[1] for b; y dense in st.shape.
cudaError_t binary(cudaStream_t s, Binary op, const Strided& st, const float* a, const float* b, float* y, int64_t n);

enum class Compare : int32_t { kGreater, kLess, kEqual, kGreaterOrEqual, kLessOrEqual };
// y (u8 0/1) = a (op) b with broadcasting as binary().
cudaError_t compare(cudaStream_t s, Compare op, const Strided& st, const float* a, const float* b, uint8_t* y, int64_t n);

// y = cond ? x : z with broadcasting: st.s[0] cond (u8), st.s[1] x, st.s[2] z.
cudaError_t where(cudaStream_t s, const Strided& st, const uint8_t* cond, const float* x, const float* z, float* y, int64_t n);

// y[i] = value for i < n.
cudaError_t fill(cudaStream_t s, float* y, float value, int64_t n);

// y[oo + sum_d i_d * os_d] = x[io + sum_d i_d * is_d] over the index space st.shape, with
// st.s[0] = is and st.s[1] = os. Elements are `elem_bytes` (1, 4 or 8) wide.
cudaError_t copy_strided(cudaStream_t s, const Strided& st, const void* x, int64_t io, void* y, int64_t oo, int64_t n,
                         int elem_bytes);

// y[o, j, i] = x[o, idx[j], i] with idx already wrapped and range-checked (i32).
cudaError_t gather(cudaStream_t s, const float* x, const int32_t* idx, float* y, int64_t outer, int64_t axis_len,
                   int64_t n_idx, int64_t inner);

// y = x * scale[c] + shift[c] with c = (i / inner) % C (inference BatchNormalization, folded).
cudaError_t channel_affine(cudaStream_t s, const float* x, const float* scale, const float* shift, float* y, int64_t n,
                           int64_t C, int64_t inner);

// Resize of the last two dims of NC planes (ResizeGeom: device_common/geometry.h).
cudaError_t resize(cudaStream_t s, const ResizeGeom& p, const float* x, float* y);

// One optimizer step on n elements (core/ops/families/optimizer.cpp), in double like the CPU:
//   adamw = 1 (tessera AdamW): x' = x (1 - lr wd) - lr (m' c1) / (sqrt(v' c2) + eps),
//          m' = b1 m + (1 - b1) g, v' = b2 v + (1 - b2) g^2, c1/c2 the bias corrections;
//   adamw = 0 (ONNX Adam):     g' = norm x + g, m' = b1 m + (1 - b1) g', v' = b2 v + (1 - b2) g'^2,
//          x' = (1 - post) (x - r m' / (sqrt(v') + eps)) with r = lr (corrected), c1/c2 unused.
struct AdamParams {
  int32_t adamw;
  double lr, b1, b2, eps, c1, c2, decay, norm, post;
};
cudaError_t adam(cudaStream_t s, const AdamParams& p, const float* x, const float* g, const float* m, const float* v,
                 float* xo, float* mo, float* vo, int64_t n);

// ---- nn.cu ----
// Convolutions (ConvGeom: device_common/geometry.h).
// col[n][(c*KH + kh)*KW + kw][oh*OW + ow] = x[n, c, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] (0 outside),
// for c in [0, C) (group 1), n in [0, N).
cudaError_t im2col(cudaStream_t s, const ConvGeom& g, const float* x, float* col);
// The adjoint: dx[n, c, ih, iw] = sum of the col entries that im2col read from it (writes all of dx).
cudaError_t col2im(cudaStream_t s, const ConvGeom& g, const float* col, float* dx);
// Direct convolution (any group), one output element per thread; bias may be null.
cudaError_t conv_direct(cudaStream_t s, const ConvGeom& g, const float* x, const float* w, const float* bias, float* y);

// Pooling over H, W of NC planes (PoolGeom: device_common/geometry.h).
cudaError_t pool(cudaStream_t s, const PoolGeom& g, const float* x, float* y);
// MaxPoolGrad: dx = 0, then each dy element is added to its window's first maximal tap.
cudaError_t max_pool_grad(cudaStream_t s, const PoolGeom& g, const float* x, const float* dy, float* dx);

// Softmax / LogSoftmax over rows of `len` elements `inner` apart; rows = outer * inner.
cudaError_t softmax(cudaStream_t s, const float* x, float* y, int64_t rows, int64_t len, int64_t inner, bool log);

// Reduction of x (shape[rank]) over the dims set in `mask`; y has the kept dims in order.
enum class Reduce : int32_t { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };
cudaError_t reduce(cudaStream_t s, Reduce op, const int64_t* shape, int32_t rank, uint32_t mask, const float* x, float* y,
                   int64_t n_out);

// Softmax cross-entropy over scores [N, C, D] with targets t (i32, [N, D]; -1 = ignored, already
// range-checked on the host):
//   loss:  per-position loss l[p] = -(logp[n, t, d]) (0 where ignored) into `pos_loss` [N*D], then
//          y = reduction "none": pos_loss; "sum": sum; "mean": sum / count, count = non-ignored
//          (0 when count = 0). reduction: 0 none, 1 sum, 2 mean. logp (optional, [N, C, D]).
//   grad:  dx[n, k, d] = c_p (softmax(x)[n, k, d] - [k = t_p]) with c_p = 0 where ignored, else
//          dl[p] (none) or dl[0] / (mean ? count : 1).
cudaError_t sce_loss(cudaStream_t s, const float* x, const int32_t* t, int64_t N, int64_t C, int64_t D, int32_t reduction,
                     float count, float* pos_loss, float* logp, float* y);
cudaError_t sce_grad(cudaStream_t s, const float* dl, const float* x, const int32_t* t, int64_t N, int64_t C, int64_t D,
                     int32_t reduction, float count, float* dx);

}  // namespace tsr::cuda::k
