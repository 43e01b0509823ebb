// Shared by the optimization passes (core/passes/opt_*.cpp): the per-graph pass signature and a
// use/producer index over one graph. Private to core/passes.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/ir/graph.h"
#include "core/passes/optimize.h"

namespace tsr::passes::opt {

// Who produces and who reads each tensor of one graph. Node indices refer to graph.nodes at the
// time of construction; passes that delete nodes mark them in `dead` and call compact() at the
// end, so indices stay valid while a pass runs.
class GraphIndex {
 public:
  explicit GraphIndex(ir::Graph& g);

  ir::Graph& graph() { return g_; }
  // Node producing tensor `id`, or -1 (graph input, constant or unknown).
  int32_t producer(int32_t id) const { return id >= 0 && size_t(id) < producer_.size() ? producer_[size_t(id)] : -1; }
  // Number of reads: node inputs plus graph outputs.
  int32_t uses(int32_t id) const { return id >= 0 && size_t(id) < uses_.size() ? uses_[size_t(id)] : 0; }
  bool is_graph_output(int32_t id) const;
  // The only live node reading `id` (which must not be a graph output), or -1. Reads edited
  // through replace_input are seen; a pass that rewires inputs by hand must not ask afterwards.
  int32_t sole_consumer(int32_t id) const;
  // The constant value of tensor `id`, or null.
  const Tensor* constant(int32_t id) const;

  // Records that node `n` now produces tensor `id` (a node that took over another's output).
  void set_producer(int32_t id, int32_t n) { producer_[size_t(id)] = n; }
  // Removes node `n` (its outputs must be unused by the end of the pass).
  void kill(int32_t n) { dead_[size_t(n)] = true; }
  bool dead(int32_t n) const { return dead_[size_t(n)]; }
  // Makes `node` read `to` wherever it read `from`, keeping the use counts right.
  void replace_input(int32_t node, int32_t from, int32_t to);
  // Drops the killed nodes from the graph; returns how many.
  int64_t compact();

 private:
  ir::Graph& g_;
  std::vector<int32_t> producer_, uses_;
  // Sum of the indices of the nodes reading each tensor (once per read): with one use, it is
  // the reader, so sole_consumer is O(1) and a pass over the graph stays linear.
  std::vector<int64_t> reader_sum_;
  std::vector<bool> dead_;
  std::vector<bool> graph_output_;
};

// Known rank and every dim known (>= 0).
inline bool has_static_shape(const ir::TensorInfo& t) {
  if (!t.has_shape) return false;
  for (int64_t d : t.shape)
    if (d < 0) return false;
  return true;
}

// Whether tensor `id` is a constant f32/f64 scalar equal to `v` (to 1e-6 relative): the
// constants of spelled-out ops (HardSwish's 3 and 6, GELU's sqrt 2, LayerNorm's 2).
bool is_scalar_constant(const GraphIndex& ix, int32_t id, double v);

// Node matching for the passes that recognise spelled-out ops (hardswish, gelu, layer_norm):
// walks producers backwards from a pattern's last node; `matched` collects the intermediate nodes
// to remove when the whole pattern matched.
struct PatternMatcher {
  ir::Graph& g;
  GraphIndex& ix;
  std::vector<int32_t> matched;

  // The node producing `id`, if it is `op`, alive, has one output, and `id` feeds nothing else
  // (recorded in `matched`); else null.
  const ir::Node* sole(int32_t id, const char* op);
  // For a binary `n`: its other input where one input is the scalar `v` (the second only, unless
  // `commutative`), or -1.
  int32_t other_than_scalar(const ir::Node* n, double v, bool commutative = true);
  // Runs `f` and undoes the matches it recorded when it fails.
  template <typename F>
  bool attempt(F f) {
    const size_t mark = matched.size();
    if (f()) return true;
    matched.resize(mark);
    return false;
  }
};

// A pass over one graph; returns the number of rewrites.
using GraphPass = std::function<Expected<int64_t>(ir::Model& model, int32_t graph_index)>;

// One pattern match at node `n` of ix.graph(): whether it rewrote there. It may edit nodes, kill
// them through `ix` (never revive them) and mark new producers; an error ends the pass.
using NodeRewrite = std::function<Expected<bool>(GraphIndex& ix, int32_t n)>;
// The loop shared by the pattern passes: offers each live node of the graph, in order, to
// `rewrite`, then drops the killed nodes. Returns the number of rewrites.
Expected<int64_t> rewrite_nodes(ir::Model& model, int32_t graph_index, const NodeRewrite& rewrite);

Expected<int64_t> fold_constants(ir::Model& model, int32_t graph_index, const NodeEvaluator& evaluate);
// Range(s, s + c, d) with constant c, d -> Add(s, constant offsets): a static length where
// inference saw a dynamic one (opt_range_offset.cpp; run by the fold_constants step, before it).
Expected<int64_t> offset_ranges(ir::Model& model, int32_t graph_index);
Expected<int64_t> fold_pad(ir::Model& model, int32_t graph_index);
Expected<int64_t> pool_before_conv(ir::Model& model, int32_t graph_index);
Expected<int64_t> quantize_fusion(ir::Model& model, int32_t graph_index);
// quantize_fusion's ConvInteger pattern (opt_quantize_conv.cpp): one node at `at`.
Expected<bool> fuse_dynamic_conv(GraphIndex& ix, int32_t at);
Expected<int64_t> fuse_attention(ir::Model& model, int32_t graph_index);

Expected<int64_t> fold_conv_bn(ir::Model& model, int32_t graph_index);
Expected<int64_t> concat_affine(ir::Model& model, int32_t graph_index);
Expected<int64_t> recognize_hardswish(ir::Model& model, int32_t graph_index);
Expected<int64_t> matmul_add_to_gemm(ir::Model& model, int32_t graph_index);
Expected<int64_t> fold_matmul_transpose(ir::Model& model, int32_t graph_index);
Expected<int64_t> recognize_gelu(ir::Model& model, int32_t graph_index);
Expected<int64_t> recognize_layer_norm(ir::Model& model, int32_t graph_index);
Expected<int64_t> fuse_skip_layer_norm(ir::Model& model, int32_t graph_index);
Expected<int64_t> fuse_residual(ir::Model& model, int32_t graph_index);
Expected<int64_t> fuse_activation(ir::Model& model, int32_t graph_index);
Expected<int64_t> fuse_separable(ir::Model& model, int32_t graph_index);
Expected<int64_t> fuse_squeeze_excite(ir::Model& model, int32_t graph_index);
Expected<int64_t> fold_softmax_wrapper(ir::Model& model, int32_t graph_index);
Expected<int64_t> fuse_elementwise(ir::Model& model, int32_t graph_index);
Expected<int64_t> quantize_lookup(ir::Model& model, int32_t graph_index, const NodeEvaluator& evaluate);
Expected<int64_t> quantize_layout(ir::Model& model, int32_t graph_index);
Expected<int64_t> eliminate_common_subexpressions(ir::Model& model, int32_t graph_index);
Expected<int64_t> eliminate_dead_code(ir::Model& model, int32_t graph_index);

}  // namespace tsr::passes::opt
