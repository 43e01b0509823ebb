// Signature plans of a Plan (core/exec/signature_plan.h): recording the first run of a
// signature, building its plan (types, folded values, memory plan), finding it again.
#include <algorithm>
#include <cstdint>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/exec/memory_plan.h"
#include "core/exec/plan.h"

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

}  // namespace

bool SignaturePlan::matches(const std::vector<Tensor>& run_inputs, bool run_waves) const {
  if (run_waves != waves || run_inputs.size() != inputs.size()) return false;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& v = run_inputs[k];
    const ops::ValueType& t = inputs[k];
    if (v.kind() != t.kind || v.dtype() != t.dtype) return false;
    if (t.kind == ValueKind::kTensor && v.shape() != t.shape) return false;
  }
  return true;
}

std::shared_ptr<const SignaturePlan> Plan::find_signature(const std::vector<Tensor>& inputs, bool waves) const {
  std::lock_guard<std::mutex> lock(signatures_mu_);
  for (size_t i = 0; i < signatures_.size(); ++i) {
    if (!signatures_[i]->matches(inputs, waves)) continue;
    std::rotate(signatures_.begin(), signatures_.begin() + static_cast<std::ptrdiff_t>(i),
                signatures_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return signatures_.front();
  }
  return nullptr;
}

std::vector<std::shared_ptr<const SignaturePlan>> Plan::signature_plans() const {
  std::lock_guard<std::mutex> lock(signatures_mu_);
  return signatures_;
}

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
  const size_t nt = graph_->tensors.size(), ns = steps_.size();
  SignatureRecording& rec = rs.recording;
  auto sig = std::make_shared<SignaturePlan>();
  for (const Tensor& v : inputs) sig->inputs.push_back(ops::ValueType::of(v));
  sig->waves = waves;
  sig->types.resize(ns);
  sig->folded.assign(ns, 0);
  sig->offsets.resize(ns);
  sig->values.assign(nt, Tensor());
  sig->value_offset.assign(nt, -1);
  std::vector<const ops::ValueType*> type_of(nt, nullptr);
  std::vector<uint8_t> view(ns, 0);  // the step's output 0 is a view of its input 0
  for (size_t s = 0; s < ns; ++s) {
    SignatureRecording::Step& r = rec.steps[s];
    if (!r.recorded) continue;
    const ir::Node& n = *steps_[s].node;
    view[s] = (steps_[s].def->view_of_input0 || r.viewed) && !n.inputs.empty() && n.inputs[0] >= 0 &&
              !n.outputs.empty() && n.outputs[0] >= 0;
    sig->folded[s] = r.folded;
    sig->types[s] = std::move(r.types);
    const ir::Node& node = *steps_[s].node;
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) type_of[static_cast<size_t>(node.outputs[k])] = &sig->types[s][k];
  }
  for (size_t t = 0; t < nt; ++t)
    if (rec.values[t].defined()) {
      sig->values[t] = std::move(rec.values[t]);
      sig->folded_ids.push_back(static_cast<int32_t>(t));
    }

  // The memory plan. Lifetimes count in steps, or in waves when nodes may run side by side (a
  // wave's values are all released after it).
  const auto unit = [&](int32_t s) { return waves ? wave_of_[static_cast<size_t>(s)] : s; };
  const auto dies = [&](int32_t t, int32_t producer) {
    const int32_t last = last_use_[static_cast<size_t>(t)];
    return unit(last >= 0 ? last : producer);
  };
  // What escapes, now also through the views the kernels made.
  std::vector<uint8_t> escapes = escapes_;
  for (size_t s = ns; s-- > 0;)
    if (view[s]) {
      const ir::Node& node = *steps_[s].node;
      if (escapes[static_cast<size_t>(node.outputs[0])]) escapes[static_cast<size_t>(node.inputs[0])] = 1;
    }
  std::vector<int32_t> readers(nt, 0);  // steps reading each value
  for (const PlanStep& step : steps_)
    if (step.node)
      for (size_t k = 0; k < step.node->inputs.size(); ++k) {
        const int32_t t = step.node->inputs[k];
        // A node reading one value twice is one reader.
        if (t >= 0 && std::find(step.node->inputs.begin(), step.node->inputs.begin() + static_cast<std::ptrdiff_t>(k), t) ==
                          step.node->inputs.begin() + static_cast<std::ptrdiff_t>(k))
          ++readers[static_cast<size_t>(t)];
      }
  // Values sharing one buffer (views, and outputs written over a dead input) form a group named
  // by the value that owns the buffer; -1: not in the arena.
  std::vector<int32_t> group(nt, -1), first(nt, 0), last(nt, 0);
  std::vector<int32_t> roots;
  for (size_t s = 0; s < ns; ++s) {
    if (sig->types[s].empty() || sig->folded[s]) continue;
    const PlanStep& step = steps_[s];
    const ir::Node& node = *step.node;
    const auto si = static_cast<int32_t>(s);
    if (view[s]) {
      const int32_t i = node.inputs[0], o = node.outputs[0];
      if (i >= 0 && o >= 0 && group[static_cast<size_t>(i)] >= 0) {
        const int32_t r = group[static_cast<size_t>(i)];
        group[static_cast<size_t>(o)] = r;
        last[static_cast<size_t>(r)] = std::max(last[static_cast<size_t>(r)], dies(o, si));
      }
      continue;
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int32_t o = node.outputs[k];
      if (o < 0 || escapes[static_cast<size_t>(o)] || sig->types[s][k].dtype == DType::kString) continue;
      const ops::ValueType& ot = sig->types[s][k];
      int32_t shared = -1;
      for (size_t j = 0; j < 2 && k == 0 && step.def->inplace && j < node.inputs.size() && shared < 0; ++j) {
        // Written over input j: it (and every value sharing its buffer) dies at this step, has
        // the output's dtype and shape, and in waves no other node reads it meanwhile.
        const int32_t i = node.inputs[j];
        if (i < 0 || group[static_cast<size_t>(i)] < 0 || !type_of[static_cast<size_t>(i)]) continue;
        const int32_t r = group[static_cast<size_t>(i)];
        if (last[static_cast<size_t>(r)] == unit(si) && same_type(*type_of[static_cast<size_t>(i)], ot) &&
            type_bytes(*type_of[static_cast<size_t>(r)]) == type_bytes(ot) &&
            (!waves || (r == i && readers[static_cast<size_t>(i)] == 1)))
          shared = r;
      }
      if (shared >= 0) {
        group[static_cast<size_t>(o)] = shared;
        last[static_cast<size_t>(shared)] = std::max(last[static_cast<size_t>(shared)], dies(o, si));
        ++sig->inplace_values;
        continue;
      }
      group[static_cast<size_t>(o)] = o;
      first[static_cast<size_t>(o)] = unit(si);
      last[static_cast<size_t>(o)] = dies(o, si);
      roots.push_back(o);
    }
  }
  std::vector<BufferLifetime> buffers;
  buffers.reserve(roots.size());
  for (int32_t r : roots)
    buffers.push_back({type_bytes(*type_of[static_cast<size_t>(r)]), first[static_cast<size_t>(r)],
                       last[static_cast<size_t>(r)]});
  const MemoryPlan mp = plan_greedy_by_size(buffers, ScratchArena::kAlign);
  std::vector<int64_t> root_offset(nt, -1);
  for (size_t b = 0; b < roots.size(); ++b) root_offset[static_cast<size_t>(roots[b])] = static_cast<int64_t>(mp.offsets[b]);
  for (size_t t = 0; t < nt; ++t)
    if (group[t] >= 0) {
      sig->value_offset[t] = root_offset[static_cast<size_t>(group[t])];
      ++sig->planned_values;
    }
  for (size_t s = 0; s < ns; ++s) {
    if (sig->types[s].empty() || sig->folded[s]) continue;
    const ir::Node& node = *steps_[s].node;
    sig->offsets[s].assign(node.outputs.size(), -1);
    // A view's kernel allocates nothing; one that viewed by choice gets a fresh block should it
    // allocate after all (its offset would be its input's).
    for (size_t k = view[s] ? 1 : 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) sig->offsets[s][k] = sig->value_offset[static_cast<size_t>(node.outputs[k])];
  }
  sig->arena_bytes = mp.arena_bytes;
  // Values this run allocated without recycling but the plan left out of the arena (a view a
  // kernel made showed that they escape): later runs allocate them as usual, so give the block
  // cache their blocks now, all at once, rather than let the next run take them from the system.
  {
    std::vector<Tensor> seeds;
    for (size_t s = 0; s < ns; ++s) {
      const SignatureRecording::Step& r = rec.steps[s];
      const ir::Node& node = *steps_[s].node;
      for (size_t k = 0; k < r.modes.size(); ++k) {
        const int32_t t = node.outputs[k];
        if (r.modes[k] != KernelContext::kTransient || t < 0 || sig->value_offset[static_cast<size_t>(t)] >= 0) continue;
        const ops::ValueType& ty = r.recorded ? sig->types[s][k] : r.types[k];
        if (auto seed = Tensor::empty(ty.dtype, ty.shape); seed.ok()) seeds.push_back(std::move(seed).value());
      }
    }
  }

  // The recording run's planned values were freed to the C heap, which keeps their pages (glibc
  // raises its mmap threshold as large blocks are freed); hand them back before the arena takes
  // its own, so that recording does not add its peak to the arena's (peak RSS). Once per
  // recorded signature.
