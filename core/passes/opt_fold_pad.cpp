// Pad folding (optimize.h): Pad(X, pads) in constant mode with a zero value, padding only the
// spatial dims, feeding nothing but a Conv's X becomes part of that Conv's own pads (which pad
// with zeros too), so the padded copy of X is never made. TensorFlow exports pad before strided
// convs ("same" padding is asymmetric there): MLSD has three, each copying ~10 MB per run.
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

// The Pad's pads if `pad` can fold into a convolution of spatial rank `r`, else empty.
std::vector<int64_t> foldable_pads(const ir::Node& pad, const GraphIndex& ix, size_t r) {
  if (pad.attr_string("mode") != "constant" || pad.inputs.size() < 2 || pad.outputs.size() != 1)
    return {};
  if (pad.inputs.size() > 3 && pad.inputs[3] >= 0) return {};  // axes (the importer removes them)
  const Tensor* pads = ix.constant(pad.inputs[1]);
  if (!pads || pads->dtype() != DType::kI64 || pads->numel() != static_cast<int64_t>(2 * (r + 2))) return {};
  if (pad.inputs.size() > 2 && pad.inputs[2] >= 0) {
    const Tensor* value = ix.constant(pad.inputs[2]);
    if (!value || value->numel() > 1 || value->dtype() == DType::kString) return {};
    if (value->numel() == 1 && value->scalar_f64(0) != 0) return {};
  }
  std::vector<int64_t> p = pads->to_i64_vector();
  const size_t rank = r + 2;
  if (p[0] != 0 || p[1] != 0 || p[rank] != 0 || p[rank + 1] != 0) return {};  // batch and channels
  for (int64_t v : p)
    if (v < 0) return {};  // a crop
  return p;
}

}  // namespace

Expected<int64_t> fold_pad(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t n) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const ir::Node& pad = g.nodes[size_t(n)];
    if (pad.op != "Pad" || pad.outputs.size() != 1) return false;
    const int32_t c = ix.sole_consumer(pad.outputs[0]);
    if (c < 0) return false;
    ir::Node& conv = g.nodes[size_t(c)];
    if ((conv.op != "Conv" && conv.op != "FusedConv") || conv.inputs.empty() || conv.inputs[0] != pad.outputs[0])
      return false;
    if (conv.attr_string("auto_pad") != "NOTSET") return false;
    const ir::TensorInfo& w = g.tensors[size_t(conv.inputs[1])];
    if (!w.has_shape || w.shape.size() < 3) return false;
    const size_t r = w.shape.size() - 2;
    const std::vector<int64_t> p = foldable_pads(pad, ix, r);
    if (p.empty()) return false;
    std::vector<int64_t> pads = conv.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
    if (pads.size() != 2 * r) return false;
    for (size_t i = 0; i < r; ++i) {
      pads[i] += p[2 + i];
      pads[r + i] += p[r + 2 + 2 + i];
    }
    std::erase_if(conv.attributes, [](const ir::Attribute& a) { return a.name == "pads"; });
    conv.attributes.push_back(ir::Attribute::make_ints("pads", pads));
    ix.replace_input(c, pad.outputs[0], pad.inputs[0]);
    ix.kill(n);
    return true;
  });
}

}  // namespace tsr::passes::opt
