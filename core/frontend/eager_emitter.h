// EagerEmitter: the Emitter that runs each op at once on the CPU backend (DESIGN.md §5, §8).
//
// Every op goes through the same OpDef (runtime shape inference) and CPU kernel as the graph
// executor (exec::run_node, shared with Plan::run), so eager results equal graph results. Kernels
// are created once per (op, input dtypes, output count, attributes) and cached in the emitter;
// an op resolved once with resolve() is dispatched without any name lookup.
//
//   frontend::EagerEmitter e;
//   ops::Value x = e.wrap(Tensor::from<float>({2}, {1, 2}), /*requires_grad=*/true);
//   ops::Value y = e.emit("Mul", {x, x});
//   auto g = e.gradients(y, {x});           // d sum(y) / dx = 2x, run eagerly by the rules
//   const Tensor& dx = e.tensor((*g)[0]);
//
// Values. A Value names a slot of this emitter ({graph = the emitter's tag, id = slot}). A slot
// holds a reference count: wrap/constant/emit return Values holding one reference each, which
// the caller owns; retain() adds one and release() drops one, freeing the slot (and its tensor)
// at zero. Code that never calls release() (gradient rules, a script interpreter) keeps its
// values until the emitter dies, like a GraphBuilder keeps its nodes. Slots are reused after
// release; a released Value must not be used again.
//
// Errors. As with every Emitter, the first error is kept in status() and emission goes on: a
// failed op returns "poisoned" Values (undefined tensor, type() undefined); ops on poisoned
// inputs return poisoned outputs without a new error. clear_status() forgets the error.
//
// Tape. When grad mode is on (the default) and an input of an op requires grad, the op is
// recorded (node with its attributes, input and output Values, retained). Floating-point outputs
// of a recorded op require grad. gradients() walks the tape backwards applying the registered
// gradient rules (ops::OpDef::grad) with this emitter as their emitter, so the rules run eagerly;
// ops emitted by rules are not recorded (no higher-order gradients yet).
//
// Thread safety: none. One emitter belongs to one thread at a time (it reuses scratch buffers
// and its kernels from call to call). Distinct emitters may be used concurrently.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/thread_pool.h"
#include "core/exec/backend.h"
#include "core/ops/emitter.h"

namespace tsr::frontend {

// An op resolved by name once (EagerEmitter::resolve); valid for the life of the process.
struct OpRef {
  const ops::OpDef* def = nullptr;
  int32_t ordinal = -1;  // dense index of the op in the registry (the emitter's kernel-cache slot)
  bool valid() const { return def != nullptr; }
};

class EagerEmitter final : public ops::Emitter {
 public:
  // `num_threads` for the kernels' thread pool (1 = the calling thread only).
  explicit EagerEmitter(int num_threads = 1);
  ~EagerEmitter() override;
  EagerEmitter(const EagerEmitter&) = delete;
  EagerEmitter& operator=(const EagerEmitter&) = delete;

  // The op named `op` (an OpDef name); invalid if there is none. Thread-safe.
  static OpRef resolve(std::string_view op);

  // A host tensor as a Value (shares its data: do not write it afterwards). Undefined tensors
  // give a poisoned Value and an error.
  ops::Value wrap(Tensor t, bool requires_grad = false);
  // Records `error` (if it is the first) and returns a poisoned Value.
  ops::Value poisoned(const Status& error);
  // The value's data; an undefined Tensor for poisoned, released or foreign Values.
  const Tensor& tensor(ops::Value v) const;

  // The fast path: runs `op` with `inputs` (invalid Values = omitted optional inputs) and writes
  // outputs.size() output Values. No name lookup, string formatting or graph building: once the
  // kernel is cached, a call costs the op's shape inference, its kernel and the output tensors.
  void run(OpRef op, std::span<const ops::Value> inputs, std::span<ops::Value> outputs,
           std::vector<ir::Attribute> attrs = {});
  ops::Value run1(OpRef op, std::span<const ops::Value> inputs, std::vector<ir::Attribute> attrs = {}) {
    ops::Value out;
    run(op, inputs, std::span<ops::Value>(&out, 1), std::move(attrs));
    return out;
  }

  // ---- ops::Emitter ----
  std::vector<ops::Value> emit_n(std::string_view op, const std::vector<ops::Value>& inputs, size_t num_outputs,
                                 std::vector<ir::Attribute> attrs = {}) override;
  ops::Value constant(Tensor value) override { return wrap(std::move(value), false); }
  ops::ValueType type(ops::Value v) const override;
  const Tensor* known_value(ops::Value v) const override;
  const Status& status() const override { return status_; }
  void clear_status() { status_ = Status(); }

