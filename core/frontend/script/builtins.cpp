// Calls: user functions, builtins (print, tensor, zeros, ones, randn, len, min/max/abs on host
// numbers) and every registered op by its snake_case or lowercase name, attributes as keywords.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "core/base/rng.h"
#include "core/frontend/script/interpreter.h"

namespace tsr::frontend::script {
namespace {

using K = ScriptValue::Kind;

std::string snake_case(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool upper = c >= 'A' && c <= 'Z';
    if (upper && i > 0) {
      const char prev = name[i - 1];
      const bool prev_lower = (prev >= 'a' && prev <= 'z') || (prev >= '0' && prev <= '9');
      const bool next_lower = i + 1 < name.size() && name[i + 1] >= 'a' && name[i + 1] <= 'z';
      if (prev_lower || (next_lower && prev >= 'A' && prev <= 'Z')) out += '_';
    }
    out += upper ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

const std::map<std::string, const ops::OpDef*>& op_names() {
  static const std::map<std::string, const ops::OpDef*> names = [] {
    std::map<std::string, const ops::OpDef*> m;
    for (const auto& [name, def] : ops::OpRegistry::global().all()) {
      if (def.control_flow) continue;  // subgraphs: the script's own if/while/for build them
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      m.emplace(snake_case(name), &def);  // snake_case wins over another op's lowercase name
      m.emplace(lower, &def);
    }
    return m;
  }();
  return names;
}

std::string format_number(double v, bool is_float) {
  char buf[40];
  if (!is_float) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.6g", v);
  std::string s = buf;
  if (s.find_first_of(".eni") == std::string::npos) s += ".";
  return s;
}

void format_tensor(const Tensor& t, size_t dim, int64_t* offset, std::string* out) {
  if (dim == t.shape().size()) {
    *out += t.dtype() == DType::kBool ? (t.scalar_f64(*offset) != 0 ? "True" : "False")
                                      : format_number(t.scalar_f64(*offset), dtype_is_float(t.dtype()));
    ++*offset;
    return;
  }
  *out += "[";
  for (int64_t k = 0; k < t.shape()[dim]; ++k) {
    if (k) *out += ", ";
    format_tensor(t, dim + 1, offset, out);
  }
  *out += "]";
}

}  // namespace

const ops::OpDef* find_script_op(const std::string& name) {
  auto it = op_names().find(name);
  return it == op_names().end() ? nullptr : it->second;
}

std::vector<std::pair<std::string, std::string>> script_op_names() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, def] : op_names()) out.emplace_back(name, def->name);
  return out;
}

std::string Interpreter::format(const ScriptValue& v) {
  switch (v.kind) {
    case K::kNone: return "None";
    case K::kBool: return v.b ? "True" : "False";
    case K::kInt: return std::to_string(v.i);
    case K::kFloat: return format_number(v.f, true);
    case K::kString: return v.s;
    case K::kFunction: return str_cat("<function ", v.fn->name, ">");
    case K::kUndefined: return "<undefined>";
    case K::kTuple:
    case K::kList: {
      std::string s = v.kind == K::kList ? "[" : "(";
      for (size_t k = 0; k < v.items->size(); ++k) s += (k ? ", " : "") + format((*v.items)[k]);
      if (v.kind == K::kTuple && v.items->size() == 1) s += ",";
      return s + (v.kind == K::kList ? "]" : ")");
    }
    case K::kTensor: {
      const Tensor* t = v.owner == id_ ? em_->known_value(v.v) : nullptr;
      if (!t) return str_cat("<tensor ", em_->type(v.v).str(), ": a graph value, known when the graph runs>");
      if (t->kind() != ValueKind::kTensor || t->dtype() == DType::kString || t->numel() > 1000)
        return str_cat("tensor(", ops::ValueType::of(*t).str(), ")");
      std::string s = "tensor(";
      int64_t offset = 0;
      format_tensor(*t, 0, &offset, &s);
      return str_cat(s, ", dtype=", dtype_name(t->dtype()), ")");
    }
  }
  return "?";
}

