// Index-driven ops (ONNX opset 17): Gather, GatherElements, GatherND, ScatterElements, ScatterND,
// OneHot, NonZero, Compress, TopK, Unique.
//
// Index values are validated by the kernels (they are data); inference checks ranks and dtypes.
#include <algorithm>

#include "core/ops/shape_util.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;
using shape_util::known_i64;
using shape_util::norm_axis;
using shape_util::rank_of;

constexpr std::initializer_list<DType> kIndexTypes = {DType::kI32, DType::kI64};

Status infer_gather(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, kIndexTypes));
  const ValueType& data = ctx.input(0);
  const ValueType& idx = ctx.input(1);
  const int64_t r = rank_of(ctx, 0);
  if (r < 0 || !idx.has_shape) {
    ctx.set_output_unknown_shape(0, data.dtype);
    return ok_status();
  }
  if (r == 0) return ctx.arg_error("input[0]: rank 0, expected at least 1");
  TSR_ASSIGN_OR_RETURN(int64_t axis, norm_axis(ctx, ctx.node().attr_int("axis"), r, "attribute axis"));
  // Constant indices into a known dim are checked at load time already (the kernel checks again).
  const int64_t n = data.shape[static_cast<size_t>(axis)];
  if (const Tensor* iv = ctx.input_value(1); iv && n >= 0 && !ctx.runtime()) {
    const std::vector<int64_t> v = iv->to_i64_vector();
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] < -n || v[i] >= n)
        return ctx.arg_error("input[1] (indices): index ", v[i], " at position ", i, " is out of range [", -n, ", ",
                             n - 1, "]");
  }
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  ctx.set_output(0, data.dtype, out);
  return ok_status();
}

// GatherGrad(dY, indices, shape) -> dX (domain tessera; f32/f64; attribute axis as Gather's):
// the adjoint of Gather. dX has `shape` (i64[r], the forward data's shape) and
//   dX[..., j, ...] = sum over the k with indices[k] = j (negative indices count from the end)
//                     of dY[..., k, ...]
// where dY = Gather(dX-shaped, indices, axis) has shape shape[:axis] + indices.shape +
// shape[axis+1:]. Repeated indices accumulate.
Status infer_gather_grad(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, kIndexTypes));
  TSR_RETURN_IF_ERROR(shape_util::set_output_from_shape_input(ctx, ctx.input(0).dtype, 2));
  const ValueType& out = ctx.output(0);
  const ValueType& dy = ctx.input(0);
  const ValueType& idx = ctx.input(1);
  if (!out.has_shape) return ok_status();
  const auto r = static_cast<int64_t>(out.shape.size());
  if (r == 0) return ctx.arg_error("input[2] (shape): rank 0, expected at least 1");
  TSR_ASSIGN_OR_RETURN(int64_t axis, norm_axis(ctx, ctx.node().attr_int("axis"), r, "attribute axis"));
  if (!dy.has_shape || !idx.has_shape) return ok_status();
  Shape expect(out.shape.begin(), out.shape.begin() + axis);
  expect.insert(expect.end(), idx.shape.begin(), idx.shape.end());
  expect.insert(expect.end(), out.shape.begin() + axis + 1, out.shape.end());
  bool match = expect.size() == dy.shape.size();
  for (size_t i = 0; match && i < expect.size(); ++i) match = expect[i] < 0 || dy.shape[i] < 0 || expect[i] == dy.shape[i];
  if (!match) return ctx.arg_error("input[0] (dY) ", shape_str(dy.shape), ", expected ", shape_str(expect));
  return ok_status();
}

Status infer_gather_elements(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, kIndexTypes));
  const ValueType& data = ctx.input(0);
  const ValueType& idx = ctx.input(1);
  const int64_t r = rank_of(ctx, 0);
  if (r >= 0) {
    if (r == 0) return ctx.arg_error("input[0]: rank 0, expected at least 1");
    TSR_RETURN_IF_ERROR(norm_axis(ctx, ctx.node().attr_int("axis"), r, "attribute axis").status());
    TSR_RETURN_IF_ERROR(ctx.require_rank(1, r, r));
  }
  if (idx.has_shape) ctx.set_output(0, data.dtype, idx.shape);
  else ctx.set_output_unknown_shape(0, data.dtype);
  return ok_status();
}

