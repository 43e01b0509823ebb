// Data-movement ops (ONNX opset 17): Concat, Split, Slice, Pad, Trilu, ReverseSequence, CumSum.
#include <algorithm>

#include "core/ops/shape_util.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;
using shape_util::check_dim;
using shape_util::known_i64;
using shape_util::norm_axis;
using shape_util::rank_of;

constexpr std::initializer_list<DType> kIndexTypes = {DType::kI32, DType::kI64};

Status infer_concat(InferContext& ctx) {
  const ir::Attribute* aa = ctx.node().attr("axis");
  if (!aa) return ctx.ir_error("missing required attribute 'axis'");
  const size_t n = ctx.num_inputs();
  int64_t r = -1;
  DType dt = DType::kUndefined;
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.has_input(i)) return ctx.ir_error("input[", i, "] is omitted");
    const ValueType& t = ctx.input(i);
    if (dt == DType::kUndefined) dt = t.dtype;
    else if (t.dtype != DType::kUndefined && t.dtype != dt)
      return ctx.ir_error("input[", i, "]: dtype ", dtype_name(t.dtype), ", expected ", dtype_name(dt));
    if (!t.has_shape) continue;
    const auto ri = static_cast<int64_t>(t.shape.size());
    if (r < 0) r = ri;
    else if (ri != r)
      return ctx.arg_error("input[", i, "]: rank ", ri, " ", shape_str(t.shape), ", expected rank ", r);
  }
  if (r < 0) {
    ctx.set_output_unknown_shape(0, dt);
    return ok_status();
  }
  if (r == 0) return ctx.arg_error("cannot concatenate scalars");
  TSR_ASSIGN_OR_RETURN(int64_t axis, norm_axis(ctx, aa->i, r, "attribute axis"));
  Shape out(static_cast<size_t>(r), -1);
  int64_t sum = 0;
  bool sum_known = true;
  for (size_t i = 0; i < n; ++i) {
    const ValueType& t = ctx.input(i);
    if (!t.has_shape) {
      sum_known = false;
      continue;
    }
    for (int64_t d = 0; d < r; ++d) {
      const int64_t v = t.shape[static_cast<size_t>(d)];
      if (d == axis) {
        if (v < 0) sum_known = false;
        else sum += v;
        continue;
      }
      int64_t& o = out[static_cast<size_t>(d)];
      if (v < 0) continue;
      if (o >= 0 && o != v)
        return ctx.arg_error("input[", i, "]: shape ", shape_str(t.shape), " differs in dim ", d, " (", v,
                             " vs ", o, ") outside the concat axis ", axis);
      o = v;
    }
  }
  out[static_cast<size_t>(axis)] = sum_known ? sum : -1;
  ctx.set_output(0, dt, out);
  return ok_status();
}

Status infer_split(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  const ValueType& in = ctx.input(0);
  const size_t nout = ctx.num_outputs();
  const int64_t r = rank_of(ctx, 0);
  if (r < 0) {
    for (size_t k = 0; k < nout; ++k) ctx.set_output_unknown_shape(k, in.dtype);
    return ok_status();
  }
  TSR_ASSIGN_OR_RETURN(int64_t axis, norm_axis(ctx, ctx.node().attr_int("axis"), r, "attribute axis"));
  const int64_t d = in.shape[static_cast<size_t>(axis)];
  Ints sizes;
  if (ctx.has_input(1)) {
    if (auto s = known_i64(ctx, 1)) {
      sizes = *s;
      if (sizes.size() != nout)
        return ctx.arg_error("input[1] (split) has ", sizes.size(), " values for ", nout, " outputs");
      int64_t sum = 0;
      for (int64_t v : sizes) {
        if (v < 0) return ctx.arg_error("input[1] (split): negative size ", v);
        sum += v;
      }
      if (d >= 0 && sum != d)
        return ctx.arg_error("input[1] (split) sums to ", sum, ", but input[0] ", shape_str(in.shape), " has ", d,
                             " along axis ", axis);
    }
  } else if (d >= 0) {
    const int64_t k = static_cast<int64_t>(nout);
    if (ctx.node().attr("num_outputs")) {  // opset 18: the last chunk may be smaller
      const int64_t chunk = (d + k - 1) / k;
      for (int64_t i = 0; i < k; ++i) sizes.push_back(std::clamp<int64_t>(d - i * chunk, 0, chunk));
    } else {
      if (d % k != 0)
        return ctx.arg_error("input[0] ", shape_str(in.shape), " has ", d, " along axis ", axis,
                             ", not divisible into ", k, " equal outputs");
      sizes.assign(nout, d / k);
    }
  }
  for (size_t k = 0; k < nout; ++k) {
    Shape s = in.shape;
    s[static_cast<size_t>(axis)] = sizes.empty() ? -1 : sizes[k];
    ctx.set_output(k, in.dtype, s);
  }
  return ok_status();
}

