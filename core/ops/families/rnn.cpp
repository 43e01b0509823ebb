// Recurrent ops: RNN, GRU, LSTM (ONNX opset 14 semantics, incl. `layout`).
//
// Shapes (layout 0; layout 1 swaps the seq and batch axes of X, Y, and puts batch first in
// initial_h/initial_c/Y_h/Y_c):
//   X [seq, batch, input]; W [dirs, G*hidden, input]; R [dirs, G*hidden, hidden];
//   B [dirs, 2*G*hidden]; sequence_lens [batch] (i32); initial_h/initial_c [dirs, batch, hidden];
//   LSTM P [dirs, 3*hidden];  Y [seq, dirs, batch, hidden]; Y_h / Y_c [dirs, batch, hidden].
// G = 1 (RNN), 3 (GRU, gates z r h), 4 (LSTM, gates i o f c); dirs = 2 for bidirectional.
// Source: https://onnx.ai/onnx/operators/onnx__LSTM.html (and __GRU, __RNN).
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

Status infer_recurrent(InferContext& ctx, int gates) {
  const auto& node = ctx.node();
  const std::string direction = node.attr_string("direction");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ctx.ir_error("attribute 'direction' is \"", direction, "\", expected forward, reverse or bidirectional");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t layout = node.attr_int("layout");
  if (layout != 0 && layout != 1) return ctx.ir_error("attribute 'layout' must be 0 or 1");
  for (size_t i : {0, 1, 2}) TSR_RETURN_IF_ERROR(ctx.require_dtype(i, {DType::kF32, DType::kF64}));
  for (size_t i = 1; i < ctx.num_inputs(); ++i)
    if (i != 4) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(4, {DType::kI32}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 3, 3));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 3, 3));
  TSR_RETURN_IF_ERROR(ctx.require_rank(2, 3, 3));
  int64_t hidden = node.attr_int("hidden_size", -1);
  const ValueType& w = ctx.input(1);
  if (w.has_shape) {
    if (w.shape[0] >= 0 && w.shape[0] != dirs)
      return ctx.arg_error("input[1] (W): dim 0 is ", w.shape[0], ", expected ", dirs, " for direction ", direction);
    if (w.shape[1] >= 0) {
      if (w.shape[1] % gates != 0) return ctx.arg_error("input[1] (W): dim 1 (", w.shape[1], ") is not a multiple of ", gates);
      if (hidden < 0) hidden = w.shape[1] / gates;
      else if (w.shape[1] != gates * hidden)
        return ctx.arg_error("input[1] (W): dim 1 is ", w.shape[1], ", expected ", gates, " * hidden_size = ", gates * hidden);
    }
  }
  const ValueType& x = ctx.input(0);
  int64_t seq = -1, batch = -1;
  if (x.has_shape) {
    seq = x.shape[layout == 0 ? 0 : 1];
    batch = x.shape[layout == 0 ? 1 : 0];
    if (w.has_shape && w.shape[2] >= 0 && x.shape[2] >= 0 && w.shape[2] != x.shape[2])
      return ctx.arg_error("input[1] (W): dim 2 is ", w.shape[2], ", but X has input size ", x.shape[2]);
  }
  const DType t = x.dtype;
  const Shape y = layout == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden};
  const Shape yh = layout == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
  if (ctx.num_outputs() > 0) ctx.set_output(0, t, y);
  for (size_t k = 1; k < ctx.num_outputs(); ++k) ctx.set_output(k, t, yh);
  return ok_status();
}

std::vector<AttrSpec> recurrent_attrs(bool lstm, bool gru) {
  std::vector<AttrSpec> a = {{"activation_alpha", AttrKind::kFloats}, {"activation_beta", AttrKind::kFloats},
                             {"activations", AttrKind::kStrings},     {"clip", AttrKind::kFloat},
                             string_attr("direction", "forward"),      {"hidden_size", AttrKind::kInt},
                             int_attr("layout", 0)};
  if (lstm) a.push_back(int_attr("input_forget", 0));
  if (gru) a.push_back(int_attr("linear_before_reset", 0));
  return a;
}

}  // namespace

void register_rnn_ops(OpRegistry& r) {
  TSR_IF_SELECTED("RNN") r.add(OpDef{"RNN", "", 14, 3, 6, 0, 2, recurrent_attrs(false, false),
              [](InferContext& c) { return infer_recurrent(c, 1); }, "Elman recurrent network (Ht = f(X W^T + H R^T + b))"});
  TSR_IF_SELECTED("GRU") r.add(OpDef{"GRU", "", 14, 3, 6, 0, 2, recurrent_attrs(false, true),
              [](InferContext& c) { return infer_recurrent(c, 3); }, "Gated recurrent unit"});
  TSR_IF_SELECTED("LSTM") r.add(OpDef{"LSTM", "", 14, 3, 8, 0, 3, recurrent_attrs(true, false),
              [](InferContext& c) { return infer_recurrent(c, 4); }, "Long short-term memory"});
}

}  // namespace tsr::ops
