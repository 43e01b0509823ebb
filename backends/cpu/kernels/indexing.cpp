// CPU kernels for the indexing family (core/ops/families/indexing.cpp): Gather, GatherElements,
// GatherND, ScatterElements, ScatterND, OneHot, NonZero, Compress, TopK, Unique.
//
// Every index is checked before it is used: an out-of-range index is an error naming the node,
// the input, the offending value and its position, never an out-of-bounds access.
#include <cmath>
#include <numeric>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/copy_util.h"

namespace tsr::cpu {

namespace {

using copy::dispatch_elem;
using copy::index_at;
using copy::prod;

int64_t norm(int64_t axis, int64_t r) { return axis < 0 ? axis + r : axis; }

// Reads all of an i32/i64 index tensor, normalized against `dim` (checked).
Expected<Ints> load_indices(const exec::KernelContext& ctx, const Tensor& t, int64_t dim,
                                            size_t input, const char* name) {
  Ints v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t x = index_at(t, i);
    TSR_RETURN_IF_ERROR(copy::normalize_index(ctx, x, dim, input, name, i));
    v[static_cast<size_t>(i)] = x;
  }
  return v;
}

// Arithmetic on stored elements for the reductions (f16/bf16 go through f32).
template <typename T>
float to_f(T v) {
  if constexpr (std::is_same_v<T, Half>) return f16_to_f32(v.bits);
  else return bf16_to_f32(v.bits);
}

template <typename T>
struct Arith {
  static T add(T a, T b) { return static_cast<T>(a + b); }
  static T mul(T a, T b) { return static_cast<T>(a * b); }
  static bool less(T a, T b) { return a < b; }
};
template <>
struct Arith<Half> {
  static Half add(Half a, Half b) { return Half{f32_to_f16(to_f(a) + to_f(b))}; }
  static Half mul(Half a, Half b) { return Half{f32_to_f16(to_f(a) * to_f(b))}; }
  static bool less(Half a, Half b) { return to_f(a) < to_f(b); }
};
template <>
struct Arith<BFloat16> {
  static BFloat16 add(BFloat16 a, BFloat16 b) { return BFloat16{f32_to_bf16(to_f(a) + to_f(b))}; }
  static BFloat16 mul(BFloat16 a, BFloat16 b) { return BFloat16{f32_to_bf16(to_f(a) * to_f(b))}; }
  static bool less(BFloat16 a, BFloat16 b) { return to_f(a) < to_f(b); }
};
template <>
struct Arith<bool> {
  static bool add(bool a, bool b) { return a || b; }
  static bool mul(bool a, bool b) { return a && b; }
  static bool less(bool a, bool b) { return a < b; }
};

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };
Reduction reduction_of(const ir::Node& n) {
  const std::string r = n.attr_string("reduction");
  return r == "add" ? Reduction::kAdd : r == "mul" ? Reduction::kMul : r == "max" ? Reduction::kMax
         : r == "min" ? Reduction::kMin : Reduction::kNone;
}

template <typename T>
inline void combine(T& dst, const T& v, Reduction red) {
  if constexpr (std::is_same_v<T, std::string>) {
    dst = v;
  } else {
    switch (red) {
      case Reduction::kNone: dst = v; break;
      case Reduction::kAdd: dst = Arith<T>::add(dst, v); break;
      case Reduction::kMul: dst = Arith<T>::mul(dst, v); break;
      case Reduction::kMax: if (Arith<T>::less(dst, v)) dst = v; break;
      case Reduction::kMin: if (Arith<T>::less(v, dst)) dst = v; break;
    }
  }
}

// Calls f(T{}) with the element's real type when a reduction needs arithmetic, else by size.
template <typename F>
bool dispatch_for_reduction(DType t, Reduction red, F&& f) {
  if (red == Reduction::kNone) return dispatch_elem(t, f);
  return dispatch_dtype(t, f);
}

// ---- Gather family -------------------------------------------------------------------------

