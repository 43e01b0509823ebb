#include "core/ir/single_node.h"

#include "core/base/status.h"

namespace tsr::ir {

SingleNodeModel single_node_model(const Node& node, const std::vector<NodeInput>& inputs) {
  SingleNodeModel r;
  Graph& g = r.model.graphs.emplace_back();
  g.name = "main";
  Node n = node;
  n.inputs.assign(inputs.size(), -1);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const NodeInput& in = inputs[k];
    if (!in.value.defined()) continue;
    TensorInfo info;
    info.name = str_cat("in", k);
    info.kind = in.value.kind();
    info.dtype = in.value.dtype();
    info.has_shape = true;
    info.shape = in.constant || !in.declared ? in.value.shape() : *in.declared;
    if (in.constant) info.constant = in.value;
    n.inputs[k] = g.add_tensor(std::move(info));
    if (!in.constant) {
      g.inputs.push_back(n.inputs[k]);
      r.feeds.push_back(in.value);
    }
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (node.outputs[k] < 0) continue;
    TensorInfo out;
    out.name = str_cat("out", k);
    n.outputs[k] = g.add_tensor(std::move(out));
    g.outputs.push_back(n.outputs[k]);
  }
  g.nodes.push_back(std::move(n));
  return r;
}

}  // namespace tsr::ir
