#include "core/frontend/script/interpreter.h"

#include <atomic>
#include <iostream>

#include "tessera/session.h"

namespace tsr::frontend::script {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kEager: return "eager";
    case Mode::kTrace: return "trace";
    case Mode::kConvert: return "convert";
  }
  return "?";
}

const char* kind_name(ScriptValue::Kind k) {
  using K = ScriptValue::Kind;
  switch (k) {
    case K::kNone: return "None";
    case K::kBool: return "bool";
    case K::kInt: return "int";
    case K::kFloat: return "float";
    case K::kString: return "str";
    case K::kTensor: return "tensor";
    case K::kTuple: return "tuple";
    case K::kList: return "list";
    case K::kFunction: return "function";
    case K::kUndefined: return "undefined";
  }
  return "?";
}

Expected<bool> ScriptTarget::decide(ops::Value cond, const std::string& where) {
  const Tensor* t = emitter().known_value(cond);
  if (!t) return invalid_argument(where, ": the condition's value is not known");
  if (t->numel() != 1)
    return invalid_argument(where, ": the truth value of a tensor with ", t->numel(), " elements is ambiguous");
  return t->scalar_f64(0) != 0;
}

namespace {
std::atomic<int> g_next_id{1};
}

Interpreter::Interpreter(const Module& module, ScriptTarget& target, InterpreterOptions options)
    : module_(module),
      target_(target),
      options_(options),
      id_(g_next_id++),
      em_(&target.emitter()),
      gb_(target.builder()),
      frame_(&globals_) {}

Interpreter::~Interpreter() = default;

Status Interpreter::error(Loc loc, const std::string& msg, StatusCode code) const {
  return script_error(*module_.source, loc, msg, code);
}

Status Interpreter::run_module() {
  TSR_ASSIGN_OR_RETURN(Flow f, exec_block(module_.body));
  if (f.returned) return error({1, 1}, "'return' outside a function");
  return ok_status();
}

const FunctionDef* Interpreter::find_function(const std::string& name) const {
  auto it = globals_.vars.find(name);
  if (it == globals_.vars.end() || it->second.kind != ScriptValue::Kind::kFunction) return nullptr;
  return it->second.fn;
}

Expected<ScriptValue> Interpreter::call(const FunctionDef& fn, const ValueList& args, Loc loc,
                                        const std::vector<std::pair<std::string, ScriptValue>>& kwargs) {
  return call_function(fn, args, kwargs, loc);
}

Expected<Interpreter::Flow> Interpreter::exec_block(const Block& block, size_t start, const Block* rest,
                                                    size_t rest_start) {
  for (size_t k = start; k < block.size(); ++k) {
    bool consumed = false;
    // The continuation a converted `if` may absorb: the rest of this block, else the caller's.
    const bool last = k + 1 == block.size();
    TSR_ASSIGN_OR_RETURN(Flow f, exec(*block[k], block, k, &consumed, last ? rest : &block, last ? rest_start : k + 1));
    if (consumed) {
      f.returned = true;
      return f;
    }
    if (f.returned) return f;
  }
  if (rest && rest_start < rest->size()) return exec_block(*rest, rest_start);
  return Flow{};
}

Expected<bool> Interpreter::truth(const ScriptValue& v, Loc loc) {
  using K = ScriptValue::Kind;
  switch (v.kind) {
    case K::kNone: return false;
    case K::kBool: return v.b;
    case K::kInt: return v.i != 0;
    case K::kFloat: return v.f != 0;
    case K::kString: return !v.s.empty();
    case K::kTuple:
    case K::kList: return !v.items->empty();
    case K::kFunction: return true;
    case K::kTensor: {
      auto r = target_.decide(v.v, where(loc));
      if (!r.ok()) return error(loc, r.status().message().substr(r.status().message().find(": ") + 2));
      return *r;
    }
    case K::kUndefined: return error(loc, v.s);
  }
  return false;
}

