// CPU kernels of the transformer normalizations (semantics: core/ops/families/transformer_norm.cpp):
// LayerNormalization, RMSNormalization, SimplifiedLayerNormalization, com.microsoft SkipLayerNormalization,
// SkipSimplifiedLayerNormalization and EmbedLayerNormalization.
//
// Every op is rows of L values: a row is assembled (input + skip + bias, or the sum of three
// embedding rows) into a buffer of the compute type F (f32 for f32/f16/bf16, f64 for f64), its
// statistics taken (two passes: mean, then the squared deviations; RMS: the squares), and the
// affine output written. Rows run in parallel, each slot with its own row buffer. The f32 row
// loops run on Highway vectors; f64 rows are scalar. Compiled once per SIMD target
// (hwy/foreach_target.h); register_transformer_norm_kernels picks the best target at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/transformer_norm.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>
#include <cstring>
#include <type_traits>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/broadcast.h"
#include "backends/cpu/kernels/scratch.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

// The compute type of storage type T.
template <typename T>
using Comp = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---- Row primitives: scalar for double, Highway for float (the overloads win over the template).

template <class F> F row_sum(const F* v, int64_t n) {
  F s = 0;
  for (int64_t i = 0; i < n; ++i) s += v[i];
  return s;
}
// sum((v - c)^2): the squared deviations (layer norm) or, with c = 0, the squares (RMS norm).
template <class F> F row_sq_dev(const F* v, int64_t n, F c) {
  F s = 0;
  for (int64_t i = 0; i < n; ++i) s += (v[i] - c) * (v[i] - c);
  return s;
}
// out = (v - mean) * inv * gamma (+ beta); out may be v.
template <class F> void row_affine(const F* v, int64_t n, F mean, F inv, const F* gamma, const F* beta, F* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = (v[i] - mean) * inv * gamma[i] + (beta ? beta[i] : F(0));
}
// out = a + b; out may be a or b.
template <class F> void row_add(const F* a, const F* b, F* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

// The two reductions run four independent accumulators: a row of a small model (ViT-tiny's and
// MiniLM's 192-384 values) is a dozen vectors, and one accumulator made each row a chain of
// dependent adds (SkipLayerNormalization 197 x 192: 8.1 -> 7.3 us on one Zen 5 core).
float row_sum(const float* v, int64_t n) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * nl <= n; i += 4 * nl) {
    a0 = hn::Add(a0, hn::LoadU(d, v + i));
    a1 = hn::Add(a1, hn::LoadU(d, v + i + nl));
    a2 = hn::Add(a2, hn::LoadU(d, v + i + 2 * nl));
    a3 = hn::Add(a3, hn::LoadU(d, v + i + 3 * nl));
  }
  for (; i + nl <= n; i += nl) a0 = hn::Add(a0, hn::LoadU(d, v + i));
  float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; i < n; ++i) s += v[i];
  return s;
}
float row_sq_dev(const float* v, int64_t n, float c) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  const auto vc = hn::Set(d, c);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  const auto sq = [&](auto acc, int64_t at) HWY_ATTR {
    const auto dv = hn::Sub(hn::LoadU(d, v + at), vc);
    return hn::MulAdd(dv, dv, acc);
  };
  int64_t i = 0;
  for (; i + 4 * nl <= n; i += 4 * nl) {
    a0 = sq(a0, i);
    a1 = sq(a1, i + nl);
    a2 = sq(a2, i + 2 * nl);
    a3 = sq(a3, i + 3 * nl);
  }
  for (; i + nl <= n; i += nl) a0 = sq(a0, i);
  float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; i < n; ++i) s += (v[i] - c) * (v[i] - c);
  return s;
}
void row_affine(const float* v, int64_t n, float mean, float inv, const float* gamma, const float* beta, float* out) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  const auto vm = hn::Set(d, mean), vi = hn::Set(d, inv);
  int64_t i = 0;
  for (; i + nl <= n; i += nl) {
    const auto xh = hn::Mul(hn::Sub(hn::LoadU(d, v + i), vm), vi);
    const auto b = beta ? hn::LoadU(d, beta + i) : hn::Zero(d);
    hn::StoreU(hn::MulAdd(xh, hn::LoadU(d, gamma + i), b), d, out + i);
  }
  for (; i < n; ++i) out[i] = (v[i] - mean) * inv * gamma[i] + (beta ? beta[i] : 0.0f);
}
void row_add(const float* a, const float* b, float* out, int64_t n) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + nl <= n; i += nl) hn::StoreU(hn::Add(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  for (; i < n; ++i) out[i] = a[i] + b[i];
}

// v = a + b (+ c) (+ bias) in F, from storage rows of T (c may be null; bias is F, may be null).
// Where T is F the additions run on the row primitives; f16/bf16 rows convert element by element.
template <typename T, typename F = Comp<T>>
void assemble_row(const T* a, const T* b, const T* c, const F* bias, F* v, int64_t n) {
  if constexpr (std::is_same_v<T, F>) {
    row_add(a, b, v, n);
    if (c) row_add(v, c, v, n);
  } else {
    for (int64_t i = 0; i < n; ++i) v[i] = load_elem(a[i]) + load_elem(b[i]) + (c ? load_elem(c[i]) : F(0));
  }
  if (bias) row_add(v, bias, v, n);
}

// What a row driver writes: y (required), and optionally the assembled sum (T, like y) and the
// per-row mean / inverse std-dev (kept in double, stored in the outputs' dtypes at the end).
template <typename T>
struct RowOutputs {
  T* y = nullptr;
  T* sum = nullptr;
  double* mean = nullptr;
  double* inv = nullptr;
};

// Normalizes the assembled row v (F) into out's row r; tmp (n values of F, may be v) holds the
// F result before it is stored where T is not F.
template <typename T, typename F = Comp<T>>
void finish_row(const F* v, F* tmp, int64_t n, int64_t r, const F* gamma, const F* beta, double eps, bool simplified,
                const RowOutputs<T>& out) {
  T* sum_row = out.sum ? out.sum + r * n : nullptr;
  if (sum_row) {
    if constexpr (std::is_same_v<T, F>) {
      if (sum_row != v) std::memcpy(sum_row, v, static_cast<size_t>(n) * sizeof(F));
    } else {
      for (int64_t i = 0; i < n; ++i) sum_row[i] = store_elem<T>(v[i]);
    }
  }
  const F len = static_cast<F>(n);
  const F mean = simplified || n == 0 ? F(0) : row_sum(v, n) / len;
  const F inv = F(1) / std::sqrt((n == 0 ? F(0) : row_sq_dev(v, n, mean) / len) + static_cast<F>(eps));
  if (out.mean) out.mean[r] = static_cast<double>(mean);
  if (out.inv) out.inv[r] = static_cast<double>(inv);
  T* y = out.y + r * n;
  if constexpr (std::is_same_v<T, F>) {
    row_affine(v, n, mean, inv, gamma, beta, y);
  } else {
    row_affine(v, n, mean, inv, gamma, beta, tmp);
    for (int64_t i = 0; i < n; ++i) y[i] = store_elem<T>(tmp[i]);
  }
}

// Stores per-row statistics into output k (any float dtype), when the node asks for it.
Status store_stats(exec::KernelContext& ctx, size_t k, const double* vals, int64_t rows) {
  if (k >= ctx.num_outputs() || ctx.node().outputs[k] < 0) return ok_status();
  TSR_ASSIGN_OR_RETURN(Tensor * t, ctx.alloc_output(k));
  bool stored = false;
  dispatch_dtype<kAllDTypes>(t->dtype(), [&](auto tag) {
    using S = decltype(tag);
    if constexpr (kIsFloatLike<S>) {
      S* p = t->mut_data<S>();
      for (int64_t r = 0; r < rows; ++r) p[r] = store_elem<S>(vals[r]);
      stored = true;
    }
  });
  return stored ? ok_status() : ctx.error("output[", k, "]: dtype ", dtype_name(t->dtype()), " is not a float dtype");
}

// A vector input (or its absence: `fill`) in F, broadcast (numpy rules) to `shape`.
template <typename T, typename F = Comp<T>>
Expected<Scratch<F>> vector_as(exec::KernelContext& ctx, const Tensor* t, const Shape& shape, F fill) {
  const int64_t n = shape_numel(shape);
  TSR_ASSIGN_OR_RETURN(Scratch<F> out, Scratch<F>::filled(ctx, static_cast<size_t>(n), fill));
  if (!t) return out;
  const T* p = t->data<T>();
  if (t->numel() == n) {
    // Same elements in the same order (only leading 1s can differ): the usual [n] scale, copied
    // without building strides, so that a steady-state run does not allocate.
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<F>(load_elem(p[i]));
    return out;
  }
  // Row-major strides of t aligned to shape's trailing dims; 0 where t has size 1 (broadcast).
  const Shape& s = t->shape();
  std::vector<int64_t> stride(shape.size(), 0);
  for (int64_t k = 1, acc = 1; k <= static_cast<int64_t>(s.size()); ++k) {
    const int64_t dim = s[s.size() - static_cast<size_t>(k)];
    stride[shape.size() - static_cast<size_t>(k)] = dim == 1 ? 0 : acc;
    acc *= dim;
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t rem = i, dd = static_cast<int64_t>(shape.size()) - 1; dd >= 0; --dd) {
      off += rem % shape[static_cast<size_t>(dd)] * stride[static_cast<size_t>(dd)];
      rem /= shape[static_cast<size_t>(dd)];
    }
    out[static_cast<size_t>(i)] = static_cast<F>(load_elem(p[off]));
  }
  return out;
}

