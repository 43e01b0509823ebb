// Sequence and optional ops (ONNX opset 11–17): values of kind kSequence / kNone
// (core/tensor/tensor.h). SequenceMap runs a body graph and lives with the control-flow ops.
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

ValueType seq_of(DType d, bool has_shape = false, Shape s = {}) { return {d, has_shape, std::move(s), ValueKind::kSequence}; }

Status require_kind(const InferContext& ctx, size_t i, ValueKind k) {
  if (!ctx.has_input(i)) return ok_status();
  const ValueKind got = ctx.input(i).kind;
  if (got == k || got == ValueKind::kNone) return ok_status();
  // Types may be unknown at load time (kTensor is the default): only a runtime mismatch is sure.
  if (!ctx.runtime() && k == ValueKind::kSequence) return ok_status();
  return ctx.arg_error("input[", i, "]: a ", value_kind_name(got), ", expected a ", value_kind_name(k));
}

Status require_position(const InferContext& ctx, size_t i) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(i, {DType::kI32, DType::kI64}));
  if (ctx.has_input(i) && ctx.input(i).has_shape && !ctx.input(i).shape.empty() &&
      !(ctx.input(i).shape.size() == 1 && ctx.input(i).shape[0] == 1))
    return ctx.arg_error("input[", i, "] (position) must be a scalar");
  return ok_status();
}

Status infer_sequence_empty(InferContext& ctx) {
  const int64_t d = ctx.node().attr_int("dtype", static_cast<int64_t>(DType::kF32));
  if (!dtype_valid(static_cast<int>(d))) return ctx.ir_error("attribute 'dtype' = ", d, " is not a dtype");
  ctx.output(0) = seq_of(static_cast<DType>(d));
  return ok_status();
}

Status infer_sequence_construct(InferContext& ctx) {
  for (size_t i = 1; i < ctx.num_inputs(); ++i) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
  ValueType t = ctx.input(0);
  for (size_t i = 1; i < ctx.num_inputs() && t.has_shape; ++i)
    if (!ctx.input(i).has_shape || ctx.input(i).shape != t.shape) t.has_shape = false;
  ctx.output(0) = seq_of(t.dtype, t.has_shape, t.has_shape ? t.shape : Shape{});
  return ok_status();
}

Status infer_sequence_insert(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(require_kind(ctx, 0, ValueKind::kSequence));
  TSR_RETURN_IF_ERROR(require_position(ctx, 2));
  const DType d = ctx.input(0).dtype != DType::kUndefined ? ctx.input(0).dtype : ctx.input(1).dtype;
  if (ctx.input(0).dtype != DType::kUndefined && ctx.input(1).dtype != DType::kUndefined && ctx.input(0).dtype != ctx.input(1).dtype)
    return ctx.arg_error("input[1]: dtype ", dtype_name(ctx.input(1).dtype), ", the sequence holds ", dtype_name(ctx.input(0).dtype));
  ctx.output(0) = seq_of(d);
  return ok_status();
}

Status infer_sequence_at(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(require_kind(ctx, 0, ValueKind::kSequence));
  TSR_RETURN_IF_ERROR(require_position(ctx, 1));
  ctx.output(0) = ValueType{ctx.input(0).dtype, ctx.input(0).has_shape, ctx.input(0).shape};
  return ok_status();
}

Status infer_sequence_erase(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(require_kind(ctx, 0, ValueKind::kSequence));
  TSR_RETURN_IF_ERROR(require_position(ctx, 1));
  ctx.output(0) = seq_of(ctx.input(0).dtype, ctx.input(0).has_shape, ctx.input(0).shape);
  return ok_status();
}

Status infer_sequence_length(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(require_kind(ctx, 0, ValueKind::kSequence));
  ctx.set_output(0, DType::kI64, {});
  return ok_status();
}

Status infer_split_to_sequence(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI32, DType::kI64}));
  ctx.output(0) = seq_of(ctx.input(0).dtype);
  return ok_status();
}

Status infer_concat_from_sequence(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(require_kind(ctx, 0, ValueKind::kSequence));
  if (!ctx.node().attr("axis")) return ctx.ir_error("missing required attribute 'axis'");
  ctx.set_output_unknown_shape(0, ctx.input(0).dtype);
  return ok_status();
}

