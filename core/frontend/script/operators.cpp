// Operators on script values: Python semantics on host values, ONNX ops on tensors. A host
// number meeting a tensor takes the tensor's dtype (as PyTorch treats Python scalars).
#include <cmath>

#include "core/frontend/script/interpreter.h"

namespace tsr::frontend::script {
namespace {

using K = ScriptValue::Kind;

// Shape and leaf values of a nested list of host numbers; false with a message on ragged input.
bool literal_shape(const ScriptValue& v, size_t depth, Shape* shape, std::vector<const ScriptValue*>* leaves,
                   std::string* why) {
  if (!v.is_sequence()) {
    if (!v.is_number()) {
      *why = str_cat("tensor literals hold numbers, not ", kind_name(v.kind),
                     v.is_tensor() ? " (use concat(...) to join tensors)" : "");
      return false;
    }
    if (depth != shape->size()) {
      *why = "ragged nested list";
      return false;
    }
    leaves->push_back(&v);
    return true;
  }
  const auto n = static_cast<int64_t>(v.items->size());
  if (depth == shape->size()) {
    if (!leaves->empty()) {
      *why = "ragged nested list";
      return false;
    }
    shape->push_back(n);
  } else if (depth > shape->size() || (*shape)[depth] != n) {
    *why = "ragged nested list";
    return false;
  }
  for (const ScriptValue& item : *v.items)
    if (!literal_shape(item, depth + 1, shape, leaves, why)) return false;
  return true;
}

}  // namespace

// Builds a host tensor from a number or nested list. dtype kUndefined: f32 if any float, bool if
// all bools, else i64 (torch.tensor's rule).
Expected<Tensor> make_literal(const ScriptValue& v, DType dtype) {
  Shape shape;
  std::vector<const ScriptValue*> leaves;
  std::string why;
  if (!literal_shape(v, 0, &shape, &leaves, &why)) return invalid_argument(why);
  if (dtype == DType::kUndefined) {
    bool any_float = false, all_bool = !leaves.empty();
    for (const ScriptValue* l : leaves) {
      any_float |= l->kind == K::kFloat;
      all_bool &= l->kind == K::kBool;
    }
    dtype = any_float ? DType::kF32 : all_bool ? DType::kBool : DType::kI64;
  }
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(dtype, shape));
  const bool ok = dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mut_data<T>();
    for (size_t k = 0; k < leaves.size(); ++k) {
      const ScriptValue& l = *leaves[k];
      if constexpr (std::is_same_v<T, Half>) p[k] = Half{f32_to_f16(static_cast<float>(l.as_double()))};
      else if constexpr (std::is_same_v<T, BFloat16>) p[k] = BFloat16{f32_to_bf16(static_cast<float>(l.as_double()))};
      else if constexpr (std::is_floating_point_v<T>) p[k] = static_cast<T>(l.as_double());
      else if constexpr (std::is_same_v<T, bool>) p[k] = l.as_double() != 0;
      else p[k] = l.kind == K::kFloat ? static_cast<T>(l.f) : static_cast<T>(l.as_int());
    }
  });
  if (!ok) return unsupported("cannot make a ", dtype_name(dtype), " tensor literal");
  return t;
}

Expected<ops::Value> Interpreter::as_tensor(const ScriptValue& v, DType like, Loc loc) {
  if (v.is_tensor()) {
    if (v.owner == id_) return v.v;
    if (!outer_ || v.owner != outer_->id_) return error(loc, "internal error: a tensor of another interpreter");
    auto it = imported_.find({v.owner, v.v.id});
    if (it != imported_.end()) return it->second;
    const Tensor* t = outer_->em_->known_value(v.v);
    if (!t) return error(loc, "a @static function can only read global tensors whose values are known");
    const ops::Value c = target_.emitter().constant(*t);
    imported_[{v.owner, v.v.id}] = c;
    return c;
  }
  if (v.kind == K::kUndefined) return error(loc, v.s);
  if (!v.is_number() && !v.is_sequence())
    return error(loc, str_cat("expected a tensor or a number, got ", kind_name(v.kind)));
  DType d = DType::kUndefined;
  if (like != DType::kUndefined && like != DType::kString) {
    // A float host value does not become an integer tensor: the op then reports the mismatch.
    const bool has_float = v.kind == K::kFloat;
    d = has_float && !dtype_is_float(like) ? DType::kF32 : like;
    if (v.kind == K::kBool && like != DType::kBool && !v.is_sequence()) d = like;
  }
  auto t = make_literal(v, d);
  if (!t.ok()) return error(loc, t.status().message());
  return em_->constant(std::move(t).value());
}

