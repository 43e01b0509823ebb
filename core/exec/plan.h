// Plan: one graph prepared for execution on one backend (DESIGN.md §6).
//
// Preparing computes a topological order, binds a kernel per node (created once), pre-binds
// constants and records, for every intermediate value, the step after which it is dead, so
// run() releases intermediates right after their last use (peak memory ~ the live set, not the
// whole graph). Shapes may be dynamic: output types come from the OpDef's inference with the
// actual input shapes and values.
//
// Planned runs (issue 12; core/exec/signature_plan.h): the first run with a given signature of
// input types records, for the steps whose types follow from the input shapes alone, their
// output types, and the values computed from shapes only; at its end it plans the memory of the
// recorded intermediate values (core/exec/memory_plan.h: greedy by size over their lifetimes,
// elementwise ops written over an input that dies at their step, views sharing their input's
// bytes). Later runs with that signature skip those steps' inference, take the recorded values,
// and have the kernels write into one arena per run slot. Graph outputs and values that may
// outlive the run (read by control flow, sequences) are never in the arena; a value a kernel
// returns that nonetheless shares the arena (an unexpected view) is copied out. At most
// kMaxSignatures signatures are kept per Plan (least recently used dropped). Plans with a
// device keep inferring at every step.
//
// Thread safety: run() is re-entrant and may be called from several threads at once on one Plan
// (e.g. an If branch run by two concurrent outer runs). Everything a run writes lives in a
// RunState (core/exec/run_state.h: value table, one step's arguments, device values), taken
// from a small free list at the start of run() and given back at the end, so steady-state runs
// reuse their scratch without allocating for it. Kernels must be safe to run concurrently
// (kernel.h). A Profiler is not: profile single-threaded callers only.
//
// The code: plan_builder.cpp prepares (Plan::create), plan.cpp runs, plan_recorder.cpp records
// a signature's plan, plan_signature.cpp finds and checks one.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/exec/backend.h"
#include "core/exec/control_flow.h"
#include "core/exec/device.h"
#include "core/exec/scratch_pool.h"
#include "core/exec/signature_plan.h"
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
//
// Work balance (for thread scaling, robust to other load on the machine): per step, `work_ms` is
// the CPU time of the step on all threads (the serial part on the calling thread plus the pool's
// chunks, ThreadPool::WorkTally) and `span_ms` the serial part plus the chunks list-scheduled on
// the pool's threads as if each had a core to itself. work / span is the speedup the split
// allows; the report lists the ops that lose the most (span - work / threads).
struct Profiler {
  struct NodeTime {
    std::string op, place;
    double total_ms = 0;
    int64_t calls = 0;
    double work_ms = 0, span_ms = 0, serial_ms = 0;
    double caller_chunk_ms = 0;  // pooled chunks that ran on the calling thread
    int64_t jobs = 0;            // pooled parallel_for jobs
  };
  struct Work {
    double work_ms = 0, span_ms = 0, serial_ms = 0, caller_chunk_ms = 0;
    int64_t jobs = 0;
  };
  std::vector<NodeTime> nodes;  // indexed by node index of the profiled graph
  int threads = 1;              // the pool's, for the balance report
  void record(const PlanStep& step, double ms, const Work& work);
  // Top `top` op types and nodes by total time, as text.
  std::string report(size_t top = 15) const;
};

struct RunState;  // core/exec/run_state.h
struct RunMode;
class PlanBuilder;  // plan_builder.cpp

class Plan {
 public:
  // Signatures (input types) whose plans a Plan keeps; the least recently used goes first.
  static constexpr size_t kMaxSignatures = 8;

  ~Plan();
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
  // The same, writing the outputs into `*outputs` (resized to graph().outputs; what it held
  // before is released first). A caller that keeps the vector (a Session's caller, a Loop frame)
  // lets steady-state runs allocate nothing.
  Status run(const std::vector<Tensor>& inputs, ThreadPool& pool, std::vector<Tensor>* outputs) const;

  // The recorded plans, most recently used first (for tests and reports).
  std::vector<std::shared_ptr<const SignaturePlan>> signature_plans() const;

 private:
  friend class PlanBuilder;  // Plan::create's work: the steps, their kernels, the lifetimes
  Plan() = default;

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
  // For the memory plans, by tensor id: the step that reads it last (-1: none) and whether it
  // may outlive its last use (never in an arena): a graph output, a value read by control flow
  // or by an op that keeps handles (sequences), or one a view of it escapes through.
  std::vector<int32_t> last_use_;
  std::vector<uint8_t> escapes_;
  std::vector<int32_t> wave_of_;  // by step: its wave (inter-op)

  // Steps [begin, end) of one dependency level (steps_ is sorted by level when inter_op is on).
  struct Wave {
    size_t begin = 0, end = 0;
  };
  std::vector<Wave> waves_;  // empty: steps run one by one