Expected<Interpreter::Flow> Interpreter::exec(const Stmt& s, const Block& block, size_t index, bool* consumed_rest,
                                              const Block* rest, size_t rest_start) {
  (void)block;
  (void)index;
  switch (s.kind) {
    case StmtKind::kPass: return Flow{};
    case StmtKind::kExpr: {
      TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*s.value));
      (void)v;
      return Flow{};
    }
    case StmtKind::kAssign: {
      TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*s.value));
      for (const ExprPtr& t : s.targets) TSR_RETURN_IF_ERROR(assign(*t, v));
      return Flow{};
    }
    case StmtKind::kAugAssign: {
      TSR_ASSIGN_OR_RETURN(ScriptValue cur, lookup(s.targets[0]->name, s.targets[0]->loc));
      TSR_ASSIGN_OR_RETURN(ScriptValue rhs, eval(*s.value));
      TSR_ASSIGN_OR_RETURN(ScriptValue v, binary(s.bin_op, cur, rhs, s.loc));
      frame_->vars[s.targets[0]->name] = std::move(v);
      return Flow{};
    }
    case StmtKind::kReturn: {
      Flow f;
      f.returned = true;
      if (s.value) {
        TSR_ASSIGN_OR_RETURN(f.value, eval(*s.value));
      }
      return f;
    }
    case StmtKind::kDef: {
      for (const Decorator& d : s.def->decorators)
        if (d.name != "static")
          return error(d.loc, str_cat("unknown decorator @", d.name, " (the script language knows @static)"));
      frame_->vars[s.def->name] = ScriptValue::function(s.def.get());
      return Flow{};
    }
    case StmtKind::kIf: {
      TSR_ASSIGN_OR_RETURN(ScriptValue c, eval(*s.cond));
      if (c.is_tensor() && gb_) return convert_if(s, c.v, rest, rest_start, consumed_rest);
      TSR_ASSIGN_OR_RETURN(bool taken, truth(c, s.cond->loc));
      return exec_block(taken ? s.body : s.orelse);
    }
    case StmtKind::kWhile: {
      for (int64_t n = 0;; ++n) {
        TSR_ASSIGN_OR_RETURN(ScriptValue c, eval(*s.cond));
        if (c.is_tensor() && gb_) {
          if (n > 0)
            return error(s.cond->loc, str_cat("the condition of this while loop became a tensor after ", n,
                                              " iterations on host values; make it a tensor before the loop "
                                              "(e.g. i = tensor(0)) so that the loop converts to a Loop"));
          return convert_while(s, c.v);
        }
        TSR_ASSIGN_OR_RETURN(bool go, truth(c, s.cond->loc));
        if (!go) return Flow{};
        if (n >= options_.max_host_iterations)
          return error(s.loc, str_cat("this while loop ran more than ", options_.max_host_iterations, " iterations"));
        TSR_ASSIGN_OR_RETURN(Flow f, exec_block(s.body));
        if (f.returned) return f;
      }
    }
    case StmtKind::kFor: return exec_for(s);
  }
  return Flow{};
}

Status Interpreter::assign(const Expr& target, const ScriptValue& value) {
  if (target.kind == ExprKind::kName) {
    frame_->vars[target.name] = value;
    return ok_status();
  }
  // Tuple unpacking of a tuple or list value (a function's tuple result, a multi-output op).
  if (!value.is_sequence())
    return error(target.loc, str_cat("cannot unpack a ", kind_name(value.kind), " into ", target.items.size(), " names"));
  if (value.items->size() != target.items.size())
    return error(target.loc, str_cat("cannot unpack ", value.items->size(), " values into ", target.items.size(), " names"));
  for (size_t k = 0; k < target.items.size(); ++k) frame_->vars[target.items[k]->name] = (*value.items)[k];
  return ok_status();
}

