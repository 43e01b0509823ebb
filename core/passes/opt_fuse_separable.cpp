// Depthwise + pointwise fusion (optimize.h): a depthwise Conv (group = C, W [C, 1, kh, kw]
// constant; Conv or FusedConv with its activation but no residual) whose output feeds nothing but
// a pointwise Conv (W [M, C, 1, 1] constant, group 1, stride 1, no padding; Conv or FusedConv
// with residual and activation) becomes one FusedSeparableConv, which the CPU kernel runs band by
// band of output rows: the depthwise output of a band stays in cache for the 1x1 product instead
// of going to memory and back (MobileNet / BlazeFace blocks: a 24 x 128 x 128 f32 intermediate is
// 1.5 MB each way). Runs after fuse_residual and fuse_activation, so both convs carry their
// epilogues already. f32 and 4-D only (the CPU kernel's types).
//
// A pointwise Conv feeding nothing but that depthwise Conv (no residual; MobileNetV2's inverted
// residual blocks: expand 1x1, depthwise, project 1x1) joins the node as its expansion stage
// (inputs 6 and 7, ex_activation) where the output is wider than kMinExpandWidth - 1 columns and
// the expanded image has kMinExpandFloats or more: the kernel then computes the expanded rows a
// band reads, so that the expanded tensor (96 x 112 x 112 f32 in MobileNetV2's block 2, 4.8 MB)
// never goes to memory either. Narrower planes with kMinSmallPlaneChannels or more channels (the
// kernel's channels-last stage) join it too: the kernel then computes the expansion channels-last,
// the input rows of each thread's run of output positions, so that the depthwise stage reads it
// without a transpose and the threads share no data within the block (MobileNetV2's 14 x 14 and
// 7 x 7 blocks). Other expanded images smaller than kMinExpandFloats stay in L2 between two convs.
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

// Output widths from which the expansion conv joins the node (conv_separable.cpp's
// kMaxChannelsLastWidth + 1).
constexpr int64_t kMinExpandWidth = 17;
// Expanded images (C x H x W) from which it joins: 1 MiB of f32, the L2 of the AVX-512 machine the
// zoo runs on (MobileNetV2's 192 x 28 x 28 blocks and MobileNetV3-small's 72 x 56 x 56 ran no
// faster fused, at two threads slower: their bands are shared by the threads, whose kernel then
// expands the image whole first).
constexpr int64_t kMinExpandFloats = int64_t{1} << 18;
// Channels from which planes at most kMinExpandWidth - 1 wide join their expansion
// (conv_separable.cpp's kMinChannelsLast).
constexpr int64_t kMinSmallPlaneChannels = 128;

// The weights of a Conv or FusedConv whose W is a constant rank-4 f32 tensor, else null.
const Tensor* conv_weights(const ir::Node& n, const GraphIndex& ix) {
  if ((n.op != "Conv" && n.op != "FusedConv") || n.outputs.size() != 1 || n.inputs.size() < 2) return nullptr;
  const Tensor* w = ix.constant(n.inputs[1]);
  if (!w || w->rank() != 4 || w->dtype() != DType::kF32) return nullptr;
  return w;
}

// Whether n (weights w, may be null) is a pointwise Conv: 1x1, group 1, stride 1, no padding.
bool pointwise(const ir::Node& n, const Tensor* w) {
  return w && w->dim(2) == 1 && w->dim(3) == 1 && n.attr_int("group") == 1 && all_equal(n, "strides", 1) &&
         all_equal(n, "pads", 0) && all_equal(n, "dilations", 1) && explicit_pads(n);
}

}  // namespace

Expected<int64_t> fuse_separable(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [graph_index](GraphIndex& ix, int32_t pi) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const ir::Node& pw = g.nodes[size_t(pi)];
    const Tensor* wp = conv_weights(pw, ix);
    if (!pointwise(pw, wp)) return false;
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
    // The expansion stage: a pointwise conv into X of C channels, no residual, X read by nothing
    // else, on an output wide enough.
    const int32_t x = dw.inputs[0], ei = ix.producer(x);
    const ir::TensorInfo& yt = g.tensors[size_t(pw.outputs[0])];
    const ir::TensorInfo& xt = g.tensors[size_t(x)];
    const bool shapes = yt.has_shape && yt.shape.size() == 4 && yt.shape[3] > 0 && xt.has_shape && xt.shape.size() == 4;
    const bool wide = shapes && yt.shape[3] >= kMinExpandWidth && xt.shape[1] * xt.shape[2] * xt.shape[3] >= kMinExpandFloats;
    const bool small_plane = shapes && yt.shape[3] < kMinExpandWidth && c >= kMinSmallPlaneChannels &&
                             wd->dim(2) * wd->dim(3) <= 64;
    if ((wide || small_plane) && ei >= 0 && !ix.dead(ei) && ix.sole_consumer(x) == di) {
      const ir::Node& ex = g.nodes[size_t(ei)];
      const Tensor* we = conv_weights(ex, ix);
      if (pointwise(ex, we) && we->dim(0) == c && ex.inputs.size() <= 3 &&
          g.tensors[size_t(ex.inputs[0])].dtype == DType::kF32) {
        TSR_ASSIGN_OR_RETURN(ops::ActivationSpec ex_act, ops::activation_of(ex, ir::node_place(graph_index, ei, ex)));
        f.inputs.resize(6, -1);
        f.inputs[0] = ex.inputs[0];
        f.inputs.push_back(ex.inputs[1]);
        if (ex.inputs.size() > 2 && ex.inputs[2] >= 0) f.inputs.push_back(ex.inputs[2]);
        if (ex_act.kind != ops::FusedActivation::kNone)
          for (ir::Attribute& a : ops::activation_attributes(ex_act, "ex_")) f.attributes.push_back(std::move(a));
        ix.kill(ei);
      }
    }
    g.nodes[size_t(pi)] = std::move(f);
    ix.kill(di);
    return true;
  });
}

}  // namespace tsr::passes::opt
