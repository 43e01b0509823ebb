// Transformer activations and norms that exporters spell out in primitive nodes (optimize.h),
// rewritten to the one op that runs as a single vectorized pass over the tensor. Without this,
// fuse_elementwise would fuse most of them into a FusedElementwise tree, which still evaluates
// erf/tanh per element through its interpreter and cannot fuse the reductions of a LayerNorm.
//
// gelu (x the shared input; Mul and Add commutative; "/ sqrt 2" also as "* (1 / sqrt 2)"):
//   S = Add(Erf(Div(x, sqrt 2)), 1)                               -> Gelu(x)
//   S = Add(Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, Pow(x, 3))))), 1)
//                                                                 -> Gelu(x, approximate="tanh")
//   with the product 0.5 * x * S in any grouping: Mul(Mul(x, 0.5), S) (HF BERT, GPT-2 gelu_new),
//   Mul(Mul(x, S), 0.5) (torch.nn.functional.gelu exported by torch 1.13), Mul(x, Mul(S, 0.5)).
// layer_norm (exports before opset 17, and hand-written LayerNorms in timm / Whisper code):
//   m = ReduceMean(x, [-1]); d = Sub(x, m); v = ReduceMean(Pow(d, 2), [-1]);
//   y = Div(d, Sqrt(Add(v, eps))) -> Mul(y, gamma) [-> Add(., beta)]
//   -> LayerNormalization(x, gamma[, beta], axis=-1, epsilon=eps); gamma/beta constant vectors
//   [x.shape[-1]].
// skip_layer_norm (onnxruntime's SkipLayerNormFusion): LayerNormalization(Add(a, b), gamma[, beta])
//   over the last axis, a and b of one static [tokens, hidden] / [batch, seq, hidden] shape ->
//   com.microsoft::SkipLayerNormalization(a, b, gamma[, beta]); where the sum feeds more nodes (a
//   pre-LN residual stream) it comes out as output 3, input_skip_bias_sum. One row pass instead
//   of an Add pass and then the norm's.
// Constants must match to 1e-6 relative; every intermediate must feed only the pattern; x f32.
#include <cmath>
#include <numbers>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

