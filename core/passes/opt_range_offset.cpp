// Range(s, s + c, d) -> Add(s, [0, d, 2d, ...]) (optimize.h, part of fold_constants): an integer
// Range whose limit is its start plus a constant c, with a constant step d, has ceil(c / d)
// elements whatever s is, but shape inference sees two unknown scalars and gives it a dynamic
// length. A decode step exported from PyTorch computes its position ids that way,
// Range(past, past + 1, 1) with past = Shape(past_key)[2], and the dynamic length then spreads to
// every activation (position embedding Gather, the residual Add, every MatMul), so nothing
// downstream has a static shape: Shape -> Gather -> Concat Reshape targets are not folded, and
// fuse_attention and matmul_add do not match. As s + constant Range, the output's length is
// static and its values the same (integer adds, exact).
//
// The limit is matched as Add(s', c) (either side) with s' and s the same tensor after integer
// Casts that keep every value (to i64; i32 to i32) are skipped on both; c and d are one-element
// integer constants.
#include <optional>
#include <string>
#include <vector>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

bool int_dtype(DType d) { return d == DType::kI64 || d == DType::kI32; }

// `t` with the integer Casts that produce it skipped: those that keep every value (to i64, or
// i32 to i32), so that s + c and s differ by c after them as before.
int32_t through_int_casts(const GraphIndex& ix, const ir::Graph& g, int32_t t) {
  for (int step = 0; step < 4; ++step) {
    const int32_t p = ix.producer(t);
    if (p < 0 || ix.dead(p)) return t;
    const ir::Node& n = g.nodes[size_t(p)];
    if (n.op != "Cast" || n.inputs.empty()) return t;
    const DType from = g.tensors[size_t(n.inputs[0])].dtype;
    const int64_t to = n.attr_int("to");
    if (!int_dtype(from) || (to != 7 && !(to == 6 && from == DType::kI32))) return t;
    t = n.inputs[0];
  }
  return t;
}

// The value of a one-element integer constant.
std::optional<int64_t> int_scalar(const GraphIndex& ix, int32_t id) {
  const Tensor* c = ix.constant(id);
  if (!c || c->numel() != 1 || !int_dtype(c->dtype())) return std::nullopt;
  return c->scalar_i64(0);
}

}  // namespace

Expected<int64_t> offset_ranges(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t r) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const ir::Node& range = g.nodes[size_t(r)];
    if (range.op != "Range" || range.inputs.size() != 3 || range.outputs.size() != 1) return false;
    const int32_t start = range.inputs[0];
    const DType dt = g.tensors[size_t(start)].dtype;
    if (!int_dtype(dt) || ix.constant(start)) return false;  // constant ranges fold as they are
    const auto d = int_scalar(ix, range.inputs[2]);
    if (!d || *d == 0) return false;
    const int32_t limit = through_int_casts(ix, g, range.inputs[1]);
    const int32_t ai = ix.producer(limit);
    if (ai < 0 || ix.dead(ai) || g.nodes[size_t(ai)].op != "Add" || g.nodes[size_t(ai)].inputs.size() != 2) return false;
    const ir::Node& add = g.nodes[size_t(ai)];
    const int32_t base = through_int_casts(ix, g, start);
    for (int side = 0; side < 2; ++side) {
      const auto c = int_scalar(ix, add.inputs[size_t(side)]);
      if (!c || through_int_casts(ix, g, add.inputs[size_t(1 - side)]) != base) continue;
      // ceil(c / d) elements, none when c and d have opposite signs; bounded so that a large c
      // stays a Range (it would make a large constant).
      const int64_t n = (*c % *d == 0 || (*c > 0) != (*d > 0)) ? *c / *d : *c / *d + 1;
      if (n < 0 || n > 4096) return false;
      std::vector<int64_t> steps(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) steps[size_t(i)] = i * *d;
      ir::TensorInfo info{range.name + "/offsets", ValueKind::kTensor, dt, true, {n}};
      info.constant = dt == DType::kI64 ? Tensor::from<int64_t>({n}, steps)
                                        : Tensor::from<int32_t>({n}, std::vector<int32_t>(steps.begin(), steps.end()));
      const int32_t offsets = g.add_tensor(std::move(info));
      ir::Node& node = g.nodes[size_t(r)];
      node.op = "Add";
      node.version = 0;
      node.attributes.clear();
      node.inputs = {start, offsets};
      return true;
    }
    return false;
  });
}

}  // namespace tsr::passes::opt