Status infer_optional(InferContext& ctx) {
  if (ctx.has_input(0)) {
    ctx.output(0) = ctx.input(0);
    return ok_status();
  }
  const ir::Attribute* type = ctx.node().attr("type");
  if (!type) return ctx.ir_error("Optional without an input needs the 'type' attribute");
  // The importer stores the element type as "tensor:<dtype>" or "sequence:<dtype>".
  const bool seq = type->s.rfind("sequence:", 0) == 0;
  const DType d = dtype_from_name(type->s.substr(type->s.find(':') + 1));
  ctx.output(0) = ValueType{d, false, {}, seq ? ValueKind::kSequence : ValueKind::kTensor};
  return ok_status();
}

Status infer_optional_has_element(InferContext& ctx) {
  ctx.set_output(0, DType::kBool, {});
  return ok_status();
}

Status infer_optional_get_element(InferContext& ctx) {
  ValueType t = ctx.input(0);
  if (t.kind == ValueKind::kNone) {
    if (ctx.runtime()) return ctx.arg_error("input[0]: the optional is empty");
    t.kind = ValueKind::kTensor;
  }
  ctx.output(0) = t;
  return ok_status();
}

}  // namespace

void register_sequence_ops(OpRegistry& reg) {
  // Every op here takes sequence / optional values.
  AnyValueKindAdder r(reg);
  TSR_IF_SELECTED("SequenceEmpty") r.add(OpDef{"SequenceEmpty", "", 11, 0, 0, 1, 1, {{"dtype", AttrKind::kInt}}, infer_sequence_empty, "An empty sequence"});
  TSR_IF_SELECTED("SequenceConstruct") r.add(OpDef{"SequenceConstruct", "", 11, 1, -1, 1, 1, {}, infer_sequence_construct, "A sequence of the input tensors"});
  TSR_IF_SELECTED("SequenceInsert") r.add(OpDef{"SequenceInsert", "", 11, 2, 3, 1, 1, {}, infer_sequence_insert, "Inserts a tensor at a position (default: end)"});
  TSR_IF_SELECTED("SequenceAt") r.add(OpDef{"SequenceAt", "", 11, 2, 2, 1, 1, {}, infer_sequence_at, "The tensor at a position (negative counts from the end)"});
  TSR_IF_SELECTED("SequenceErase") r.add(OpDef{"SequenceErase", "", 11, 1, 2, 1, 1, {}, infer_sequence_erase, "Removes the tensor at a position (default: last)"});
  TSR_IF_SELECTED("SequenceLength") r.add(OpDef{"SequenceLength", "", 11, 1, 1, 1, 1, {}, infer_sequence_length, "Number of tensors in a sequence (i64 scalar)"});
  TSR_IF_SELECTED("SplitToSequence") r.add(OpDef{"SplitToSequence", "", 11, 1, 2, 1, 1, {int_attr("axis", 0), int_attr("keepdims", 1)},
              infer_split_to_sequence, "Splits a tensor along an axis into a sequence"});
  TSR_IF_SELECTED("ConcatFromSequence") r.add(OpDef{"ConcatFromSequence", "", 11, 1, 1, 1, 1, {{"axis", AttrKind::kInt, true}, int_attr("new_axis", 0)},
              infer_concat_from_sequence, "Concatenates (or stacks, new_axis=1) a sequence's tensors"});
  TSR_IF_SELECTED("Optional") r.add(OpDef{"Optional", "", 15, 0, 1, 1, 1, {{"type", AttrKind::kString}}, infer_optional,
              "An optional holding the input, or an empty optional of the given type"});
  TSR_IF_SELECTED("OptionalHasElement") r.add(OpDef{"OptionalHasElement", "", 18, 0, 1, 1, 1, {}, infer_optional_has_element, "Whether an optional holds a value"});
  TSR_IF_SELECTED("OptionalGetElement") r.add(OpDef{"OptionalGetElement", "", 18, 1, 1, 1, 1, {}, infer_optional_get_element, "The value an optional holds"});
}

}  // namespace tsr::ops