  // ---- Value lifetime ----
  void retain(ops::Value v);
  void release(ops::Value v);
  // Whether `v` names a live slot of this emitter (poisoned slots are live).
  bool owns(ops::Value v) const;
  // Number of live slots (for tests and leak checks).
  size_t live_values() const { return live_; }

  // ---- Gradients ----
  bool requires_grad(ops::Value v) const;
  // Marks a value as a leaf that requires grad (floating-point values only; ignored otherwise).
  void set_requires_grad(ops::Value v, bool on);
  bool grad_enabled() const { return grad_enabled_; }
  // Grad mode: off = nothing is recorded (torch.no_grad).
  void set_grad_enabled(bool on) { grad_enabled_ = on; }
  size_t tape_size() const { return tape_.size(); }
  // Drops every tape entry (releasing the values it kept alive).
  void clear_tape();

  // d loss / d wrt[i] through the tape, with the same gradient rules as passes::backward; zeros
  // where wrt[i] does not affect the loss. A non-scalar loss is summed (seeded with ones). The
  // returned Values hold one reference each (the caller's); everything else the rules emitted is
  // released. When `consume` is set, the tape entries on the path are dropped afterwards (a
  // second call over them then finds no path). Errors: a non-floating-point loss; every op on the
  // path without a gradient rule, listed in one kUnsupported error; a rule's own error.
  Expected<std::vector<ops::Value>> gradients(ops::Value loss, const std::vector<ops::Value>& wrt,
                                              bool consume = false);
  // Tape leaves (values that require grad and were not produced by a recorded op) that `loss`
  // depends on, in first-use order: what backward() accumulates .grad into.
  std::vector<ops::Value> leaves_of(ops::Value loss) const;

  // The gradient accumulated into a value by the public API's backward() (eager.h); invalid if
  // none. Setting it retains `g` (released with the value or when replaced).
  ops::Value accumulated_grad(ops::Value v) const;
  void set_accumulated_grad(ops::Value v, ops::Value g);

 private:
  struct Slot {
    Tensor value;
    int32_t refs = 0;  // 0 = free
    int32_t grad = -1;  // accumulated .grad slot (public API), retained by this slot
    bool requires_grad = false;
    bool poison = false;
    bool produced = false;  // an output of a recorded (taped) op, not a leaf
  };
  // One cached kernel: the key (input dtypes, output count, attributes) and the node it runs.
  struct KernelEntry {
    std::vector<DType> in_dtypes;  // kUndefined = omitted input
    ir::Node node;                 // op, input pattern (k or -1), outputs 0..n-1, attributes
    size_t given_attrs = 0;        // node.attributes' first ones, the caller's; then the defaults
    std::string place;             // "eager Add" (error messages)
    std::unique_ptr<exec::Kernel> kernel;
  };
  struct TapeEntry {
    const ops::OpDef* def = nullptr;
    ir::Node node;
    std::vector<ops::Value> inputs, outputs;  // retained while recorded
  };
  struct NameCacheEntry {
    std::string name;
    OpRef ref;
  };

  Slot* live_slot(ops::Value v);
  const Slot* live_slot(ops::Value v) const;
  ops::Value new_slot(Tensor value, bool requires_grad, bool poison);
  void poison_outputs(std::span<ops::Value> outputs);
  void fail(const Status& s);
  // The cached kernel for the op with the current in_values_; created on a miss. Null on error.
  KernelEntry* kernel_entry(OpRef op, size_t num_outputs, std::vector<ir::Attribute>& attrs);
  OpRef resolve_cached(std::string_view op);
  std::vector<size_t> path_entries(ops::Value loss, const std::vector<ops::Value>& wrt,
                                   std::vector<char>& active) const;

  int32_t tag_;  // Value::graph of this emitter's values
  std::unique_ptr<exec::Backend> backend_;
  ThreadPool pool_;
  Status status_;
  std::vector<Slot> slots_;
  std::vector<int32_t> free_;
  size_t live_ = 0;
  // By OpRef::ordinal; entries are boxed: kernels may keep a reference to their node.
  std::vector<std::vector<std::unique_ptr<KernelEntry>>> kernels_;
  std::vector<NameCacheEntry> names_;              // open-addressed name -> OpRef cache
  std::vector<TapeEntry> tape_;
  bool grad_enabled_ = true;
  std::vector<int32_t>* scope_ = nullptr;  // while gradients() runs: slots created by the rules
  // Scratch reused from op to op.
  std::vector<const Tensor*> in_values_;
  std::vector<ops::ValueType> in_types_, out_types_;
  std::vector<Tensor> outs_;
  exec::ScratchArena scratch_;
};

}  // namespace tsr::frontend