  // The run loop (plan.cpp). RunState and RunMode: core/exec/run_state.h.
  Status run_steps(const std::vector<Tensor>& inputs, ThreadPool& pool, RunState& rs, const RunMode& mode,
                   std::vector<Tensor>& outputs) const;
  // Fills the value table with the constants and the checked inputs.
  Status bind_inputs(const std::vector<Tensor>& inputs, RunState& rs) const;
  // Runs step s (a copy, a device node or a host node) and releases the values it read last.
  Status run_step(size_t s, ThreadPool& pool, RunState& rs, const RunMode& mode) const;
  Status run_copy_step(const PlanStep& step, RunState& rs) const;
  // Drops the values whose last use was `step` (PlanStep::release_after).
  void release_dead(const PlanStep& step, RunState& rs) const;
  // Whether wave w has at least two nodes large enough to run side by side.
  bool wave_pays(const Wave& w, const RunState& rs, const RunMode& mode) const;
  // Runs the host steps [w.begin, w.end) of one wave, side by side when it pays.
  Status run_wave(const Wave& w, ThreadPool& pool, RunState& rs, const RunMode& mode) const;
  Status run_device_step(const PlanStep& step, RunState& rs) const;
  // One host step's kernel call with the mode's types and memory plan; infers when unrecorded.
  Status run_host_step(size_t s, const std::vector<const Tensor*>& in_values, std::vector<ops::ValueType>& in_types,
                       std::vector<ops::ValueType>& out_types, std::vector<Tensor>& outs, ScratchArena& scratch,
                       ThreadPool& pool, RunState& rs, const RunMode& mode) const;
  // Copies the graph outputs out of the value table (none may share the arena or a recorded value).
  Status collect_outputs(const RunState& rs, const RunMode& mode, std::vector<Tensor>& outputs) const;

  // Signature plans: finding and using them (plan_signature.cpp), recording them (plan_recorder.cpp).
  std::shared_ptr<const SignaturePlan> find_signature(const std::vector<Tensor>& inputs, bool waves) const;
  // Before a recording run: sizes the recording for this graph.
  void start_recording(RunState& rs) const;
  // After step s inferred (out_types, values_read): decides whether its types are recorded and
  // how its outputs are allocated (rs.recording.steps[s]).
  void record_inferred(size_t s, const std::vector<ops::ValueType>& out_types, uint64_t values_read,
                       RunState& rs) const;
  // After step s ran, before its inputs are released: confirms the record against the outputs
  // and keeps the folded values.
  void record_ran(size_t s, const std::vector<Tensor>& values, RunState& rs) const;
  // After a successful recording run: builds the plan, keeps it, sizes rs.arena for it.
  void finish_recording(const std::vector<Tensor>& inputs, bool waves, RunState& rs) const;
  // The end of finish_recording: returns the recording's freed pages to the system, sizes
  // rs.arena for `sig` and keeps it (unless a concurrent run kept the same signature).
  void keep_signature(const std::vector<Tensor>& inputs, std::shared_ptr<SignaturePlan> sig, RunState& rs) const;
  // After step s of a planned run: copies out any output that shares the arena unplanned.
  Status check_arena_outputs(size_t s, std::vector<Tensor>& values, const RunState& rs, const RunMode& mode) const;
  // The recorded plans, most recent first: a cache guarded by its mutex (entries are immutable
  // and shared by the runs using them), like states_.
  mutable std::mutex signatures_mu_;
  mutable std::vector<std::shared_ptr<const SignaturePlan>> signatures_;
  // Idle RunStates, ready for the next run (at most one per concurrent run ever seen). A cache
  // guarded by its mutex, not scratch of a const method: no run reads another's state.
  mutable ScratchPool<RunState> states_;
};

// Scratch reused from call to call by run_node (so running a node allocates nothing but what
// its kernel allocates).
struct NodeScratch {
  const std::vector<const Tensor*>& in_values;  // parallel to node.inputs; null = omitted
  std::vector<ops::ValueType>& in_types;        // filled from in_values
  std::vector<ops::ValueType>& out_types;       // the inferred output types
  std::vector<Tensor>& outs;                    // receives the outputs, parallel to node.outputs
  ScratchArena& arena;                          // the kernel's temporaries (reset after the call)
};

// Runs one node as the executor does (DESIGN.md §6): checks the inputs' value kinds against the
// OpDef, infers the output types from the actual inputs (runtime inference: all shapes and
// values visible), runs the kernel and checks it produced every present output. Shared by
// Plan::run and the eager emitter (core/frontend/eager_emitter.h). `model` (for control-flow
// inference) may be null. Errors name `place`. The two halves:
Status run_node(const ir::Node& node, const ops::OpDef& def, const std::string& place, Kernel& kernel,
                NodeScratch scratch, ThreadPool& pool, const ir::Model* model);
// Fills in_types from in_values and infers out_types; `values_read` (may be null) receives
// InferContext::values_read.
Status infer_outputs(const ir::Node& node, const ops::OpDef& def, const std::string& place,
                     const std::vector<const Tensor*>& in_values, std::vector<ops::ValueType>& in_types,
                     std::vector<ops::ValueType>& out_types, const ir::Model* model, uint64_t* values_read);
// One kernel call with the given output types (and memory plan, KernelContext::set_memory_plan).
struct KernelCall {
  const std::vector<const Tensor*>& in_values;
  const std::vector<ops::ValueType>& out_types;
  std::vector<Tensor>& outs;
  ScratchArena& scratch;
  const Tensor* arena = nullptr;
  const int64_t* offsets = nullptr;
};
Status run_kernel(const ir::Node& node, const std::string& place, Kernel& kernel, const KernelCall& call,
                  ThreadPool& pool);

// Checks a caller-supplied value against a graph input's declared type; errors name the input
// as `input[k] "name"`.
Status check_input(const ir::TensorInfo& info, size_t k, const Tensor& value);

}  // namespace tsr::exec
