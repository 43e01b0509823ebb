// @static functions called from eager or traced code (MindSpore's ms_function): the function is
// converted once per argument signature (dtypes, shapes and host argument values) into a graph,
// like convert mode would, then
//  - eager: the graph runs through a Session as one call; its results are wrapped back as eager
//    values (so the eager tape does not see inside it);
//  - trace: the graph's nodes are replayed through the tracer, so the trace records the static
//    function's ops; a graph with If/Loop cannot be replayed through an Emitter, so the body is
//    then traced like ordinary code (with the tracer's warnings).
#include "tessera/session.h"
#include "core/frontend/script/interpreter.h"
#include "core/passes/verify_model.h"

namespace tsr::frontend::script {

Expected<ScriptValue> Interpreter::call_static(const FunctionDef& fn, const ValueList& args, Loc loc) {
  using K = ScriptValue::Kind;
  std::string key = fn.name;
  for (const ScriptValue& a : args) {
    if (a.is_tensor()) key += "|" + em_->type(a.v).str();
    else if (a.is_number() || a.kind == K::kString || a.kind == K::kNone) key += "|=" + format(a);
    else return error(loc, str_cat("a @static function takes tensors and host numbers, not a ", kind_name(a.kind)));
  }
  std::unique_ptr<StaticEntry>& entry = static_cache_[key];
  if (!entry) {
    auto e = std::make_unique<StaticEntry>();
    e->model = std::make_shared<ir::Model>();
    GraphTarget target(*e->model);
    InterpreterOptions o = options_;
    o.unroll = true;
    Interpreter conv(module_, target, o);
    conv.outer_ = this;
    ValueList cargs;
    for (size_t k = 0; k < args.size(); ++k) {
      if (!args[k].is_tensor()) {
        cargs.push_back(args[k]);
        continue;
      }
      const ops::ValueType t = em_->type(args[k].v);
      cargs.push_back(conv.wrap(target.builder()->input(fn.params[k].name, t.dtype, t.shape)));
      e->tensor_args.push_back(k);
    }
    TSR_ASSIGN_OR_RETURN(ScriptValue r, conv.call(fn, cargs, loc));
    e->returns_tuple = r.kind == K::kTuple;
    TSR_ASSIGN_OR_RETURN(std::vector<ops::Value> outs, conv.flatten_result(r, loc));
    for (size_t k = 0; k < outs.size(); ++k) {
      ops::Value v = outs[k];
      // Outputs that are inputs themselves get an Identity so that naming them renames nothing.
      TSR_ASSIGN_OR_RETURN(v, conv.emit1("Identity", {v}, loc));
      target.builder()->output(v, str_cat(fn.name, "_out", k));
    }
    if (!target.builder()->status().ok()) return error(loc, target.builder()->status().message());
    e->num_outputs = outs.size();
    e->has_control_flow = e->model->graphs.size() > 1;
    TSR_RETURN_IF_ERROR(passes::verify_model(*e->model).with_context(str_cat("@static ", fn.name)));
    if (target_.mode() == Mode::kEager) {
      TSR_ASSIGN_OR_RETURN(e->session, Session::create(e->model));
    }
    entry = std::move(e);
  }
  StaticEntry& e = *entry;
  ValueList results;
  if (target_.mode() == Mode::kEager) {
    std::vector<Tensor> feeds;
    for (size_t k : e.tensor_args) {
      const Tensor* t = em_->known_value(args[k].v);
      if (!t) return error(loc, "internal error: an eager argument without a value");
      feeds.push_back(*t);
    }
    auto out = e.session->run(feeds);
    if (!out.ok()) return error(loc, str_cat("@static ", fn.name, ": ", out.status().message()), out.status().code());
    for (Tensor& t : *out) results.push_back(wrap(em_->constant(std::move(t))));
  } else if (!e.has_control_flow) {
    // Replay the graph's nodes through this emitter (the tracer records them).
    const ir::Graph& g = e.model->main();
    std::map<int32_t, ops::Value> ids;
    for (size_t k = 0; k < e.tensor_args.size(); ++k) ids[g.inputs[k]] = args[e.tensor_args[k]].v;
    auto value_of = [&](int32_t id) -> ops::Value {
      if (id < 0) return ops::Value{};
      auto it = ids.find(id);
      if (it != ids.end()) return it->second;
      const ops::Value c = em_->constant(g.tensors[static_cast<size_t>(id)].constant);
      ids[id] = c;
      return c;
    };
    for (const ir::Node& n : g.nodes) {
      std::vector<ops::Value> ins;
      for (int32_t id : n.inputs) ins.push_back(value_of(id));
      TSR_ASSIGN_OR_RETURN(std::vector<ops::Value> outs, emit(n.op, ins, n.outputs.size(), n.attributes, loc));
      for (size_t k = 0; k < outs.size(); ++k) ids[n.outputs[k]] = outs[k];
    }
    for (int32_t id : g.outputs) results.push_back(wrap(value_of(id)));
  } else {
    warnings_.push_back(module_.source->diagnostic(
        loc, str_cat("@static ", fn.name, " has control flow, which a trace cannot hold; its body is traced as "
                     "ordinary code"), "warning"));
    bypass_static_ = true;
    auto r = call_function(fn, args, {}, loc);
    bypass_static_ = false;
    return r;
  }
  if (e.returns_tuple) return ScriptValue::tuple(std::move(results));
  if (results.empty()) return ScriptValue::none();
  return results[0];
}

}  // namespace tsr::frontend::script
