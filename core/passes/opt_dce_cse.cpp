// Dead-code and common-subexpression elimination (optimize.h).
//
// DCE: a node is live when one of its outputs reaches a graph output through live nodes; the
// others go. Inference graphs have no side effects (the executor's only effects are its outputs;
// training graphs with variable updates are not optimized at all).
//
// CSE: two nodes with the same op, version, attributes and input tensors compute the same
// outputs, so the later one's readers read the earlier one's outputs. Not for nodes with subgraph
// or tensor attributes (compared cheaply only by value), nor for random ops: those whose OpDef
// takes a `seed` attribute (RandomNormal, RandomUniform*, Bernoulli, Multinomial, Dropout), whose
// every draw differs. Nodes are visited in topological order, so inputs are already merged.
#include <cstdio>
#include <map>
#include <string>

#include "core/ir/topo.h"
#include "core/ops/op_def.h"
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

Expected<int64_t> eliminate_dead_code(ir::Model& model, int32_t graph_index) {
  ir::Graph& g = model.graphs[size_t(graph_index)];
  GraphIndex ix(g);
  std::vector<bool> live_tensor(g.tensors.size(), false), live_node(g.nodes.size(), false);
  std::vector<int32_t> work;
  for (int32_t o : g.outputs)
    if (o >= 0 && !live_tensor[size_t(o)]) live_tensor[size_t(o)] = true, work.push_back(o);
  while (!work.empty()) {
    const int32_t t = work.back();
    work.pop_back();
    const int32_t n = ix.producer(t);
    if (n < 0 || live_node[size_t(n)]) continue;
    live_node[size_t(n)] = true;
    for (int32_t i : g.nodes[size_t(n)].inputs)
      if (i >= 0 && !live_tensor[size_t(i)]) live_tensor[size_t(i)] = true, work.push_back(i);
  }
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (!live_node[n]) ix.kill(static_cast<int32_t>(n));
  return ix.compact();
}

namespace {

// A textual key of everything that determines a node's outputs, or "" when the node must not be
// merged.
std::string cse_key(const ir::Node& n) {
  if (n.inputs.empty()) return "";
  const ops::OpDef* def = ops::OpRegistry::global().find(n.op);
  if (!def || def->control_flow) return "";
  for (const ops::AttrSpec& a : def->attrs)
    if (a.name == "seed") return "";
  std::string k = str_cat(n.op, "/", n.version, "(");
  for (int32_t i : n.inputs) k += str_cat(i, ",");
  k += ")";
  for (const ir::Attribute& a : n.attributes) {
    if (a.kind == ir::AttrKind::kTensor || a.kind == ir::AttrKind::kGraph || a.kind == ir::AttrKind::kGraphs) return "";
    k += str_cat(";", a.name, ":", static_cast<int>(a.kind), "=", a.i, "|", a.s, "|");
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", a.f);
    k += buf;
    for (int64_t v : a.ints) k += str_cat(",", v);
    for (double v : a.floats) {
      std::snprintf(buf, sizeof buf, ",%.17g", v);
      k += buf;
    }
    for (const std::string& s : a.strings) k += str_cat(",", s.size(), ":", s);
  }
  return k;
}

}  // namespace

Expected<int64_t> eliminate_common_subexpressions(ir::Model& model, int32_t graph_index) {
  ir::Graph& g = model.graphs[size_t(graph_index)];
  TSR_ASSIGN_OR_RETURN(std::vector<int32_t> order, ir::topological_order(g, graph_index));
  GraphIndex ix(g);
  std::vector<int32_t> alias(g.tensors.size());
  for (size_t t = 0; t < alias.size(); ++t) alias[t] = static_cast<int32_t>(t);
  std::map<std::string, int32_t> seen;
  int64_t merged = 0;
  for (int32_t n : order) {
    ir::Node& node = g.nodes[size_t(n)];
    for (int32_t& i : node.inputs)
      if (i >= 0) i = alias[size_t(i)];
    const std::string key = cse_key(node);
    if (key.empty()) continue;
    auto [it, fresh] = seen.emplace(key, n);
    if (fresh) continue;
    const ir::Node& first = g.nodes[size_t(it->second)];
    bool mergeable = first.outputs.size() == node.outputs.size();
    for (size_t k = 0; mergeable && k < node.outputs.size(); ++k) {
      const int32_t o = node.outputs[k];
      // An output the graph returns keeps its own tensor; so does one the first node omitted.
      mergeable = o < 0 || (!ix.is_graph_output(o) && first.outputs[k] >= 0);
    }
    if (!mergeable) continue;
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) alias[size_t(node.outputs[k])] = first.outputs[k];
    ix.kill(n);
    ++merged;
  }
  ix.compact();
  return merged;
}

}  // namespace tsr::passes::opt
