// Packed QKV from a Split for fuse_attention (opt_fuse_attention_split.h).
#include "core/passes/opt_fuse_attention_split.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "core/passes/strided_view.h"

namespace tsr::passes::opt {

std::optional<SplitColumn> split_column(GraphIndex& ix, int32_t t) {
  const int32_t p = ix.producer(t);
  if (p < 0 || ix.dead(p)) return std::nullopt;
  const ir::Graph& g = ix.graph();
  const ir::Node& n = g.nodes[size_t(p)];
  if (n.op != "Split" || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty()) return std::nullopt;
  const ir::TensorInfo& src = g.tensors[size_t(n.inputs[0])];
  if (src.dtype != DType::kF32 || !has_static_shape(src) || src.shape.empty()) return std::nullopt;
  for (int64_t d : src.shape)
    if (d >= kMaxStaticDim) return std::nullopt;
  const auto rank = static_cast<int64_t>(src.shape.size());
  int64_t axis = n.attr_int("axis");
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return std::nullopt;
  int64_t start = -1, width = 0;
  for (int32_t o : n.outputs) {
    if (o < 0) return std::nullopt;
    const ir::TensorInfo& out = g.tensors[size_t(o)];
    Shape want = src.shape;
    if (!has_static_shape(out) || out.shape.size() != src.shape.size()) return std::nullopt;
    want.back() = out.shape.back();
    if (out.shape != want) return std::nullopt;
    if (o == t) start = width;
    width += out.shape.back();
  }
  if (start < 0 || width != src.shape.back()) return std::nullopt;
  return SplitColumn{n.inputs[0], start};
}

int64_t slice_split_leftovers(ir::Graph& g) {
  std::vector<int32_t> readers(g.tensors.size(), 0);
  std::unordered_set<int32_t> packed;
  for (const ir::Node& n : g.nodes) {
    for (int32_t i : n.inputs)
      if (i >= 0) ++readers[size_t(i)];
    if (n.op == "Attention" && n.attr_int("packed_qkv") == 1 && !n.inputs.empty()) packed.insert(n.inputs[0]);
  }
  for (int32_t o : g.outputs)
    if (o >= 0) ++readers[size_t(o)];
  int64_t replaced = 0;
  std::vector<ir::Node> nodes;
  nodes.reserve(g.nodes.size());
  for (ir::Node& n : g.nodes) {
    const bool candidate = n.op == "Split" && !n.inputs.empty() && packed.count(n.inputs[0]) > 0;
    size_t read = 0;
    if (candidate)
      for (int32_t o : n.outputs) read += o >= 0 && readers[size_t(o)] > 0;
    if (!candidate || read == 0 || read == n.outputs.size()) {
      nodes.push_back(std::move(n));
      continue;
    }
    // The column ranges from the outputs' inferred widths (checked as split_column does).
    const ir::TensorInfo& src = g.tensors[size_t(n.inputs[0])];
    const auto rank = static_cast<int64_t>(src.shape.size());
    int64_t axis = n.attr_int("axis");
    if (axis < 0) axis += rank;
    bool ok = has_static_shape(src) && axis == rank - 1;
    for (int32_t o : n.outputs) ok = ok && o >= 0 && has_static_shape(g.tensors[size_t(o)]);
    if (!ok) {
      nodes.push_back(std::move(n));
      continue;
    }
    const auto i64 = [&](int64_t v, const std::string& what) {
      ir::TensorInfo c{n.name + "/" + what + std::to_string(g.tensors.size()), ValueKind::kTensor, DType::kI64, true, {1}};
      c.constant = Tensor::from<int64_t>({1}, {v});
      return g.add_tensor(std::move(c));
    };
    int64_t start = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const int32_t o = n.outputs[k];
      const int64_t w = g.tensors[size_t(o)].shape.back();
      if (readers[size_t(o)] > 0)
        nodes.push_back(ir::Node{"Slice", 0, n.name + "/slice" + std::to_string(k),
                                 {n.inputs[0], i64(start, "start"), i64(start + w, "end"), i64(rank - 1, "axis")}, {o}, {}});
      start += w;
    }
    ++replaced;
  }
  g.nodes = std::move(nodes);
  return replaced;
}

}  // namespace tsr::passes::opt
