// CPU kernels for normalization and the softmax family (ONNX opset 17): BatchNormalization
// (inference and training_mode), LayerNormalizationGrad (LayerNormalization itself runs on the
// Highway row driver of transformer_norm.cpp), InstanceNormalization, LRN, Softmax,
// LogSoftmax, Hardmax, MeanVarianceNormalization. Statistics accumulate in double; f32 softmax rows use Highway's Exp.
// Compiled once per SIMD target (hwy/foreach_target.h); register_nn_norm_kernels registers the
// kernels of the best target this CPU supports (see TSR_SIMD_DISPATCH in CMakeLists.txt).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/nn_norm.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/scratch.h"
#include "backends/cpu/kernels/short_rows-inl.h"
#include "backends/cpu/kernels/norm_planes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;
using namespace norm_planes;  // NOLINT: the plane sweeps of norm_planes-inl.h

// Writes v into element i of a float tensor of any float dtype the OpDefs allow.
void store_f(Tensor* t, int64_t i, double v) {
  switch (t->dtype()) {
    case DType::kF32: t->mut_data<float>()[i] = static_cast<float>(v); break;
    case DType::kF64: t->mut_data<double>()[i] = v; break;
    case DType::kF16: t->mut_data<Half>()[i] = Half{f32_to_f16(static_cast<float>(v))}; break;
    case DType::kBF16: t->mut_data<BFloat16>()[i] = BFloat16{f32_to_bf16(static_cast<float>(v))}; break;
    default: break;
  }
}

// t's values as doubles, in the run's scratch arena (no allocation per training step).
Expected<Scratch<double>> to_f64(exec::KernelContext& ctx, const Tensor& t) {
  TSR_ASSIGN_OR_RETURN(Scratch<double> v, Scratch<double>::make(ctx, static_cast<size_t>(t.numel())));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.scalar_f64(i);
  return v;
}

