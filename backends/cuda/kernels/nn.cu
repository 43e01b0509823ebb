// Convolution (im2col / col2im for cuBLAS, direct for groups), pooling and its gradient, softmax,
// reductions and the softmax cross-entropy loss (launch.h documents each launcher's contract).
// Sums accumulate in double, as the CPU reference does where it matters (long reductions, means).
#include <cfloat>
#include <cmath>

#include "backends/cuda/kernels/common.cuh"

namespace tsr::cuda::k {

namespace {

__global__ void im2col_kernel(ConvGeom g, const float* __restrict__ x, float* __restrict__ col, int64_t n) {
  const int64_t P = g.OH * g.OW, KK = g.KH * g.KW, rows = g.C * KK;
  TSR_GRID_LOOP(i, n) {
    const int64_t p = i % P, row = (i / P) % rows, b = i / (P * rows);
    const int64_t c = row / KK, kh = (row % KK) / g.KW, kw = row % g.KW;
    const int64_t ih = (p / g.OW) * g.sh - g.ph + kh * g.dh, iw = (p % g.OW) * g.sw - g.pw + kw * g.dw;
    col[i] = (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) ? x[((b * g.C + c) * g.H + ih) * g.W + iw] : 0.0f;
  }
}

__global__ void col2im_kernel(ConvGeom g, const float* __restrict__ col, float* __restrict__ dx, int64_t n) {
  const int64_t P = g.OH * g.OW, KK = g.KH * g.KW, rows = g.C * KK;
  TSR_GRID_LOOP(i, n) {
    const int64_t iw = i % g.W, ih = (i / g.W) % g.H, c = (i / (g.W * g.H)) % g.C, b = i / (g.W * g.H * g.C);
    const float* cb = col + b * rows * P;
    double acc = 0;
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const int64_t th = ih + g.ph - kh * g.dh;
      if (th < 0 || th % g.sh != 0 || th / g.sh >= g.OH) continue;
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        const int64_t tw = iw + g.pw - kw * g.dw;
        if (tw < 0 || tw % g.sw != 0 || tw / g.sw >= g.OW) continue;
        acc += cb[((c * g.KH + kh) * g.KW + kw) * P + (th / g.sh) * g.OW + tw / g.sw];
      }
    }
    dx[i] = static_cast<float>(acc);
  }
}

__global__ void conv_direct_kernel(ConvGeom g, const float* __restrict__ x, const float* __restrict__ w,
                                   const float* __restrict__ bias, float* __restrict__ y, int64_t n) {
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  TSR_GRID_LOOP(i, n) {
    const int64_t ow = i % g.OW, oh = (i / g.OW) % g.OH, m = (i / (g.OW * g.OH)) % g.M, b = i / (g.OW * g.OH * g.M);
    const int64_t grp = m / mg;
    float acc = bias ? bias[m] : 0.0f;
    const int64_t ih0 = oh * g.sh - g.ph, iw0 = ow * g.sw - g.pw;
    for (int64_t ic = 0; ic < cg; ++ic) {
      const float* xp = x + (b * g.C + grp * cg + ic) * g.H * g.W;
      const float* wp = w + (m * cg + ic) * g.KH * g.KW;
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        const int64_t ih = ih0 + kh * g.dh;
        if (ih < 0 || ih >= g.H) continue;
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const int64_t iw = iw0 + kw * g.dw;
          if (iw < 0 || iw >= g.W) continue;
          acc += xp[ih * g.W + iw] * wp[kh * g.KW + kw];
        }
      }
    }
    y[i] = acc;
  }
}

// The window of output (nc, oh, ow): visits taps in (kh, kw) order, cut at the end pads.
struct Window {
  float acc;
  int64_t count, padded, arg;  // arg: flat input index of the first maximal tap (-1: none)
};

__device__ Window scan_window(const PoolGeom& g, const float* x, int64_t nc, int64_t oh, int64_t ow) {
  Window r{g.mode == 0 ? -FLT_MAX : 0.0f, 0, 0, -1};
  const int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  for (int64_t kh = 0; kh < g.KH; ++kh) {
    const int64_t ih = h0 + kh * g.dh;
    if (ih >= g.H + g.peh) break;
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t iw = w0 + kw * g.dw;
      if (iw >= g.W + g.pew) break;
      ++r.padded;
      if (ih < 0 || iw < 0 || ih >= g.H || iw >= g.W) continue;
      const int64_t at = (nc * g.H + ih) * g.W + iw;
      const float v = x[at];
      if (g.mode == 0) {
        if (r.arg < 0 || v > r.acc) {
          r.acc = v;
          r.arg = at;
        }
      } else {
        r.acc += v;
      }
      ++r.count;
    }
  }
  return r;
}