Status infer_slice(InferContext& ctx) {
  for (size_t i = 1; i < 5; ++i) {
    TSR_RETURN_IF_ERROR(ctx.require_dtype(i, kIndexTypes));
    TSR_RETURN_IF_ERROR(ctx.require_rank(i, 1, 1));
  }
  const ValueType& in = ctx.input(0);
  const int64_t r = rank_of(ctx, 0);
  if (r < 0) {
    ctx.set_output_unknown_shape(0, in.dtype);
    return ok_status();
  }
  auto starts = known_i64(ctx, 1), ends = known_i64(ctx, 2);
  auto axes = ctx.has_input(3) ? known_i64(ctx, 3) : std::optional<Ints>(Ints{});
  auto steps = ctx.has_input(4) ? known_i64(ctx, 4) : std::optional<Ints>(Ints{});
  if (!axes) {  // which axes change is unknown
    ctx.set_output(0, in.dtype, Shape(static_cast<size_t>(r), -1));
    return ok_status();
  }
  if (!starts || !ends || !steps) {
    Shape out = in.shape;
    if (axes->empty()) {
      const int64_t n = shape_util::static_len_1d(ctx, 1);
      for (int64_t i = 0; i < r; ++i)
        if (n < 0 || i < n) out[static_cast<size_t>(i)] = -1;
    }
    for (int64_t a : *axes)
      if (a >= -r && a < r) out[static_cast<size_t>(a < 0 ? a + r : a)] = -1;
    ctx.set_output(0, in.dtype, out);
    return ok_status();
  }
  // Dynamic dims: compute with a placeholder and mark the affected axes unknown afterwards.
  Shape dims = in.shape;
  for (int64_t& d : dims)
    if (d < 0) d = 0;
  auto p = shape_util::slice_params(dims, *starts, *ends, *axes, *steps);
  if (!p.ok()) return ctx.arg_error(p.status().message());
  Shape out = p->count;
  for (size_t i = 0; i < out.size(); ++i)
    if (in.shape[i] < 0) out[i] = -1;
  ctx.set_output(0, in.dtype, out);
  return ok_status();
}

// SliceGrad(dY, shape, starts, ends[, axes, steps]) -> dX (domain tessera; f32/f64): the adjoint
// of Slice. dX has `shape` (i64[r], the forward input's shape) and is zero except at the
// positions Slice(·, starts, ends, axes, steps) reads, which receive dY (whose shape must be the
// slice's). The slice inputs have Slice's semantics (negative steps, clamping); every step is
// handled, and Slice's positions are distinct, so this is a plain strided write.
Status infer_slice_grad(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64}));
  for (size_t i = 2; i < 6; ++i) {
    TSR_RETURN_IF_ERROR(ctx.require_dtype(i, kIndexTypes));
    TSR_RETURN_IF_ERROR(ctx.require_rank(i, 1, 1));
  }
  TSR_RETURN_IF_ERROR(shape_util::set_output_from_shape_input(ctx, ctx.input(0).dtype, 1));
  const ValueType& out = ctx.output(0);
  const ValueType& dy = ctx.input(0);
  auto starts = known_i64(ctx, 2), ends = known_i64(ctx, 3);
  auto axes = ctx.has_input(4) ? known_i64(ctx, 4) : std::optional<Ints>(Ints{});
  auto steps = ctx.has_input(5) ? known_i64(ctx, 5) : std::optional<Ints>(Ints{});
  if (!out.fully_known() || !dy.has_shape || !starts || !ends || !axes || !steps) return ok_status();
  auto p = shape_util::slice_params(out.shape, *starts, *ends, *axes, *steps);
  if (!p.ok()) return ctx.arg_error(p.status().message());
  bool match = p->count.size() == dy.shape.size();
  for (size_t i = 0; match && i < dy.shape.size(); ++i) match = dy.shape[i] < 0 || dy.shape[i] == p->count[i];
  if (!match)
    return ctx.arg_error("input[0] (dY) ", shape_str(dy.shape), " is not the slice shape ", shape_str(p->count),
                         " of ", shape_str(out.shape));
  return ok_status();
}

