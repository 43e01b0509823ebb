// FusedElementwise (domain "tessera"): a tree of f32 elementwise ops run as one kernel, made by
// the optimizer from chains of ONNX elementwise ops; the program format is core/ops/
// fused_elementwise.h.
#include "core/ops/families/elementwise_common.h"
#include "core/ops/fused_elementwise.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

Status infer_fused_elementwise(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.ir_error("input[", i, "] is omitted: every input of FusedElementwise is read");
    TSR_RETURN_IF_ERROR(ctx.require_dtype(i, {DType::kF32}));
  }
  // The program is checked once, at load; the kernel parsed it when it was created.
  if (!ctx.runtime())
    TSR_RETURN_IF_ERROR(ew_program_of(ctx.node(), ctx.place(), static_cast<int>(ctx.num_inputs())).status());
  return ew::infer_broadcast(ctx, 0, ctx.num_inputs(), DType::kF32);
}

}  // namespace

void register_fused_elementwise_ops(OpRegistry& r) {
  TSR_IF_SELECTED("FusedElementwise") r.add({"FusedElementwise", "tessera", 1, 1, EwProgram::kMaxInputs, 1, 1,
         {{"ops", AttrKind::kStrings, true}, {"args", AttrKind::kInts, true}, {"immediates", AttrKind::kFloats}},
         infer_fused_elementwise,
         "a tree of f32 elementwise ops (Add, Mul, Clip, Sigmoid, ...) evaluated in one pass over the output "
         "(made by the optimizer)"});
}

}  // namespace tsr::ops