// The patterns' matchers (PatternMatcher: sole, other_than_scalar, attempt).
struct Matcher : PatternMatcher {
  // `id` = x / sqrt 2 (Div, or Mul by 1 / sqrt 2).
  bool div_sqrt2(int32_t id, int32_t x) {
    return attempt([&] { return other_than_scalar(sole(id, "Div"), std::sqrt(2.0), false) == x; }) ||
           attempt([&] { return other_than_scalar(sole(id, "Mul"), std::sqrt(0.5)) == x; });
  }
  // `id` = 0.044715 x^3 + x, times sqrt(2/pi).
  bool tanh_arg(int32_t id, int32_t x) {
    return attempt([&] {
      const int32_t sum = other_than_scalar(sole(id, "Mul"), std::sqrt(2.0 / std::numbers::pi));
      const ir::Node* add = sum >= 0 ? sole(sum, "Add") : nullptr;
      if (!add || add->inputs.size() != 2) return false;
      for (int s = 0; s < 2; ++s) {
        if (add->inputs[size_t(s)] != x) continue;
        if (attempt([&] {
              const int32_t cube = other_than_scalar(sole(add->inputs[size_t(1 - s)], "Mul"), 0.044715);
              return cube >= 0 && other_than_scalar(sole(cube, "Pow"), 3.0, false) == x;
            }))
          return true;
      }
      return false;
    });
  }
  // `id` = 1 + erf(x / sqrt 2) (*tanh false) or 1 + tanh(...) (*tanh true).
  bool one_plus(int32_t id, int32_t x, bool* tanh) {
    return attempt([&] {
      const int32_t f = other_than_scalar(sole(id, "Add"), 1.0);
      if (f < 0) return false;
      if (attempt([&] {
            const ir::Node* e = sole(f, "Erf");
            return e && e->inputs.size() == 1 && div_sqrt2(e->inputs[0], x);
          })) {
        *tanh = false;
        return true;
      }
      if (attempt([&] {
            const ir::Node* t = sole(f, "Tanh");
            return t && t->inputs.size() == 1 && tanh_arg(t->inputs[0], x);
          })) {
        *tanh = true;
        return true;
      }
      return false;
    });
  }
  // `last` = 0.5 * x * S in one of the three groupings; returns x, or -1.
  int32_t gelu_arg(const ir::Node& last, bool* tanh) {
    matched.clear();
    if (last.op != "Mul" || last.inputs.size() != 2 || last.outputs.size() != 1) return -1;
    for (int s = 0; s < 2; ++s) {
      const int32_t p = last.inputs[size_t(s)], q = last.inputs[size_t(1 - s)];
      int32_t x = -1;
      // Mul(Mul(x, 0.5), S)
      if (attempt([&] {
            x = other_than_scalar(sole(p, "Mul"), 0.5);
            return x >= 0 && one_plus(q, x, tanh);
          }))
        return x;
      // Mul(Mul(x, S), 0.5)
      if (is_scalar_constant(ix, q, 0.5) && attempt([&] {
            const ir::Node* m = sole(p, "Mul");
            if (!m || m->inputs.size() != 2) return false;
            for (int t = 0; t < 2; ++t)
              if (one_plus(m->inputs[size_t(1 - t)], m->inputs[size_t(t)], tanh)) {
                x = m->inputs[size_t(t)];
                return true;
              }
            return false;
          }))
        return x;
      // Mul(x, Mul(S, 0.5))
      if (attempt([&] {
            const int32_t sum = other_than_scalar(sole(q, "Mul"), 0.5);
            return sum >= 0 && one_plus(sum, p, tanh);
          }))
        return p;
    }
    return -1;
  }
};

// Whether `node` (a ReduceMean) averages over exactly the last axis of its rank-r input, keeping dims.
bool mean_over_last(const GraphIndex& ix, const ir::Node& node, size_t r) {
  if (node.attr_int("keepdims", 1) != 1 || r == 0) return false;
  Ints axes = node.attr_ints("axes");
  if (node.inputs.size() > 1 && node.inputs[1] >= 0) {
    const Tensor* a = ix.constant(node.inputs[1]);
    if (!a || a->numel() != 1 || !axes.empty()) return false;
    axes = {static_cast<int64_t>(a->scalar_f64(0))};
  }
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == int64_t(r) - 1);
}

// A constant vector [n] of dtype dt, usable as LayerNormalization's scale/bias over a last dim of n.
bool is_norm_vector(const GraphIndex& ix, int32_t id, int64_t n, DType dt) {
  const Tensor* c = ix.constant(id);
  return c && c->dtype() == dt && c->rank() == 1 && c->dim(0) == n;
}

}  // namespace

Expected<int64_t> recognize_gelu(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t ni) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const size_t n = size_t(ni);
    Matcher mt{{g, ix, {}}};
    bool tanh = false;
    const int32_t x = mt.gelu_arg(g.nodes[n], &tanh);
    if (x < 0) return false;
    const ir::TensorInfo& xi = g.tensors[size_t(x)];
    const ir::TensorInfo& yi = g.tensors[size_t(g.nodes[n].outputs[0])];
    // The product must not broadcast x up (a [1]-shaped 0.5 against a scalar x would).
    if (xi.dtype != DType::kF32 || !xi.has_shape || !yi.has_shape || xi.shape != yi.shape) return false;
    for (int32_t k : mt.matched) ix.kill(k);
    ir::Node& last = g.nodes[n];
    ir::Node gelu{"Gelu", 0, last.name, {x}, {last.outputs[0]}, {}};
    if (tanh) gelu.attributes.push_back(ir::Attribute::make_string("approximate", "tanh"));
    last = std::move(gelu);
    return true;
  });
}

