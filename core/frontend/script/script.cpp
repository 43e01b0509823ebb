#include "core/frontend/script/script.h"

#include <algorithm>
#include <set>

#include "tessera/session.h"
#include "core/passes/verify_model.h"

#include "core/frontend/eager_emitter.h"
#include "core/frontend/tracer.h"

namespace tsr::frontend::script {
namespace {

class EagerTarget final : public ScriptTarget {
 public:
  explicit EagerTarget(EagerEmitter* external) : eager_(external ? external : &own_) {}
  Mode mode() const override { return Mode::kEager; }
  ops::Emitter& emitter() override { return *eager_; }
  EagerEmitter& eager() { return *eager_; }

 private:
  EagerEmitter own_;
  EagerEmitter* eager_;
};

class TraceTarget final : public ScriptTarget {
 public:
  explicit TraceTarget(ir::Model& model) : tracer_(model) {}
  Mode mode() const override { return Mode::kTrace; }
  ops::Emitter& emitter() override { return tracer_; }
  Tracer& tracer() { return tracer_; }
  Expected<bool> decide(ops::Value cond, const std::string& where) override {
    const Tensor* t = tracer_.known_value(cond);
    if (!t) return invalid_argument(where, ": the condition's value is not known");
    if (t->numel() != 1)
      return invalid_argument(where, ": the truth value of a tensor with ", t->numel(), " elements is ambiguous");
    const size_t before = tracer_.warnings().size();
    const bool taken = tracer_.decide(cond, where);
    // The tracer's warning is "<where>: text"; as a diagnostic it reads "<where>: warning: text".
    for (size_t k = before; k < tracer_.warnings().size(); ++k) {
      const std::string& w = tracer_.warnings()[k];
      const size_t skip = w.rfind(where + ": ", 0) == 0 ? where.size() + 2 : 0;
      warnings_.push_back(str_cat(where, ": warning: ", w.substr(skip)));
    }
    return taken;
  }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Tracer tracer_;
  std::vector<std::string> warnings_;
};

// The target of options.mode; `model` receives the model a trace or a conversion builds.
std::unique_ptr<ScriptTarget> make_target(const ScriptOptions& options, std::shared_ptr<ir::Model>* model) {
  switch (options.mode) {
    case Mode::kConvert:
      *model = std::make_shared<ir::Model>();
      return std::make_unique<GraphTarget>(**model);
    case Mode::kEager:
      return std::make_unique<EagerTarget>(options.eager);
    case Mode::kTrace:
      *model = std::make_shared<ir::Model>();
      return std::make_unique<TraceTarget>(**model);
  }
  return nullptr;
}

Expected<const FunctionDef*> find_entry(Interpreter& interp, const Module& module, const std::string& file_name,
                                        const std::string& entry) {
  const FunctionDef* fn = interp.find_function(entry);
  if (fn) return fn;
  std::string defs;
  for (const StmtPtr& s : module.body)
    if (s->kind == StmtKind::kDef) defs += str_cat(defs.empty() ? "" : ", ", s->def->name);
  return not_found(file_name, ": no function '", entry, "' (functions: ", defs.empty() ? "none" : defs, ")");
}

// The entry's arguments: the given inputs by parameter name (the rest take their defaults).
struct Arguments {
  std::vector<std::pair<std::string, Tensor>> ordered;  // the inputs in parameter order
  std::vector<std::pair<std::string, ScriptValue>> kwargs;  // parallel to ordered
  std::vector<Tensor> feeds;                                // parallel to ordered: the graph inputs
};

// Input `name`'s value in the target: a graph input (convert; with its dynamic axes), a wrapped
// eager tensor, or a traced input.
Expected<ops::Value> input_value(ScriptTarget& target, const ScriptOptions& options, const std::string& name,
                                 const Tensor& value) {
  switch (options.mode) {
    case Mode::kConvert: {
      Shape shape = value.shape();
      auto dyn = options.dynamic_axes.find(name);
      if (dyn != options.dynamic_axes.end())
        for (int64_t axis : dyn->second) {
          const int64_t a = axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis;
          if (a < 0 || a >= static_cast<int64_t>(shape.size()))
            return invalid_argument("--dynamic ", name, ":", axis, ": ", name, " has rank ", shape.size());
          shape[static_cast<size_t>(a)] = -1;
        }
      return target.builder()->input(name, value.dtype(), shape);
    }
    case Mode::kEager:
      return static_cast<EagerTarget&>(target).eager().wrap(
          value, std::find(options.requires_grad.begin(), options.requires_grad.end(), name) !=
                     options.requires_grad.end());
    case Mode::kTrace:
      return static_cast<TraceTarget&>(target).tracer().input(name, value);
  }
  return ops::Value();
}

Expected<Arguments> bind_arguments(Interpreter& interp, ScriptTarget& target, const FunctionDef& fn,
                                   const ScriptOptions& options) {
  Arguments args;
  // Graph inputs follow the parameter order.
  for (const Param& q : fn.params)
    for (const auto& in : options.inputs)
      if (in.first == q.name) args.ordered.push_back(in);
  for (const auto& in : options.inputs)
    if (std::none_of(args.ordered.begin(), args.ordered.end(), [&](const auto& o) { return o.first == in.first; }))
      args.ordered.push_back(in);
  for (const auto& [name, value] : args.ordered) {
    const Param* p = nullptr;
    for (const Param& q : fn.params)
      if (q.name == name) p = &q;
    if (!p) {
      std::string params;
      for (const Param& q : fn.params) params += str_cat(params.empty() ? "" : ", ", q.name);
      return not_found("--input ", name, ": ", fn.name, "() has no parameter '", name, "' (its parameters: ",
                       params.empty() ? "none" : params, ")");
    }
    TSR_ASSIGN_OR_RETURN(const ops::Value v, input_value(target, options, name, value));
    args.feeds.push_back(value);
    args.kwargs.emplace_back(name, interp.tensor_arg(v));
  }
  for (const auto& [name, axes] : options.dynamic_axes) {
    bool given = false;
    for (const auto& in : options.inputs) given |= in.first == name;
    if (!given) return invalid_argument("--dynamic ", name, ": no --input ", name, " was given");
  }
  return args;
}

// Eager: the results' values, and the inputs' (for gradients) in options.inputs order.
Status finish_eager(const ScriptOptions& options, const Arguments& args, const std::vector<ops::Value>& values,
                    ops::Emitter& em, ScriptResult& result) {
  result.output_values = values;
  for (const auto& in : options.inputs)
    for (size_t k = 0; k < args.ordered.size(); ++k)
      if (args.ordered[k].first == in.first) result.input_values.push_back(args.kwargs[k].second.v);
  for (const ops::Value& v : values) {
    const Tensor* t = em.known_value(v);
    if (!t) return internal_error("an eager result without a value");
    result.outputs.push_back(*t);
  }
  return ok_status();
}

// Trace: the results' values, the traced graph's outputs, the tracer's warnings first.
Status finish_trace(TraceTarget& target, const std::shared_ptr<ir::Model>& model,
                    const std::vector<ops::Value>& values, ScriptResult& result) {
  Tracer& tr = target.tracer();
  for (size_t k = 0; k < values.size(); ++k) {
    const Tensor* t = target.emitter().known_value(values[k]);
    if (!t) return internal_error("a traced result without a value");
    result.outputs.push_back(*t);
    tr.output(values[k], result.output_names[k]);
  }
  if (!tr.status().ok()) return tr.status();
  std::vector<std::string> w = target.warnings();
  w.insert(w.end(), result.warnings.begin(), result.warnings.end());
  result.warnings = std::move(w);
  TSR_RETURN_IF_ERROR(passes::verify_model(*model));
  result.model = model;
  return ok_status();
}

// Convert: name the outputs (an Identity where a result is an input or repeats a result, so
// that naming one renames nothing else), check the graph and run it on the given inputs.
Status finish_convert(ops::GraphBuilder& b, const std::shared_ptr<ir::Model>& model, const std::vector<Tensor>& feeds,
                      const std::vector<ops::Value>& values, ScriptResult& result) {
  std::set<int32_t> used(b.graph().inputs.begin(), b.graph().inputs.end());
  for (size_t k = 0; k < values.size(); ++k) {
    ops::Value v = values[k];
    if (used.count(v.id) || b.graph().tensors[static_cast<size_t>(v.id)].constant.defined())
      v = b.op("Identity", {v});
    used.insert(v.id);
    b.output(v, result.output_names[k]);
  }
  if (!b.status().ok()) return b.status();
  TSR_RETURN_IF_ERROR(passes::verify_model(*model));
  result.model = model;
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(model));
  auto out = session->run(feeds);
  if (!out.ok()) return out.status().with_context("running the converted graph");
  result.outputs = std::move(out).value();
  return ok_status();
}

}  // namespace

