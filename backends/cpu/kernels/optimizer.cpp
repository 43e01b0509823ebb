// CPU kernels for Adagrad, Momentum and Adam (semantics and shapes:
// core/ops/families/optimizer.cpp). With G' = norm_coefficient * X + G:
//   Adagrad:  r = R / (1 + T * decay);  H' = H + G'^2;  X' = X - r * G' / (sqrt(H') + eps)
//   Momentum: b = T > 0 ? beta : 1;  V' = alpha * V + b * G';
//             standard X' = X - R * V';  nesterov X' = X - R * (G' + alpha * V')
//   Adam:     V' = alpha V + (1 - alpha) G';  H' = beta H + (1 - beta) G'^2;
//             R' = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R;
//             X' = (1 - norm_coefficient_post) (X - R' V' / (sqrt(H') + eps))
//   AdamW:    (torch.optim.AdamW) X_d = X (1 - R wd);  M' = b1 M + (1 - b1) G;  V' = b2 V + (1 - b2) G^2;
//             X' = X_d - R (M' / (1 - b1^T)) / (sqrt(V' / (1 - b2^T)) + eps)
// The f32 Adam/AdamW loops run on the build's baseline Highway vectors of doubles (the same
// double arithmetic as the scalar loops, which do the tails and f64; the scalar loops alone
// stay scalar: std::sqrt's errno check keeps the compiler from vectorizing them).
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

enum class Kind { kAdagrad, kMomentum, kAdam, kAdamW };

namespace hn = hwy::HWY_NAMESPACE;
#if HWY_HAVE_FLOAT64
using DD = hn::ScalableTag<double>;
using DF = hn::Rebind<float, DD>;

// Adam's constants (the scalar loop's names).
struct AdamConsts {
  double norm, alpha, beta, eps, post, r;
};

// Adam over f32 elements [0, n) a vector of doubles at a time; returns the first element left.
int64_t adam_f32_vectors(const AdamConsts& k, const float* px, const float* pg, const float* p1, const float* p2,
                         float* ox, float* o1, float* o2, int64_t n) {
  const DD dd;
  const DF df;
  const auto L = static_cast<int64_t>(hn::Lanes(dd));
  const auto norm = hn::Set(dd, k.norm), alpha = hn::Set(dd, k.alpha), alpha1 = hn::Set(dd, 1 - k.alpha);
  const auto beta = hn::Set(dd, k.beta), beta1 = hn::Set(dd, 1 - k.beta), eps = hn::Set(dd, k.eps);
  const auto post1 = hn::Set(dd, 1 - k.post), r = hn::Set(dd, k.r);
  int64_t e = 0;
  for (; e + L <= n; e += L) {
    const auto x = hn::PromoteTo(dd, hn::LoadU(df, px + e));
    const auto gr = hn::MulAdd(norm, x, hn::PromoteTo(dd, hn::LoadU(df, pg + e)));
    const auto v = hn::MulAdd(alpha, hn::PromoteTo(dd, hn::LoadU(df, p1 + e)), hn::Mul(alpha1, gr));
    const auto h = hn::MulAdd(beta, hn::PromoteTo(dd, hn::LoadU(df, p2 + e)), hn::Mul(hn::Mul(beta1, gr), gr));
    hn::StoreU(hn::DemoteTo(df, v), df, o1 + e);
    hn::StoreU(hn::DemoteTo(df, h), df, o2 + e);
    const auto step = hn::Div(hn::Mul(r, v), hn::Add(hn::Sqrt(h), eps));
    hn::StoreU(hn::DemoteTo(df, hn::Mul(post1, hn::Sub(x, step))), df, ox + e);
  }
  return e;
}

// AdamW's constants (the scalar loop's names).
struct AdamWConsts {
  double b1, b2, eps, decay, lr, c1, c2;
};