// The common driver: `rows` rows of n values; assemble(r, dst) returns row r's values in F:
// dst (a slot's buffer, or the sum output's row where T is F and the sum is wanted) or, when no
// assembly is needed, a pointer into an input.
template <typename T, typename Assemble>
Status run_rows(exec::KernelContext& ctx, int64_t rows, int64_t n, const Comp<T>* gamma, const Comp<T>* beta,
                bool simplified, const RowOutputs<T>& out, Assemble assemble) {
  using F = Comp<T>;
  const double eps = ctx.node().attr_float("epsilon");
  TSR_ASSIGN_OR_RETURN(SlotScratch<F> bufs, SlotScratch<F>::make(ctx, static_cast<size_t>(n)));
  ctx.pool().parallel_for_slots(rows, 4, [&](int slot, int64_t r0, int64_t r1) {
    F* buf = bufs.slot(slot);
    for (int64_t r = r0; r < r1; ++r) {
      // Where T is F and the sum is requested, assemble straight into the sum output's row.
      F* dst = buf;
      if constexpr (std::is_same_v<T, F>) {
        if (out.sum) dst = out.sum + r * n;
      }
      finish_row<T>(assemble(r, dst), buf, n, r, gamma, beta, eps, simplified, out);
    }
  });
  return ok_status();
}

