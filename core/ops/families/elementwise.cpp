// Binary arithmetic, comparison/logic, Where, variadic Max/Min/Sum/Mean and Cast/CastLike
// (ONNX opset-17 semantics, multidirectional broadcasting as in the ONNX "Broadcasting" doc).
#include <string>

#include "core/ops/families/elementwise_common.h"

namespace tsr::ops {
namespace ew {

const std::vector<DType>& numeric_dtypes() {
  static const std::vector<DType> k = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                       DType::kI8,  DType::kU8,  DType::kI16, DType::kU16,
                                       DType::kI32, DType::kI64, DType::kU32, DType::kU64};
  return k;
}
const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> k = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
  return k;
}
const std::vector<DType>& int_dtypes() {
  static const std::vector<DType> k = {DType::kI8, DType::kU8,  DType::kI16, DType::kU16,
                                       DType::kI32, DType::kI64, DType::kU32, DType::kU64};
  return k;
}
const std::vector<DType>& signed_numeric_dtypes() {
  static const std::vector<DType> k = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                       DType::kI8,  DType::kI16, DType::kI32, DType::kI64};
  return k;
}

Status check_input_dtype(const InferContext& ctx, size_t i, std::span<const DType> allowed) {
  if (!ctx.has_input(i)) return ok_status();
  const DType d = ctx.input(i).dtype;
  if (d == DType::kUndefined) return ok_status();
  for (DType a : allowed)
    if (a == d) return ok_status();
  std::string list;
  for (DType a : allowed) list += str_cat(list.empty() ? "" : ", ", dtype_name(a));
  return ctx.ir_error("input[", i, "]: dtype ", dtype_name(d), " is not supported by ",
                      ctx.node().op, " (expected one of {", list, "})");
}

Status infer_broadcast(InferContext& ctx, size_t first, size_t count, DType dtype) {
  Shape out;
  bool started = false;
  size_t first_idx = first;
  for (size_t i = first; i < first + count && i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const ValueType& t = ctx.input(i);
    if (!t.has_shape) {
      ctx.set_output_unknown_shape(0, dtype);
      return ok_status();
    }
    if (!started) {
      out = t.shape;
      started = true;
      first_idx = i;
      continue;
    }
    if (t.shape == out) continue;  // the common case, checked first: it allocates nothing
    auto b = broadcast_shapes(out, t.shape);
    if (!b.ok())
      return ctx.arg_error("input[", i, "] ", shape_str(t.shape), " does not broadcast with ",
                           i == first_idx + 1 ? str_cat("input[", first_idx, "] ") : std::string("the other inputs "),
                           shape_str(out), ": ", b.status().message());
    out = std::move(b).value();
  }
  ctx.set_output(0, dtype, std::move(out));
  return ok_status();
}

void same_shape_output(InferContext& ctx, size_t in, size_t out, DType dtype) {
  const ValueType& t = ctx.input(in);
  if (t.has_shape) ctx.set_output(out, dtype, t.shape);
  else ctx.set_output_unknown_shape(out, dtype);
}

}  // namespace ew

namespace {

using namespace ew;

using ir::AttrKind;

std::vector<DType> with_bool(std::vector<DType> v) {
  v.push_back(DType::kBool);
  return v;
}

// Checks an op's attributes against its input types beyond what AttrSpec expresses.
using AttrCheck = Status (*)(const InferContext& ctx);

// A binary op whose two inputs share one dtype from `allowed`; output is that dtype or bool.
void add_binary(OpRegistry& r, const std::string& name, int since, std::vector<DType> allowed,
                bool bool_out, std::string doc, std::vector<AttrSpec> attrs = {}, AttrCheck check = nullptr) {
  OpDef d;
  d.name = name;
  d.since_version = since;
  d.min_inputs = d.max_inputs = 2;
  d.attrs = std::move(attrs);
  d.doc = std::move(doc);
  d.infer = [allowed = std::move(allowed), bool_out, check](InferContext& ctx) -> Status {
    TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, allowed));
    TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
    DType t = ctx.input(0).dtype;
    if (t == DType::kUndefined) t = ctx.input(1).dtype;
    if (bool_out) t = DType::kBool;
    if (check) TSR_RETURN_IF_ERROR(check(ctx));
    return infer_broadcast(ctx, 0, 2, t);
  };
  d.inplace = true;  // binary_kernel: C may alias a full-shaped A or B
  r.add(std::move(d));
}

