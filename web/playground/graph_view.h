// The Graph panel's drawing: a model's graph as boxes (nodes, graph inputs) and edges, laid out
// in layers by dependency depth; If/Loop/Scan nodes toggle their bodies open below the graph
// (recursively); hovering a node shows op, name, attributes and the dtypes/shapes of its
// inputs and outputs. Also the op-count summary that window.tesseraPlayground.state() reports.
#pragma once

#include <map>
#include <set>
#include <string>

#include "core/ir/graph.h"
#include "tools/cli/json_writer.h"

namespace tsr::playground {

struct GraphViewState {
  std::set<std::string> expanded;  // "<graph index>/<node index>" of opened control-flow nodes
};

// Draws `model` (graphs[0] and opened bodies) into the current window; `id` keeps two views apart.
void draw_model_graph(const char* id, const ir::Model& model, GraphViewState& state);

// Op type -> count for one graph (its own nodes, not its bodies').
std::map<std::string, int> op_counts(const ir::Graph& g);
// [{"index": k, "name": ..., "nodes": n, "ops": {"MatMul": 1, ...}}, ...] over model.graphs.
void write_graph_summary(cli::JsonWriter& w, const ir::Model& model);

}  // namespace tsr::playground
