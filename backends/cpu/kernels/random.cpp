// CPU kernels for the random ops (semantics: core/ops/families/random.cpp), on std::mt19937_64.
// A node with a `seed` attribute restarts its generator from that seed at every run (so a seeded
// graph is reproducible run to run); without one, the generator continues across runs.
#include <cmath>
#include <algorithm>
#include <mutex>
#include <random>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

template <typename T>
void store(T* p, int64_t i, double v) {
  if constexpr (std::is_same_v<T, Half>) p[i].bits = f32_to_f16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>) p[i].bits = f32_to_bf16(static_cast<float>(v));
  else p[i] = static_cast<T>(v);
}

// What a node draws, fixed by its op when the kernel is created (run() compares no op names).
enum class Draw { kUniform, kNormal, kBernoulli, kDropout, kMultinomial };

class RandomKernel final : public exec::Kernel {
 public:
  RandomKernel(const ir::Node& node, Draw draw) : draw_(draw) {
    // The distribution's parameters (OpDef defaults filled in): [low, high) or N(mean, scale^2).
    lo_ = node.attr_float(draw == Draw::kNormal ? "mean" : "low");
    hi_ = node.attr_float(draw == Draw::kNormal ? "scale" : "high");
    const ir::Attribute* s = node.attr("seed");
    seeded_ = s != nullptr;
    seed_ = s ? static_cast<uint64_t>(s->kind == ir::AttrKind::kInt ? s->i : static_cast<int64_t>(s->f)) : std::random_device{}();
    gen_.seed(seed_);
  }

  Status run(KernelContext& ctx) override {
    // The generator is the kernel's run-time state: concurrent runs of one Plan take turns.
    std::lock_guard<std::mutex> lock(mu_);
    if (seeded_) gen_.seed(seed_);
    if (draw_ == Draw::kDropout) return dropout(ctx);
    if (draw_ == Draw::kMultinomial) return multinomial(ctx);
    TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
    const bool normal = draw_ == Draw::kNormal;
    const bool bernoulli = draw_ == Draw::kBernoulli;
    std::uniform_real_distribution<double> uni(bernoulli ? 0.0 : lo_, bernoulli ? 1.0 : hi_);
    std::normal_distribution<double> nrm(lo_, hi_);
    const Tensor* p = bernoulli ? ctx.input(0) : nullptr;
    bool ok = dispatch_dtype(y->dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* o = y->mut_data<T>();
      for (int64_t i = 0; i < y->numel(); ++i) {
        double v = normal ? nrm(gen_) : uni(gen_);
        if (bernoulli) v = v < p->scalar_f64(i) ? 1.0 : 0.0;
        store(o, i, v);
      }
    });
    if (!ok) return unsupported(ctx.place(), ": output dtype ", dtype_name(y->dtype()));
    return ok_status();
  }

 private:
  Status dropout(KernelContext& ctx) {
    const Tensor& x = *ctx.input(0);
    const double ratio = ctx.input(1) ? ctx.input(1)->scalar_f64() : 0.5;
    const bool training = ctx.input(2) && ctx.input(2)->data<bool>()[0];
    Tensor* mask = nullptr;
    if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0) {
      TSR_ASSIGN_OR_RETURN(mask, ctx.alloc_output(1));
    }
    if (!training || ratio == 0) {
      ctx.set_output(0, x);  // identity: no copy
      if (mask) std::fill_n(mask->mut_data<bool>(), mask->numel(), true);
      return ok_status();
    }
    TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    const double scale = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const bool keep = uni(gen_) >= ratio;
      if (mask) mask->mut_data<bool>()[i] = keep;
      const double v = keep ? x.scalar_f64(i) * scale : 0.0;
      dispatch_dtype(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (!std::is_integral_v<T>) store(y->mut_data<T>(), i, v);
      });
    }
    return ok_status();
  }

  Status multinomial(KernelContext& ctx) {
    const Tensor& logits = *ctx.input(0);
    TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
    const int64_t batch = logits.dim(0), classes = logits.dim(1), n = y->dim(1);
    std::vector<double> cdf(static_cast<size_t>(classes));
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    for (int64_t b = 0; b < batch; ++b) {
      double mx = -INFINITY, acc = 0;
      for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, logits.scalar_f64(b * classes + c));
      for (int64_t c = 0; c < classes; ++c) cdf[static_cast<size_t>(c)] = acc += std::exp(logits.scalar_f64(b * classes + c) - mx);
      for (int64_t s = 0; s < n; ++s) {
        const double u = uni(gen_) * acc;
        const auto c = static_cast<int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        const int64_t cls = std::min(c, classes - 1);
        if (y->dtype() == DType::kI64) y->mut_data<int64_t>()[b * n + s] = cls;
        else y->mut_data<int32_t>()[b * n + s] = static_cast<int32_t>(cls);
      }
    }
    return ok_status();
  }

  Draw draw_;
  double lo_ = 0, hi_ = 1;  // kUniform, kNormal only
  bool seeded_ = false;
  uint64_t seed_ = 0;
  std::mutex mu_;
  std::mt19937_64 gen_;
};

template <Draw kDraw>
Expected<std::unique_ptr<exec::Kernel>> create(const exec::KernelInit& init) {
  return std::unique_ptr<exec::Kernel>(new RandomKernel(init.node, kDraw));
}

}  // namespace

void register_random_kernels(KernelRegistry& r) {
  const std::vector<DType> floats = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
  TSR_IF_SELECTED("Dropout") r.add("Dropout", floats, &create<Draw::kDropout>);
  TSR_IF_SELECTED("Bernoulli") r.add("Bernoulli", {DType::kF32, DType::kF64, DType::kF16}, &create<Draw::kBernoulli>);
  TSR_IF_SELECTED("RandomUniformLike") r.add("RandomUniformLike", {}, &create<Draw::kUniform>);
  TSR_IF_SELECTED("RandomNormalLike") r.add("RandomNormalLike", {}, &create<Draw::kNormal>);
  TSR_IF_SELECTED("RandomUniform") r.add("RandomUniform", {}, &create<Draw::kUniform>);
  TSR_IF_SELECTED("RandomNormal") r.add("RandomNormal", {}, &create<Draw::kNormal>);
  TSR_IF_SELECTED("Multinomial") r.add("Multinomial", {DType::kF32, DType::kF64}, &create<Draw::kMultinomial>);
}

}  // namespace tsr::cpu
