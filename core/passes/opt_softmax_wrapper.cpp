// Folds the importer's Softmax wrapper (optimize.h). ONNX Softmax-1..12 normalizes over all dims
// from `axis` on, flattened; tools/onnx expresses it on a non-last axis as
//   Shape(x) -> s;  Flatten(x, axis) -> f;  Softmax(f, axis=1) -> y2;  Reshape(y2, s) -> y
// (likewise LogSoftmax, Hardmax). When x's dims from `axis` on are static and at most one of them
// is not 1, normalizing over them all is normalizing over that one dim: the four nodes become
// Softmax(x, axis=that dim) -> y, with no copies. The Shape node is left to DCE.
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

Expected<int64_t> fold_softmax_wrapper(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t r) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const ir::Node& reshape = g.nodes[size_t(r)];
    if (reshape.op != "Reshape" || reshape.inputs.size() < 2 || reshape.outputs.size() != 1) return false;
    const int32_t si = ix.producer(reshape.inputs[0]);
    if (si < 0 || ix.dead(si)) return false;
    ir::Node& sm = g.nodes[size_t(si)];
    if ((sm.op != "Softmax" && sm.op != "LogSoftmax" && sm.op != "Hardmax") || sm.attr_int("axis") != 1) return false;
    if (ix.sole_consumer(sm.outputs[0]) != r) return false;
    const int32_t fi = ix.producer(sm.inputs[0]);
    if (fi < 0 || ix.dead(fi) || g.nodes[size_t(fi)].op != "Flatten") return false;
    if (ix.sole_consumer(sm.inputs[0]) != si) return false;
    const ir::Node& flat = g.nodes[size_t(fi)];
    const int32_t x = flat.inputs[0];
    const int32_t shp = ix.producer(reshape.inputs[1]);
    // Shape over all of x: start 0 (its default, filled in) and no end.
    if (shp < 0 || g.nodes[size_t(shp)].op != "Shape" || g.nodes[size_t(shp)].inputs[0] != x ||
        g.nodes[size_t(shp)].attr_int("start") != 0 || g.nodes[size_t(shp)].attr("end"))
      return false;
    const ir::TensorInfo& xi = g.tensors[size_t(x)];
    if (!xi.has_shape) return false;
    const auto rank = static_cast<int64_t>(xi.shape.size());
    int64_t axis = flat.attr_int("axis");
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return false;
    int64_t keep = rank - 1, non_unit = 0;
    bool static_dims = true;
    for (int64_t d = axis; d < rank; ++d) {
      const int64_t v = xi.shape[size_t(d)];
      static_dims = static_dims && v >= 0;
      if (v != 1) keep = d, ++non_unit;
    }
    if (!static_dims || non_unit > 1 || rank == 0) return false;
    sm.inputs[0] = x;
    sm.outputs[0] = reshape.outputs[0];
    for (ir::Attribute& a : sm.attributes)
      if (a.name == "axis") a.i = keep;
    ix.kill(r);
    ix.kill(fi);
    return true;
  });
}

}  // namespace tsr::passes::opt
