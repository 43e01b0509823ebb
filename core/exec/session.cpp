// tsr::Session (core/include/tessera/session.h); optimized_model and evaluate_node
// (core/exec/optimized_model.h).
#include "tessera/session.h"

#include <algorithm>
#include <limits>

#include "core/base/thread_pool.h"
#include "core/exec/plan.h"
#include "core/ir/single_node.h"
#include "core/passes/verify_model.h"

// A minimal runtime (mobile/selective) has no optimizer: it runs graphs as loaded.
#ifndef TSR_HAVE_OPTIMIZER
#define TSR_HAVE_OPTIMIZER 1
#endif
#if TSR_HAVE_OPTIMIZER
#include "core/exec/optimized_model.h"
#endif

namespace tsr {
namespace {

// The device backend nodes are placed on (null: everything on the host backend).
Expected<std::unique_ptr<exec::DeviceBackend>> choose_device(const SessionOptions& options) {
  if (options.device == "auto") {
    for (const std::string& name : exec::available_device_backends()) {
      if (name == "null") continue;  // a test device, never chosen automatically
      auto dev = exec::create_device_backend(name);
      if (dev.ok()) return std::move(dev).value();
    }
    return std::unique_ptr<exec::DeviceBackend>();
  }
  if (options.device.empty() || options.device == options.backend || options.device == "cpu")
    return std::unique_ptr<exec::DeviceBackend>();
  return exec::create_device_backend(options.device);
}

// The graph that runs: `model` as is, or its inference-optimized copy (core/passes/optimize.h)
// when the options ask for it and every node runs on the CPU backend.
Expected<std::shared_ptr<const ir::Model>> graph_to_run(const Model& model, const SessionOptions& options,
                                                        bool on_device) {
  if (options.optimization == OptimizationLevel::kNone || on_device || options.backend != "cpu")
    return model.graph_ptr();
#if TSR_HAVE_OPTIMIZER
  return optimized_model(model.graph(), options.skip_passes);
#else
  return model.graph_ptr();
#endif
}

std::string input_names(const std::vector<ValueInfo>& inputs) {
  std::string s;
  for (const ValueInfo& v : inputs) s += str_cat(s.empty() ? "" : ", ", v.name);
  return s.empty() ? "none" : s;
}

}  // namespace

Session::Session() = default;
Session::~Session() = default;

Expected<std::unique_ptr<Session>> Session::create(const Model& model, const SessionOptions& options) {
  if (model.empty()) return invalid_argument("session needs a model with a graph");
  if (options.max_loop_iterations < 0)
    return invalid_argument("max_loop_iterations ", options.max_loop_iterations, " (expected >= 0; 0 = unlimited)");
  auto s = std::unique_ptr<Session>(new Session());
  s->model_ = model;
  TSR_ASSIGN_OR_RETURN(s->backend_, exec::create_backend(options.backend));
  exec::Backend* backend = s->backend_.get();
  s->pool_ = std::make_unique<ThreadPool>(options.num_threads, [backend] { backend->prepare_thread(); });
  backend->prepare_thread();  // the creating thread, which runs kernels too
  // A limit past the address space (4 GiB and up on a 32-bit target) is no limit: clamped, not
  // truncated (1 << 32 became 0 bytes on armv7).
  s->memory_budget_ = std::make_shared<MemoryBudget>(
      options.max_memory_bytes
          ? static_cast<size_t>(std::min<uint64_t>(options.max_memory_bytes, std::numeric_limits<size_t>::max()))
          : default_memory_limit());
  TSR_ASSIGN_OR_RETURN(s->device_, choose_device(options));
  TSR_ASSIGN_OR_RETURN(s->running_, graph_to_run(model, options, s->device_ != nullptr));
  s->plan_options_ = std::make_unique<exec::PlanOptions>();
  s->plan_options_->max_loop_iterations = options.max_loop_iterations;
  s->plan_options_->inter_op = options.inter_op;
  s->plan_options_->fast_math = options.fast_math;
  s->plan_options_->device = s->device_.get();
  // Prepare the main graph now so that missing kernels are reported at creation, all at once.
  TSR_ASSIGN_OR_RETURN(auto plan, exec::Plan::create(*s->running_, 0, *s->backend_, *s->plan_options_));
  s->plans_[0] = std::move(plan);
  for (const auto& v : s->running_->variables) s->variables_[v.name] = v.value;
  return s;
}

void Session::enable_profiling() {
  if (!profiler_) profiler_ = std::make_unique<exec::Profiler>();
  plans_.at(0)->set_profiler(profiler_.get());
}

std::string Session::profile_report(size_t top) const { return profiler_ ? profiler_->report(top) : std::string(); }

PlacementSummary Session::placement() const {
  const exec::Plan& plan = *plans_.at(0);
  return {device_ ? std::string(device_->name()) : std::string(), plan.device_nodes(), running_->main().nodes.size(),
          plan.copies()};
}

Expected<std::vector<Tensor>> Session::bind(const NamedTensors& named) const {
  const std::vector<ValueInfo>& wanted = inputs();
  std::vector<Tensor> ordered(wanted.size());
  std::vector<bool> given(wanted.size(), false);
  for (const auto& [name, value] : named) {
    size_t k = 0;
    while (k < wanted.size() && wanted[k].name != name) ++k;
    if (k == wanted.size())
      return not_found("the model has no input named \"", name, "\" (inputs: ", input_names(wanted), ")");
    if (given[k]) return invalid_argument("input[", k, "] \"", name, "\" is given twice");
    given[k] = true;
    ordered[k] = value;
  }
  std::string missing;
  size_t n_missing = 0;
  for (size_t k = 0; k < wanted.size(); ++k)
    if (!given[k]) missing += str_cat(n_missing++ ? ", " : "", "input[", k, "] \"", wanted[k].name, "\"");
  if (n_missing)
    return invalid_argument(missing, n_missing == 1 ? " is" : " are", " missing (inputs: ", input_names(wanted), ")");
  return ordered;
}

Expected<NamedTensors> Session::run(const NamedTensors& named) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> ordered, bind(named));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> outs, run(ordered));
  const std::vector<ValueInfo>& names = outputs();
  if (outs.size() != names.size())
    return internal_error("the session returned ", outs.size(), " outputs for the model's ", names.size());
  NamedTensors result;
  result.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) result.emplace_back(names[i].name, std::move(outs[i]));
  return result;
}