Expected<ops::Value> Interpreter::to_bool_scalar(ops::Value v, Loc loc) {
  const ops::ValueType t = em_->type(v);
  if (t.has_shape) {
    bool known = true;
    int64_t n = 1;
    for (int64_t d : t.shape) {
      known &= d >= 0;
      n *= d < 0 ? 1 : d;
    }
    if (!known || n != 1)
      return error(loc, str_cat("a condition must be a one-element tensor, got ", t.str()));
  }
  if (t.dtype != DType::kBool) {
    TSR_ASSIGN_OR_RETURN(v, emit1("Cast", {v}, loc, {ir::Attribute::make_int("to", static_cast<int64_t>(DType::kBool))}));
  }
  if (!t.has_shape || !t.shape.empty()) {
    const ops::Value shape = em_->constant(Tensor::from<int64_t>({0}, {}));
    TSR_ASSIGN_OR_RETURN(v, emit1("Reshape", {v, shape}, loc));
  }
  return v;
}

namespace {

Expected<ScriptValue> host_binary(BinOp op, const ScriptValue& a, const ScriptValue& b) {
  const bool ints = a.kind != K::kFloat && b.kind != K::kFloat;
  if (ints) {
    const int64_t x = a.as_int(), y = b.as_int();
    // Script ints are 64-bit (not Python's unbounded ints): overflow is an error, never wraps.
    int64_t r = 0;
    const auto overflow = [&] { return invalid_argument("integer overflow: the result does not fit in 64 bits"); };
    switch (op) {
      case BinOp::kAdd:
        if (__builtin_add_overflow(x, y, &r)) return overflow();
        return ScriptValue::integer(r);
      case BinOp::kSub:
        if (__builtin_sub_overflow(x, y, &r)) return overflow();
        return ScriptValue::integer(r);
      case BinOp::kMul:
        if (__builtin_mul_overflow(x, y, &r)) return overflow();
        return ScriptValue::integer(r);
      case BinOp::kDiv:
        if (y == 0) return invalid_argument("division by zero");
        return ScriptValue::real(static_cast<double>(x) / static_cast<double>(y));
      case BinOp::kFloorDiv:
      case BinOp::kMod: {
        if (y == 0) return invalid_argument("integer division or modulo by zero");
        if (y == -1) {  // x / -1 overflows for INT64_MIN; x % -1 is 0
          if (op == BinOp::kMod) return ScriptValue::integer(0);
          if (__builtin_sub_overflow(int64_t{0}, x, &r)) return overflow();
          return ScriptValue::integer(r);
        }
        int64_t q = x / y;
        r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {
          --q;
          r += y;
        }
        return ScriptValue::integer(op == BinOp::kFloorDiv ? q : r);
      }
      case BinOp::kPow: {
        if (y < 0) return ScriptValue::real(std::pow(static_cast<double>(x), static_cast<double>(y)));
        // Exponentiation by squaring: O(log y) steps, each checked for overflow.
        int64_t result = 1, base = x, e = y;
        while (e > 0) {
          if ((e & 1) && __builtin_mul_overflow(result, base, &result)) return overflow();
          e >>= 1;
          if (e > 0 && __builtin_mul_overflow(base, base, &base)) return overflow();
        }
        return ScriptValue::integer(result);
      }
      case BinOp::kMatMul: break;
    }
    return unsupported("'@' needs tensors");
  }
  const double x = a.as_double(), y = b.as_double();
  switch (op) {
    case BinOp::kAdd: return ScriptValue::real(x + y);
    case BinOp::kSub: return ScriptValue::real(x - y);
    case BinOp::kMul: return ScriptValue::real(x * y);
    case BinOp::kDiv:
      if (y == 0) return invalid_argument("float division by zero");
      return ScriptValue::real(x / y);
    case BinOp::kFloorDiv:
      if (y == 0) return invalid_argument("float floor division by zero");
      return ScriptValue::real(std::floor(x / y));
    case BinOp::kMod:
      if (y == 0) return invalid_argument("float modulo by zero");
      return ScriptValue::real(x - std::floor(x / y) * y);
    case BinOp::kPow: return ScriptValue::real(std::pow(x, y));
    case BinOp::kMatMul: break;
  }
  return unsupported("'@' needs tensors");
}

}  // namespace

