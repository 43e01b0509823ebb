// CPU kernels: Reduce* and ArgMax/ArgMin.
//
// A reduction is first canonicalized: size-1 dims are dropped and adjacent dims that are both
// kept or both reduced are merged. The common layouts then run without copies:
//   [outer, R]         each output reduces one contiguous row (f32 rows on Highway vectors);
//   [outer, R, inner]  rows of `inner` accumulators stream over R (unit-stride, vectorizable);
//   [A, K, C], A and C reduced (a per-channel sum over batch and space: a conv bias's gradient)
//                      each output sums its A rows of C (Sum/Mean/Max/Min/L1/SumSquare);
// any other pattern (e.g. axes {0, 2} of a 4-D tensor) is gathered once into [kept..., reduced...]
// order and reduced as rows. Accumulation uses the compute type (float for f16/bf16/f32, double
// for f64, 64-bit for integers; double for L2/LogSum/LogSumExp on integers).
// Compiled once per SIMD target (hwy/foreach_target.h); register_reduce_kernels registers the
// kernels of the best target this CPU supports (see TSR_SIMD_DISPATCH in CMakeLists.txt).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/reduce.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include "backends/cpu/kernels/elementwise_impl.h"

#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/cpu_backend.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

enum class RK { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

template <typename T, RK K>
struct AccOf {
  using type = std::conditional_t<
      kIsFloatLike<T>, Compute<T>,
      std::conditional_t<K == RK::kMax || K == RK::kMin, T,
                         std::conditional_t<K == RK::kL2 || K == RK::kLogSum || K == RK::kLogSumExp, double,
                                            std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>>>;
};

template <typename A, RK K>
A r_init() {
  if constexpr (K == RK::kProd) return A(1);
  else if constexpr (K == RK::kMax || K == RK::kLogSumExp)
    return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
  else if constexpr (K == RK::kMin)
    return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
  else return A(0);
}

// Maps one element into the accumulator domain.
template <typename A, RK K>
A r_map(A x) {
  if constexpr (K == RK::kL1) {
    if constexpr (std::is_unsigned_v<A>) return x;
    else return x < A(0) ? wrap_sub(A(0), x) : x;
  } else if constexpr (K == RK::kL2 || K == RK::kSumSquare) {
    return wrap_mul(x, x);
  } else {
    return x;
  }
}

template <typename A, RK K>
A r_combine(A acc, A v) {
  if constexpr (K == RK::kMax) return nan_max(acc, v);
  else if constexpr (K == RK::kMin) return nan_min(acc, v);
  else if constexpr (K == RK::kProd) return wrap_mul(acc, v);
  else return wrap_add(acc, v);
}

template <typename A, RK K>
A r_finalize(A acc, int64_t n) {
  if constexpr (K == RK::kMean) {
    // The mean of an empty set is 0, as onnxruntime fills it (numpy would give NaN).
    if (n == 0) return A(0);
    if constexpr (std::is_integral_v<A>) return static_cast<A>(acc / static_cast<A>(n));
    else return acc / static_cast<A>(n);
  } else if constexpr (K == RK::kL2) {
    return std::sqrt(acc);
  } else if constexpr (K == RK::kLogSum) {
    return std::log(acc);
  } else {
    return acc;
  }
}

// Reduces a contiguous row of n elements.
template <typename T, RK K>
typename AccOf<T, K>::type reduce_row(const T* x, int64_t n) {
  using A = typename AccOf<T, K>::type;
  if constexpr (K == RK::kLogSumExp) {
    A m = r_init<A, RK::kMax>();
    for (int64_t i = 0; i < n; ++i) m = nan_max(m, static_cast<A>(load_elem(x[i])));
    if (!std::isfinite(m)) return m;  // NaN, all -inf (or empty), or a +inf term
    A s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<A>(load_elem(x[i])) - m);
    return m + std::log(s);
  } else {
    int64_t i = 0;
    A acc = r_init<A, K>();
    if constexpr (std::is_same_v<T, float> && (K == RK::kSum || K == RK::kMean || K == RK::kSumSquare ||
                                               K == RK::kL1 || K == RK::kL2 || K == RK::kMax || K == RK::kMin)) {
      const hn::ScalableTag<float> d;
      const auto L = static_cast<int64_t>(hn::Lanes(d));
      if (n >= 2 * L) {
        auto v0 = hn::Set(d, acc), v1 = hn::Set(d, acc);
        auto step = [&](auto va, auto x0) {
          if constexpr (K == RK::kMax) return vec_nan_max(d, va, x0);
          else if constexpr (K == RK::kMin) return vec_nan_min(d, va, x0);
          else if constexpr (K == RK::kL1) return hn::Add(va, hn::Abs(x0));
          else if constexpr (K == RK::kSumSquare || K == RK::kL2) return hn::MulAdd(x0, x0, va);
          else return hn::Add(va, x0);
        };
        for (; i + 2 * L <= n; i += 2 * L) {
          v0 = step(v0, hn::LoadU(d, x + i));
          v1 = step(v1, hn::LoadU(d, x + i + L));
        }
        float lanes0[HWY_MAX_BYTES / sizeof(float)], lanes1[HWY_MAX_BYTES / sizeof(float)];
        hn::StoreU(v0, d, lanes0);
        hn::StoreU(v1, d, lanes1);
        for (int64_t l = 0; l < L; ++l) acc = r_combine<A, K == RK::kMax || K == RK::kMin ? K : RK::kSum>(acc, lanes0[l]);
        for (int64_t l = 0; l < L; ++l) acc = r_combine<A, K == RK::kMax || K == RK::kMin ? K : RK::kSum>(acc, lanes1[l]);
      }
    }
    for (; i < n; ++i) acc = r_combine<A, K>(acc, r_map<A, K>(static_cast<A>(load_elem(x[i]))));
    return r_finalize<A, K>(acc, n);
  }
}