// run_rows' row source for a plain [rows, n] input: row r in place where T is F, else converted
// into the slot's buffer.
template <typename T>
auto x_rows(const T* px, int64_t n) {
  return [px, n](int64_t r, Comp<T>* buf) -> const Comp<T>* {
    if constexpr (std::is_same_v<T, Comp<T>>) {
      return px + r * n;
    } else {
      for (int64_t i = 0; i < n; ++i) buf[i] = load_elem(px[r * n + i]);
      return buf;
    }
  };
}

// RMSNormalization (ONNX 23) and SimplifiedLayerNormalization (outputs Y, inv_std_var?).
template <typename T>
Status rms_norm_typed(exec::KernelContext& ctx) {
  using F = Comp<T>;
  const Tensor& x = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx.node().attr_int("axis"), x.rank()));
  const Shape norm(x.shape().begin() + axis, x.shape().end());
  const int64_t n = shape_numel(norm), rows = n == 0 ? 0 : x.numel() / n;
  TSR_ASSIGN_OR_RETURN(Scratch<F> gamma, (vector_as<T>(ctx, ctx.input(1), norm, F(1))));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const bool want_inv = ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0;
  TSR_ASSIGN_OR_RETURN(Scratch<double> inv, Scratch<double>::make(ctx, want_inv ? static_cast<size_t>(rows) : 0));
  RowOutputs<T> out{y->mut_data<T>(), nullptr, nullptr, want_inv ? inv.data() : nullptr};
  const T* px = x.data<T>();
  TSR_RETURN_IF_ERROR(run_rows<T>(ctx, rows, n, gamma.data(), nullptr, true, out, x_rows<T>(px, n)));
  return store_stats(ctx, 1, inv.data(), rows);
}

