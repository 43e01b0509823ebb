#include "core/exec/plan.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "core/ir/topo.h"
#include "core/passes/placement.h"

namespace tsr::exec {

namespace {

// A node's level is one more than the highest level among the producers of its inputs (graph
// inputs and constants: none). Returns `order` stably sorted by level, still a topological
// order, in which the nodes of one level are adjacent and independent of each other.
std::vector<int32_t> level_order(const ir::Graph& g, const std::vector<int32_t>& order, std::vector<int32_t>* level) {
  std::vector<int32_t> value_level(g.tensors.size(), -1);
  level->assign(g.nodes.size(), 0);
  for (int32_t n : order) {
    const ir::Node& node = g.nodes[static_cast<size_t>(n)];
    int32_t l = 0;
    for (int32_t t : node.inputs)
      if (t >= 0) l = std::max(l, value_level[static_cast<size_t>(t)] + 1);
    (*level)[static_cast<size_t>(n)] = l;
    for (int32_t t : node.outputs)
      if (t >= 0) value_level[static_cast<size_t>(t)] = l;
  }
  std::vector<int32_t> sorted = order;
  std::stable_sort(sorted.begin(), sorted.end(), [&](int32_t a, int32_t b) {
    return (*level)[static_cast<size_t>(a)] < (*level)[static_cast<size_t>(b)];
  });
  return sorted;
}

// A node whose inputs hold fewer elements than this is not worth a task of its own: below it the
// hand-off costs more than the node (a few microseconds).
constexpr int64_t kInterOpMinElements = 16384;

}  // namespace

Expected<std::unique_ptr<Plan>> Plan::create(const ir::Model& model, int32_t gi, Backend& backend,
                                             const PlanOptions& options) {
  if (gi < 0 || static_cast<size_t>(gi) >= model.graphs.size())
    return invalid_argument("graph index ", gi, " out of range");
  auto plan = std::unique_ptr<Plan>(new Plan());
  plan->model_ = &model;
  plan->graph_ = &model.graphs[static_cast<size_t>(gi)];
  plan->graph_index_ = gi;
  const ir::Graph& g = *plan->graph_;
  TSR_ASSIGN_OR_RETURN(std::vector<int32_t> order, ir::topological_order(g, gi));

  const size_t nt = g.tensors.size();
  plan->keep_.assign(nt, false);
  for (int32_t t : g.outputs) plan->keep_[static_cast<size_t>(t)] = true;
  std::vector<int32_t> last_use(nt, -1);

  const auto& reg = ops::OpRegistry::global();
  std::vector<std::string> unsupported_ops;
  std::vector<int32_t> node_level;  // filled with inter-op scheduling
  // Without a device every node runs on the host in topological order; with one, the placement
  // pass decides each node's device and inserts the copies.
  passes::Placement placement;
  DeviceBackend* device = options.device;
  plan->device_ = device;
  if (device) {
    auto support = [device](const ir::Node& node, const std::vector<ops::ValueType>& types) {
      const DeviceSupport s = device->device_support(node, types);
      return passes::NodeSupport{s.supported, s.host_inputs};
    };
    passes::PlacementOptions po;
    po.min_device_elements = options.min_device_elements;
    placement = passes::place_graph(model, gi, order, support, po);
    plan->device_nodes_ = placement.device_nodes;
    plan->copies_ = placement.copies;
    plan->device_constants_.resize(nt);
  } else {
    if (options.inter_op) order = level_order(g, order, &node_level);
    for (int32_t n : order) placement.steps.push_back({passes::PlacedStep::Kind::kNode, n});
  }
  for (const passes::PlacedStep& ps : placement.steps) {
    const size_t s = plan->steps_.size();
    if (ps.kind != passes::PlacedStep::Kind::kNode) {
      PlanStep step;
      step.kind = ps.kind == passes::PlacedStep::Kind::kUpload ? PlanStep::Kind::kUpload : PlanStep::Kind::kDownload;
      step.tensor = ps.index;
      step.node_index = -1;
      step.place = str_cat("graph[", gi, "] ", step.kind == PlanStep::Kind::kUpload ? "upload" : "download", " of \"",
                           g.tensors[static_cast<size_t>(ps.index)].name, "\"");
      last_use[static_cast<size_t>(ps.index)] = static_cast<int32_t>(s);
      plan->steps_.push_back(std::move(step));
      continue;
    }
    const int32_t n = ps.index;
    const ir::Node& node = g.nodes[static_cast<size_t>(n)];
    PlanStep step;
    step.node_index = n;
    step.node = &node;
    step.place = ir::node_place(gi, n, node);
    step.def = reg.find(node.op);
    if (!step.def) return unsupported(step.place, ": unsupported op '", node.op, "'");
    const bool on_device = device && placement.node_device[static_cast<size_t>(n)] == passes::Device::kDevice;
    KernelInit init{node, step.place, {}, {}};
    init.input_types.resize(node.inputs.size());
    init.constant_inputs.resize(node.inputs.size(), nullptr);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int32_t t = node.inputs[k];
      if (t < 0) continue;
      const auto& info = g.tensors[static_cast<size_t>(t)];
      init.input_types[k] = {info.dtype, info.has_shape, info.shape, info.kind};
      if (info.constant.defined()) {
        init.constant_inputs[k] = &info.constant;
        // A device node reads constants from a device copy uploaded once, here.
        if (on_device && !(k < 32 && (placement.host_inputs[static_cast<size_t>(n)] >> k & 1u)) &&
            !plan->device_constants_[static_cast<size_t>(t)].defined()) {
          auto up = device->upload(info.constant);
          if (!up.ok()) return up.status().with_context(str_cat(step.place, ".input[", k, "]"));
          plan->device_constants_[static_cast<size_t>(t)] = std::move(up).value();
        }
      }
      last_use[static_cast<size_t>(t)] = static_cast<int32_t>(s);
    }
    if (on_device) {
      step.kind = PlanStep::Kind::kDevice;
      step.host_inputs = placement.host_inputs[static_cast<size_t>(n)];
      auto dk = device->create_device_kernel(init);
      if (!dk.ok()) return dk.status();
      step.device_kernel = std::move(dk).value();
      plan->steps_.push_back(std::move(step));
      continue;
    }
    auto kernel = exec::is_control_flow_op(node.op) ? create_control_flow_kernel(model, init, backend, options)
                                                    : backend.create_kernel(init);
    if (!kernel.ok()) {
      if (kernel.status().code() == StatusCode::kUnsupported) {
        unsupported_ops.push_back(kernel.status().message());
        continue;
      }
      return kernel.status();
    }
    step.kernel = std::move(kernel).value();
    plan->steps_.push_back(std::move(step));
  }
  if (!unsupported_ops.empty()) {
    std::string msg = str_cat(unsupported_ops.size(), " node(s) have no ", backend.name(), " kernel:");
    for (const auto& m : unsupported_ops) msg += "\n  " + m;
    return unsupported(msg);
  }
  // Node outputs that nobody reads die right after their producer.
  for (size_t s = 0; s < plan->steps_.size(); ++s)
    if (plan->steps_[s].node)
      for (int32_t t : plan->steps_[s].node->outputs)
      if (t >= 0 && last_use[static_cast<size_t>(t)] < 0) last_use[static_cast<size_t>(t)] = static_cast<int32_t>(s);
  if (!node_level.empty()) {
    for (size_t s = 0; s < plan->steps_.size(); ++s) {
      const int32_t lvl = node_level[static_cast<size_t>(plan->steps_[s].node_index)];
      if (plan->waves_.empty() || node_level[static_cast<size_t>(plan->steps_[plan->waves_.back().begin].node_index)] != lvl)
        plan->waves_.push_back({s, s});
      plan->waves_.back().end = s + 1;
    }
  }
  for (size_t t = 0; t < nt; ++t) {
    if (g.tensors[t].constant.defined()) plan->constant_ids_.push_back(static_cast<int32_t>(t));
    if (plan->keep_[t] || last_use[t] < 0 || g.tensors[t].constant.defined()) continue;
    plan->steps_[static_cast<size_t>(last_use[t])].release_after.push_back(static_cast<int32_t>(t));
  }
  plan->wave_of_.resize(plan->steps_.size());
  for (size_t s = 0; s < plan->steps_.size(); ++s) plan->wave_of_[s] = static_cast<int32_t>(s);
  for (size_t w = 0; w < plan->waves_.size(); ++w)
    for (size_t s = plan->waves_[w].begin; s < plan->waves_[w].end; ++s) plan->wave_of_[s] = static_cast<int32_t>(w);
  // What may outlive its last use: graph outputs, what control flow or handle-keeping ops read
  // (a branch may return it, a sequence holds it), and, backwards through views, their inputs.
  plan->escapes_.assign(plan->keep_.begin(), plan->keep_.end());
  for (const PlanStep& step : plan->steps_) {
    if (!step.node || !(step.def->control_flow || (step.def->any_value_kind && !step.def->view_of_input0))) continue;
    for (int32_t t : step.node->inputs)
      if (t >= 0) plan->escapes_[static_cast<size_t>(t)] = 1;
  }
  for (size_t s = plan->steps_.size(); s-- > 0;) {
    const PlanStep& step = plan->steps_[s];
    if (!step.node || !step.def->view_of_input0 || step.node->inputs.empty() || step.node->inputs[0] < 0) continue;
    for (int32_t t : step.node->outputs)
      if (t >= 0 && plan->escapes_[static_cast<size_t>(t)]) plan->escapes_[static_cast<size_t>(step.node->inputs[0])] = 1;
  }
  plan->last_use_ = std::move(last_use);
  return plan;
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
  if (mode.plan && rs->arena.nbytes() < mode.plan->arena_bytes) {
    // A signature recorded by another run slot, or a larger one than this slot's last.
    rs->arena = Tensor();
    auto arena = Tensor::empty_fresh(DType::kU8, {static_cast<int64_t>(mode.plan->arena_bytes)});
    if (!arena.ok()) return arena.status().with_context(str_cat("graph \"", graph_->name, "\" memory plan"));
    rs->arena = std::move(arena).value();
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
  std::vector<DeviceTensor>& dvals = rs.device_values;
  std::vector<const Tensor*>& in_values = rs.in_values;
  std::vector<Tensor>& outs = rs.outs;
  const ir::Graph& g = *graph_;
  if (inputs.size() != g.inputs.size())
    return invalid_argument("graph \"", g.name, "\" takes ", g.inputs.size(), " inputs, got ", inputs.size());
  std::vector<Tensor>& values = rs.values;
  values.resize(g.tensors.size());
  // Whatever happens, the table holds no tensors once run() returns (no memory kept alive).
  struct Clear {
    std::vector<Tensor>& v;
    ~Clear() { std::fill(v.begin(), v.end(), Tensor()); }
  } clear{values};
  for (int32_t t : constant_ids_) values[static_cast<size_t>(t)] = g.tensors[static_cast<size_t>(t)].constant;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto& info = g.tensors[static_cast<size_t>(g.inputs[k])];
    TSR_RETURN_IF_ERROR(check_input(info, k, inputs[k]));
    values[static_cast<size_t>(g.inputs[k])] = inputs[k];
  }

