// Plan: one graph prepared for execution on one backend (DESIGN.md §6).
//
// Preparing computes a topological order, binds a kernel per node (created once), pre-binds
// constants and records, for every intermediate value, the step after which it is dead, so
// run() releases intermediates right after their last use (peak memory ~ the live set, not the
// whole graph). Shapes may be dynamic: output types are re-inferred from the OpDef at each step
// with the actual input shapes and values.
//
// Thread safety: run() is re-entrant and may be called from several threads at once on one Plan
// (e.g. an If branch run by two concurrent outer runs). Everything a run writes lives in a
// RunState (value table, one step's arguments, device values), taken from a small free list at
// the start of run() and given back at the end, so steady-state runs reuse their scratch without
// allocating for it. Kernels must be safe to run concurrently (kernel.h). A Profiler is not:
// profile single-threaded callers only.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/exec/backend.h"
#include "core/exec/control_flow.h"
#include "core/exec/device.h"
#include "core/ir/graph.h"

namespace tsr::exec {

struct PlanStep {
  // kHost: the node's host kernel; kDevice: its device kernel records on PlanOptions::device;
  // kUpload/kDownload: the placement's copy of tensor `tensor` (node is then null).
  enum class Kind : uint8_t { kHost, kDevice, kUpload, kDownload };
  Kind kind = Kind::kHost;
  int32_t tensor = -1;
  uint32_t host_inputs = 0;  // kDevice: inputs read on the host (DeviceSupport::host_inputs)
  std::unique_ptr<DeviceKernel> device_kernel;
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
  // Nodes placed on the device and copy steps (both 0 without a device).
  size_t device_nodes() const { return device_nodes_; }
  size_t copies() const { return copies_; }

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
  DeviceBackend* device_ = nullptr;
  size_t device_nodes_ = 0, copies_ = 0;
  std::vector<DeviceTensor> device_constants_;  // by tensor id: constants read by device nodes

  // One run's scratch: the value table and one step's arguments (sized on first use, then reused).
  struct RunState {
    std::vector<Tensor> values;
    std::vector<ops::ValueType> in_types;
    std::vector<const Tensor*> in_values;
    std::vector<Tensor> outs;
    std::vector<DeviceTensor> device_values;
    std::vector<const DeviceTensor*> din_values;
    std::vector<DeviceTensor> douts;
    // One per node of an inter-op wave run in parallel: its arguments and its result.
    struct Task {
      std::vector<const Tensor*> in_values;
      std::vector<ops::ValueType> in_types;
      std::vector<Tensor> outs;
      Status status;
    };
    std::vector<Task> tasks;
  };
  // Steps [begin, end) of one dependency level (steps_ is sorted by level when inter_op is on).
  struct Wave {
    size_t begin = 0, end = 0;
  };
  std::vector<Wave> waves_;  // empty: steps run one by one
  // Runs the host steps [w.begin, w.end) of one wave, side by side when it pays.
  Status run_wave(const Wave& w, ThreadPool& pool, RunState& rs) const;
  std::unique_ptr<RunState> acquire_state() const;
  void release_state(std::unique_ptr<RunState> state) const;
  Status run_device_step(const PlanStep& step, RunState& rs) const;
  Expected<std::vector<Tensor>> run_steps(const std::vector<Tensor>& inputs, ThreadPool& pool, RunState& rs) const;
  // Idle RunStates, ready for the next run (at most one per concurrent run ever seen). A cache
  // guarded by its mutex, not scratch of a const method: no run reads another's state.
  mutable std::mutex states_mu_;
  mutable std::vector<std::unique_ptr<RunState>> free_states_;
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
