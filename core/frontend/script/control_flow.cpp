// Convert mode: `if`, `while` and `for` whose condition or trip count is a tensor become If and
// Loop nodes (AutoGraph's transformation, done on the syntax tree while interpreting it).
//
//  - if: both branches are converted (GraphBuilder::cond). The If outputs are the variables that
//    either branch may assign and that exist after the if: defined before it, or definitely
//    assigned in both branches. A variable assigned in only one branch, and not defined before,
//    has no value afterwards: reading it later is an error naming it (so it is fine when dead).
//    `return` in a branch: when both branches return, the If outputs are the returned values;
//    when one returns, the statements after the if join the other branch (its continuation).
//  - while / for: the loop-carried values are the variables the body may assign that are
//    defined before the loop (host numbers become constants first); the condition is evaluated
//    again at the end of the body. Variables first assigned in the body have no value after.
#include <functional>
#include <set>

#include "core/frontend/script/interpreter.h"

namespace tsr::frontend::script {
namespace {

using K = ScriptValue::Kind;
using ops::GraphBuilder;

void assigned_in_expr_target(const Expr& t, std::set<std::string>* out) {
  if (t.kind == ExprKind::kName) out->insert(t.name);
  for (const ExprPtr& x : t.items)
    if (x->kind == ExprKind::kName) out->insert(x->name);
}

// Names a block may assign (any path, loops included).
void maybe_assigned(const Block& b, std::set<std::string>* out) {
  for (const StmtPtr& s : b) {
    switch (s->kind) {
      case StmtKind::kAssign:
      case StmtKind::kAugAssign:
        for (const ExprPtr& t : s->targets) assigned_in_expr_target(*t, out);
        break;
      case StmtKind::kFor: out->insert(s->var); [[fallthrough]];
      case StmtKind::kWhile:
      case StmtKind::kIf:
        maybe_assigned(s->body, out);
        maybe_assigned(s->orelse, out);
        break;
      case StmtKind::kDef: out->insert(s->def->name); break;
      default: break;
    }
  }
}

// Names a block assigns on every path (loop bodies may not run: they do not count).
void surely_assigned(const Block& b, std::set<std::string>* out) {
  for (const StmtPtr& s : b) {
    if (s->kind == StmtKind::kAssign || s->kind == StmtKind::kAugAssign) {
      for (const ExprPtr& t : s->targets) assigned_in_expr_target(*t, out);
    } else if (s->kind == StmtKind::kIf) {
      std::set<std::string> a, e;
      surely_assigned(s->body, &a);
      surely_assigned(s->orelse, &e);
      for (const std::string& n : a)
        if (e.count(n)) out->insert(n);
    } else if (s->kind == StmtKind::kDef) {
      out->insert(s->def->name);
    }
  }
}

bool contains_return(const Block& b) {
  for (const StmtPtr& s : b) {
    if (s->kind == StmtKind::kReturn) return true;
    if ((s->kind == StmtKind::kIf || s->kind == StmtKind::kWhile || s->kind == StmtKind::kFor) &&
        (contains_return(s->body) || contains_return(s->orelse)))
      return true;
  }
  return false;
}

bool surely_returns(const Block& b, size_t start = 0) {
  for (size_t k = start; k < b.size(); ++k) {
    const Stmt& s = *b[k];
    if (s.kind == StmtKind::kReturn) return true;
    if (s.kind == StmtKind::kIf && surely_returns(s.body) && surely_returns(s.orelse)) return true;
  }
  return false;
}

}  // namespace

Status Interpreter::if_returns(IfShape& shape) {
  const Stmt& s = shape.s;
  // Returns: both branches return (possibly after absorbing the continuation), or neither.
  const bool then_ret = contains_return(s.body), else_ret = contains_return(s.orelse);
  if (!then_ret && !else_ret) return ok_status();
  const bool rest_returns = shape.rest && surely_returns(*shape.rest, shape.rest_start);
  const bool t = surely_returns(s.body), e = surely_returns(s.orelse);
  shape.then_takes_rest = !t && rest_returns;
  shape.else_takes_rest = !e && rest_returns;
  if (!(t || shape.then_takes_rest) || !(e || shape.else_takes_rest))
    return error(s.loc, "a return inside an if whose condition is a tensor needs a return on every path of both "
                        "branches (or after the if)", StatusCode::kUnsupported);
  shape.returning = true;
  return ok_status();
}

void Interpreter::if_outputs(IfShape& shape) {
  const Stmt& s = shape.s;
  std::set<std::string> maybe, in_then, in_else;
  maybe_assigned(s.body, &maybe);
  maybe_assigned(s.orelse, &maybe);
  surely_assigned(s.body, &in_then);
  surely_assigned(s.orelse, &in_else);
  for (const std::string& n : maybe) {
    auto it = frame_->vars.find(n);
    bool before = it != frame_->vars.end() && it->second.kind != K::kUndefined;
    if (!before && frame_ != &globals_) {
      auto g = globals_.vars.find(n);
      before = g != globals_.vars.end() && g->second.kind != K::kUndefined && g->second.kind != K::kFunction;
    }
    if (before || (in_then.count(n) && in_else.count(n))) shape.outputs.push_back(n);
    else shape.poisoned.insert(n);
  }
}

void Interpreter::poison(const IfShape& shape, const std::string& at) {
  for (const std::string& n : shape.poisoned)
    frame_->vars[n] = ScriptValue::undefined(
        str_cat("'", n, "' is assigned in only one branch of the if at ", at,
                ", whose condition is a tensor, so it has no value here; assign it in both branches (or before the if)"));
}

std::vector<ops::Value> Interpreter::convert_branch(GraphBuilder& b, const Block& body, bool takes_rest,
                                                    const char* which, IfShape& shape) {
  if (!pending_.ok()) return {};
  // The branch runs on a copy of the frame, with the branch's builder as the emitter.
  ops::Emitter* saved_em = em_;
  ops::GraphBuilder* saved_gb = gb_;
  Frame* saved_frame = frame_;
  Frame copy = *frame_;
  em_ = gb_ = &b;
  frame_ = &copy;
  auto out = branch_result(body, takes_rest, which, shape, copy, *saved_frame);
  em_ = saved_em;
  gb_ = saved_gb;
  frame_ = saved_frame;
  if (!out.ok()) {
    if (pending_.ok()) pending_ = out.status();
    return {};
  }
  return std::move(out).value();
}

Expected<std::vector<ops::Value>> Interpreter::branch_result(const Block& body, bool takes_rest, const char* which,
                                                             IfShape& shape, const Frame& branch, const Frame& before) {
  const Stmt& s = shape.s;
  TSR_ASSIGN_OR_RETURN(const Flow flow, exec_block(body, 0, takes_rest ? shape.rest : nullptr, shape.rest_start));
  if (shape.returning) {
    if (!flow.returned) return error(s.loc, str_cat("the ", which, " branch of this if does not return on every path"));
    if (shape.returned_shape.kind == K::kNone) shape.returned_shape = flow.value;
    return flatten_result(flow.value, s.loc);
  }
  std::vector<ops::Value> out;
  for (const std::string& n : shape.outputs) {
    auto it = branch.vars.find(n);
    const ScriptValue* v = it != branch.vars.end() ? &it->second : nullptr;
    if (!v) {
      auto g = globals_.vars.find(n);
      if (g != globals_.vars.end()) v = &g->second;
    }
    if (!v || v->kind == K::kUndefined)
      return error(s.loc, str_cat("'", n, "' is not assigned on every path of the ", which, " branch of this if"));
    if (!v->is_tensor() && !v->is_number())
      return error(s.loc, str_cat("'", n, "' is a ", kind_name(v->kind), " assigned in a branch of an if whose "
                                  "condition is a tensor; only tensors and numbers can be If outputs"),
                   StatusCode::kUnsupported);
    // A host number joins as a constant of the variable's dtype before the if, if any.
    DType like = DType::kUndefined;
    auto prior = before.vars.find(n);
    if (prior != before.vars.end() && prior->second.is_tensor() && prior->second.owner == id_)
      like = em_->type(prior->second.v).dtype;
    TSR_ASSIGN_OR_RETURN(ops::Value t, as_tensor(*v, like, s.loc));
    out.push_back(t);
  }
  return out;
}

Expected<Interpreter::Flow> Interpreter::convert_if(const Stmt& s, ops::Value cond, const Block* rest, size_t rest_start,
                                                    bool* consumed_rest) {
  TSR_ASSIGN_OR_RETURN(ops::Value pred, to_bool_scalar(cond, s.cond->loc));
  const std::string at = where(s.loc);
  IfShape shape{s, rest, rest_start};
  TSR_RETURN_IF_ERROR(if_returns(shape));
  if (!shape.returning) if_outputs(shape);
  if (!shape.returning && shape.outputs.empty()) {  // nothing the branches compute survives them: no If
    poison(shape, at);
    return Flow{};
  }
  GraphBuilder& outer = *gb_;
  const std::vector<ops::Value> outs =
      outer.cond(pred, [&](GraphBuilder& b) { return convert_branch(b, s.body, shape.then_takes_rest, "then", shape); },
                 [&](GraphBuilder& b) { return convert_branch(b, s.orelse, shape.else_takes_rest, "else", shape); });
  if (!pending_.ok()) {
    Status st = pending_;
    pending_ = ok_status();
    return st;
  }
  if (!outer.status().ok()) return error(s.loc, outer.status().message(), outer.status().code());

  Flow flow;
  if (shape.returning) {
    *consumed_rest = shape.then_takes_rest || shape.else_takes_rest;
    flow.returned = true;
    if (shape.returned_shape.kind == K::kTuple) {
      ValueList items;
      for (const ops::Value& v : outs) items.push_back(wrap(v));
      flow.value = ScriptValue::tuple(std::move(items));
    } else if (!outs.empty()) {
      flow.value = wrap(outs[0]);
    }
    return flow;
  }
  for (size_t k = 0; k < shape.outputs.size() && k < outs.size(); ++k) frame_->vars[shape.outputs[k]] = wrap(outs[k]);
  poison(shape, at);
  return flow;
}

namespace {

// The variables a loop carries: assigned in the body and defined before it.
struct Carried {
  std::vector<std::string> names;
  std::set<std::string> fresh;  // assigned in the body only: no value after the loop
};

}  // namespace

// Shared by while and for: `cond_expr` null for a for loop; `var` its loop variable.
static Expected<Carried> loop_carried(const Block& body, const std::string& skip,
                                      const std::function<bool(const std::string&)>& defined) {
  if (contains_return(body)) return unsupported("return");
  Carried c;
  std::set<std::string> maybe;
  maybe_assigned(body, &maybe);
  for (const std::string& n : maybe) {
    if (n == skip) continue;
    if (defined(n)) c.names.push_back(n);
    else c.fresh.insert(n);
  }
  return c;
}

Expected<Interpreter::Flow> Interpreter::convert_while(const Stmt& s, ops::Value cond) {
  return convert_loop(&s, cond, nullptr, nullptr, 0);
}

Expected<Interpreter::Flow> Interpreter::convert_for(const Stmt& s, const ScriptValue& start, const ScriptValue& stop,
                                                     int64_t step) {
  return convert_loop(&s, ops::Value{}, &start, &stop, step);
}

Expected<std::vector<ops::Value>> Interpreter::loop_init(const Stmt& s, const char* what,
                                                          const std::vector<std::string>& names,
                                                          std::vector<DType>* dtypes) {
  std::vector<ops::Value> init;
  for (const std::string& n : names) {
    TSR_ASSIGN_OR_RETURN(ScriptValue v, lookup(n, s.loc));
    if (!v.is_tensor() && !v.is_number())
      return error(s.loc, str_cat("'", n, "' is a ", kind_name(v.kind), " changed in a ", what,
                                  " loop that converts to a Loop; only tensors and numbers can be loop-carried"),
                   StatusCode::kUnsupported);
    TSR_ASSIGN_OR_RETURN(ops::Value t, as_tensor(v, DType::kUndefined, s.loc));
    init.push_back(t);
    dtypes->push_back(em_->type(t).dtype);
  }
  return init;
}

Status Interpreter::for_trip_count(const Stmt& s, const ScriptValue& start, const ScriptValue& stop, int64_t step,
                                   ops::Value* n, ops::Value* start_v) {
  auto as_i64 = [&](const ScriptValue& v) -> Expected<ops::Value> {
    TSR_ASSIGN_OR_RETURN(ops::Value t, as_tensor(v, DType::kI64, s.loc));
    const DType d = em_->type(t).dtype;
    if (d == DType::kI64) return t;
    if (!dtype_is_integer(d)) return error(s.loc, str_cat("range() bounds must be integers, not ", dtype_name(d)));
    return emit1("Cast", {t}, s.loc, {ir::Attribute::make_int("to", static_cast<int64_t>(DType::kI64))});
  };
  if (!start.is_tensor() && !stop.is_tensor()) {
    const int64_t a = start.as_int(), b = stop.as_int();
    const int64_t count = step > 0 ? (b > a ? (b - a + step - 1) / step : 0) : (a > b ? (a - b - step - 1) / -step : 0);
    *n = em_->constant(Tensor::scalar<int64_t>(count));
  } else {
    TSR_ASSIGN_OR_RETURN(ops::Value a, as_i64(start));
    TSR_ASSIGN_OR_RETURN(ops::Value b, as_i64(stop));
    TSR_ASSIGN_OR_RETURN(ops::Value diff, emit1(step > 0 ? "Sub" : "Sub", {step > 0 ? b : a, step > 0 ? a : b}, s.loc));
    const int64_t st = step > 0 ? step : -step;
    TSR_ASSIGN_OR_RETURN(ops::Value up, emit1("Add", {diff, em_->constant(Tensor::scalar<int64_t>(st - 1))}, s.loc));
    TSR_ASSIGN_OR_RETURN(ops::Value q, emit1("Div", {up, em_->constant(Tensor::scalar<int64_t>(st))}, s.loc));
    TSR_ASSIGN_OR_RETURN(*n, emit1("Max", {q, em_->constant(Tensor::scalar<int64_t>(0))}, s.loc));
    TSR_ASSIGN_OR_RETURN(ops::Value rs, emit1("Reshape", {*n, em_->constant(Tensor::from<int64_t>({0}, {}))}, s.loc));
    *n = rs;
  }
  if (start.is_tensor() || start.as_int() != 0) {
    TSR_ASSIGN_OR_RETURN(*start_v, as_i64(start));
  }
  return ok_status();
}

void Interpreter::undefine_after_loop(const Stmt& s, const char* what, const std::set<std::string>& fresh,
                                      bool is_for) {
  const std::string at = where(s.loc);
  for (const std::string& nm : fresh)
    frame_->vars[nm] = ScriptValue::undefined(
        str_cat("'", nm, "' is first assigned inside the ", what, " loop at ", at,
                ", which converts to a Loop, so it has no value after the loop; assign it before the loop"));
  if (is_for)
    frame_->vars[s.var] = ScriptValue::undefined(
        str_cat("the loop variable '", s.var, "' of the converted for loop at ", at, " has no value after the loop"));
}

Expected<Interpreter::Flow> Interpreter::convert_loop(const Stmt* sp, ops::Value cond0, const ScriptValue* start,
                                                      const ScriptValue* stop, int64_t step) {
  const Stmt& s = *sp;
  const bool is_for = start != nullptr;
  const char* what = is_for ? "for" : "while";
  auto defined = [&](const std::string& n) {
    auto it = frame_->vars.find(n);
    if (it != frame_->vars.end()) return it->second.kind != K::kUndefined;
    auto g = globals_.vars.find(n);
    return g != globals_.vars.end() && g->second.kind != K::kUndefined && g->second.kind != K::kFunction;
  };
  auto carried_or = loop_carried(s.body, is_for ? s.var : std::string(), defined);
  if (!carried_or.ok())
    return error(s.loc, str_cat("return inside a ", what, " loop that converts to a Loop is not supported"),
                 StatusCode::kUnsupported);
  const Carried carried = std::move(carried_or).value();

  std::vector<DType> dtypes;
  TSR_ASSIGN_OR_RETURN(const std::vector<ops::Value> init, loop_init(s, what, carried.names, &dtypes));
  ops::Value n, start_v;
  if (is_for) {
    TSR_RETURN_IF_ERROR(for_trip_count(s, *start, *stop, step, &n, &start_v));
  } else {
    TSR_ASSIGN_OR_RETURN(cond0, to_bool_scalar(cond0, s.cond->loc));
  }

  GraphBuilder& outer = *gb_;
  Frame body_frame;  // the body's frame, kept for the condition evaluated after it
  auto enter = [&](GraphBuilder& b, Frame* f) {
    struct Saved { ops::Emitter* em; ops::GraphBuilder* gb; Frame* frame; };
    Saved sv{em_, gb_, frame_};
    em_ = gb_ = &b;
    frame_ = f;
    return sv;
  };
  auto body_fn = [&](GraphBuilder& b, ops::Value iter, const std::vector<ops::Value>& vars) -> std::vector<ops::Value> {
    std::vector<ops::Value> out;
    if (!pending_.ok()) return out;
    body_frame = *frame_;
    auto sv = enter(b, &body_frame);
    auto finish = [&](Status st) {
      em_ = sv.em;
      gb_ = sv.gb;
      frame_ = sv.frame;
      if (!st.ok() && pending_.ok()) pending_ = st;
    };
    for (size_t k = 0; k < carried.names.size(); ++k) body_frame.vars[carried.names[k]] = wrap(vars[k]);
    if (is_for) {
      ops::Value i = iter;
      if (step != 1) {
        auto m = emit1("Mul", {iter, em_->constant(Tensor::scalar<int64_t>(step))}, s.loc);
        if (!m.ok()) return finish(m.status()), out;
        i = *m;
      }
      if (start_v.valid()) {
        auto a = emit1("Add", {i, start_v}, s.loc);
        if (!a.ok()) return finish(a.status()), out;
        i = *a;
      }
      body_frame.vars[s.var] = wrap(i);
    }
    auto flow = exec_block(s.body);
    if (!flow.ok()) return finish(flow.status()), out;
    for (size_t k = 0; k < carried.names.size(); ++k) {
      const ScriptValue& v = body_frame.vars[carried.names[k]];
      auto t = as_tensor(v, dtypes[k], s.loc);
      if (!t.ok()) return finish(t.status()), out;
      body_frame.vars[carried.names[k]] = wrap(*t);
      out.push_back(*t);
    }
    finish(ok_status());
    return out;
  };
  std::vector<ops::Value> outs;
  if (is_for) {
    outs = outer.fori_loop(n, body_fn, init);
  } else {
    auto cond_fn = [&](GraphBuilder& b, const std::vector<ops::Value>&) -> ops::Value {
      if (&b == &outer) return cond0;  // the condition before the first iteration, evaluated already
      if (!pending_.ok()) return ops::Value{};
      auto sv = enter(b, &body_frame);
      auto c = eval(*s.cond);
      Expected<ops::Value> p = c.ok() ? (c->is_tensor() ? to_bool_scalar(c->v, s.cond->loc)
                                                        : Expected<ops::Value>(as_tensor(*c, DType::kBool, s.cond->loc)))
                                      : Expected<ops::Value>(c.status());
      em_ = sv.em;
      gb_ = sv.gb;
      frame_ = sv.frame;
      if (!p.ok()) {
        if (pending_.ok()) pending_ = p.status();
        return ops::Value{};
      }
      return *p;
    };
    outs = outer.while_loop(cond_fn, body_fn, init);
  }
  if (!pending_.ok()) {
    Status st = pending_;
    pending_ = ok_status();
    return st;
  }
  if (!outer.status().ok()) return error(s.loc, outer.status().message(), outer.status().code());
  for (size_t k = 0; k < carried.names.size() && k < outs.size(); ++k) frame_->vars[carried.names[k]] = wrap(outs[k]);
  undefine_after_loop(s, what, carried.fresh, is_for);
  return Flow{};
}

}  // namespace tsr::frontend::script
