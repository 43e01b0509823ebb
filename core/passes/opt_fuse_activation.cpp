// Conv/Gemm + activation fusion (optimize.h): Conv -> act becomes FusedConv, Gemm -> act becomes
// FusedGemm, the activation applied by the kernel to each block of results while it is in cache
// (backends/cpu/kernels/epilogue.h) instead of by a separate node rereading the whole tensor.
// SiLU exported as Mul(y, Sigmoid(y)) fuses as the Silu activation (EfficientNet); an exact Gelu
// (the gelu pass's node, ViT/BERT/Whisper MLPs) after a Gemm as the Gelu activation, a tanh one
// (GPT-2-style MLPs) as GeluTanh. After a
// com.microsoft::DynamicQuantizeMatMul / MatMulIntegerToFloat (a q8 transformer's fc1, made by
// quantize_fusion) an activation fuses as the same attributes on that node.
// Only where the Conv/Gemm output feeds nothing but the activation, and the activation's
// parameters are known now (Clip's min/max inputs constant or absent). A chain of Mul/Add/Sub/
// Div by scalar constants right after the activation (PP-OCR's learnable affine layers) folds
// into the fused node's activation_affine {scale, shift}, and Max/Min with scalar constants after
// those into its activation_bounds {lo, hi} (openWakeWord's embedding model: LeakyRelu, then Max).
//
// Residual fusion runs first: Conv -> Add(Y, Z), with Z of Y's shape (a ResNet/BlazeFace skip
// connection), becomes FusedConv(X, W, B, Z) without activation, the kernel starting each block of
// outputs from Z's rows instead of a separate Add rereading both tensors; the activation after the
// Add then fuses into it like any other.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "core/ops/fused_activation.h"
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

using ops::ActivationSpec;
using ops::FusedActivation;

// The activation node `act` computes, if it is one the fused ops support.
std::optional<ActivationSpec> activation_node(const ir::Node& act, const GraphIndex& ix) {
  if (act.outputs.size() != 1 || act.inputs.empty()) return std::nullopt;
  if (act.op == "Relu") return ActivationSpec{FusedActivation::kRelu};
  if (act.op == "HardSwish") return ActivationSpec{FusedActivation::kHardSwish};
  if (act.op == "Sigmoid") return ActivationSpec{FusedActivation::kSigmoid};
  // The exact (erf) form, as PyTorch exports nn.GELU() (recognized by the gelu pass), and the
  // tanh form (nn.GELU(approximate="tanh"): GPT-2-style MLPs).
  if (act.op == "Gelu" && act.inputs.size() == 1) {
    const ir::Attribute* ap = act.attr("approximate");
    if (!ap || (ap->kind == ir::AttrKind::kString && ap->s == "none")) return ActivationSpec{FusedActivation::kGelu};
    if (ap->kind == ir::AttrKind::kString && ap->s == "tanh") return ActivationSpec{FusedActivation::kGeluTanh};
    return std::nullopt;
  }
  // onnxruntime's FastGelu without its optional bias is the same tanh form.
  if (act.op == "com.microsoft::FastGelu" && (act.inputs.size() == 1 || act.inputs[1] < 0))
    return ActivationSpec{FusedActivation::kGeluTanh};
  if (act.op == "LeakyRelu")
    return ActivationSpec{FusedActivation::kLeakyRelu, static_cast<float>(act.attr_float("alpha"))};
  if (act.op == "HardSigmoid")
    return ActivationSpec{FusedActivation::kHardSigmoid, static_cast<float>(act.attr_float("alpha")),
                          static_cast<float>(act.attr_float("beta"))};
  if (act.op == "Clip") {
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    for (size_t k = 1; k < 3 && k < act.inputs.size(); ++k) {
      if (act.inputs[k] < 0) continue;
      const Tensor* c = ix.constant(act.inputs[k]);
      if (!c || c->numel() != 1 || (c->dtype() != DType::kF32 && c->dtype() != DType::kF64)) return std::nullopt;
      (k == 1 ? lo : hi) = static_cast<float>(c->scalar_f64(0));
    }
    return ActivationSpec{FusedActivation::kClip, lo, hi};
  }
  return std::nullopt;
}