__global__ void pool_kernel(PoolGeom g, const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  TSR_GRID_LOOP(i, n) {
    const int64_t ow = i % g.OW, oh = (i / g.OW) % g.OH, nc = i / (g.OW * g.OH);
    const Window r = scan_window(g, x, nc, oh, ow);
    float v = r.acc;
    if (g.mode == 1) v /= static_cast<float>(r.padded > 0 ? r.padded : 1);
    if (g.mode == 2) v /= static_cast<float>(r.count > 0 ? r.count : 1);
    y[i] = v;
  }
}

__global__ void max_pool_grad_kernel(PoolGeom g, const float* __restrict__ x, const float* __restrict__ dy,
                                     float* __restrict__ dx, int64_t n) {
  TSR_GRID_LOOP(i, n) {
    const int64_t ow = i % g.OW, oh = (i / g.OW) % g.OH, nc = i / (g.OW * g.OH);
    const Window r = scan_window(g, x, nc, oh, ow);
    if (r.arg >= 0) atomicAdd(dx + r.arg, dy[i]);
  }
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t len,
                               int64_t inner, bool log_softmax) {
  TSR_GRID_LOOP(r, rows) {
    const int64_t base = (r / inner) * len * inner + r % inner;
    float m = -FLT_MAX;
    for (int64_t k = 0; k < len; ++k) m = fmaxf(m, x[base + k * inner]);
    double s = 0;
    for (int64_t k = 0; k < len; ++k) s += exp(static_cast<double>(x[base + k * inner] - m));
    const double ls = log(s);
    for (int64_t k = 0; k < len; ++k) {
      const double v = static_cast<double>(x[base + k * inner] - m);
      y[base + k * inner] = static_cast<float>(log_softmax ? v - ls : exp(v) / s);
    }
  }
}

struct ReduceShape {
  int64_t shape[kMaxRank], stride[kMaxRank];
  int32_t rank;
  uint32_t mask;
  int64_t count;
};

// Offset of the output element o's first input element, and of the j-th reduced element from it.
__device__ int64_t kept_offset(const ReduceShape& rs, int64_t o) {
  int64_t off = 0;
  for (int d = rs.rank - 1; d >= 0; --d) {
    if (rs.mask >> d & 1u) continue;
    off += (o % rs.shape[d]) * rs.stride[d];
    o /= rs.shape[d];
  }
  return off;
}
__device__ int64_t reduced_offset(const ReduceShape& rs, int64_t j) {
  int64_t off = 0;
  for (int d = rs.rank - 1; d >= 0; --d) {
    if (!(rs.mask >> d & 1u)) continue;
    off += (j % rs.shape[d]) * rs.stride[d];
    j /= rs.shape[d];
  }
  return off;
}

__device__ double reduce_init(Reduce op) {
  return op == Reduce::kMax ? -DBL_MAX : (op == Reduce::kMin ? DBL_MAX : (op == Reduce::kProd ? 1.0 : 0.0));
}
__device__ double reduce_step(Reduce op, double acc, double v, double m) {
  switch (op) {
    case Reduce::kMax: return fmax(acc, v);
    case Reduce::kMin: return fmin(acc, v);
    case Reduce::kProd: return acc * v;
    case Reduce::kSumSquare:
    case Reduce::kL2: return acc + v * v;
    case Reduce::kL1: return acc + fabs(v);
    case Reduce::kLogSumExp: return acc + exp(v - m);
    default: return acc + v;
  }
}
__device__ double reduce_combine(Reduce op, double a, double b) {
  switch (op) {
    case Reduce::kMax: return fmax(a, b);
    case Reduce::kMin: return fmin(a, b);
    case Reduce::kProd: return a * b;
    default: return a + b;
  }
}
__device__ float reduce_final(Reduce op, double acc, double m, int64_t count) {
  switch (op) {
    case Reduce::kMean: return static_cast<float>(acc / static_cast<double>(count));
    case Reduce::kL2: return static_cast<float>(sqrt(acc));
    case Reduce::kLogSum: return static_cast<float>(log(acc));
    case Reduce::kLogSumExp: return static_cast<float>(log(acc) + m);
    default: return static_cast<float>(acc);
  }
}

// Few reduced elements: one thread per output.
__global__ void reduce_thread_kernel(Reduce op, ReduceShape rs, const float* __restrict__ x, float* __restrict__ y,
                                     int64_t n_out) {
  TSR_GRID_LOOP(o, n_out) {
    const float* xb = x + kept_offset(rs, o);
    double m = 0;
    if (op == Reduce::kLogSumExp) {
      m = -DBL_MAX;
      for (int64_t j = 0; j < rs.count; ++j) m = fmax(m, static_cast<double>(xb[reduced_offset(rs, j)]));
    }
    double acc = reduce_init(op);
    for (int64_t j = 0; j < rs.count; ++j) acc = reduce_step(op, acc, xb[reduced_offset(rs, j)], m);
    y[o] = reduce_final(op, acc, m, rs.count);
  }
}

