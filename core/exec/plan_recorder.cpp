// Recording a signature plan (core/exec/signature_plan.h): the first run with a signature notes
// which steps' types and values the signature fixes; at its end the plan is built (types, folded
// values, the arena's layout) and kept.
#include <algorithm>
#include <cstdint>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/exec/memory_plan.h"
#include "core/exec/plan.h"
#include "core/exec/run_state.h"

namespace tsr::exec {

namespace {

// Folded values are kept for the signature's lifetime; larger results (a ConstantOfShape of a
// whole feature map) are computed at every run instead, into the arena.
constexpr size_t kMaxFoldedBytes = 64 << 10;

// Saturates instead of overflowing: inference may describe a tensor too large to allocate (its
// kernel then fails), and record_inferred sizes it before the kernel runs.
size_t type_bytes(const ops::ValueType& t) {
  size_t n = dtype_size(t.dtype);
  for (int64_t d : t.shape) {
    const auto u = static_cast<size_t>(d);
    if (u != 0 && n > SIZE_MAX / u) return SIZE_MAX;
    n *= u;
  }
  return n;
}

bool same_type(const ops::ValueType& a, const ops::ValueType& b) { return a.dtype == b.dtype && a.shape == b.shape; }

// What the arena layout reads of the Plan: its steps and, by tensor id, each value's last use
// and whether it escapes the run; by step, its wave.
struct PlanLifetimes {
  const std::vector<PlanStep>& steps;
  const std::vector<int32_t>& last_use;
  const std::vector<int32_t>& wave_of;
  const std::vector<uint8_t>& escapes;
};

// The recorded steps' output types by tensor id (null: not recorded), and by step whether its
// output 0 is a view of its input 0 (a view op, or a kernel that handed its input back).
struct RecordedTypes {
  std::vector<const ops::ValueType*> type_of;
  std::vector<uint8_t> view;
};

// A new plan for the signature of `inputs`, taking the recording's types and folded values.
RecordedTypes take_recording(const std::vector<PlanStep>& steps, const std::vector<Tensor>& inputs, bool waves,
                             SignatureRecording& rec, SignaturePlan& sig) {
  const size_t nt = rec.values.size(), ns = steps.size();
  for (const Tensor& v : inputs) sig.inputs.push_back(ops::ValueType::of(v));
  sig.waves = waves;
  sig.types.resize(ns);
  sig.folded.assign(ns, 0);
  sig.offsets.resize(ns);
  sig.values.assign(nt, Tensor());
  sig.value_offset.assign(nt, -1);
  RecordedTypes rt{std::vector<const ops::ValueType*>(nt, nullptr), std::vector<uint8_t>(ns, 0)};
  for (size_t s = 0; s < ns; ++s) {
    SignatureRecording::Step& r = rec.steps[s];
    if (!r.recorded) continue;
    const ir::Node& node = *steps[s].node;
    rt.view[s] = (steps[s].def->view_of_input0 || r.viewed) && !node.inputs.empty() && node.inputs[0] >= 0 &&
                 !node.outputs.empty() && node.outputs[0] >= 0;
    sig.folded[s] = r.folded;
    sig.types[s] = std::move(r.types);
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) rt.type_of[static_cast<size_t>(node.outputs[k])] = &sig.types[s][k];
  }
  for (size_t t = 0; t < nt; ++t)
    if (rec.values[t].defined()) {
      sig.values[t] = std::move(rec.values[t]);
      sig.folded_ids.push_back(static_cast<int32_t>(t));
    }
  return rt;
}

// The memory plan of a signature: which recorded values share one buffer (views, and outputs
// written over a dead input), when each buffer lives, and its offset in the arena. Lifetimes
// count in steps, or in waves when nodes may run side by side (a wave's values are all released
// after it).
class ArenaLayout {
 public:
  ArenaLayout(const PlanLifetimes& plan, const RecordedTypes& rt, SignaturePlan& sig)
      : plan_(plan), rt_(rt), sig_(sig), escapes_(plan.escapes), readers_(plan.last_use.size(), 0),
        group_(plan.last_use.size(), -1), first_(plan.last_use.size(), 0), last_(plan.last_use.size(), 0) {}

  // Sets sig's value_offset, offsets, arena_bytes, planned_values and inplace_values.
  void plan() {
    escape_through_views();
    count_readers();
    for (size_t s = 0; s < plan_.steps.size(); ++s)
      if (!sig_.types[s].empty() && !sig_.folded[s]) group_outputs(s);
    place_buffers();
  }

