// The run loop of a Plan (core/exec/plan.h): steps one by one or in inter-op waves, with the
// signature plan's types and arena when there is one.
#include "core/exec/plan.h"

#include <algorithm>
#include <chrono>

#include "core/exec/run_state.h"

namespace tsr::exec {

namespace {

// A node whose inputs hold fewer elements than this is not worth a task of its own: below it the
// hand-off costs more than the node (a few microseconds).
constexpr int64_t kInterOpMinElements = 16384;

}  // namespace

Plan::~Plan() = default;

Status grow_arena(RunState& rs, size_t bytes) {
  if (rs.arena.nbytes() >= bytes) return ok_status();
  rs.arena = Tensor();
  TSR_ASSIGN_OR_RETURN(rs.arena, Tensor::empty_fresh(DType::kU8, {static_cast<int64_t>(bytes)}));
  return ok_status();
}

Expected<DeviceTensor*> DeviceKernelContext::alloc_output(size_t i) {
  const ops::ValueType& t = output_types_.at(i);
  if (!t.fully_known())
    return internal_error(place_, ".output[", i, "]: type ", t.str(), " is not fully known on the device");
  DeviceTensor& out = outputs_.at(i);
  out.dtype = t.dtype;
  out.shape = t.shape;
  out.byte_offset = 0;
  // Zero-sized tensors still get a (minimal) buffer so that every defined value has one.
  auto buf = backend_.allocate(std::max<size_t>(out.nbytes(), 4));
  if (!buf.ok()) return buf.status().with_context(str_cat(place_, ".output[", i, "]"));
  out.buffer = std::move(buf).value();
  return &out;
}

Status Plan::run_device_step(const PlanStep& step, RunState& rs) const {
  const std::vector<Tensor>& host_values = rs.values;
  std::vector<const Tensor*>& in_values = rs.in_values;
  std::vector<const DeviceTensor*>& din = rs.din_values;
  std::vector<ops::ValueType>& in_types = rs.in_types;
  std::vector<DeviceTensor>& dvals = rs.device_values;
  std::vector<DeviceTensor>& douts = rs.douts;
  const ir::Node& node = *step.node;
  const size_t ni = node.inputs.size();
  in_values.assign(ni, nullptr);
  din.assign(ni, nullptr);
  in_types.assign(ni, ops::ValueType{});
  for (size_t k = 0; k < ni; ++k) {
    const int32_t t = node.inputs[k];
    if (t < 0) continue;
    const Tensor& h = host_values[static_cast<size_t>(t)];
    const DeviceTensor* d = &dvals[static_cast<size_t>(t)];
    if (!d->defined()) d = &device_constants_[static_cast<size_t>(t)];
    if (h.defined()) in_values[k] = &h;
    if (d->defined()) din[k] = d;
    const bool host = k < 32 && (step.host_inputs >> k & 1u);  // inputs past 32 are device inputs
    if (host ? !h.defined() : !d->defined())
      return internal_error(step.place, ".input[", k, "]: value not on the ", host ? "host" : "device");
    in_types[k] = host || !d->defined() ? ops::ValueType{h.dtype(), true, h.shape(), h.kind()}
                                         : ops::ValueType{d->dtype, true, d->shape, ValueKind::kTensor};
  }
  // Load-time style inference: only host-resident values are visible, shapes are all concrete.
  ops::InferContext ictx(node, step.place, in_types, in_values, false, rs.out_types);
  ictx.set_model(model_);
  TSR_RETURN_IF_ERROR(step.def->infer(ictx));
  douts.assign(node.outputs.size(), DeviceTensor());
  DeviceKernelContext ctx(*device_, node, step.place, din, in_values, ictx.outputs(), douts);
  TSR_RETURN_IF_ERROR(step.device_kernel->record(ctx));
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    const int32_t t = node.outputs[k];
    if (t < 0) continue;
    if (!douts[k].defined()) return internal_error(step.place, ".output[", k, "]: the device kernel produced no value");
    dvals[static_cast<size_t>(t)] = std::move(douts[k]);
  }
  return ok_status();
}

Expected<std::vector<Tensor>> Plan::run(const std::vector<Tensor>& inputs, ThreadPool& pool) const {
  std::vector<Tensor> outputs;
  TSR_RETURN_IF_ERROR(run(inputs, pool, &outputs));
  return outputs;
}