Expected<Interpreter::Flow> Interpreter::exec_for(const Stmt& s) {
  const Expr& it = *s.value;
  const bool is_range = it.kind == ExprKind::kCall && it.name == "range" && !lookup("range", it.loc).ok();
  if (!is_range) {
    TSR_ASSIGN_OR_RETURN(ScriptValue seq, eval(it));
    if (!seq.is_sequence())
      return error(it.loc, str_cat("for loops iterate over range(...), a list or a tuple, not a ", kind_name(seq.kind),
                                   seq.is_tensor() ? " (write: for i in range(len(x)): ... x[i] ...)" : ""));
    for (const ScriptValue& item : *seq.items) {
      frame_->vars[s.var] = item;
      TSR_ASSIGN_OR_RETURN(Flow f, exec_block(s.body));
      if (f.returned) return f;
    }
    return Flow{};
  }
  if (!it.kwargs.empty()) return error(it.kwargs[0].loc, "range() takes no keyword arguments");
  if (it.items.empty() || it.items.size() > 3)
    return error(it.loc, str_cat("range() takes 1 to 3 arguments, got ", it.items.size()));
  ValueList a;
  for (const ExprPtr& x : it.items) {
    TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*x));
    if (v.kind == ScriptValue::Kind::kFloat) return error(x->loc, "range() arguments must be integers, not float");
    if (!v.is_tensor() && v.kind != ScriptValue::Kind::kInt && v.kind != ScriptValue::Kind::kBool)
      return error(x->loc, str_cat("range() arguments must be integers, not ", kind_name(v.kind)));
    a.push_back(std::move(v));
  }
  ScriptValue start = a.size() > 1 ? a[0] : ScriptValue::integer(0);
  ScriptValue stop = a.size() > 1 ? a[1] : a[0];
  ScriptValue step = a.size() > 2 ? a[2] : ScriptValue::integer(1);
  if (step.is_tensor()) return error(it.items[2]->loc, "the step of range() must be a host integer");
  if (step.as_int() == 0) return error(it.items[2]->loc, "range() step must not be zero");
  const bool tensor_bounds = start.is_tensor() || stop.is_tensor();
  if (gb_ && (tensor_bounds || !options_.unroll)) return convert_for(s, start, stop, step.as_int());
  // A host loop: bounds that are tensors are read now (eager/trace); the trace then fixes the
  // trip count, which it says.
  for (ScriptValue* b : {&start, &stop}) {
    if (!b->is_tensor()) continue;
    const Tensor* t = em_->known_value(b->v);
    if (!t || t->numel() != 1) return error(it.loc, "a range() bound must be a one-element tensor with a known value");
    const int64_t v = t->scalar_i64(0);
    if (target_.mode() == Mode::kTrace)
      warnings_.push_back(module_.source->diagnostic(
          it.loc, str_cat("the trip count of this loop was read from a tensor (", v,
                          "); the traced graph repeats the body that many times for every input"),
          "warning"));
    *b = ScriptValue::integer(v);
  }
  const int64_t st = step.as_int();
  for (int64_t i = start.as_int(); st > 0 ? i < stop.as_int() : i > stop.as_int(); i += st) {
    frame_->vars[s.var] = ScriptValue::integer(i);
    TSR_ASSIGN_OR_RETURN(Flow f, exec_block(s.body));
    if (f.returned) return f;
  }
  return Flow{};
}

Expected<ScriptValue> Interpreter::lookup(const std::string& name, Loc loc) {
  const ScriptValue* found = nullptr;
  auto it = frame_->vars.find(name);
  if (it != frame_->vars.end()) {
    found = &it->second;
  } else if (frame_ != &globals_) {
    auto g = globals_.vars.find(name);
    if (g != globals_.vars.end()) found = &g->second;
  }
  if (found) {
    if (found->kind == ScriptValue::Kind::kUndefined) return error(loc, found->s);
    return *found;
  }
  if (outer_) {
    // A @static function being converted reads the caller's globals: tensors become constants.
    auto o = outer_->globals_.vars.find(name);
    if (o != outer_->globals_.vars.end()) {
      const ScriptValue& v = o->second;
      if (!v.is_tensor()) return v;
      TSR_ASSIGN_OR_RETURN(ops::Value c, as_tensor(v, DType::kUndefined, loc));
      return wrap(c);
    }
  }
  return error(loc, str_cat("unknown name '", name, "'"), StatusCode::kNotFound);
}

