// Session: a loaded model + a backend + options, ready to run (DESIGN.md §6).
//
// A Session prepares one Plan per graph it runs (lazily, once) and owns the intra-op thread pool.
// run() is not thread-safe: use one Session per thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/backend.h"
#include "core/exec/plan.h"
#include "core/ir/graph.h"

namespace tsr {

struct SessionOptions {
  std::string backend = "cpu";
  int num_threads = 1;  // intra-op threads including the caller; <= 0 = all cores
  // Per-invocation cap on Loop/Scan iterations; 0 = unlimited (a runaway loop then hangs).
  int64_t max_loop_iterations = 0;
  // Cap on the bytes of tensor memory one run may allocate; 0 = the library's default cap.
  // (The C API's tsr_session_options_set_max_memory maps here.)
  uint64_t max_memory_bytes = 0;
};

class Session {
 public:
  // The model must have passed ir::verify_model (load_model_file does this).
  static Expected<std::unique_ptr<Session>> create(std::shared_ptr<const ir::Model> model,
                                                   const SessionOptions& options = {});

  const ir::Model& model() const { return *model_; }
  // Declared types of the main graph's inputs and outputs.
  const ir::Graph& main_graph() const { return model_->main(); }

  // Runs the main graph (graphs[0]) with inputs in graph-input order. When a signature names
  // graph 0 and binds variables, it runs as that signature (see run_signature).
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);
  // Runs the graph of the named signature ("infer", "train_step", ...); kNotFound lists the
  // signatures. `inputs` are the caller-supplied inputs in graph order (inputs bound to
  // variables are taken from the session); outputs that update variables are stored in the
  // session and not returned, the others are returned in graph order.
  Expected<std::vector<Tensor>> run_signature(std::string_view name, const std::vector<Tensor>& inputs);

  // Variables (ir::Model::variables): their current values, starting from the model's.
  const Tensor* variable(std::string_view name) const;
  // Replaces a variable's value; kNotFound for an unknown name, kInvalidArgument when the dtype
  // or shape differs from the current value.
  Status set_variable(std::string_view name, Tensor value);
  // The model with every variable at its current value: a checkpoint (save it with io::save).
  ir::Model snapshot() const;
  // Runs graph `graph_index` (used by control-flow kernels and tests).
  Expected<std::vector<Tensor>> run_graph(int32_t graph_index, const std::vector<Tensor>& inputs);

  exec::Backend& backend() { return *backend_; }
  ThreadPool& pool() { return *pool_; }

  // Per-node timing of the main graph from now on (off by default); see exec::Profiler.
  void enable_profiling();
  const exec::Profiler* profiler() const { return profiler_.get(); }

 private:
  Session() = default;
  std::shared_ptr<const ir::Model> model_;
  std::unique_ptr<exec::Backend> backend_;
  std::unique_ptr<ThreadPool> pool_;
  std::map<int32_t, std::unique_ptr<exec::Plan>> plans_;
  exec::PlanOptions plan_options_;
  std::unique_ptr<exec::Profiler> profiler_;
  std::map<std::string, Tensor, std::less<>> variables_;

  Expected<std::vector<Tensor>> run_bound(const ir::Signature& sig, const std::vector<Tensor>& inputs);
};

}  // namespace tsr
