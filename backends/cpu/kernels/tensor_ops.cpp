// CPU kernels for the tensor_ops family (core/ops/families/tensor_ops.cpp): Concat, Split, Slice,
// Pad, Trilu, ReverseSequence, CumSum.
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/copy_util.h"
#include "core/ops/shape_util.h"

namespace tsr::cpu {

namespace {

using copy::dispatch_elem;
using copy::prod;

int64_t norm(int64_t axis, int64_t r) { return axis < 0 ? axis + r : axis; }

// Concat: each output row (dims before the axis) is the inputs' rows one after another.
Status concat_kernel(exec::KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const int64_t r = out->rank();
  const auto axis = static_cast<size_t>(norm(ctx.node().attr_int("axis"), r));
  const int64_t outer = prod(out->shape(), 0, axis), inner = prod(out->shape(), axis + 1, static_cast<size_t>(r));
  const int64_t out_row = out->dim(static_cast<int64_t>(axis)) * inner;
  if (out->numel() == 0) return ok_status();
  dispatch_elem(out->dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = out->mut_data<T>();
    int64_t col = 0;
    for (size_t k = 0; k < ctx.num_inputs(); ++k) {
      const Tensor& in = *ctx.input(k);
      const int64_t row = in.dim(static_cast<int64_t>(axis)) * inner;
      const T* src = in.data<T>();
      ctx.pool().parallel_for(outer, std::max<int64_t>(1, 65536 / std::max<int64_t>(row, 1)), [&](int64_t lo, int64_t hi) {
        for (int64_t o = lo; o < hi; ++o) copy::copy_n(src + o * row, row, dst + o * out_row + col);
      });
      col += row;
    }
  });
  return ok_status();
}

Status split_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const int64_t r = in.rank();
  const auto axis = static_cast<size_t>(norm(ctx.node().attr_int("axis"), r));
  const int64_t outer = prod(in.shape(), 0, axis), inner = prod(in.shape(), axis + 1, static_cast<size_t>(r));
  const int64_t in_row = in.dim(static_cast<int64_t>(axis)) * inner;
  int64_t col = 0;
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    if (ctx.node().outputs[k] < 0) {  // an omitted output still consumes its part
      col += ctx.output_type(k).shape[axis] * inner;
      continue;
    }
    TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(k));
    const int64_t row = out->dim(static_cast<int64_t>(axis)) * inner;
    dispatch_elem(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = in.data<T>();
      T* dst = out->mut_data<T>();
      for (int64_t o = 0; o < outer; ++o) copy::copy_n(src + o * in_row + col, row, dst + o * row);
    });
    col += row;
  }
  return ok_status();
}

Status slice_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  auto vec = [&](size_t i) { return ctx.input(i) ? ctx.input(i)->to_shape() : Ints{}; };
  auto p = ops::shape_util::slice_params(in.shape(), vec(1), vec(2), vec(3), vec(4));
  if (!p.ok()) return ctx.error(p.status().message());
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const Ints in_st = shape_strides(in.shape());
  Ints st(in_st.size());
  int64_t offset = 0;
  for (size_t d = 0; d < in_st.size(); ++d) {
    offset += p->start[d] * in_st[d];
    st[d] = p->step[d] * in_st[d];
  }
  if (out->numel() > 0) copy::strided_copy(in, offset, out->shape(), st, *out, ctx.pool());
  return ok_status();
}

// SliceGrad: zeros, then dY written row by row to the strided positions Slice reads (distinct
// positions, so rows are independent and run in parallel).
Status slice_grad_kernel(exec::KernelContext& ctx) {
  const Tensor& dy = *ctx.input(0);
  auto vec = [&](size_t i) { return ctx.input(i) ? ctx.input(i)->to_shape() : Ints{}; };
  TSR_ASSIGN_OR_RETURN(Tensor * dx, ctx.alloc_output(0));
  auto p = ops::shape_util::slice_params(dx->shape(), vec(2), vec(3), vec(4), vec(5));
  if (!p.ok()) return ctx.error(p.status().message());
  if (p->count != dy.shape())
    return ctx.error("input[0] (dY) ", shape_str(dy.shape()), " is not the slice shape ", shape_str(p->count));
  std::memset(dx->raw_mut(), 0, dx->nbytes());
  if (dy.numel() == 0) return ok_status();
  const Ints dx_st = shape_strides(dx->shape());
  Shape shape = dy.shape();
  Ints st(dx_st.size());
  int64_t offset = 0;
  for (size_t d = 0; d < dx_st.size(); ++d) {
    offset += p->start[d] * dx_st[d];
    st[d] = p->step[d] * dx_st[d];
  }
  copy::simplify_strided(shape, st);  // dY is contiguous, so merging by dX's strides is exact
  const size_t r = shape.size();
  const int64_t inner = shape[r - 1], is = st[r - 1], rows = dy.numel() / inner;
  dispatch_elem(dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = dy.data<T>();
    T* dst = dx->mut_data<T>() + offset;
    ctx.pool().parallel_for(rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t lo, int64_t hi) {
      for (int64_t row = lo; row < hi; ++row) {
        int64_t off = 0;
        for (size_t d = r - 1, rem = static_cast<size_t>(row); d-- > 0;) {
          off += static_cast<int64_t>(rem % static_cast<size_t>(shape[d])) * st[d];
          rem /= static_cast<size_t>(shape[d]);
        }
        const T* s = src + row * inner;
        if (is == 1) copy::copy_n(s, inner, dst + off);
        else
          for (int64_t j = 0; j < inner; ++j) dst[off + j * is] = s[j];
      }
    });
  });
  return ok_status();
}

