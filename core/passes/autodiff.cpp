#include "core/passes/autodiff.h"

#include <algorithm>
#include <map>

#include "core/ir/topo.h"
#include "core/ops/grad.h"
#include "core/passes/autodiff_internal.h"
#include "core/passes/infer_types.h"

namespace tsr::passes {

using ops::GraphBuilder;
using ir::Graph;
using ir::Node;

namespace {

bool differentiable(DType d) { return dtype_is_float(d); }

// Differentiated by the pass itself (control_flow_vjp), not by a rule.
bool is_control_flow(const std::string& op) {
  const ops::OpDef* def = ops::OpRegistry::global().find(op);
  return def && def->control_flow;
}

// Gives node `n` a fresh, typed tensor for each output its gradient rule reads
// (OpDef::grad_reads_outputs) that the forward node omits, so the forward computes it (Dropout
// then records its mask, which the backward must reuse).
Status add_read_outputs(GraphBuilder& b, int32_t n) {
  const int32_t gi = b.graph_index();
  ir::Node node = b.graph().nodes[static_cast<size_t>(n)];
  const ops::OpDef* def = ops::OpRegistry::global().find(node.op);
  if (!def) return ok_status();
  bool missing = false;
  for (int k : def->grad_reads_outputs) {
    if (static_cast<size_t>(k) >= node.outputs.size()) node.outputs.resize(static_cast<size_t>(k) + 1, -1);
    missing |= node.outputs[static_cast<size_t>(k)] < 0;
  }
  if (!missing) return ok_status();
  std::vector<ops::ValueType> types(node.inputs.size());
  std::vector<const Tensor*> values(node.inputs.size(), nullptr);
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    if (node.inputs[k] < 0) continue;
    types[k] = b.type(Value{gi, node.inputs[k]});
    values[k] = b.known_value(Value{gi, node.inputs[k]});
  }
  const std::string place = ir::node_place(gi, n, node);
  TSR_ASSIGN_OR_RETURN(const std::vector<ops::ValueType> out, ops::infer_node(node, place, types, values, false));
  for (int k : def->grad_reads_outputs) {
    int32_t& t = node.outputs[static_cast<size_t>(k)];
    if (t >= 0) continue;
    ir::TensorInfo info;
    const std::string stem = str_cat(node.name.empty() ? node.op : node.name, "_output", k);
    info.name = stem;
    for (int i = 1; b.graph().find_tensor(info.name) >= 0; ++i) info.name = str_cat(stem, "_", i);
    const ops::ValueType& vt = out[static_cast<size_t>(k)];
    info.dtype = vt.dtype;
    info.has_shape = vt.has_shape;
    info.shape = vt.shape;
    t = b.graph().add_tensor(std::move(info));
  }
  b.graph().nodes[static_cast<size_t>(n)] = std::move(node);
  return ok_status();
}

}  // namespace