Status gather_kernel(exec::KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& idx = *ctx.input(1);
  const int64_t r = data.rank();
  const auto axis = static_cast<size_t>(norm(ctx.node().attr_int("axis"), r));
  const int64_t n = data.dim(static_cast<int64_t>(axis));
  TSR_ASSIGN_OR_RETURN(Ints ind, load_indices(ctx, idx, n, 1, "indices"));
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  if (out->numel() == 0) return ok_status();
  const int64_t outer = prod(data.shape(), 0, axis), inner = prod(data.shape(), axis + 1, static_cast<size_t>(r));
  const auto ni = static_cast<int64_t>(ind.size());
  dispatch_elem(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    T* dst = out->mut_data<T>();
    ctx.pool().parallel_for(outer * ni, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)),
                            [&](int64_t lo, int64_t hi) {
                              if (inner == 1) {  // element gathers (embedding ids, shape dims)
                                for (int64_t t = lo; t < hi; ++t)
                                  dst[t] = src[(t / ni) * n + ind[static_cast<size_t>(t % ni)]];
                                return;
                              }
                              for (int64_t t = lo; t < hi; ++t) {
                                const int64_t o = t / ni, k = t % ni;
                                copy::copy_n(src + (o * n + ind[static_cast<size_t>(k)]) * inner, inner, dst + t * inner);
                              }
                            });
  });
  return ok_status();
}

// GatherGrad: dX = 0, then each dY row (outer o, index k) is added to dX row (o, indices[k]).
// Work is split over (outer, column block) pairs: every task owns distinct dX elements, so
// repeated indices accumulate without races and in a fixed order (deterministic sums).
template <typename T>
void gather_grad_typed(const T* dy, T* dx, const std::vector<int64_t>& ind, int64_t outer, int64_t n, int64_t inner,
                       ThreadPool& pool) {
  const auto ni = static_cast<int64_t>(ind.size());
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t work = std::max<int64_t>(1, ni * std::min(inner, kBlock));
  pool.parallel_for(outer * blocks, std::max<int64_t>(1, 65536 / work), [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / blocks, c0 = (t % blocks) * kBlock, c1 = std::min(inner, c0 + kBlock);
      const T* src = dy + o * ni * inner;
      T* dst = dx + o * n * inner;
      for (int64_t k = 0; k < ni; ++k) {
        const T* s = src + k * inner;
        T* d = dst + ind[static_cast<size_t>(k)] * inner;
        for (int64_t j = c0; j < c1; ++j) d[j] += s[j];
      }
    }
  });
}

Status gather_grad_kernel(exec::KernelContext& ctx) {
  const Tensor& dy = *ctx.input(0);
  const Tensor& idx = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * dx, ctx.alloc_output(0));
  const Shape& xs = dx->shape();
  const auto axis = static_cast<size_t>(norm(ctx.node().attr_int("axis"), dx->rank()));
  const int64_t n = xs[axis];
  TSR_ASSIGN_OR_RETURN(Ints ind, load_indices(ctx, idx, n, 1, "indices"));
  const int64_t outer = prod(xs, 0, axis), inner = prod(xs, axis + 1, xs.size());
  if (dy.numel() != outer * idx.numel() * inner)
    return ctx.error("input[0] (dY) ", shape_str(dy.shape()), " does not match indices ", shape_str(idx.shape()),
                     " and shape ", shape_str(xs));
  std::memset(dx->raw_mut(), 0, dx->nbytes());
  if (dy.numel() == 0) return ok_status();
  if (dy.dtype() == DType::kF32) gather_grad_typed(dy.data<float>(), dx->mut_data<float>(), ind, outer, n, inner, ctx.pool());
  else gather_grad_typed(dy.data<double>(), dx->mut_data<double>(), ind, outer, n, inner, ctx.pool());
  return ok_status();
}

// Walks every position of `shape` (row-major), giving the flat position and the offset into a
// tensor with `strides` where the axis dim contributes nothing (the caller adds index * stride).
template <typename F>
void for_each_skip_axis(const Shape& shape, const std::vector<int64_t>& strides, size_t axis, F&& f) {
  const int64_t total = shape_numel(shape);
  if (total == 0) return;
  const size_t r = shape.size();
  std::vector<int64_t> pos(r, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    f(i, off);
    for (size_t d = r; d-- > 0;) {
      const int64_t s = d == axis ? 0 : strides[d];
      off += s;
      if (++pos[d] < shape[d]) break;
      off -= s * shape[d];
      pos[d] = 0;
    }
  }
}

