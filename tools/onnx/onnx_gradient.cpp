#include "tools/onnx/onnx_gradient.h"

#include <algorithm>

#include "core/ops/graph_builder.h"
#include "core/passes/autodiff.h"

namespace tsr::onnx_import {

namespace {

constexpr const char* kGradientOp = "ai.onnx.preview.training::Gradient";

}  // namespace

Status lower_gradient_nodes(ir::Model& model) {
  for (size_t gi = 1; gi < model.graphs.size(); ++gi)
    for (size_t k = 0; k < model.graphs[gi].nodes.size(); ++k)
      if (const ir::Node& n = model.graphs[gi].nodes[k]; n.op == kGradientOp)
        return unsupported(ir::node_place(static_cast<int32_t>(gi), static_cast<int32_t>(k), n),
                           ": a Gradient node inside a subgraph is not supported");
  if (model.graphs.empty()) return ok_status();
  ir::Graph& g = model.graphs[0];
  std::vector<ir::Node> grads;
  std::vector<std::string> places;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (g.nodes[k].op == kGradientOp) {
      grads.push_back(g.nodes[k]);
      places.push_back(ir::node_place(0, static_cast<int32_t>(k), g.nodes[k]));
    }
  if (grads.empty()) return ok_status();
  // The gradient nodes go first, so that type inference sees only ops it knows; their outputs
  // leave the graph outputs until they have producers again.
  std::erase_if(g.nodes, [](const ir::Node& n) { return n.op == kGradientOp; });
  const std::vector<int32_t> outputs = g.outputs;
  std::vector<int32_t> produced_later;
  for (const ir::Node& n : grads) produced_later.insert(produced_later.end(), n.outputs.begin(), n.outputs.end());
  std::erase_if(g.outputs, [&](int32_t t) {
    return std::find(produced_later.begin(), produced_later.end(), t) != produced_later.end();
  });
  for (size_t gn = 0; gn < grads.size(); ++gn) {
    const ir::Node& n = grads[gn];
    const std::string& place = places[gn];
    const ir::Attribute* xs = n.attr("xs");
    const ir::Attribute* y = n.attr("y");
    if (!xs || xs->kind != ir::AttrKind::kStrings || !y || y->kind != ir::AttrKind::kString)
      return invalid_model(place, ": Gradient needs attributes xs (strings) and y (string)");
    if (n.outputs.size() != xs->strings.size())
      return invalid_model(place, ": ", n.outputs.size(), " outputs for ", xs->strings.size(), " xs");
    const int32_t loss = model.graphs[0].find_tensor(y->s);
    if (loss < 0) return invalid_model(place, ": y names no value: \"", y->s, "\"");
    std::vector<int32_t> wrt;
    for (const std::string& x : xs->strings) {
      const int32_t t = model.graphs[0].find_tensor(x);
      if (t < 0) return invalid_model(place, ": xs names no value: \"", x, "\"");
      wrt.push_back(t);
    }
    auto ids = passes::append_gradients(model, 0, loss, wrt);
    if (!ids.ok()) return ids.status().with_context(place);
    for (size_t k = 0; k < wrt.size(); ++k) {
      if (n.outputs[k] < 0) continue;
      ir::Node id;
      id.op = "Identity";
      id.name = str_cat(n.name, "_", k);
      id.inputs = {(*ids)[k]};
      id.outputs = {n.outputs[k]};
      model.graphs[0].nodes.push_back(std::move(id));
    }
  }
  model.graphs[0].outputs = outputs;
  return ok_status();
}

}  // namespace tsr::onnx_import