Expected<ScriptValue> Interpreter::eval(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kName: return lookup(e.name, e.loc);
    case ExprKind::kInt: return ScriptValue::integer(e.i);
    case ExprKind::kFloat: return ScriptValue::real(e.f);
    case ExprKind::kString: return ScriptValue::string(e.name);
    case ExprKind::kBool: return ScriptValue::boolean(e.i != 0);
    case ExprKind::kNone: return ScriptValue::none();
    case ExprKind::kList:
    case ExprKind::kTuple: {
      ValueList items;
      for (const ExprPtr& x : e.items) {
        TSR_ASSIGN_OR_RETURN(ScriptValue v, eval(*x));
        items.push_back(std::move(v));
      }
      return ScriptValue::tuple(std::move(items), e.kind == ExprKind::kList ? ScriptValue::Kind::kList : ScriptValue::Kind::kTuple);
    }
    case ExprKind::kNeg: {
      TSR_ASSIGN_OR_RETURN(ScriptValue a, eval(*e.items[0]));
      return negate(a, e.loc);
    }
    case ExprKind::kPos: {
      TSR_ASSIGN_OR_RETURN(ScriptValue a, eval(*e.items[0]));
      if (!a.is_number() && !a.is_tensor()) return error(e.loc, str_cat("bad operand type for unary +: ", kind_name(a.kind)));
      return a;
    }
    case ExprKind::kNot:
    case ExprKind::kAnd:
    case ExprKind::kOr: return logical(e.kind, e);
    case ExprKind::kBinary: {
      TSR_ASSIGN_OR_RETURN(ScriptValue a, eval(*e.items[0]));
      TSR_ASSIGN_OR_RETURN(ScriptValue b, eval(*e.items[1]));
      return binary(e.bin_op, a, b, e.loc);
    }
    case ExprKind::kCompare: {
      TSR_ASSIGN_OR_RETURN(ScriptValue a, eval(*e.items[0]));
      TSR_ASSIGN_OR_RETURN(ScriptValue b, eval(*e.items[1]));
      return compare(e.cmp_op, a, b, e.loc);
    }
    case ExprKind::kCall: return eval_call(e);
    case ExprKind::kSubscript: {
      TSR_ASSIGN_OR_RETURN(ScriptValue a, eval(*e.items[0]));
      TSR_ASSIGN_OR_RETURN(ScriptValue i, eval(*e.items[1]));
      return subscript(a, i, e.loc);
    }
  }
  return error(e.loc, "internal error: unknown expression");
}

Expected<std::vector<ops::Value>> Interpreter::emit(const std::string& op, const std::vector<ops::Value>& inputs,
                                                    size_t n, std::vector<ir::Attribute> attrs, Loc loc) {
  if (!em_->status().ok()) return error(loc, em_->status().message());
  std::vector<ops::Value> out = em_->emit_n(op, inputs, n, std::move(attrs));
  if (!em_->status().ok()) return error(loc, em_->status().message(), em_->status().code());
  return out;
}

Expected<ops::Value> Interpreter::emit1(const std::string& op, const std::vector<ops::Value>& inputs, Loc loc,
                                        std::vector<ir::Attribute> attrs) {
  TSR_ASSIGN_OR_RETURN(std::vector<ops::Value> out, emit(op, inputs, 1, std::move(attrs), loc));
  return out[0];
}

Expected<std::vector<ops::Value>> Interpreter::flatten_result(const ScriptValue& result, Loc loc) {
  std::vector<ops::Value> out;
  if (result.kind == ScriptValue::Kind::kTuple) {
    for (const ScriptValue& v : *result.items) {
      if (v.is_sequence()) return error(loc, "nested tuples cannot be results");
      TSR_ASSIGN_OR_RETURN(ops::Value t, as_tensor(v, DType::kUndefined, loc));
      out.push_back(t);
    }
    return out;
  }
  if (result.kind == ScriptValue::Kind::kNone) return out;
  TSR_ASSIGN_OR_RETURN(ops::Value t, as_tensor(result, DType::kUndefined, loc));
  out.push_back(t);
  return out;
}

}  // namespace tsr::frontend::script