Status gather_elements_kernel(exec::KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& idx = *ctx.input(1);
  const auto axis = static_cast<size_t>(norm(ctx.node().attr_int("axis"), data.rank()));
  for (size_t d = 0; d < idx.shape().size(); ++d)
    if (d != axis && idx.dim(static_cast<int64_t>(d)) > data.dim(static_cast<int64_t>(d)))
      return ctx.error("indices ", shape_str(idx.shape()), " exceed data ", shape_str(data.shape()), " in dim ", d);
  TSR_ASSIGN_OR_RETURN(Ints ind, load_indices(ctx, idx, data.dim(static_cast<int64_t>(axis)), 1, "indices"));
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const std::vector<int64_t> st = shape_strides(data.shape());
  dispatch_elem(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    T* dst = out->mut_data<T>();
    const int64_t sa = st[axis];
    for_each_skip_axis(idx.shape(), st, axis, [&](int64_t i, int64_t off) {
      dst[i] = src[off + ind[static_cast<size_t>(i)] * sa];
    });
  });
  return ok_status();
}

Status scatter_elements_kernel(exec::KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& idx = *ctx.input(1);
  const Tensor& upd = *ctx.input(2);
  if (upd.shape() != idx.shape())
    return ctx.error("updates ", shape_str(upd.shape()), " must have the shape of indices ", shape_str(idx.shape()));
  const auto axis = static_cast<size_t>(norm(ctx.node().attr_int("axis"), data.rank()));
  for (size_t d = 0; d < idx.shape().size(); ++d)
    if (d != axis && idx.dim(static_cast<int64_t>(d)) > data.dim(static_cast<int64_t>(d)))
      return ctx.error("indices ", shape_str(idx.shape()), " exceed data ", shape_str(data.shape()), " in dim ", d);
  TSR_ASSIGN_OR_RETURN(Ints ind, load_indices(ctx, idx, data.dim(static_cast<int64_t>(axis)), 1, "indices"));
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const Reduction red = reduction_of(ctx.node());
  const std::vector<int64_t> st = shape_strides(data.shape());
  bool ok = dispatch_for_reduction(data.dtype(), red, [&](auto tag) {
    using T = decltype(tag);
    const T* u = upd.data<T>();
    T* dst = out->mut_data<T>();
    copy::copy_n(data.data<T>(), data.numel(), dst);
    const int64_t sa = st[axis];
    for_each_skip_axis(idx.shape(), st, axis, [&](int64_t i, int64_t off) {
      combine(dst[off + ind[static_cast<size_t>(i)] * sa], u[i], red);
    });
  });
  if (!ok) return ctx.error("dtype ", dtype_name(data.dtype()), " is not supported");
  return ok_status();
}

// Offsets (in elements of the data tensor, relative to the batch start) of each index tuple.
Expected<std::vector<int64_t>> tuple_offsets(const exec::KernelContext& ctx, const Tensor& data, const Tensor& idx,
                                             int64_t batch_dims) {
  const int64_t m = idx.dim(idx.rank() - 1);
  const std::vector<int64_t> st = shape_strides(data.shape());
  const int64_t tuples = m == 0 ? 0 : idx.numel() / m;
  std::vector<int64_t> offs(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t k = 0; k < m; ++k) {
      int64_t v = index_at(idx, t * m + k);
      TSR_RETURN_IF_ERROR(copy::normalize_index(ctx, v, data.dim(batch_dims + k), 1, "indices", t * m + k));
      off += v * st[static_cast<size_t>(batch_dims + k)];
    }
    offs[static_cast<size_t>(t)] = off;
  }
  return offs;
}

Status gather_nd_kernel(exec::KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& idx = *ctx.input(1);
  const int64_t b = ctx.node().attr_int("batch_dims");
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> offs, tuple_offsets(ctx, data, idx, b));
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const int64_t m = idx.dim(idx.rank() - 1);
  const int64_t batches = prod(data.shape(), 0, static_cast<size_t>(b));
  const int64_t slice = prod(data.shape(), static_cast<size_t>(b + m), static_cast<size_t>(data.rank()));
  const int64_t batch_stride = prod(data.shape(), static_cast<size_t>(b), static_cast<size_t>(data.rank()));
  const int64_t per_batch = batches == 0 ? 0 : static_cast<int64_t>(offs.size()) / batches;
  dispatch_elem(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    T* dst = out->mut_data<T>();
    for (size_t t = 0; t < offs.size(); ++t) {
      const int64_t batch = per_batch == 0 ? 0 : static_cast<int64_t>(t) / per_batch;
      copy::copy_n(src + batch * batch_stride + offs[t], slice, dst + static_cast<int64_t>(t) * slice);
    }
  });
  return ok_status();
}