// Maps an output coordinate to the source coordinate along one axis; -1 = the pad constant.
inline int64_t pad_source(int64_t o, int64_t before, int64_t dim, int mode) {
  int64_t i = o - before;
  if (i >= 0 && i < dim) return i;
  if (mode == 0) return -1;
  if (mode == 2 || dim == 1) return i < 0 ? 0 : dim - 1;  // edge
  const int64_t period = 2 * (dim - 1);                   // reflect (without repeating the edge)
  i %= period;
  if (i < 0) i += period;
  return i < dim ? i : period - i;
}

Status pad_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  if (out->numel() == 0) return ok_status();
  const std::string m = ctx.node().attr_string("mode");
  const int mode = m == "constant" ? 0 : m == "reflect" ? 1 : 2;
  const Ints pads = ctx.input(1)->to_shape();
  const int64_t r = in.rank();
  if (r == 0) {
    dispatch_elem(in.dtype(), [&](auto tag) { out->mut_data<decltype(tag)>()[0] = in.data<decltype(tag)>()[0]; });
    return ok_status();
  }
  if (mode != 0 && in.numel() == 0) return ctx.error("mode '", m, "' cannot pad an empty tensor");
  uint64_t cbytes = 0;
  const Tensor* cv = ctx.input(2);
  if (cv && cv->numel() > 0 && in.dtype() != DType::kString) std::memcpy(&cbytes, cv->raw(), dtype_size(in.dtype()));
  const std::string cstr = cv && cv->numel() > 0 && in.dtype() == DType::kString ? cv->data<std::string>()[0] : "";

  const Shape& os = out->shape();
  const Ints in_st = shape_strides(in.shape());
  const int64_t inner_o = os[static_cast<size_t>(r - 1)], inner_i = in.dim(r - 1);
  const int64_t before = pads[static_cast<size_t>(r - 1)];
  const int64_t rows = out->numel() / inner_o;
  // The inner axis: [lo, hi) of output columns map straight onto input columns.
  const int64_t lo = std::clamp<int64_t>(before, 0, inner_o), hi = std::clamp<int64_t>(before + inner_i, lo, inner_o);
  dispatch_elem(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T cval{};
    if constexpr (std::is_same_v<T, std::string>) cval = cstr;
    else std::memcpy(&cval, &cbytes, sizeof(T));
    const T* src = in.data<T>();
    T* dst = out->mut_data<T>();
    ctx.pool().parallel_for(rows, std::max<int64_t>(1, 16384 / inner_o), [&](int64_t r0, int64_t r1) {
      for (int64_t row = r0; row < r1; ++row) {
        T* o = dst + row * inner_o;
        int64_t rem = row, off = 0;
        bool constant_row = false;
        for (int64_t d = r - 2; d >= 0; --d) {
          const int64_t od = os[static_cast<size_t>(d)];
          const int64_t c = rem % od;
          rem /= od;
          const int64_t sidx = pad_source(c, pads[static_cast<size_t>(d)], in.dim(d), mode);
          if (sidx < 0) constant_row = true;
          else off += sidx * in_st[static_cast<size_t>(d)];
        }
        if (constant_row) {
          std::fill(o, o + inner_o, cval);
          continue;
        }
        const T* s = src + off;
        for (int64_t j = 0; j < lo; ++j) {
          const int64_t k = pad_source(j, before, inner_i, mode);
          o[j] = k < 0 ? cval : s[k];
        }
        copy::copy_n(s + (lo - before), hi - lo, o + lo);
        for (int64_t j = hi; j < inner_o; ++j) {
          const int64_t k = pad_source(j, before, inner_i, mode);
          o[j] = k < 0 ? cval : s[k];
        }
      }
    });
  });
  return ok_status();
}