// Folds scalar Mul/Add/Sub/Div nodes reading `*out` (and nothing else reading it) into `spec`'s
// affine, and scalar Max/Min nodes into its bounds; `*out` becomes the last folded node's output.
// Returns the nodes folded. The bounds come last in the epilogue, so no affine op after a Max/Min
// folds.
int64_t absorb_affine(ir::Graph& g, GraphIndex& ix, int32_t* out, ActivationSpec* spec) {
  int64_t n = 0;
  for (;;) {
    const int32_t ci = ix.sole_consumer(*out);
    if (ci < 0) return n;
    const ir::Node& c = g.nodes[size_t(ci)];
    if (c.inputs.size() != 2 || c.outputs.size() != 1) return n;
    const bool first = c.inputs[0] == *out;
    const Tensor* k = ix.constant(c.inputs[first ? 1 : 0]);
    if (!k || k->numel() != 1 || k->dtype() != g.tensors[size_t(*out)].dtype) return n;
    const ir::TensorInfo& yi = g.tensors[size_t(*out)];
    const ir::TensorInfo& oi = g.tensors[size_t(c.outputs[0])];
    if (!yi.has_shape || !oi.has_shape || yi.shape != oi.shape) return n;
    const double v = k->scalar_f64(0);
    if (c.op == "Max" || c.op == "Min") {
      const float f = static_cast<float>(v);
      if (std::isnan(f)) return n;
      if (c.op == "Max") spec->lo = std::max(spec->lo, f), spec->hi = std::max(spec->hi, f);
      else spec->lo = std::min(spec->lo, f), spec->hi = std::min(spec->hi, f);
    } else {
      if (spec->has_bounds()) return n;
      double scale = spec->scale, shift = spec->shift;
      if (c.op == "Mul") scale *= v, shift *= v;
      else if (c.op == "Add") shift += v;
      else if (c.op == "Sub" && first) shift -= v;
      else if (c.op == "Div" && first && v != 0) scale /= v, shift /= v;
      else return n;
      spec->scale = static_cast<float>(scale);
      spec->shift = static_cast<float>(shift);
    }
    *out = c.outputs[0];
    ix.kill(ci);
    ++n;
  }
}

// Mul(y, Sigmoid(y)) in either order (SiLU/Swish as PyTorch exports it, EfficientNet's every
// conv): the index of the Sigmoid node, if `mul` is that and the Sigmoid's output feeds nothing
// else; y must then feed exactly the Sigmoid and the Mul (checked by the caller).
int32_t silu_sigmoid(const ir::Graph& g, const GraphIndex& ix, const ir::Node& mul) {
  if (mul.op != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1 || mul.inputs[0] == mul.inputs[1]) return -1;
  for (int side = 0; side < 2; ++side) {
    const int32_t s = mul.inputs[size_t(side)], y = mul.inputs[size_t(1 - side)];
    const int32_t sp = ix.producer(s);
    if (sp < 0 || ix.dead(sp) || ix.uses(s) != 1 || ix.is_graph_output(s)) continue;
    const ir::Node& sig = g.nodes[size_t(sp)];
    if (sig.op == "Sigmoid" && sig.inputs.size() == 1 && sig.inputs[0] == y && sig.outputs.size() == 1) return sp;
  }
  return -1;
}

}  // namespace

