// Graph optimization for inference (DESIGN.md §2 passes/): rewrites that keep every output
// equal (to float rounding) while running fewer, fused nodes.
//
// The passes, each in its own file (core/passes/opt_*.cpp), run in this order over every graph
// of the model (subgraphs of If/Loop/Scan included):
//   quantize_fusion DynamicQuantizeLinear -> MatMulInteger (constant B) -> Cast -> Mul(scale) [-> Add
//                   bias] -> com.microsoft::DynamicQuantizeMatMul, bit-identical; the same around
//                   ConvInteger (1-D/2-D, one group) -> tessera DynamicQuantizeConv (opt_quantize_conv.cpp);
//                   QDQ around
//                   MatMul/Conv/Gemm -> QLinearMatMul/QLinearConv/com.microsoft::QGemm; DQ ->
//                   MaxPool -> Q with equal parameters -> MaxPool on the codes;
//                   Q([Relu](Add(DQ(a), DQ(b)))) -> com.microsoft::QLinearAdd (opt_quantize.cpp;
//                   before folding)
//   fold_constants  nodes whose inputs are all constants -> their values, computed once by
//                   OptimizeOptions::evaluate (skipped without one; see opt_fold_constants.cpp
//                   for what never folds); first, an integer Range(s, s + c, d) with constant c, d
//                   -> Add(s, constant offsets), a static length (a decode step's position ids,
//                   opt_range_offset.cpp); re-inferred and folded again while anything folds, so
//                   that shape queries made static by a folded Reshape target fold too
//   fold_pad        Pad (constant mode, zero value, spatial dims only) -> the pads of the Conv it
//                   feeds
//   pool_before_conv Conv(1x1, stride 1, no pads) -> [zero Pad] -> AveragePool (no pads, at least
//                   halving the pixels) -> AveragePool -> Conv: the Conv runs on the pooled pixels
//                   (DenseNet's transitions; opt_pool_before_conv.cpp)
//   fuse_attention  MatMul(Q, Kt) [scale] [+ mask] -> Softmax(last axis) -> MatMul(., V), with the
//                   Reshape/Transpose around the heads and a KV-cache Concat -> one ONNX Attention
//                   (opset 23; the tiled online-softmax kernel never holds [H, S, T]); early, before
//                   the passes below take the pattern apart (opt_fuse_attention.cpp)
//   conv_bn         Conv + BatchNormalization (inference form), or + Mul/Add/Sub/Div by a scalar or
//                   per-channel constant -> Conv with folded weights/bias
//   concat_affine   Concat(axis 1) -> BatchNormalization (inference, constant) [-> Relu] ->
//                   tessera FusedConcatAffine: reads the inputs in place, no concatenated copy
//                   (DenseNet's layers; opt_concat_affine.cpp)
//   hardswish       x * Clip(x + 3, 0, 6) / 6 (exporters' spelled-out HardSwish) -> HardSwish
//   gelu            the Erf form 0.5 x (1 + erf(x / sqrt 2)) and the tanh form (GPT-2's
//                   gelu_new) spelled out in 5-9 nodes -> Gelu (approximate "none" / "tanh")
//   layer_norm      LayerNorm spelled out (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div,
//                   Mul gamma[, Add beta]; exports before opset 17) -> LayerNormalization
//   matmul_add      MatMul(X[M, K], W[K, N] constant) + Add(bias[N] constant) -> Gemm; X of static
//                   shape [batch..., M, K]: Reshape -> Gemm -> Reshape (aliasing reshapes)
//   fold_matmul_transpose  MatMul with an input Transpose that swaps the last two axes and/or a
//                   scalar Mul/Div on an input or the output -> com.microsoft::FusedMatMul
//                   (transA/transB, alpha), read in place by sgemm; a Transpose [0, 2, 3, 1]
//                   (K heads) becomes [0, 2, 1, 3] + transB (opt_fold_matmul.cpp)
//   skip_layer_norm LayerNormalization(Add(a, b)) over the last axis, a and b of one static 2-D/3-D
//                   shape -> com.microsoft::SkipLayerNormalization (the sum as its output 3 where
//                   other nodes read it)
//   fuse_residual   Conv + Add(Z) with Z of the Conv output's static shape (a skip connection) ->
//                   FusedConv(X, W, B, Z), the kernel adding Z to each block of outputs
//   fuse_activation Conv/Gemm + Relu/Clip/HardSwish/Sigmoid/LeakyRelu/HardSigmoid -> FusedConv/
//                   FusedGemm (ops/fused_activation.h; the kernel applies it in its epilogue);
//                   Gemm + Gelu (exact, or the tanh form as GeluTanh) -> FusedGemm
//   fuse_squeeze_excite  depthwise Conv [+ activation] -> GlobalAveragePool -> 1x1 Conv [+ act] ->
//                   1x1 Conv [+ act] -> Mul with the depthwise output (a squeeze-excitation block:
//                   MobileNetV3, EfficientNet) -> FusedDepthwiseSE, the kernel taking each channel's
//                   mean while its plane is in cache (f32, 2-D; opt_fuse_se.cpp)
//   fuse_separable  depthwise Conv [+ activation] feeding only a pointwise (1x1) Conv/FusedConv ->
//                   FusedSeparableConv, the kernel keeping each band of depthwise output in cache
//                   for the 1x1 product (f32, 2-D); a pointwise conv feeding only that depthwise
//                   conv joins it as its expansion stage on outputs >= 17 wide whose expanded
//                   image is >= 1 MiB
//   softmax_wrapper Shape + Flatten + Softmax + Reshape (how the importer expresses Softmax-1..12
//                   on a non-last axis) -> one Softmax when the flattened dims hold one non-1 dim
//   cse             common-subexpression elimination: nodes with equal op, attributes and inputs
//   fuse_elementwise trees of f32 elementwise nodes (Add, Mul, Clip, Sigmoid, ...) whose
//                   intermediates have one reader and the output's shape -> FusedElementwise
//                   (ops/fused_elementwise.h; one pass over memory instead of one per node)
//   quantize_lookup QuantizeLinear(f(DequantizeLinear(x))), f a chain of elementwise nodes on that
//                   one value, per-tensor u8/s8 parameters -> tessera QLinearLookup(x, table), the
//                   256-entry table computed by OptimizeOptions::evaluate running the original
//                   nodes on every code (bit-identical; opt_quantize_lookup.cpp)
//   dce             dead-code elimination: nodes none of whose outputs reach a graph output
//   quantize_layout chains of QLinearConv (one group) / MaxPool / QLinearAdd / QLinearLookup on 4-D
//                   codes -> channels last (com.microsoft::QLinearConv channels_last = 1,
//                   com.microsoft::NhwcMaxPool), with a Transpose where a chain begins or ends;
//                   only chains whose taps-gathering convs outnumber those Transposes (ResNet's
//                   body, not MobileNets'); bit-identical; after dce, so that only live readers count
//                   (opt_quantize_layout.cpp)
//
// Scope: inference graphs only. A model with a training signature (bound inputs or variable
// updates, i.e. a train_step) is left unchanged: autodiff and the optimizer-update ops run on the
// graph as built, and the fused ops have no gradient rule. Gradients of an inference model are
// taken (tessera grad, passes/autodiff) on the unoptimized graph.
//
// Errors: kInvalidModel if the model fails passes::verify_model before or after (a bug in a
// pass shows up there, naming the node). Not thread-safe on one model; the model is edited in
// place and stays verified (types inferred) on success.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace tsr::passes {

