// CPU kernels for the shape family (core/ops/families/shape.cpp) and the strided-copy engine
// shared by the data-movement kernels (copy_util.h).
#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/copy_util.h"

namespace tsr::cpu {

namespace copy {

void simplify_strided(Shape& shape, Ints& strides) {
  Shape s;
  Ints st;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!s.empty() && st.back() == strides[i] * shape[i]) {
      s.back() *= shape[i];
      st.back() = strides[i];
      continue;
    }
    s.push_back(shape[i]);
    st.push_back(strides[i]);
  }
  if (s.empty()) {
    s.push_back(1);
    st.push_back(1);
  }
  shape = std::move(s);
  strides = std::move(st);
}

namespace {

template <typename T>
void copy_rows(const T* src, T* dst, const Shape& shape, const Ints& strides, int64_t row_begin,
               int64_t row_end) {
  const size_t r = shape.size();
  const int64_t inner = shape[r - 1], is = strides[r - 1];
  Ints idx(r, 0);
  int64_t off = 0, rem = row_begin;
  for (size_t d = r - 1; d-- > 0;) {
    idx[d] = rem % shape[d];
    rem /= shape[d];
    off += idx[d] * strides[d];
  }
  T* out = dst + row_begin * inner;
  for (int64_t row = row_begin; row < row_end; ++row, out += inner) {
    const T* in = src + off;
    if (is == 1) {
      copy_n(in, inner, out);
    } else if (is == 0) {
      std::fill(out, out + inner, *in);
    } else {
      for (int64_t j = 0; j < inner; ++j) out[j] = in[j * is];
    }
    for (size_t d = r - 1; d-- > 0;) {  // odometer over the outer dims
      off += strides[d];
      if (++idx[d] < shape[d]) break;
      off -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

// Batched transpose: dst[b][i][j] = src[b*sb + i + j*sj] (the source is contiguous along i, the
// destination along j). Each 32x32 tile is read with contiguous runs into a small buffer and
// written back with contiguous runs: with power-of-two strides (NCHW <-> NHWC) reading or writing
// strided directly makes every access a cache-set conflict miss.
template <typename T>
void transpose_tiles(const T* src, T* dst, int64_t nb, int64_t sb, int64_t ni, int64_t nj, int64_t sj,
                     ThreadPool& pool) {
  constexpr int64_t kTile = 32;
  const int64_t ti = (ni + kTile - 1) / kTile;
  pool.parallel_for(nb * ti, 1, [&](int64_t lo, int64_t hi) {
    T buf[kTile][kTile];
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t b = t / ti, i0 = (t % ti) * kTile, ilen = std::min(kTile, ni - i0);
      const T* s = src + b * sb + i0;
      T* d = dst + b * ni * nj + i0 * nj;
      for (int64_t j0 = 0; j0 < nj; j0 += kTile) {
        const int64_t jlen = std::min(kTile, nj - j0);
        for (int64_t j = 0; j < jlen; ++j) {
          const T* row = s + (j0 + j) * sj;
          for (int64_t i = 0; i < ilen; ++i) buf[i][j] = row[i];
        }
        for (int64_t i = 0; i < ilen; ++i) copy_n(buf[i], jlen, d + i * nj + j0);
      }
    }
  });
}

}  // namespace

void strided_copy(const Tensor& src, int64_t offset, Shape shape, Ints strides, Tensor& dst,
                  ThreadPool& pool) {
  if (dst.numel() == 0) return;
  simplify_strided(shape, strides);
  dispatch_elem(src.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* s = src.data<T>() + offset;
    T* d = dst.mut_data<T>();
    const size_t r = shape.size();
    if (std::is_trivially_copyable_v<T> && r >= 2 && r <= 3 && strides[r - 2] == 1 && strides[r - 1] != 1 &&
        shape[r - 2] >= 8 && shape[r - 1] >= 8) {
      transpose_tiles(s, d, r == 3 ? shape[0] : 1, r == 3 ? strides[0] : 0, shape[r - 2], shape[r - 1],
                      strides[r - 1], pool);
      return;
    }
    const int64_t inner = shape[r - 1];
    const int64_t rows = dst.numel() / inner;
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(inner, 1));
    pool.parallel_for(rows, grain, [&](int64_t lo, int64_t hi) { copy_rows(s, d, shape, strides, lo, hi); });
  });
}

void fill_elems(Tensor& dst, int64_t at, int64_t n, const void* value_bytes, const std::string& str) {
  dispatch_elem(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T v{};
    if constexpr (std::is_same_v<T, std::string>) v = str;
    else std::memcpy(&v, value_bytes, sizeof(T));
    T* p = dst.mut_data<T>() + at;
    std::fill(p, p + n, v);
  });
}

}  // namespace copy

