// Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX opset 13).
//
// Shapes: scores/input [N, C] or [N, C, d1, ..., dk]; target [N] or [N, d1, ..., dk] (i32/i64);
// weight [C] (optional). reduction "none" gives [N, d1, ..., dk]; "sum"/"mean" give a scalar.
// SoftmaxCrossEntropyLoss's optional second output is log_prob = LogSoftmax(scores, axis=1),
// shaped like scores. Source: https://onnx.ai/onnx/operators/onnx__NegativeLogLikelihoodLoss.html
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

Status infer_loss(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI32, DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(ctx.require_rank(2, 1, 1));
  const std::string reduction = ctx.node().attr_string("reduction");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.ir_error("attribute 'reduction' is \"", reduction, "\", expected none, sum or mean");
  const ValueType& x = ctx.input(0);
  const ValueType& t = ctx.input(1);
  if (x.has_shape && x.shape.size() < 2) return ctx.arg_error("input[0]: rank ", x.shape.size(), ", expected >= 2 ([N, C, ...])");
  if (x.has_shape && t.has_shape) {
    if (t.shape.size() + 1 != x.shape.size())
      return ctx.arg_error("input[1]: rank ", t.shape.size(), ", expected ", x.shape.size() - 1, " (the scores' rank without C)");
    for (size_t d = 0; d < t.shape.size(); ++d) {
      const int64_t a = t.shape[d], b = x.shape[d == 0 ? 0 : d + 1];
      if (a >= 0 && b >= 0 && a != b)
        return ctx.arg_error("input[1]: shape ", shape_str(t.shape), " does not match scores ", shape_str(x.shape));
    }
  }
  if (reduction == "none") {
    if (t.has_shape) ctx.set_output(0, x.dtype, t.shape);
    else ctx.set_output_unknown_shape(0, x.dtype);
  } else {
    ctx.set_output(0, x.dtype, {});
  }
  if (ctx.num_outputs() > 1) ctx.output(1) = x;
  return ok_status();
}

std::vector<AttrSpec> loss_attrs() { return {{"ignore_index", AttrKind::kInt}, string_attr("reduction", "mean")}; }

// NegativeLogLikelihoodLossGrad / SoftmaxCrossEntropyLossGrad (tessera): the VJPs of the two
// losses with respect to input[0] (core/ops/grads/loss.cpp); labels and weights get none.
//   inputs:  dLoss (T; the loss output's shape: [N, d1, ..., dk] for reduction "none", else a
//            scalar), X (T, [N, C, d1, ..., dk]: the forward's log-probabilities / scores),
//            target (i32/i64, [N, d1, ..., dk]), weight (optional, T, [C]).
//   attrs:   ignore_index, reduction: the forward node's.
//   output:  dX (T, X's shape).
// With w_n = weight[target_n] (0 where target_n = ignore_index) and c_n = w_n * dLoss_n ("none"),
// w_n * dLoss ("sum"), w_n * dLoss / sum(w) ("mean"; 0 when sum(w) = 0):
//   NLL:  dX[n, k] = -c_n * [k = target_n];
//   SCE:  dX[n, k] = c_n * (softmax(X)[n, k] - [k = target_n])   (softmax over C, recomputed).
Status infer_loss_grad(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kI32, DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(1, 3));
  const ValueType& x = ctx.input(1);
  if (x.has_shape && x.shape.size() < 2) return ctx.arg_error("input[1]: rank ", x.shape.size(), ", expected >= 2 ([N, C, ...])");
  ctx.output(0) = x;
  return ok_status();
}

}  // namespace

void register_loss_ops(OpRegistry& r) {
  TSR_IF_SELECTED("NegativeLogLikelihoodLoss") r.add(OpDef{"NegativeLogLikelihoodLoss", "", 13, 2, 3, 1, 1, loss_attrs(), infer_loss,
              "loss = -input[n, target[n, d], d] * weight[target], reduced by none/sum/mean"});
  TSR_IF_SELECTED("SoftmaxCrossEntropyLoss") r.add(OpDef{"SoftmaxCrossEntropyLoss", "", 13, 2, 3, 1, 2, loss_attrs(), infer_loss,
              "NegativeLogLikelihoodLoss of LogSoftmax(scores, axis=1); optional log_prob output"});
  TSR_IF_SELECTED("NegativeLogLikelihoodLossGrad") r.add(OpDef{"NegativeLogLikelihoodLossGrad", "tessera", 1, 3, 4, 1, 1, loss_attrs(), infer_loss_grad,
              "VJP of NegativeLogLikelihoodLoss with respect to its input"});
  TSR_IF_SELECTED("SoftmaxCrossEntropyLossGrad") r.add(OpDef{"SoftmaxCrossEntropyLossGrad", "tessera", 1, 3, 4, 1, 1, loss_attrs(), infer_loss_grad,
              "VJP of SoftmaxCrossEntropyLoss with respect to the scores"});
}

}  // namespace tsr::ops