// Many reduced elements: one block of kBlock threads per output, a tree in shared memory.
__device__ double block_combine(Reduce op, double v, double* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int w = kBlock / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) sh[threadIdx.x] = reduce_combine(op, sh[threadIdx.x], sh[threadIdx.x + w]);
    __syncthreads();
  }
  const double r = sh[0];
  __syncthreads();  // sh is reused by the next call
  return r;
}

__global__ void reduce_block_kernel(Reduce op, ReduceShape rs, const float* __restrict__ x, float* __restrict__ y,
                                    int64_t n_out) {
  __shared__ double sh[kBlock];
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    const float* xb = x + kept_offset(rs, o);
    double m = 0;
    if (op == Reduce::kLogSumExp) {
      double lm = -DBL_MAX;
      for (int64_t j = threadIdx.x; j < rs.count; j += kBlock) lm = fmax(lm, static_cast<double>(xb[reduced_offset(rs, j)]));
      m = block_combine(Reduce::kMax, lm, sh);
    }
    double acc = reduce_init(op);
    for (int64_t j = threadIdx.x; j < rs.count; j += kBlock) acc = reduce_step(op, acc, xb[reduced_offset(rs, j)], m);
    acc = block_combine(op == Reduce::kLogSumExp ? Reduce::kSum : op, acc, sh);
    if (threadIdx.x == 0) y[o] = reduce_final(op, acc, m, rs.count);
  }
}

// Per position p = (n, d): the log-sum-exp over the C classes and the target's loss.
__global__ void sce_pos_kernel(const float* __restrict__ x, const int32_t* __restrict__ t, int64_t N, int64_t C,
                               int64_t D, float* __restrict__ pos_loss, float* __restrict__ logp) {
  TSR_GRID_LOOP(p, N * D) {
    const int64_t n = p / D, d = p % D, base = n * C * D + d;
    float m = -FLT_MAX;
    for (int64_t k = 0; k < C; ++k) m = fmaxf(m, x[base + k * D]);
    double s = 0;
    for (int64_t k = 0; k < C; ++k) s += exp(static_cast<double>(x[base + k * D] - m));
    const double lse = m + log(s);
    if (logp)
      for (int64_t k = 0; k < C; ++k) logp[base + k * D] = static_cast<float>(x[base + k * D] - lse);
    const int32_t tc = t[p];
    pos_loss[p] = tc < 0 ? 0.0f : static_cast<float>(lse - x[base + tc * D]);
  }
}

// One block: y[0] = sum(pos_loss) (/ count for the mean; 0 when count is 0).
__global__ void sce_sum_kernel(const float* __restrict__ pos_loss, int64_t n, int32_t reduction, float count,
                               float* __restrict__ y) {
  __shared__ double sh[kBlock];
  double acc = 0;
  for (int64_t i = threadIdx.x; i < n; i += kBlock) acc += pos_loss[i];
  acc = block_combine(Reduce::kSum, acc, sh);
  if (threadIdx.x == 0) y[0] = static_cast<float>(reduction == 2 ? (count == 0 ? 0.0 : acc / count) : acc);
}

__global__ void sce_grad_kernel(const float* __restrict__ dl, const float* __restrict__ x, const int32_t* __restrict__ t,
                                int64_t N, int64_t C, int64_t D, int32_t reduction, float count, float* __restrict__ dx) {
  TSR_GRID_LOOP(p, N * D) {
    const int64_t n = p / D, d = p % D, base = n * C * D + d;
    const int32_t tc = t[p];
    double coef = 0;
    if (tc >= 0) {
      if (reduction == 0) coef = dl[p];
      else if (reduction == 1) coef = dl[0];
      else coef = count == 0 ? 0.0 : dl[0] / static_cast<double>(count);
    }
    if (coef == 0) {
      for (int64_t k = 0; k < C; ++k) dx[base + k * D] = 0.0f;
      continue;
    }
    float m = -FLT_MAX;
    for (int64_t k = 0; k < C; ++k) m = fmaxf(m, x[base + k * D]);
    double s = 0;
    for (int64_t k = 0; k < C; ++k) s += exp(static_cast<double>(x[base + k * D] - m));
    const double ks = coef / s;
    for (int64_t k = 0; k < C; ++k)
      dx[base + k * D] = static_cast<float>(ks * exp(static_cast<double>(x[base + k * D] - m)) - (k == tc ? coef : 0.0));
  }
}

}  // namespace

