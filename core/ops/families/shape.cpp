// Shape-manipulation ops (ONNX opset 17): Constant, ConstantOfShape, Shape, Size, Reshape,
// Flatten, Squeeze, Unsqueeze, Expand, Tile, Range, Transpose, DepthToSpace, SpaceToDepth.
//
// Whenever a shape-determining input is known (input_value(i) != null) the exact output shape is
// computed; otherwise the rank when it can be known, with -1 dims, else an unknown shape.
#include <algorithm>
#include <cmath>

#include "core/ops/shape_util.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;
using shape_util::check_dim;
using shape_util::known_i64;
using shape_util::known_numel;
using shape_util::norm_axis;
using shape_util::rank_of;

constexpr std::initializer_list<DType> kIndexTypes = {DType::kI32, DType::kI64};

Status infer_constant(InferContext& ctx) {
  const ir::Node& n = ctx.node();
  int count = 0;
  for (const auto& a : n.attributes) {
    (void)a;
    ++count;
  }
  if (count != 1)
    return ctx.ir_error("exactly one of value, value_float(s), value_int(s), value_string(s) is required, got ",
                        count, " attributes");
  const ir::Attribute& a = n.attributes[0];
  if (a.name == "value") {
    if (!a.t.defined()) return ctx.ir_error("attribute 'value' holds no tensor");
    ctx.set_output(0, a.t.dtype(), a.t.shape());
  } else if (a.name == "value_float") {
    ctx.set_output(0, DType::kF32, {});
  } else if (a.name == "value_floats") {
    ctx.set_output(0, DType::kF32, {static_cast<int64_t>(a.floats.size())});
  } else if (a.name == "value_int") {
    ctx.set_output(0, DType::kI64, {});
  } else if (a.name == "value_ints") {
    ctx.set_output(0, DType::kI64, {static_cast<int64_t>(a.ints.size())});
  } else if (a.name == "value_string") {
    ctx.set_output(0, DType::kString, {});
  } else {  // value_strings
    ctx.set_output(0, DType::kString, {static_cast<int64_t>(a.strings.size())});
  }
  return ok_status();
}

Status infer_constant_of_shape(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 1, 1));
  DType dt = DType::kF32;
  if (const ir::Attribute* v = ctx.node().attr("value")) {
    if (!v->t.defined() || v->t.numel() != 1)
      return ctx.ir_error("attribute 'value' must be a one-element tensor");
    if (v->t.dtype() == DType::kString) return ctx.ir_error("attribute 'value' must not be a string tensor");
    dt = v->t.dtype();
  }
  if (auto dims = known_i64(ctx, 0)) {
    for (int64_t d : *dims) TSR_RETURN_IF_ERROR(check_dim(ctx, d, "input[0] (shape)"));
    ctx.set_output(0, dt, *dims);
    return ok_status();
  }
  const int64_t len = shape_util::static_len_1d(ctx, 0);
  if (len >= 0) ctx.set_output(0, dt, Shape(static_cast<size_t>(len), -1));
  else ctx.set_output_unknown_shape(0, dt);
  return ok_status();
}

// Clamps Shape's start/end per the spec: negative values count from the back, then clamp to
// [0, rank].
std::pair<int64_t, int64_t> shape_op_range(const ir::Node& n, int64_t rank) {
  int64_t start = n.attr_int("start");
  int64_t end = n.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  return {start, std::max<int64_t>(end - start, 0)};
}

Status infer_shape(InferContext& ctx) {
  const int64_t r = rank_of(ctx, 0);
  if (r < 0) {
    ctx.set_output(0, DType::kI64, {-1});
    return ok_status();
  }
  auto [start, len] = shape_op_range(ctx.node(), r);
  (void)start;
  ctx.set_output(0, DType::kI64, {len});
  return ok_status();
}

Status infer_size(InferContext& ctx) {
  ctx.set_output(0, DType::kI64, {});
  return ok_status();
}

