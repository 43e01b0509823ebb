// Elementwise and data-movement kernels (launch.h documents each launcher's contract).
#include <cfloat>
#include <cmath>

#include "backends/cuda/kernels/common.cuh"

namespace tsr::cuda::k {

namespace {

__device__ float pow_onnx(float x, float e) {
  if (e == 2.0f) return x * x;
  if (e == 1.0f) return x;
  if (e == 0.5f) return sqrtf(x);
  return powf(x, e);  // C semantics: a negative base with an integer exponent is exact in sign
}

__global__ void unary_kernel(Unary op, float a, float b, const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  TSR_GRID_LOOP(i, n) {
    const float v = x[i];
    float r = v;
    switch (op) {
      case Unary::kRelu: r = v > 0.0f ? v : 0.0f; break;
      case Unary::kSigmoid: r = 1.0f / (1.0f + expf(-v)); break;
      case Unary::kTanh: r = tanhf(v); break;
      case Unary::kExp: r = expf(v); break;
      case Unary::kLog: r = logf(v); break;
      case Unary::kSqrt: r = sqrtf(v); break;
      case Unary::kAbs: r = fabsf(v); break;
      case Unary::kNeg: r = -v; break;
      case Unary::kReciprocal: r = 1.0f / v; break;
      case Unary::kHardSigmoid: r = fminf(fmaxf(a * v + b, 0.0f), 1.0f); break;
      case Unary::kHardSwish: r = v * fminf(fmaxf(v / 6.0f + 0.5f, 0.0f), 1.0f); break;
      case Unary::kLeakyRelu: r = v < 0.0f ? a * v : v; break;
      case Unary::kClip: r = fminf(fmaxf(v, a), b); break;
      case Unary::kErf: r = erff(v); break;
      case Unary::kFloor: r = floorf(v); break;
      case Unary::kCeil: r = ceilf(v); break;
      case Unary::kSoftplus: r = v > 15.0f ? v : log1pf(expf(v)); break;
      case Unary::kElu: r = v < 0.0f ? a * (expf(v) - 1.0f) : v; break;
      case Unary::kSin: r = sinf(v); break;
      case Unary::kCos: r = cosf(v); break;
      case Unary::kRound: r = rintf(v); break;  // half to even, as ONNX Round
      case Unary::kSign: r = v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : 0.0f); break;
      case Unary::kGelu: r = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); break;
      case Unary::kSoftsign: r = v / (1.0f + fabsf(v)); break;
    }
    y[i] = r;
  }
}

__device__ inline float apply(Binary op, float u, float v) {
  switch (op) {
    case Binary::kAdd: return u + v;
    case Binary::kSub: return u - v;
    case Binary::kMul: return u * v;
    case Binary::kDiv: return u / v;
    case Binary::kPow: return pow_onnx(u, v);
    case Binary::kMax: return fmaxf(u, v);
    case Binary::kMin: return fminf(u, v);
    case Binary::kPRelu: return u < 0.0f ? u * v : u;
  }
  return 0.0f;
}

__global__ void binary_kernel(Binary op, Strided st, const float* __restrict__ a, const float* __restrict__ b,
                              float* __restrict__ y, int64_t n) {
  TSR_GRID_LOOP(i, n) {
    int64_t off[2];
    strided_offsets<2>(st, i, off);
    y[i] = apply(op, a[off[0]], b[off[1]]);
  }
}

__global__ void compare_kernel(Compare op, Strided st, const float* __restrict__ a, const float* __restrict__ b,
                               uint8_t* __restrict__ y, int64_t n) {
  TSR_GRID_LOOP(i, n) {
    int64_t off[2];
    strided_offsets<2>(st, i, off);
    const float u = a[off[0]], v = b[off[1]];
    bool r = false;
    switch (op) {
      case Compare::kGreater: r = u > v; break;
      case Compare::kLess: r = u < v; break;
      case Compare::kEqual: r = u == v; break;
      case Compare::kGreaterOrEqual: r = u >= v; break;
      case Compare::kLessOrEqual: r = u <= v; break;
    }
    y[i] = r ? 1 : 0;
  }
}

__global__ void where_kernel(Strided st, const uint8_t* __restrict__ c, const float* __restrict__ x,
                             const float* __restrict__ z, float* __restrict__ y, int64_t n) {
  TSR_GRID_LOOP(i, n) {
    int64_t off[3];
    strided_offsets<3>(st, i, off);
    y[i] = c[off[0]] ? x[off[1]] : z[off[2]];
  }
}

__global__ void fill_kernel(float* __restrict__ y, float value, int64_t n) {
  TSR_GRID_LOOP(i, n) y[i] = value;
}

