// Plan::create (core/exec/plan.h): the steps in order (placement and copies with a device,
// dependency levels with inter-op), one kernel per node, and each value's lifetime.
#include <algorithm>

#include "core/exec/plan.h"
#include "core/exec/run_state.h"
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

}  // namespace

// One Plan being prepared; its state is what preparing needs and the Plan does not keep.
class PlanBuilder {
 public:
  PlanBuilder(const ir::Model& model, int32_t gi, Backend& backend, const PlanOptions& options)
      : model_(model), gi_(gi), g_(model.graphs[static_cast<size_t>(gi)]), backend_(backend), options_(options),
        plan_(new Plan()) {}

  Expected<std::unique_ptr<Plan>> build() {
    plan_->model_ = &model_;
    plan_->graph_ = &g_;
    plan_->graph_index_ = gi_;
    plan_->device_ = options_.device;
    plan_->keep_.assign(g_.tensors.size(), false);
    for (int32_t t : g_.outputs) plan_->keep_[static_cast<size_t>(t)] = true;
    last_use_.assign(g_.tensors.size(), -1);
    TSR_RETURN_IF_ERROR(place());
    for (const passes::PlacedStep& ps : placement_.steps) {
      if (ps.kind == passes::PlacedStep::Kind::kNode) {
        TSR_RETURN_IF_ERROR(add_node_step(ps.index));
      } else {
        add_copy_step(ps);
      }
    }
    if (!unsupported_ops_.empty()) {
      std::string msg = str_cat(unsupported_ops_.size(), " node(s) have no ", backend_.name(), " kernel:");
      for (const auto& m : unsupported_ops_) msg += "\n  " + m;
      return unsupported(msg);
    }
    set_releases();
    set_waves();
    set_escapes();
    plan_->last_use_ = std::move(last_use_);
    return std::move(plan_);
  }

 private:
  // The order of the steps: without a device every node runs on the host in topological order
  // (by level with inter-op); with one, the placement pass decides each node's device and
  // inserts the copies.
  Status place() {
    TSR_ASSIGN_OR_RETURN(std::vector<int32_t> order, ir::topological_order(g_, gi_));
    DeviceBackend* device = options_.device;
    if (!device) {
      if (options_.inter_op) order = level_order(g_, order, &node_level_);
      for (int32_t n : order) placement_.steps.push_back({passes::PlacedStep::Kind::kNode, n});
      return ok_status();
    }
    auto support = [device](const ir::Node& node, const std::vector<ops::ValueType>& types) {
      const DeviceSupport s = device->device_support(node, types);
      return passes::NodeSupport{s.supported, s.host_inputs};
    };
    passes::PlacementOptions po;
    po.min_device_elements = options_.min_device_elements;
    placement_ = passes::place_graph(model_, gi_, order, support, po);
    plan_->device_nodes_ = placement_.device_nodes;
    plan_->copies_ = placement_.copies;
    plan_->device_constants_.resize(g_.tensors.size());
    return ok_status();
  }

  void add_copy_step(const passes::PlacedStep& ps) {
    PlanStep step;
    step.kind = ps.kind == passes::PlacedStep::Kind::kUpload ? PlanStep::Kind::kUpload : PlanStep::Kind::kDownload;
    step.tensor = ps.index;
    step.node_index = -1;
    step.place = str_cat("graph[", gi_, "] ", step.kind == PlanStep::Kind::kUpload ? "upload" : "download", " of \"",
                         g_.tensors[static_cast<size_t>(ps.index)].name, "\"");
    last_use_[static_cast<size_t>(ps.index)] = static_cast<int32_t>(plan_->steps_.size());
    plan_->steps_.push_back(std::move(step));
  }

  // Node n's step with its kernel; a node the backend has no kernel for is collected in
  // unsupported_ops_ (all are reported at once).
  Status add_node_step(int32_t n) {
    const ir::Node& node = g_.nodes[static_cast<size_t>(n)];
    PlanStep step;
    step.node_index = n;
    step.node = &node;
    step.place = ir::node_place(gi_, n, node);
    step.def = ops::OpRegistry::global().find(node.op);
    if (!step.def) return unsupported(step.place, ": unsupported op '", node.op, "'");
    const bool on_device =
        options_.device && placement_.node_device[static_cast<size_t>(n)] == passes::Device::kDevice;
    KernelInit init{node, step.place, {}, {}, options_.fast_math};
    TSR_RETURN_IF_ERROR(bind_inputs(n, on_device, init));
    if (on_device) {
      step.kind = PlanStep::Kind::kDevice;
      step.host_inputs = placement_.host_inputs[static_cast<size_t>(n)];
      TSR_ASSIGN_OR_RETURN(step.device_kernel, options_.device->create_device_kernel(init));
      plan_->steps_.push_back(std::move(step));
      return ok_status();
    }
    auto kernel = exec::is_control_flow_op(node.op) ? create_control_flow_kernel(model_, init, backend_, options_)
                                                    : backend_.create_kernel(init);
    if (!kernel.ok()) {
      if (kernel.status().code() != StatusCode::kUnsupported) return kernel.status();
      unsupported_ops_.push_back(kernel.status().message());
      return ok_status();
    }
    step.kernel = std::move(kernel).value();
    plan_->steps_.push_back(std::move(step));
    return ok_status();
  }