Status Plan::run(const std::vector<Tensor>& inputs, ThreadPool& pool, std::vector<Tensor>* outputs) const {
  // The previous outputs go first: their blocks are then free for this run.
  for (Tensor& t : *outputs) t = Tensor();
  auto rs = states_.acquire();
  // Plans need host execution in step order or in waves; a device plan infers at every step.
  RunMode mode;
  mode.waves = !waves_.empty() && pool.num_threads() > 1 && !profiler_ && !ThreadPool::inside_task();
  std::shared_ptr<const SignaturePlan> plan;
  if (!device_) {
    plan = find_signature(inputs, mode.waves);
    mode.plan = plan.get();
    mode.record = !plan;
  }
  if (mode.plan) {
    // A signature recorded by another run slot, or a larger one than this slot's last.
    Status st = grow_arena(*rs, mode.plan->arena_bytes);
    if (!st.ok()) return st.with_context(str_cat("graph \"", graph_->name, "\" memory plan"));
  }
  if (mode.record) start_recording(*rs);
  Status result = run_steps(inputs, pool, *rs, mode, *outputs);
  if (result.ok() && mode.record) finish_recording(inputs, mode.waves, *rs);
  if (device_) {
    // Device values are dropped before waiting, so their buffers are free again for the next run;
    // the wait reports device failures and leaves nothing in flight between runs.
    std::fill(rs->device_values.begin(), rs->device_values.end(), DeviceTensor());
    Status st = device_->synchronize();
    if (result.ok() && !st.ok()) result = std::move(st);
  }
  if (!result.ok()) outputs->clear();
  return result;
}

Status Plan::run_host_step(size_t s, const std::vector<const Tensor*>& in_values, std::vector<ops::ValueType>& in_types,
                           std::vector<ops::ValueType>& out_types, std::vector<Tensor>& outs, ScratchArena& scratch,
                           ThreadPool& pool, RunState& rs, const RunMode& mode) const {
  const PlanStep& step = steps_[s];
  const ir::Node& node = *step.node;
  if (mode.plan && !mode.plan->types[s].empty()) {
    // Recorded: the types and the memory plan of this signature, no inference.
    const std::vector<int64_t>& offsets = mode.plan->offsets[s];
    return run_kernel(node, step.place, *step.kernel,
                      {in_values, mode.plan->types[s], outs, scratch, &rs.arena, offsets.data()}, pool);
  }
  uint64_t values_read = 0;
  TSR_RETURN_IF_ERROR(infer_outputs(node, *step.def, step.place, in_values, in_types, out_types, model_, &values_read));
  if (!mode.record) return run_kernel(node, step.place, *step.kernel, {in_values, out_types, outs, scratch}, pool);
  record_inferred(s, out_types, values_read, rs);
  const std::vector<int64_t>& modes = rs.recording.steps[s].modes;
  return run_kernel(node, step.place, *step.kernel,
                    {in_values, out_types, outs, scratch, nullptr, modes.empty() ? nullptr : modes.data()}, pool);
}

Status Plan::run_steps(const std::vector<Tensor>& inputs, ThreadPool& pool, RunState& rs, const RunMode& mode,
                       std::vector<Tensor>& outputs) const {
  const ir::Graph& g = *graph_;
  if (inputs.size() != g.inputs.size())
    return invalid_argument("graph \"", g.name, "\" takes ", g.inputs.size(), " inputs, got ", inputs.size());
  rs.values.resize(g.tensors.size());
  // Whatever happens, the table holds no tensors once run() returns (no memory kept alive).
  struct Clear {
    std::vector<Tensor>& v;
    ~Clear() { std::fill(v.begin(), v.end(), Tensor()); }
  } clear{rs.values};
  TSR_RETURN_IF_ERROR(bind_inputs(inputs, rs));
  if (device_) rs.device_values.resize(g.tensors.size());
  if (!mode.waves) {
    for (size_t s = 0; s < steps_.size(); ++s) TSR_RETURN_IF_ERROR(run_step(s, pool, rs, mode));
  } else {
    for (const Wave& w : waves_) {
      if (wave_pays(w, rs, mode)) {
        TSR_RETURN_IF_ERROR(run_wave(w, pool, rs, mode));
      } else {
        for (size_t s = w.begin; s < w.end; ++s) TSR_RETURN_IF_ERROR(run_step(s, pool, rs, mode));
      }
    }
  }
  return collect_outputs(rs, mode, outputs);
}

