// Depthwise conv + squeeze-excitation fusion (optimize.h): the block MobileNetV3 and EfficientNet
// put after each depthwise conv,
//   D = depthwise Conv/FusedConv (W [C, 1, kh, kw] constant, group = C, no residual)
//   G = gate_act(Conv2(se_act(Conv1(GlobalAveragePool(D)))))   (1x1 convs, constant weights)
//   Y = Mul(G, D)  (either order)
// where D feeds only the pool and the Mul and each intermediate has one reader, becomes one
// FusedDepthwiseSE(X, W_dw, W1, W2, B_dw, B1, B2) producing Y. Its CPU kernel takes each channel's
// mean right after computing its plane (in cache) instead of a GlobalAveragePool pass over D, and
// runs the two small products and the scaling without four more nodes. Runs after fuse_activation
// (each conv carries its activation already) and before fuse_separable. f32, 4-D only.
#include "core/ops/fused_activation.h"
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

// Whether every value of int-list attribute `attr` (absent: the default) equals v.
bool ints_all(const ir::Node& n, const char* attr, int64_t v) {
  const ir::Attribute* a = n.attr(attr);
  if (!a) return true;
  for (int64_t x : a->ints)
    if (x != v) return false;
  return true;
}

// The constant rank-4 f32 weights of a one-output Conv/FusedConv without residual, else null.
const Tensor* plain_conv_weights(const ir::Node& n, const GraphIndex& ix) {
  if ((n.op != "Conv" && n.op != "FusedConv") || n.outputs.size() != 1 || n.inputs.size() < 2 || n.inputs.size() > 3)
    return nullptr;
  const Tensor* w = ix.constant(n.inputs[1]);
  return w && w->rank() == 4 && w->dtype() == DType::kF32 ? w : nullptr;
}

// A 1x1, stride-1, unpadded group-1 conv from `cols` channels (its W [rows, cols, 1, 1]) at node
// index `i`: its row count, or -1.
int64_t pointwise_rows(const ir::Graph& g, const GraphIndex& ix, int32_t i, int64_t cols) {
  if (i < 0 || ix.dead(i)) return -1;
  const ir::Node& n = g.nodes[size_t(i)];
  const Tensor* w = plain_conv_weights(n, ix);
  if (!w || w->dim(1) != cols || w->dim(2) != 1 || w->dim(3) != 1 || n.attr_int("group") != 1 ||
      !ints_all(n, "strides", 1) || !ints_all(n, "pads", 0) || !ints_all(n, "dilations", 1))
    return -1;
  const ir::Attribute* ap = n.attr("auto_pad");
  if (ap && !ap->s.empty() && ap->s != "NOTSET" && ap->s != "VALID") return -1;
  return w->dim(0);
}

}  // namespace

Expected<int64_t> fuse_squeeze_excite(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [graph_index](GraphIndex& ix, int32_t mi) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const ir::Node& mul = g.nodes[size_t(mi)];
    if (mul.op != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) return false;
    for (int side = 0; side < 2; ++side) {
      const int32_t gate = mul.inputs[size_t(side)], d = mul.inputs[size_t(1 - side)];
      if (gate == d || ix.uses(d) != 2 || ix.is_graph_output(d) || ix.sole_consumer(gate) != mi) continue;
      const ir::TensorInfo& dt = g.tensors[size_t(d)];
      if (dt.dtype != DType::kF32 || !has_static_shape(dt) || dt.shape.size() != 4 ||
          !has_static_shape(g.tensors[size_t(mul.outputs[0])]) || g.tensors[size_t(mul.outputs[0])].shape != dt.shape)
        continue;
      const int32_t di = ix.producer(d);
      if (di < 0 || ix.dead(di)) continue;
      const ir::Node& dw = g.nodes[size_t(di)];
      const Tensor* wd = plain_conv_weights(dw, ix);
      const int64_t c = dt.shape[1];
      if (!wd || wd->dim(0) != c || wd->dim(1) != 1 || dw.attr_int("group") != c) continue;
      if (g.tensors[size_t(dw.inputs[0])].dtype != DType::kF32) continue;
      // Backwards from the gate: Conv2 <- Conv1 <- GlobalAveragePool(D), one reader each.
      const int32_t f2 = ix.producer(gate);
      if (f2 < 0 || ix.dead(f2)) continue;
      const int32_t h = g.nodes[size_t(f2)].inputs[0];
      const int32_t f1 = ix.producer(h);
      if (f1 < 0 || ix.dead(f1) || ix.sole_consumer(h) != f2) continue;
      const int32_t pooled = g.nodes[size_t(f1)].inputs[0];
      const int32_t pi = ix.producer(pooled);
      if (pi < 0 || ix.dead(pi) || ix.sole_consumer(pooled) != f1) continue;
      const ir::Node& pool = g.nodes[size_t(pi)];
      if (pool.op != "GlobalAveragePool" || pool.inputs.size() != 1 || pool.inputs[0] != d) continue;
      const int64_t r = pointwise_rows(g, ix, f1, c);
      if (r < 1 || pointwise_rows(g, ix, f2, r) != c) continue;
      const ir::Node& fc1 = g.nodes[size_t(f1)];
      const ir::Node& fc2 = g.nodes[size_t(f2)];
      TSR_ASSIGN_OR_RETURN(ops::ActivationSpec se_act, ops::activation_of(fc1, ir::node_place(graph_index, f1, fc1)));
      TSR_ASSIGN_OR_RETURN(ops::ActivationSpec gate_act, ops::activation_of(fc2, ir::node_place(graph_index, f2, fc2)));
      auto bias = [](const ir::Node& n) { return n.inputs.size() > 2 ? n.inputs[2] : -1; };
      ir::Node f = dw;  // the depthwise window and activation attributes
      f.op = "FusedDepthwiseSE";
      f.version = 0;
      f.name = mul.name.empty() ? dw.name : mul.name;
      f.inputs = {dw.inputs[0], dw.inputs[1], fc1.inputs[1], fc2.inputs[1], bias(dw), bias(fc1), bias(fc2)};
      while (f.inputs.size() > 4 && f.inputs.back() < 0) f.inputs.pop_back();
      f.outputs = mul.outputs;
      if (se_act.kind != ops::FusedActivation::kNone)
        for (ir::Attribute& a : ops::activation_attributes(se_act, "se_")) f.attributes.push_back(std::move(a));
      if (gate_act.kind != ops::FusedActivation::kNone)
        for (ir::Attribute& a : ops::activation_attributes(gate_act, "gate_")) f.attributes.push_back(std::move(a));
      for (int32_t k : {di, pi, f1, f2}) ix.kill(k);
      g.nodes[size_t(mi)] = std::move(f);
      return true;
    }
    return false;
  });
}

}  // namespace tsr::passes::opt