Status scatter_nd_kernel(exec::KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& idx = *ctx.input(1);
  const Tensor& upd = *ctx.input(2);
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> offs, tuple_offsets(ctx, data, idx, 0));
  const int64_t m = idx.dim(idx.rank() - 1);
  const int64_t slice = prod(data.shape(), static_cast<size_t>(m), static_cast<size_t>(data.rank()));
  if (upd.numel() != static_cast<int64_t>(offs.size()) * slice)
    return ctx.error("updates ", shape_str(upd.shape()), " do not match indices ", shape_str(idx.shape()),
                     " and data ", shape_str(data.shape()));
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const Reduction red = reduction_of(ctx.node());
  bool ok = dispatch_for_reduction(data.dtype(), red, [&](auto tag) {
    using T = decltype(tag);
    const T* u = upd.data<T>();
    T* dst = out->mut_data<T>();
    copy::copy_n(data.data<T>(), data.numel(), dst);
    for (size_t t = 0; t < offs.size(); ++t)
      for (int64_t j = 0; j < slice; ++j) combine(dst[offs[t] + j], u[static_cast<int64_t>(t) * slice + j], red);
  });
  if (!ok) return ctx.error("dtype ", dtype_name(data.dtype()), " is not supported");
  return ok_status();
}

// ---- OneHot, NonZero, Compress -------------------------------------------------------------

Status one_hot_kernel(exec::KernelContext& ctx) {
  const Tensor& idx = *ctx.input(0);
  const Tensor& values = *ctx.input(2);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const int64_t r = out->rank();
  const auto axis = static_cast<size_t>(norm(ctx.node().attr_int("axis"), r));
  const int64_t depth = out->dim(static_cast<int64_t>(axis));
  const int64_t outer = prod(out->shape(), 0, axis), inner = prod(out->shape(), axis + 1, static_cast<size_t>(r));
  std::vector<int64_t> ind(static_cast<size_t>(idx.numel()));
  bool ok = dispatch_dtype(idx.dtype(), [&](auto tag) {
    using I = decltype(tag);
    const I* p = idx.data<I>();
    for (size_t i = 0; i < ind.size(); ++i) {
      double v;
      if constexpr (std::is_same_v<I, Half> || std::is_same_v<I, BFloat16>) v = to_f(p[i]);
      else v = static_cast<double>(p[i]);
      ind[i] = (v >= -double(depth) && v < double(depth)) ? static_cast<int64_t>(v) : depth;  // depth = no hot
    }
  });
  if (!ok) return ctx.error("input[0]: dtype ", dtype_name(idx.dtype()), " is not supported");
  dispatch_elem(values.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* v = values.data<T>();
    T* dst = out->mut_data<T>();
    std::fill(dst, dst + out->numel(), v[0]);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t k = ind[static_cast<size_t>(o * inner + i)];
        if (k == depth) continue;
        if (k < 0) k += depth;
        dst[(o * depth + k) * inner + i] = v[1];
      }
  });
  return ok_status();
}

template <typename T>
inline bool nonzero(const T& v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return (v.bits & 0x7fff) != 0;
  else return v != T{};
}

Status non_zero_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const Shape s = in.rank() == 0 ? Shape{1} : in.shape();
  const auto r = static_cast<int64_t>(s.size());
  std::vector<int64_t> hits;
  bool ok = dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = in.data<T>();
    for (int64_t i = 0; i < in.numel(); ++i)
      if (nonzero(p[i])) hits.push_back(i);
  });
  if (!ok) return ctx.error("input[0]: dtype ", dtype_name(in.dtype()), " is not supported");
  const auto n = static_cast<int64_t>(hits.size());
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0, DType::kI64, {r, n}));
  int64_t* o = out->mut_data<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t rem = hits[static_cast<size_t>(k)];
    for (int64_t d = r - 1; d >= 0; --d) {
      o[d * n + k] = rem % s[static_cast<size_t>(d)];
      rem /= s[static_cast<size_t>(d)];
    }
  }
  return ok_status();
}