template <typename T>
Status batch_norm_typed(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  const double eps = node.attr_float("epsilon");
  const double momentum = node.attr_float("momentum");
  const bool training = node.attr_int("training_mode") != 0;
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const int64_t n = x.rank() > 0 ? x.dim(0) : 1, c = x.rank() > 1 ? x.dim(1) : 1;
  const int64_t planes = n * c, size = planes == 0 ? 0 : x.numel() / planes;
  const T* px = x.data<T>();
  T* py = y->mut_data<T>();
  const Tensor &scale = *ctx.input(1), &bias = *ctx.input(2);
  // y = a * x + b per channel, from the running statistics (inference) or the batch's (training).
  TSR_ASSIGN_OR_RETURN(Scratch<T> ab, Scratch<T>::make(ctx, static_cast<size_t>(2 * c)));
  T* mul = ab.data();
  T* add = mul + c;
  const auto set_affine = [&](int64_t ch, double mean, double var) {
    const double inv = 1.0 / std::sqrt(var + eps), sc = scale.scalar_f64(ch);
    mul[ch] = static_cast<T>(sc * inv);
    add[ch] = static_cast<T>(bias.scalar_f64(ch) - mean * sc * inv);
  };
  if (!training) {
    for (int64_t ch = 0; ch < c; ++ch) set_affine(ch, ctx.input(3)->scalar_f64(ch), ctx.input(4)->scalar_f64(ch));
    ctx.pool().parallel_for(planes, 4, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        plane_affine2<T>(py + p * size, px + p * size, nullptr, size, mul[p % c], T(0), add[p % c]);
    });
  } else {
    TSR_ASSIGN_OR_RETURN(const Scratch<double> mean, to_f64(ctx, *ctx.input(3)));
    TSR_ASSIGN_OR_RETURN(const Scratch<double> var, to_f64(ctx, *ctx.input(4)));
    // Batch statistics over N and the spatial dims (biased variance, as the ONNX reference).
    TSR_ASSIGN_OR_RETURN(const Scratch<double> bm, Scratch<double>::filled(ctx, static_cast<size_t>(c), 0.0));
    TSR_ASSIGN_OR_RETURN(const Scratch<double> bv, Scratch<double>::filled(ctx, static_cast<size_t>(c), 0.0));
    const double cnt = static_cast<double>(n * size);
    // Small f32 planes: whole-batch sweeps over each image's channel block (norm_planes-inl.h).
    const bool small = std::is_same_v<T, float> && small_planes(size) && cnt > 0;
    TSR_ASSIGN_OR_RETURN(const Scratch<float> sbuf, Scratch<float>::make(ctx, small ? static_cast<size_t>(4 * c * size) : 0));
    ctx.pool().parallel_for(c, 1, [&](int64_t c0, int64_t c1) {
      if constexpr (std::is_same_v<T, float>) {
        if (small) {
          float* buf = sbuf.data() + 4 * c0 * size;
          small_sums(px, n, c, size, c0, c1, buf, bm.data());
          for (int64_t ch = c0; ch < c1; ++ch) bm[static_cast<size_t>(ch)] /= cnt;
          small_dev_sums(px, nullptr, n, c, size, c0, c1, bm.data(), buf, bv.data(), nullptr, nullptr);
          for (int64_t ch = c0; ch < c1; ++ch) {
            bv[static_cast<size_t>(ch)] /= cnt;
            set_affine(ch, bm[static_cast<size_t>(ch)], bv[static_cast<size_t>(ch)]);
          }
          small_affine(py, px, static_cast<const float*>(nullptr), n, c, size, c0, c1, mul, static_cast<const float*>(nullptr), add, buf);
          return;
        }
      }
      for (int64_t ch = c0; ch < c1; ++ch) {
        // Mean and variance in one sweep (norm_planes-inl.h), then Y: two passes over X, not three.
        const auto [mu, v] = cnt > 0 ? channel_stats<false>(px, static_cast<const T*>(nullptr), n, c, size, ch, nullptr)
                                     : std::pair<double, double>{0.0, 0.0};
        bm[static_cast<size_t>(ch)] = mu;
        bv[static_cast<size_t>(ch)] = v;
        // Y of this channel while its planes are still in cache (Y may be X: in place).
        set_affine(ch, mu, bv[static_cast<size_t>(ch)]);
        for (int64_t b = 0; b < n; ++b) {
          const int64_t off = (b * c + ch) * size;
          if (b + 1 < n) short_rows::prefetch_run(py + off + c * size, size);  // Y's lines before the stores
          plane_affine2<T>(py + off, px + off, nullptr, size, mul[ch], T(0), add[ch]);
        }
      }
    });
    for (size_t k = 1; k < 3 && k < ctx.num_outputs(); ++k) {
      if (node.outputs[k] < 0) continue;
      TSR_ASSIGN_OR_RETURN(Tensor * o, ctx.alloc_output(k));
      const Scratch<double>& run = k == 1 ? mean : var;
      const Scratch<double>& cur = k == 1 ? bm : bv;
      for (int64_t ch = 0; ch < c; ++ch)
        store_f(o, ch, run[static_cast<size_t>(ch)] * momentum + cur[static_cast<size_t>(ch)] * (1 - momentum));
    }
  }
  return ok_status();
}