// LayerNormalization (ONNX 17; outputs Y, Mean?, InvStdDev?, the statistics in stash_type's
// dtype). Scale and B broadcast to X.shape[axis:] (vector_as); rows are the leading dims. The
// statistics are taken in F (f32 for f32 input), as onnxruntime's stash_type = 1 does.
template <typename T>
Status layer_norm_typed(exec::KernelContext& ctx) {
  using F = Comp<T>;
  const Tensor& x = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx.node().attr_int("axis"), x.rank()));
  const Shape norm(x.shape().begin() + axis, x.shape().end());
  const int64_t n = shape_numel(norm), rows = n == 0 ? 0 : x.numel() / n;
  TSR_ASSIGN_OR_RETURN(Scratch<F> gamma, (vector_as<T>(ctx, ctx.input(1), norm, F(1))));
  const Tensor* beta_t = ctx.input(2);
  TSR_ASSIGN_OR_RETURN(Scratch<F> beta, (vector_as<T>(ctx, beta_t, norm, F(0))));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const auto wants = [&](size_t k) { return k < ctx.num_outputs() && ctx.node().outputs[k] >= 0; };
  TSR_ASSIGN_OR_RETURN(Scratch<double> stats, Scratch<double>::make(ctx, 2 * static_cast<size_t>(rows)));
  RowOutputs<T> out{y->mut_data<T>(), nullptr, wants(1) ? stats.data() : nullptr,
                    wants(2) ? stats.data() + rows : nullptr};
  const T* px = x.data<T>();
  TSR_RETURN_IF_ERROR(run_rows<T>(ctx, rows, n, gamma.data(), beta_t ? beta.data() : nullptr, false, out,
                                  x_rows<T>(px, n)));
  TSR_RETURN_IF_ERROR(store_stats(ctx, 1, stats.data(), rows));
  return store_stats(ctx, 2, stats.data() + rows, rows);
}

// SkipLayerNormalization (kSimplified false: inputs input, skip, gamma, beta?, bias?) and
// SkipSimplifiedLayerNormalization (true: input, skip, gamma, bias?); outputs output, mean?,
// inv_std_var?, input_skip_bias_sum?.
template <typename T, bool kSimplified>
Status skip_norm_typed(exec::KernelContext& ctx) {
  using F = Comp<T>;
  const Tensor& x = *ctx.input(0);
  const Tensor& skip = *ctx.input(1);
  const int64_t n = x.rank() > 0 ? x.dim(x.rank() - 1) : 1;
  const int64_t rows = n == 0 ? 0 : x.numel() / n, skip_rows = n == 0 ? 0 : skip.numel() / n;
  if (rows > 0 && (skip_rows == 0 || rows % skip_rows != 0))
    return ctx.error("skip ", shape_str(skip.shape()), " does not broadcast to input ", shape_str(x.shape()));
  const Shape hidden = {n};
  TSR_ASSIGN_OR_RETURN(Scratch<F> gamma, (vector_as<T>(ctx, ctx.input(2), hidden, F(1))));
  const Tensor* beta_t = kSimplified ? nullptr : ctx.input(3);
  const Tensor* bias_t = ctx.input(kSimplified ? 3 : 4);
  TSR_ASSIGN_OR_RETURN(Scratch<F> beta, (vector_as<T>(ctx, beta_t, hidden, F(0))));
  TSR_ASSIGN_OR_RETURN(Scratch<F> bias, (vector_as<T>(ctx, bias_t, hidden, F(0))));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const auto wants = [&](size_t k) { return k < ctx.num_outputs() && ctx.node().outputs[k] >= 0; };
  TSR_ASSIGN_OR_RETURN(Scratch<double> stats, Scratch<double>::make(ctx, 2 * static_cast<size_t>(rows)));
  RowOutputs<T> out{y->mut_data<T>(), nullptr, wants(1) ? stats.data() : nullptr,
                    wants(2) ? stats.data() + rows : nullptr};
  if (wants(3)) {
    TSR_ASSIGN_OR_RETURN(Tensor * s, ctx.alloc_output(3));
    out.sum = s->mut_data<T>();
  }
  const T* px = x.data<T>();
  const T* ps = skip.data<T>();
  const F* pb = bias_t ? bias.data() : nullptr;
  TSR_RETURN_IF_ERROR(run_rows<T>(ctx, rows, n, gamma.data(), beta_t ? beta.data() : nullptr, kSimplified, out,
                                  [&](int64_t r, F* buf) -> const F* {
                                    assemble_row<T>(px + r * n, ps + (r % skip_rows) * n, nullptr, pb, buf, n);
                                    return buf;
                                  }));
  TSR_RETURN_IF_ERROR(store_stats(ctx, 1, stats.data(), rows));
  return store_stats(ctx, 2, stats.data() + rows, rows);
}

