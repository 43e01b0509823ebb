// MatMul + Add -> Gemm (optimize.h): Y = X[M, K] * W[K, N] + b with a constant bias b of shape
// [N] or [1, N] becomes Gemm(X, W, b): the bias is written into Y before the product accumulates
// onto it, one pass over Y instead of two, and a following activation can then fuse into a
// FusedGemm. Only for rank-2 X (Gemm's A) with a known f32/f64 type, where the MatMul's output
// feeds nothing but the Add.
// A rank >= 3 X of static shape [batch..., M, K] (transformer linear layers on [B, S, hidden])
// becomes Reshape(X, [batch*M, K]) -> Gemm -> Reshape([batch..., M, N]): the Reshapes alias
// (no copy) and the MatMul kernel folded the batch into M already, so the product is the same
// one GEMM, with the bias pass gone.
#include <string>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

// Rank-3+ form: matches as the rank-2 one, then emits the Reshape/Gemm/Reshape in the MatMul's
// place (all three read only what the MatMul and the constant bias read, so the order stays
// topological) and drops the Add. Returns the number of rewrites.
int64_t batched_matmul_add(ir::Graph& g) {
  GraphIndex ix(g);
  struct Match {
    int32_t add, bias;
  };
  std::vector<Match> at(g.nodes.size(), Match{-1, -1});
  int64_t found = 0;
  for (size_t a = 0; a < g.nodes.size(); ++a) {
    const ir::Node& add = g.nodes[a];
    if (add.op != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const int32_t mm_out = add.inputs[size_t(side)], bias = add.inputs[size_t(1 - side)];
      const int32_t mi = ix.producer(mm_out);
      if (mi < 0 || g.nodes[size_t(mi)].op != "MatMul" || at[size_t(mi)].add >= 0) continue;
      if (ix.sole_consumer(mm_out) != static_cast<int32_t>(a)) continue;
      const ir::Node& mm = g.nodes[size_t(mi)];
      const ir::TensorInfo& x = g.tensors[size_t(mm.inputs[0])];
      const Tensor* w = ix.constant(mm.inputs[1]);
      const Tensor* b = ix.constant(bias);
      if (!w || !b || w->rank() != 2 || !has_static_shape(x) || x.shape.size() < 3) continue;
      if (x.dtype != DType::kF32 || w->dtype() != x.dtype || b->dtype() != x.dtype) continue;
      if (b->rank() != 1 || b->dim(0) != w->dim(1) || x.shape.back() != w->dim(0)) continue;
      const ir::TensorInfo& y = g.tensors[size_t(add.outputs[0])];
      if (y.dtype != x.dtype || (y.has_shape && y.shape.size() != x.shape.size())) continue;
      at[size_t(mi)] = {static_cast<int32_t>(a), bias};
      ++found;
      break;
    }
  }
  if (found == 0) return 0;
  std::vector<ir::Node> nodes;
  nodes.reserve(g.nodes.size() + size_t(found));
  std::vector<bool> drop(g.nodes.size(), false);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (at[n].add < 0) continue;
    drop[size_t(at[n].add)] = true;
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (drop[n]) continue;
    if (at[n].add < 0) {
      nodes.push_back(std::move(g.nodes[n]));
      continue;
    }
    const ir::Node& mm = g.nodes[n];
    const int32_t xin = mm.inputs[0], win = mm.inputs[1];
    const int32_t y = g.nodes[size_t(at[n].add)].outputs[0];
    const Shape xs = g.tensors[size_t(xin)].shape;
    const int64_t k = xs.back(), rows = shape_numel(xs) / (k == 0 ? 1 : k);
    const int64_t cols = g.tensors[size_t(win)].constant.dim(1);
    Shape ys(xs.begin(), xs.end() - 1);
    ys.push_back(cols);
    const std::string base = mm.name.empty() ? "matmul_add_" + std::to_string(n) : mm.name;
    auto shape_const = [&](const Shape& s, const char* what) {
      ir::TensorInfo info{base + what, ValueKind::kTensor, DType::kI64, true, {int64_t(s.size())}};
      info.constant = Tensor::from<int64_t>({int64_t(s.size())}, std::vector<int64_t>(s.begin(), s.end()));
      return g.add_tensor(std::move(info));
    };
    const int32_t s2 = shape_const({rows, k}, "/gemm_shape_in");
    const int32_t sy = shape_const(ys, "/gemm_shape_out");
    const int32_t x2 = g.add_tensor(ir::TensorInfo{base + "/gemm_in"});
    const int32_t y2 = g.add_tensor(ir::TensorInfo{base + "/gemm_out"});
    nodes.push_back(ir::Node{"Reshape", 0, base + "/reshape_in", {xin, s2}, {x2}, {}});
    nodes.push_back(ir::Node{"Gemm", 0, base, {x2, win, at[n].bias}, {y2}, {}});
    nodes.push_back(ir::Node{"Reshape", 0, base + "/reshape_out", {y2, sy}, {y}, {}});
  }
  g.nodes = std::move(nodes);
  return found;
}

}  // namespace

Expected<int64_t> matmul_add_to_gemm(ir::Model& model, int32_t graph_index) {
  const int64_t batched = batched_matmul_add(model.graphs[size_t(graph_index)]);
  TSR_ASSIGN_OR_RETURN(const int64_t flat, rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t a) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const ir::Node& add = g.nodes[size_t(a)];
    if (add.op != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
    for (int side = 0; side < 2; ++side) {
      const int32_t mm_out = add.inputs[size_t(side)], bias = add.inputs[size_t(1 - side)];
      const int32_t mi = ix.producer(mm_out);
      if (mi < 0 || ix.dead(mi) || g.nodes[size_t(mi)].op != "MatMul") continue;
      if (ix.sole_consumer(mm_out) != a) continue;
      const ir::Node& mm = g.nodes[size_t(mi)];
      const ir::TensorInfo& x = g.tensors[size_t(mm.inputs[0])];
      const Tensor* w = ix.constant(mm.inputs[1]);
      const Tensor* b = ix.constant(bias);
      if (!w || !b || w->rank() != 2 || !x.has_shape || x.shape.size() != 2) continue;
      const DType dt = w->dtype();
      if ((dt != DType::kF32 && dt != DType::kF64) || x.dtype != dt || b->dtype() != dt) continue;
      const int64_t n = w->dim(1);
      const bool bias_ok = (b->rank() == 1 && b->dim(0) == n) || (b->rank() == 2 && b->dim(0) == 1 && b->dim(1) == n);
      if (!bias_ok) continue;
      // Gemm's attributes (alpha, beta, transA, transB) are its defaults: verify_model fills them.
      ir::Node gemm{"Gemm", 0, mm.name, {mm.inputs[0], mm.inputs[1], bias}, {add.outputs[0]}, {}};
      g.nodes[size_t(mi)] = std::move(gemm);
      ix.kill(a);
      return true;
    }
    return false;
  }));
  return batched + flat;
}

}  // namespace tsr::passes::opt
