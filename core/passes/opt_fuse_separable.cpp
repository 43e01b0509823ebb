// Depthwise + pointwise fusion (optimize.h): a depthwise Conv (group = C, W [C, 1, kh, kw]
// constant; Conv or FusedConv with its activation but no residual) whose output feeds nothing but
// a pointwise Conv (W [M, C, 1, 1] constant, group 1, stride 1, no padding; Conv or FusedConv
// with residual and activation) becomes one FusedSeparableConv, which the CPU kernel runs band by
// band of output rows: the depthwise output of a band stays in cache for the 1x1 product instead
// of going to memory and back (MobileNet / BlazeFace blocks: a 24 x 128 x 128 f32 intermediate is
// 1.5 MB each way). Runs after fuse_residual and fuse_activation, so both convs carry their
// epilogues already. f32 and 4-D only (the CPU kernel's types).
#include <optional>

#include "core/ops/fused_activation.h"
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

bool all_equal(const ir::Node& n, const char* attr, int64_t v) {
  const ir::Attribute* a = n.attr(attr);
  if (!a) return true;
  for (int64_t x : a->ints)
    if (x != v) return false;
  return true;
}

bool explicit_pads(const ir::Node& n) {
  const ir::Attribute* a = n.attr("auto_pad");
  return !a || a->s.empty() || a->s == "NOTSET";
}

// The weights of a Conv or FusedConv whose W is a constant rank-4 f32 tensor, else null.
const Tensor* conv_weights(const ir::Node& n, const GraphIndex& ix) {
  if ((n.op != "Conv" && n.op != "FusedConv") || n.outputs.size() != 1 || n.inputs.size() < 2) return nullptr;
  const Tensor* w = ix.constant(n.inputs[1]);
  if (!w || w->rank() != 4 || w->dtype() != DType::kF32) return nullptr;
  return w;
}

}  // namespace

Expected<int64_t> fuse_separable(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [graph_index](GraphIndex& ix, int32_t pi) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const ir::Node& pw = g.nodes[size_t(pi)];
    const Tensor* wp = conv_weights(pw, ix);
    if (!wp || wp->dim(2) != 1 || wp->dim(3) != 1 || pw.attr_int("group") != 1 || !all_equal(pw, "strides", 1) ||
        !all_equal(pw, "pads", 0) || !all_equal(pw, "dilations", 1) || !explicit_pads(pw))
      return false;
    const int32_t mid = pw.inputs[0];
    const int32_t di = ix.producer(mid);
    if (di < 0 || ix.dead(di) || ix.sole_consumer(mid) != pi) return false;
    const ir::Node& dw = g.nodes[size_t(di)];
    const Tensor* wd = conv_weights(dw, ix);
    const int64_t c = wd ? wd->dim(0) : -1;
    if (!wd || wd->dim(1) != 1 || dw.attr_int("group") != c || wp->dim(1) != c || dw.inputs.size() > 3) return false;
    if (g.tensors[size_t(dw.inputs[0])].dtype != DType::kF32) return false;
    TSR_ASSIGN_OR_RETURN(ops::ActivationSpec dw_act, ops::activation_of(dw, ir::node_place(graph_index, di, dw)));
    ir::Node f = pw;
    f.op = "FusedSeparableConv";
    f.version = 0;
    f.inputs = {dw.inputs[0], dw.inputs[1], pw.inputs[1], dw.inputs.size() > 2 ? dw.inputs[2] : -1,
                pw.inputs.size() > 2 ? pw.inputs[2] : -1};
    if (pw.inputs.size() > 3 && pw.inputs[3] >= 0) f.inputs.push_back(pw.inputs[3]);
    while (f.inputs.size() > 3 && f.inputs.back() < 0) f.inputs.pop_back();
    // The depthwise window and group, then both activations (the pointwise one keeps its names).
    f.attributes.clear();
    for (const ir::Attribute& a : dw.attributes)
      if (a.name.rfind("activation", 0) != 0) f.attributes.push_back(a);
    for (const ir::Attribute& a : pw.attributes)
      if (a.name.rfind("activation", 0) == 0) f.attributes.push_back(a);
    if (dw_act.kind != ops::FusedActivation::kNone)
      for (ir::Attribute& a : ops::activation_attributes(dw_act, "dw_")) f.attributes.push_back(std::move(a));
    g.nodes[size_t(pi)] = std::move(f);
    ix.kill(di);
    return true;
  });
}

}  // namespace tsr::passes::opt