Expected<std::vector<Value>> backward(GraphBuilder& b, const std::vector<Seed>& seeds, const std::vector<int32_t>& wrt) {
  const int32_t gi = b.graph_index();
  const Graph& g0 = b.graph();
  const size_t num_tensors = g0.tensors.size();
  TSR_ASSIGN_OR_RETURN(const std::vector<int32_t> order, ir::topological_order(g0, gi));

  // Forward sweep: which tensors depend differentiably on some wrt tensor.
  std::vector<char> active(num_tensors, 0);
  for (int32_t w : wrt)
    if (w >= 0 && static_cast<size_t>(w) < num_tensors) active[static_cast<size_t>(w)] = 1;
  for (int32_t n : order) {
    const Node& node = g0.nodes[static_cast<size_t>(n)];
    const bool any = std::any_of(node.inputs.begin(), node.inputs.end(),
                                 [&](int32_t t) { return t >= 0 && active[static_cast<size_t>(t)]; });
    if (!any) continue;
    for (int32_t t : node.outputs)
      if (t >= 0 && differentiable(g0.tensors[static_cast<size_t>(t)].dtype)) active[static_cast<size_t>(t)] = 1;
  }

  // Backward sweep: which tensors reach a seed. Nodes with an active input and an output that
  // reaches a seed are on the path; all of their ops need a rule (checked before emitting, so
  // one error lists every missing rule).
  std::vector<char> reaches(num_tensors, 0);
  for (const Seed& s : seeds)
    if (s.tensor >= 0 && static_cast<size_t>(s.tensor) < num_tensors) reaches[static_cast<size_t>(s.tensor)] = 1;
  std::map<std::string, std::vector<std::string>> missing;  // op -> places
  std::vector<int32_t> on_path;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& node = g0.nodes[static_cast<size_t>(*it)];
    const bool out_reaches = std::any_of(node.outputs.begin(), node.outputs.end(),
                                         [&](int32_t t) { return t >= 0 && reaches[static_cast<size_t>(t)] && active[static_cast<size_t>(t)]; });
    const bool in_active = std::any_of(node.inputs.begin(), node.inputs.end(),
                                       [&](int32_t t) { return t >= 0 && active[static_cast<size_t>(t)]; });
    if (!out_reaches || !in_active) continue;
    for (int32_t t : node.inputs)
      if (t >= 0 && active[static_cast<size_t>(t)]) reaches[static_cast<size_t>(t)] = 1;
    if (is_control_flow(node.op)) continue;
    const ops::OpDef* def = ops::OpRegistry::global().find(node.op);
    if (!def || !def->grad) missing[node.op].push_back(ir::node_place(gi, *it, node));
    else if (!def->grad_reads_outputs.empty()) on_path.push_back(*it);
  }
  if (!missing.empty()) return ops::missing_rules_error(missing, "node");

  for (int32_t n : on_path) TSR_RETURN_IF_ERROR(add_read_outputs(b, n));

  // Gradient contributions per tensor (new outputs included), summed when the tensor's
  // producer is reached.
  std::vector<std::vector<Value>> contrib(b.graph().tensors.size());
  for (const Seed& s : seeds)
    if (s.tensor >= 0 && static_cast<size_t>(s.tensor) < num_tensors && s.grad.valid())
      contrib[static_cast<size_t>(s.tensor)].push_back(s.grad);
  auto total = [&](int32_t t) -> Value {
    auto& c = contrib[static_cast<size_t>(t)];
    if (c.empty()) return {};
    if (c.size() > 1) c = {ops::add_n(b, c)};
    return c[0];
  };

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    // A copy: emitting appends nodes and may move the node vector.
    const Node node = b.graph().nodes[static_cast<size_t>(*it)];
    std::vector<Value> grad_out(node.outputs.size());
    bool any_grad = false;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (node.outputs[k] < 0) continue;
      grad_out[k] = total(node.outputs[k]);
      any_grad |= grad_out[k].valid();
    }
    if (!any_grad) continue;
    std::vector<bool> wants(node.inputs.size(), false);
    bool any_want = false;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int32_t t = node.inputs[k];
      wants[k] = t >= 0 && active[static_cast<size_t>(t)];
      any_want |= wants[k];
    }
    if (!any_want) continue;
    const std::string place = ir::node_place(gi, *it, node);
    std::vector<Value> ins(node.inputs.size()), outs(node.outputs.size());
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (node.inputs[k] >= 0) ins[k] = Value{gi, node.inputs[k]};
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) outs[k] = Value{gi, node.outputs[k]};

    std::vector<Value> grads;
    if (is_control_flow(node.op)) {
      TSR_ASSIGN_OR_RETURN(grads, control_flow_vjp(b, *it, place, ins, outs, grad_out, wants));
    } else {
      const ops::OpDef* def = ops::OpRegistry::global().find(node.op);
      if (!def || !def->grad) return internal_error(place, ": no gradient rule");  // checked above
      ops::GradContext ctx(b, node, place, ins, outs, grad_out, wants);
      TSR_RETURN_IF_ERROR(def->grad(ctx));
      grads.resize(node.inputs.size());
      for (size_t k = 0; k < node.inputs.size(); ++k) grads[k] = ctx.grad(k);
    }
    if (!b.status().ok()) return Status(b.status().code(), str_cat(place, ": gradient: ", b.status().message()));
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (wants[k] && k < grads.size() && grads[k].valid()) contrib[static_cast<size_t>(node.inputs[k])].push_back(grads[k]);
  }
  std::vector<Value> result;
  result.reserve(wrt.size());
  for (int32_t w : wrt) result.push_back(w >= 0 && static_cast<size_t>(w) < num_tensors ? total(w) : Value{});
  return result;
}