Status Plan::bind_inputs(const std::vector<Tensor>& inputs, RunState& rs) const {
  const ir::Graph& g = *graph_;
  std::vector<Tensor>& values = rs.values;
  for (int32_t t : constant_ids_) values[static_cast<size_t>(t)] = g.tensors[static_cast<size_t>(t)].constant;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto& info = g.tensors[static_cast<size_t>(g.inputs[k])];
    TSR_RETURN_IF_ERROR(check_input(info, k, inputs[k]));
    values[static_cast<size_t>(g.inputs[k])] = inputs[k];
  }
  return ok_status();
}

void Plan::release_dead(const PlanStep& step, RunState& rs) const {
  for (int32_t t : step.release_after) {
    rs.values[static_cast<size_t>(t)] = Tensor();
    if (device_) rs.device_values[static_cast<size_t>(t)] = DeviceTensor();
  }
}

Status Plan::run_copy_step(const PlanStep& step, RunState& rs) const {
  std::vector<DeviceTensor>& dvals = rs.device_values;
  if (step.kind == PlanStep::Kind::kUpload) {
    const Tensor& v = rs.values[static_cast<size_t>(step.tensor)];
    if (!v.defined()) return internal_error(step.place, ": value not computed");
    auto up = device_->upload(v);
    if (!up.ok()) return up.status().with_context(step.place);
    dvals[static_cast<size_t>(step.tensor)] = std::move(up).value();
    return ok_status();
  }
  const DeviceTensor& d = dvals[static_cast<size_t>(step.tensor)];
  const DeviceTensor& src = d.defined() ? d : device_constants_[static_cast<size_t>(step.tensor)];
  if (!src.defined()) return internal_error(step.place, ": value not computed");
  auto down = device_->download(src);
  if (!down.ok()) return down.status().with_context(step.place);
  rs.values[static_cast<size_t>(step.tensor)] = std::move(down).value();
  return ok_status();
}

Status Plan::run_step(size_t s, ThreadPool& pool, RunState& rs, const RunMode& mode) const {
  const PlanStep& step = steps_[s];
  std::vector<Tensor>& values = rs.values;
  if (step.kind == PlanStep::Kind::kUpload || step.kind == PlanStep::Kind::kDownload) {
    TSR_RETURN_IF_ERROR(run_copy_step(step, rs));
    release_dead(step, rs);
    return ok_status();
  }
  std::chrono::steady_clock::time_point t0;
  if (step.kind == PlanStep::Kind::kDevice) {
    if (profiler_) t0 = std::chrono::steady_clock::now();
    TSR_RETURN_IF_ERROR(run_device_step(step, rs));
    if (profiler_)
      profiler_->record(step, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                        Profiler::Work());
    release_dead(step, rs);
    return ok_status();
  }
  const ir::Node& node = *step.node;
  if (mode.plan && mode.plan->folded[s]) {
    // Fixed by the signature: the recorded values.
    for (int32_t t : node.outputs)
      if (t >= 0) values[static_cast<size_t>(t)] = mode.plan->values[static_cast<size_t>(t)];
    release_dead(step, rs);
    return ok_status();
  }
  std::vector<const Tensor*>& in_values = rs.in_values;
  const size_t ni = node.inputs.size();
  in_values.assign(ni, nullptr);
  for (size_t k = 0; k < ni; ++k) {
    const int32_t t = node.inputs[k];
    if (t < 0) continue;
    const Tensor& v = values[static_cast<size_t>(t)];
    if (!v.defined()) return internal_error(step.place, ".input[", k, "]: value not computed");
    in_values[k] = &v;
  }
  double cpu0 = 0;
  if (profiler_) {
    pool.set_accounting(true);
    pool.take_tally();
    profiler_->threads = pool.num_threads();
    cpu0 = ThreadPool::thread_cpu_ms();
    t0 = std::chrono::steady_clock::now();
  }
  TSR_RETURN_IF_ERROR(run_host_step(s, in_values, rs.in_types, rs.out_types, rs.outs, rs.scratch, pool, rs, mode));
  if (profiler_) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const ThreadPool::WorkTally t = pool.take_tally();
    Profiler::Work w;
    w.serial_ms = std::max(0.0, ThreadPool::thread_cpu_ms() - cpu0 - t.caller_chunk_ms - t.wait_ms);
    w.work_ms = w.serial_ms + t.chunk_ms;
    w.span_ms = w.serial_ms + t.span_ms;
    w.caller_chunk_ms = t.caller_chunk_ms;
    w.jobs = t.jobs;
    profiler_->record(step, ms, w);
  }
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    const int32_t t = node.outputs[k];
    if (t >= 0) values[static_cast<size_t>(t)] = std::move(rs.outs[k]);
  }
  if (mode.plan) TSR_RETURN_IF_ERROR(check_arena_outputs(s, values, rs, mode));
  if (mode.record) record_ran(s, values, rs);
  release_dead(step, rs);
  return ok_status();
}