int64_t adamw_f32_vectors(const AdamWConsts& k, const float* px, const float* pg, const float* p1, const float* p2,
                          float* ox, float* o1, float* o2, int64_t n) {
  const DD dd;
  const DF df;
  const auto L = static_cast<int64_t>(hn::Lanes(dd));
  const auto b1 = hn::Set(dd, k.b1), b1c = hn::Set(dd, 1 - k.b1), b2 = hn::Set(dd, k.b2), b2c = hn::Set(dd, 1 - k.b2);
  const auto eps = hn::Set(dd, k.eps), decay = hn::Set(dd, k.decay), lr = hn::Set(dd, k.lr);
  const auto c1 = hn::Set(dd, k.c1), c2 = hn::Set(dd, k.c2);
  int64_t e = 0;
  for (; e + L <= n; e += L) {
    const auto g = hn::PromoteTo(dd, hn::LoadU(df, pg + e));
    const auto m = hn::MulAdd(b1, hn::PromoteTo(dd, hn::LoadU(df, p1 + e)), hn::Mul(b1c, g));
    const auto v = hn::MulAdd(b2, hn::PromoteTo(dd, hn::LoadU(df, p2 + e)), hn::Mul(hn::Mul(b2c, g), g));
    hn::StoreU(hn::DemoteTo(df, m), df, o1 + e);
    hn::StoreU(hn::DemoteTo(df, v), df, o2 + e);
    const auto step = hn::Div(hn::Mul(lr, hn::Mul(m, c1)), hn::Add(hn::Sqrt(hn::Mul(v, c2)), eps));
    hn::StoreU(hn::DemoteTo(df, hn::Sub(hn::Mul(hn::PromoteTo(dd, hn::LoadU(df, px + e)), decay), step)), df, ox + e);
  }
  return e;
}
#else   // no f64 vectors on this target: the scalar loops do every element
struct AdamConsts {
  double norm, alpha, beta, eps, post, r;
};
struct AdamWConsts {
  double b1, b2, eps, decay, lr, c1, c2;
};
int64_t adam_f32_vectors(const AdamConsts&, const float*, const float*, const float*, const float*, float*, float*,
                         float*, int64_t) {
  return 0;
}
int64_t adamw_f32_vectors(const AdamWConsts&, const float*, const float*, const float*, const float*, float*, float*,
                          float*, int64_t) {
  return 0;
}
#endif