Expected<std::vector<Tensor>> Session::run(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs;
  TSR_RETURN_IF_ERROR(run(inputs, &outputs));
  return outputs;
}

Status Session::run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
  for (const auto& sig : running_->signatures)
    if (sig.graph == 0 && (!sig.bound_inputs.empty() || !sig.updates.empty())) return run_bound(sig, inputs, outputs);
  return run_graph(0, inputs, outputs);
}

Expected<std::vector<Tensor>> Session::run_signature(std::string_view name, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs;
  TSR_RETURN_IF_ERROR(run_signature(name, inputs, &outputs));
  return outputs;
}

Status Session::run_signature(std::string_view name, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
  for (const auto& sig : running_->signatures)
    if (sig.name == name) return run_bound(sig, inputs, outputs);
  outputs->clear();
  std::string names;  // only on the error path: a found signature builds no string
  for (const auto& sig : running_->signatures) names += str_cat(names.empty() ? "" : ", ", sig.name);
  return not_found("no signature \"", name, "\" (the model has: ", names.empty() ? "none" : names, ")");
}

Status Session::run_graph(int32_t gi, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
  auto it = plans_.find(gi);
  if (it == plans_.end()) {
    TSR_ASSIGN_OR_RETURN(auto plan, exec::Plan::create(*running_, gi, *backend_, *plan_options_));
    it = plans_.emplace(gi, std::move(plan)).first;
  }
  MemoryBudgetScope budget(memory_budget_);
  Status st = it->second->run(inputs, *pool_, outputs);
  if (gi != 0 || st.code() != StatusCode::kInvalidArgument || st.message().rfind("input[", 0) == 0) return st;
  // A node rejected values that follow from the inputs (runtime shape inference, a kernel's check):
  // name the inputs whose dims the caller chose, e.g. `input "x" f32[1, 3, 48, 1] does not fit the
  // model: graph[0].node[25] (AveragePool "pool"): window 2 ... exceeds the padded input 1 ...`.
  const ir::Graph& g = running_->graphs[0];
  std::string named;
  size_t count = 0;
  for (int pass = 0; pass < 2 && count == 0; ++pass)  // dynamic inputs first; else all of them
    for (size_t k = 0; k < inputs.size() && k < g.inputs.size(); ++k) {
      const ir::TensorInfo& info = g.tensors[static_cast<size_t>(g.inputs[k])];
      const bool dynamic = !info.has_shape || std::any_of(info.shape.begin(), info.shape.end(), [](int64_t d) { return d < 0; });
      if ((pass == 0 && !dynamic) || inputs[k].kind() != ValueKind::kTensor) continue;
      named += str_cat(count++ ? ", " : "", "\"", info.name, "\" ", dtype_name(inputs[k].dtype()), shape_str(inputs[k].shape()));
    }
  if (count == 0) return st;
  return Status(st.code(), str_cat(count == 1 ? "input " : "inputs ", named, count == 1 ? " does" : " do",
                                   " not fit the model: ", st.message()));
}

