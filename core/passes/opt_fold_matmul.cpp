// MatMul + Transpose / scalar scale -> com.microsoft::FusedMatMul (optimize.h), as onnxruntime's
// MatMulScaleFusion and MatMulTransposeFusion do. PyTorch exports spell attention-like products
// as MatMul(Q, Transpose(K, perm [.., 3, 2])) followed by Div(., sqrt(d)): the Transpose copies K
// and the Div makes one more pass over the scores. FusedMatMul reads the untransposed operand
// through sgemm's trans_a/trans_b and applies the scale as its alpha, so both go away.
// Folded, at each MatMul (f32/f64, both inputs of known rank >= 2):
//   - an input made by a Transpose whose perm swaps the last two axes only, read by nothing else
//     -> transA / transB; one whose perm is another perm p' followed by that swap, p' keeping the
//     last axis in place (K heads as [0, 2, 3, 1]) -> Transpose(p') and transA / transB;
//   - an input made by Mul(x, c) / Mul(c, x) / Div(x, c), c a scalar constant (one element, rank
//     <= x's, so the product keeps x's shape), read by nothing else -> alpha *= c (or 1 / c);
//   - the output read only by such a Mul / Div -> alpha *= c (or 1 / c).
// Runs after matmul_add, so 2-D MatMul + bias with a constant weight stays on the Gemm path; an
// already fused FusedMatMul (onnxruntime-optimized models) is extended the same way.
#include <cmath>
#include <utility>
#include <vector>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

bool is_float(DType d) { return d == DType::kF32 || d == DType::kF64; }

// The value of a one-element float constant, if `id` is one with rank <= max_rank.
bool scalar_value(const GraphIndex& ix, int32_t id, size_t max_rank, double* v) {
  const Tensor* c = ix.constant(id);
  if (!c || c->numel() != 1 || !is_float(c->dtype()) || size_t(c->rank()) > max_rank) return false;
  *v = c->scalar_f64(0);
  return std::isfinite(*v);
}

// Whether `perm` (of a rank-r Transpose; empty = reversed axes) swaps the last two axes only.
bool swaps_last_two(const Ints& perm, size_t r) {
  if (r < 2) return false;
  if (perm.empty()) return r == 2;
  if (perm.size() != r) return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (perm[i] != int64_t(i)) return false;
  return perm[r - 2] == int64_t(r - 1) && perm[r - 1] == int64_t(r - 2);
}

// The producer of `id` if it is a live `op` node whose only reader is node `reader`.
int32_t sole_producer(GraphIndex& ix, int32_t id, const char* op, int32_t reader) {
  const int32_t p = ix.producer(id);
  if (p < 0 || ix.dead(p) || ix.graph().nodes[size_t(p)].op != op) return -1;
  return ix.sole_consumer(id) == reader ? p : -1;
}

// Node n reads x where it read `in`, the output of node p (a Transpose or scalar Mul/Div of x),
// which goes: p's own reads are dropped first, so that x's use count stays exact and a further
// fold on x (Transpose(x * c)) sees n as its sole reader.
void absorb(GraphIndex& ix, int32_t n, int32_t in, int32_t p, int32_t x) {
  for (int32_t i : std::vector<int32_t>(ix.graph().nodes[size_t(p)].inputs))
    if (i >= 0) ix.replace_input(p, i, -1);
  ix.replace_input(n, in, x);
  ix.kill(p);
}

// Folds a scalar Mul/Div feeding input slot `s` of node n; returns whether it did.
bool fold_input_scale(GraphIndex& ix, int32_t n, size_t s, double* alpha) {
  ir::Graph& g = ix.graph();
  const int32_t in = g.nodes[size_t(n)].inputs[s];
  for (const char* op : {"Mul", "Div"}) {
    const int32_t p = sole_producer(ix, in, op, n);
    if (p < 0) continue;
    const ir::Node& sc = g.nodes[size_t(p)];
    if (sc.inputs.size() != 2) return false;
    for (int side = 0; side < (sc.op == "Mul" ? 2 : 1); ++side) {
      const int32_t x = sc.inputs[size_t(side)], c = sc.inputs[size_t(1 - side)];
      const ir::TensorInfo& xi = g.tensors[size_t(x)];
      double v = 0;
      if (!xi.has_shape || xi.dtype != g.tensors[size_t(in)].dtype || !scalar_value(ix, c, xi.shape.size(), &v)) continue;
      if (sc.op == "Div" && v == 0) continue;
      *alpha *= sc.op == "Mul" ? v : 1.0 / v;
      absorb(ix, n, in, p, x);
      return true;
    }
  }
  return false;
}

}  // namespace

