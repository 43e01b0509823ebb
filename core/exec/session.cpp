#include "core/exec/session.h"

#include <algorithm>
#include <limits>

#include "core/passes/verify_model.h"

namespace tsr {

Expected<std::unique_ptr<Session>> Session::create(std::shared_ptr<const ir::Model> model,
                                                   const SessionOptions& options) {
  if (!model || model->graphs.empty()) return invalid_argument("session needs a model with a graph");
  auto s = std::unique_ptr<Session>(new Session());
  s->model_ = std::move(model);
  TSR_ASSIGN_OR_RETURN(s->backend_, exec::create_backend(options.backend));
  exec::Backend* backend = s->backend_.get();
  s->pool_ = std::make_unique<ThreadPool>(options.num_threads, [backend] { backend->prepare_thread(); });
  backend->prepare_thread();  // the creating thread, which runs kernels too
  if (options.max_loop_iterations < 0)
    return invalid_argument("max_loop_iterations ", options.max_loop_iterations, " (expected >= 0; 0 = unlimited)");
  s->plan_options_.max_loop_iterations = options.max_loop_iterations;
  s->plan_options_.inter_op = options.inter_op;
  // A limit past the address space (4 GiB and up on a 32-bit target) is no limit: clamped, not
  // truncated (1 << 32 became 0 bytes on armv7).
  s->memory_budget_ = std::make_shared<MemoryBudget>(
      options.max_memory_bytes
          ? static_cast<size_t>(std::min<uint64_t>(options.max_memory_bytes, std::numeric_limits<size_t>::max()))
          : default_memory_limit());
  if (options.device == "auto") {
    for (const std::string& name : exec::available_device_backends()) {
      if (name == "null") continue;  // a test device, never chosen automatically
      auto dev = exec::create_device_backend(name);
      if (dev.ok()) {
        s->device_ = std::move(dev).value();
        break;
      }
    }
  } else if (!options.device.empty() && options.device != options.backend && options.device != "cpu") {
    TSR_ASSIGN_OR_RETURN(s->device_, exec::create_device_backend(options.device));
  }
  s->plan_options_.device = s->device_.get();
  // Prepare the main graph now so that missing kernels are reported at creation, all at once.
  TSR_ASSIGN_OR_RETURN(auto plan, exec::Plan::create(*s->model_, 0, *s->backend_, s->plan_options_));
  s->plans_[0] = std::move(plan);
  for (const auto& v : s->model_->variables) s->variables_[v.name] = v.value;
  return s;
}

void Session::enable_profiling() {
  if (!profiler_) profiler_ = std::make_unique<exec::Profiler>();
  plans_.at(0)->set_profiler(profiler_.get());
}

Expected<std::vector<Tensor>> Session::run(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs;
  TSR_RETURN_IF_ERROR(run(inputs, &outputs));
  return outputs;
}

Status Session::run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
  for (const auto& sig : model_->signatures)
    if (sig.graph == 0 && (!sig.bound_inputs.empty() || !sig.updates.empty())) {
      outputs->clear();
      TSR_ASSIGN_OR_RETURN(*outputs, run_bound(sig, inputs));
      return ok_status();
    }
  return run_graph(0, inputs, outputs);
}

Expected<std::vector<Tensor>> Session::run_signature(std::string_view name,
                                                     const std::vector<Tensor>& inputs) {
  std::string names;
  for (const auto& sig : model_->signatures) {
    if (sig.name == name) return run_bound(sig, inputs);
    names += str_cat(names.empty() ? "" : ", ", sig.name);
  }
  return not_found("no signature \"", name, "\" (the model has: ", names.empty() ? "none" : names, ")");
}

Expected<std::vector<Tensor>> Session::run_graph(int32_t gi, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs;
  TSR_RETURN_IF_ERROR(run_graph(gi, inputs, &outputs));
  return outputs;
}

Status Session::run_graph(int32_t gi, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
  auto it = plans_.find(gi);
  if (it == plans_.end()) {
    TSR_ASSIGN_OR_RETURN(auto plan, exec::Plan::create(*model_, gi, *backend_, plan_options_));
    it = plans_.emplace(gi, std::move(plan)).first;
  }
  MemoryBudgetScope budget(memory_budget_);
  return it->second->run(inputs, *pool_, outputs);
}

Expected<std::vector<Tensor>> Session::run_bound(const ir::Signature& sig, const std::vector<Tensor>& inputs) {
  if (sig.bound_inputs.empty() && sig.updates.empty()) return run_graph(sig.graph, inputs);
  const ir::Graph& g = model_->graphs[static_cast<size_t>(sig.graph)];
  auto is_bound = [&](size_t k) { return !sig.bound_inputs.empty() && !sig.bound_inputs[k].empty(); };
  size_t wanted = 0;
  for (size_t k = 0; k < g.inputs.size(); ++k) wanted += !is_bound(k);
  if (inputs.size() != wanted)
    return invalid_argument("signature \"", sig.name, "\": ", inputs.size(), " inputs given, it takes ", wanted,
                            wanted == g.inputs.size() ? "" : " (the others are bound to variables)");
  std::vector<Tensor> all;
  all.reserve(g.inputs.size());
  for (size_t k = 0, next = 0; k < g.inputs.size(); ++k)
    all.push_back(is_bound(k) ? variables_.at(sig.bound_inputs[k]) : inputs[next++]);
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> outs, run_graph(sig.graph, all));
  if (sig.updates.empty()) return outs;
  std::vector<Tensor> returned;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (sig.updates[k].empty()) returned.push_back(std::move(outs[k]));
    else variables_[sig.updates[k]] = std::move(outs[k]);
  }
  return returned;
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
  ir::Model m = *model_;
  for (auto& v : m.variables) v.value = variables_.at(v.name);
  return m;
}

Expected<std::vector<Tensor>> evaluate_node(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  if (inputs.size() != node.inputs.size())
    return invalid_argument("evaluate_node: ", inputs.size(), " values for ", node.inputs.size(), " inputs");
  for (const ir::Attribute& a : node.attributes)
    if (a.kind == ir::AttrKind::kGraph || a.kind == ir::AttrKind::kGraphs)
      return unsupported("evaluate_node: ", node.op, " has subgraphs");
  auto model = std::make_shared<ir::Model>();
  ir::Graph& g = model->graphs.emplace_back();
  ir::Node n = node;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    if (!inputs[k]) {
      n.inputs[k] = -1;
      continue;
    }
    ir::TensorInfo info;
    info.name = str_cat("in", k);
    info.kind = inputs[k]->kind();
    info.dtype = inputs[k]->dtype();
    info.has_shape = true;
    info.shape = inputs[k]->shape();
    info.constant = *inputs[k];
    n.inputs[k] = g.add_tensor(std::move(info));
  }
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] < 0) continue;
    ir::TensorInfo out;
    out.name = str_cat("out", k);
    n.outputs[k] = g.add_tensor(std::move(out));
    g.outputs.push_back(n.outputs[k]);
  }
  g.nodes.push_back(std::move(n));
  TSR_RETURN_IF_ERROR(passes::verify_model(*model));
  TSR_ASSIGN_OR_RETURN(auto session, Session::create(std::move(model)));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> present, session->run({}));
  std::vector<Tensor> out(node.outputs.size());
  for (size_t k = 0, j = 0; k < node.outputs.size(); ++k)
    if (node.outputs[k] >= 0) out[k] = std::move(present[j++]);
  return out;
}

}  // namespace tsr