Status compress_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const Tensor& cond = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const bool* c = cond.data<bool>();
  const ir::Attribute* aa = ctx.node().attr("axis");
  int64_t outer = 1, n = in.numel(), inner = 1;
  if (aa) {
    const auto axis = static_cast<size_t>(norm(aa->i, in.rank()));
    outer = prod(in.shape(), 0, axis);
    n = in.dim(static_cast<int64_t>(axis));
    inner = prod(in.shape(), axis + 1, static_cast<size_t>(in.rank()));
  }
  const int64_t len = std::min(n, cond.numel());
  dispatch_elem(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = in.data<T>();
    T* dst = out->mut_data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < len; ++i)
        if (c[i]) {
          copy::copy_n(src + (o * n + i) * inner, inner, dst);
          dst += inner;
        }
  });
  return ok_status();
}

// ---- TopK ----------------------------------------------------------------------------------

// The value elements are ordered by: f16/bf16 as f32, anything else as itself (no string copy).
template <typename T>
decltype(auto) sort_key(const T& v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return to_f(v);
  else return (v);
}

Status topk_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * vals, ctx.alloc_output(0));
  Tensor* inds = nullptr;
  if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0) {
    TSR_ASSIGN_OR_RETURN(inds, ctx.alloc_output(1));
  }
  const int64_t r = in.rank();
  const auto axis = static_cast<size_t>(norm(ctx.node().attr_int("axis"), r));
  const int64_t k = vals->dim(static_cast<int64_t>(axis)), n = in.dim(static_cast<int64_t>(axis));
  const int64_t outer = prod(in.shape(), 0, axis), inner = prod(in.shape(), axis + 1, static_cast<size_t>(r));
  const bool largest = ctx.node().attr_int("largest") != 0;
  if (k == 0 || outer * inner == 0) return ok_status();
  bool ok = dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using K = std::decay_t<decltype(sort_key(T{}))>;
    const T* src = in.data<T>();
    T* vo = vals->mut_data<T>();
    int64_t* io = inds ? inds->mut_data<int64_t>() : nullptr;
    ctx.pool().parallel_for(outer * inner, std::max<int64_t>(1, 4096 / n), [&](int64_t lo, int64_t hi) {
      std::vector<std::pair<K, int64_t>> buf(static_cast<size_t>(n));
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t o = t / inner, i = t % inner;
        for (int64_t j = 0; j < n; ++j) buf[static_cast<size_t>(j)] = {sort_key(src[(o * n + j) * inner + i]), j};
        // Ties keep the lower index first (ONNX TopK); NaN ranks above every number, like ORT.
        auto before = [largest](const std::pair<K, int64_t>& a, const std::pair<K, int64_t>& b) {
          if constexpr (std::is_floating_point_v<K>) {
            const bool an = std::isnan(a.first), bn = std::isnan(b.first);
            if (an || bn) return an && !bn ? largest : (!an && bn ? !largest : a.second < b.second);
          }
          if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
          return a.second < b.second;
        };
        std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t src_j = buf[static_cast<size_t>(j)].second;
          vo[(o * k + j) * inner + i] = src[(o * n + src_j) * inner + i];
          if (io) io[(o * k + j) * inner + i] = src_j;
        }
      }
    });
  });
  if (!ok) return ctx.error("input[0]: dtype ", dtype_name(in.dtype()), " is not supported");
  return ok_status();
}

// ---- Unique --------------------------------------------------------------------------------

// Calls f(T{}) with the element type for ordering: the numeric dtypes, bool and std::string.
template <typename F>
bool dispatch_ordered(DType t, F&& f) {
  if (t == DType::kString) {
    f(std::string{});
    return true;
  }
  return dispatch_dtype(t, f);
}

