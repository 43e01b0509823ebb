// The com.microsoft Gelu family (onnxruntime docs/ContribOperators.md), as BERT / GPT exports
// fused by onnxruntime's optimizer ship them. Float dtypes (f32, f64, f16, bf16); Y has X's
// shape and dtype; the optional bias is a vector [hidden] added along X's last axis.
//   com.microsoft::Gelu(X):           Y = 0.5 X (1 + erf(X / sqrt 2))
//   com.microsoft::BiasGelu(A, B):    Y = Gelu(A + B), B required
//   com.microsoft::FastGelu(X, bias?): Y = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), v = X + bias
//   com.microsoft::QuickGelu(X):      Y = X sigmoid(alpha X), alpha 1.702
// Kernels: backends/cpu/kernels/transformer_act.cpp; VJPs: core/ops/grads/transformer_act.cpp.
#include "core/ops/families/elementwise_common.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

// X float; the optional input 1 (bias) X's dtype and a vector [X.shape[-1]] (onnxruntime
// rejects any other rank: "Input 1 is expected to have 1 dimensions").
Status infer_biased_act(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ew::check_input_dtype(ctx, 0, ew::float_dtypes()));
  const ValueType& x = ctx.input(0);
  if (ctx.has_input(1)) {
    TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
    const ValueType& b = ctx.input(1);
    if (x.has_shape && x.shape.empty()) return ctx.ir_error("input[0]: rank 0, expected >= 1 with a bias");
    if (b.has_shape) {
      const int64_t h = x.has_shape ? x.shape.back() : -1;
      if (b.shape.size() != 1 || (h >= 0 && b.shape[0] >= 0 && b.shape[0] != h))
        return ctx.ir_error("input[1] (bias): shape ", shape_str(b.shape), ", expected [", h, "] (X's last dim)");
    }
  }
  ew::same_shape_output(ctx, 0, 0, x.dtype);
  return ok_status();
}

// `op`: the OpDef name, "com.microsoft::<OpType>".
void add_act(OpRegistry& r, const char* op, int min_inputs, int max_inputs, std::vector<AttrSpec> attrs,
             const char* doc) {
  OpDef d;
  d.name = op;
  d.domain = "com.microsoft";
  d.min_inputs = min_inputs;
  d.max_inputs = max_inputs;
  d.attrs = std::move(attrs);
  d.infer = infer_biased_act;
  d.doc = doc;
  d.inplace = true;  // element i reads X[i] (and bias[i % hidden]) only
  r.add(std::move(d));
}

}  // namespace

void register_transformer_act_ops(OpRegistry& r) {
  TSR_IF_SELECTED("com.microsoft::Gelu") add_act(r, "com.microsoft::Gelu", 1, 1, {}, "Y = 0.5 X (1 + erf(X / sqrt 2))");
  TSR_IF_SELECTED("com.microsoft::BiasGelu") add_act(r, "com.microsoft::BiasGelu", 2, 2, {}, "Y = Gelu(A + B), B a vector over the last axis");
  TSR_IF_SELECTED("com.microsoft::FastGelu") add_act(r, "com.microsoft::FastGelu", 1, 2, {},
                                                     "Y = tanh-approximate Gelu(X + bias), bias optional");
  TSR_IF_SELECTED("com.microsoft::QuickGelu") add_act(r, "com.microsoft::QuickGelu", 1, 1, {float_attr("alpha", 1.702)},
                                                      "Y = X * sigmoid(alpha X) (alpha 1.702)");
}

}  // namespace tsr::ops