template <typename T>
__global__ void copy_kernel(Strided st, const T* __restrict__ x, int64_t io, T* __restrict__ y, int64_t oo, int64_t n) {
  TSR_GRID_LOOP(i, n) {
    int64_t off[2];
    strided_offsets<2>(st, i, off);
    y[oo + off[1]] = x[io + off[0]];
  }
}

__global__ void gather_kernel(const float* __restrict__ x, const int32_t* __restrict__ idx, float* __restrict__ y,
                              int64_t n, int64_t axis_len, int64_t n_idx, int64_t inner) {
  TSR_GRID_LOOP(i, n) {
    const int64_t in = i % inner, j = (i / inner) % n_idx, o = i / (inner * n_idx);
    y[i] = x[(o * axis_len + idx[j]) * inner + in];
  }
}

__global__ void affine_kernel(const float* __restrict__ x, const float* __restrict__ sc, const float* __restrict__ sh,
                              float* __restrict__ y, int64_t n, int64_t C, int64_t inner) {
  TSR_GRID_LOOP(i, n) {
    const int64_t c = (i / inner) % C;
    y[i] = x[i] * sc[c] + sh[c];
  }
}

__device__ float src_coord(const ResizeGeom& p, int64_t o, int64_t in_len, int64_t out_len, float s) {
  const float fo = static_cast<float>(o);
  switch (p.coord) {
    case 1: return fo / s;
    case 2: return out_len > 1 ? fo * static_cast<float>(in_len - 1) / static_cast<float>(out_len - 1) : 0.0f;
    case 3: return out_len > 1 ? (fo + 0.5f) / s - 0.5f : 0.0f;
    case 4: return (fo + 0.5f) / s;
    default: return (fo + 0.5f) / s - 0.5f;
  }
}

__device__ int64_t nearest_index(int32_t mode, float c, int64_t len) {
  float r;
  switch (mode) {
    case 1: r = (c - floorf(c) == 0.5f) ? ceilf(c) : floorf(c + 0.5f); break;
    case 2: r = floorf(c); break;
    case 3: r = ceilf(c); break;
    default: r = (c - floorf(c) == 0.5f) ? floorf(c) : floorf(c + 0.5f); break;
  }
  const int64_t i = static_cast<int64_t>(r);
  return i < 0 ? 0 : (i > len - 1 ? len - 1 : i);
}

__global__ void resize_kernel(ResizeGeom p, const float* __restrict__ x, float* __restrict__ y) {
  const int64_t n = p.NC * p.OH * p.OW;
  TSR_GRID_LOOP(i, n) {
    const int64_t ow = i % p.OW, oh = (i / p.OW) % p.OH, nc = i / (p.OW * p.OH);
    float ch = src_coord(p, oh, p.H, p.OH, p.sh), cw = src_coord(p, ow, p.W, p.OW, p.sw);
    const float* base = x + nc * p.H * p.W;
    if (p.mode == 0) {
      y[i] = base[nearest_index(p.nearest, ch, p.H) * p.W + nearest_index(p.nearest, cw, p.W)];
      continue;
    }
    ch = fminf(fmaxf(ch, 0.0f), static_cast<float>(p.H - 1));
    cw = fminf(fmaxf(cw, 0.0f), static_cast<float>(p.W - 1));
    const int64_t h0 = static_cast<int64_t>(floorf(ch)), w0 = static_cast<int64_t>(floorf(cw));
    const int64_t h1 = h0 + 1 < p.H ? h0 + 1 : p.H - 1, w1 = w0 + 1 < p.W ? w0 + 1 : p.W - 1;
    const float fh = ch - static_cast<float>(h0), fw = cw - static_cast<float>(w0);
    const float v00 = base[h0 * p.W + w0], v01 = base[h0 * p.W + w1];
    const float v10 = base[h1 * p.W + w0], v11 = base[h1 * p.W + w1];
    y[i] = (v00 * (1.0f - fw) + v01 * fw) * (1.0f - fh) + (v10 * (1.0f - fw) + v11 * fw) * fh;
  }
}