 private:
  int32_t unit(int32_t s) const { return sig_.waves ? plan_.wave_of[static_cast<size_t>(s)] : s; }
  // The unit after which value t (produced by step `producer`) is dead.
  int32_t dies(int32_t t, int32_t producer) const {
    const int32_t last = plan_.last_use[static_cast<size_t>(t)];
    return unit(last >= 0 ? last : producer);
  }

  // What escapes, now also through the views the kernels made.
  void escape_through_views() {
    for (size_t s = plan_.steps.size(); s-- > 0;)
      if (rt_.view[s]) {
        const ir::Node& node = *plan_.steps[s].node;
        if (escapes_[static_cast<size_t>(node.outputs[0])]) escapes_[static_cast<size_t>(node.inputs[0])] = 1;
      }
  }

  // The steps reading each value; a node reading one value twice is one reader.
  void count_readers() {
    for (const PlanStep& step : plan_.steps)
      if (step.node)
        for (size_t k = 0; k < step.node->inputs.size(); ++k) {
          const int32_t t = step.node->inputs[k];
          const auto before = step.node->inputs.begin() + static_cast<std::ptrdiff_t>(k);
          if (t >= 0 && std::find(step.node->inputs.begin(), before, t) == before) ++readers_[static_cast<size_t>(t)];
        }
  }

  // Puts step s's outputs in a group: its input's (a view, or written over a dead input) or a
  // buffer of their own. Groups are named by the value that owns the buffer; -1: not in the arena.
  void group_outputs(size_t s) {
    const PlanStep& step = plan_.steps[s];
    const ir::Node& node = *step.node;
    const auto si = static_cast<int32_t>(s);
    if (rt_.view[s]) {
      const int32_t i = node.inputs[0], o = node.outputs[0];
      if (i >= 0 && o >= 0 && group_[static_cast<size_t>(i)] >= 0) join(o, group_[static_cast<size_t>(i)], si);
      return;
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int32_t o = node.outputs[k];
      if (o < 0 || escapes_[static_cast<size_t>(o)] || sig_.types[s][k].dtype == DType::kString) continue;
      const int32_t shared = k == 0 && step.def->inplace ? inplace_group(step, si, sig_.types[s][k]) : -1;
      if (shared >= 0) {
        join(o, shared, si);
        ++sig_.inplace_values;
        continue;
      }
      group_[static_cast<size_t>(o)] = o;
      first_[static_cast<size_t>(o)] = unit(si);
      last_[static_cast<size_t>(o)] = dies(o, si);
      roots_.push_back(o);
    }
  }

  // Value o (of step si) shares group r's buffer, which then lives until o dies too.
  void join(int32_t o, int32_t r, int32_t si) {
    group_[static_cast<size_t>(o)] = r;
    last_[static_cast<size_t>(r)] = std::max(last_[static_cast<size_t>(r)], dies(o, si));
  }

  // The group an in-place step's output 0 (of type ot) may be written over: that of input 0 or
  // 1, when it (and every value sharing its buffer) dies at this step, has the output's dtype
  // and shape, and in waves no other node reads it meanwhile. -1: none.
  int32_t inplace_group(const PlanStep& step, int32_t si, const ops::ValueType& ot) const {
    const ir::Node& node = *step.node;
    for (size_t j = 0; j < 2 && j < node.inputs.size(); ++j) {
      const int32_t i = node.inputs[j];
      if (i < 0 || group_[static_cast<size_t>(i)] < 0 || !rt_.type_of[static_cast<size_t>(i)]) continue;
      const int32_t r = group_[static_cast<size_t>(i)];
      if (last_[static_cast<size_t>(r)] == unit(si) && same_type(*rt_.type_of[static_cast<size_t>(i)], ot) &&
          type_bytes(*rt_.type_of[static_cast<size_t>(r)]) == type_bytes(ot) &&
          (!sig_.waves || (r == i && readers_[static_cast<size_t>(i)] == 1)))
        return r;
    }
    return -1;
  }