Expected<std::vector<Value>> inline_graph(GraphBuilder& b, int32_t graph, const std::vector<Value>& inputs) {
  // A copy: the builder may append graphs (nested control-flow gradients) while we read.
  const Graph src = b.model().graphs.at(static_cast<size_t>(graph));
  if (inputs.size() != src.inputs.size())
    return internal_error("inline_graph: ", inputs.size(), " inputs for graph ", graph, " with ", src.inputs.size());
  TSR_ASSIGN_OR_RETURN(const std::vector<int32_t> order, ir::topological_order(src, graph));
  std::vector<Value> map(src.tensors.size());
  for (size_t k = 0; k < inputs.size(); ++k) map[static_cast<size_t>(src.inputs[k])] = inputs[k];
  for (size_t t = 0; t < src.tensors.size(); ++t)
    if (src.tensors[t].constant.defined()) map[t] = b.constant(src.tensors[t].constant, src.tensors[t].name);
  for (int32_t n : order) {
    const Node& node = src.nodes[static_cast<size_t>(n)];
    std::vector<Value> ins(node.inputs.size());
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (node.inputs[k] >= 0) ins[k] = map[static_cast<size_t>(node.inputs[k])];
    // Keeping the forward names makes errors and profiles of the inlined copy readable.
    // Omitted optional outputs stay omitted (-1): some ops reject a requested output.
    std::vector<bool> present(node.outputs.size());
    for (size_t k = 0; k < node.outputs.size(); ++k) present[k] = node.outputs[k] >= 0;
    const std::vector<Value> outs = b.op_n(node.op, ins, present, node.attributes, node.name);
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) map[static_cast<size_t>(node.outputs[k])] = outs[k];
  }
  TSR_RETURN_IF_ERROR(b.status());
  std::vector<Value> result;
  for (int32_t t : src.outputs) result.push_back(map[static_cast<size_t>(t)]);
  return result;
}

namespace {

// append_gradients; with `connected` given, connected[i] tells whether wrt[i] reaches the loss,
// and the id is -1 (no zeros emitted) where it does not.
Expected<std::vector<int32_t>> append_gradients_impl(ir::Model& model, int32_t graph, int32_t loss,
                                                     const std::vector<int32_t>& wrt, std::vector<bool>* connected) {
  TSR_RETURN_IF_ERROR(infer_types(model));
  GraphBuilder b(model, graph);
  const Value l{graph, loss};
  const DType ld = b.type(l).dtype;
  if (!dtype_is_float(ld))
    return invalid_argument("the loss \"", b.graph().tensors[static_cast<size_t>(loss)].name, "\" has dtype ",
                            dtype_name(ld), "; a gradient needs a floating-point loss");
  // backward() with ones: a non-scalar loss is summed.
  const Value seed = ops::fill_like(b, l, 1.0);
  TSR_ASSIGN_OR_RETURN(std::vector<Value> grads, backward(b, {{loss, seed}}, wrt));
  std::vector<int32_t> ids;
  if (connected) connected->assign(wrt.size(), false);
  for (size_t i = 0; i < wrt.size(); ++i) {
    Value gv = grads[i];
    if (connected) (*connected)[i] = gv.valid();
    if (!gv.valid()) gv = connected ? Value{graph, -1} : ops::zeros_like(b, Value{graph, wrt[i]});
    ids.push_back(gv.id);
  }
  TSR_RETURN_IF_ERROR(b.status());
  return ids;
}

}  // namespace