// EmbedLayerNormalization: rows are (batch, seq) positions; ids are checked before any row runs.
template <typename T>
Status embed_layer_norm_typed(exec::KernelContext& ctx) {
  using F = Comp<T>;
  const Tensor& ids = *ctx.input(0);
  const Tensor* seg_ids = ctx.input(1);
  const Tensor& word = *ctx.input(2);
  const Tensor& pos = *ctx.input(3);
  const Tensor* seg = ctx.input(4);
  const Tensor* mask = ctx.input(7);
  const Tensor* pos_ids = ctx.input(8);
  const int64_t batch = ids.dim(0), seq = ids.dim(1), n = word.dim(1), rows = batch * seq;
  // Table row of each (row, table): word, position, segment.
  TSR_ASSIGN_OR_RETURN(Scratch<int64_t> at, Scratch<int64_t>::make(ctx, 3 * static_cast<size_t>(rows)));
  const auto check = [&](const char* what, int64_t v, int64_t limit) -> Status {
    if (v < 0 || v >= limit) return ctx.error(what, " ", v, " is out of range [0, ", limit, ")");
    return ok_status();
  };
  const int32_t* pid = ids.data<int32_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / seq, s = r % seq;
    at[static_cast<size_t>(3 * r)] = pid[r];
    TSR_RETURN_IF_ERROR(check("input_ids", pid[r], word.dim(0)));
    // position_ids: [batch, seq] or [1, seq] (broadcast over the batch); absent: s.
    int64_t p = s;
    if (pos_ids) p = pos_ids->data<int32_t>()[(pos_ids->dim(0) == 1 ? 0 : b) * seq + s];
    TSR_RETURN_IF_ERROR(check("position id", p, pos.dim(0)));
    at[static_cast<size_t>(3 * r + 1)] = p;
    int64_t g = -1;
    if (seg_ids) {
      g = seg_ids->data<int32_t>()[r];
      TSR_RETURN_IF_ERROR(check("segment id", g, seg->dim(0)));
    }
    at[static_cast<size_t>(3 * r + 2)] = g;
  }
  TSR_ASSIGN_OR_RETURN(Tensor * mi, ctx.alloc_output(1));
  int32_t* pmi = mi->mut_data<int32_t>();
  for (int64_t b = 0; b < batch; ++b) {
    int32_t ones = 0;  // onnxruntime counts the elements equal to 1 (not the nonzero ones)
    if (mask)
      for (int64_t s = 0; s < seq; ++s) ones += mask->data<int32_t>()[b * seq + s] == 1 ? 1 : 0;
    pmi[b] = ones;
  }
  const Shape hidden = {n};
  TSR_ASSIGN_OR_RETURN(Scratch<F> gamma, (vector_as<T>(ctx, ctx.input(5), hidden, F(1))));
  TSR_ASSIGN_OR_RETURN(Scratch<F> beta, (vector_as<T>(ctx, ctx.input(6), hidden, F(0))));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  RowOutputs<T> out{y->mut_data<T>(), nullptr, nullptr, nullptr};
  if (ctx.num_outputs() > 2 && ctx.node().outputs[2] >= 0) {
    TSR_ASSIGN_OR_RETURN(Tensor * s, ctx.alloc_output(2));
    out.sum = s->mut_data<T>();
  }
  const T* pw = word.data<T>();
  const T* pp = pos.data<T>();
  const T* pg = seg ? seg->data<T>() : nullptr;
  return run_rows<T>(ctx, rows, n, gamma.data(), beta.data(), false, out, [&](int64_t r, F* buf) -> const F* {
    const int64_t g = at[static_cast<size_t>(3 * r + 2)];
    assemble_row<T>(pw + at[static_cast<size_t>(3 * r)] * n, pp + at[static_cast<size_t>(3 * r + 1)] * n,
                    g >= 0 ? pg + g * n : nullptr, static_cast<const F*>(nullptr), buf, n);
    return buf;
  });
}