Status Session::run_bound(const ir::Signature& sig, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
  if (sig.bound_inputs.empty() && sig.updates.empty()) return run_graph(sig.graph, inputs, outputs);
  outputs->clear();
  const ir::Graph& g = running_->graphs[static_cast<size_t>(sig.graph)];
  auto is_bound = [&](size_t k) { return !sig.bound_inputs.empty() && !sig.bound_inputs[k].empty(); };
  size_t wanted = 0;
  for (size_t k = 0; k < g.inputs.size(); ++k) wanted += !is_bound(k);
  if (inputs.size() != wanted)
    return invalid_argument("signature \"", sig.name, "\": ", inputs.size(), " inputs given, it takes ", wanted,
                            wanted == g.inputs.size() ? "" : " (the others are bound to variables)");
  // The scratch vectors keep their capacity; their tensors are dropped after the run so that the
  // session holds no reference to the caller's inputs or to replaced variable values.
  bound_inputs_.clear();
  for (size_t k = 0, next = 0; k < g.inputs.size(); ++k)
    bound_inputs_.push_back(is_bound(k) ? variables_.at(sig.bound_inputs[k]) : inputs[next++]);
  std::vector<Tensor>& outs = sig.updates.empty() ? *outputs : bound_outputs_;
  Status st = run_graph(sig.graph, bound_inputs_, &outs);
  bound_inputs_.clear();
  if (!st.ok() || sig.updates.empty()) {
    bound_outputs_.clear();
    return st;
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    if (sig.updates[k].empty()) outputs->push_back(std::move(outs[k]));
    else variables_[sig.updates[k]] = std::move(outs[k]);
  }
  bound_outputs_.clear();
  return ok_status();
}

const Tensor* Session::variable(std::string_view name) const {
  auto it = variables_.find(name);
  return it == variables_.end() ? nullptr : &it->second;
}

Status Session::set_variable(std::string_view name, Tensor value) {
  auto it = variables_.find(name);
  if (it == variables_.end()) return not_found("no variable \"", name, "\"");
  if (value.dtype() != it->second.dtype() || value.shape() != it->second.shape())
    return invalid_argument("variable \"", name, "\" is ", dtype_name(it->second.dtype()), shape_str(it->second.shape()),
                            ", the new value is ", dtype_name(value.dtype()), shape_str(value.shape()));
  it->second = std::move(value);
  return ok_status();
}

ir::Model Session::snapshot() const {
  ir::Model m = model_.graph();
  for (auto& v : m.variables) v.value = variables_.at(v.name);
  return m;
}

#if TSR_HAVE_OPTIMIZER
Expected<std::shared_ptr<const ir::Model>> optimized_model(const ir::Model& model,
                                                           const std::vector<std::string>& skip_passes,
                                                           passes::OptimizeReport* report) {
  passes::OptimizeOptions options;
  options.evaluate = evaluate_node;  // constant folding with the CPU kernels
  for (const std::string& p : skip_passes) TSR_RETURN_IF_ERROR(passes::disable_pass(options, p));
  auto copy = std::make_shared<ir::Model>(model);  // constants share their storage: cheap
  TSR_ASSIGN_OR_RETURN(passes::OptimizeReport r, passes::optimize(*copy, options));
  if (report) *report = std::move(r);
  return std::shared_ptr<const ir::Model>(std::move(copy));
}

Expected<std::vector<Tensor>> evaluate_node(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  if (inputs.size() != node.inputs.size())
    return invalid_argument("evaluate_node: ", inputs.size(), " values for ", node.inputs.size(), " inputs");
  for (const ir::Attribute& a : node.attributes)
    if (a.kind == ir::AttrKind::kGraph || a.kind == ir::AttrKind::kGraphs)
      return unsupported("evaluate_node: ", node.op, " has subgraphs");
  std::vector<ir::NodeInput> values(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k]) values[k] = {*inputs[k], true};
  auto model = std::make_shared<ir::Model>(ir::single_node_model(node, values).model);
  TSR_RETURN_IF_ERROR(passes::verify_model(*model));
  SessionOptions options;
  options.optimization = OptimizationLevel::kNone;  // this is the optimizer's own evaluator
  TSR_ASSIGN_OR_RETURN(auto session, Session::create(std::move(model), options));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> present, session->run(std::vector<Tensor>{}));
  std::vector<Tensor> out(node.outputs.size());
  for (size_t k = 0, j = 0; k < node.outputs.size(); ++k)
    if (node.outputs[k] >= 0) out[k] = std::move(present[j++]);
  return out;
}
#endif  // TSR_HAVE_OPTIMIZER

}  // namespace tsr