Status unique_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const ir::Attribute* aa = ctx.node().attr("axis");
  const bool sorted = ctx.node().attr_int("sorted") != 0;
  int64_t outer = 1, n = in.numel(), inner = 1;
  size_t axis = 0;
  if (aa) {
    axis = static_cast<size_t>(norm(aa->i, in.rank()));
    outer = prod(in.shape(), 0, axis);
    n = in.dim(static_cast<int64_t>(axis));
    inner = prod(in.shape(), axis + 1, static_cast<size_t>(in.rank()));
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::vector<int64_t> group_of(static_cast<size_t>(n));  // slice -> group (in sorted order)
  std::vector<int64_t> first;                              // group -> first slice
  std::vector<int64_t> count;                              // group -> occurrences
  bool ok = dispatch_ordered(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = in.data<T>();
    // Slices compare lexicographically over (outer, inner), as numpy.unique(axis=...) does.
    auto cmp = [&](int64_t a, int64_t b) -> int {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const auto& x = sort_key(src[(o * n + a) * inner + i]);
          const auto& y = sort_key(src[(o * n + b) * inner + i]);
          if (x < y) return -1;
          if (y < x) return 1;
        }
      return 0;
    };
    // Stable: within a run of equal slices the first occurrence comes first.
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
    for (size_t k = 0; k < order.size(); ++k) {
      if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
        first.push_back(order[k]);
        count.push_back(0);
      }
      group_of[static_cast<size_t>(order[k])] = static_cast<int64_t>(first.size()) - 1;
      ++count.back();
    }
  });
  if (!ok) return ctx.error("input[0]: dtype ", dtype_name(in.dtype()), " is not supported");
  const auto u = static_cast<int64_t>(first.size());
  // Output position of each group: sorted order, or order of first occurrence.
  std::vector<int64_t> pos(static_cast<size_t>(u));
  std::iota(pos.begin(), pos.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(pos);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
      return first[static_cast<size_t>(a)] < first[static_cast<size_t>(b)];
    });
    for (int64_t k = 0; k < u; ++k) pos[static_cast<size_t>(by_first[static_cast<size_t>(k)])] = k;
  }
  Shape ys = aa ? in.shape() : Shape{u};
  if (aa) ys[axis] = u;
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0, in.dtype(), ys));
  dispatch_elem(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = in.data<T>();
    T* dst = y->mut_data<T>();
    for (int64_t g = 0; g < u; ++g) {
      const int64_t p = pos[static_cast<size_t>(g)], f = first[static_cast<size_t>(g)];
      for (int64_t o = 0; o < outer; ++o) copy::copy_n(src + (o * n + f) * inner, inner, dst + (o * u + p) * inner);
    }
  });
  auto want = [&](size_t k) { return ctx.num_outputs() > k && ctx.node().outputs[k] >= 0; };
  if (want(1)) {
    TSR_ASSIGN_OR_RETURN(Tensor * t, ctx.alloc_output(1, DType::kI64, {u}));
    for (int64_t g = 0; g < u; ++g) t->mut_data<int64_t>()[pos[static_cast<size_t>(g)]] = first[static_cast<size_t>(g)];
  }
  if (want(2)) {
    TSR_ASSIGN_OR_RETURN(Tensor * t, ctx.alloc_output(2, DType::kI64, {n}));
    for (int64_t j = 0; j < n; ++j) t->mut_data<int64_t>()[j] = pos[static_cast<size_t>(group_of[static_cast<size_t>(j)])];
  }
  if (want(3)) {
    TSR_ASSIGN_OR_RETURN(Tensor * t, ctx.alloc_output(3, DType::kI64, {u}));
    for (int64_t g = 0; g < u; ++g) t->mut_data<int64_t>()[pos[static_cast<size_t>(g)]] = count[static_cast<size_t>(g)];
  }
  return ok_status();
}

}  // namespace

void register_indexing_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("Gather") r.add_fn("Gather", {}, &gather_kernel);
  TSR_IF_SELECTED("GatherGrad") r.add_fn("GatherGrad", {DType::kF32, DType::kF64}, &gather_grad_kernel);
  TSR_IF_SELECTED("GatherElements") r.add_fn("GatherElements", {}, &gather_elements_kernel);
  TSR_IF_SELECTED("GatherND") r.add_fn("GatherND", {}, &gather_nd_kernel);
  TSR_IF_SELECTED("ScatterElements") r.add_fn("ScatterElements", {}, &scatter_elements_kernel);
  TSR_IF_SELECTED("ScatterND") r.add_fn("ScatterND", {}, &scatter_nd_kernel);
  TSR_IF_SELECTED("OneHot") r.add_fn("OneHot", {}, &one_hot_kernel);
  TSR_IF_SELECTED("NonZero") r.add_fn("NonZero", {}, &non_zero_kernel);
  TSR_IF_SELECTED("Compress") r.add_fn("Compress", {}, &compress_kernel);
  TSR_IF_SELECTED("TopK") r.add_fn("TopK", all_numeric_dtypes(), &topk_kernel);
  TSR_IF_SELECTED("Unique") r.add_fn("Unique", {}, &unique_kernel);
}

}  // namespace tsr::cpu