// BatchNormalizationGrad (semantics: core/ops/families/nn_norm.cpp). Channels run in parallel;
// each sweeps its N planes (statistics and sums, then dX) on the vectorized plane helpers.
template <typename T>
Status batch_norm_grad_typed(exec::KernelContext& ctx) {
  const Tensor& dy = *ctx.input(0);
  const Tensor& x = *ctx.input(1);
  const ir::Node& node = ctx.node();
  const double eps = node.attr_float("epsilon");
  const bool training = node.attr_int("training_mode") != 0;
  if (dy.shape() != x.shape()) return ctx.error("dY ", shape_str(dy.shape()), " and X ", shape_str(x.shape()), " differ");
  const int64_t n = x.rank() > 0 ? x.dim(0) : 1, c = x.rank() > 1 ? x.dim(1) : 1;
  const int64_t planes = n * c, size = planes == 0 ? 0 : x.numel() / planes;
  // Per channel, in the run's scratch arena (no allocation per training step).
  TSR_ASSIGN_OR_RETURN(const Scratch<double> scale, to_f64(ctx, *ctx.input(2)));
  Scratch<double> mean, var;
  if (training) {
    TSR_ASSIGN_OR_RETURN(mean, Scratch<double>::filled(ctx, static_cast<size_t>(c), 0.0));
    TSR_ASSIGN_OR_RETURN(var, Scratch<double>::filled(ctx, static_cast<size_t>(c), 0.0));
  } else {
    TSR_ASSIGN_OR_RETURN(mean, to_f64(ctx, *ctx.input(3)));
    TSR_ASSIGN_OR_RETURN(var, to_f64(ctx, *ctx.input(4)));
  }
  TSR_ASSIGN_OR_RETURN(Tensor * dx, ctx.alloc_output(0));
  TSR_ASSIGN_OR_RETURN(const Scratch<double> sum_dy, Scratch<double>::make(ctx, static_cast<size_t>(c)));
  TSR_ASSIGN_OR_RETURN(const Scratch<double> sum_dy_xhat, Scratch<double>::make(ctx, static_cast<size_t>(c)));
  const T* px = x.data<T>();
  const T* pg = dy.data<T>();
  T* pdx = dx->mut_data<T>();
  const double cnt = static_cast<double>(n * size);
  // Small f32 planes: whole-batch sweeps over each image's channel block (norm_planes-inl.h);
  // the per-channel coefficients go through coef [3, c].
  const bool small = std::is_same_v<T, float> && small_planes(size) && cnt > 0;
  TSR_ASSIGN_OR_RETURN(const Scratch<float> sbuf, Scratch<float>::make(ctx, small ? static_cast<size_t>(4 * c * size) : 0));
  TSR_ASSIGN_OR_RETURN(const Scratch<T> coef, Scratch<T>::make(ctx, small ? static_cast<size_t>(3 * c) : 0));
  ctx.pool().parallel_for(c, 1, [&](int64_t c0, int64_t c1) {
    if constexpr (std::is_same_v<T, float>) {
      if (small) {
        float* buf = sbuf.data() + 4 * c0 * size;
        if (training) {
          small_sums(px, n, c, size, c0, c1, buf, mean.data());
          for (int64_t ch = c0; ch < c1; ++ch) mean[static_cast<size_t>(ch)] /= cnt;
        }
        small_dev_sums(px, pg, n, c, size, c0, c1, mean.data(), buf, training ? var.data() : nullptr, sum_dy.data(),
                       sum_dy_xhat.data());
        for (int64_t ch = c0; ch < c1; ++ch) {
          const auto cu = static_cast<size_t>(ch);
          if (training) var[cu] /= cnt;
          const double inv = 1.0 / std::sqrt(var[cu] + eps), sg = sum_dy[cu], sgx = sum_dy_xhat[cu] * inv;
          sum_dy_xhat[cu] = sgx;
          const double a = scale[cu] * inv, bx = training ? -a * inv * sgx / cnt : 0.0, k = training ? -a * sg / cnt : 0.0;
          coef[cu] = static_cast<T>(a);
          coef[static_cast<size_t>(c) + cu] = static_cast<T>(bx);
          coef[static_cast<size_t>(2 * c) + cu] = static_cast<T>(k - bx * mean[cu]);
        }
        small_affine(pdx, pg, px, n, c, size, c0, c1, coef.data(), coef.data() + c, coef.data() + 2 * c, buf);
        return;
      }
    }
    for (int64_t ch = c0; ch < c1; ++ch) {
      const auto cu = static_cast<size_t>(ch);
      double sg = 0, sgx = 0;
      if (training && cnt > 0) {  // the forward kernel's batch statistics, and the sums, in one sweep
        double sums[2];
        const auto [mu, v] = channel_stats<true>(px, pg, n, c, size, ch, sums);
        sg = sums[0];
        sgx = sums[1];
        mean[cu] = mu;
        var[cu] = v;
      } else {
        for (int64_t b = 0; b < n; ++b) {
          const auto [a, bb] = plane_grad_sums(pg + (b * c + ch) * size, px + (b * c + ch) * size, size, mean[cu]);
          sg += a;
          sgx += bb;
        }
      }
      const double mu = mean[cu], inv = 1.0 / std::sqrt(var[cu] + eps);
      sgx *= inv;  // sum(dY * xhat)
      sum_dy[cu] = sg;
      sum_dy_xhat[cu] = sgx;
      // dX = a * dY + b * (X - mean) + k: training folds the batch-statistics terms into b, k.
      const double a = scale[cu] * inv;
      double bx = 0, k = 0;
      if (training && cnt > 0) {
        bx = -a * inv * sgx / cnt;
        k = -a * sg / cnt;
      }
      // b * (X - mean) + k = b * X + (k - b * mean), one fused multiply-add per term.
      const T at = static_cast<T>(a), bt = static_cast<T>(bx), kt = static_cast<T>(k - bx * mu);
      for (int64_t b = 0; b < n; ++b) {
        const int64_t off = (b * c + ch) * size;
        if (b + 1 < n) short_rows::prefetch_run(pdx + off + c * size, size);  // dX's lines before the stores
        plane_affine2<T>(pdx + off, pg + off, px + off, size, at, bt, kt);
      }
    }
  });
  for (size_t k = 1; k < ctx.num_outputs(); ++k) {
    if (node.outputs[k] < 0) continue;
    TSR_ASSIGN_OR_RETURN(Tensor * o, ctx.alloc_output(k));
    for (int64_t ch = 0; ch < c; ++ch) {
      const auto cu = static_cast<size_t>(ch);
      const double inv = 1.0 / std::sqrt(var[cu] + eps);
      double v = 0;
      switch (k) {
        case 1: v = sum_dy_xhat[cu]; break;                                 // dScale
        case 2: v = sum_dy[cu]; break;                                      // dB
        case 3: v = -scale[cu] * inv * sum_dy[cu]; break;                   // dMean
        default: v = -0.5 * scale[cu] * inv * inv * sum_dy_xhat[cu]; break; // dVar
      }
      store_f(o, ch, v);
    }
  }
  return ok_status();
}