__global__ void adam_kernel(AdamParams p, const float* __restrict__ x, const float* __restrict__ g,
                            const float* __restrict__ m, const float* __restrict__ v, float* __restrict__ xo,
                            float* __restrict__ mo, float* __restrict__ vo, int64_t n) {
  TSR_GRID_LOOP(i, n) {
    if (p.adamw) {
      const double gi = g[i];
      const double mi = p.b1 * m[i] + (1 - p.b1) * gi;
      const double vi = p.b2 * v[i] + (1 - p.b2) * gi * gi;
      mo[i] = static_cast<float>(mi);
      vo[i] = static_cast<float>(vi);
      xo[i] = static_cast<float>(x[i] * p.decay - p.lr * (mi * p.c1) / (sqrt(vi * p.c2) + p.eps));
    } else {
      const double gi = p.norm * x[i] + g[i];
      const double mi = p.b1 * m[i] + (1 - p.b1) * gi;
      const double vi = p.b2 * v[i] + (1 - p.b2) * gi * gi;
      mo[i] = static_cast<float>(mi);
      vo[i] = static_cast<float>(vi);
      xo[i] = static_cast<float>((1 - p.post) * (x[i] - p.lr * mi / (sqrt(vi) + p.eps)));
    }
  }
}

}  // namespace

cudaError_t unary(cudaStream_t s, Unary op, float a, float b, const float* x, float* y, int64_t n) {
  if (n == 0) return cudaSuccess;
  unary_kernel<<<blocks_for(n), kBlock, 0, s>>>(op, a, b, x, y, n);
  return launched();
}

cudaError_t binary(cudaStream_t s, Binary op, const Strided& st, const float* a, const float* b, float* y, int64_t n) {
  if (n == 0) return cudaSuccess;
  binary_kernel<<<blocks_for(n), kBlock, 0, s>>>(op, st, a, b, y, n);
  return launched();
}

cudaError_t compare(cudaStream_t s, Compare op, const Strided& st, const float* a, const float* b, uint8_t* y, int64_t n) {
  if (n == 0) return cudaSuccess;
  compare_kernel<<<blocks_for(n), kBlock, 0, s>>>(op, st, a, b, y, n);
  return launched();
}

cudaError_t where(cudaStream_t s, const Strided& st, const uint8_t* cond, const float* x, const float* z, float* y, int64_t n) {
  if (n == 0) return cudaSuccess;
  where_kernel<<<blocks_for(n), kBlock, 0, s>>>(st, cond, x, z, y, n);
  return launched();
}

cudaError_t fill(cudaStream_t s, float* y, float value, int64_t n) {
  if (n == 0) return cudaSuccess;
  fill_kernel<<<blocks_for(n), kBlock, 0, s>>>(y, value, n);
  return launched();
}

cudaError_t copy_strided(cudaStream_t s, const Strided& st, const void* x, int64_t io, void* y, int64_t oo, int64_t n,
                         int elem_bytes) {
  if (n == 0) return cudaSuccess;
  switch (elem_bytes) {
    case 1:
      copy_kernel<uint8_t><<<blocks_for(n), kBlock, 0, s>>>(st, static_cast<const uint8_t*>(x), io, static_cast<uint8_t*>(y), oo, n);
      break;
    case 4:
      copy_kernel<uint32_t><<<blocks_for(n), kBlock, 0, s>>>(st, static_cast<const uint32_t*>(x), io, static_cast<uint32_t*>(y), oo, n);
      break;
    case 8:
      copy_kernel<uint64_t><<<blocks_for(n), kBlock, 0, s>>>(st, static_cast<const uint64_t*>(x), io, static_cast<uint64_t*>(y), oo, n);
      break;
    default: return cudaErrorInvalidValue;
  }
  return launched();
}

cudaError_t gather(cudaStream_t s, const float* x, const int32_t* idx, float* y, int64_t outer, int64_t axis_len,
                   int64_t n_idx, int64_t inner) {
  const int64_t n = outer * n_idx * inner;
  if (n == 0) return cudaSuccess;
  gather_kernel<<<blocks_for(n), kBlock, 0, s>>>(x, idx, y, n, axis_len, n_idx, inner);
  return launched();
}

cudaError_t channel_affine(cudaStream_t s, const float* x, const float* scale, const float* shift, float* y, int64_t n,
                           int64_t C, int64_t inner) {
  if (n == 0) return cudaSuccess;
  affine_kernel<<<blocks_for(n), kBlock, 0, s>>>(x, scale, shift, y, n, C, inner);
  return launched();
}

cudaError_t resize(cudaStream_t s, const ResizeGeom& p, const float* x, float* y) {
  const int64_t n = p.NC * p.OH * p.OW;
  if (n == 0) return cudaSuccess;
  resize_kernel<<<blocks_for(n), kBlock, 0, s>>>(p, x, y);
  return launched();
}

cudaError_t adam(cudaStream_t s, const AdamParams& p, const float* x, const float* g, const float* m, const float* v,
                 float* xo, float* mo, float* vo, int64_t n) {
  if (n == 0) return cudaSuccess;
  adam_kernel<<<blocks_for(n), kBlock, 0, s>>>(p, x, g, m, v, xo, mo, vo, n);
  return launched();
}

}  // namespace tsr::cuda::k