  if (device_) dvals.resize(g.tensors.size());
  const auto run_one = [&](size_t s) -> Status {
    const PlanStep& step = steps_[s];
    const auto release = [&] {
      for (int32_t t : step.release_after) {
        values[static_cast<size_t>(t)] = Tensor();
        if (device_) dvals[static_cast<size_t>(t)] = DeviceTensor();
      }
    };
    if (step.kind == PlanStep::Kind::kUpload) {
      const Tensor& v = values[static_cast<size_t>(step.tensor)];
      if (!v.defined()) return internal_error(step.place, ": value not computed");
      auto up = device_->upload(v);
      if (!up.ok()) return up.status().with_context(step.place);
      dvals[static_cast<size_t>(step.tensor)] = std::move(up).value();
      release();
      return ok_status();
    }
    if (step.kind == PlanStep::Kind::kDownload) {
      const DeviceTensor& d = dvals[static_cast<size_t>(step.tensor)];
      const DeviceTensor& src = d.defined() ? d : device_constants_[static_cast<size_t>(step.tensor)];
      if (!src.defined()) return internal_error(step.place, ": value not computed");
      auto down = device_->download(src);
      if (!down.ok()) return down.status().with_context(step.place);
      values[static_cast<size_t>(step.tensor)] = std::move(down).value();
      release();
      return ok_status();
    }
    if (step.kind == PlanStep::Kind::kDevice) {
      std::chrono::steady_clock::time_point t0;
      if (profiler_) t0 = std::chrono::steady_clock::now();
      TSR_RETURN_IF_ERROR(run_device_step(step, rs));
      if (profiler_)
        profiler_->record(step, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      release();
      return ok_status();
    }
    const ir::Node& node = *step.node;
    if (mode.plan && mode.plan->folded[s]) {
      // Fixed by the signature: the recorded values.
      for (int32_t t : node.outputs)
        if (t >= 0) values[static_cast<size_t>(t)] = mode.plan->values[static_cast<size_t>(t)];
      release();
      return ok_status();
    }
    const size_t ni = node.inputs.size();
    in_values.assign(ni, nullptr);
    for (size_t k = 0; k < ni; ++k) {
      const int32_t t = node.inputs[k];
      if (t < 0) continue;
      const Tensor& v = values[static_cast<size_t>(t)];
      if (!v.defined()) return internal_error(step.place, ".input[", k, "]: value not computed");
      in_values[k] = &v;
    }
    std::chrono::steady_clock::time_point t0;
    if (profiler_) t0 = std::chrono::steady_clock::now();
    TSR_RETURN_IF_ERROR(run_host_step(s, in_values, rs.in_types, rs.out_types, outs, rs.scratch, pool, rs, mode));
    if (profiler_)
      profiler_->record(step, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int32_t t = node.outputs[k];
      if (t >= 0) values[static_cast<size_t>(t)] = std::move(outs[k]);
    }
    if (mode.plan) TSR_RETURN_IF_ERROR(check_arena_outputs(s, values, rs, mode));
    if (mode.record) record_ran(s, values, rs);
    release();
    return ok_status();
  };
  if (!mode.waves) {
    for (size_t s = 0; s < steps_.size(); ++s) TSR_RETURN_IF_ERROR(run_one(s));
  } else {
    for (const Wave& w : waves_) {
      int heavy = 0;
      for (size_t s = w.begin; s < w.end && heavy < 2 && w.end - w.begin > 1; ++s) {
        if (mode.plan && mode.plan->folded[s]) continue;
        int64_t elements = 0;
        for (int32_t t : steps_[s].node->inputs)
          if (t >= 0 && values[static_cast<size_t>(t)].kind() == ValueKind::kTensor)
            elements += values[static_cast<size_t>(t)].numel();
        heavy += elements >= kInterOpMinElements;
      }
      if (heavy >= 2) {
        TSR_RETURN_IF_ERROR(run_wave(w, pool, rs, mode));
      } else {
        for (size_t s = w.begin; s < w.end; ++s) TSR_RETURN_IF_ERROR(run_one(s));
      }
    }
  }
  outputs.resize(g.outputs.size());
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    Tensor& out = outputs[k];
    out = values[static_cast<size_t>(g.outputs[k])];
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