Expected<int64_t> recognize_layer_norm(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t ni) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const size_t n = size_t(ni);
    Matcher mt{{g, ix, {}}};
    const ir::Node& div = g.nodes[n];
    if (div.op != "Div" || div.inputs.size() != 2 || div.outputs.size() != 1) return false;
    mt.matched.clear();
    // d = Sub(x, m) is read twice (by the Pow and this Div): checked by hand below.
    const int32_t d = div.inputs[0];
    const int32_t sub_i = ix.producer(d);
    if (sub_i < 0 || ix.dead(sub_i) || g.nodes[size_t(sub_i)].op != "Sub" || ix.uses(d) != 2 || ix.is_graph_output(d))
      return false;
    const ir::Node& sub = g.nodes[size_t(sub_i)];
    const int32_t x = sub.inputs[0];
    const ir::TensorInfo& xi = g.tensors[size_t(x)];
    if (xi.dtype != DType::kF32 || !has_static_shape(xi) || xi.shape.empty()) return false;
    const size_t r = xi.shape.size();
    const ir::Node* mean = mt.sole(sub.inputs[1], "ReduceMean");
    if (!mean || mean->inputs[0] != x || !mean_over_last(ix, *mean, r)) return false;
    // Sqrt(Add(ReduceMean(Pow(d, 2)), eps))
    const ir::Node* sq = mt.sole(div.inputs[1], "Sqrt");
    const ir::Node* add = sq ? mt.sole(sq->inputs[0], "Add") : nullptr;
    if (!add || add->inputs.size() != 2) return false;
    int32_t var = -1;
    double eps = 0;
    for (int s = 0; s < 2 && var < 0; ++s) {
      const Tensor* c = ix.constant(add->inputs[size_t(1 - s)]);
      if (c && c->numel() == 1 && (c->dtype() == DType::kF32 || c->dtype() == DType::kF64) && c->rank() <= int64_t(r)) {
        eps = c->scalar_f64(0);
        var = add->inputs[size_t(s)];
      }
    }
    if (var < 0 || !(eps >= 0) || !std::isfinite(eps)) return false;
    const ir::Node* vmean = mt.sole(var, "ReduceMean");
    if (!vmean || !mean_over_last(ix, *vmean, r)) return false;
    const ir::Node* pw = mt.sole(vmean->inputs[0], "Pow");
    if (!pw || pw->inputs.size() != 2 || pw->inputs[0] != d || !is_scalar_constant(ix, pw->inputs[1], 2.0)) return false;
    // Then Mul(., gamma) and optionally Add(., beta), gamma/beta constant vectors.
    const int64_t hidden = xi.shape.back();
    const int32_t mul_i = ix.sole_consumer(div.outputs[0]);
    if (mul_i < 0 || g.nodes[size_t(mul_i)].op != "Mul" || g.nodes[size_t(mul_i)].inputs.size() != 2) return false;
    const ir::Node& mul = g.nodes[size_t(mul_i)];
    const int32_t gamma = mul.inputs[0] == div.outputs[0] ? mul.inputs[1] : mul.inputs[0];
    if (!is_norm_vector(ix, gamma, hidden, xi.dtype)) return false;
    int32_t beta = -1, last = mul_i;
    const int32_t add_i = ix.sole_consumer(mul.outputs[0]);
    if (add_i >= 0 && g.nodes[size_t(add_i)].op == "Add" && g.nodes[size_t(add_i)].inputs.size() == 2) {
      const ir::Node& ab = g.nodes[size_t(add_i)];
      const int32_t b = ab.inputs[0] == mul.outputs[0] ? ab.inputs[1] : ab.inputs[0];
      if (is_norm_vector(ix, b, hidden, xi.dtype)) {
        beta = b;
        last = add_i;
      }
    }
    const int32_t y = g.nodes[size_t(last)].outputs[0];
    if (!has_static_shape(g.tensors[size_t(y)]) || g.tensors[size_t(y)].shape != xi.shape) return false;
    // Rewrite: the last node becomes the LayerNormalization; the rest go.
    for (int32_t k : mt.matched) ix.kill(k);
    ix.kill(sub_i);
    ix.kill(static_cast<int32_t>(n));
    if (last != mul_i) ix.kill(mul_i);
    ir::Node ln{"LayerNormalization", 0, g.nodes[size_t(last)].name, {x, gamma}, {y}, {}};
    if (beta >= 0) ln.inputs.push_back(beta);
    ln.attributes = {ir::Attribute::make_int("axis", -1), ir::Attribute::make_float("epsilon", eps)};
    g.nodes[size_t(last)] = std::move(ln);
    return true;
  });
}