// [outer, R, inner]: out[o, i] = reduce_r x[o, r, i]. Work is split into (outer, inner block)
// tasks so that both outer-heavy and inner-heavy shapes parallelize. Like reduce_rows: not
// inlined, its body compiled once (called inline or on the pool through one FunctionRef), as it
// is instantiated for every reduction and dtype.
template <typename T, RK K>
HWY_NOINLINE void reduce_middle(const T* x, T* out, int64_t outer, int64_t R, int64_t inner, ThreadPool& pool) {
  using A = typename AccOf<T, K>::type;
  constexpr int64_t kBlock = 512;
  const int64_t nblocks = (inner + kBlock - 1) / kBlock;
  const int64_t tasks = outer * nblocks;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, R * std::min(inner, kBlock)));
  auto body = [&](int64_t tb, int64_t te) {
    A acc[kBlock];
    A mx[kBlock];
    for (int64_t t = tb; t < te; ++t) {
      const int64_t o = t / nblocks;
      const int64_t i0 = (t % nblocks) * kBlock;
      const int64_t w = std::min(kBlock, inner - i0);
      const T* base = x + o * R * inner + i0;
      if constexpr (K == RK::kLogSumExp) {
        for (int64_t j = 0; j < w; ++j) mx[j] = r_init<A, RK::kMax>();
        for (int64_t r = 0; r < R; ++r)
          for (int64_t j = 0; j < w; ++j) mx[j] = nan_max(mx[j], static_cast<A>(load_elem(base[r * inner + j])));
        for (int64_t j = 0; j < w; ++j) acc[j] = 0;
        for (int64_t r = 0; r < R; ++r)
          for (int64_t j = 0; j < w; ++j)
            if (std::isfinite(mx[j])) acc[j] += std::exp(static_cast<A>(load_elem(base[r * inner + j])) - mx[j]);
        for (int64_t j = 0; j < w; ++j)
          out[o * inner + i0 + j] = store_elem<T>(std::isfinite(mx[j]) ? mx[j] + std::log(acc[j]) : mx[j]);
      } else {
        for (int64_t j = 0; j < w; ++j) acc[j] = r_init<A, K>();
        for (int64_t r = 0; r < R; ++r) {
          const T* row = base + r * inner;
          for (int64_t j = 0; j < w; ++j)
            acc[j] = r_combine<A, K>(acc[j], r_map<A, K>(static_cast<A>(load_elem(row[j]))));
        }
        for (int64_t j = 0; j < w; ++j) out[o * inner + i0 + j] = store_elem<T>(r_finalize<A, K>(acc[j], R));
      }
    }
  };
  const FunctionRef<void(int64_t, int64_t)> fn(body);
  if (tasks <= grain || pool.num_threads() <= 1) fn(0, tasks);
  else pool.parallel_for(tasks, grain, fn);
}