Status infer_reshape(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, kIndexTypes));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 1, 1));
  const ValueType& in = ctx.input(0);
  const bool allowzero = ctx.node().attr_int("allowzero") != 0;
  auto target = known_i64(ctx, 1);
  if (!target) {
    const int64_t len = shape_util::static_len_1d(ctx, 1);
    if (len >= 0) ctx.set_output(0, in.dtype, Shape(static_cast<size_t>(len), -1));
    else ctx.set_output_unknown_shape(0, in.dtype);
    return ok_status();
  }
  Shape out = *target;
  int64_t infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t d = out[i];
    if (d == -1) {
      if (infer_at >= 0) return ctx.arg_error("input[1] (shape): more than one -1 in ", shape_str(*target));
      infer_at = static_cast<int64_t>(i);
    } else if (d == 0 && !allowzero) {
      if (!in.has_shape || i >= in.shape.size())
        return in.has_shape ? ctx.arg_error("input[1] (shape): 0 at position ", i, " copies a dim that input[0] ",
                                            shape_str(in.shape), " does not have")
                            : (ctx.set_output(0, in.dtype, Shape(out.size(), -1)), ok_status());
      out[i] = in.shape[i];
    } else if (d < -1) {
      return ctx.arg_error("input[1] (shape): invalid dim ", d, " in ", shape_str(*target));
    }
  }
  if (allowzero && infer_at >= 0)
    for (int64_t d : out)
      if (d == 0) return ctx.arg_error("input[1] (shape): -1 together with 0 under allowzero=1");
  const int64_t in_n = in.has_shape ? known_numel(in.shape) : -1;
  int64_t known = 1;
  bool all_known = true;
  for (size_t i = 0; i < out.size(); ++i) {
    if (static_cast<int64_t>(i) == infer_at) continue;
    if (out[i] < 0) {
      all_known = false;
    } else {
      if (out[i] > 0 && known > (int64_t{1} << 62) / out[i])
        return ctx.arg_error("input[1] (shape) ", shape_str(*target), " has too many elements");
      known *= out[i];
    }
  }
  if (infer_at >= 0) {
    if (in_n >= 0 && all_known) {
      if (known == 0 || in_n % known != 0)
        return ctx.arg_error("cannot reshape input[0] ", shape_str(in.shape), " (", in_n, " elements) to ",
                             shape_str(*target));
      out[static_cast<size_t>(infer_at)] = in_n / known;
    }
  } else if (in_n >= 0 && all_known && known != in_n) {
    return ctx.arg_error("cannot reshape input[0] ", shape_str(in.shape), " (", in_n, " elements) to ",
                         shape_str(out), " (", known, " elements)");
  }
  for (int64_t d : out) TSR_RETURN_IF_ERROR(d >= 0 ? check_dim(ctx, d, "input[1] (shape)") : ok_status());
  ctx.set_output(0, in.dtype, out);
  return ok_status();
}

Status infer_flatten(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.has_shape) {
    ctx.set_output(0, in.dtype, {-1, -1});
    return ok_status();
  }
  const auto r = static_cast<int64_t>(in.shape.size());
  int64_t axis = ctx.node().attr_int("axis");
  if (axis < -r || axis > r) return ctx.ir_error("attribute axis ", axis, " is out of range for rank ", r);
  if (axis < 0) axis += r;
  Shape a(in.shape.begin(), in.shape.begin() + axis), b(in.shape.begin() + axis, in.shape.end());
  ctx.set_output(0, in.dtype, {known_numel(a), known_numel(b)});
  return ok_status();
}

Status infer_squeeze(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  const ValueType& in = ctx.input(0);
  const int64_t r = rank_of(ctx, 0);
  if (ctx.has_input(1)) {
    auto axes = known_i64(ctx, 1);
    if (!axes || r < 0) {
      ctx.set_output_unknown_shape(0, in.dtype);
      return ok_status();
    }
    SmallVector<bool, kInlineDims> drop(static_cast<size_t>(r), false);
    for (int64_t a : *axes) {
      TSR_ASSIGN_OR_RETURN(int64_t ax, norm_axis(ctx, a, r, "input[1] (axes): axis"));
      const int64_t d = in.shape[static_cast<size_t>(ax)];
      if (d >= 0 && d != 1)
        return ctx.arg_error("input[1] (axes): axis ", a, " has size ", d, " in ", shape_str(in.shape),
                             ", expected 1");
      drop[static_cast<size_t>(ax)] = true;
    }
    Shape out;
    for (int64_t i = 0; i < r; ++i)
      if (!drop[static_cast<size_t>(i)]) out.push_back(in.shape[static_cast<size_t>(i)]);
    ctx.set_output(0, in.dtype, out);
    return ok_status();
  }
  if (r < 0) {
    ctx.set_output_unknown_shape(0, in.dtype);
    return ok_status();
  }
  Shape out;
  for (int64_t d : in.shape) {
    if (d < 0) {  // whether it is 1 decides the rank
      ctx.set_output_unknown_shape(0, in.dtype);
      return ok_status();
    }
    if (d != 1) out.push_back(d);
  }
  ctx.set_output(0, in.dtype, out);
  return ok_status();
}