Expected<int64_t> fuse_skip_layer_norm(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t ni) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const size_t n = size_t(ni);
    const ir::Node& ln = g.nodes[n];
    if (ln.op != "LayerNormalization" || ln.inputs.size() < 2 || ln.outputs.empty()) return false;
    bool stats_used = false;  // Mean / InvStdDev have no SkipLayerNormalization counterpart here
    for (size_t k = 1; k < ln.outputs.size(); ++k)
      stats_used |= ln.outputs[k] >= 0 && (ix.uses(ln.outputs[k]) > 0 || ix.is_graph_output(ln.outputs[k]));
    if (stats_used) return false;
    const int32_t sum = ln.inputs[0];
    const ir::TensorInfo& si = g.tensors[size_t(sum)];
    if (si.dtype != DType::kF32 || !has_static_shape(si) || si.shape.size() < 2 || si.shape.size() > 3) return false;
    const size_t r = si.shape.size();
    const int64_t axis = ln.attr_int("axis", -1);
    if (axis != -1 && axis != int64_t(r) - 1) return false;
    const int64_t hidden = si.shape.back();
    const int32_t gamma = ln.inputs[1], beta = ln.inputs.size() > 2 ? ln.inputs[2] : -1;
    const auto vec_ok = [&](int32_t id) {
      const ir::TensorInfo& t = g.tensors[size_t(id)];
      return t.dtype == si.dtype && t.has_shape && t.shape == Shape{hidden};
    };
    if (!vec_ok(gamma) || (beta >= 0 && !vec_ok(beta))) return false;
    const int32_t ai = ix.producer(sum);
    if (ai < 0 || ix.dead(ai) || g.nodes[size_t(ai)].op != "Add") return false;
    const ir::Node& add = g.nodes[size_t(ai)];
    if (add.inputs.size() != 2 || add.outputs.size() != 1) return false;
    bool same = true;
    for (int32_t in : add.inputs) same &= g.tensors[size_t(in)].has_shape && g.tensors[size_t(in)].shape == si.shape;
    if (!same) return false;
    // The fused node takes the Add's place: everything reading the sum comes after it, and the
    // norm's readers come after the norm, which came after the Add.
    const bool keep_sum = ix.uses(sum) > 1 || ix.is_graph_output(sum);
    ir::Node skip{"com.microsoft::SkipLayerNormalization", 0, ln.name, {add.inputs[0], add.inputs[1], gamma}, {}, {}};
    if (beta >= 0) skip.inputs.push_back(beta);
    skip.outputs = {ln.outputs[0]};
    if (keep_sum) skip.outputs.insert(skip.outputs.end(), {-1, -1, sum});
    skip.attributes = {ir::Attribute::make_float("epsilon", ln.attr_float("epsilon", 1e-5))};
    ix.set_producer(ln.outputs[0], ai);
    ix.kill(static_cast<int32_t>(n));
    g.nodes[size_t(ai)] = std::move(skip);
    return true;
  });
}

}  // namespace tsr::passes::opt