  // The load-time types and constants of node n's inputs (init) and each input's last use so far.
  Status bind_inputs(int32_t n, bool on_device, KernelInit& init) {
    const ir::Node& node = init.node;
    const auto s = static_cast<int32_t>(plan_->steps_.size());
    init.input_types.resize(node.inputs.size());
    init.constant_inputs.resize(node.inputs.size(), nullptr);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int32_t t = node.inputs[k];
      if (t < 0) continue;
      const auto& info = g_.tensors[static_cast<size_t>(t)];
      init.input_types[k] = {info.dtype, info.has_shape, info.shape, info.kind};
      last_use_[static_cast<size_t>(t)] = s;
      if (!info.constant.defined()) continue;
      init.constant_inputs[k] = &info.constant;
      if (on_device) TSR_RETURN_IF_ERROR(upload_constant(n, k, t, init.place));
    }
    return ok_status();
  }

  // A device node reads the constants it does not read on the host from a device copy,
  // uploaded once, here.
  Status upload_constant(int32_t n, size_t k, int32_t t, const std::string& place) {
    DeviceTensor& copy = plan_->device_constants_[static_cast<size_t>(t)];
    if ((k < 32 && (placement_.host_inputs[static_cast<size_t>(n)] >> k & 1u)) || copy.defined()) return ok_status();
    auto up = options_.device->upload(g_.tensors[static_cast<size_t>(t)].constant);
    if (!up.ok()) return up.status().with_context(str_cat(place, ".input[", k, "]"));
    copy = std::move(up).value();
    return ok_status();
  }

  // Every intermediate value is released after the step that reads it last; node outputs that
  // nobody reads die right after their producer. Graph outputs and constants are never released.
  void set_releases() {
    std::vector<PlanStep>& steps = plan_->steps_;
    for (size_t s = 0; s < steps.size(); ++s)
      if (steps[s].node)
        for (int32_t t : steps[s].node->outputs)
          if (t >= 0 && last_use_[static_cast<size_t>(t)] < 0) last_use_[static_cast<size_t>(t)] = static_cast<int32_t>(s);
    for (size_t t = 0; t < g_.tensors.size(); ++t) {
      if (g_.tensors[t].constant.defined()) plan_->constant_ids_.push_back(static_cast<int32_t>(t));
      if (plan_->keep_[t] || last_use_[t] < 0 || g_.tensors[t].constant.defined()) continue;
      steps[static_cast<size_t>(last_use_[t])].release_after.push_back(static_cast<int32_t>(t));
    }
  }

  // With inter-op: the waves (runs of steps of one level) and each step's wave; without, each
  // step is its own.
  void set_waves() {
    const std::vector<PlanStep>& steps = plan_->steps_;
    std::vector<Plan::Wave>& waves = plan_->waves_;
    if (!node_level_.empty()) {
      for (size_t s = 0; s < steps.size(); ++s) {
        const int32_t lvl = node_level_[static_cast<size_t>(steps[s].node_index)];
        if (waves.empty() || node_level_[static_cast<size_t>(steps[waves.back().begin].node_index)] != lvl)
          waves.push_back({s, s});
        waves.back().end = s + 1;
      }
    }
    plan_->wave_of_.resize(steps.size());
    for (size_t s = 0; s < steps.size(); ++s) plan_->wave_of_[s] = static_cast<int32_t>(s);
    for (size_t w = 0; w < waves.size(); ++w)
      for (size_t s = waves[w].begin; s < waves[w].end; ++s) plan_->wave_of_[s] = static_cast<int32_t>(w);
  }

  // What may outlive its last use: graph outputs, what control flow or handle-keeping ops read
  // (a branch may return it, a sequence holds it), and, backwards through views, their inputs.
  void set_escapes() {
    const std::vector<PlanStep>& steps = plan_->steps_;
    std::vector<uint8_t>& escapes = plan_->escapes_;
    escapes.assign(plan_->keep_.begin(), plan_->keep_.end());
    for (const PlanStep& step : steps) {
      if (!step.node || !(step.def->control_flow || (step.def->any_value_kind && !step.def->view_of_input0))) continue;
      for (int32_t t : step.node->inputs)
        if (t >= 0) escapes[static_cast<size_t>(t)] = 1;
    }
    for (size_t s = steps.size(); s-- > 0;) {
      const PlanStep& step = steps[s];
      if (!step.node || !step.def->view_of_input0 || step.node->inputs.empty() || step.node->inputs[0] < 0) continue;
      for (int32_t t : step.node->outputs)
        if (t >= 0 && escapes[static_cast<size_t>(t)]) escapes[static_cast<size_t>(step.node->inputs[0])] = 1;
    }
  }

  const ir::Model& model_;
  const int32_t gi_;
  const ir::Graph& g_;
  Backend& backend_;
  const PlanOptions& options_;
  std::unique_ptr<Plan> plan_;
  passes::Placement placement_;
  std::vector<int32_t> last_use_;    // by tensor id: the step reading it last (-1: none yet)
  std::vector<int32_t> node_level_;  // by node: its dependency level (inter-op only)
  std::vector<std::string> unsupported_ops_;
};

Expected<std::unique_ptr<Plan>> Plan::create(const ir::Model& model, int32_t gi, Backend& backend,
                                             const PlanOptions& options) {
  if (gi < 0 || static_cast<size_t>(gi) >= model.graphs.size())
    return invalid_argument("graph index ", gi, " out of range");
  return PlanBuilder(model, gi, backend, options).build();
}

}  // namespace tsr::exec