Expected<ScriptValue> Interpreter::eval_call(const Expr& e) {
  // A user function (a def, possibly shadowing a builtin or op) first.
  auto fnv = lookup(e.name, e.loc);
  if (fnv.ok()) {
    if (fnv->kind != K::kFunction) return error(e.loc, str_cat("'", e.name, "' is a ", kind_name(fnv->kind), ", not a function"));
    ValueList args;
    for (const ExprPtr& a : e.items) {
      TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*a));
      args.push_back(std::move(v));
    }
    std::vector<std::pair<std::string, ScriptValue>> kwargs;
    for (const Keyword& k : e.kwargs) {
      TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*k.value));
      kwargs.emplace_back(k.name, std::move(v));
    }
    return call_function(*fnv->fn, args, kwargs, e.loc);
  }
  bool found = false;
  TSR_ASSIGN_OR_RETURN(ScriptValue r, call_builtin(e.name, e, &found));
  if (found) return r;
  if (find_script_op(e.name)) return call_op(e.name, e);
  return error(e.loc, str_cat("unknown function '", e.name, "' (not a def, a builtin or an op; ops are called by "
                              "their snake_case ONNX names, e.g. matmul, reduce_sum)"), StatusCode::kNotFound);
}

struct Interpreter::BuiltinArgs {
  Interpreter& in;
  const std::string& name;
  const Expr& e;
  ValueList args;
  std::map<std::string, ScriptValue> kw;
  std::map<std::string, Loc> kw_loc;
  bool* found;

  Status allow_kwargs(std::initializer_list<const char*> allowed) {
    for (const auto& entry : kw) {
      // A named reference, not a structured binding: clang 14 (Emscripten) cannot capture those.
      const std::string& k = entry.first;
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; }))
        return in.error(kw_loc[k], str_cat(name, "() got an unexpected keyword argument '", k, "'"));
    }
    return ok_status();
  }
  Expected<DType> dtype_kw(DType def) {
    auto it = kw.find("dtype");
    if (it == kw.end() || it->second.kind == K::kNone) return def;
    if (it->second.kind != K::kString) return in.error(kw_loc["dtype"], "dtype must be a string such as \"f32\"");
    const DType d = dtype_from_name(it->second.s);
    if (d == DType::kUndefined) return in.error(kw_loc["dtype"], str_cat("unknown dtype \"", it->second.s, "\""));
    return d;
  }
  Status nargs(size_t lo, size_t hi) const {
    if (args.size() < lo || args.size() > hi)
      return in.error(e.loc, str_cat(name, "() takes ", lo == hi ? str_cat(lo) : str_cat(lo, " to ", hi),
                                     " argument(s), got ", args.size()));
    return ok_status();
  }
  Expected<Shape> shape_arg(const ScriptValue& v) const {
    if (v.kind == K::kInt) return Shape{v.i};
    Shape s;
    if (v.is_sequence())
      for (const ScriptValue& d : *v.items) {
        if (d.kind != K::kInt || d.i < 0) return in.error(e.loc, str_cat(name, "(): a shape is a list of non-negative integers"));
        s.push_back(d.i);
      }
    else
      return in.error(e.loc, str_cat(name, "(): a shape is a list of integers, not ", kind_name(v.kind)));
    return s;
  }
  bool all_host() const {
    bool host = !args.empty();
    for (const ScriptValue& a : args) host &= a.is_number();
    return host;
  }
};

Expected<ScriptValue> Interpreter::call_builtin(const std::string& name, const Expr& e, bool* found) {
  using Builtin = Expected<ScriptValue> (Interpreter::*)(BuiltinArgs&);
  static const std::pair<const char*, Builtin> kBuiltins[] = {
      {"print", &Interpreter::builtin_print}, {"tensor", &Interpreter::builtin_tensor},
      {"zeros", &Interpreter::builtin_fill},  {"ones", &Interpreter::builtin_fill},
      {"randn", &Interpreter::builtin_fill},  {"len", &Interpreter::builtin_len},
      {"range", &Interpreter::builtin_range}, {"min", &Interpreter::builtin_host_math},
      {"max", &Interpreter::builtin_host_math}, {"abs", &Interpreter::builtin_host_math},
      {"int", &Interpreter::builtin_number},  {"float", &Interpreter::builtin_number}};
  const auto* builtin = std::find_if(std::begin(kBuiltins), std::end(kBuiltins),
                                     [&](const auto& b) { return name == b.first; });
  if (builtin == std::end(kBuiltins)) return ScriptValue::none();
  BuiltinArgs a{*this, name, e, {}, {}, {}, found};
  for (const ExprPtr& x : e.items) {
    TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*x));
    a.args.push_back(std::move(v));
  }
  for (const Keyword& k : e.kwargs) {
    TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*k.value));
    a.kw[k.name] = std::move(v);
    a.kw_loc[k.name] = k.loc;
  }
  *found = true;
  return (this->*builtin->second)(a);
}