Status infer_gather_nd(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  const ValueType& data = ctx.input(0);
  const ValueType& idx = ctx.input(1);
  const int64_t b = ctx.node().attr_int("batch_dims");
  const int64_t r = rank_of(ctx, 0), q = rank_of(ctx, 1);
  if (b < 0) return ctx.ir_error("attribute batch_dims ", b, " is negative");
  if (r < 0 || q < 0) {
    ctx.set_output_unknown_shape(0, data.dtype);
    return ok_status();
  }
  if (r < 1 || q < 1) return ctx.arg_error("inputs must have rank >= 1 (data rank ", r, ", indices rank ", q, ")");
  if (b >= std::min(r, q)) return ctx.arg_error("batch_dims ", b, " must be less than both ranks (", r, ", ", q, ")");
  for (int64_t i = 0; i < b; ++i) {
    const int64_t a = data.shape[static_cast<size_t>(i)], c = idx.shape[static_cast<size_t>(i)];
    if (a >= 0 && c >= 0 && a != c)
      return ctx.arg_error("batch dim ", i, " differs: data ", shape_str(data.shape), ", indices ", shape_str(idx.shape));
  }
  const int64_t m = idx.shape.back();
  if (m < 0) {
    ctx.set_output_unknown_shape(0, data.dtype);
    return ok_status();
  }
  if (m < 1 || m > r - b)
    return ctx.arg_error("indices ", shape_str(idx.shape), ": last dim ", m, " must be in [1, ", r - b, "]");
  Shape out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + b + m, data.shape.end());
  ctx.set_output(0, data.dtype, out);
  return ok_status();
}

Status check_reduction(InferContext& ctx) {
  const std::string red = ctx.node().attr_string("reduction");
  if (red != "none" && red != "add" && red != "mul" && red != "max" && red != "min")
    return ctx.ir_error("attribute reduction '", red, "', expected none, add, mul, max or min");
  if (red != "none" && (ctx.input(0).dtype == DType::kString || ctx.input(0).dtype == DType::kBool))
    return ctx.ir_error("reduction '", red, "' needs a numeric input[0], got ", dtype_name(ctx.input(0).dtype));
  return ok_status();
}

Status infer_scatter_elements(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, kIndexTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(check_reduction(ctx));
  const int64_t r = rank_of(ctx, 0);
  if (r >= 0) {
    if (r == 0) return ctx.arg_error("input[0]: rank 0, expected at least 1");
    TSR_RETURN_IF_ERROR(norm_axis(ctx, ctx.node().attr_int("axis"), r, "attribute axis").status());
    TSR_RETURN_IF_ERROR(ctx.require_rank(1, r, r));
  }
  const ValueType& idx = ctx.input(1);
  const ValueType& upd = ctx.input(2);
  if (idx.has_shape && upd.has_shape && idx.shape.size() == upd.shape.size())
    for (size_t i = 0; i < idx.shape.size(); ++i)
      if (idx.shape[i] >= 0 && upd.shape[i] >= 0 && idx.shape[i] != upd.shape[i])
        return ctx.arg_error("updates ", shape_str(upd.shape), " must have the shape of indices ", shape_str(idx.shape));
  ctx.output(0) = ctx.input(0);
  return ok_status();
}

Status infer_scatter_nd(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(check_reduction(ctx));
  const ValueType& data = ctx.input(0);
  const ValueType& idx = ctx.input(1);
  const ValueType& upd = ctx.input(2);
  if (data.has_shape && idx.has_shape && upd.has_shape && !idx.shape.empty()) {
    const int64_t m = idx.shape.back();
    const int64_t r = static_cast<int64_t>(data.shape.size());
    if (m >= 0 && (m < 1 || m > r))
      return ctx.arg_error("indices ", shape_str(idx.shape), ": last dim ", m, " must be in [1, ", r, "]");
    if (m >= 0) {
      Shape expect(idx.shape.begin(), idx.shape.end() - 1);
      expect.insert(expect.end(), data.shape.begin() + m, data.shape.end());
      bool bad = expect.size() != upd.shape.size();
      for (size_t i = 0; !bad && i < expect.size(); ++i)
        bad = expect[i] >= 0 && upd.shape[i] >= 0 && expect[i] != upd.shape[i];
      if (bad) return ctx.arg_error("updates ", shape_str(upd.shape), ", expected ", shape_str(expect));
    }
  }
  ctx.output(0) = data;
  return ok_status();
}