Status infer_pad(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 1, 1));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  const ValueType& in = ctx.input(0);
  const std::string mode = ctx.node().attr_string("mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return ctx.ir_error("attribute mode '", mode, "', expected constant, reflect or edge");
  if (ctx.has_input(3)) return ctx.ir_error("input[3] (axes) is opset 18 and not supported");
  const int64_t r = rank_of(ctx, 0);
  if (r < 0) {
    ctx.set_output_unknown_shape(0, in.dtype);
    return ok_status();
  }
  auto pads = known_i64(ctx, 1);
  if (!pads) {
    ctx.set_output(0, in.dtype, Shape(static_cast<size_t>(r), -1));
    return ok_status();
  }
  if (static_cast<int64_t>(pads->size()) != 2 * r)
    return ctx.arg_error("input[1] (pads) has ", pads->size(), " values, expected 2 * rank = ", 2 * r);
  Shape out(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) {
    const int64_t d = in.shape[static_cast<size_t>(i)];
    const int64_t b = (*pads)[static_cast<size_t>(i)], e = (*pads)[static_cast<size_t>(i + r)];
    constexpr int64_t kLim = int64_t{1} << 48;
    if (b < -kLim || b > kLim || e < -kLim || e > kLim)
      return ctx.arg_error("input[1] (pads): ", b, ", ", e, " on axis ", i, " are too large");
    if (d < 0) {
      out[static_cast<size_t>(i)] = -1;
      continue;
    }
    const int64_t o = d + b + e;
    if (o < 0) return ctx.arg_error("input[1] (pads) crops axis ", i, " of size ", d, " below zero");
    TSR_RETURN_IF_ERROR(check_dim(ctx, o, "output"));
    if (mode != "constant" && d == 0 && o > 0)
      return ctx.arg_error("mode '", mode, "' cannot pad the empty axis ", i);
    if (mode == "reflect" && d > 1 && (b > d - 1 || e > d - 1))
      return ctx.arg_error("mode 'reflect': pads ", b, ", ", e, " on axis ", i, " of size ", d,
                           " exceed size - 1");
    out[static_cast<size_t>(i)] = o;
  }
  ctx.set_output(0, in.dtype, out);
  return ok_status();
}

// PadGrad(dY, pads, shape) -> dX (domain tessera; f32/f64; attribute mode "reflect" or "edge"):
// the adjoint of Pad in those modes. dX has `shape` (i64[r], the forward input's shape); each dY
// element is added to the input element Pad(·, pads, mode) copied it from, so border elements
// collect every reflected/replicated copy. (Constant mode needs no op: its adjoint is a Pad.)
Status infer_pad_grad(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 1, 1));
  const std::string mode = ctx.node().attr_string("mode");
  if (mode != "reflect" && mode != "edge") return ctx.ir_error("attribute mode '", mode, "', expected reflect or edge");
  TSR_RETURN_IF_ERROR(shape_util::set_output_from_shape_input(ctx, ctx.input(0).dtype, 2));
  const ValueType& out = ctx.output(0);
  const ValueType& dy = ctx.input(0);
  const auto pads = known_i64(ctx, 1);
  if (!out.fully_known() || !dy.has_shape || !pads) return ok_status();
  const size_t r = out.shape.size();
  bool match = pads->size() == 2 * r && dy.shape.size() == r;
  for (size_t i = 0; match && i < r; ++i)
    match = dy.shape[i] < 0 || dy.shape[i] == out.shape[i] + (*pads)[i] + (*pads)[i + r];
  if (!match)
    return ctx.arg_error("input[0] (dY) ", shape_str(dy.shape), " is not ", shape_str(out.shape), " padded by input[1]");
  return ok_status();
}