template <typename T, RK K>
HWY_NOINLINE void reduce_rows(const T* x, T* out, int64_t outer, int64_t R, ThreadPool& pool) {
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, R));
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) out[o] = store_elem<T>(reduce_row<T, K>(x + o * R, R));
  };
  const FunctionRef<void(int64_t, int64_t)> fn(body);
  if (outer <= grain || pool.num_threads() <= 1) fn(0, outer);
  else pool.parallel_for(outer, grain, fn);
}

// Canonical form: merged dims with a reduce flag, size-1 dims dropped.
struct Group {
  int64_t size;
  bool reduced;
};

// Small vectors (inline up to kInlineDims): a run of a reduce allocates nothing on the heap.
using Groups = SmallVector<Group, kInlineDims>;
using AxisFlags = SmallVector<bool, kInlineDims>;

Groups canonical_groups(const Shape& shape, const AxisFlags& red) {
  Groups g;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!g.empty() && g.back().reduced == red[d]) g.back().size *= shape[d];
    else g.push_back({shape[d], static_cast<bool>(red[d])});
  }
  return g;
}

// How a reduction runs, whatever its kind and dtype (decided once per call, not compiled per
// reduction and dtype).
struct ReducePlan {
  enum class Mode { kEmpty, kRows, kMiddle, kGather, kOuterRows };
  Mode mode = Mode::kRows;
  // kOuterRows: [a, k, c] with a and c reduced (kGather's dims and strides are set too, for the
  // kinds whose row results cannot be combined).
  int64_t a = 1, k = 1, c = 1;
  int64_t outer = 1, R = 1, inner = 1;  // kRows: [outer, R]; kMiddle: [outer, R, inner]
  // kGather (any other pattern): x is first copied into [kept..., reduced...] order, these dims
  // read at these source strides, then reduced as rows [outer, R].
  Ints dims, strides;
};

ReducePlan plan_reduction(const Shape& shape, int64_t numel, const AxisFlags& red) {
  ReducePlan p;
  if (numel == 0) {
    p.mode = ReducePlan::Mode::kEmpty;
    return p;
  }
  const Groups g = canonical_groups(shape, red);
  int64_t nred = 0;
  for (const Group& gr : g) nred += gr.reduced;
  if (nred == 0) {
    p.outer = numel;
    return p;
  }
  if (nred == 1) {
    bool seen = false;
    for (const Group& gr : g) {
      if (gr.reduced) { p.R = gr.size; seen = true; }
      else if (seen) p.inner *= gr.size;
      else p.outer *= gr.size;
    }
    p.mode = p.inner == 1 ? ReducePlan::Mode::kRows : ReducePlan::Mode::kMiddle;
    return p;
  }
  Ints src_stride(g.size());
  int64_t s = 1;
  for (size_t k = g.size(); k-- > 0;) {
    src_stride[k] = s;
    s *= g[k].size;
  }
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < g.size(); ++k)
      if (g[k].reduced == (pass == 1)) {
        p.dims.push_back(g[k].size);
        p.strides.push_back(src_stride[k]);
        if (pass == 1) p.R *= g[k].size;
      }
  p.outer = numel / p.R;
  p.mode = ReducePlan::Mode::kGather;
  if (g.size() == 3 && g[0].reduced && !g[1].reduced && g[2].reduced) {
    p.mode = ReducePlan::Mode::kOuterRows;
    p.a = g[0].size;
    p.k = g[1].size;
    p.c = g[2].size;
  }
  return p;
}

// The kGather copy, on elements of E (an unsigned integer of the dtype's size: only bytes move).
template <typename E>
void gather_as(const Tensor& x, Tensor& tmp, const ReducePlan& p) {
  const E* px = x.data<E>();
  E* pt = tmp.mut_data<E>();
  Ints idx(p.dims.size(), 0);
  int64_t off = 0;
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    pt[i] = px[off];
    for (size_t d = p.dims.size(); d-- > 0;) {
      off += p.strides[d];
      if (++idx[d] < p.dims[d]) break;
      off -= p.strides[d] * p.dims[d];
      idx[d] = 0;
    }
  }
}