Status infer_unsqueeze(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  const ValueType& in = ctx.input(0);
  const int64_t r = rank_of(ctx, 0);
  auto axes = known_i64(ctx, 1);
  if (!axes || r < 0) {
    const int64_t n = shape_util::static_len_1d(ctx, 1);
    if (r >= 0 && n >= 0) ctx.set_output(0, in.dtype, Shape(static_cast<size_t>(r + n), -1));
    else ctx.set_output_unknown_shape(0, in.dtype);
    return ok_status();
  }
  const int64_t out_r = r + static_cast<int64_t>(axes->size());
  SmallVector<bool, kInlineDims> ins(static_cast<size_t>(out_r), false);
  for (int64_t a : *axes) {
    TSR_ASSIGN_OR_RETURN(int64_t ax, norm_axis(ctx, a, out_r, "input[1] (axes): axis"));
    if (ins[static_cast<size_t>(ax)]) return ctx.arg_error("input[1] (axes): axis ", a, " repeated");
    ins[static_cast<size_t>(ax)] = true;
  }
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < out_r; ++i) out.push_back(ins[static_cast<size_t>(i)] ? 1 : in.shape[k++]);
  ctx.set_output(0, in.dtype, out);
  return ok_status();
}

Status infer_expand(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 1, 1));
  const ValueType& in = ctx.input(0);
  auto dims = known_i64(ctx, 1);
  if (!dims) {
    const int64_t n = shape_util::static_len_1d(ctx, 1);
    if (n >= 0 && in.has_shape)
      ctx.set_output(0, in.dtype, Shape(static_cast<size_t>(std::max<int64_t>(n, rank_of(ctx, 0))), -1));
    else ctx.set_output_unknown_shape(0, in.dtype);
    return ok_status();
  }
  for (int64_t d : *dims) TSR_RETURN_IF_ERROR(check_dim(ctx, d, "input[1] (shape)"));
  if (!in.has_shape) {
    ctx.set_output_unknown_shape(0, in.dtype);
    return ok_status();
  }
  auto out = broadcast_shapes(in.shape, *dims);
  if (!out.ok()) return ctx.arg_error("input[1] (shape): ", out.status().message());
  ctx.set_output(0, in.dtype, *out);
  return ok_status();
}

Status infer_tile(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 1, 1));
  const ValueType& in = ctx.input(0);
  const int64_t r = rank_of(ctx, 0);
  auto reps = known_i64(ctx, 1);
  if (r < 0) {
    ctx.set_output_unknown_shape(0, in.dtype);
    return ok_status();
  }
  if (!reps) {
    ctx.set_output(0, in.dtype, Shape(static_cast<size_t>(r), -1));
    return ok_status();
  }
  if (static_cast<int64_t>(reps->size()) != r)
    return ctx.arg_error("input[1] (repeats) has ", reps->size(), " values, expected rank ", r);
  Shape out(static_cast<size_t>(r));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t k = (*reps)[i];
    if (k < 0) return ctx.arg_error("input[1] (repeats): negative repeat ", k);
    if (k > 0 && in.shape[i] > (int64_t{1} << 48) / k)
      return ctx.arg_error("input[1] (repeats): ", k, " times dim ", in.shape[i], " is too large");
    out[i] = in.shape[i] < 0 ? -1 : in.shape[i] * k;
    if (out[i] >= 0) TSR_RETURN_IF_ERROR(check_dim(ctx, out[i], "output"));
  }
  ctx.set_output(0, in.dtype, out);
  return ok_status();
}