#if defined(__GLIBC__)
  if (sig->arena_bytes > 0) malloc_trim(0);
#endif
  // This run slot's arena now, so that the next run (the first planned one) allocates nothing.
  if (rs.arena.nbytes() < sig->arena_bytes) {
    rs.arena = Tensor();
    auto arena = Tensor::empty_fresh(DType::kU8, {static_cast<int64_t>(sig->arena_bytes)});
    if (!arena.ok()) return;  // not fatal: the run then records again (and reports the error there)
    rs.arena = std::move(arena).value();
  }
  std::lock_guard<std::mutex> lock(signatures_mu_);
  for (const auto& kept : signatures_)
    if (kept->matches(inputs, waves)) return;  // recorded meanwhile by a concurrent run
  signatures_.insert(signatures_.begin(), std::move(sig));
  if (signatures_.size() > kMaxSignatures) signatures_.pop_back();
}

Status Plan::check_arena_outputs(size_t s, std::vector<Tensor>& values, const RunState& rs, const RunMode& mode) const {
  const ir::Node& node = *steps_[s].node;
  const char* base = static_cast<const char*>(rs.arena.raw());
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    const int32_t t = node.outputs[k];
    if (t < 0) continue;
    Tensor& v = values[static_cast<size_t>(t)];
    if (v.is_sequence()) {
      bool shared = false;
      for (const Tensor& e : v.elements()) shared = shared || e.shares_storage(rs.arena);
      if (!shared) continue;
      std::vector<Tensor> elements;
      for (const Tensor& e : v.elements()) {
        auto copy = e.clone();
        if (!copy.ok()) return copy.status().with_context(str_cat(steps_[s].place, ".output[", k, "]"));
        elements.push_back(std::move(copy).value());
      }
      v = Tensor::sequence(v.dtype(), std::move(elements));
      continue;
    }
    if (!v.shares_storage(rs.arena)) continue;
    const int64_t off = mode.plan->value_offset[static_cast<size_t>(t)];
    if (off >= 0 && v.raw() == base + off) continue;
    // The kernel returned a view into the arena that the plan did not foresee (a Cast to the
    // same dtype, a no-op reduction): those bytes may be reused while it lives, so copy it out.
    auto copy = v.clone();
    if (!copy.ok()) return copy.status().with_context(str_cat(steps_[s].place, ".output[", k, "]"));
    v = std::move(copy).value();
  }
  return ok_status();
}

}  // namespace tsr::exec