bool Plan::wave_pays(const Wave& w, const RunState& rs, const RunMode& mode) const {
  int heavy = 0;
  for (size_t s = w.begin; s < w.end && heavy < 2 && w.end - w.begin > 1; ++s) {
    if (mode.plan && mode.plan->folded[s]) continue;
    int64_t elements = 0;
    for (int32_t t : steps_[s].node->inputs)
      if (t >= 0 && rs.values[static_cast<size_t>(t)].kind() == ValueKind::kTensor)
        elements += rs.values[static_cast<size_t>(t)].numel();
    heavy += elements >= kInterOpMinElements;
  }
  return heavy >= 2;
}

Status Plan::collect_outputs(const RunState& rs, const RunMode& mode, std::vector<Tensor>& outputs) const {
  const ir::Graph& g = *graph_;
  outputs.resize(g.outputs.size());
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    Tensor& out = outputs[k];
    out = rs.values[static_cast<size_t>(g.outputs[k])];
    // The caller may write its outputs: none may share the arena or a recorded value.
    bool shared = mode.plan && out.shares_storage(rs.arena);
    if (mode.plan)
      for (int32_t t : mode.plan->folded_ids) shared = shared || out.shares_storage(mode.plan->values[static_cast<size_t>(t)]);
    if (mode.record)
      for (const Tensor& v : rs.recording.values) shared = shared || (v.defined() && out.shares_storage(v));
    if (shared) {
      auto copy = out.clone();
      if (!copy.ok()) return copy.status().with_context(str_cat("graph \"", g.name, "\" output[", k, "]"));
      out = std::move(copy).value();
    }
  }
  return ok_status();
}

Status Plan::run_wave(const Wave& w, ThreadPool& pool, RunState& rs, const RunMode& mode) const {
  std::vector<Tensor>& values = rs.values;
  const size_t n = w.end - w.begin;
  if (rs.tasks.size() < n) rs.tasks.resize(n);
  // Tasks only read the value table (inputs come from earlier levels); outputs are moved in and
  // dead values released after the whole level, so no task sees a slot change under it. Folded
  // steps of a planned run take their recorded values after the level, like the others.
  pool.parallel_for(static_cast<int64_t>(n), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const size_t s = w.begin + static_cast<size_t>(i);
      const PlanStep& step = steps_[s];
      RunState::Task& task = rs.tasks[static_cast<size_t>(i)];
      const ir::Node& node = *step.node;
      task.status = ok_status();
      if (mode.plan && mode.plan->folded[s]) continue;
      task.in_values.assign(node.inputs.size(), nullptr);
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const int32_t t = node.inputs[k];
        if (t < 0) continue;
        const Tensor& v = values[static_cast<size_t>(t)];
        if (!v.defined()) {
          task.status = internal_error(step.place, ".input[", k, "]: value not computed");
          break;
        }
        task.in_values[k] = &v;
      }
      if (task.status.ok())
        task.status = run_host_step(s, task.in_values, task.in_types, task.out_types, task.outs, task.scratch, pool, rs,
                                    mode);
    }
  });
  Status st = ok_status();
  for (size_t i = 0; i < n && st.ok(); ++i) {
    const size_t s = w.begin + i;
    RunState::Task& task = rs.tasks[i];
    if (!task.status.ok()) {
      st = task.status;
      break;
    }
    const ir::Node& node = *steps_[s].node;
    const bool folded = mode.plan && mode.plan->folded[s];
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int32_t t = node.outputs[k];
      if (t < 0) continue;
      values[static_cast<size_t>(t)] = folded ? mode.plan->values[static_cast<size_t>(t)] : std::move(task.outs[k]);
    }
    if (mode.plan && !folded) st = check_arena_outputs(s, values, rs, mode);
    if (st.ok() && mode.record) record_ran(s, values, rs);
  }
  if (!st.ok()) {
    for (size_t j = 0; j < n; ++j) rs.tasks[j].outs.clear();  // keep no tensors past the run
    return st;
  }
  for (size_t s = w.begin; s < w.end; ++s)
    for (int32_t t : steps_[s].release_after) values[static_cast<size_t>(t)] = Tensor();
  return ok_status();
}

}  // namespace tsr::exec
