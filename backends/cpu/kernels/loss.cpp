// CPU kernels for NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (semantics: core/ops/families/loss.cpp). Inputs are viewed as [N, C, D] with D the product of
// the trailing dims; accumulation is in double so that "mean" over many elements stays exact.
#include <algorithm>
#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/scratch.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

template <typename T> double load(const T* p, int64_t i) { return static_cast<double>(p[i]); }
template <> double load<Half>(const Half* p, int64_t i) { return f16_to_f32(p[i].bits); }
template <typename T> void store(T* p, int64_t i, double v) { p[i] = static_cast<T>(v); }
template <> void store<Half>(Half* p, int64_t i, double v) { p[i].bits = f32_to_f16(static_cast<float>(v)); }

// NLL over log-probabilities `logp` ([N, C, D], any float T). Writes the loss output.
template <typename T>
Status nll(KernelContext& ctx, const T* logp, int64_t n, int64_t c, int64_t d) {
  const Tensor& target = *ctx.input(1);
  const Tensor* weight = ctx.input(2);
  const bool has_ii = ctx.node().attr("ignore_index") != nullptr;
  const int64_t ii = ctx.node().attr_int("ignore_index", 0);
  const std::string reduction = ctx.node().attr_string("reduction");
  if (weight && weight->numel() != c) return ctx.error("input[2] (weight) has ", weight->numel(), " elements, expected C = ", c);
  TSR_ASSIGN_OR_RETURN(Tensor* out, ctx.alloc_output(0));
  T* o = out->mut_data<T>();
  double sum = 0, wsum = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const int64_t cls = target.scalar_i64(i * d + j);
      double loss = 0, w = 0;
      if (!(has_ii && cls == ii)) {
        if (cls < 0 || cls >= c)
          return ctx.error("input[1] (target) value ", cls, " at ", i * d + j, " is outside [0, ", c, ")");
        w = weight ? weight->scalar_f64(cls) : 1.0;
        loss = -load(logp, (i * c + cls) * d + j) * w;
      }
      if (reduction == "none") store(o, i * d + j, loss);
      sum += loss;
      wsum += w;
    }
  if (reduction == "sum") store(o, 0, sum);
  if (reduction == "mean") store(o, 0, wsum == 0 ? 0.0 : sum / wsum);
  return ok_status();
}

template <typename T>
Status loss_typed(KernelContext& ctx, bool softmax) {
  const Tensor& x = *ctx.input(0);
  const int64_t n = x.dim(0), c = x.dim(1), d = x.numel() / std::max<int64_t>(n * c, 1);
  if (!softmax) return nll<T>(ctx, x.data<T>(), n, c, d);
  // log_prob = x - max - log(sum(exp(x - max))) over the class axis.
  Tensor logp;
  if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0) {
    TSR_ASSIGN_OR_RETURN(Tensor* lp, ctx.alloc_output(1));
    logp = *lp;
  } else {
    TSR_ASSIGN_OR_RETURN(logp, Tensor::empty(x.dtype(), x.shape()));
  }
  const T* in = x.data<T>();
  T* lp = logp.mut_data<T>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) {
      double mx = -INFINITY;
      for (int64_t k = 0; k < c; ++k) mx = std::max(mx, load(in, (i * c + k) * d + j));
      double s = 0;
      for (int64_t k = 0; k < c; ++k) s += std::exp(load(in, (i * c + k) * d + j) - mx);
      const double lse = mx + std::log(s);
      for (int64_t k = 0; k < c; ++k) store(lp, (i * c + k) * d + j, load(in, (i * c + k) * d + j) - lse);
    }
  return nll<T>(ctx, lp, n, c, d);
}

