// Optimizer update ops (ONNX ai.onnx.preview.training opset 1): Adagrad, Momentum (standard and
// Nesterov), Adam; and Tessera's AdamW (PyTorch's update rule). Each updates n tensors at once:
//   Adagrad:  (R, T, X[n], G[n], H[n])        -> (X_new[n], H_new[n])
//   Momentum: (R, T, X[n], G[n], V[n])        -> (X_new[n], V_new[n])
//   Adam:     (R, T, X[n], G[n], V[n], H[n])  -> (X_new[n], V_new[n], H_new[n])
// R is the learning rate (float scalar), T the update count (i64 scalar). Update rules: see the
// kernels (backends/cpu/kernels/optimizer.cpp) and https://onnx.ai/onnx/operators/ (Adam:
// Kingma & Ba 2015; Adagrad: Duchi et al. 2011; Nesterov momentum: Sutskever et al. 2013).
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

// `state` = number of per-tensor state inputs (Adagrad/Momentum 1, Adam 2).
Status infer_optimizer(InferContext& ctx, size_t state) {
  const size_t groups = 2 + state;  // X, G, states
  const size_t rest = ctx.num_inputs() - 2;
  if (ctx.num_inputs() < 2 + groups || rest % groups != 0)
    return ctx.ir_error(ctx.num_inputs(), " inputs: expected R, T and ", groups, " equal groups (X, G and ", state, " state tensor(s) each)");
  const size_t n = rest / groups;
  if (ctx.num_outputs() != n * (1 + state))
    return ctx.ir_error(ctx.num_outputs(), " outputs, expected ", n * (1 + state), " (updated X and state for ", n, " tensors)");
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  for (size_t i = 0; i < n; ++i) {
    const size_t x = 2 + i;
    TSR_RETURN_IF_ERROR(ctx.require_dtype(x, {DType::kF32, DType::kF64}));
    for (size_t g = 1; g < groups; ++g) {
      const size_t k = 2 + g * n + i;
      TSR_RETURN_IF_ERROR(ctx.require_same_dtype(x, k));
      const ValueType& a = ctx.input(x);
      const ValueType& b = ctx.input(k);
      if (a.has_shape && b.has_shape && a.shape.size() == b.shape.size()) {
        for (size_t d = 0; d < a.shape.size(); ++d)
          if (a.shape[d] >= 0 && b.shape[d] >= 0 && a.shape[d] != b.shape[d])
            return ctx.arg_error("input[", k, "]: shape ", shape_str(b.shape), " differs from X[", i, "] ", shape_str(a.shape));
      }
    }
    for (size_t s = 0; s <= state; ++s) ctx.output(s * n + i) = ctx.input(x);
  }
  return ok_status();
}

}  // namespace

void register_optimizer_ops(OpRegistry& r) {
  const std::string domain = "ai.onnx.preview.training";
  TSR_IF_SELECTED("Adagrad") r.add(OpDef{"Adagrad", domain, 1, 5, -1, 2, -1,
              {float_attr("decay_factor", 0.0), float_attr("epsilon", 1e-6), float_attr("norm_coefficient", 0.0)},
              [](InferContext& c) { return infer_optimizer(c, 1); }, "Adagrad update of n tensors"});
  TSR_IF_SELECTED("Momentum") r.add(OpDef{"Momentum", domain, 1, 5, -1, 2, -1,
              {{"alpha", AttrKind::kFloat, true}, {"beta", AttrKind::kFloat, true}, {"mode", AttrKind::kString, true},
               {"norm_coefficient", AttrKind::kFloat, true}},
              [](InferContext& c) { return infer_optimizer(c, 1); }, "SGD with momentum (standard or Nesterov) of n tensors"});
  TSR_IF_SELECTED("Adam") r.add(OpDef{"Adam", domain, 1, 6, -1, 3, -1,
              {float_attr("alpha", 0.9), float_attr("beta", 0.999), float_attr("epsilon", 1e-6),
               float_attr("norm_coefficient", 0.0), float_attr("norm_coefficient_post", 0.0)},
              [](InferContext& c) { return infer_optimizer(c, 2); }, "Adam update of n tensors (norm_coefficient_post = AdamW-style decay)"});
  // Tessera's AdamW, PyTorch semantics (torch.optim.AdamW; Loshchilov & Hutter 2019, decoupled
  // weight decay): (R, T, X[n], G[n], M[n], V[n]) -> (X'[n], M'[n], V'[n]) with T the number of
  // this update (1 for the first). weight_decay = 0 gives torch.optim.Adam.
  TSR_IF_SELECTED("AdamW") r.add(OpDef{"AdamW", "tessera", 1, 6, -1, 3, -1,
              {float_attr("beta1", 0.9), float_attr("beta2", 0.999), float_attr("epsilon", 1e-8),
               float_attr("weight_decay", 0.0)},
              [](InferContext& c) { return infer_optimizer(c, 2); }, "AdamW (PyTorch semantics) update of n tensors"});
}

}  // namespace tsr::ops