// PadGrad: walks dY row by row (all dims but the last), maps the row and each column to the
// input element Pad copied it from (pad_source) and adds. Serial: edge/reflect rows map many dY
// rows onto one dX row.
template <typename T>
void pad_grad_typed(const Tensor& dy, Tensor& dx, const Ints& pads, int mode) {
  const Shape& ys = dy.shape();
  const int64_t r = dy.rank(), inner_o = ys[static_cast<size_t>(r - 1)], inner_i = dx.dim(r - 1);
  const int64_t before = pads[static_cast<size_t>(r - 1)];
  const Ints st = shape_strides(dx.shape());
  Ints col(static_cast<size_t>(inner_o));
  for (int64_t j = 0; j < inner_o; ++j) col[static_cast<size_t>(j)] = pad_source(j, before, inner_i, mode);
  const T* src = dy.data<T>();
  T* dst = dx.mut_data<T>();
  const int64_t rows = inner_o == 0 ? 0 : dy.numel() / inner_o;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t rem = row, off = 0;
    for (int64_t d = r - 2; d >= 0; --d) {
      const int64_t od = ys[static_cast<size_t>(d)];
      off += pad_source(rem % od, pads[static_cast<size_t>(d)], dx.dim(d), mode) * st[static_cast<size_t>(d)];
      rem /= od;
    }
    const T* s = src + row * inner_o;
    T* t = dst + off;
    for (int64_t j = 0; j < inner_o; ++j) t[col[static_cast<size_t>(j)]] += s[j];
  }
}

Status pad_grad_kernel(exec::KernelContext& ctx) {
  const Tensor& dy = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * dx, ctx.alloc_output(0));
  const Ints pads = ctx.input(1)->to_shape();
  const int64_t r = dx->rank();
  if (static_cast<int64_t>(pads.size()) != 2 * r || dy.rank() != r)
    return ctx.error("input[1] (pads) has ", pads.size(), " values for dX ", shape_str(dx->shape()));
  for (int64_t d = 0; d < r; ++d)
    if (dy.dim(d) != dx->dim(d) + pads[static_cast<size_t>(d)] + pads[static_cast<size_t>(d + r)])
      return ctx.error("input[0] (dY) ", shape_str(dy.shape()), " is not ", shape_str(dx->shape()), " padded");
  std::memset(dx->raw_mut(), 0, dx->nbytes());
  if (dy.numel() == 0) return ok_status();
  if (r == 0) return ctx.error("a scalar has no padding");
  if (dx->numel() == 0) return ctx.error("cannot pad an empty tensor in this mode");
  const int mode = ctx.node().attr_string("mode") == "reflect" ? 1 : 2;
  if (dy.dtype() == DType::kF32) pad_grad_typed<float>(dy, *dx, pads, mode);
  else pad_grad_typed<double>(dy, *dx, pads, mode);
  return ok_status();
}

Status trilu_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const bool upper = ctx.node().attr_int("upper") != 0;
  const int64_t k = ctx.input(1) ? ctx.input(1)->scalar_i64() : 0;
  const int64_t r = in.rank(), n = in.dim(r - 2), m = in.dim(r - 1);
  const int64_t mats = n * m == 0 ? 0 : in.numel() / (n * m);
  dispatch_elem(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_trivially_copyable_v<T>) {
      const T* src = in.data<T>();
      T* dst = out->mut_data<T>();
      for (int64_t b = 0; b < mats * n; ++b) {
        const int64_t i = b % n;
        const T* s = src + b * m;
        T* d = dst + b * m;
        // Upper keeps j >= i + k; lower keeps j <= i + k.
        const int64_t cut = std::clamp<int64_t>(upper ? i + k : i + k + 1, 0, m);
        if (upper) {
          std::fill(d, d + cut, T{});
          copy::copy_n(s + cut, m - cut, d + cut);
        } else {
          copy::copy_n(s, cut, d);
          std::fill(d + cut, d + m, T{});
        }
      }
    }
  });
  return ok_status();
}

Status reverse_sequence_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const Tensor& lens = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const int64_t bax = ctx.node().attr_int("batch_axis"), tax = ctx.node().attr_int("time_axis");
  const int64_t nb = in.dim(bax), nt = in.dim(tax);
  const int64_t inner = prod(in.shape(), 2, static_cast<size_t>(in.rank()));
  const Ints st = shape_strides(in.shape());
  const int64_t sb = st[static_cast<size_t>(bax)], stt = st[static_cast<size_t>(tax)];
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t l = copy::index_at(lens, b);
    if (l < 0 || l > nt)
      return ctx.error("input[1] (sequence_lens): value ", l, " at position ", b, " is out of range [0, ", nt, "]");
  }
  dispatch_elem(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = in.data<T>();
    T* dst = out->mut_data<T>();
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t l = copy::index_at(lens, b);
      for (int64_t t = 0; t < nt; ++t) {
        const int64_t from = t < l ? l - 1 - t : t;
        copy::copy_n(src + b * sb + from * stt, inner, dst + b * sb + t * stt);
      }
    }
  });
  return ok_status();
}

