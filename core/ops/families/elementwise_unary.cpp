// Unary math, activations and Clip (ONNX opset-17 semantics; Gelu opset 20), and GeluGrad (domain
// tessera, Gelu's VJP). Output has the input's shape and dtype except IsNaN/IsInf (bool).
#include <string>

#include "core/ops/families/elementwise_common.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;
using namespace ew;

void add_unary(OpRegistry& r, const std::string& name, int since, std::vector<DType> allowed,
               std::string doc, std::vector<AttrSpec> attrs = {}, bool bool_out = false) {
  OpDef d;
  d.name = name;
  d.since_version = since;
  d.min_inputs = d.max_inputs = 1;
  d.attrs = std::move(attrs);
  d.doc = std::move(doc);
  d.infer = [allowed = std::move(allowed), bool_out](InferContext& ctx) -> Status {
    TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, allowed));
    same_shape_output(ctx, 0, 0, bool_out ? DType::kBool : ctx.input(0).dtype);
    return ok_status();
  };
  d.inplace = true;  // unary_kernel: y[i] from x[i]
  r.add(std::move(d));
}

// Gelu's `approximate` attribute: "none" (default, exact erf form) or "tanh".
Status check_gelu_approximate(const InferContext& ctx) {
  const std::string a = ctx.node().attr_string("approximate");
  if (a != "none" && a != "tanh") return ctx.ir_error("attribute 'approximate' is \"", a, "\", expected \"none\" or \"tanh\"");
  return ok_status();
}

}  // namespace