// Broadcasts t (unidirectionally, numpy rules) to `target` and returns the values.
template <typename T>
std::vector<T> expand_to(const Tensor& t, const Shape& target) {
  const int64_t total = shape_numel(target);
  std::vector<T> out(static_cast<size_t>(total));
  const Shape& s = t.shape();
  const size_t r = target.size();
  std::vector<int64_t> st(r, 0);
  int64_t acc = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    const size_t src = s.size() - 1 - d;
    st[r - 1 - d] = s[src] == 1 ? 0 : acc;
    acc *= s[src];
  }
  const T* p = t.data<T>();
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i, off = 0;
    for (size_t d = r; d-- > 0;) {
      off += (rem % target[d]) * st[d];
      rem /= target[d];
    }
    out[static_cast<size_t>(i)] = p[off];
  }
  return out;
}

// LayerNormalizationGrad (semantics: core/ops/families/nn_norm.cpp). Rows run in parallel for
// dX; dScale and dB then run in parallel over column blocks (each sums over all rows), reusing
// the per-row mean and inverse std-dev.
template <typename T>
Status layer_norm_grad_typed(exec::KernelContext& ctx) {
  const Tensor& dy = *ctx.input(0);
  const Tensor& x = *ctx.input(1);
  const ir::Node& node = ctx.node();
  if (dy.shape() != x.shape()) return ctx.error("dY ", shape_str(dy.shape()), " and X ", shape_str(x.shape()), " differ");
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node.attr_int("axis"), x.rank()));
  const double eps = node.attr_float("epsilon");
  const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
  const int64_t inner = shape_numel(norm_shape);
  const int64_t outer = inner == 0 ? 0 : x.numel() / inner;
  const Tensor* scale_t = ctx.input(2);
  const std::vector<T> scale = scale_t ? expand_to<T>(*scale_t, norm_shape) : std::vector<T>(static_cast<size_t>(inner), T(1));
  TSR_ASSIGN_OR_RETURN(Tensor * dx, ctx.alloc_output(0));
  const T* px = x.data<T>();
  const T* pg = dy.data<T>();
  T* pdx = dx->mut_data<T>();
  std::vector<T> row_mean(static_cast<size_t>(outer)), row_inv(static_cast<size_t>(outer));
  const double len = static_cast<double>(inner);
  ctx.pool().parallel_for(outer, 8, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* s = px + r * inner;
      const T* g = pg + r * inner;
      T* d = pdx + r * inner;
      double sum = 0;
      for (int64_t i = 0; i < inner; ++i) sum += static_cast<double>(s[i]);
      const double mu = sum / len;
      double sq = 0;
      for (int64_t i = 0; i < inner; ++i) sq += (static_cast<double>(s[i]) - mu) * (static_cast<double>(s[i]) - mu);
      const double inv = 1.0 / std::sqrt(sq / len + eps);
      double sgs = 0, sgx = 0;  // sum(g), sum(g * (x - mu)) with g = dY * Scale
      for (int64_t i = 0; i < inner; ++i) {
        const double gs = static_cast<double>(g[i]) * static_cast<double>(scale[static_cast<size_t>(i)]);
        sgs += gs;
        sgx += gs * (static_cast<double>(s[i]) - mu);
      }
      // dX = inv * (g - mean(g) - xhat * mean(g * xhat)) = inv * g + b * (x - mean) + k.
      const double bx = -inv * inv * inv * sgx / len, k = -inv * sgs / len;
      const T at = static_cast<T>(inv), bt = static_cast<T>(bx), kt = static_cast<T>(k), mt = static_cast<T>(mu);
      for (int64_t i = 0; i < inner; ++i) d[i] = at * g[i] * scale[static_cast<size_t>(i)] + bt * (s[i] - mt) + kt;
      row_mean[static_cast<size_t>(r)] = static_cast<T>(mu);
      row_inv[static_cast<size_t>(r)] = static_cast<T>(inv);
    }
  });
  Tensor* dscale = nullptr;
  Tensor* dbias = nullptr;
  if (ctx.num_outputs() > 1 && node.outputs[1] >= 0) {
    TSR_ASSIGN_OR_RETURN(dscale, ctx.alloc_output(1));
  }
  if (ctx.num_outputs() > 2 && node.outputs[2] >= 0) {
    TSR_ASSIGN_OR_RETURN(dbias, ctx.alloc_output(2));
  }
  if (!dscale && !dbias) return ok_status();
  T* ps = dscale ? dscale->mut_data<T>() : nullptr;
  T* pb = dbias ? dbias->mut_data<T>() : nullptr;
  constexpr int64_t kBlock = 256;
  ctx.pool().parallel_for((inner + kBlock - 1) / kBlock, 1, [&](int64_t b0, int64_t b1) {
    const int64_t i0 = b0 * kBlock, i1 = std::min(inner, b1 * kBlock);
    std::vector<T> as(static_cast<size_t>(i1 - i0), T(0)), ab(static_cast<size_t>(i1 - i0), T(0));
    for (int64_t r = 0; r < outer; ++r) {
      const T* s = px + r * inner;
      const T* g = pg + r * inner;
      const T mu = row_mean[static_cast<size_t>(r)], inv = row_inv[static_cast<size_t>(r)];
      for (int64_t i = i0; i < i1; ++i) {
        as[static_cast<size_t>(i - i0)] += g[i] * ((s[i] - mu) * inv);
        ab[static_cast<size_t>(i - i0)] += g[i];
      }
    }
    for (int64_t i = i0; i < i1; ++i) {
      if (ps) ps[i] = as[static_cast<size_t>(i - i0)];
      if (pb) pb[i] = ab[static_cast<size_t>(i - i0)];
    }
  });
  return ok_status();
}

