// The kernel contract between the executor and backends (DESIGN.md §6, §9).
//
// A backend creates one Kernel per node when a Plan is prepared (KernelInit carries the node, the
// inferred input types and any constant inputs, so weights can be repacked once). At run time the
// executor infers output types with the op's OpDef, then calls Kernel::run with a KernelContext.
// The kernel reads inputs, allocates outputs through the context (alloc_output gives exactly the
// inferred dtype and shape) or sets a view of an input (set_output, e.g. Reshape), and returns a
// Status. Kernels must not keep pointers to tensors between runs and must be safe to run from
// several threads at once (Plan::run is re-entrant): state a kernel changes at run time (a random
// generator) is guarded by the kernel.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/base/fast_math.h"
#include "core/base/status.h"
#include "core/base/thread_pool.h"
#include "core/exec/scratch_arena.h"
#include "core/ir/graph.h"
#include "core/ops/op_def.h"
#include "core/tensor/tensor.h"

namespace tsr::exec {

class KernelContext {
 public:
  // Every argument is referenced, not copied, and must outlive the context.
  KernelContext(const ir::Node& node, const std::string& place, const std::vector<const Tensor*>& inputs,
                const std::vector<ops::ValueType>& output_types, std::vector<Tensor>& outputs,
                ThreadPool& pool, ScratchArena& scratch)
      : node_(node),
        place_(place),
        inputs_(inputs),
        output_types_(output_types),
        outputs_(outputs),
        pool_(pool),
        scratch_(scratch) {}

  const ir::Node& node() const { return node_; }
  const std::string& place() const { return place_; }
  size_t num_inputs() const { return inputs_.size(); }
  // Null for an omitted optional input.
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_outputs() const { return outputs_.size(); }
  const ops::ValueType& output_type(size_t i) const { return output_types_.at(i); }
  // Allocates output i with its inferred dtype and shape (which must be fully known).
  Expected<Tensor*> alloc_output(size_t i);
  // Allocates output i with an explicit dtype and shape (data-dependent outputs: NonZero, ...).
  // With a memory plan (set_memory_plan), an output allocated with its planned dtype and shape
  // is placed in the plan's arena instead (the kernel does not see the difference).
  Expected<Tensor*> alloc_output(size_t i, DType dtype, const Shape& shape);
  // Sets output i to an existing tensor (a view of an input, a constant).
  void set_output(size_t i, Tensor t) { outputs_.at(i) = std::move(t); }
  ThreadPool& pool() { return pool_; }
  // A context for the same node, place, pool and scratch arena over other inputs and outputs (a
  // kernel running another kernel on converted tensors: float16 attention computed in f32). No
  // memory plan: its outputs are fresh allocations. The arguments must outlive it.
  KernelContext derived(const std::vector<const Tensor*>& inputs, const std::vector<ops::ValueType>& output_types,
                        std::vector<Tensor>& outputs) const {
    return KernelContext(node_, place_, inputs, output_types, outputs, pool_, scratch_);
  }

  // For the executor: output i goes to byte offset offsets[i] of `arena` when offsets[i] >= 0
  // (and is allocated with output_type(i)); kTransient: a fresh allocation whose block is not
  // recycled (the recording run of a memory plan); other negative values: as usual. Both must
  // outlive the context.
  static constexpr int64_t kTransient = -2;
  void set_memory_plan(const Tensor* arena, const int64_t* offsets) {
    arena_ = arena;
    offsets_ = offsets;
  }
  // `bytes` of uninitialized, 64-byte aligned memory, valid until the kernel returns: a kernel's
  // temporaries (im2col columns, per-slot buffers of parallel_for_slots). It comes from the run's
  // ScratchArena, so a steady-state run allocates nothing for it. Errors: kResource naming the
  // node (the session's memory budget).
  Expected<void*> scratch(size_t bytes) {
    auto p = scratch_.allocate(bytes);
    if (!p.ok()) return p.status().with_context(place_);
    return p;
  }

  template <typename... A> Status error(const A&... a) const {
    return invalid_argument(place_, ": ", a...);
  }

 private:
  const ir::Node& node_;
  const std::string& place_;
  const std::vector<const Tensor*>& inputs_;
  const std::vector<ops::ValueType>& output_types_;
  std::vector<Tensor>& outputs_;
  ThreadPool& pool_;
  ScratchArena& scratch_;
  const Tensor* arena_ = nullptr;
  const int64_t* offsets_ = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status run(KernelContext& ctx) = 0;
};

struct KernelInit {
  const ir::Node& node;
  const std::string& place;
  std::vector<ops::ValueType> input_types;   // parallel to node.inputs (load-time types)
  std::vector<const Tensor*> constant_inputs;  // parallel to node.inputs; non-null for constants
  FastMath fast_math = FastMath::kNone;         // the session's opt-in reduced precision
};

using KernelFactory = Expected<std::unique_ptr<Kernel>> (*)(const KernelInit&);

// A kernel that is a plain function with no per-node state.
using KernelFn = Status (*)(KernelContext&);
class FnKernel final : public Kernel {
 public:
  explicit FnKernel(KernelFn fn) : fn_(fn) {}
  Status run(KernelContext& ctx) override { return fn_(ctx); }

 private:
  KernelFn fn_;
};

}  // namespace tsr::exec
