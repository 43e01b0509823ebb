#include "core/ir/topo.h"

#include <deque>

namespace tsr::ir {

Expected<std::vector<int32_t>> topological_order(const Graph& g, int32_t gi) {
  const auto nt = static_cast<int32_t>(g.tensors.size());
  const auto nn = static_cast<int32_t>(g.nodes.size());
  // producer[t]: -2 = not produced, -1 = graph input or constant, >= 0 = node index.
  std::vector<int32_t> producer(static_cast<size_t>(nt), -2);
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const int32_t t = g.inputs[k];
    if (t < 0 || t >= nt) return invalid_model("graph[", gi, "].input[", k, "]: tensor id ", t, " out of range [0, ", nt, ")");
    if (producer[static_cast<size_t>(t)] != -2)
      return invalid_model("graph[", gi, "].input[", k, "]: tensor \"", g.tensors[static_cast<size_t>(t)].name, "\" is listed twice as a graph input");
    producer[static_cast<size_t>(t)] = -1;
  }
  for (int32_t t = 0; t < nt; ++t) {
    if (g.tensors[static_cast<size_t>(t)].constant.defined()) {
      if (producer[static_cast<size_t>(t)] == -1)
        return invalid_model("graph[", gi, "].tensor[", t, "] (\"", g.tensors[static_cast<size_t>(t)].name, "\"): both a graph input and a constant");
      producer[static_cast<size_t>(t)] = -1;
    }
  }
  for (int32_t n = 0; n < nn; ++n) {
    const Node& node = g.nodes[static_cast<size_t>(n)];
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int32_t t = node.outputs[k];
      if (t == -1) continue;
      if (t < 0 || t >= nt) return invalid_model(node_place(gi, n, node), ".output[", k, "]: tensor id ", t, " out of range [0, ", nt, ")");
      const int32_t prev = producer[static_cast<size_t>(t)];
      if (prev != -2)
        return invalid_model(node_place(gi, n, node), ".output[", k, "]: tensor \"", g.tensors[static_cast<size_t>(t)].name,
                             "\" is already produced by ",
                             prev == -1 ? std::string("a graph input or constant") : node_place(gi, prev, g.nodes[static_cast<size_t>(prev)]));
      producer[static_cast<size_t>(t)] = n;
    }
  }
  std::vector<int32_t> pending(static_cast<size_t>(nn), 0);
  std::vector<std::vector<int32_t>> consumers(static_cast<size_t>(nn));
  for (int32_t n = 0; n < nn; ++n) {
    const Node& node = g.nodes[static_cast<size_t>(n)];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int32_t t = node.inputs[k];
      if (t == -1) continue;
      if (t < 0 || t >= nt) return invalid_model(node_place(gi, n, node), ".input[", k, "]: tensor id ", t, " out of range [0, ", nt, ")");
      const int32_t p = producer[static_cast<size_t>(t)];
      if (p == -2)
        return invalid_model(node_place(gi, n, node), ".input[", k, "]: tensor \"", g.tensors[static_cast<size_t>(t)].name,
                             "\" is not produced by any node, graph input or constant");
      if (p >= 0) {
        ++pending[static_cast<size_t>(n)];
        consumers[static_cast<size_t>(p)].push_back(n);
      }
    }
  }
  std::vector<int32_t> order;
  order.reserve(static_cast<size_t>(nn));
  std::deque<int32_t> ready;
  for (int32_t n = 0; n < nn; ++n)
    if (pending[static_cast<size_t>(n)] == 0) ready.push_back(n);
  while (!ready.empty()) {
    const int32_t n = ready.front();
    ready.pop_front();
    order.push_back(n);
    for (int32_t c : consumers[static_cast<size_t>(n)])
      if (--pending[static_cast<size_t>(c)] == 0) ready.push_back(c);
  }
  if (static_cast<int32_t>(order.size()) != nn) {
    for (int32_t n = 0; n < nn; ++n)
      if (pending[static_cast<size_t>(n)] > 0)
        return invalid_model(node_place(gi, n, g.nodes[static_cast<size_t>(n)]), ": the graph has a cycle through this node");
  }
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const int32_t t = g.outputs[k];
    if (t < 0 || t >= nt) return invalid_model("graph[", gi, "].output[", k, "]: tensor id ", t, " out of range [0, ", nt, ")");
    if (producer[static_cast<size_t>(t)] == -2)
      return invalid_model("graph[", gi, "].output[", k, "]: tensor \"", g.tensors[static_cast<size_t>(t)].name, "\" is never produced");
  }
  return order;
}

}  // namespace tsr::ir