template <typename T>
Status instance_norm_typed(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const double eps = ctx.node().attr_float("epsilon");
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const int64_t c = x.dim(1), planes = x.dim(0) * c;
  const int64_t size = planes == 0 ? 0 : x.numel() / planes;
  const T* scale = ctx.input(1)->data<T>();
  const T* bias = ctx.input(2)->data<T>();
  const T* px = x.data<T>();
  T* py = y->mut_data<T>();
  ctx.pool().parallel_for(planes, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* s = px + p * size;
      T* d = py + p * size;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < size; ++i) sum += static_cast<double>(s[i]);
      const double mu = size > 0 ? sum / static_cast<double>(size) : 0.0;
      for (int64_t i = 0; i < size; ++i) sq += (static_cast<double>(s[i]) - mu) * (static_cast<double>(s[i]) - mu);
      const double inv = 1.0 / std::sqrt((size > 0 ? sq / static_cast<double>(size) : 0.0) + eps);
      const T a = static_cast<T>(static_cast<double>(scale[p % c]) * inv);
      const T b = static_cast<T>(static_cast<double>(bias[p % c]) - mu * static_cast<double>(scale[p % c]) * inv);
      for (int64_t i = 0; i < size; ++i) d[i] = a * s[i] + b;
    }
  });
  return ok_status();
}