Status infer_one_hot(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_rank(2, 1, 1));
  const ValueType& idx = ctx.input(0);
  const DType dt = ctx.input(2).dtype;
  if (ctx.input(0).dtype == DType::kString || ctx.input(1).dtype == DType::kString)
    return ctx.ir_error("indices and depth must be numeric");
  int64_t depth = -1;
  if (const Tensor* d = ctx.input_value(1)) {
    if (d->numel() != 1) return ctx.arg_error("input[1] (depth) must hold one value");
    const double v = d->scalar_f64();
    if (!(v >= 1) || v > double(int64_t{1} << 40)) return ctx.arg_error("input[1] (depth) ", v, " must be positive");
    depth = static_cast<int64_t>(v);
  }
  if (const Tensor* v = ctx.input_value(2); v && v->numel() != 2)
    return ctx.arg_error("input[2] (values) has ", v->numel(), " elements, expected 2 (off, on)");
  if (!idx.has_shape) {
    ctx.set_output_unknown_shape(0, dt);
    return ok_status();
  }
  const int64_t r = static_cast<int64_t>(idx.shape.size()) + 1;
  TSR_ASSIGN_OR_RETURN(int64_t axis, norm_axis(ctx, ctx.node().attr_int("axis"), r, "attribute axis"));
  Shape out = idx.shape;
  out.insert(out.begin() + axis, depth);
  ctx.set_output(0, dt, out);
  return ok_status();
}

Status infer_non_zero(InferContext& ctx) {
  if (ctx.input(0).dtype == DType::kString) return ctx.ir_error("input[0]: string tensors are not supported");
  const int64_t r = rank_of(ctx, 0);
  // The count depends on the data: the kernel allocates the exact shape.
  ctx.set_output(0, DType::kI64, {r < 0 ? -1 : std::max<int64_t>(r, 1) , -1});
  return ok_status();
}

Status infer_compress(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kBool}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 1, 1));
  const ValueType& in = ctx.input(0);
  const int64_t r = rank_of(ctx, 0);
  const ir::Attribute* aa = ctx.node().attr("axis");
  int64_t axis = -1;
  if (aa && r >= 0) {
    TSR_ASSIGN_OR_RETURN(axis, norm_axis(ctx, aa->i, r, "attribute axis"));
  }
  int64_t count = -1;
  if (const Tensor* c = ctx.input_value(1)) {
    int64_t limit = c->numel();
    if (r >= 0) {
      const int64_t len = aa ? in.shape[static_cast<size_t>(axis)] : shape_util::known_numel(in.shape);
      if (len >= 0) {
        if (c->numel() > len)
          return ctx.arg_error("input[1] (condition) has ", c->numel(), " values, more than the ", len,
                               " it selects from");
        limit = len;
      }
    }
    count = 0;
    const bool* p = c->data<bool>();
    for (int64_t i = 0; i < std::min(limit, c->numel()); ++i) count += p[i] ? 1 : 0;
  }
  if (!aa) ctx.set_output(0, in.dtype, {count});
  else if (r < 0) ctx.set_output_unknown_shape(0, in.dtype);
  else {
    Shape out = in.shape;
    out[static_cast<size_t>(axis)] = count;
    ctx.set_output(0, in.dtype, out);
  }
  return ok_status();
}

Status infer_topk(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 1, 1));
  const ValueType& in = ctx.input(0);
  if (in.dtype == DType::kString || in.dtype == DType::kBool)
    return ctx.ir_error("input[0]: dtype ", dtype_name(in.dtype), " is not ordered numerically");
  const int64_t r = rank_of(ctx, 0);
  if (r < 0) {
    ctx.set_output_unknown_shape(0, in.dtype);
    if (ctx.num_outputs() > 1) ctx.set_output_unknown_shape(1, DType::kI64);
    return ok_status();
  }
  if (r == 0) return ctx.arg_error("input[0]: rank 0, expected at least 1");
  TSR_ASSIGN_OR_RETURN(int64_t axis, norm_axis(ctx, ctx.node().attr_int("axis"), r, "attribute axis"));
  Shape out = in.shape;
  int64_t k = -1;
  if (auto kv = known_i64(ctx, 1)) {
    if (kv->size() != 1) return ctx.arg_error("input[1] (K) must hold one value");
    k = (*kv)[0];
    const int64_t d = in.shape[static_cast<size_t>(axis)];
    if (k < 0 || (d >= 0 && k > d))
      return ctx.arg_error("input[1] (K) = ", k, " is out of range [0, ", d, "] for axis ", axis);
  }
  out[static_cast<size_t>(axis)] = k;
  ctx.set_output(0, in.dtype, out);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kI64, out);
  return ok_status();
}

