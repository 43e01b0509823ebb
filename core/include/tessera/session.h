// tsr::Session: a Model prepared to run on a backend with options (public C++ API; design:
// docs/design.md "Execution").
//
//   auto model = tsr::Model::load("model.tsr");
//   tsr::SessionOptions options;               // optimization kAll, 1 thread, limits on
//   auto session = tsr::Session::create(*model, options);
//   auto out = (*session)->run({{"x", tsr::Tensor::from<float>({1, 3}, {1, 2, 3})}});
//   // out: Expected<NamedTensors>, {"y", f32[1, 3]} ...
//
// Every front door runs models through this class: the `tessera` CLI, the C API (tessera_c.h),
// tessera-web's wasm exports and the playground, so an option means the same everywhere.
//
// Values. A tsr::Tensor is the value type of inputs and outputs: a dense tensor, or (its kind())
// an ONNX sequence of tensors or an empty optional.
//
// Thread safety. create() may be called from any thread, also on one Model from many. A Session
// is used by one thread at a time (run is not re-entrant); use one Session per thread.
//
// Errors (Status codes = the CLI's exit codes, docs/cli.md): kInvalidArgument for a bad option,
// input count, name, dtype or shape (the message names the input: `input[0] "x": shape [1, 3, 48],
// expected rank 4`); kNotFound for an unknown input name, signature or backend; kUnsupported for
// an op or dtype without a kernel (all listed at create); kBackend when a device fails; kResource
// when a run passes a limit below (naming the node).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/fast_math.h"
#include "core/base/limits.h"
#include "core/base/status.h"
#include "core/tensor/tensor.h"
#include "tessera/model.h"

namespace tsr {

class ThreadPool;
class MemoryBudget;
namespace ir {
struct Model;
struct Signature;
}  // namespace ir
namespace exec {
class Backend;
class DeviceBackend;
class Plan;
struct PlanOptions;
struct Profiler;
}  // namespace exec

// What Session::create does to the graph before running it.
enum class OptimizationLevel : uint8_t {
  kNone = 0,  // run the graph as loaded
  // The inference optimizations of `tessera optimize` (core/passes/optimize.h: constant folding,
  // Conv+BatchNorm folding, Conv/Gemm+activation fusion, elementwise fusion, CSE, DCE, ...), applied
  // to a copy of the graph when every node runs on the CPU (the fused ops have CPU kernels only;
  // with a device the graph runs as loaded). Training models are left unchanged. A minimal
  // runtime (docs/mobile.md) has no optimizer and runs the graph as loaded: optimize the model
  // beforehand with `tessera optimize`.
  kAll = 1,
};

struct SessionOptions {
  OptimizationLevel optimization = OptimizationLevel::kAll;
  // Passes of kAll to leave out, by name (core/passes/optimize.h; `tessera optimize --help`);
  // an unknown name fails create() with kInvalidArgument listing the names.
  std::vector<std::string> skip_passes;
  // Intra-op threads including the caller; <= 0 = all cores.
  int num_threads = 1;
  // With num_threads > 1: also run independent nodes side by side. Off by default: on 2 cores,
  // splitting each large node over the threads was as fast or faster (bench/results).
  bool inter_op = false;
  // Cap on the iterations of any one Loop/Scan invocation; 0 = unlimited (a runaway loop then
  // runs forever). Exceeding it fails the run with kResource.
  int64_t max_loop_iterations = kDefaultMaxLoopIterations;
  // Cap on the tensor bytes a run keeps alive at once (inputs it allocates, intermediates,
  // outputs); 0 = the default: 3/4 of the physical memory, 2 GiB in WASM. Weights memory-mapped
  // from the model file are not counted. Exceeding it fails the run with kResource.
  uint64_t max_memory_bytes = 0;
  // Where nodes run: "cpu"; a device backend's name ("cuda", "vulkan", or "null", the host-memory
  // test device) to place the nodes it supports there and the rest on the CPU (kBackend when the
  // machine has no such device, kNotFound when the build lacks it); or "auto": the first device
  // backend of this build that finds a device (CUDA, then Vulkan), else the CPU.
  std::string device = "cpu";
  // The host backend, which runs every node not placed on a device (only "cpu" today; a device
  // backend's name runs the whole graph on it, for tests).
  std::string backend = "cpu";
  // Opt-in reduced precision (core/base/fast_math.h): kBf16 computes the CPU Attention kernel's
  // Q·K^T and P·V with bfloat16 operands and f32 accumulation where fast_math_supported(kBf16)
  // (an x86-64 CPU with AVX512_BF16), else in f32. Default kNone: exact f32.
  FastMath fast_math = FastMath::kNone;
};

// Inputs or outputs by name, in any order (outputs come in the model's output order).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Where the main graph's nodes run (after create): the device's name ("" when everything runs on
// the host), how many of its nodes were placed there, and the copies between host and device.
struct PlacementSummary {
  std::string device;
  size_t device_nodes = 0;
  size_t total_nodes = 0;
  size_t copies = 0;
};

class Session {
 public:
  // Prepares the main graph now (optimization, placement, kernels, memory plan), so that ops
  // without kernels are reported here, all at once. Other graphs are prepared on first use.
  // kInvalidArgument for an empty model or a bad option.
  static Expected<std::unique_ptr<Session>> create(const Model& model, const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The model as given to create() (not the optimized copy that runs).
  const Model& model() const { return model_; }
  const std::vector<ValueInfo>& inputs() const { return model_.inputs(); }
  const std::vector<ValueInfo>& outputs() const { return model_.outputs(); }

  // Runs with named inputs: each of inputs() exactly once, in any order. kNotFound for a name the
  // model lacks, kInvalidArgument for a missing or repeated one (messages list the inputs).
  Expected<NamedTensors> run(const NamedTensors& inputs);
  // Orders named inputs as run(std::vector<Tensor>) takes them, with the checks above: bind once,
  // then run the bound vector many times without the name lookups.
  Expected<std::vector<Tensor>> bind(const NamedTensors& inputs) const;
  // Runs with inputs in inputs() order. When a signature binds main-graph inputs to variables
  // (a training model), it runs as that signature (see run_signature).
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);
  // The same, writing the outputs into `*outputs` (resized; its previous tensors are released
  // before the run): a caller that keeps the vector from run to run lets a steady-state run
  // allocate nothing (after one warm-up run). On error `*outputs` is empty.
  Status run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);
  // Runs the graph of the named signature ("infer", "train_step", ...); kNotFound lists the
  // signatures. `inputs` are the caller-supplied inputs in graph order (inputs bound to
  // variables are taken from the session); outputs that update variables are stored in the
  // session and not returned, the others are returned in graph order.
  Expected<std::vector<Tensor>> run_signature(std::string_view name, const std::vector<Tensor>& inputs);
  // The same, writing the returned outputs into `*outputs` (resized; its previous tensors are
  // released before the run), as run's overload: a caller that keeps the vector from step to step
  // lets a steady-state training step allocate nothing (tsr::Trainer does). On error `*outputs`
  // is empty.
  Status run_signature(std::string_view name, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);

