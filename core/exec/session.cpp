#include "core/exec/session.h"

namespace tsr {

Expected<std::unique_ptr<Session>> Session::create(std::shared_ptr<const ir::Model> model,
                                                   const SessionOptions& options) {
  if (!model || model->graphs.empty()) return invalid_argument("session needs a model with a graph");
  auto s = std::unique_ptr<Session>(new Session());
  s->model_ = std::move(model);
  TSR_ASSIGN_OR_RETURN(s->backend_, exec::create_backend(options.backend));
  s->pool_ = std::make_unique<ThreadPool>(options.num_threads);
  s->plan_options_.max_loop_iterations = options.max_loop_iterations;
  // Prepare the main graph now so that missing kernels are reported at creation, all at once.
  TSR_ASSIGN_OR_RETURN(auto plan, exec::Plan::create(*s->model_, 0, *s->backend_, s->plan_options_));
  s->plans_[0] = std::move(plan);
  return s;
}

void Session::enable_profiling() {
  if (!profiler_) profiler_ = std::make_unique<exec::Profiler>();
  plans_.at(0)->set_profiler(profiler_.get());
}

Expected<std::vector<Tensor>> Session::run(const std::vector<Tensor>& inputs) {
  return run_graph(0, inputs);
}

Expected<std::vector<Tensor>> Session::run_signature(std::string_view name,
                                                     const std::vector<Tensor>& inputs) {
  std::string names;
  for (const auto& sig : model_->signatures) {
    if (sig.name == name) return run_graph(sig.graph, inputs);
    names += str_cat(names.empty() ? "" : ", ", sig.name);
  }
  return not_found("no signature \"", name, "\" (the model has: ", names.empty() ? "none" : names, ")");
}

Expected<std::vector<Tensor>> Session::run_graph(int32_t gi, const std::vector<Tensor>& inputs) {
  auto it = plans_.find(gi);
  if (it == plans_.end()) {
    TSR_ASSIGN_OR_RETURN(auto plan, exec::Plan::create(*model_, gi, *backend_, plan_options_));
    it = plans_.emplace(gi, std::move(plan)).first;
  }
  return it->second->run(inputs, *pool_);
}

}  // namespace tsr