// Dispatch on the dtype of input `in` over f32, f64, f16 (kSel: a selective build's dtypes).
template <DTypeMask kSel, size_t in, template <typename> class K>
Status by_float_dtype(exec::KernelContext& ctx) {
  Status st = ok_status();
  bool dispatched = false;
  dispatch_dtype<kSel>(ctx.input(in)->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half>) {
      st = K<T>::run(ctx);
      dispatched = true;
    }
  });
  if (!dispatched)
    return unsupported(ctx.place(), ": ", ctx.node().op, " has no cpu kernel for ", dtype_name(ctx.input(in)->dtype()));
  return st;
}

template <typename T> struct LayerNormK { static Status run(exec::KernelContext& c) { return layer_norm_typed<T>(c); } };
template <typename T> struct RmsNormK { static Status run(exec::KernelContext& c) { return rms_norm_typed<T>(c); } };
template <typename T> struct SkipNormK { static Status run(exec::KernelContext& c) { return skip_norm_typed<T, false>(c); } };
template <typename T> struct SkipRmsK { static Status run(exec::KernelContext& c) { return skip_norm_typed<T, true>(c); } };
template <typename T> struct EmbedK { static Status run(exec::KernelContext& c) { return embed_layer_norm_typed<T>(c); } };

}  // namespace

void register_transformer_norm_target(KernelRegistry& r) {
  const std::vector<DType> types = {DType::kF32, DType::kF64, DType::kF16};
  TSR_IF_SELECTED("LayerNormalization") r.add_fn("LayerNormalization", types, by_float_dtype<kSel, 0, LayerNormK>);
  TSR_IF_SELECTED("RMSNormalization") r.add_fn("RMSNormalization", types, by_float_dtype<kSel, 0, RmsNormK>);
  TSR_IF_SELECTED("SimplifiedLayerNormalization") r.add_fn("SimplifiedLayerNormalization", types, by_float_dtype<kSel, 0, RmsNormK>);
  TSR_IF_SELECTED("com.microsoft::SkipLayerNormalization")
  r.add_fn("com.microsoft::SkipLayerNormalization", types, by_float_dtype<kSel, 0, SkipNormK>);
  TSR_IF_SELECTED("com.microsoft::SkipSimplifiedLayerNormalization")
  r.add_fn("com.microsoft::SkipSimplifiedLayerNormalization", types, by_float_dtype<kSel, 0, SkipRmsK>);
  TSR_IF_SELECTED("com.microsoft::EmbedLayerNormalization")
  r.add_fn("com.microsoft::EmbedLayerNormalization", {DType::kI32}, by_float_dtype<kSel, 2, EmbedK>);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_transformer_norm_target);

void register_transformer_norm_kernels(KernelRegistry& r) { HWY_DYNAMIC_DISPATCH(register_transformer_norm_target)(r); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