Expected<std::vector<int32_t>> append_gradients(ir::Model& model, int32_t graph, int32_t loss,
                                                const std::vector<int32_t>& wrt) {
  return append_gradients_impl(model, graph, loss, wrt, nullptr);
}

Expected<ir::Model> gradient_model(ir::Model model, const GradientModelOptions& options) {
  if (model.graphs.empty()) return invalid_argument("the model has no graph");
  Graph& g = model.main();
  if (g.outputs.empty()) return invalid_argument("the main graph has no outputs");
  int32_t loss = g.outputs[0];
  if (!options.loss.empty()) {
    loss = -1;
    for (int32_t o : g.outputs)
      if (g.tensors[static_cast<size_t>(o)].name == options.loss) loss = o;
    if (loss < 0) {
      std::string names;
      for (int32_t o : g.outputs) names += str_cat(names.empty() ? "" : ", ", g.tensors[static_cast<size_t>(o)].name);
      return not_found("--loss \"", options.loss, "\" is not an output of the main graph (outputs: ", names, ")");
    }
  }
  std::vector<int32_t> wrt;
  if (options.wrt.empty()) {
    for (size_t t = 0; t < g.tensors.size(); ++t)
      if (g.tensors[t].constant.defined() && dtype_is_float(g.tensors[t].dtype)) wrt.push_back(static_cast<int32_t>(t));
    if (wrt.empty()) return invalid_argument("the model has no floating-point weights; name the inputs with --wrt");
  } else {
    std::vector<std::string> unknown;
    for (const std::string& name : options.wrt) {
      const int32_t t = g.find_tensor(name);
      const bool leaf = t >= 0 && (g.tensors[static_cast<size_t>(t)].constant.defined() ||
                                   std::find(g.inputs.begin(), g.inputs.end(), t) != g.inputs.end());
      if (!leaf) {
        unknown.push_back(name);
        continue;
      }
      if (!dtype_is_float(g.tensors[static_cast<size_t>(t)].dtype))
        return invalid_argument("--wrt \"", name, "\" has dtype ", dtype_name(g.tensors[static_cast<size_t>(t)].dtype),
                                "; gradients exist only for floating-point tensors");
      wrt.push_back(t);
    }
    if (!unknown.empty()) {
      std::string list;
      for (const auto& u : unknown) list += str_cat(list.empty() ? "" : ", ", "\"", u, "\"");
      return not_found("--wrt names no graph input or constant of the main graph: ", list);
    }
  }
  std::vector<std::string> wrt_names;
  for (int32_t t : wrt) wrt_names.push_back(g.tensors[static_cast<size_t>(t)].name);
  capture_constants(model, wrt_names);
  std::vector<bool> connected;
  TSR_ASSIGN_OR_RETURN(const std::vector<int32_t> grads, append_gradients_impl(model, 0, loss, wrt, &connected));
  // By default only the weights the loss depends on (not, say, a loop's threshold constant).
  const bool all = !options.wrt.empty();
  if (!all && std::find(connected.begin(), connected.end(), true) == connected.end())
    return invalid_argument("no floating-point weight of the model affects the loss; name the inputs with --wrt");
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (!all && !connected[i]) continue;
    ops::GraphBuilder b(model, 0);
    const Value grad = connected[i] ? Value{0, grads[i]} : ops::zeros_like(b, Value{0, wrt[i]});
    // Outputs get their own tensor name even when a gradient is another value (Identity).
    const std::string name = str_cat(b.graph().tensors[static_cast<size_t>(wrt[i])].name, "_grad");
    const Value id = b.op("Identity", {grad}, {}, name);
    b.graph().tensors[static_cast<size_t>(id.id)].name = name;
    b.graph().outputs.push_back(id.id);
    TSR_RETURN_IF_ERROR(b.status());
  }
  prune_unused_graphs(model);
  return model;
}

}  // namespace tsr::passes