Status infer_trilu(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 0, 0));
  const ValueType& in = ctx.input(0);
  if (in.dtype == DType::kString) return ctx.ir_error("input[0]: string tensors are not supported");
  if (in.has_shape && in.shape.size() < 2)
    return ctx.arg_error("input[0]: rank ", in.shape.size(), ", expected at least 2");
  ctx.output(0) = in;
  return ok_status();
}

Status infer_reverse_sequence(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 2, 64));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 1, 1));
  const ValueType& in = ctx.input(0);
  const int64_t b = ctx.node().attr_int("batch_axis"), t = ctx.node().attr_int("time_axis");
  if (!((b == 0 && t == 1) || (b == 1 && t == 0)))
    return ctx.ir_error("batch_axis ", b, " and time_axis ", t, " must be 0 and 1 in some order");
  if (in.has_shape && ctx.input(1).has_shape) {
    const int64_t nb = in.shape[static_cast<size_t>(b)], nl = ctx.input(1).shape[0];
    if (nb >= 0 && nl >= 0 && nb != nl)
      return ctx.arg_error("input[1] (sequence_lens) has ", nl, " values, expected batch size ", nb);
  }
  ctx.output(0) = in;
  return ok_status();
}

Status infer_cumsum(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32,
                                            DType::kI64, DType::kU32, DType::kU64}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, kIndexTypes));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 0, 1));
  const ValueType& in = ctx.input(0);
  if (const Tensor* a = ctx.input_value(1); a && in.has_shape) {
    if (a->numel() != 1) return ctx.arg_error("input[1] (axis) must hold one value");
    TSR_RETURN_IF_ERROR(norm_axis(ctx, a->scalar_i64(), rank_of(ctx, 0), "input[1] (axis)").status());
  }
  ctx.output(0) = in;
  return ok_status();
}

}  // namespace

void register_tensor_ops_ops(OpRegistry& r) {
  TSR_IF_SELECTED("Concat") r.add({"Concat", "", 13, 1, -1, 1, 1, {{"axis", AttrKind::kInt, true}}, infer_concat,
         "Joins tensors along an axis"});
  TSR_IF_SELECTED("Split") r.add({"Split", "", 13, 1, 2, 1, -1, {int_attr("axis", 0), {"num_outputs", AttrKind::kInt}}, infer_split,
         "Splits a tensor along an axis (sizes input, or equal parts)"});
  TSR_IF_SELECTED("Slice") r.add({"Slice", "", 13, 3, 5, 1, 1, {}, infer_slice,
         "Strided slice: starts, ends, axes, steps inputs (negative steps, clamped)"});
  TSR_IF_SELECTED("Pad") r.add({"Pad", "", 13, 2, 4, 1, 1, {string_attr("mode", "constant")}, infer_pad,
         "Pads (or crops) each axis: modes constant, reflect, edge"});
  TSR_IF_SELECTED("PadGrad") r.add({"PadGrad", "tessera", 1, 3, 3, 1, 1, {{"mode", AttrKind::kString, true}}, infer_pad_grad,
         "Adjoint of Pad in reflect/edge mode: dY summed back onto the elements it copies"});
  TSR_IF_SELECTED("Trilu") r.add({"Trilu", "", 14, 1, 2, 1, 1, {int_attr("upper", 1)}, infer_trilu,
         "Keeps the upper or lower triangle (diagonal offset k) of the last two dims"});
  TSR_IF_SELECTED("ReverseSequence") r.add({"ReverseSequence", "", 10, 2, 2, 1, 1, {int_attr("batch_axis", 1), int_attr("time_axis", 0)},
         infer_reverse_sequence, "Reverses the first sequence_lens[b] steps of each batch entry"});
  TSR_IF_SELECTED("CumSum") r.add({"CumSum", "", 14, 2, 2, 1, 1, {int_attr("exclusive", 0), int_attr("reverse", 0)}, infer_cumsum,
         "Cumulative sum along an axis (exclusive, reverse)"});
  TSR_IF_SELECTED("SliceGrad") r.add({"SliceGrad", "tessera", 1, 4, 6, 1, 1, {}, infer_slice_grad,
         "Adjoint of Slice: dY written into zeros of the given shape at the sliced positions"});
}

}  // namespace tsr::ops