  // Plans the buffers (greedy by size) and gives every grouped value its buffer's offset.
  void place_buffers() {
    const size_t nt = group_.size();
    std::vector<BufferLifetime> buffers;
    buffers.reserve(roots_.size());
    for (int32_t r : roots_)
      buffers.push_back({type_bytes(*rt_.type_of[static_cast<size_t>(r)]), first_[static_cast<size_t>(r)],
                         last_[static_cast<size_t>(r)]});
    const MemoryPlan mp = plan_greedy_by_size(buffers, ScratchArena::kAlign);
    std::vector<int64_t> root_offset(nt, -1);
    for (size_t b = 0; b < roots_.size(); ++b)
      root_offset[static_cast<size_t>(roots_[b])] = static_cast<int64_t>(mp.offsets[b]);
    for (size_t t = 0; t < nt; ++t)
      if (group_[t] >= 0) {
        sig_.value_offset[t] = root_offset[static_cast<size_t>(group_[t])];
        ++sig_.planned_values;
      }
    for (size_t s = 0; s < plan_.steps.size(); ++s) {
      if (sig_.types[s].empty() || sig_.folded[s]) continue;
      const ir::Node& node = *plan_.steps[s].node;
      sig_.offsets[s].assign(node.outputs.size(), -1);
      // A view's kernel allocates nothing; one that viewed by choice gets a fresh block should it
      // allocate after all (its offset would be its input's).
      for (size_t k = rt_.view[s] ? 1 : 0; k < node.outputs.size(); ++k)
        if (node.outputs[k] >= 0) sig_.offsets[s][k] = sig_.value_offset[static_cast<size_t>(node.outputs[k])];
    }
    sig_.arena_bytes = mp.arena_bytes;
  }

  const PlanLifetimes& plan_;
  const RecordedTypes& rt_;
  SignaturePlan& sig_;
  std::vector<uint8_t> escapes_;  // the Plan's, and what escapes through the kernels' views
  std::vector<int32_t> readers_;
  std::vector<int32_t> group_, first_, last_;  // by tensor id; first_/last_: of group roots
  std::vector<int32_t> roots_;                 // the groups, in step order
};

// Values the recording run allocated without recycling but the plan left out of the arena (a
// view a kernel made showed that they escape): later runs allocate them as usual, so give the
// block cache their blocks now, all at once, rather than let the next run take them from the
// system.
void seed_block_cache(const std::vector<PlanStep>& steps, const SignatureRecording& rec, const SignaturePlan& sig) {
  std::vector<Tensor> seeds;
  for (size_t s = 0; s < steps.size(); ++s) {
    const SignatureRecording::Step& r = rec.steps[s];
    const ir::Node& node = *steps[s].node;
    for (size_t k = 0; k < r.modes.size(); ++k) {
      const int32_t t = node.outputs[k];
      if (r.modes[k] != KernelContext::kTransient || t < 0 || sig.value_offset[static_cast<size_t>(t)] >= 0) continue;
      const ops::ValueType& ty = r.recorded ? sig.types[s][k] : r.types[k];
      if (auto seed = Tensor::empty(ty.dtype, ty.shape); seed.ok()) seeds.push_back(std::move(seed).value());
    }
  }
}

}  // namespace

void Plan::start_recording(RunState& rs) const {
  const ir::Graph& g = *graph_;
  SignatureRecording& rec = rs.recording;
  rec.fixed.assign(g.tensors.size(), 0);
  for (int32_t t : constant_ids_)
    rec.fixed[static_cast<size_t>(t)] = SignatureRecording::kShapeFixed | SignatureRecording::kValueFixed;
  for (int32_t t : g.inputs)
    if (g.tensors[static_cast<size_t>(t)].kind == ValueKind::kTensor)
      rec.fixed[static_cast<size_t>(t)] = SignatureRecording::kShapeFixed;
  rec.steps.resize(steps_.size());
  for (SignatureRecording::Step& r : rec.steps) {
    r.recorded = r.folded = r.viewed = false;
    r.types.clear();
    r.modes.clear();
  }
  rec.values.assign(g.tensors.size(), Tensor());
}

void Plan::record_inferred(size_t s, const std::vector<ops::ValueType>& out_types, uint64_t values_read,
                           RunState& rs) const {
  const PlanStep& step = steps_[s];
  const ir::Node& node = *step.node;
  SignatureRecording& rec = rs.recording;
  SignatureRecording::Step& r = rec.steps[s];
  // Recorded when the types follow from the signature: every input's shape is fixed by it and
  // every input value inference looked at is too; control flow decides by data.
  bool ok = step.kind == PlanStep::Kind::kHost && !step.def->control_flow;
  bool values_fixed = true;
  for (size_t k = 0; k < node.inputs.size() && ok; ++k) {
    const int32_t t = node.inputs[k];
    if (t < 0) continue;
    const uint8_t f = rec.fixed[static_cast<size_t>(t)];
    const bool read = k < 64 ? (values_read >> k & 1u) != 0 : values_read == ~uint64_t{0};
    ok = (f & SignatureRecording::kShapeFixed) && (!read || (f & SignatureRecording::kValueFixed));
    values_fixed = values_fixed && (f & SignatureRecording::kValueFixed);
  }
  size_t out_bytes = 0;
  bool outputs_kept = false;
  for (size_t k = 0; k < node.outputs.size() && ok; ++k) {
    if (node.outputs[k] < 0) continue;
    ok = out_types[k].kind == ValueKind::kTensor && out_types[k].fully_known();
    if (ok) out_bytes += std::min(type_bytes(out_types[k]), kMaxFoldedBytes + 1);  // no overflow
    outputs_kept = outputs_kept || keep_[static_cast<size_t>(node.outputs[k])];
  }
  r.recorded = ok;
  // Folded: computed from fixed values (or from shapes only) by a deterministic op; graph outputs
  // are computed at every run (the caller may write them).
  r.folded = ok && !step.def->random && (step.def->reads_input_shapes_only || values_fixed) && !outputs_kept &&
             out_bytes <= kMaxFoldedBytes;
  r.types.clear();
  r.modes.clear();
  if (!ok) return;
  r.types = out_types;
  if (r.folded) return;
  // What the plan will place in the arena is allocated now without recycling its block: later
  // runs will not ask for it again.
  r.modes.assign(node.outputs.size(), -1);
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    const int32_t t = node.outputs[k];
    if (t >= 0 && !escapes_[static_cast<size_t>(t)] && out_types[k].dtype != DType::kString)
      r.modes[k] = KernelContext::kTransient;
  }
}

