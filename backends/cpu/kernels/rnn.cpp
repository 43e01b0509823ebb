// CPU kernels for RNN, GRU and LSTM (semantics and shapes: core/ops/families/rnn.cpp).
//
// Per direction, the input projection X·W^T + Wb is computed for all steps first; the recurrence
// then adds H·R^T + Rb per step. sequence_lens shortens a batch row's sequence: its steps past the
// end leave Y zero and its state unchanged; a reverse direction starts at the row's last step.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/scratch.h"
#include "backends/cpu/kernels/gemm.h"

namespace tsr::cpu {

namespace {

enum class CellKind { kRnn, kGru, kLstm };

enum class ActKind { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign, kSoftplus };

struct Activation {
  ActKind kind = ActKind::kSigmoid;
  double alpha = 0, beta = 0;

  template <typename T>
  T operator()(T x) const {
    switch (kind) {
      case ActKind::kRelu: return x > T(0) ? x : T(0);
      case ActKind::kTanh: return std::tanh(x);
      case ActKind::kSigmoid: return T(1) / (T(1) + std::exp(-x));
      case ActKind::kAffine: return T(alpha) * x + T(beta);
      case ActKind::kLeakyRelu: return x >= T(0) ? x : T(alpha) * x;
      case ActKind::kThresholdedRelu: return x > T(alpha) ? x : T(0);
      case ActKind::kScaledTanh: return T(alpha) * std::tanh(T(beta) * x);
      case ActKind::kHardSigmoid: return std::max(T(0), std::min(T(1), T(alpha) * x + T(beta)));
      case ActKind::kElu: return x >= T(0) ? x : T(alpha) * (std::exp(x) - T(1));
      case ActKind::kSoftsign: return x / (T(1) + std::fabs(x));
      case ActKind::kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// Parses one activation name; `alphas`/`betas` are consumed in order by the functions that use them.
Expected<Activation> parse_activation(const std::string& name, const std::vector<double>& alphas, size_t* ai,
                                      const std::vector<double>& betas, size_t* bi) {
  struct Entry { const char* name; ActKind kind; bool has_alpha, has_beta; double alpha, beta; };
  static constexpr Entry kTable[] = {
      {"Relu", ActKind::kRelu, false, false, 0, 0},        {"Tanh", ActKind::kTanh, false, false, 0, 0},
      {"Sigmoid", ActKind::kSigmoid, false, false, 0, 0},  {"Affine", ActKind::kAffine, true, true, 1, 0},
      {"LeakyRelu", ActKind::kLeakyRelu, true, false, 0.01, 0},
      {"ThresholdedRelu", ActKind::kThresholdedRelu, true, false, 1, 0},
      {"ScaledTanh", ActKind::kScaledTanh, true, true, 1, 1},
      {"HardSigmoid", ActKind::kHardSigmoid, true, true, 0.2, 0.5},
      {"Elu", ActKind::kElu, true, false, 1, 0},           {"Softsign", ActKind::kSoftsign, false, false, 0, 0},
      {"Softplus", ActKind::kSoftplus, false, false, 0, 0},
  };
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  for (const auto& e : kTable) {
    std::string n = e.name;
    std::transform(n.begin(), n.end(), n.begin(), ::tolower);
    if (n != lower) continue;
    Activation a{e.kind, e.alpha, e.beta};
    if (e.has_alpha && *ai < alphas.size()) a.alpha = alphas[(*ai)++];
    if (e.has_beta && *bi < betas.size()) a.beta = betas[(*bi)++];
    return a;
  }
  return unsupported("activation \"", name, "\"");
}

template <typename T>
T dot(const T* a, const T* b, int64_t n) {
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

// out[g] = m[g, :] . v + bias[g] for g < rows (m: rows x n, row-major): the recurrent product
// H . R^T of one time step. f32 through the vectorized SGEMM (one row of A, B transposed: a
// SIMD dot product per output, at the best SIMD target), other dtypes through dot().
template <typename T>
void matvec_rows(const T* v, const T* m, const T* bias, int64_t rows, int64_t n, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(false, true, 1, rows, n, 1.0f, v, n, m, n, 0.0f, out, rows, nullptr);
    if (bias)
      for (int64_t g = 0; g < rows; ++g) out[g] += bias[g];
  } else {
    for (int64_t g = 0; g < rows; ++g) out[g] = dot(v, m + g * n, n) + (bias ? bias[g] : T(0));
  }
}

// The dtypes RNN, GRU and LSTM are compiled for: f32 and f64, or a selective build's subset
// (core/base/selective.h).
constexpr DTypeMask kRecurrentDTypes = selected_dtypes("RNN") | selected_dtypes("GRU") | selected_dtypes("LSTM");

class RecurrentKernel final : public exec::Kernel {
 public:
  CellKind cell = CellKind::kLstm;
  int gates = 4;
  int64_t dirs = 1;
  bool reverse_only = false;
  int64_t layout = 0;
  double clip = 0;  // 0 = no clipping
  bool input_forget = false;
  bool linear_before_reset = false;
  std::vector<std::vector<Activation>> acts;  // per direction: f[, g[, h]]

  Status run(exec::KernelContext& ctx) override {
    if constexpr (dtype_in(kRecurrentDTypes, DType::kF64))
      if (ctx.input(0)->dtype() == DType::kF64) return run_typed<double>(ctx);
    if constexpr (dtype_in(kRecurrentDTypes, DType::kF32)) return run_typed<float>(ctx);
    return unsupported(ctx.place(), ": ", ctx.node().op, " has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
  }

 private:
  template <typename T>
  T clipped(T x) const {
    return clip > 0 ? std::max(T(-clip), std::min(T(clip), x)) : x;
  }

  template <typename T>
  Status run_typed(exec::KernelContext& ctx) {
    const Tensor& X = *ctx.input(0);
    const Tensor& W = *ctx.input(1);
    const Tensor& R = *ctx.input(2);
    const Tensor* B = ctx.input(3);
    const Tensor* lens = ctx.input(4);
    const Tensor* h0 = ctx.input(5);
    const Tensor* c0 = cell == CellKind::kLstm ? ctx.input(6) : nullptr;
    const Tensor* P = cell == CellKind::kLstm ? ctx.input(7) : nullptr;
    const int64_t seq = X.dim(layout == 0 ? 0 : 1), batch = X.dim(layout == 0 ? 1 : 0), in = X.dim(2);
    const int64_t hid = R.dim(2), gh = gates * hid;
    if (R.dim(1) != gh || W.dim(1) != gh) return ctx.error("W and R must have ", gates, " * hidden rows");
    if (B && (B->numel() != dirs * 2 * gh)) return ctx.error("input[3] (B) must have ", dirs * 2 * gh, " elements");
    if (P && P->numel() != dirs * 3 * hid) return ctx.error("input[7] (P) must have ", dirs * 3 * hid, " elements");
    const Shape state_shape = layout == 0 ? Shape{dirs, batch, hid} : Shape{batch, dirs, hid};
    for (const Tensor* s : {h0, c0})
      if (s && s->shape() != state_shape) return ctx.error("initial state has shape ", shape_str(s->shape()), ", expected ", shape_str(state_shape));
    Ints len(static_cast<size_t>(batch), seq);
    if (lens) {
      if (lens->numel() != batch) return ctx.error("input[4] (sequence_lens) must have ", batch, " elements");
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t l = lens->scalar_i64(b);
        if (l < 0 || l > seq) return ctx.error("sequence_lens[", b, "] = ", l, " is outside [0, ", seq, "]");
        len[static_cast<size_t>(b)] = l;
      }
    }

    Tensor* Y = nullptr;
    Tensor* Yh = nullptr;
    Tensor* Yc = nullptr;
    Tensor** outs[3] = {&Y, &Yh, &Yc};
    for (size_t k = 0; k < std::min<size_t>(3, ctx.num_outputs()); ++k) {
      if (ctx.node().outputs[k] < 0) continue;
      TSR_ASSIGN_OR_RETURN(*outs[k], ctx.alloc_output(k));
    }
    if (Y) std::fill_n(Y->mut_data<T>(), Y->numel(), T(0));

    const T* x = X.data<T>();
    auto state_at = [&](int64_t d, int64_t b) { return (layout == 0 ? (d * batch + b) : (b * dirs + d)) * hid; };
    auto y_at = [&](int64_t t, int64_t d, int64_t b) {
      return (layout == 0 ? ((t * dirs + d) * batch + b) : ((b * seq + t) * dirs + d)) * hid;
    };

    TSR_ASSIGN_OR_RETURN(Scratch<T> xw, Scratch<T>::make(ctx, static_cast<size_t>(seq * batch * gh)));
    TSR_ASSIGN_OR_RETURN(Scratch<T> h, Scratch<T>::make(ctx, static_cast<size_t>(batch * hid)));
    TSR_ASSIGN_OR_RETURN(Scratch<T> c, Scratch<T>::make(ctx, static_cast<size_t>(batch * hid)));
    // hr holds H·R^T per gate plus, for GRU, the r gate and an (r ⊙ h) staging row.
    TSR_ASSIGN_OR_RETURN(Scratch<T> hr, Scratch<T>::filled(ctx, static_cast<size_t>(gh + hid), T(0)));
    TSR_ASSIGN_OR_RETURN(Scratch<T> rh, Scratch<T>::filled(ctx, static_cast<size_t>(hid), T(0)));
    for (int64_t d = 0; d < dirs; ++d) {
      const bool reverse = reverse_only || d == 1;
      const T* w = W.data<T>() + d * gh * in;
      const T* r = R.data<T>() + d * gh * hid;
      const T* wb = B ? B->data<T>() + d * 2 * gh : nullptr;
      const T* rb = B ? wb + gh : nullptr;
      const T* p = P ? P->data<T>() + d * 3 * hid : nullptr;
      const auto& act = acts[static_cast<size_t>(d)];
      // Input projection for every row of X at once (rows in X's own order): xw = X · W^T + Wb.
      if constexpr (std::is_same_v<T, float>)
        sgemm(false, true, seq * batch, gh, in, 1.0f, x, in, w, in, 0.0f, xw.data(), gh, &ctx.pool());
      else
        gemm_reference<T>(false, true, seq * batch, gh, in, T(1), x, in, w, in, T(0), xw.data(), gh);
      if (wb)
        for (int64_t row = 0; row < seq * batch; ++row)
          for (int64_t g = 0; g < gh; ++g) xw[static_cast<size_t>(row * gh + g)] += wb[g];
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < hid; ++j) {
          h[static_cast<size_t>(b * hid + j)] = h0 ? h0->data<T>()[state_at(d, b) + j] : T(0);
          c[static_cast<size_t>(b * hid + j)] = c0 ? c0->data<T>()[state_at(d, b) + j] : T(0);
        }
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t lb = len[static_cast<size_t>(b)];
        T* hb = h.data() + b * hid;
        T* cb = c.data() + b * hid;
        for (int64_t s = 0; s < lb; ++s) {
          const int64_t t = reverse ? lb - 1 - s : s;
          const T* xg = xw.data() + (layout == 0 ? t * batch + b : b * seq + t) * gh;
          step<T>(xg, r, rb, p, act, hb, cb, hr.data(), rh.data(), hid);
          if (Y) std::copy_n(hb, hid, Y->mut_data<T>() + y_at(t, d, b));
        }
        if (Yh) std::copy_n(hb, hid, Yh->mut_data<T>() + state_at(d, b));
        if (Yc) std::copy_n(cb, hid, Yc->mut_data<T>() + state_at(d, b));
      }
    }
    return ok_status();
  }

  // One time step for one batch row: updates h (and c for LSTM) in place.
  template <typename T>
  void step(const T* xg, const T* r, const T* rb, const T* p, const std::vector<Activation>& act, T* h, T* c,
            T* hr, T* rh, int64_t hid) const {
    const int64_t gh = gates * hid;
    if (cell == CellKind::kRnn) {
      matvec_rows(h, r, rb, hid, hid, hr);
      for (int64_t j = 0; j < hid; ++j) h[j] = act[0](clipped(xg[j] + hr[j]));
      return;
    }
    if (cell == CellKind::kLstm) {
      matvec_rows(h, r, rb, gh, hid, hr);
      for (int64_t j = 0; j < hid; ++j) {  // gate order i, o, f, c; peepholes P = [Pi, Po, Pf]
        const T cprev = c[j];
        const T i = act[0](clipped(xg[j] + hr[j] + (p ? p[j] * cprev : T(0))));
        const T f = input_forget ? T(1) - i : act[0](clipped(xg[2 * hid + j] + hr[2 * hid + j] + (p ? p[2 * hid + j] * cprev : T(0))));
        const T cand = act[1](clipped(xg[3 * hid + j] + hr[3 * hid + j]));
        const T cnew = f * cprev + i * cand;
        const T o = act[0](clipped(xg[hid + j] + hr[hid + j] + (p ? p[hid + j] * cnew : T(0))));
        c[j] = cnew;
        h[j] = o * act[2](cnew);
      }
      return;
    }
    // GRU: gates z, r, h.
    matvec_rows(h, r, rb, 2 * hid, hid, hr);
    const T* rh_w = r + 2 * hid * hid;
    const T* rbh = rb ? rb + 2 * hid : nullptr;
    for (int64_t j = 0; j < hid; ++j) hr[2 * hid + j] = act[0](clipped(xg[hid + j] + hr[hid + j]));  // r gate
    if (linear_before_reset) {
      matvec_rows(h, rh_w, rbh, hid, hid, rh);
      for (int64_t j = 0; j < hid; ++j) rh[j] *= hr[2 * hid + j];
    } else {
      // (r ⊙ h) · Rh^T: the product is staged in the tail of `hr` (its z/r part is still needed).
      T* rh_in = hr + 3 * hid;
      for (int64_t j = 0; j < hid; ++j) rh_in[j] = h[j] * hr[2 * hid + j];
      matvec_rows(rh_in, rh_w, rbh, hid, hid, rh);
    }
    for (int64_t j = 0; j < hid; ++j) {
      const T z = act[0](clipped(xg[j] + hr[j]));
      const T cand = act[1](clipped(xg[2 * hid + j] + rh[j]));
      h[j] = (T(1) - z) * cand + z * h[j];
    }
  }
};

template <CellKind kCell>
Expected<std::unique_ptr<exec::Kernel>> create_recurrent(const exec::KernelInit& init) {
  const ir::Node& node = init.node;
  auto k = std::make_unique<RecurrentKernel>();
  k->cell = kCell;
  k->gates = kCell == CellKind::kRnn ? 1 : kCell == CellKind::kGru ? 3 : 4;
  const std::string direction = node.attr_string("direction");
  k->dirs = direction == "bidirectional" ? 2 : 1;
  k->reverse_only = direction == "reverse";
  k->layout = node.attr_int("layout");
  k->clip = node.attr_float("clip", 0);
  k->input_forget = node.attr_int("input_forget") != 0;
  k->linear_before_reset = node.attr_int("linear_before_reset") != 0;
  const size_t per_dir = kCell == CellKind::kRnn ? 1 : kCell == CellKind::kGru ? 2 : 3;
  std::vector<std::string> names;
  if (const ir::Attribute* a = node.attr("activations")) names = a->strings;
  if (names.empty()) {
    const std::vector<std::string> defaults = kCell == CellKind::kRnn ? std::vector<std::string>{"Tanh"}
                                              : kCell == CellKind::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                        : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < k->dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == per_dir && k->dirs == 2) {
    names.insert(names.end(), names.begin(), names.end());
  }
  if (names.size() != per_dir * static_cast<size_t>(k->dirs))
    return invalid_model(init.place, ": attribute 'activations' has ", names.size(), " entries, expected ", per_dir * static_cast<size_t>(k->dirs));
  const auto alphas = node.attr_floats("activation_alpha");
  const auto betas = node.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  k->acts.resize(static_cast<size_t>(k->dirs));
  for (size_t i = 0; i < names.size(); ++i) {
    auto a = parse_activation(names[i], alphas, &ai, betas, &bi);
    if (!a.ok()) return a.status().with_context(init.place);
    k->acts[i / per_dir].push_back(*a);
  }
  return std::unique_ptr<exec::Kernel>(std::move(k));
}

}  // namespace

void register_rnn_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("RNN") r.add("RNN", {DType::kF32, DType::kF64}, &create_recurrent<CellKind::kRnn>);
  TSR_IF_SELECTED("GRU") r.add("GRU", {DType::kF32, DType::kF64}, &create_recurrent<CellKind::kGru>);
  TSR_IF_SELECTED("LSTM") r.add("LSTM", {DType::kF32, DType::kF64}, &create_recurrent<CellKind::kLstm>);
}

}  // namespace tsr::cpu