Status infer_range(InferContext& ctx) {
  const std::initializer_list<DType> kTypes = {DType::kF32, DType::kF64, DType::kI16, DType::kI32, DType::kI64};
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  for (size_t i = 0; i < 3; ++i) TSR_RETURN_IF_ERROR(ctx.require_rank(i, 0, 0));
  const DType dt = ctx.input(0).dtype;
  const Tensor *s = ctx.input_value(0), *l = ctx.input_value(1), *d = ctx.input_value(2);
  if (!s || !l || !d) {
    ctx.set_output(0, dt, {-1});
    return ok_status();
  }
  int64_t n = 0;
  if (dtype_is_float(dt)) {
    const double start = s->scalar_f64(), limit = l->scalar_f64(), delta = d->scalar_f64();
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
      return ctx.arg_error("start ", start, ", limit ", limit, ", delta ", delta, ": delta must be nonzero and all finite");
    const double c = std::ceil((limit - start) / delta);
    if (c > double(int64_t{1} << 48)) return ctx.arg_error("Range of ", c, " elements is too large");
    n = c > 0 ? static_cast<int64_t>(c) : 0;
  } else {
    const int64_t start = s->scalar_i64(), limit = l->scalar_i64(), delta = d->scalar_i64();
    if (delta == 0) return ctx.arg_error("delta must be nonzero");
    // Exact integer ceil-division; the span fits since the dtypes are at most 64-bit and
    // values are clamped by the range of i64 differences below.
    const long double span = static_cast<long double>(limit) - static_cast<long double>(start);
    const long double c = std::ceil(span / static_cast<long double>(delta));
    if (c > static_cast<long double>(int64_t{1} << 48)) return ctx.arg_error("Range of ", static_cast<double>(c), " elements is too large");
    n = c > 0 ? static_cast<int64_t>(c) : 0;
  }
  ctx.set_output(0, dt, {n});
  return ok_status();
}

Status infer_transpose(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  const int64_t r = rank_of(ctx, 0);
  const ir::Attribute* pa = ctx.node().attr("perm");
  if (r < 0) {
    if (pa) ctx.set_output(0, in.dtype, Shape(pa->ints.size(), -1));
    else ctx.set_output_unknown_shape(0, in.dtype);
    return ok_status();
  }
  Ints perm;
  if (pa) perm = pa->ints;
  else
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != r)
    return ctx.ir_error("attribute perm has ", perm.size(), " entries, expected rank ", r);
  SmallVector<bool, kInlineDims> seen(static_cast<size_t>(r), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[static_cast<size_t>(p)])
      return ctx.ir_error("attribute perm is not a permutation of 0..", r - 1);
    seen[static_cast<size_t>(p)] = true;
    out.push_back(in.shape[static_cast<size_t>(p)]);
  }
  ctx.set_output(0, in.dtype, out);
  return ok_status();
}