Expected<ScriptValue> Interpreter::binary(BinOp op, const ScriptValue& a, const ScriptValue& b, Loc loc) {
  if (a.is_number() && b.is_number()) {
    auto r = host_binary(op, a, b);
    if (!r.ok()) return error(loc, r.status().message());
    return r;
  }
  if (op == BinOp::kAdd && a.kind == b.kind && (a.kind == K::kString)) return ScriptValue::string(a.s + b.s);
  if (op == BinOp::kAdd && a.kind == b.kind && a.is_sequence()) {
    ValueList items = *a.items;
    items.insert(items.end(), b.items->begin(), b.items->end());
    return ScriptValue::tuple(std::move(items), a.kind);
  }
  if (!a.is_tensor() && !b.is_tensor())
    return error(loc, str_cat("unsupported operand types for ", bin_op_text(op), ": ", kind_name(a.kind), " and ",
                              kind_name(b.kind)));
  const DType like = a.is_tensor() ? em_->type(a.v).dtype : em_->type(b.v).dtype;
  TSR_ASSIGN_OR_RETURN(ops::Value x, as_tensor(a, like, loc));
  TSR_ASSIGN_OR_RETURN(ops::Value y, as_tensor(b, like, loc));
  const bool fl = dtype_is_float(em_->type(x).dtype);
  ops::Value r;
  switch (op) {
    case BinOp::kAdd: { TSR_ASSIGN_OR_RETURN(r, emit1("Add", {x, y}, loc)); break; }
    case BinOp::kSub: { TSR_ASSIGN_OR_RETURN(r, emit1("Sub", {x, y}, loc)); break; }
    case BinOp::kMul: { TSR_ASSIGN_OR_RETURN(r, emit1("Mul", {x, y}, loc)); break; }
    case BinOp::kDiv: { TSR_ASSIGN_OR_RETURN(r, emit1("Div", {x, y}, loc)); break; }
    case BinOp::kMatMul: { TSR_ASSIGN_OR_RETURN(r, emit1("MatMul", {x, y}, loc)); break; }
    case BinOp::kPow: { TSR_ASSIGN_OR_RETURN(r, emit1("Pow", {x, y}, loc)); break; }
    case BinOp::kFloorDiv: {
      // Integer tensors: ONNX Div truncates toward zero (differs from Python for negatives).
      TSR_ASSIGN_OR_RETURN(r, emit1("Div", {x, y}, loc));
      if (fl) { TSR_ASSIGN_OR_RETURN(r, emit1("Floor", {r}, loc)); }
      break;
    }
    case BinOp::kMod: {
      // Floats need fmod=1 in ONNX (C fmod: the sign of the dividend); integers follow Python.
      TSR_ASSIGN_OR_RETURN(r, emit1("Mod", {x, y}, loc, {ir::Attribute::make_int("fmod", fl ? 1 : 0)}));
      break;
    }
  }
  return wrap(r);
}

Expected<ScriptValue> Interpreter::compare(CmpOp op, const ScriptValue& a, const ScriptValue& b, Loc loc) {
  if (!a.is_tensor() && !b.is_tensor()) {
    if (a.is_number() && b.is_number()) {
      const bool ints = a.kind != K::kFloat && b.kind != K::kFloat;
      const double x = a.as_double(), y = b.as_double();
      const int64_t p = a.as_int(), q = b.as_int();
      switch (op) {
        case CmpOp::kLt: return ScriptValue::boolean(ints ? p < q : x < y);
        case CmpOp::kGt: return ScriptValue::boolean(ints ? p > q : x > y);
        case CmpOp::kLe: return ScriptValue::boolean(ints ? p <= q : x <= y);
        case CmpOp::kGe: return ScriptValue::boolean(ints ? p >= q : x >= y);
        case CmpOp::kEq: return ScriptValue::boolean(ints ? p == q : x == y);
        case CmpOp::kNe: return ScriptValue::boolean(ints ? p != q : x != y);
      }
    }
    if (a.kind == K::kString && b.kind == K::kString && (op == CmpOp::kEq || op == CmpOp::kNe))
      return ScriptValue::boolean((a.s == b.s) == (op == CmpOp::kEq));
    if (op == CmpOp::kEq || op == CmpOp::kNe) {
      const bool same = a.kind == b.kind && a.kind == K::kNone;
      return ScriptValue::boolean(same == (op == CmpOp::kEq));
    }
    return error(loc, str_cat("'", cmp_op_text(op), "' is not supported between ", kind_name(a.kind), " and ",
                              kind_name(b.kind)));
  }
  const DType like = a.is_tensor() ? em_->type(a.v).dtype : em_->type(b.v).dtype;
  TSR_ASSIGN_OR_RETURN(ops::Value x, as_tensor(a, like, loc));
  TSR_ASSIGN_OR_RETURN(ops::Value y, as_tensor(b, like, loc));
  static const char* kOps[] = {"Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal", "Equal"};
  TSR_ASSIGN_OR_RETURN(ops::Value r, emit1(kOps[static_cast<int>(op)], {x, y}, loc));
  if (op == CmpOp::kNe) { TSR_ASSIGN_OR_RETURN(r, emit1("Not", {r}, loc)); }
  return wrap(r);
}