Expected<Tensor> gather_for_reduction(const Tensor& x, const ReducePlan& p) {
  TSR_ASSIGN_OR_RETURN(Tensor tmp, Tensor::empty(x.dtype(), x.shape()));
  switch (dtype_size(x.dtype())) {
    case 1: gather_as<uint8_t>(x, tmp, p); break;
    case 2: gather_as<uint16_t>(x, tmp, p); break;
    case 4: gather_as<uint32_t>(x, tmp, p); break;
    case 8: gather_as<uint64_t>(x, tmp, p); break;
    default: return internal_error("reduction of ", dtype_name(x.dtype()));
  }
  return tmp;
}

// kOuterRows for the kinds whose per-row results combine into the whole's: out[k] = the rows
// x[a, k, :] each reduced (reduce_row, vectorized) and combined in a's order in the accumulator
// type; outputs in parallel (each written by one task: the same bits at any thread count).
template <RK K>
constexpr bool kRowsCombine = K == RK::kSum || K == RK::kMean || K == RK::kMax || K == RK::kMin || K == RK::kL1 ||
                              K == RK::kSumSquare;

template <typename T, RK K>
HWY_NOINLINE void reduce_outer_rows(const T* x, T* out, const ReducePlan& p, ThreadPool& pool) {
  using A = typename AccOf<T, K>::type;
  constexpr RK kRow = K == RK::kMean ? RK::kSum : K;                                 // each row's partial
  constexpr RK kJoin = K == RK::kMax || K == RK::kMin ? K : RK::kSum;                // partials combined
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, p.a * p.c));
  auto body = [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      A acc = r_init<A, kJoin>();
      for (int64_t a = 0; a < p.a; ++a) acc = r_combine<A, kJoin>(acc, reduce_row<T, kRow>(x + (a * p.k + k) * p.c, p.c));
      out[k] = store_elem<T>(r_finalize<A, K>(acc, p.a * p.c));
    }
  };
  const FunctionRef<void(int64_t, int64_t)> fn(body);
  if (p.k <= grain || pool.num_threads() <= 1) fn(0, p.k);
  else pool.parallel_for(p.k, grain, fn);
}

template <typename T, RK K>
Status reduce_typed(exec::KernelContext& ctx, const Tensor& x, Tensor& out, const ReducePlan& p) {
  const T* px = x.data<T>();
  T* po = out.mut_data<T>();
  switch (p.mode) {
    case ReducePlan::Mode::kEmpty: {
      // Empty input: every output element reduces an empty set (identity), if there are any.
      using A = typename AccOf<T, K>::type;
      const T v = store_elem<T>(K == RK::kLogSumExp ? r_init<A, K>() : r_finalize<A, K>(r_init<A, K>(), 0));
      for (int64_t i = 0; i < out.numel(); ++i) po[i] = v;
      return ok_status();
    }
    case ReducePlan::Mode::kRows:
      reduce_rows<T, K>(px, po, p.outer, p.R, ctx.pool());
      return ok_status();
    case ReducePlan::Mode::kMiddle:
      reduce_middle<T, K>(px, po, p.outer, p.R, p.inner, ctx.pool());
      return ok_status();
    case ReducePlan::Mode::kOuterRows:
      if constexpr (kRowsCombine<K>) {
        reduce_outer_rows<T, K>(px, po, p, ctx.pool());
        return ok_status();
      }
      [[fallthrough]];
    case ReducePlan::Mode::kGather: {
      TSR_ASSIGN_OR_RETURN(Tensor tmp, gather_for_reduction(x, p));
      reduce_rows<T, K>(tmp.data<T>(), po, p.outer, p.R, ctx.pool());
      return ok_status();
    }
  }
  return ok_status();
}