// The VJPs (semantics: core/ops/families/loss.cpp): per (n, d) position a coefficient c from
// dLoss, the weight and the reduction; then dX over the C classes, rows in parallel.
template <typename T>
Status loss_grad_typed(KernelContext& ctx, bool softmax) {
  const Tensor& dl = *ctx.input(0);
  const Tensor& x = *ctx.input(1);
  const Tensor& target = *ctx.input(2);
  const Tensor* weight = ctx.input(3);
  const int64_t n = x.dim(0), c = x.dim(1), d = x.numel() / std::max<int64_t>(n * c, 1);
  const bool has_ii = ctx.node().attr("ignore_index") != nullptr;
  const int64_t ii = ctx.node().attr_int("ignore_index", 0);
  const std::string reduction = ctx.node().attr_string("reduction");
  if (weight && weight->numel() != c) return ctx.error("input[3] (weight) has ", weight->numel(), " elements, expected C = ", c);
  if (target.numel() != n * d) return ctx.error("input[2] (target) has ", target.numel(), " elements, expected ", n * d);
  const bool none = reduction == "none";
  if (dl.numel() != (none ? n * d : 1)) return ctx.error("input[0] (dLoss) has ", dl.numel(), " elements");
  // Per-position weights (0 = ignored), and the mean's denominator; then per row the softmax
  // numerators. From the run's scratch arena: a steady-state training step allocates nothing.
  TSR_ASSIGN_OR_RETURN(const Scratch<double> coef, Scratch<double>::make(ctx, static_cast<size_t>(n * d)));
  TSR_ASSIGN_OR_RETURN(const Scratch<int64_t> cls, Scratch<int64_t>::make(ctx, static_cast<size_t>(n * d)));
  TSR_ASSIGN_OR_RETURN(const Scratch<double> exps, Scratch<double>::make(ctx, static_cast<size_t>(n * c)));
  double wsum = 0;
  for (int64_t p = 0; p < n * d; ++p) {
    const int64_t t = target.scalar_i64(p);
    double w = 0;
    if (!(has_ii && t == ii)) {
      if (t < 0 || t >= c) return ctx.error("input[2] (target) value ", t, " at ", p, " is outside [0, ", c, ")");
      w = weight ? weight->scalar_f64(t) : 1.0;
    }
    cls[static_cast<size_t>(p)] = t;
    coef[static_cast<size_t>(p)] = w;
    wsum += w;
  }
  const T* pdl = dl.data<T>();
  const bool mean = reduction == "mean";
  // A mean over zero total weight is 0 whatever the scores: no gradient.
  const double g0 = none || (mean && wsum == 0) ? 0.0 : load(pdl, 0) / (mean ? wsum : 1.0);
  for (int64_t p = 0; p < n * d; ++p) {
    double& k = coef[static_cast<size_t>(p)];
    k = k == 0 ? 0.0 : k * (none ? load(pdl, p) : g0);
  }
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const T* in = x.data<T>();
  T* o = out->mut_data<T>();
  ctx.pool().parallel_for(n, 4, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < d; ++j) {
        double* e = exps.data() + i * c;
        const double k = coef[static_cast<size_t>(i * d + j)];
        const int64_t t = cls[static_cast<size_t>(i * d + j)];
        const int64_t base = i * c * d + j;
        if (!softmax || k == 0) {
          for (int64_t q = 0; q < c; ++q) store(o, base + q * d, 0.0);
          if (k != 0) store(o, base + t * d, -k);
          continue;
        }
        double mx = -INFINITY, s = 0;
        for (int64_t q = 0; q < c; ++q) mx = std::max(mx, load(in, base + q * d));
        for (int64_t q = 0; q < c; ++q) s += (e[q] = std::exp(load(in, base + q * d) - mx));
        const double ks = k / s;
        for (int64_t q = 0; q < c; ++q) store(o, base + q * d, ks * e[q] - (q == t ? k : 0.0));
      }
  });
  return ok_status();
}

template <bool kSoftmax>
Status loss_grad_kernel(KernelContext& ctx) {
  switch (ctx.input(1)->dtype()) {
    case DType::kF32: return loss_grad_typed<float>(ctx, kSoftmax);
    case DType::kF64: return loss_grad_typed<double>(ctx, kSoftmax);
    case DType::kF16: return loss_grad_typed<Half>(ctx, kSoftmax);
    default: return unsupported(ctx.place(), ": dtype ", dtype_name(ctx.input(1)->dtype()));
  }
}

template <bool kSoftmax>
Status loss_kernel(KernelContext& ctx) {
  switch (ctx.input(0)->dtype()) {
    case DType::kF32: return loss_typed<float>(ctx, kSoftmax);
    case DType::kF64: return loss_typed<double>(ctx, kSoftmax);
    case DType::kF16: return loss_typed<Half>(ctx, kSoftmax);
    default: return unsupported(ctx.place(), ": dtype ", dtype_name(ctx.input(0)->dtype()));
  }
}

}  // namespace

void register_loss_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("NegativeLogLikelihoodLoss") r.add_fn("NegativeLogLikelihoodLoss", {DType::kF32, DType::kF64, DType::kF16}, loss_kernel<false>);
  TSR_IF_SELECTED("SoftmaxCrossEntropyLoss") r.add_fn("SoftmaxCrossEntropyLoss", {DType::kF32, DType::kF64, DType::kF16}, loss_kernel<true>);
  TSR_IF_SELECTED("NegativeLogLikelihoodLossGrad") r.add_fn("NegativeLogLikelihoodLossGrad", {DType::kF32, DType::kF64, DType::kF16}, loss_grad_kernel<false>);
  TSR_IF_SELECTED("SoftmaxCrossEntropyLossGrad") r.add_fn("SoftmaxCrossEntropyLossGrad", {DType::kF32, DType::kF64, DType::kF16}, loss_grad_kernel<true>);
}

}  // namespace tsr::cpu