void Plan::record_ran(size_t s, const std::vector<Tensor>& values, RunState& rs) const {
  const ir::Node& node = *steps_[s].node;
  SignatureRecording& rec = rs.recording;
  SignatureRecording::Step& r = rec.steps[s];
  if (!r.recorded) return;
  // The kernel must have produced what inference said (it may not have, e.g. an explicit
  // allocation of another shape): otherwise nothing of this step is recorded.
  for (size_t k = 0; k < node.outputs.size() && r.recorded; ++k) {
    const int32_t t = node.outputs[k];
    if (t < 0) continue;
    const Tensor& v = values[static_cast<size_t>(t)];
    r.recorded = v.defined() && v.kind() == ValueKind::kTensor && v.dtype() == r.types[k].dtype &&
                 v.shape() == r.types[k].shape;
  }
  if (!r.recorded) {
    r.folded = false;
    return;
  }
  // A kernel that hands back its input (Cast to the same dtype, a no-op reduction) makes a view,
  // as the view ops do: the plan gives both values one buffer.
  const int32_t in0 = node.inputs.empty() ? -1 : node.inputs[0], out0 = node.outputs.empty() ? -1 : node.outputs[0];
  r.viewed = in0 >= 0 && out0 >= 0 && values[static_cast<size_t>(out0)].raw() == values[static_cast<size_t>(in0)].raw() &&
             values[static_cast<size_t>(out0)].shares_storage(values[static_cast<size_t>(in0)]);
  const uint8_t f = SignatureRecording::kShapeFixed | (r.folded ? SignatureRecording::kValueFixed : 0);
  for (int32_t t : node.outputs) {
    if (t < 0) continue;
    rec.fixed[static_cast<size_t>(t)] = f;
    if (r.folded) rec.values[static_cast<size_t>(t)] = values[static_cast<size_t>(t)];
  }
}

void Plan::finish_recording(const std::vector<Tensor>& inputs, bool waves, RunState& rs) const {
  auto sig = std::make_shared<SignaturePlan>();
  const RecordedTypes rt = take_recording(steps_, inputs, waves, rs.recording, *sig);
  ArenaLayout(PlanLifetimes{steps_, last_use_, wave_of_, escapes_}, rt, *sig).plan();
  seed_block_cache(steps_, rs.recording, *sig);
  keep_signature(inputs, std::move(sig), rs);
}

void Plan::keep_signature(const std::vector<Tensor>& inputs, std::shared_ptr<SignaturePlan> sig, RunState& rs) const {
  // The recording run's planned values were freed to the C heap, which keeps their pages (glibc
  // raises its mmap threshold as large blocks are freed); hand them back before the arena takes
  // its own, so that recording does not add its peak to the arena's (peak RSS). Once per
  // recorded signature.
#if defined(__GLIBC__)
  if (sig->arena_bytes > 0) malloc_trim(0);
#endif
  // This run slot's arena now, so that the next run (the first planned one) allocates nothing.
  // Not fatal if it fails: the run then records again (and reports the error there).
  if (!grow_arena(rs, sig->arena_bytes).ok()) return;
  std::lock_guard<std::mutex> lock(signatures_mu_);
  for (const auto& kept : signatures_)
    if (kept->matches(inputs, sig->waves)) return;  // recorded meanwhile by a concurrent run
  signatures_.insert(signatures_.begin(), std::move(sig));
  if (signatures_.size() > kMaxSignatures) signatures_.pop_back();
}

}  // namespace tsr::exec