std::vector<std::string> result_names(const FunctionDef& fn, size_t count) {
  std::vector<std::string> names;
  for (const StmtPtr& s : fn.body) {
    if (s->kind != StmtKind::kReturn || !s->value) continue;
    const Expr& v = *s->value;
    if (count == 1 && v.kind == ExprKind::kName) names = {v.name};
    if (v.kind == ExprKind::kTuple && v.items.size() == count) {
      names.clear();
      for (const ExprPtr& x : v.items) names.push_back(x->kind == ExprKind::kName ? x->name : "");
    }
  }
  names.resize(count);
  std::set<std::string> seen;
  for (const Param& p : fn.params) seen.insert(p.name);  // an output named like an input would clash
  for (size_t k = 0; k < count; ++k)
    if (names[k].empty() || !seen.insert(names[k]).second) names[k] = str_cat("output_", k);
  return names;
}

Expected<ScriptResult> run_script(const std::string& file_name, const std::string& text, const ScriptOptions& options) {
  TSR_ASSIGN_OR_RETURN(Module module, parse_module(file_name, text));
  InterpreterOptions io;
  io.unroll = options.unroll;
  io.out = options.out;
  io.max_host_iterations = options.max_host_iterations;
  std::shared_ptr<ir::Model> model;
  std::unique_ptr<ScriptTarget> target = make_target(options, &model);
  Interpreter interp(module, *target, io);
  TSR_RETURN_IF_ERROR(interp.run_module());
  TSR_ASSIGN_OR_RETURN(const FunctionDef* fn, find_entry(interp, module, file_name, options.entry));
  TSR_ASSIGN_OR_RETURN(const Arguments args, bind_arguments(interp, *target, *fn, options));

  TSR_ASSIGN_OR_RETURN(ScriptValue r, interp.call(*fn, {}, fn->loc, args.kwargs));
  TSR_ASSIGN_OR_RETURN(std::vector<ops::Value> values, interp.flatten_result(r, fn->loc));
  ScriptResult result;
  result.output_names = result_names(*fn, values.size());
  result.warnings = interp.warnings();
  switch (options.mode) {
    case Mode::kEager:
      TSR_RETURN_IF_ERROR(finish_eager(options, args, values, target->emitter(), result));
      break;
    case Mode::kTrace:
      TSR_RETURN_IF_ERROR(finish_trace(static_cast<TraceTarget&>(*target), model, values, result));
      break;
    case Mode::kConvert:
      TSR_RETURN_IF_ERROR(finish_convert(*target->builder(), model, args.feeds, values, result));
      break;
  }
  return result;
}

}  // namespace tsr::frontend::script