void register_elementwise_unary_ops(OpRegistry& r) {
  const auto& num = numeric_dtypes();
  const auto& flt = float_dtypes();
  const auto& sgn = signed_numeric_dtypes();
  TSR_IF_SELECTED("Abs") add_unary(r, "Abs", 13, num, "Y = |X|");
  TSR_IF_SELECTED("Neg") add_unary(r, "Neg", 13, sgn, "Y = -X");
  TSR_IF_SELECTED("Sign") add_unary(r, "Sign", 13, num, "Y = -1, 0 or 1 (NaN stays NaN)");
  TSR_IF_SELECTED("Reciprocal") add_unary(r, "Reciprocal", 13, flt, "Y = 1 / X");
  TSR_IF_SELECTED("Sqrt") add_unary(r, "Sqrt", 13, flt, "Y = sqrt(X)");
  TSR_IF_SELECTED("Exp") add_unary(r, "Exp", 13, flt, "Y = e^X");
  TSR_IF_SELECTED("Log") add_unary(r, "Log", 13, flt, "Y = ln(X)");
  TSR_IF_SELECTED("Ceil") add_unary(r, "Ceil", 13, flt, "Y = ceil(X)");
  TSR_IF_SELECTED("Floor") add_unary(r, "Floor", 13, flt, "Y = floor(X)");
  TSR_IF_SELECTED("Round") add_unary(r, "Round", 11, flt, "Y = X rounded to nearest, halves to even");
  TSR_IF_SELECTED("Erf") add_unary(r, "Erf", 13, flt, "Y = erf(X)");
  TSR_IF_SELECTED("Sin") add_unary(r, "Sin", 7, flt, "Y = Sin(X), radians");
  TSR_IF_SELECTED("Cos") add_unary(r, "Cos", 7, flt, "Y = Cos(X), radians");
  TSR_IF_SELECTED("Tan") add_unary(r, "Tan", 7, flt, "Y = Tan(X), radians");
  TSR_IF_SELECTED("Asin") add_unary(r, "Asin", 7, flt, "Y = Asin(X), radians");
  TSR_IF_SELECTED("Acos") add_unary(r, "Acos", 7, flt, "Y = Acos(X), radians");
  TSR_IF_SELECTED("Atan") add_unary(r, "Atan", 7, flt, "Y = Atan(X), radians");
  TSR_IF_SELECTED("Sinh") add_unary(r, "Sinh", 7, flt, "Y = Sinh(X), radians");
  TSR_IF_SELECTED("Cosh") add_unary(r, "Cosh", 7, flt, "Y = Cosh(X), radians");
  TSR_IF_SELECTED("Asinh") add_unary(r, "Asinh", 7, flt, "Y = Asinh(X), radians");
  TSR_IF_SELECTED("Acosh") add_unary(r, "Acosh", 7, flt, "Y = Acosh(X), radians");
  TSR_IF_SELECTED("Atanh") add_unary(r, "Atanh", 7, flt, "Y = Atanh(X), radians");
  TSR_IF_SELECTED("IsNaN") add_unary(r, "IsNaN", 13, flt, "Y = isnan(X) (bool)", {}, true);
  TSR_IF_SELECTED("IsInf") add_unary(r, "IsInf", 10, flt, "Y = isinf(X) filtered by detect_negative/detect_positive (bool)",
            {int_attr("detect_negative", 1), int_attr("detect_positive", 1)}, true);
  TSR_IF_SELECTED("BitwiseNot") add_unary(r, "BitwiseNot", 18, int_dtypes(), "Y = ~X");
  TSR_IF_SELECTED("Not") add_unary(r, "Not", 1, {DType::kBool}, "Y = !X");

  TSR_IF_SELECTED("Relu") add_unary(r, "Relu", 14, sgn, "Y = max(0, X)");
  TSR_IF_SELECTED("LeakyRelu") add_unary(r, "LeakyRelu", 16, flt, "Y = X < 0 ? alpha * X : X (alpha 0.01)", {float_attr("alpha", 0.01)});
  TSR_IF_SELECTED("Sigmoid") add_unary(r, "Sigmoid", 13, flt, "Y = 1 / (1 + e^-X)");
  TSR_IF_SELECTED("HardSigmoid") add_unary(r, "HardSigmoid", 6, flt, "Y = max(0, min(1, alpha * X + beta)) (alpha 0.2, beta 0.5)",
            {float_attr("alpha", 0.2), float_attr("beta", 0.5)});
  TSR_IF_SELECTED("HardSwish") add_unary(r, "HardSwish", 14, flt, "Y = X * max(0, min(1, X / 6 + 1/2))");
  TSR_IF_SELECTED("Tanh") add_unary(r, "Tanh", 13, flt, "Y = tanh(X)");
  TSR_IF_SELECTED("Elu") add_unary(r, "Elu", 6, flt, "Y = X < 0 ? alpha * (e^X - 1) : X (alpha 1)", {float_attr("alpha", 1.0)});
  TSR_IF_SELECTED("Selu") add_unary(r, "Selu", 6, flt, "Y = gamma * (X <= 0 ? alpha * (e^X - 1) : X)",
            {float_attr("alpha", 1.67326319217681884765625), float_attr("gamma", 1.05070102214813232421875)});
  TSR_IF_SELECTED("Celu") add_unary(r, "Celu", 12, flt, "Y = max(0, X) + min(0, alpha * (e^(X/alpha) - 1)) (alpha 1)", {float_attr("alpha", 1.0)});
  TSR_IF_SELECTED("Softplus") add_unary(r, "Softplus", 1, flt, "Y = ln(e^X + 1)");
  TSR_IF_SELECTED("Softsign") add_unary(r, "Softsign", 1, flt, "Y = X / (1 + |X|)");
  TSR_IF_SELECTED("ThresholdedRelu") add_unary(r, "ThresholdedRelu", 10, flt, "Y = X > alpha ? X : 0 (alpha 1)", {float_attr("alpha", 1.0)});
  TSR_IF_SELECTED("Mish") add_unary(r, "Mish", 18, flt, "Y = X * tanh(softplus(X))");
  TSR_IF_SELECTED("Shrink") add_unary(r, "Shrink", 9, num, "Y = X < -lambd ? X + bias : X > lambd ? X - bias : 0 (lambd 0.5, bias 0)",
            {float_attr("lambd", 0.5), float_attr("bias", 0.0)});

  // Gelu (ONNX opset 20): Y = X * Phi(X) = 0.5 X (1 + erf(X / sqrt 2)); approximate="tanh":
  // Y = 0.5 X (1 + tanh(sqrt(2/pi) (X + 0.044715 X^3))). Float dtypes; Y has X's shape.
  TSR_IF_SELECTED("Gelu") {
    OpDef d;
    d.name = "Gelu";
    d.since_version = 20;
    d.min_inputs = d.max_inputs = 1;
    d.attrs = {string_attr("approximate", "none")};
    d.doc = "Y = X * Phi(X) (approximate=\"none\", erf) or its tanh approximation (approximate=\"tanh\")";
    d.infer = [](InferContext& ctx) -> Status {
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, float_dtypes()));
      TSR_RETURN_IF_ERROR(check_gelu_approximate(ctx));
      same_shape_output(ctx, 0, 0, ctx.input(0).dtype);
      return ok_status();
    };
    d.inplace = true;
    r.add(std::move(d));
  }
  // GeluGrad(dY, X) -> dX (domain tessera; Gelu's VJP, core/ops/grads/elementwise_unary.cpp):
  // dX = dY * Gelu'(X) with Gelu's `approximate`. dY and X: same float dtype and shape; dX too.
  //   none: Gelu'(x) = Phi(x) + x phi(x);
  //   tanh: Gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), t = tanh(u).
  TSR_IF_SELECTED("GeluGrad") {
    OpDef d;
    d.name = "GeluGrad";
    d.domain = "tessera";
    d.min_inputs = d.max_inputs = 2;
    d.attrs = {string_attr("approximate", "none")};
    d.doc = "dX = dY * Gelu'(X) (the gradient of Gelu; same approximate attribute)";
    d.infer = [](InferContext& ctx) -> Status {
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, float_dtypes()));
      TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
      TSR_RETURN_IF_ERROR(check_gelu_approximate(ctx));
      const ValueType &dy = ctx.input(0), &x = ctx.input(1);
      if (dy.fully_known() && x.fully_known() && dy.shape != x.shape)
        return ctx.arg_error("dY ", shape_str(dy.shape), " and X ", shape_str(x.shape), " must have the same shape");
      same_shape_output(ctx, 1, 0, ctx.input(1).dtype);
      return ok_status();
    };
    d.inplace = true;  // binary_kernel
    r.add(std::move(d));
  }

  // ClipGrad(dY, X, min, max) -> dX (domain tessera; Clip's VJP for X when both bounds are
  // given, core/ops/grads/elementwise_unary.cpp): dX = (X < min || X > max) ? 0 : dY, one pass
  // instead of the compare/logic/Where chain. dY, X: same float dtype and shape (dX too); min,
  // max: scalars of that dtype. NaN in X passes dY through, as Clip passes NaN.
  TSR_IF_SELECTED("ClipGrad") {
    OpDef d;
    d.name = "ClipGrad";
    d.domain = "tessera";
    d.min_inputs = d.max_inputs = 4;
    d.doc = "dX = (X < min || X > max) ? 0 : dY (the gradient of Clip for X; min and max scalars)";
    d.infer = [](InferContext& ctx) -> Status {
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, float_dtypes()));
      for (size_t i : {size_t{0}, size_t{2}, size_t{3}}) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(1, i));
      const ValueType &dy = ctx.input(0), &x = ctx.input(1);
      if (dy.fully_known() && x.fully_known() && dy.shape != x.shape)
        return ctx.arg_error("dY ", shape_str(dy.shape), " and X ", shape_str(x.shape), " must have the same shape");
      for (size_t i = 2; i < 4; ++i) {
        const ValueType& t = ctx.input(i);
        if (t.has_shape && t.fully_known() && shape_numel(t.shape) != 1)
          return ctx.arg_error("input[", i, "] (", i == 2 ? "min" : "max", ") must be a scalar, got shape ", shape_str(t.shape));
      }
      same_shape_output(ctx, 1, 0, ctx.input(1).dtype);
      return ok_status();
    };
    d.inplace = true;  // binary_apply: element i of dX depends only on element i of dY and X
    r.add(std::move(d));
  }

  TSR_IF_SELECTED("Clip") {
    OpDef clip;
    clip.name = "Clip";
    clip.since_version = 13;
    clip.min_inputs = 1;
    clip.max_inputs = 3;
    clip.doc = "Y = min(max(X, min), max); min/max are optional scalar inputs (NaN in X stays NaN)";
    clip.inplace = true;  // min and max are read before X is clipped
    clip.infer = [](InferContext& ctx) -> Status {
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, numeric_dtypes()));
      for (size_t i = 1; i < 3; ++i) {
        if (!ctx.has_input(i)) continue;
        TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
        const ValueType& t = ctx.input(i);
        if (t.has_shape && t.fully_known() && shape_numel(t.shape) != 1)
          return ctx.arg_error("input[", i, "] (", i == 1 ? "min" : "max", ") must be a scalar, got shape ", shape_str(t.shape));
      }
      same_shape_output(ctx, 0, 0, ctx.input(0).dtype);
      return ok_status();
    };
    r.add(std::move(clip));
  }
}

}  // namespace tsr::ops