Status infer_unique(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  const int64_t r = rank_of(ctx, 0);
  const ir::Attribute* aa = ctx.node().attr("axis");
  int64_t n = -1;  // the number of slices (or elements) that are compared
  if (aa) {
    if (r >= 0) {
      if (r == 0) return ctx.arg_error("input[0]: rank 0 with an axis");
      TSR_ASSIGN_OR_RETURN(int64_t axis, norm_axis(ctx, aa->i, r, "attribute axis"));
      Shape out = in.shape;
      n = out[static_cast<size_t>(axis)];
      out[static_cast<size_t>(axis)] = -1;
      ctx.set_output(0, in.dtype, out);
    } else {
      ctx.set_output_unknown_shape(0, in.dtype);
    }
  } else {
    ctx.set_output(0, in.dtype, {-1});
    if (r >= 0) n = shape_util::known_numel(in.shape);
  }
  // The unique count depends on the data: the kernel allocates the exact shapes.
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kI64, {-1});
  if (ctx.num_outputs() > 2) ctx.set_output(2, DType::kI64, {n});
  if (ctx.num_outputs() > 3) ctx.set_output(3, DType::kI64, {-1});
  return ok_status();
}

}  // namespace

void register_indexing_ops(OpRegistry& r) {
  TSR_IF_SELECTED("Gather") r.add({"Gather", "", 13, 2, 2, 1, 1, {int_attr("axis", 0)}, infer_gather,
         "Takes slices along an axis at the given indices (negative indices count from the end)"});
  TSR_IF_SELECTED("GatherGrad") r.add({"GatherGrad", "tessera", 1, 3, 3, 1, 1, {int_attr("axis", 0)}, infer_gather_grad,
         "Adjoint of Gather: dY rows added into zeros of the given shape at the indices"});
  TSR_IF_SELECTED("GatherElements") r.add({"GatherElements", "", 13, 2, 2, 1, 1, {int_attr("axis", 0)}, infer_gather_elements,
         "out[i][j][k] = data[idx[i][j][k]][j][k] (for axis 0)"});
  TSR_IF_SELECTED("GatherND") r.add({"GatherND", "", 13, 2, 2, 1, 1, {int_attr("batch_dims", 0)}, infer_gather_nd,
         "Gathers slices addressed by index tuples (the last dim of indices)"});
  TSR_IF_SELECTED("ScatterElements") r.add({"ScatterElements", "", 16, 3, 3, 1, 1, {int_attr("axis", 0), string_attr("reduction", "none")},
         infer_scatter_elements, "Writes updates into a copy of data at per-element indices"});
  TSR_IF_SELECTED("ScatterND") r.add({"ScatterND", "", 16, 3, 3, 1, 1, {string_attr("reduction", "none")}, infer_scatter_nd,
         "Writes update slices into a copy of data at index tuples"});
  TSR_IF_SELECTED("OneHot") r.add({"OneHot", "", 11, 3, 3, 1, 1, {int_attr("axis", -1)}, infer_one_hot,
         "One-hot encoding with (off, on) values and a depth"});
  TSR_IF_SELECTED("NonZero") r.add({"NonZero", "", 13, 1, 1, 1, 1, {}, infer_non_zero, "Indices of the nonzero elements, i64[rank, n]"});
  TSR_IF_SELECTED("Compress") r.add({"Compress", "", 11, 2, 2, 1, 1, {{"axis", AttrKind::kInt}}, infer_compress,
         "Selects slices (or flattened elements) where condition is true"});
  TSR_IF_SELECTED("TopK") r.add({"TopK", "", 11, 2, 2, 1, 2, {int_attr("axis", -1), int_attr("largest", 1), int_attr("sorted", 1)},
         infer_topk, "The k largest (or smallest) values along an axis and their indices"});
  TSR_IF_SELECTED("Unique") r.add({"Unique", "", 11, 1, 1, 1, 4, {{"axis", AttrKind::kInt}, int_attr("sorted", 1)}, infer_unique,
         "Unique elements (or slices along axis) with first indices, inverse indices and counts"});
}

}  // namespace tsr::ops