Expected<int64_t> fold_matmul_transpose(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t n) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    ir::Node& mm = g.nodes[size_t(n)];
    const bool fused = mm.op == "com.microsoft::FusedMatMul";
    if ((mm.op != "MatMul" && !fused) || mm.inputs.size() != 2 || mm.outputs.size() != 1) return false;
    if (fused && (mm.attr_int("transBatchA") != 0 || mm.attr_int("transBatchB") != 0)) return false;
    // Both operands of rank >= 2: onnxruntime reads transA differently where B is 1-D, so a model
    // saved after this pass must not hold that combination.
    for (int32_t in : mm.inputs) {
      const ir::TensorInfo& ti = g.tensors[size_t(in)];
      if (!ti.has_shape || ti.shape.size() < 2) return false;
    }
    const int32_t out = mm.outputs[0];
    const DType dt = g.tensors[size_t(out)].dtype;
    if (!is_float(dt)) return false;
    bool trans[2] = {fused && mm.attr_int("transA") != 0, fused && mm.attr_int("transB") != 0};
    double alpha = fused ? mm.attr_float("alpha", 1.0) : 1.0;
    bool changed = false;
    for (size_t s = 0; s < 2; ++s) {
      // Scale first: Transpose(x) * c as well as Transpose(x * c) fold.
      changed |= fold_input_scale(ix, n, s, &alpha);
      const int32_t in = g.nodes[size_t(n)].inputs[s];
      const int32_t t = sole_producer(ix, in, "Transpose", n);
      if (t >= 0) {
        const ir::Node& tr = g.nodes[size_t(t)];
        const ir::TensorInfo& x = g.tensors[size_t(tr.inputs[0])];
        const Ints p = tr.attr_ints("perm");
        const size_t r = x.has_shape ? x.shape.size() : 0;
        if (x.has_shape && swaps_last_two(p, r)) {
          trans[s] = !trans[s];
          absorb(ix, n, in, t, tr.inputs[0]);
          changed = true;
          changed |= fold_input_scale(ix, n, s, &alpha);
        } else if (r >= 3 && p.size() == r && p[r - 1] != int64_t(r - 1) && p[r - 2] == int64_t(r - 1)) {
          // perm = p' then a last-two swap, where p' keeps the innermost axis innermost (K as
          // Transpose(Reshape(k), [0, 2, 3, 1]) in PyTorch attention): the Transpose becomes p',
          // which copies whole contiguous rows instead of single elements, and the swap goes
          // into the product.
          ir::Node& trm = g.nodes[size_t(t)];
          Ints q = p;
          std::swap(q[r - 1], q[r - 2]);
          trm.attributes = {ir::Attribute::make_ints("perm", std::vector<int64_t>(q.begin(), q.end()))};
          ir::TensorInfo& ti = g.tensors[size_t(in)];
          if (ti.has_shape && ti.shape.size() == r) std::swap(ti.shape[r - 1], ti.shape[r - 2]);
          if (!ti.dim_names.empty() && ti.dim_names.size() == r) std::swap(ti.dim_names[r - 1], ti.dim_names[r - 2]);
          trans[s] = !trans[s];
          changed = true;
        }
      }
    }
    // A scalar Mul/Div of the product: alpha, the fused node taking over its output.
    int32_t result = out;
    const int32_t c = ix.sole_consumer(out);
    if (c >= 0 && (g.nodes[size_t(c)].op == "Mul" || g.nodes[size_t(c)].op == "Div")) {
      const ir::Node& sc = g.nodes[size_t(c)];
      const ir::TensorInfo& oi = g.tensors[size_t(out)];
      double v = 0;
      const int sides = sc.op == "Mul" ? 2 : 1;
      for (int side = 0; side < sides && sc.inputs.size() == 2 && sc.outputs.size() == 1; ++side) {
        if (sc.inputs[size_t(side)] != out || !oi.has_shape) continue;
        if (!scalar_value(ix, sc.inputs[size_t(1 - side)], oi.shape.size(), &v) || (sc.op == "Div" && v == 0)) continue;
        if (g.tensors[size_t(sc.outputs[0])].dtype != dt) continue;
        alpha *= sc.op == "Mul" ? v : 1.0 / v;
        result = sc.outputs[0];
        ix.kill(c);
        changed = true;
        break;
      }
    }
    if (!changed) return false;
    ir::Node& node = g.nodes[size_t(n)];  // the same node: nothing was appended
    node.op = "com.microsoft::FusedMatMul";
    node.version = 1;
    node.attributes = {ir::Attribute::make_float("alpha", alpha), ir::Attribute::make_int("transA", trans[0]),
                       ir::Attribute::make_int("transB", trans[1]), ir::Attribute::make_int("transBatchA", 0),
                       ir::Attribute::make_int("transBatchB", 0)};
    if (result != out) {
      node.outputs[0] = result;
      ix.set_producer(result, n);
    }
    return true;
  });
}

}  // namespace tsr::passes::opt