namespace {

using copy::strided_copy;

// ---- Constant ------------------------------------------------------------------------------

class ConstantKernel final : public exec::Kernel {
 public:
  explicit ConstantKernel(Tensor v) : value_(std::move(v)) {}
  Status run(exec::KernelContext& ctx) override {
    ctx.set_output(0, value_);
    return ok_status();
  }

 private:
  Tensor value_;
};

Expected<std::unique_ptr<exec::Kernel>> make_constant(const exec::KernelInit& init) {
  if (init.node.attributes.size() != 1)
    return invalid_model(init.place, ": Constant needs exactly one value attribute");
  const ir::Attribute& a = init.node.attributes[0];
  Tensor t;
  if (a.name == "value") {
    t = a.t;
  } else if (a.name == "value_float") {
    t = Tensor::scalar<float>(static_cast<float>(a.f));
  } else if (a.name == "value_floats") {
    std::vector<float> v(a.floats.begin(), a.floats.end());
    t = Tensor::from<float>({static_cast<int64_t>(v.size())}, v);
  } else if (a.name == "value_int") {
    t = Tensor::scalar<int64_t>(a.i);
  } else if (a.name == "value_ints") {
    t = Tensor::from<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints);
  } else if (a.name == "value_string" || a.name == "value_strings") {
    std::vector<std::string> v = a.name == "value_string" ? std::vector<std::string>{a.s} : a.strings;
    Shape s = a.name == "value_string" ? Shape{} : Shape{static_cast<int64_t>(v.size())};
    TSR_ASSIGN_OR_RETURN(t, Tensor::empty(DType::kString, s));
    std::copy(v.begin(), v.end(), t.mut_data<std::string>());
  } else {
    return unsupported(init.place, ": Constant attribute '", a.name, "' is not supported");
  }
  if (!t.defined()) return invalid_model(init.place, ": Constant value is empty");
  return std::unique_ptr<exec::Kernel>(new ConstantKernel(std::move(t)));
}

Status constant_of_shape(exec::KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const ir::Attribute* v = ctx.node().attr("value");
  if (!v) {
    std::memset(out->raw_mut(), 0, out->nbytes());
    return ok_status();
  }
  copy::fill_elems(*out, 0, out->numel(), v->t.raw());
  return ok_status();
}

// ---- Shape queries and views ---------------------------------------------------------------

Status shape_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const int64_t r = in.rank();
  int64_t start = ctx.node().attr_int("start");
  if (start < 0) start += r;
  start = std::clamp<int64_t>(start, 0, r);
  int64_t* p = out->mut_data<int64_t>();
  for (int64_t i = 0; i < out->numel(); ++i) p[i] = in.dim(start + i);
  return ok_status();
}

Status size_kernel(exec::KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  out->mut_data<int64_t>()[0] = ctx.input(0)->numel();
  return ok_status();
}

// Reshape, Flatten, Squeeze, Unsqueeze: the inferred shape over the same data.
Status view_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  auto v = in.reshaped(ctx.output_type(0).shape);
  if (!v.ok()) return ctx.error(v.status().message());
  ctx.set_output(0, std::move(v).value());
  return ok_status();
}

// ---- Copies through strided views ----------------------------------------------------------

Status expand_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const Shape& os = out->shape();
  const size_t r = os.size(), ir = static_cast<size_t>(in.rank());
  Ints in_st = shape_strides(in.shape()), st(r, 0);
  for (size_t i = 0; i < ir; ++i) {
    const size_t o = r - ir + i;
    st[o] = in.dim(static_cast<int64_t>(i)) == 1 ? 0 : in_st[i];
  }
  strided_copy(in, 0, os, st, *out, ctx.pool());
  return ok_status();
}

Status tile_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  if (out->numel() == 0) return ok_status();
  // out viewed as [rep0, d0, rep1, d1, ...] reads the input with stride 0 on the repeat dims.
  Ints in_st = shape_strides(in.shape());
  Shape s;
  Ints st;
  for (int64_t i = 0; i < in.rank(); ++i) {
    s.push_back(out->dim(i) / in.dim(i));
    st.push_back(0);
    s.push_back(in.dim(i));
    st.push_back(in_st[static_cast<size_t>(i)]);
  }
  strided_copy(in, 0, s, st, *out, ctx.pool());
  return ok_status();
}