Expected<ScriptValue> Interpreter::builtin_range(BuiltinArgs& a) {
  return error(a.e.loc, "range() can only be used as the iterable of a for loop");
}

Expected<ScriptValue> Interpreter::builtin_print(BuiltinArgs& a) {
  TSR_RETURN_IF_ERROR(a.allow_kwargs({}));
  std::string line;
  for (size_t k = 0; k < a.args.size(); ++k) line += (k ? " " : "") + format(a.args[k]);
  (options_.out ? *options_.out : std::cout) << line << "\n";
  return ScriptValue::none();
}

Expected<ScriptValue> Interpreter::builtin_tensor(BuiltinArgs& a) {
  TSR_RETURN_IF_ERROR(a.allow_kwargs({"dtype"}));
  TSR_RETURN_IF_ERROR(a.nargs(1, 1));
  TSR_ASSIGN_OR_RETURN(DType d, a.dtype_kw(DType::kUndefined));
  if (a.args[0].is_tensor()) return error(a.e.loc, "tensor() takes numbers or nested lists of numbers");
  auto t = make_literal(a.args[0], d);
  if (!t.ok()) return error(a.e.loc, t.status().message());
  return wrap(em_->constant(std::move(t).value()));
}

Expected<ScriptValue> Interpreter::builtin_fill(BuiltinArgs& a) {
  const std::string& name = a.name;
  const Expr& e = a.e;
  TSR_RETURN_IF_ERROR(a.allow_kwargs(name == "randn" ? std::initializer_list<const char*>{"dtype", "seed"}
                                                     : std::initializer_list<const char*>{"dtype"}));
  TSR_RETURN_IF_ERROR(a.nargs(1, 1));
  TSR_ASSIGN_OR_RETURN(DType d, a.dtype_kw(DType::kF32));
  if (a.args[0].is_tensor() && name != "randn") {
    // A runtime shape: ConstantOfShape.
    TSR_ASSIGN_OR_RETURN(Tensor fill, make_literal(ScriptValue::tuple({name == "ones" ? ScriptValue::integer(1) : ScriptValue::integer(0)}, K::kList), d));
    TSR_ASSIGN_OR_RETURN(ops::Value r, emit1("ConstantOfShape", {a.args[0].v}, e.loc, {ir::Attribute::make_tensor("value", fill)}));
    return wrap(r);
  }
  TSR_ASSIGN_OR_RETURN(Shape shape, a.shape_arg(a.args[0]));
  const int64_t n = shape_numel(shape);
  if (n > (int64_t{1} << 28)) return error(e.loc, str_cat(name, "(): ", n, " elements is too many"));
  ValueList flat;
  SplitMix64 rng{0};
  if (name == "randn") {
    const auto it = a.kw.find("seed");
    if (it != a.kw.end() && it->second.kind != K::kInt) return error(a.kw_loc["seed"], "seed must be an integer");
    rng.state = it == a.kw.end() ? 0 : static_cast<uint64_t>(it->second.i) * 0x632be59bd9b4e019ull + 1;
  }
  flat.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k)
    flat.push_back(ScriptValue::real(name == "randn" ? rng.normal() : name == "ones" ? 1.0 : 0.0));
  TSR_ASSIGN_OR_RETURN(Tensor t, make_literal(ScriptValue::tuple(std::move(flat), K::kList), d));
  TSR_ASSIGN_OR_RETURN(Tensor shaped, t.reshaped(shape));
  return wrap(em_->constant(std::move(shaped)));
}