// and/or/not on tensors are elementwise logical ops without short-circuit (as AutoGraph
// converts them); on host values they are Python's.
Expected<ScriptValue> Interpreter::logical(ExprKind kind, const Expr& e) {
  TSR_ASSIGN_OR_RETURN(ScriptValue a, eval(*e.items[0]));
  auto as_bool_tensor = [&](const ScriptValue& v, Loc loc) -> Expected<ops::Value> {
    TSR_ASSIGN_OR_RETURN(ops::Value t, as_tensor(v, DType::kBool, loc));
    if (em_->type(t).dtype == DType::kBool) return t;
    return emit1("Cast", {t}, loc, {ir::Attribute::make_int("to", static_cast<int64_t>(DType::kBool))});
  };
  if (kind == ExprKind::kNot) {
    if (!a.is_tensor()) {
      TSR_ASSIGN_OR_RETURN(bool t, truth(a, e.items[0]->loc));
      return ScriptValue::boolean(!t);
    }
    TSR_ASSIGN_OR_RETURN(ops::Value x, as_bool_tensor(a, e.loc));
    TSR_ASSIGN_OR_RETURN(ops::Value r, emit1("Not", {x}, e.loc));
    return wrap(r);
  }
  if (!a.is_tensor()) {
    TSR_ASSIGN_OR_RETURN(bool t, truth(a, e.items[0]->loc));
    if (kind == ExprKind::kAnd ? !t : t) return a;
    return eval(*e.items[1]);
  }
  TSR_ASSIGN_OR_RETURN(ScriptValue b, eval(*e.items[1]));
  TSR_ASSIGN_OR_RETURN(ops::Value x, as_bool_tensor(a, e.items[0]->loc));
  TSR_ASSIGN_OR_RETURN(ops::Value y, as_bool_tensor(b, e.items[1]->loc));
  TSR_ASSIGN_OR_RETURN(ops::Value r, emit1(kind == ExprKind::kAnd ? "And" : "Or", {x, y}, e.loc));
  return wrap(r);
}

Expected<ScriptValue> Interpreter::negate(const ScriptValue& a, Loc loc) {
  if (a.kind == K::kFloat) return ScriptValue::real(-a.f);
  if (a.kind == K::kInt || a.kind == K::kBool) return ScriptValue::integer(-a.as_int());
  if (!a.is_tensor()) return error(loc, str_cat("bad operand type for unary -: ", kind_name(a.kind)));
  TSR_ASSIGN_OR_RETURN(ops::Value r, emit1("Neg", {a.v}, loc));
  return wrap(r);
}

Expected<ScriptValue> Interpreter::subscript(const ScriptValue& a, const ScriptValue& index, Loc loc) {
  if (a.is_sequence()) {
    if (index.kind != K::kInt && index.kind != K::kBool)
      return error(loc, str_cat("list and tuple indices must be host integers, not ", kind_name(index.kind)));
    const auto n = static_cast<int64_t>(a.items->size());
    const int64_t i = index.as_int() < 0 ? index.as_int() + n : index.as_int();
    if (i < 0 || i >= n) return error(loc, str_cat("index ", index.as_int(), " out of range for a ", kind_name(a.kind), " of ", n));
    return (*a.items)[static_cast<size_t>(i)];
  }
  if (!a.is_tensor()) return error(loc, str_cat("a ", kind_name(a.kind), " cannot be indexed"));
  // x[i] is Gather along axis 0 (a tensor index works too, e.g. the variable of a converted loop).
  if (index.kind == K::kFloat || (!index.is_tensor() && !index.is_number()))
    return error(loc, str_cat("tensor indices must be integers, not ", kind_name(index.kind)));
  TSR_ASSIGN_OR_RETURN(ops::Value i, as_tensor(index, DType::kI64, loc));
  TSR_ASSIGN_OR_RETURN(ops::Value r, emit1("Gather", {a.v, i}, loc, {ir::Attribute::make_int("axis", 0)}));
  return wrap(r);
}

}  // namespace tsr::frontend::script
