// Reductions (ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare) and ArgMax/ArgMin,
// ONNX opset-17 semantics. All Reduce* ops accept the axes either as the opset-17 attribute or
// as the optional int64 input[1] (ReduceSum's opset-13 form, which opset 18 extends to all);
// giving both is an error. Empty axes reduce every dim unless noop_with_empty_axes=1.
#include <algorithm>
#include <string>

#include "core/ops/families/elementwise_common.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;
using namespace ew;

Status infer_reduce(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, numeric_dtypes()));
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, {DType::kI64}));
  const ir::Node& node = ctx.node();
  const bool keepdims = node.attr_int("keepdims") != 0;
  const bool noop = node.attr_int("noop_with_empty_axes") != 0;
  const DType dt = ctx.input(0).dtype;
  const ValueType& x = ctx.input(0);
  Ints axes;
  const bool attr_axes = node.attr("axes") != nullptr;
  if (ctx.has_input(1)) {
    if (attr_axes) return ctx.ir_error("axes given both as attribute and as input[1]");
    const Tensor* v = ctx.input_value(1);
    if (!v) {
      // Axes known only at run time: the rank survives with keepdims, nothing else is known.
      if (keepdims && x.has_shape) ctx.set_output(0, dt, Shape(x.shape.size(), -1));
      else ctx.set_output_unknown_shape(0, dt);
      return ok_status();
    }
    if (v->rank() > 1) return ctx.arg_error("input[1] (axes) must be 1-D, got shape ", shape_str(v->shape()));
    axes = v->to_shape();
  } else if (attr_axes) {
    axes = node.attr_ints("axes");
  }
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, dt);
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (axes.empty()) {
    if (noop) {
      ctx.set_output(0, dt, x.shape);
      return ok_status();
    }
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  SmallVector<bool, kInlineDims> red(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    auto n = normalize_axis(a, rank);
    if (!n.ok()) return ctx.arg_error("axes: ", n.status().message());
    if (rank == 0) continue;  // reducing a scalar over axis 0/-1 is the identity
    if (red[static_cast<size_t>(*n)]) return ctx.arg_error("axes: axis ", a, " is repeated");
    red[static_cast<size_t>(*n)] = true;
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!red[static_cast<size_t>(d)]) out.push_back(x.shape[static_cast<size_t>(d)]);
    else if (keepdims) out.push_back(1);
  }
  ctx.set_output(0, dt, std::move(out));
  return ok_status();
}

Status infer_arg(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, numeric_dtypes()));
  const ValueType& x = ctx.input(0);
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, DType::kI64);
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return ctx.arg_error("input[0] must have rank >= 1");
  auto axis = normalize_axis(ctx.node().attr_int("axis"), rank);
  if (!axis.ok()) return ctx.arg_error("attribute 'axis': ", axis.status().message());
  if (x.shape[static_cast<size_t>(*axis)] == 0)
    return ctx.arg_error("cannot take ", ctx.node().op, " over axis ", *axis, " of size 0 (shape ", shape_str(x.shape), ")");
  Shape out = x.shape;
  if (ctx.node().attr_int("keepdims") != 0) out[static_cast<size_t>(*axis)] = 1;
  else out.erase(out.begin() + *axis);
  ctx.set_output(0, DType::kI64, std::move(out));
  return ok_status();
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  const auto add_reduce = [&r](const char* name, const char* doc) {
    OpDef d;
    d.name = name;
    d.since_version = 13;
    d.min_inputs = 1;
    d.max_inputs = 2;
    d.attrs = {{"axes", AttrKind::kInts, false},
               int_attr("keepdims", 1),
               int_attr("noop_with_empty_axes", 0)};
    d.infer = &infer_reduce;
    d.doc = doc;
    r.add(std::move(d));
  };
  TSR_IF_SELECTED("ReduceSum") add_reduce("ReduceSum", "sum over axes");
  TSR_IF_SELECTED("ReduceMean") add_reduce("ReduceMean", "mean over axes (integers: truncating division; empty: 0, as onnxruntime)");
  TSR_IF_SELECTED("ReduceMax") add_reduce("ReduceMax", "maximum over axes (NaN propagates; empty: -inf / lowest)");
  TSR_IF_SELECTED("ReduceMin") add_reduce("ReduceMin", "minimum over axes (NaN propagates; empty: +inf / max)");
  TSR_IF_SELECTED("ReduceProd") add_reduce("ReduceProd", "product over axes");
  TSR_IF_SELECTED("ReduceL1") add_reduce("ReduceL1", "sum of |x| over axes");
  TSR_IF_SELECTED("ReduceL2") add_reduce("ReduceL2", "sqrt(sum of x^2) over axes");
  TSR_IF_SELECTED("ReduceLogSum") add_reduce("ReduceLogSum", "log(sum of x) over axes");
  TSR_IF_SELECTED("ReduceLogSumExp")
  add_reduce("ReduceLogSumExp", "log(sum of e^x) over axes, computed as max + log(sum e^(x - max))");
  TSR_IF_SELECTED("ReduceSumSquare") add_reduce("ReduceSumSquare", "sum of x^2 over axes");
  const auto add_arg = [&r](const char* name, const char* what) {
    OpDef d;
    d.name = name;
    d.since_version = 13;
    d.min_inputs = d.max_inputs = 1;
    d.attrs = {int_attr("axis", 0), int_attr("keepdims", 1), int_attr("select_last_index", 0)};
    d.infer = &infer_arg;
    d.doc = std::string("int64 index of the ") + what + " along axis (first occurrence unless select_last_index=1)";
    r.add(std::move(d));
  };
  TSR_IF_SELECTED("ArgMax") add_arg("ArgMax", "maximum");
  TSR_IF_SELECTED("ArgMin") add_arg("ArgMin", "minimum");
}

}  // namespace tsr::ops