Expected<ScriptValue> Interpreter::builtin_len(BuiltinArgs& a) {
  const Expr& e = a.e;
  TSR_RETURN_IF_ERROR(a.allow_kwargs({}));
  TSR_RETURN_IF_ERROR(a.nargs(1, 1));
  const ScriptValue& x = a.args[0];
  if (x.is_sequence()) return ScriptValue::integer(static_cast<int64_t>(x.items->size()));
  if (x.kind == K::kString) return ScriptValue::integer(static_cast<int64_t>(x.s.size()));
  if (!x.is_tensor()) return error(e.loc, str_cat("len() of a ", kind_name(x.kind)));
  const ops::ValueType t = em_->type(x.v);
  if (t.has_shape && t.shape.empty()) return error(e.loc, "len() of a scalar tensor");
  if (t.has_shape && t.shape[0] >= 0) return ScriptValue::integer(t.shape[0]);
  // A dynamic first dim: len() is a tensor (Shape, then element 0).
  TSR_ASSIGN_OR_RETURN(ops::Value s, emit1("Shape", {x.v}, e.loc));
  TSR_ASSIGN_OR_RETURN(ops::Value r, emit1("Gather", {s, em_->constant(Tensor::scalar<int64_t>(0))}, e.loc,
                                           {ir::Attribute::make_int("axis", 0)}));
  return wrap(r);
}

Expected<ScriptValue> Interpreter::builtin_number(BuiltinArgs& a) {
  TSR_RETURN_IF_ERROR(a.nargs(1, 1));
  if (!a.all_host())
    return error(a.e.loc, str_cat(a.name, "() takes a host number (reading a tensor's value is not supported)"));
  return a.name == "int" ? ScriptValue::integer(a.args[0].as_int()) : ScriptValue::real(a.args[0].as_double());
}

Expected<ScriptValue> Interpreter::builtin_host_math(BuiltinArgs& a) {
  // Host numbers here; tensors go to the ops Min, Max, Abs.
  if (!a.all_host()) {
    *a.found = false;
    return ScriptValue::none();
  }
  if (a.name == "abs") {
    TSR_RETURN_IF_ERROR(a.nargs(1, 1));
    return a.args[0].kind == K::kFloat ? ScriptValue::real(std::fabs(a.args[0].f))
                                       : ScriptValue::integer(std::llabs(a.args[0].as_int()));
  }
  ScriptValue best = a.args[0];
  for (const ScriptValue& x : a.args)
    if (a.name == "min" ? x.as_double() < best.as_double() : x.as_double() > best.as_double()) best = x;
  return best;
}

Expected<ScriptValue> Interpreter::call_op(const std::string& op_name, const Expr& e) {
  const ops::OpDef& def = *find_script_op(op_name);
  TSR_ASSIGN_OR_RETURN(std::vector<ops::Value> inputs, op_inputs(def, op_name, e));
  size_t n_out = static_cast<size_t>(std::max(1, def.min_outputs));
  std::vector<ir::Attribute> attrs;
  for (const Keyword& k : e.kwargs) {
    TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*k.value));
    if (k.name == "num_outputs") {
      if (v.kind != K::kInt || v.i < 1 || (def.max_outputs >= 0 && v.i > def.max_outputs) || v.i < def.min_outputs)
        return error(k.loc, str_cat("num_outputs must be an integer in [", def.min_outputs, ", ",
                                    def.max_outputs < 0 ? std::string("...") : str_cat(def.max_outputs), "] for ", def.name));
      n_out = static_cast<size_t>(v.i);
      continue;
    }
    TSR_ASSIGN_OR_RETURN(ir::Attribute attr, op_attribute(def, k, v));
    attrs.push_back(std::move(attr));
  }
  TSR_ASSIGN_OR_RETURN(std::vector<ops::Value> outs, emit(def.name, inputs, n_out, std::move(attrs), e.loc));
  if (outs.size() == 1) return wrap(outs[0]);
  ValueList items;
  for (const ops::Value& o : outs) items.push_back(wrap(o));
  return ScriptValue::tuple(std::move(items));
}