template <RK K, DTypeMask kSel>
Status reduce_kernel(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  Ints axes;
  if (const Tensor* a = ctx.input(1)) axes = a->to_shape();
  else axes = node.attr_ints("axes");
  const int64_t rank = x.rank();
  AxisFlags red(static_cast<size_t>(rank), false);
  if (axes.empty()) {
    if (node.attr_int("noop_with_empty_axes") != 0) {
      ctx.set_output(0, x);
      return ok_status();
    }
    red.assign(static_cast<size_t>(rank), true);
  }
  for (int64_t a : axes) {
    auto n = normalize_axis(a, rank);
    if (!n.ok()) return ctx.error("axes: ", n.status().message());
    if (rank > 0) red[static_cast<size_t>(*n)] = true;
  }
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  // Built only on failure: formatting the message on every call costs more than small kernels.
  Status st = ok_status();
  bool dispatched = false;
  const ReducePlan plan = plan_reduction(x.shape(), x.numel(), red);
  dispatch_dtype<kSel>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      dispatched = true;
      st = reduce_typed<T, K>(ctx, x, *out, plan);
    }
  });
  if (!dispatched) return dtype_error<kSel>(ctx, x.dtype());
  return st;
}

template <bool kMax, DTypeMask kSel>
Status arg_kernel(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node.attr_int("axis"), x.rank()));
  const bool last = node.attr_int("select_last_index") != 0;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t R = x.dim(axis);
  if (R == 0) return ctx.error("axis ", axis, " has size 0");
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  int64_t* po = out->mut_data<int64_t>();
  // Built only on failure: formatting the message on every call costs more than small kernels.
  Status st = ok_status();
  bool dispatched = false;
  dispatch_dtype<kSel>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      dispatched = true;
      const T* px = x.data<T>();
      parallel_elements(ctx.pool(), outer * inner, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t o = t / inner, i = t % inner;
          const T* base = px + o * R * inner + i;
          auto best = load_elem(base[0]);
          int64_t bi = 0;
          for (int64_t r = 1; r < R; ++r) {
            const auto v = load_elem(base[r * inner]);
            const bool better = kMax ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
            if (better) { best = v; bi = r; }
          }
          po[t] = bi;
        }
      });
      st = ok_status();
    }
  });
  if (!dispatched) return dtype_error<kSel>(ctx, x.dtype());
  return st;
}

}  // namespace

void register_reduce_target(KernelRegistry& r) {
  const auto& num = all_numeric_dtypes();
  TSR_IF_SELECTED("ReduceSum") r.add_fn("ReduceSum", num, &reduce_kernel<RK::kSum, kSel>);
  TSR_IF_SELECTED("ReduceMean") r.add_fn("ReduceMean", num, &reduce_kernel<RK::kMean, kSel>);
  TSR_IF_SELECTED("ReduceMax") r.add_fn("ReduceMax", num, &reduce_kernel<RK::kMax, kSel>);
  TSR_IF_SELECTED("ReduceMin") r.add_fn("ReduceMin", num, &reduce_kernel<RK::kMin, kSel>);
  TSR_IF_SELECTED("ReduceProd") r.add_fn("ReduceProd", num, &reduce_kernel<RK::kProd, kSel>);
  TSR_IF_SELECTED("ReduceL1") r.add_fn("ReduceL1", num, &reduce_kernel<RK::kL1, kSel>);
  TSR_IF_SELECTED("ReduceL2") r.add_fn("ReduceL2", num, &reduce_kernel<RK::kL2, kSel>);
  TSR_IF_SELECTED("ReduceLogSum") r.add_fn("ReduceLogSum", num, &reduce_kernel<RK::kLogSum, kSel>);
  TSR_IF_SELECTED("ReduceLogSumExp") r.add_fn("ReduceLogSumExp", num, &reduce_kernel<RK::kLogSumExp, kSel>);
  TSR_IF_SELECTED("ReduceSumSquare") r.add_fn("ReduceSumSquare", num, &reduce_kernel<RK::kSumSquare, kSel>);
  TSR_IF_SELECTED("ArgMax") r.add_fn("ArgMax", num, &arg_kernel<true, kSel>);
  TSR_IF_SELECTED("ArgMin") r.add_fn("ArgMin", num, &arg_kernel<false, kSel>);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_reduce_target);

void register_reduce_kernels(KernelRegistry& r) { HWY_DYNAMIC_DISPATCH(register_reduce_target)(r); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
