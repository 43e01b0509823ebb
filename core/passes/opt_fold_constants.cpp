// Constant folding (optimize.h): a node whose present inputs are all constants is computed once,
// by the caller's evaluator (OptimizeOptions::evaluate: the CPU kernels), and its outputs become
// constants. Exporters leave such chains behind: tf2onnx reorders NHWC pads with Split + Concat of
// a constant, PaddlePaddle computes shapes from constant tensors. Folded chains then let the
// other passes see constants (fold_pad needs constant pads).
//
// Not folded: nodes without inputs (Constant is already a constant after import; the random
// generators must stay random), random and control-flow ops, nodes with subgraphs, outputs that
// are graph outputs, strings, sequences, or unknown shapes, and results larger than both 64 KiB
// and their inputs (a ConstantOfShape or Expand would grow the model file). A node whose
// evaluation fails stays in the graph, so that running it reports the error as before.
//
// Except for the weights of a QDQ model that quantize_fusion (which runs before) left in f32,
// e.g. EfficientNet's squeeze-excitation convs: a DequantizeLinear of a constant that nothing
// else reads, whose output only compute ops (Conv, ConvTranspose, MatMul, Gemm) read, folds up to
// 1 MiB of f32. It would otherwise run on every inference; the integer constant is dropped with the
// node, so only the f32 weight is held (what the f32 model holds), never both. Larger ones (a
// weight-only int8 transformer's matrices) stay int8: folding them would quadruple the model.
//
// Shape queries (OpDef::reads_input_shapes_only: Shape, Size) fold when their input's shape is
// static, even though its values are not constant: PyTorch exports compute every Reshape target
// from Shape -> Gather -> Unsqueeze -> Concat of the activations, so folding those chains makes
// the Reshapes' shapes constant, and the re-inference after this pass (optimize.cpp) gives the
// later passes (fuse_attention, matmul_add, skip_layer_norm) static shapes to match on.
#include <algorithm>

#include "core/ops/op_def.h"
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

constexpr size_t kFoldAnywayBytes = size_t{64} << 10;
// The largest dequantized weight folded past kFoldAnywayBytes (see the top).
constexpr size_t kFoldWeightBytes = size_t{1} << 20;

// Stands in for the data of a shape query's input: the kernel reads only the shape, so this
// pointer is never dereferenced; it is aligned for any dtype so that Tensor::wrap accepts it.
alignas(64) const unsigned char kNoData[64] = {};

// Whether `op` is one whose constant f32 weight is read as is (packed at load) by the kernels.
bool weight_reader(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "MatMul" || op == "Gemm";
}

bool foldable_op(const ir::Node& node) {
  // Random results must differ from run to run (OpDef::random); If/Loop/Scan are caught by their
  // subgraphs.
  const ops::OpDef* def = ops::OpRegistry::global().find(node.op);
  if (!def || def->random) return false;
  for (const ir::Attribute& a : node.attributes)
    if (a.kind == ir::AttrKind::kGraph || a.kind == ir::AttrKind::kGraphs) return false;
  return !node.inputs.empty();
}

}  // namespace

Expected<int64_t> fold_constants(ir::Model& model, int32_t graph_index, const NodeEvaluator& evaluate) {
  if (!evaluate) return int64_t{0};
  ir::Graph& g = model.graphs[size_t(graph_index)];
  GraphIndex ix(g);
  int64_t folded = 0;
  std::vector<const Tensor*> values;
  std::vector<Tensor> shape_stand_ins;  // reserved per node: the pointers in `values` stay valid
  // Tensors that some node other than a weight reader (weight_reader) reads.
  std::vector<bool> read_otherwise(g.tensors.size(), false);
  for (const ir::Node& node : g.nodes)
    if (!weight_reader(node.op))
      for (int32_t in : node.inputs)
        if (in >= 0) read_otherwise[size_t(in)] = true;
  // Nodes are in topological order, so a folded node's outputs are constants by the time the
  // nodes reading them are visited: whole chains fold in one sweep.
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const ir::Node& node = g.nodes[n];
    if (!foldable_op(node)) continue;
    values.assign(node.inputs.size(), nullptr);
    size_t in_bytes = 0;
    bool constant = true;
    const ops::OpDef* def = ops::OpRegistry::global().find(node.op);
    const bool shape_query = def && def->reads_input_shapes_only;
    shape_stand_ins.clear();
    shape_stand_ins.reserve(node.inputs.size());
    for (size_t k = 0; k < node.inputs.size() && constant; ++k) {
      if (node.inputs[k] < 0) continue;
      values[k] = ix.constant(node.inputs[k]);
      if (!values[k] && shape_query) {
        const ir::TensorInfo& t = g.tensors[size_t(node.inputs[k])];
        if (t.kind == ValueKind::kTensor && has_static_shape(t) && t.dtype != DType::kString &&
            t.dtype != DType::kUndefined) {
          shape_stand_ins.push_back(Tensor::wrap(t.dtype, t.shape, kNoData, nullptr));
          values[k] = &shape_stand_ins.back();
          continue;
        }
      }
      constant = values[k] != nullptr && values[k]->kind() == ValueKind::kTensor;
      if (constant) in_bytes += values[k]->nbytes();
    }
    if (!constant) continue;
    size_t out_bytes = 0;
    bool fits = true;
    for (int32_t o : node.outputs) {
      if (o < 0) continue;
      const ir::TensorInfo& t = g.tensors[size_t(o)];
      fits = t.kind == ValueKind::kTensor && has_static_shape(t) && t.dtype != DType::kString &&
             t.dtype != DType::kUndefined && !ix.is_graph_output(o);
      if (!fits) break;
      out_bytes += static_cast<size_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
    }
    // A dequantized weight (see the top): the quantized constant is read by this node alone.
    const bool weight = node.op == "DequantizeLinear" && node.outputs.size() == 1 && node.outputs[0] >= 0 &&
                        ix.uses(node.outputs[0]) > 0 && !read_otherwise[size_t(node.outputs[0])] &&
                        ix.uses(node.inputs[0]) == 1 && !ix.is_graph_output(node.inputs[0]) &&
                        out_bytes <= kFoldWeightBytes;
    if (!fits || (out_bytes > std::max(kFoldAnywayBytes, in_bytes) && !weight)) continue;
    auto out = evaluate(node, values);
    if (!out.ok() || out->size() != node.outputs.size()) continue;
    bool same = true;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (node.outputs[k] < 0) continue;
      const ir::TensorInfo& t = g.tensors[size_t(node.outputs[k])];
      same = same && (*out)[k].defined() && (*out)[k].dtype() == t.dtype && (*out)[k].shape() == t.shape;
    }
    if (!same) continue;  // inference and kernel disagree: leave it to run time
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) g.tensors[size_t(node.outputs[k])].constant = std::move((*out)[k]);
    ix.kill(static_cast<int32_t>(n));
    ++folded;
  }
  ix.compact();
  return folded;
}

}  // namespace tsr::passes::opt