// Max/Min/Sum/Mean: 1..N inputs of one dtype, broadcast together.
void add_variadic(OpRegistry& r, const std::string& name, std::vector<DType> allowed, std::string doc) {
  OpDef d;
  d.name = name;
  d.since_version = 13;
  d.min_inputs = 1;
  d.max_inputs = -1;
  d.doc = std::move(doc);
  d.infer = [allowed = std::move(allowed)](InferContext& ctx) -> Status {
    DType t = DType::kUndefined;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i)) return ctx.ir_error("input[", i, "] is omitted; ", ctx.node().op, " has no optional inputs");
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, i, allowed));
      const DType di = ctx.input(i).dtype;
      if (di == DType::kUndefined) continue;
      if (t == DType::kUndefined) t = di;
      else if (di != t)
        return ctx.ir_error("input[", i, "]: dtype ", dtype_name(di), ", expected ", dtype_name(t),
                            " (all inputs must share one dtype)");
    }
    return infer_broadcast(ctx, 0, ctx.num_inputs(), t);
  };
  d.inplace = true;  // folds input 0 with 1, then the result with the rest: 0 and 1 may alias
  r.add(std::move(d));
}

// Cast targets this runtime supports (every dtype, string included).
bool cast_target_ok(DType t) { return t != DType::kUndefined; }

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  using namespace ew;
  const auto& num = numeric_dtypes();
  TSR_IF_SELECTED("Add") add_binary(r, "Add", 14, num, false, "C = A + B (broadcasting; integers wrap)");
  TSR_IF_SELECTED("Sub") add_binary(r, "Sub", 14, num, false, "C = A - B (broadcasting; integers wrap)");
  TSR_IF_SELECTED("Mul") add_binary(r, "Mul", 14, num, false, "C = A * B (broadcasting; integers wrap)");
  TSR_IF_SELECTED("Div") add_binary(r, "Div", 14, num, false, "C = A / B (broadcasting; integer division truncates toward zero)");
  TSR_IF_SELECTED("Mod") add_binary(r, "Mod", 13, num, false, "C = A mod B: sign of B (fmod=0, integers) or C fmod (fmod=1)",
             {int_attr("fmod", 0)}, [](const InferContext& ctx) -> Status {
               if (dtype_is_float(ctx.input(0).dtype) && ctx.node().attr_int("fmod") == 0)
                 return ctx.ir_error("Mod on ", dtype_name(ctx.input(0).dtype), " requires fmod=1 (ONNX Mod spec)");
               return ok_status();
             });
  TSR_IF_SELECTED("BitShift") add_binary(r, "BitShift", 11, {DType::kU8, DType::kU16, DType::kU32, DType::kU64}, false,
             "C = A << B or A >> B (direction LEFT/RIGHT); shifts >= the bit width give 0",
             {{"direction", AttrKind::kString, true}}, [](const InferContext& ctx) -> Status {
               const std::string dir = ctx.node().attr_string("direction");
               if (dir != "LEFT" && dir != "RIGHT")
                 return ctx.ir_error("attribute 'direction' is \"", dir, "\", expected \"LEFT\" or \"RIGHT\"");
               return ok_status();
             });
  TSR_IF_SELECTED("BitwiseAnd") add_binary(r, "BitwiseAnd", 18, int_dtypes(), false, "C = A & B");
  TSR_IF_SELECTED("BitwiseOr") add_binary(r, "BitwiseOr", 18, int_dtypes(), false, "C = A | B");
  TSR_IF_SELECTED("BitwiseXor") add_binary(r, "BitwiseXor", 18, int_dtypes(), false, "C = A ^ B");
  TSR_IF_SELECTED("Equal") add_binary(r, "Equal", 13, with_bool(num), true, "C = (A == B)");
  TSR_IF_SELECTED("Greater") add_binary(r, "Greater", 13, num, true, "C = (A > B)");
  TSR_IF_SELECTED("Less") add_binary(r, "Less", 13, num, true, "C = (A < B)");
  TSR_IF_SELECTED("GreaterOrEqual") add_binary(r, "GreaterOrEqual", 16, num, true, "C = (A >= B)");
  TSR_IF_SELECTED("LessOrEqual") add_binary(r, "LessOrEqual", 16, num, true, "C = (A <= B)");
  TSR_IF_SELECTED("And") add_binary(r, "And", 7, {DType::kBool}, true, "C = A && B");
  TSR_IF_SELECTED("Or") add_binary(r, "Or", 7, {DType::kBool}, true, "C = A || B");
  TSR_IF_SELECTED("Xor") add_binary(r, "Xor", 7, {DType::kBool}, true, "C = A != B");

  TSR_IF_SELECTED("PRelu") {
    OpDef d;
    d.name = "PRelu";
    d.since_version = 16;
    d.min_inputs = d.max_inputs = 2;
    d.doc = "Y = X < 0 ? slope * X : X (slope broadcasts to X)";
    d.infer = [](InferContext& ctx) -> Status {
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, numeric_dtypes()));
      TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
      TSR_RETURN_IF_ERROR(infer_broadcast(ctx, 0, 2, ctx.input(0).dtype));
      const ValueType& x = ctx.input(0);
      const ValueType& y = ctx.output(0);
      // Unidirectional: the slope must not grow X.
      if (x.has_shape && y.has_shape && y.fully_known() && ValueType::make(x.dtype, x.shape).fully_known() && y.shape != x.shape)
        return ctx.arg_error("slope ", shape_str(ctx.input(1).shape), " does not broadcast to X ", shape_str(x.shape));
      if (x.has_shape) ctx.set_output(0, x.dtype, x.shape);
      return ok_status();
    };
    d.inplace = true;
    r.add(std::move(d));
  }
  TSR_IF_SELECTED("Pow") {
    OpDef d;
    d.name = "Pow";
    d.since_version = 15;
    d.min_inputs = d.max_inputs = 2;
    d.doc = "Z = X ^ Y (X: f16/bf16/f32/f64/i32/i64; Y any numeric dtype; Z has X's dtype)";
    d.infer = [](InferContext& ctx) -> Status {
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64}));
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, numeric_dtypes()));
      return infer_broadcast(ctx, 0, 2, ctx.input(0).dtype);
    };
    d.inplace = true;
    r.add(std::move(d));
  }
  TSR_IF_SELECTED("Where") {
    OpDef d;
    d.name = "Where";
    d.since_version = 16;
    d.min_inputs = d.max_inputs = 3;
    d.doc = "output = condition ? X : Y (three-way broadcasting)";
    d.infer = [](InferContext& ctx) -> Status {
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, {DType::kBool}));
      TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, with_bool(numeric_dtypes())));
      TSR_RETURN_IF_ERROR(ctx.require_same_dtype(1, 2));
      DType t = ctx.input(1).dtype;
      if (t == DType::kUndefined) t = ctx.input(2).dtype;
      return infer_broadcast(ctx, 0, 3, t);
    };
    r.add(std::move(d));
  }
  TSR_IF_SELECTED("Max") add_variadic(r, "Max", num, "elementwise maximum of 1..N inputs (NaN propagates, as np.maximum)");
  TSR_IF_SELECTED("Min") add_variadic(r, "Min", num, "elementwise minimum of 1..N inputs (NaN propagates, as np.minimum)");
  TSR_IF_SELECTED("Sum") add_variadic(r, "Sum", num, "elementwise sum of 1..N inputs");
  TSR_IF_SELECTED("Mean") add_variadic(r, "Mean", num, "elementwise mean of 1..N inputs");

  TSR_IF_SELECTED("Cast") {
    OpDef d;
    d.name = "Cast";
    d.since_version = 13;
    d.min_inputs = d.max_inputs = 1;
    d.attrs = {{"to", AttrKind::kInt, true}};
    d.doc = "Y = X converted to dtype `to` (float->int truncates toward zero; NaN/out of range is undefined in ONNX, see kernel; numbers <-> strings as numpy's str() / strtod)";
    d.infer = [](InferContext& ctx) -> Status {
      const int64_t to = ctx.node().attr_int("to");
      if (to < 0 || to > 255 || !dtype_valid(static_cast<int>(to)) || !cast_target_ok(static_cast<DType>(to)))
        return ctx.ir_error("attribute 'to' = ", to, " is not a supported dtype");
      same_shape_output(ctx, 0, 0, static_cast<DType>(to));
      return ok_status();
    };
    r.add(std::move(d));
  }
  TSR_IF_SELECTED("CastLike") {
    OpDef d;
    d.name = "CastLike";
    d.since_version = 15;
    d.min_inputs = d.max_inputs = 2;
    d.doc = "Y = input converted to the dtype of target_type";
    d.infer = [](InferContext& ctx) -> Status {
      same_shape_output(ctx, 0, 0, ctx.input(1).dtype);
      return ok_status();
    };
    r.add(std::move(d));
  }
}

}  // namespace tsr::ops