Status transpose_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const int64_t r = in.rank();
  Ints perm = ctx.node().attr_ints("perm");
  if (perm.empty())
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  // Axes of size 1 moved, the others kept in order ([1, S, D] <-> [S, 1, D] around PyTorch's
  // sequence-first attention, twice a layer in ViT): the same bytes, so a view as Reshape's.
  int64_t last = -1;
  bool same_order = static_cast<int64_t>(perm.size()) == r;
  for (int64_t p : perm) {
    if (!same_order || p < 0 || p >= r) {
      same_order = false;
      break;
    }
    if (in.dim(p) == 1) continue;
    same_order = p > last;
    last = p;
  }
  if (same_order && in.kind() == ValueKind::kTensor) {
    auto v = in.reshaped(ctx.output_type(0).shape);
    if (v.ok()) {
      ctx.set_output(0, std::move(v).value());
      return ok_status();
    }
  }
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  Ints in_st = shape_strides(in.shape()), st;
  for (int64_t p : perm) st.push_back(in_st[static_cast<size_t>(p)]);
  strided_copy(in, 0, out->shape(), st, *out, ctx.pool());
  return ok_status();
}

// DepthToSpace / SpaceToDepth are transposes of a 6-D view of the input.
Status depth_space_kernel(exec::KernelContext& ctx, bool to_space) {
  const Tensor& in = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const int64_t b = ctx.node().attr_int("blocksize");
  const int64_t n = in.dim(0), c = in.dim(1), h = in.dim(2), w = in.dim(3);
  Shape view;
  Ints perm;
  if (to_space) {
    const bool crd = ctx.node().attr_string("mode") == "CRD";
    view = crd ? Shape{n, c / (b * b), b, b, h, w} : Shape{n, b, b, c / (b * b), h, w};
    perm = crd ? Ints{0, 1, 4, 2, 5, 3} : Ints{0, 3, 4, 1, 5, 2};
  } else {
    view = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
  }
  Ints vst = shape_strides(view), st;
  Shape s;
  for (int64_t p : perm) {
    st.push_back(vst[static_cast<size_t>(p)]);
    s.push_back(view[static_cast<size_t>(p)]);
  }
  strided_copy(in, 0, s, st, *out, ctx.pool());
  return ok_status();
}

Status depth_to_space(exec::KernelContext& ctx) { return depth_space_kernel(ctx, true); }
Status space_to_depth(exec::KernelContext& ctx) { return depth_space_kernel(ctx, false); }

Status range_kernel(exec::KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const Tensor &s = *ctx.input(0), &d = *ctx.input(2);
  const int64_t n = out->numel();
  switch (out->dtype()) {
    case DType::kF32: {  // the spec defines element i as start + i * delta (no accumulation drift)
      const float a = static_cast<float>(s.scalar_f64()), dl = static_cast<float>(d.scalar_f64());
      float* p = out->mut_data<float>();
      for (int64_t i = 0; i < n; ++i) p[i] = a + static_cast<float>(i) * dl;
      break;
    }
    case DType::kF64: {
      const double a = s.scalar_f64(), dl = d.scalar_f64();
      double* p = out->mut_data<double>();
      for (int64_t i = 0; i < n; ++i) p[i] = a + static_cast<double>(i) * dl;
      break;
    }
    case DType::kI16:
    case DType::kI32:
    case DType::kI64: {
      const int64_t a = s.scalar_i64(), dl = d.scalar_i64();
      dispatch_dtype(out->dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_integral_v<T>) {
          T* p = out->mut_data<T>();
          for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(a + i * dl);
        }
      });
      break;
    }
    default:
      return ctx.error("Range of dtype ", dtype_name(out->dtype()), " is not supported");
  }
  return ok_status();
}

}  // namespace

void register_shape_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("Constant") r.add("Constant", {}, &make_constant);
  TSR_IF_SELECTED("ConstantOfShape") r.add_fn("ConstantOfShape", {DType::kI64}, &constant_of_shape);
  TSR_IF_SELECTED("Shape") r.add_fn("Shape", {}, &shape_kernel);
  TSR_IF_SELECTED("Size") r.add_fn("Size", {}, &size_kernel);
  TSR_IF_SELECTED("Reshape") r.add_fn("Reshape", {}, &view_kernel);
  TSR_IF_SELECTED("Flatten") r.add_fn("Flatten", {}, &view_kernel);
  TSR_IF_SELECTED("Squeeze") r.add_fn("Squeeze", {}, &view_kernel);
  TSR_IF_SELECTED("Unsqueeze") r.add_fn("Unsqueeze", {}, &view_kernel);
  TSR_IF_SELECTED("Expand") r.add_fn("Expand", {}, &expand_kernel);
  TSR_IF_SELECTED("Tile") r.add_fn("Tile", {}, &tile_kernel);
  TSR_IF_SELECTED("Transpose") r.add_fn("Transpose", {}, &transpose_kernel);
  TSR_IF_SELECTED("DepthToSpace") r.add_fn("DepthToSpace", {}, &depth_to_space);
  TSR_IF_SELECTED("SpaceToDepth") r.add_fn("SpaceToDepth", {}, &space_to_depth);
  TSR_IF_SELECTED("Range") r.add_fn("Range", {DType::kF32, DType::kF64, DType::kI16, DType::kI32, DType::kI64}, &range_kernel);
}

}  // namespace tsr::cpu