  // Variables (trained weights, optimizer state): their current values, starting from the model's.
  const Tensor* variable(std::string_view name) const;
  // Replaces a variable's value; kNotFound for an unknown name, kInvalidArgument when the dtype
  // or shape differs from the current value.
  Status set_variable(std::string_view name, Tensor value);
  // The model with every variable at its current value: a checkpoint (io::save_model_file).
  ir::Model snapshot() const;

  PlacementSummary placement() const;
  // Per-node timing of the main graph from now on (off by default).
  void enable_profiling();
  // The `top` nodes by total time since enable_profiling(), one line each; "" when off.
  std::string profile_report(size_t top) const;

  // Engine internals, for tests and the tools that show placement and memory plans.
  const exec::Plan& main_plan() const { return *plans_.at(0); }
  exec::DeviceBackend* device() { return device_.get(); }

 private:
  Session();
  Model model_;                                // as given
  std::shared_ptr<const ir::Model> running_;   // what runs: model_ or its optimized copy
  std::unique_ptr<exec::Backend> backend_;
  std::unique_ptr<exec::DeviceBackend> device_;  // declared before plans_: Plans hold its buffers
  std::unique_ptr<ThreadPool> pool_;
  std::map<int32_t, std::unique_ptr<exec::Plan>> plans_;
  std::unique_ptr<exec::PlanOptions> plan_options_;
  std::unique_ptr<exec::Profiler> profiler_;
  std::map<std::string, Tensor, std::less<>> variables_;
  std::shared_ptr<MemoryBudget> memory_budget_;

  Status run_graph(int32_t graph_index, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);
  Status run_bound(const ir::Signature& sig, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);
  // run_bound's scratch, kept between runs so that a steady-state run allocates nothing: the
  // graph's inputs (the caller's and the variables') and its outputs before the updates are stored.
  std::vector<Tensor> bound_inputs_, bound_outputs_;
};

}  // namespace tsr
