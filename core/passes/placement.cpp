#include "core/passes/placement.h"

namespace tsr::passes {

namespace {
constexpr uint8_t kOnHost = 1, kOnDevice = 2;

// Statically known element count of a tensor, or -1.
int64_t static_numel(const ir::TensorInfo& info) {
  if (!info.has_shape) return -1;
  int64_t n = 1;
  for (int64_t d : info.shape) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}
}  // namespace

bool is_control_flow(const ir::Node& node) {
  for (const auto& a : node.attributes)
    if (a.kind == ir::AttrKind::kGraph) return true;
  return false;
}

Placement place_graph(const ir::Model& model, int32_t gi, const std::vector<int32_t>& order,
                      const SupportFn& support, const PlacementOptions& options) {
  const ir::Graph& g = model.graphs[static_cast<size_t>(gi)];
  Placement p;
  p.node_device.assign(g.nodes.size(), Device::kHost);
  p.host_inputs.assign(g.nodes.size(), 0);
  std::vector<uint8_t> where(g.tensors.size(), kOnHost);  // graph inputs and constants: host
  std::vector<ops::ValueType> types;
  auto need = [&](int32_t t, uint8_t at) {
    uint8_t& w = where[static_cast<size_t>(t)];
    if (w & at) return;
    p.steps.push_back({at == kOnDevice ? PlacedStep::Kind::kUpload : PlacedStep::Kind::kDownload, t});
    ++p.copies;
    w |= at;
  };
  for (int32_t n : order) {
    const ir::Node& node = g.nodes[static_cast<size_t>(n)];
    NodeSupport sup;
    if (!is_control_flow(node)) {
      types.assign(node.inputs.size(), ops::ValueType{});
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        if (node.inputs[k] < 0) continue;
        const ir::TensorInfo& info = g.tensors[static_cast<size_t>(node.inputs[k])];
        types[k] = ops::ValueType{info.dtype, info.has_shape, info.shape, info.kind};
      }
      sup = support(node, types);
    }
    if (sup.supported) {
      // Cost rule: small results computed only from host data stay on the host.
      bool data_on_device = false;
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const int32_t t = node.inputs[k];
        if (t < 0 || (k < 32 && (sup.host_inputs >> k & 1u)) || g.tensors[static_cast<size_t>(t)].constant.defined()) continue;
        data_on_device |= (where[static_cast<size_t>(t)] & kOnDevice) != 0;
      }
      int64_t out_elems = 0;
      for (int32_t t : node.outputs)
        if (t >= 0) {
          const int64_t e = static_numel(g.tensors[static_cast<size_t>(t)]);
          out_elems = e < 0 || out_elems < 0 ? -1 : out_elems + e;
        }
      if (!data_on_device && out_elems >= 0 && out_elems < options.min_device_elements) sup.supported = false;
    }
    const bool on_device = sup.supported;
    p.node_device[static_cast<size_t>(n)] = on_device ? Device::kDevice : Device::kHost;
    p.host_inputs[static_cast<size_t>(n)] = on_device ? sup.host_inputs : 0;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int32_t t = node.inputs[k];
      if (t < 0 || g.tensors[static_cast<size_t>(t)].constant.defined()) continue;
      need(t, on_device && !(k < 32 && (sup.host_inputs >> k & 1u)) ? kOnDevice : kOnHost);
    }
    p.steps.push_back({PlacedStep::Kind::kNode, n});
    p.device_nodes += on_device;
    for (int32_t t : node.outputs)
      if (t >= 0) where[static_cast<size_t>(t)] = on_device ? kOnDevice : kOnHost;
  }
  for (int32_t t : g.outputs)
    if (!g.tensors[static_cast<size_t>(t)].constant.defined()) need(t, kOnHost);
  return p;
}

}  // namespace tsr::passes
