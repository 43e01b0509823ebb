// Plan: one graph prepared for execution on one backend (DESIGN.md §6).
//
// Preparing computes a topological order, binds a kernel per node (created once), pre-binds
// constants and records, for every intermediate value, the step after which it is dead, so
// run() releases intermediates right after their last use (peak memory ~ the live set, not the
// whole graph). Shapes may be dynamic: output types are re-inferred from the OpDef at each step
// with the actual input shapes and values.
//
// Thread safety: run() may not be called concurrently on one Plan, nor re-entered: the Plan reuses
// its value table and per-step scratch from run to run (kernels may hold scratch too).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/exec/backend.h"
#include "core/exec/control_flow.h"
#include "core/ir/graph.h"

namespace tsr::exec {

struct PlanStep {
  int32_t node_index = 0;
  const ir::Node* node = nullptr;
  const ops::OpDef* def = nullptr;
  std::string place;
  std::unique_ptr<Kernel> kernel;
  std::vector<int32_t> release_after;  // tensor ids whose last use is this step
};

// Optional per-node timing (CLI `tessera run --profile`). Owned by the Session; a Plan holds a
// pointer to it, null when profiling is off (then the only cost is one null check per step).
// Times are wall-clock milliseconds around infer + kernel of each step of the main graph;
// control-flow nodes include their subgraphs.
struct Profiler {
  struct NodeTime {
    std::string op, place;
    double total_ms = 0;
    int64_t calls = 0;
  };
  std::vector<NodeTime> nodes;  // indexed by node index of the profiled graph
  void record(const PlanStep& step, double ms);
  // Top `top` op types and nodes by total time, as text.
  std::string report(size_t top = 15) const;
};

class Plan {
 public:
  void set_profiler(Profiler* p) { profiler_ = p; }
  // `model` must outlive the Plan and have passed verification + passes::infer_types.
  static Expected<std::unique_ptr<Plan>> create(const ir::Model& model, int32_t graph_index,
                                                Backend& backend, const PlanOptions& options = {});

  const ir::Graph& graph() const { return *graph_; }
  int32_t graph_index() const { return graph_index_; }
  const std::vector<PlanStep>& steps() const { return steps_; }

  // Runs the graph. `inputs` are parallel to graph().inputs and are checked against the declared
  // dtype and shape (kInvalidArgument naming the input on mismatch). Returns the graph outputs.
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, ThreadPool& pool) const;

 private:
  const ir::Model* model_ = nullptr;
  const ir::Graph* graph_ = nullptr;
  int32_t graph_index_ = 0;
  std::vector<PlanStep> steps_;
  std::vector<bool> keep_;  // tensor ids that must survive the run (graph outputs)
  std::vector<int32_t> constant_ids_;
  Profiler* profiler_ = nullptr;
  // Scratch reused across runs (sized once): the value table and one step's arguments.
  mutable std::vector<Tensor> values_;
  mutable std::vector<ops::ValueType> in_types_;
  mutable std::vector<const Tensor*> in_values_;
  mutable std::vector<Tensor> outs_;
};

// Scratch reused from call to call by run_node (so running a node allocates only its outputs).
struct NodeScratch {
  const std::vector<const Tensor*>& in_values;  // parallel to node.inputs; null = omitted
  std::vector<ops::ValueType>& in_types;        // filled from in_values
  std::vector<Tensor>& outs;                    // receives the outputs, parallel to node.outputs
};

// Runs one node as the executor does (DESIGN.md §6): checks the inputs' value kinds against the
// OpDef, infers the output types from the actual inputs (runtime inference: all shapes and
// values visible), runs the kernel and checks it produced every present output. Shared by
// Plan::run and the eager emitter (core/frontend/eager_emitter.h). `model` (for control-flow
// inference) may be null. Errors name `place`.
Status run_node(const ir::Node& node, const ops::OpDef& def, const std::string& place, Kernel& kernel,
                NodeScratch scratch, ThreadPool& pool, const ir::Model* model);

// Checks a caller-supplied value against a graph input's declared type; errors name the input
// as `input[k] "name"`.
Status check_input(const ir::TensorInfo& info, size_t k, const Tensor& value);

}  // namespace tsr::exec