template <typename T, Kind kKind>
Status update(KernelContext& ctx) {
  const auto& node = ctx.node();
  const size_t state = kKind == Kind::kAdam || kKind == Kind::kAdamW ? 2 : 1;
  const size_t n = (ctx.num_inputs() - 2) / (2 + state);
  const double lr = ctx.input(0)->scalar_f64();
  const int64_t step = ctx.input(1)->scalar_i64();
  const double norm = node.attr_float("norm_coefficient");
  for (size_t i = 0; i < n; ++i) {
    const Tensor& x = *ctx.input(2 + i);
    const Tensor& g = *ctx.input(2 + n + i);
    const Tensor& s1 = *ctx.input(2 + 2 * n + i);
    for (size_t k = 1; k < 2 + state; ++k)
      if (ctx.input(2 + k * n + i)->numel() != x.numel())
        return ctx.error("input[", 2 + k * n + i, "] has ", ctx.input(2 + k * n + i)->numel(), " elements, X[", i, "] has ", x.numel());
    TSR_ASSIGN_OR_RETURN(Tensor* xo, ctx.alloc_output(i));
    TSR_ASSIGN_OR_RETURN(Tensor* s1o, ctx.alloc_output(n + i));
    const T* px = x.data<T>();
    const T* pg = g.data<T>();
    const T* p1 = s1.data<T>();
    T* ox = xo->mut_data<T>();
    T* o1 = s1o->mut_data<T>();
    if constexpr (kKind == Kind::kAdagrad) {
      const double r = lr / (1.0 + static_cast<double>(step) * node.attr_float("decay_factor"));
      const double eps = node.attr_float("epsilon");
      for (int64_t e = 0; e < x.numel(); ++e) {
        const double gr = norm * px[e] + pg[e];
        const double h = p1[e] + gr * gr;
        o1[e] = static_cast<T>(h);
        ox[e] = static_cast<T>(px[e] - r * gr / (std::sqrt(h) + eps));
      }
    } else if constexpr (kKind == Kind::kMomentum) {
      const double alpha = node.attr_float("alpha");
      const double beta = step > 0 ? node.attr_float("beta") : 1.0;
      const bool nesterov = node.attr_string("mode") == "nesterov";
      for (int64_t e = 0; e < x.numel(); ++e) {
        const double gr = norm * px[e] + pg[e];
        const double v = alpha * p1[e] + beta * gr;
        o1[e] = static_cast<T>(v);
        ox[e] = static_cast<T>(px[e] - lr * (nesterov ? gr + alpha * v : v));
      }
    } else if constexpr (kKind == Kind::kAdamW) {
      const double b1 = node.attr_float("beta1"), b2 = node.attr_float("beta2");
      const double eps = node.attr_float("epsilon"), decay = 1.0 - lr * node.attr_float("weight_decay");
      const double t = static_cast<double>(std::max<int64_t>(step, 1));
      const double c1 = 1.0 / (1.0 - std::pow(b1, t)), c2 = 1.0 / (1.0 - std::pow(b2, t));
      const T* p2 = ctx.input(2 + 3 * n + i)->data<T>();
      TSR_ASSIGN_OR_RETURN(Tensor* s2o, ctx.alloc_output(2 * n + i));
      T* o2 = s2o->mut_data<T>();
      int64_t e = 0;
      if constexpr (std::is_same_v<T, float>)
        e = adamw_f32_vectors({b1, b2, eps, decay, lr, c1, c2}, px, pg, p1, p2, ox, o1, o2, x.numel());
      for (; e < x.numel(); ++e) {
        const double m = b1 * p1[e] + (1 - b1) * pg[e];
        const double v = b2 * p2[e] + (1 - b2) * pg[e] * pg[e];
        o1[e] = static_cast<T>(m);
        o2[e] = static_cast<T>(v);
        ox[e] = static_cast<T>(px[e] * decay - lr * (m * c1) / (std::sqrt(v * c2) + eps));
      }
    } else {
      const double alpha = node.attr_float("alpha"), beta = node.attr_float("beta");
      const double eps = node.attr_float("epsilon"), post = node.attr_float("norm_coefficient_post");
      const double t = static_cast<double>(step);
      const double r = step > 0 ? lr * std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t)) : lr;
      const T* p2 = ctx.input(2 + 3 * n + i)->data<T>();
      TSR_ASSIGN_OR_RETURN(Tensor* s2o, ctx.alloc_output(2 * n + i));
      T* o2 = s2o->mut_data<T>();
      int64_t e = 0;
      if constexpr (std::is_same_v<T, float>)
        e = adam_f32_vectors({norm, alpha, beta, eps, post, r}, px, pg, p1, p2, ox, o1, o2, x.numel());
      for (; e < x.numel(); ++e) {
        const double gr = norm * px[e] + pg[e];
        const double v = alpha * p1[e] + (1 - alpha) * gr;
        const double h = beta * p2[e] + (1 - beta) * gr * gr;
        o1[e] = static_cast<T>(v);
        o2[e] = static_cast<T>(h);
        ox[e] = static_cast<T>((1 - post) * (px[e] - r * v / (std::sqrt(h) + eps)));
      }
    }
  }
  return ok_status();
}

template <Kind kKind>
Status optimizer_kernel(KernelContext& ctx) {
  if (ctx.input(2)->dtype() == DType::kF64) return update<double, kKind>(ctx);
  return update<float, kKind>(ctx);
}

}  // namespace

void register_optimizer_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("Adagrad") r.add_fn("Adagrad", {DType::kF32, DType::kF64}, optimizer_kernel<Kind::kAdagrad>);
  TSR_IF_SELECTED("Momentum") r.add_fn("Momentum", {DType::kF32, DType::kF64}, optimizer_kernel<Kind::kMomentum>);
  TSR_IF_SELECTED("Adam") r.add_fn("Adam", {DType::kF32, DType::kF64}, optimizer_kernel<Kind::kAdam>);
  TSR_IF_SELECTED("AdamW") r.add_fn("AdamW", {DType::kF32, DType::kF64}, optimizer_kernel<Kind::kAdamW>);
}

}  // namespace tsr::cpu