// LRN (Krizhevsky et al. 2012, ONNX LRN): y = x / (bias + alpha/size * sum of x^2 over the
// channels [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta.
template <typename T>
Status lrn_typed(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  const int64_t size = node.attr_int("size");
  const double alpha = node.attr_float("alpha"), beta = node.attr_float("beta");
  const double bias = node.attr_float("bias");
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t sp = (n * c) == 0 ? 0 : x.numel() / (n * c);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  const T* px = x.data<T>();
  T* py = y->mut_data<T>();
  ctx.pool().parallel_for(n * c, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = p / c, ch = p % c;
      const int64_t c0 = std::max<int64_t>(0, ch - lo), c1 = std::min<int64_t>(c - 1, ch + hi);
      for (int64_t i = 0; i < sp; ++i) {
        double sq = 0;
        for (int64_t k = c0; k <= c1; ++k) {
          const double v = static_cast<double>(px[(b * c + k) * sp + i]);
          sq += v * v;
        }
        py[p * sp + i] = static_cast<T>(static_cast<double>(px[p * sp + i]) / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
    }
  });
  return ok_status();
}

// MeanVarianceNormalization (ONNX opset 13 function): Y = (X - mean) / (sqrt(E[X^2] - mean^2)
// + 1e-9), statistics over `axes` (default [0, 2, 3]). Each element's group is its flat index
// with the reduced dims' coordinates dropped; statistics accumulate in double.
template <typename T>
Status mvn_typed(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const int64_t rank = x.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : ctx.node().attr_ints("axes")) {
    TSR_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank));
    reduced[static_cast<size_t>(ax)] = true;
  }
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const int64_t n = x.numel();
  if (n == 0) return ok_status();
  // Group strides: kept dims get row-major strides over the kept dims, reduced dims 0.
  std::vector<int64_t> gstride(static_cast<size_t>(rank), 0);
  int64_t groups = 1;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (!reduced[static_cast<size_t>(d)]) {
      gstride[static_cast<size_t>(d)] = groups;
      groups *= x.dim(d);
    }
  std::vector<int64_t> gid(static_cast<size_t>(n));
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  int64_t g = 0;
  for (int64_t i = 0; i < n; ++i) {
    gid[static_cast<size_t>(i)] = g;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const auto du = static_cast<size_t>(d);
      g += gstride[du];
      if (++coord[du] < x.dim(d)) break;
      g -= gstride[du] * coord[du];
      coord[du] = 0;
    }
  }
  std::vector<double> sum(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0);
  std::vector<int64_t> cnt(static_cast<size_t>(groups), 0);
  const T* px = x.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    const auto gi = static_cast<size_t>(gid[static_cast<size_t>(i)]);
    const auto v = static_cast<double>(px[i]);
    sum[gi] += v;
    sq[gi] += v * v;
    ++cnt[gi];
  }
  std::vector<double> mean(static_cast<size_t>(groups)), inv_den(static_cast<size_t>(groups));
  for (size_t k = 0; k < sum.size(); ++k) {
    const double c = static_cast<double>(cnt[k]);
    mean[k] = sum[k] / c;
    const double var = std::max(0.0, sq[k] / c - mean[k] * mean[k]);
    inv_den[k] = 1.0 / (std::sqrt(var) + 1e-9);
  }
  T* py = y->mut_data<T>();
  for (int64_t i = 0; i < n; ++i) {
    const auto gi = static_cast<size_t>(gid[static_cast<size_t>(i)]);
    py[i] = static_cast<T>((static_cast<double>(px[i]) - mean[gi]) * inv_den[gi]);
  }
  return ok_status();
}