// CumSum accumulates in the element type (f16/bf16 in f32), one running sum per inner position
// so that the innermost loop is contiguous.
template <typename T, typename Acc>
void cumsum_typed(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool exclusive,
                  bool reverse) {
  auto load = [](T v) -> Acc {
    if constexpr (std::is_same_v<T, Half>) return f16_to_f32(v.bits);
    else if constexpr (std::is_same_v<T, BFloat16>) return bf16_to_f32(v.bits);
    else return static_cast<Acc>(v);
  };
  auto store = [](Acc v) -> T {
    if constexpr (std::is_same_v<T, Half>) return Half{f32_to_f16(v)};
    else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16{f32_to_bf16(v)};
    else return static_cast<T>(v);
  };
  const T* src = in.data<T>();
  T* dst = out.mut_data<T>();
  std::vector<Acc> acc(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    std::fill(acc.begin(), acc.end(), Acc{});
    for (int64_t s = 0; s < n; ++s) {
      const int64_t t = reverse ? n - 1 - s : s;
      const T* x = src + (o * n + t) * inner;
      T* y = dst + (o * n + t) * inner;
      for (int64_t j = 0; j < inner; ++j) {
        const Acc v = load(x[j]);
        if (exclusive) {
          y[j] = store(acc[static_cast<size_t>(j)]);
          acc[static_cast<size_t>(j)] += v;
        } else {
          acc[static_cast<size_t>(j)] += v;
          y[j] = store(acc[static_cast<size_t>(j)]);
        }
      }
    }
  }
}

Status cumsum_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const int64_t r = std::max<int64_t>(in.rank(), 1);
  if (ctx.input(1)->numel() != 1) return ctx.error("input[1] (axis) must hold one value");
  const int64_t a = copy::index_at(*ctx.input(1), 0);
  if (a < -r || a >= r) return ctx.error("input[1] (axis): ", a, " is out of range for rank ", r);
  const auto axis = static_cast<size_t>(a < 0 ? a + r : a);
  const Shape s = in.rank() == 0 ? Shape{1} : in.shape();
  const int64_t outer = prod(s, 0, axis), n = s[axis], inner = prod(s, axis + 1, s.size());
  const bool ex = ctx.node().attr_int("exclusive") != 0, rev = ctx.node().attr_int("reverse") != 0;
  if (in.numel() == 0) return ok_status();
  switch (in.dtype()) {
    case DType::kF32: cumsum_typed<float, float>(in, *out, outer, n, inner, ex, rev); break;
    case DType::kF64: cumsum_typed<double, double>(in, *out, outer, n, inner, ex, rev); break;
    case DType::kF16: cumsum_typed<Half, float>(in, *out, outer, n, inner, ex, rev); break;
    case DType::kBF16: cumsum_typed<BFloat16, float>(in, *out, outer, n, inner, ex, rev); break;
    case DType::kI32: cumsum_typed<int32_t, int32_t>(in, *out, outer, n, inner, ex, rev); break;
    case DType::kI64: cumsum_typed<int64_t, int64_t>(in, *out, outer, n, inner, ex, rev); break;
    case DType::kU32: cumsum_typed<uint32_t, uint32_t>(in, *out, outer, n, inner, ex, rev); break;
    case DType::kU64: cumsum_typed<uint64_t, uint64_t>(in, *out, outer, n, inner, ex, rev); break;
    default: return ctx.error("CumSum of dtype ", dtype_name(in.dtype()), " is not supported");
  }
  return ok_status();
}

}  // namespace

void register_tensor_ops_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("Concat") r.add_fn("Concat", {}, &concat_kernel);
  TSR_IF_SELECTED("Split") r.add_fn("Split", {}, &split_kernel);
  TSR_IF_SELECTED("Slice") r.add_fn("Slice", {}, &slice_kernel);
  TSR_IF_SELECTED("SliceGrad") r.add_fn("SliceGrad", {DType::kF32, DType::kF64}, &slice_grad_kernel);
  TSR_IF_SELECTED("Pad") r.add_fn("Pad", {}, &pad_kernel);
  TSR_IF_SELECTED("PadGrad") r.add_fn("PadGrad", {DType::kF32, DType::kF64}, &pad_grad_kernel);
  TSR_IF_SELECTED("Trilu") r.add_fn("Trilu", {}, &trilu_kernel);
  TSR_IF_SELECTED("ReverseSequence") r.add_fn("ReverseSequence", {}, &reverse_sequence_kernel);
  TSR_IF_SELECTED("CumSum") r.add_fn("CumSum", {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64, DType::kU32,
                      DType::kU64},
           &cumsum_kernel);
}

}  // namespace tsr::cpu
