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

// Limits are on by default so that an untrusted model cannot hang or exhaust the process: a
// run that exceeds one fails with kResource naming the node (the CLI's exit code 7).

struct SessionOptions {
  std::string backend = "cpu";
  int num_threads = 1;  // intra-op threads including the caller; <= 0 = all cores
  // With num_threads > 1: also run independent nodes side by side (exec::PlanOptions::inter_op).
  // Off by default: on 2 cores, splitting each large node over the threads was as fast or faster
  // (PP-OCRv4 det 4.58 ms without against 5.25 ms with, M-LSD tiny 6.82 / 7.03 ms).
  bool inter_op = false;
  // Cap on the iterations of any one Loop/Scan invocation; 0 = unlimited (a runaway loop then
  // runs forever).
  int64_t max_loop_iterations = exec::kDefaultMaxLoopIterations;
  // Cap on the tensor bytes a run keeps alive at once (inputs it allocates, intermediates,
  // outputs; see MemoryBudget in core/tensor/tensor.h); 0 = default_memory_limit() (3/4 of the
  // physical memory, 2 GiB in WASM). Weights memory-mapped from the model file are not counted.
  uint64_t max_memory_bytes = 0;
  // Where nodes run: "cpu" (everything on `backend`), a device backend's name ("vulkan", "null")
  // to place the nodes it supports there (kBackend from create() when the machine has no such
  // device), or "auto": the first device backend of this build that finds a device, else the CPU.
  std::string device = "cpu";
};

class Session {
 public:
  // The model must have passed passes::verify_model (load_model_file does this).
  static Expected<std::unique_ptr<Session>> create(std::shared_ptr<const ir::Model> model,
                                                   const SessionOptions& options = {});

  const ir::Model& model() const { return *model_; }
  // Declared types of the main graph's inputs and outputs.
  const ir::Graph& main_graph() const { return model_->main(); }

  // Runs the main graph (graphs[0]) with inputs in graph-input order. When a signature names
  // graph 0 and binds variables, it runs as that signature (see run_signature).
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);
  // The same, writing the outputs into `*outputs` (resized; its previous tensors are released
  // before the run): a caller that keeps the vector from run to run lets a steady-state run
  // allocate nothing (after one warm-up run: tests/models/alloc_test.cpp). On error `*outputs`
  // is empty.
  Status run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);
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
  Status run_graph(int32_t graph_index, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);

  exec::Backend& backend() { return *backend_; }
  // The device backend nodes are placed on, or null when everything runs on the host.
  exec::DeviceBackend* device() { return device_.get(); }
  // The prepared Plan of graph 0 (placement figures: device_nodes(), copies()).
  const exec::Plan& main_plan() const { return *plans_.at(0); }
  ThreadPool& pool() { return *pool_; }

  // Per-node timing of the main graph from now on (off by default); see exec::Profiler.
  void enable_profiling();
  const exec::Profiler* profiler() const { return profiler_.get(); }

 private:
  Session() = default;
  std::shared_ptr<const ir::Model> model_;
  std::unique_ptr<exec::Backend> backend_;
  std::unique_ptr<exec::DeviceBackend> device_;  // declared before plans_: Plans hold its buffers
  std::unique_ptr<ThreadPool> pool_;
  std::map<int32_t, std::unique_ptr<exec::Plan>> plans_;
  exec::PlanOptions plan_options_;
  std::unique_ptr<exec::Profiler> profiler_;
  std::map<std::string, Tensor, std::less<>> variables_;
  std::shared_ptr<MemoryBudget> memory_budget_;

  Expected<std::vector<Tensor>> run_bound(const ir::Signature& sig, const std::vector<Tensor>& inputs);
};

// Runs one node on constant inputs with the CPU kernels and returns its outputs, parallel to
// node.outputs (undefined for omitted ones): the evaluator of the optimizer's constant folding
// (passes::OptimizeOptions::evaluate). `inputs` is parallel to node.inputs, null for omitted
// ones. The node is checked and its types inferred as in a loaded model; errors name it
// (kInvalidModel, kUnsupported, or what its kernel returns). Nodes with subgraphs are rejected.
Expected<std::vector<Tensor>> evaluate_node(const ir::Node& node, const std::vector<const Tensor*>& inputs);

}  // namespace tsr