Status infer_depth_space(InferContext& ctx, bool to_space) {
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 4, 4));
  const ValueType& in = ctx.input(0);
  const int64_t b = ctx.node().attr_int("blocksize");
  if (b <= 0) return ctx.ir_error("attribute blocksize ", b, " must be positive");
  const std::string mode = ctx.node().attr_string("mode");
  if (to_space && mode != "DCR" && mode != "CRD") return ctx.ir_error("attribute mode '", mode, "', expected DCR or CRD");
  if (!in.has_shape) {
    ctx.set_output(0, in.dtype, Shape(4, -1));
    return ok_status();
  }
  const Shape& s = in.shape;
  auto div = [&](int64_t d, int64_t k, const char* what) -> Expected<int64_t> {
    if (d < 0) return int64_t{-1};
    if (d % k != 0) return ctx.arg_error("input[0] ", shape_str(s), ": ", what, " ", d, " is not divisible by ", k);
    return d / k;
  };
  auto mul = [](int64_t d, int64_t k) { return d < 0 ? int64_t{-1} : d * k; };
  Shape out;
  if (to_space) {
    TSR_ASSIGN_OR_RETURN(int64_t c, div(s[1], b * b, "channels"));
    out = {s[0], c, mul(s[2], b), mul(s[3], b)};
  } else {
    TSR_ASSIGN_OR_RETURN(int64_t h, div(s[2], b, "height"));
    TSR_ASSIGN_OR_RETURN(int64_t w, div(s[3], b, "width"));
    out = {s[0], mul(s[1], b * b), h, w};
  }
  ctx.set_output(0, in.dtype, out);
  return ok_status();
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  TSR_IF_SELECTED("Constant") r.add({"Constant", "", 13, 0, 0, 1, 1,
         {{"value", AttrKind::kTensor}, {"value_float", AttrKind::kFloat}, {"value_floats", AttrKind::kFloats},
          {"value_int", AttrKind::kInt}, {"value_ints", AttrKind::kInts}, {"value_string", AttrKind::kString},
          {"value_strings", AttrKind::kStrings}},
         infer_constant, "A constant tensor given by one attribute"});
  TSR_IF_SELECTED("ConstantOfShape") r.add({"ConstantOfShape", "", 9, 1, 1, 1, 1, {{"value", AttrKind::kTensor}}, infer_constant_of_shape,
         "A tensor of the given shape filled with one value (default f32 0)"});
  // Shape queries read only the input's shape; the views' kernels return input 0's data.
  [[maybe_unused]] const auto shape_query = [&r](OpDef d) {
    d.reads_input_shapes_only = true;
    r.add(std::move(d));
  };
  [[maybe_unused]] const auto view = [&r](OpDef d) {
    d.view_of_input0 = true;
    r.add(std::move(d));
  };
  TSR_IF_SELECTED("Shape") shape_query({"Shape", "", 15, 1, 1, 1, 1, {int_attr("start", 0), {"end", AttrKind::kInt}}, infer_shape,
               "The input's shape (dims start..end) as i64[n]"});
  TSR_IF_SELECTED("Size") shape_query({"Size", "", 13, 1, 1, 1, 1, {}, infer_size, "The input's element count as an i64 scalar"});
  TSR_IF_SELECTED("Reshape") view({"Reshape", "", 14, 2, 2, 1, 1, {int_attr("allowzero", 0)}, infer_reshape,
        "Same data, new shape (0 copies a dim unless allowzero, -1 is inferred)"});
  TSR_IF_SELECTED("Flatten") view({"Flatten", "", 13, 1, 1, 1, 1, {int_attr("axis", 1)}, infer_flatten,
        "Reshape to 2-D: dims before axis, dims from axis"});
  TSR_IF_SELECTED("Squeeze") view({"Squeeze", "", 13, 1, 2, 1, 1, {}, infer_squeeze, "Removes size-1 dims (all, or the given axes)"});
  TSR_IF_SELECTED("Unsqueeze") view({"Unsqueeze", "", 13, 2, 2, 1, 1, {}, infer_unsqueeze, "Inserts size-1 dims at the given output axes"});
  TSR_IF_SELECTED("Expand") r.add({"Expand", "", 13, 2, 2, 1, 1, {}, infer_expand, "Broadcasts the input to a shape"});
  TSR_IF_SELECTED("Tile") r.add({"Tile", "", 13, 2, 2, 1, 1, {}, infer_tile, "Repeats the input along each axis"});
  TSR_IF_SELECTED("Range") r.add({"Range", "", 11, 3, 3, 1, 1, {}, infer_range, "start, start+delta, ... up to limit (exclusive)"});
  TSR_IF_SELECTED("Transpose") r.add({"Transpose", "", 13, 1, 1, 1, 1, {{"perm", AttrKind::kInts}}, infer_transpose,
         "Permutes the axes (default: reverses them)"});
  TSR_IF_SELECTED("DepthToSpace") r.add({"DepthToSpace", "", 13, 1, 1, 1, 1, {{"blocksize", AttrKind::kInt, true}, string_attr("mode", "DCR")},
         [](InferContext& c) { return infer_depth_space(c, true); }, "NCHW channels to spatial blocks (DCR/CRD)"});
  TSR_IF_SELECTED("SpaceToDepth") r.add({"SpaceToDepth", "", 13, 1, 1, 1, 1, {{"blocksize", AttrKind::kInt, true}},
         [](InferContext& c) { return infer_depth_space(c, false); }, "NCHW spatial blocks to channels"});
}

}  // namespace tsr::ops
