#include "core/ir/verify.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/ir/topo.h"

namespace tsr::ir {

namespace {

std::string tensor_place(size_t g, size_t t, const TensorInfo& info) {
  return str_cat("graph[", g, "].tensor[", t, "] (\"", info.name, "\")");
}

Status check_tensor(const TensorInfo& info, const std::string& place) {
  const int dt = static_cast<int>(info.dtype);
  if (dt != 0 && !dtype_valid(dt)) return invalid_model(place, ": invalid dtype value ", dt);
  if (!info.has_shape && !info.shape.empty())
    return invalid_model(place, ": rank is unknown (has_shape false) but ", info.shape.size(), " dims are given");
  // Known dims must describe a tensor that could be allocated (max_tensor_bytes), so that later
  // passes can multiply dims without overflow.
  const uint64_t esize = std::max<size_t>(1, dtype_size(info.dtype));
  uint64_t numel = 1;
  for (size_t d = 0; d < info.shape.size(); ++d) {
    const int64_t v = info.shape[d];
    if (v < -1) return invalid_model(place, ": dim ", d, " is ", v, " (dims must be >= 0, or -1 for dynamic)");
    if (v <= 0) continue;
    if (numel > max_tensor_bytes() / esize / static_cast<uint64_t>(v))
      return resource_error(place, ": shape with dim ", d, " = ", v, " exceeds the ", max_tensor_bytes() >> 20,
                            " MiB tensor size limit");
    numel *= static_cast<uint64_t>(v);
  }
  if (!info.dim_names.empty() && info.dim_names.size() != info.shape.size())
    return invalid_model(place, ": ", info.dim_names.size(), " dim names for ", info.shape.size(), " dims");
  if (info.constant.defined()) {
    const Tensor& c = info.constant;
    if (info.dtype != c.dtype())
      return invalid_model(place, ": declared dtype ", dtype_name(info.dtype), ", but the constant is ", dtype_name(c.dtype()));
    if (!info.has_shape || info.shape != c.shape())
      return invalid_model(place, ": declared shape ", info.has_shape ? shape_str(info.shape) : std::string("[*]"),
                           ", but the constant has shape ", shape_str(c.shape()));
    if (c.dtype() != DType::kString && c.numel() > 0 && c.raw() == nullptr)
      return invalid_model(place, ": constant has no data");
  }
  return ok_status();
}

// Checks one graph index from a kGraph/kGraphs attribute and records the edge g -> target.
Status check_graph_ref(int64_t target, size_t g, size_t num_graphs, const std::string& where,
                       std::vector<std::vector<std::pair<size_t, std::string>>>& edges) {
  if (target < 0 || static_cast<uint64_t>(target) >= num_graphs)
    return invalid_model(where, ": graph index ", target, " out of range [0, ", num_graphs, ")");
  if (static_cast<size_t>(target) == g)
    return invalid_model(where, ": references its own graph[", g, "] (recursive subgraph)");
  edges[g].push_back({static_cast<size_t>(target), where});
  return ok_status();
}

// Rejects a cycle among subgraph references (iterative DFS: a long chain must not overflow the
// stack). The message names each reference on the cycle.
Status check_no_recursion(const std::vector<std::vector<std::pair<size_t, std::string>>>& edges) {
  const size_t n = edges.size();
  enum : uint8_t { kNew, kOnStack, kDone };
  std::vector<uint8_t> state(n, kNew);
  struct Frame {
    size_t g;
    size_t next;
  };
  for (size_t root = 0; root < n; ++root) {
    if (state[root] != kNew) continue;
    std::vector<Frame> stack{{root, 0}};
    state[root] = kOnStack;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next == edges[f.g].size()) {
        state[f.g] = kDone;
        stack.pop_back();
        continue;
      }
      const auto& [to, where] = edges[f.g][f.next++];
      if (state[to] == kOnStack) {
        std::string path;
        size_t start = 0;
        while (stack[start].g != to) ++start;
        for (size_t k = start; k < stack.size(); ++k) path += str_cat("graph[", stack[k].g, "] -> ");
        path += str_cat("graph[", to, "]");
        return invalid_model(where, ": recursive subgraph reference (", path, ")");
      }
      if (state[to] == kNew) {
        state[to] = kOnStack;
        stack.push_back({to, 0});
      }
    }
  }
  return ok_status();
}

}  // namespace