cudaError_t im2col(cudaStream_t s, const ConvGeom& g, const float* x, float* col) {
  const int64_t n = g.N * g.C * g.KH * g.KW * g.OH * g.OW;
  if (n == 0) return cudaSuccess;
  im2col_kernel<<<blocks_for(n), kBlock, 0, s>>>(g, x, col, n);
  return launched();
}

cudaError_t col2im(cudaStream_t s, const ConvGeom& g, const float* col, float* dx) {
  const int64_t n = g.N * g.C * g.H * g.W;
  if (n == 0) return cudaSuccess;
  col2im_kernel<<<blocks_for(n), kBlock, 0, s>>>(g, col, dx, n);
  return launched();
}

cudaError_t conv_direct(cudaStream_t s, const ConvGeom& g, const float* x, const float* w, const float* bias, float* y) {
  const int64_t n = g.N * g.M * g.OH * g.OW;
  if (n == 0) return cudaSuccess;
  conv_direct_kernel<<<blocks_for(n), kBlock, 0, s>>>(g, x, w, bias, y, n);
  return launched();
}

cudaError_t pool(cudaStream_t s, const PoolGeom& g, const float* x, float* y) {
  const int64_t n = g.NC * g.OH * g.OW;
  if (n == 0) return cudaSuccess;
  pool_kernel<<<blocks_for(n), kBlock, 0, s>>>(g, x, y, n);
  return launched();
}

cudaError_t max_pool_grad(cudaStream_t s, const PoolGeom& g, const float* x, const float* dy, float* dx) {
  const cudaError_t e = cudaMemsetAsync(dx, 0, static_cast<size_t>(g.NC * g.H * g.W) * sizeof(float), s);
  if (e != cudaSuccess) return e;
  const int64_t n = g.NC * g.OH * g.OW;
  if (n == 0) return cudaSuccess;
  max_pool_grad_kernel<<<blocks_for(n), kBlock, 0, s>>>(g, x, dy, dx, n);
  return launched();
}

cudaError_t softmax(cudaStream_t s, const float* x, float* y, int64_t rows, int64_t len, int64_t inner, bool log) {
  if (rows == 0 || len == 0) return cudaSuccess;
  softmax_kernel<<<blocks_for(rows), kBlock, 0, s>>>(x, y, rows, len, inner, log);
  return launched();
}

cudaError_t reduce(cudaStream_t s, Reduce op, const int64_t* shape, int32_t rank, uint32_t mask, const float* x, float* y,
                   int64_t n_out) {
  if (n_out == 0) return cudaSuccess;
  if (rank < 0 || rank > kMaxRank) return cudaErrorInvalidValue;
  ReduceShape rs{};
  rs.rank = rank;
  rs.mask = mask;
  rs.count = 1;
  int64_t acc = 1;
  for (int d = rank - 1; d >= 0; --d) {
    rs.shape[d] = shape[d];
    rs.stride[d] = acc;
    acc *= shape[d];
    if (mask >> d & 1u) rs.count *= shape[d];
  }
  if (rs.count <= 64) {
    reduce_thread_kernel<<<blocks_for(n_out), kBlock, 0, s>>>(op, rs, x, y, n_out);
  } else {
    const unsigned grid = static_cast<unsigned>(n_out < 262144 ? n_out : 262144);
    reduce_block_kernel<<<grid, kBlock, 0, s>>>(op, rs, x, y, n_out);
  }
  return launched();
}

cudaError_t sce_loss(cudaStream_t s, const float* x, const int32_t* t, int64_t N, int64_t C, int64_t D, int32_t reduction,
                     float count, float* pos_loss, float* logp, float* y) {
  const int64_t n = N * D;
  if (n == 0) return reduction == 0 ? cudaSuccess : cudaMemsetAsync(y, 0, sizeof(float), s);
  sce_pos_kernel<<<blocks_for(n), kBlock, 0, s>>>(x, t, N, C, D, pos_loss, logp);
  if (reduction != 0) sce_sum_kernel<<<1, kBlock, 0, s>>>(pos_loss, n, reduction, count, y);
  return launched();
}

cudaError_t sce_grad(cudaStream_t s, const float* dl, const float* x, const int32_t* t, int64_t N, int64_t C, int64_t D,
                     int32_t reduction, float count, float* dx) {
  const int64_t n = N * D;
  if (n == 0) return cudaSuccess;
  sce_grad_kernel<<<blocks_for(n), kBlock, 0, s>>>(dl, x, t, N, C, D, reduction, count, dx);
  return launched();
}

}  // namespace tsr::cuda::k
