// Topological ordering of a graph's nodes (Kahn's algorithm, O(nodes + edges)).
#pragma once

#include <vector>

#include "core/ir/graph.h"

namespace tsr::ir {

// Node indices in an order where every node comes after the producers of its inputs; ties keep
// file order. Errors: an input id out of range, a tensor produced by two nodes, a node input that
// nothing produces (not a graph input, constant or node output), or a cycle (naming one node on
// it). `graph_index` is used in messages only.
Expected<std::vector<int32_t>> topological_order(const Graph& g, int32_t graph_index);

}  // namespace tsr::ir