Expected<int64_t> fuse_activation(ir::Model& model, int32_t graph_index) {
  ir::Graph& g = model.graphs[size_t(graph_index)];
  GraphIndex ix(g);
  int64_t fused = 0;
  for (size_t a = 0; a < g.nodes.size(); ++a) {
    const ir::Node& act = g.nodes[a];
    if (ix.dead(static_cast<int32_t>(a))) continue;
    std::optional<ActivationSpec> spec = activation_node(act, ix);
    // SiLU: the Mul is the activation node, reading y (the conv's output) beside the Sigmoid.
    const int32_t sigmoid = spec ? -1 : silu_sigmoid(g, ix, act);
    if (sigmoid >= 0) spec = ActivationSpec{FusedActivation::kSilu};
    if (!spec) continue;
    const int32_t yin = sigmoid >= 0 ? g.nodes[size_t(sigmoid)].inputs[0] : act.inputs[0];
    int32_t p = ix.producer(yin);
    if (p < 0 || ix.dead(p)) continue;
    // A Gemm on a rank-3 activation's rows (matmul_add's Reshape -> Gemm -> Reshape): the
    // activation is elementwise, so it fuses into the Gemm ahead of the Reshape, which then
    // writes the activation's output.
    int32_t reshape = -1;
    if (sigmoid < 0 && g.nodes[size_t(p)].op == "Reshape" && g.nodes[size_t(p)].outputs.size() == 1 &&
        ix.sole_consumer(yin) == static_cast<int32_t>(a)) {
      const int32_t x = g.nodes[size_t(p)].inputs[0];
      const int32_t q = ix.producer(x);
      if (q < 0 || ix.dead(q) || g.nodes[size_t(q)].op != "Gemm" || ix.sole_consumer(x) != p) continue;
      reshape = p;
      p = q;
    }
    ir::Node& prod = g.nodes[size_t(p)];
    // The f32-output quantized matmuls of dynamic quantization (quantize_fusion's; their kernel
    // applies the activation per block of outputs, qgemm.h) keep their op and take the
    // attributes.
    const bool qmatmul = reshape < 0 && !prod.attr("activation") &&
                         (prod.op == "com.microsoft::DynamicQuantizeMatMul" ||
                          prod.op == "com.microsoft::MatMulIntegerToFloat");
    const char* fused_op = prod.op == "Conv" || (prod.op == "FusedConv" && !prod.attr("activation")) ? "FusedConv"
                           : prod.op == "Gemm"                                                     ? "FusedGemm"
                           : qmatmul                                                               ? prod.op.c_str()
                                                                                                   : nullptr;
    if (!fused_op || prod.outputs.size() != 1) continue;
    // Gelu fuses into Gemms only (transformer MLPs): the conv kernels' per-tile epilogues are
    // tuned for the cheap activations.
    const bool gelu = spec->kind == FusedActivation::kGelu || spec->kind == FusedActivation::kGeluTanh;
    if (gelu && std::string_view(fused_op) != "FusedGemm" && !qmatmul) continue;
    // Fused ops take f32/f64 only (the CPU epilogue's types).
    const DType dt = g.tensors[size_t(yin)].dtype;
    if (dt != DType::kF32 && dt != DType::kF64) continue;
    if (sigmoid >= 0 ? ix.uses(yin) != 2 || ix.is_graph_output(yin)
                     : ix.sole_consumer(yin) != static_cast<int32_t>(a))
      continue;
    ActivationSpec full = *spec;
    int32_t out = act.outputs[0];
    ix.kill(static_cast<int32_t>(a));
    if (sigmoid >= 0) ix.kill(sigmoid), ++fused;
    fused += 1 + absorb_affine(g, ix, &out, &full);
    if (!qmatmul) {
      prod.op = fused_op;
      prod.version = 0;
    }
    for (ir::Attribute& attr : ops::activation_attributes(full)) prod.attributes.push_back(std::move(attr));
    if (reshape >= 0) {
      g.nodes[size_t(reshape)].outputs[0] = out;
      ix.set_producer(out, reshape);
    } else {
      prod.outputs[0] = out;
      ix.set_producer(out, p);
    }
  }
  ix.compact();
  return fused;
}

Expected<int64_t> fuse_residual(ir::Model& model, int32_t graph_index) {
  ir::Graph& g = model.graphs[size_t(graph_index)];
  GraphIndex ix(g);
  int64_t fused = 0;
  for (size_t a = 0; a < g.nodes.size(); ++a) {
    const ir::Node& add = g.nodes[a];
    if (ix.dead(static_cast<int32_t>(a)) || add.op != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1)
      continue;
    // Only a static shape proves that Z has Y's shape (no broadcasting in the kernel).
    const ir::TensorInfo& yi = g.tensors[size_t(add.outputs[0])];
    if (!has_static_shape(yi) || (yi.dtype != DType::kF32 && yi.dtype != DType::kF64) || add.inputs[0] == add.inputs[1])
      continue;
    for (int side = 0; side < 2; ++side) {
      const int32_t y = add.inputs[size_t(side)], z = add.inputs[size_t(1 - side)];
      const int32_t p = ix.producer(y);
      if (p < 0 || ix.dead(p) || ix.sole_consumer(y) != static_cast<int32_t>(a)) continue;
      const ir::Node& conv = g.nodes[size_t(p)];
      const bool plain = conv.op == "Conv" || (conv.op == "FusedConv" && !conv.attr("activation") && conv.inputs.size() <= 3);
      if (!plain || conv.outputs.size() != 1) continue;
      const ir::TensorInfo& ci = g.tensors[size_t(y)];
      const ir::TensorInfo& zi = g.tensors[size_t(z)];
      if (!ci.has_shape || ci.shape != yi.shape || !zi.has_shape || zi.shape != yi.shape || zi.dtype != yi.dtype ||
          zi.kind != ValueKind::kTensor)
        continue;
      // The fused node takes the Add's place in the node list: after both the conv's inputs and
      // Z's producer, so the list stays in topological order.
      ir::Node f = conv;
      f.op = "FusedConv";
      f.version = 0;
      f.inputs.resize(3, -1);
      f.inputs.push_back(z);
      f.outputs = add.outputs;
      g.nodes[a] = std::move(f);
      ix.kill(p);
      ++fused;
      break;
    }
  }
  ix.compact();
  return fused;
}

}  // namespace tsr::passes::opt
