// MatMul + Add -> Gemm (optimize.h): Y = X[M, K] * W[K, N] + b with a constant bias b of shape
// [N] or [1, N] becomes Gemm(X, W, b): the bias is written into Y before the product accumulates
// onto it, one pass over Y instead of two, and a following activation can then fuse into a
// FusedGemm. Only for rank-2 X (Gemm's A) with a known f32/f64 type, where the MatMul's output
// feeds nothing but the Add.
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

Expected<int64_t> matmul_add_to_gemm(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t a) -> Expected<bool> {
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
  });
}

}  // namespace tsr::passes::opt