Expected<std::vector<ops::Value>> Interpreter::op_inputs(const ops::OpDef& def, const std::string& op_name,
                                                         const Expr& e) {
  const auto n_in = static_cast<int>(e.items.size());
  if (n_in < def.min_inputs || (def.max_inputs >= 0 && n_in > def.max_inputs))
    return error(e.loc, str_cat(op_name, "() (op ", def.name, ") takes ",
                                def.max_inputs < 0 ? str_cat("at least ", def.min_inputs)
                                : def.min_inputs == def.max_inputs ? str_cat(def.min_inputs)
                                                                   : str_cat(def.min_inputs, " to ", def.max_inputs),
                                " input(s), got ", n_in));
  ValueList args;
  DType float_like = DType::kUndefined;
  for (const ExprPtr& a : e.items) {
    TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*a));
    if (v.is_tensor() && float_like == DType::kUndefined && v.owner == id_ && dtype_is_float(em_->type(v.v).dtype))
      float_like = em_->type(v.v).dtype;
    args.push_back(std::move(v));
  }
  std::vector<ops::Value> inputs;
  for (size_t k = 0; k < args.size(); ++k) {
    const ScriptValue& v = args[k];
    if (v.kind == K::kNone) {
      inputs.emplace_back();
      continue;
    }
    if (v.is_tensor()) {
      TSR_ASSIGN_OR_RETURN(ops::Value t, as_tensor(v, DType::kUndefined, e.items[k]->loc));
      inputs.push_back(t);
      continue;
    }
    // Host numbers and lists: integers become i64 (axes, indices, shapes), floats take the dtype
    // of the first floating-point tensor input (else f32).
    auto lit = make_literal(v, DType::kUndefined);
    if (!lit.ok()) return error(e.items[k]->loc, lit.status().message());
    if (lit->dtype() == DType::kF32 && float_like != DType::kUndefined && float_like != DType::kF32)
      lit = make_literal(v, float_like);
    if (!lit.ok()) return error(e.items[k]->loc, lit.status().message());
    inputs.push_back(em_->constant(std::move(lit).value()));
  }
  return inputs;
}

Expected<ir::Attribute> Interpreter::op_attribute(const ops::OpDef& def, const Keyword& k, const ScriptValue& v) {
  const ops::AttrSpec* spec = nullptr;
  for (const ops::AttrSpec& a : def.attrs)
    if (a.name == k.name) spec = &a;
  if (!spec) {
    std::string known;
    for (const ops::AttrSpec& a : def.attrs) known += str_cat(known.empty() ? "" : ", ", a.name);
    return error(k.loc, str_cat(def.name, " has no attribute '", k.name, "' (its attributes: ",
                                known.empty() ? std::string("none") : known, "; inputs are positional)"));
  }
  auto bad = [&](const char* want) {
    return error(k.loc, str_cat("attribute '", k.name, "' of ", def.name, " takes ", want, ", not ", kind_name(v.kind)));
  };
  auto numbers = [&](bool ints, std::vector<int64_t>* iv, std::vector<double>* fv) -> bool {
    ValueList one = {v};
    const ValueList& list = v.is_sequence() ? *v.items : one;
    for (const ScriptValue& x : list) {
      if (!x.is_number() || (ints && x.kind == K::kFloat)) return false;
      if (ints) iv->push_back(x.as_int());
      else fv->push_back(x.as_double());
    }
    return true;
  };
  switch (spec->kind) {
    case ir::AttrKind::kInt:
      if (v.kind == K::kString) {
        const DType d = dtype_from_name(v.s);
        if (d == DType::kUndefined) return error(k.loc, str_cat("unknown dtype \"", v.s, "\" for attribute '", k.name, "'"));
        return ir::Attribute::make_int(k.name, static_cast<int64_t>(d));
      }
      if (v.kind == K::kInt || v.kind == K::kBool) return ir::Attribute::make_int(k.name, v.as_int());
      return bad("an integer (or a dtype name)");
    case ir::AttrKind::kFloat:
      if (!v.is_number()) return bad("a number");
      return ir::Attribute::make_float(k.name, v.as_double());
    case ir::AttrKind::kString:
      if (v.kind != K::kString) return bad("a string");
      return ir::Attribute::make_string(k.name, v.s);
    case ir::AttrKind::kInts: {
      std::vector<int64_t> iv;
      if (!numbers(true, &iv, nullptr)) return bad("a list of integers");
      return ir::Attribute::make_ints(k.name, std::move(iv));
    }
    case ir::AttrKind::kFloats: {
      std::vector<double> fv;
      if (!numbers(false, nullptr, &fv)) return bad("a list of numbers");
      return ir::Attribute::make_floats(k.name, std::move(fv));
    }
    case ir::AttrKind::kStrings: {
      std::vector<std::string> sv;
      if (!v.is_sequence()) return bad("a list of strings");
      for (const ScriptValue& x : *v.items) {
        if (x.kind != K::kString) return bad("a list of strings");
        sv.push_back(x.s);
      }
      return ir::Attribute::make_strings(k.name, std::move(sv));
    }
    case ir::AttrKind::kTensor: {
      if (v.is_tensor()) {
        const Tensor* t = v.owner == id_ ? em_->known_value(v.v) : nullptr;
        if (!t) return error(k.loc, str_cat("attribute '", k.name, "' needs a tensor whose value is known now"));
        return ir::Attribute::make_tensor(k.name, *t);
      }
      auto t = make_literal(v, DType::kUndefined);
      if (!t.ok()) return error(k.loc, t.status().message());
      return ir::Attribute::make_tensor(k.name, std::move(t).value());
    }
    case ir::AttrKind::kGraph:
    case ir::AttrKind::kGraphs:
      break;
  }
  return error(k.loc, str_cat("graph attributes cannot be given from scripts (write if/while/for instead)"),
               StatusCode::kUnsupported);
}