enum class SoftMode { kSoftmax, kLogSoftmax, kHardmax };

// One contiguous f32 row: max, then exp and sum with Highway, then scale (or log-shift).
void softmax_row_f32(const float* x, float* y, int64_t n, SoftMode mode) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  auto vmax = hn::Set(d, -std::numeric_limits<float>::infinity());
  for (; i + nl <= n; i += nl) vmax = hn::Max(vmax, hn::LoadU(d, x + i));
  float mx = hn::GetLane(hn::MaxOfLanes(d, vmax));
  for (; i < n; ++i) mx = std::max(mx, x[i]);
  const auto vm = hn::Set(d, mx);
  auto vsum = hn::Zero(d);
  i = 0;
  for (; i + nl <= n; i += nl) {
    const auto e = hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), vm));
    if (mode == SoftMode::kSoftmax) hn::StoreU(e, d, y + i);
    vsum = hn::Add(vsum, e);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (; i < n; ++i) {
    const float e = std::exp(x[i] - mx);
    if (mode == SoftMode::kSoftmax) y[i] = e;
    sum += e;
  }
  if (mode == SoftMode::kSoftmax) {
    const float inv = 1.0f / sum;
    for (i = 0; i < n; ++i) y[i] *= inv;
  } else {
    // (x - max) - log(sum), not x - (max + log(sum)): for large x the rounded shift loses the
    // fractional part (onnx test_logsoftmax_large_number, x ~ 1e4).
    const float ls = std::log(sum);
    for (i = 0; i < n; ++i) y[i] = (x[i] - mx) - ls;
  }
}

template <typename T>
Status softmax_typed(exec::KernelContext& ctx, SoftMode mode) {
  const Tensor& x = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis"), x.rank()));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const int64_t len = x.dim(axis);
  int64_t inner = 1;
  for (int64_t dd = axis + 1; dd < x.rank(); ++dd) inner *= x.dim(dd);
  const int64_t outer = (len * inner) == 0 ? 0 : x.numel() / (len * inner);
  const T* px = x.data<T>();
  T* py = y->mut_data<T>();
  if (x.numel() == 0) return ok_status();
  ctx.pool().parallel_for(outer, 4, [&](int64_t o0, int64_t o1) {
    std::vector<T> mx, sum;  // sized on the strided path only (the f32 last-axis path needs none)
    std::vector<int64_t> arg;
    for (int64_t o = o0; o < o1; ++o) {
      const T* s = px + o * len * inner;
      T* dst = py + o * len * inner;
      if constexpr (std::is_same_v<T, float>) {
        if (inner == 1 && mode != SoftMode::kHardmax) {
          softmax_row_f32(s, dst, len, mode);
          continue;
        }
      }
      // Strided axis: sweep whole rows of `inner` values at a time (contiguous, cache-friendly).
      mx.resize(static_cast<size_t>(inner));
      sum.resize(static_cast<size_t>(inner));
      arg.resize(static_cast<size_t>(inner));
      for (int64_t i = 0; i < inner; ++i) {
        mx[static_cast<size_t>(i)] = s[i];
        arg[static_cast<size_t>(i)] = 0;
      }
      for (int64_t a = 1; a < len; ++a)
        for (int64_t i = 0; i < inner; ++i)
          if (s[a * inner + i] > mx[static_cast<size_t>(i)]) {
            mx[static_cast<size_t>(i)] = s[a * inner + i];
            arg[static_cast<size_t>(i)] = a;
          }
      if (mode == SoftMode::kHardmax) {
        for (int64_t a = 0; a < len; ++a)
          for (int64_t i = 0; i < inner; ++i) dst[a * inner + i] = arg[static_cast<size_t>(i)] == a ? T(1) : T(0);
        continue;
      }
      std::fill(sum.begin(), sum.end(), T(0));
      for (int64_t a = 0; a < len; ++a)
        for (int64_t i = 0; i < inner; ++i) {
          const T e = std::exp(s[a * inner + i] - mx[static_cast<size_t>(i)]);
          if (mode == SoftMode::kSoftmax) dst[a * inner + i] = e;
          sum[static_cast<size_t>(i)] += e;
        }
      for (int64_t a = 0; a < len; ++a)
        for (int64_t i = 0; i < inner; ++i) {
          if (mode == SoftMode::kSoftmax) dst[a * inner + i] /= sum[static_cast<size_t>(i)];
          else dst[a * inner + i] = s[a * inner + i] - mx[static_cast<size_t>(i)] - std::log(sum[static_cast<size_t>(i)]);
        }
    }
  });
  return ok_status();
}