Status verify_structure(const Model& model) {
  const size_t ng = model.graphs.size();
  if (ng == 0) return invalid_model("the model has no graphs");
  std::map<std::string, const Variable*, std::less<>> vars;
  for (size_t v = 0; v < model.variables.size(); ++v) {
    const Variable& var = model.variables[v];
    if (var.name.empty()) return invalid_model("variable[", v, "]: empty name");
    if (!var.value.defined() || var.value.kind() != ValueKind::kTensor)
      return invalid_model("variable[", v, "] (\"", var.name, "\"): no tensor value");
    if (!vars.emplace(var.name, &var).second) return invalid_model("variable[", v, "]: duplicate name \"", var.name, "\"");
  }
  std::set<std::string> sig_names;
  for (size_t s = 0; s < model.signatures.size(); ++s) {
    const Signature& sig = model.signatures[s];
    const std::string place = str_cat("signature[", s, "] (\"", sig.name, "\")");
    if (sig.graph < 0 || static_cast<size_t>(sig.graph) >= ng)
      return invalid_model(place, ": graph index ", sig.graph, " out of range [0, ", ng, ")");
    if (!sig_names.insert(sig.name).second)
      return invalid_model("signature[", s, "]: duplicate signature name \"", sig.name, "\"");
    const Graph& graph = model.graphs[static_cast<size_t>(sig.graph)];
    if (!sig.bound_inputs.empty() && sig.bound_inputs.size() != graph.inputs.size())
      return invalid_model(place, ": ", sig.bound_inputs.size(), " bound_inputs for ", graph.inputs.size(), " graph inputs");
    if (!sig.updates.empty() && sig.updates.size() != graph.outputs.size())
      return invalid_model(place, ": ", sig.updates.size(), " updates for ", graph.outputs.size(), " graph outputs");
    for (size_t k = 0; k < sig.bound_inputs.size(); ++k) {
      if (sig.bound_inputs[k].empty()) continue;
      auto it = vars.find(sig.bound_inputs[k]);
      if (it == vars.end()) return invalid_model(place, ".bound_inputs[", k, "]: no variable \"", sig.bound_inputs[k], "\"");
      const auto id = static_cast<size_t>(graph.inputs[k]);
      if (id >= graph.tensors.size()) continue;  // reported with the graph
      const TensorInfo& info = graph.tensors[id];
      const Tensor& value = it->second->value;
      bool fits = info.dtype == DType::kUndefined || info.dtype == value.dtype();
      if (info.has_shape) {
        fits = fits && info.shape.size() == value.shape().size();
        for (size_t d = 0; fits && d < info.shape.size(); ++d) fits = info.shape[d] < 0 || info.shape[d] == value.shape()[d];
      }
      if (!fits)
        return invalid_model(place, ".bound_inputs[", k, "]: variable \"", it->first, "\" is ", dtype_name(value.dtype()),
                             shape_str(value.shape()), ", the graph input \"", info.name, "\" is declared ",
                             dtype_name(info.dtype), info.has_shape ? shape_str(info.shape) : std::string("[*]"));
    }
    for (size_t k = 0; k < sig.updates.size(); ++k)
      if (!sig.updates[k].empty() && !vars.count(sig.updates[k]))
        return invalid_model(place, ".updates[", k, "]: no variable \"", sig.updates[k], "\"");
  }
  std::vector<std::vector<std::pair<size_t, std::string>>> edges(ng);
  for (size_t g = 0; g < ng; ++g) {
    const Graph& graph = model.graphs[g];
    if (graph.tensors.size() > static_cast<size_t>(INT32_MAX))
      return invalid_model("graph[", g, "]: too many tensors (", graph.tensors.size(), ")");
    for (size_t t = 0; t < graph.tensors.size(); ++t)
      TSR_RETURN_IF_ERROR(check_tensor(graph.tensors[t], tensor_place(g, t, graph.tensors[t])));
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const Node& node = graph.nodes[n];
      const std::string place = node_place(static_cast<int32_t>(g), static_cast<int32_t>(n), node);
      for (const Attribute& a : node.attributes) {
        const std::string where = str_cat(place, ".attribute '", a.name, "'");
        if (static_cast<int>(a.kind) < 1 || static_cast<int>(a.kind) > 9)
          return invalid_model(where, ": invalid attribute kind ", static_cast<int>(a.kind));
        if (a.kind == AttrKind::kGraph) TSR_RETURN_IF_ERROR(check_graph_ref(a.i, g, ng, where, edges));
        if (a.kind == AttrKind::kGraphs)
          for (int64_t target : a.ints) TSR_RETURN_IF_ERROR(check_graph_ref(target, g, ng, where, edges));
        if (a.kind == AttrKind::kTensor && !a.t.defined())
          return invalid_model(where, ": tensor attribute without a value");
      }
    }
  }
  TSR_RETURN_IF_ERROR(check_no_recursion(edges));
  for (size_t g = 0; g < ng; ++g) {
    auto order = topological_order(model.graphs[g], static_cast<int32_t>(g));
    if (!order.ok()) return order.status();
  }
  return ok_status();
}

}  // namespace tsr::ir