Expected<ScriptValue> Interpreter::call_function(const FunctionDef& fn, const ValueList& args,
                                                 const std::vector<std::pair<std::string, ScriptValue>>& kwargs, Loc loc) {
  if (args.size() > fn.params.size())
    return error(loc, str_cat(fn.name, "() takes ", fn.params.size(), " argument(s), got ", args.size()));
  std::vector<const ScriptValue*> bound(fn.params.size(), nullptr);
  for (size_t k = 0; k < args.size(); ++k) bound[k] = &args[k];
  for (const auto& [name, value] : kwargs) {
    size_t k = 0;
    while (k < fn.params.size() && fn.params[k].name != name) ++k;
    if (k == fn.params.size()) return error(loc, str_cat(fn.name, "() got an unexpected keyword argument '", name, "'"));
    if (bound[k]) return error(loc, str_cat(fn.name, "() got multiple values for argument '", name, "'"));
    bound[k] = &value;
  }
  Frame frame;
  for (size_t k = 0; k < fn.params.size(); ++k) {
    if (bound[k]) {
      frame.vars[fn.params[k].name] = *bound[k];
      continue;
    }
    if (!fn.params[k].default_value)
      return error(loc, str_cat(fn.name, "() missing required argument '", fn.params[k].name, "'"));
    Frame* saved = frame_;
    frame_ = &globals_;  // defaults see module-level names only
    auto d = eval(*fn.params[k].default_value);
    frame_ = saved;
    if (!d.ok()) return d.status();
    frame.vars[fn.params[k].name] = std::move(d).value();
  }
  if (fn.has_decorator("static") && !gb_ && !outer_ && !bypass_static_) {
    ValueList ordered;
    for (size_t k = 0; k < fn.params.size(); ++k) ordered.push_back(frame.vars[fn.params[k].name]);
    return call_static(fn, ordered, loc);
  }
  if (depth_ >= options_.max_call_depth)
    return error(loc, str_cat("calls nested more than ", options_.max_call_depth, " deep (runaway recursion?)"));
  ++depth_;
  Frame* saved = frame_;
  frame_ = &frame;
  auto flow = exec_block(fn.body);
  frame_ = saved;
  --depth_;
  if (!flow.ok()) return flow.status();
  return flow->value;
}

}  // namespace tsr::frontend::script