// kSel: the dtypes compiled in (a selective build's, core/base/selective.h).
template <DTypeMask kSel, Status (*F32)(exec::KernelContext&), Status (*F64)(exec::KernelContext&)>
Status by_dtype(exec::KernelContext& ctx) {
  switch (ctx.input(0)->dtype()) {
    case DType::kF32:
      if constexpr (dtype_in(kSel, DType::kF32)) return F32(ctx);
      break;
    case DType::kF64:
      if constexpr (dtype_in(kSel, DType::kF64)) return F64(ctx);
      break;
    default:
      break;
  }
  return unsupported(ctx.place(), ": ", ctx.node().op, " has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
}

template <typename T, SoftMode M>
Status softmax_mode(exec::KernelContext& ctx) {
  return softmax_typed<T>(ctx, M);
}

}  // namespace

void register_nn_norm_target(KernelRegistry& r) {
  const std::vector<DType> types = {DType::kF32, DType::kF64};
  TSR_IF_SELECTED("BatchNormalization") r.add_fn("BatchNormalization", types, by_dtype<kSel, batch_norm_typed<float>, batch_norm_typed<double>>);
  TSR_IF_SELECTED("BatchNormalizationGrad") r.add_fn("BatchNormalizationGrad", types, by_dtype<kSel, batch_norm_grad_typed<float>, batch_norm_grad_typed<double>>);
  TSR_IF_SELECTED("LayerNormalizationGrad") r.add_fn("LayerNormalizationGrad", types, by_dtype<kSel, layer_norm_grad_typed<float>, layer_norm_grad_typed<double>>);
  TSR_IF_SELECTED("InstanceNormalization") r.add_fn("InstanceNormalization", types, by_dtype<kSel, instance_norm_typed<float>, instance_norm_typed<double>>);
  TSR_IF_SELECTED("LRN") r.add_fn("LRN", types, by_dtype<kSel, lrn_typed<float>, lrn_typed<double>>);
  TSR_IF_SELECTED("MeanVarianceNormalization") r.add_fn("MeanVarianceNormalization", types, by_dtype<kSel, mvn_typed<float>, mvn_typed<double>>);
  TSR_IF_SELECTED("Softmax") r.add_fn("Softmax", types,
           by_dtype<kSel, softmax_mode<float, SoftMode::kSoftmax>, softmax_mode<double, SoftMode::kSoftmax>>);
  TSR_IF_SELECTED("LogSoftmax") r.add_fn("LogSoftmax", types,
           by_dtype<kSel, softmax_mode<float, SoftMode::kLogSoftmax>, softmax_mode<double, SoftMode::kLogSoftmax>>);
  TSR_IF_SELECTED("Hardmax") r.add_fn("Hardmax", types,
           by_dtype<kSel, softmax_mode<float, SoftMode::kHardmax>, softmax_mode<double, SoftMode::kHardmax>>);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_nn_norm_target);

void register_nn_norm_kernels(KernelRegistry& r) { HWY_DYNAMIC_DISPATCH(register_nn_norm_target)(r); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