// Evaluates one node whose present inputs are all constants: `inputs` parallel to node.inputs
// (null for omitted ones); returns the outputs parallel to node.outputs. The optimizer sits below
// the executor (docs/design.md), so the caller supplies it (tsr::evaluate_node in
// core/exec/optimized_model.h runs the CPU kernels).
using NodeEvaluator =
    std::function<Expected<std::vector<Tensor>>(const ir::Node& node, const std::vector<const Tensor*>& inputs)>;

struct OptimizeOptions {
  bool fold_constants = true;  // needs `evaluate`
  bool quantize_fusion = true;  // dynamic-quantized MatMul -> DynamicQuantizeMatMul; QDQ -> QLinear*
  bool fold_pad = true;
  bool pool_before_conv = true;
  bool fuse_attention = true;
  bool conv_bn = true;
  bool concat_affine = true;
  bool hardswish = true;
  bool gelu = true;
  bool layer_norm = true;
  bool matmul_add = true;
  bool fold_matmul_transpose = true;
  bool skip_layer_norm = true;
  bool fuse_residual = true;
  bool fuse_activation = true;
  bool fuse_squeeze_excite = true;
  bool fuse_separable = true;
  bool softmax_wrapper = true;
  bool cse = true;
  bool fuse_elementwise = true;
  bool quantize_lookup = true;  // needs `evaluate`
  bool quantize_layout = true;
  bool dce = true;
  NodeEvaluator evaluate;  // empty: no constant folding
};

// Turns the pass named `name` (as in the list above and OptimizeReport) off in `options`, for
// A/B measurements and for isolating a pass (onnxruntime's disabled optimizers).
// kInvalidArgument listing the pass names for an unknown one.
Status disable_pass(OptimizeOptions& options, std::string_view name);

// What one pass changed, summed over all graphs.
struct PassCount {
  std::string pass;
  int64_t rewrites = 0;  // patterns rewritten (nodes folded, fused or removed)
};

struct OptimizeReport {
  bool skipped_training = false;  // the model has a training signature: nothing was changed
  int64_t nodes_before = 0;       // all graphs
  int64_t nodes_after = 0;
  std::vector<PassCount> passes;  // in the order they ran
};

// Optimizes `model` in place (see above). The model must already be verified (as loaded).
Expected<OptimizeReport> optimize(ir::Model& model, const OptimizeOptions& options = {});

// One line per pass and the node totals, for `tessera optimize` / `tessera inspect`.
std::string describe(const OptimizeReport& report);

}  // namespace tsr::passes
