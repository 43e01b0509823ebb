// Conv + BatchNormalization / per-channel affine folding (optimize.h).
//
// A per-output-channel affine map after a Conv, y' = s[m] * y + t[m], is itself a Conv:
// Conv(X, W', b') with W'[m, ...] = s[m] * W[m, ...] and b'[m] = s[m] * b[m] + t[m]. It saves a
// node and a pass over the output. The maps recognized:
//   BatchNormalization (inference form): s = scale / sqrt(var + eps), t = B - s * mean
//   Mul(y, c) / Mul(c, y): s = c, t = 0        Div(y, c): s = 1 / c, t = 0
//   Add(y, c) / Add(c, y): s = 1, t = c        Sub(y, c): s = 1, t = -c
// with c a constant that is a scalar or per channel ([M, 1, ..., 1] with any leading 1s, as
// PP-OCR's learnable affine layers and exporters' unfused BNs have). Chains fold one after the
// other (Conv -> Mul -> Add). Only when W (and b) are constant f32/f64, the Conv's output feeds
// nothing but the map, and a BN has a single output (no training_mode statistics). The folded
// W'/b' are new constants (W may be shared); arithmetic is done in double.
#include <cmath>
#include <optional>
#include <vector>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = t.scalar_f64(i);
  return v;
}

Expected<Tensor> make_like(DType dt, const Shape& shape, const std::vector<double>& v) {
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(dt, shape));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DType::kF32) t.mut_data<float>()[i] = static_cast<float>(v[i]);
    else t.mut_data<double>()[i] = v[i];
  }
  return t;
}

int32_t add_constant(ir::Graph& g, const std::string& name, Tensor t) {
  ir::TensorInfo info;
  info.name = name;
  info.dtype = t.dtype();
  info.has_shape = true;
  info.shape = t.shape();
  info.constant = std::move(t);
  return g.add_tensor(std::move(info));
}

// c's values per output channel (m of them) when c broadcasts against a Conv output of rank
// `rank` as a scalar or along the channel dim only; nullopt otherwise.
std::optional<std::vector<double>> per_channel(const Tensor& c, int64_t m, int64_t rank, DType dt) {
  if (c.dtype() != dt) return std::nullopt;
  if (c.numel() == 1) return std::vector<double>(size_t(m), c.scalar_f64(0));
  const int64_t rc = c.rank();
  if (rc < rank - 1 || rc > rank) return std::nullopt;
  const int64_t ch = rc - (rank - 1);  // c's dim aligned with the output's dim 1
  for (int64_t d = 0; d < rc; ++d)
    if (c.dim(d) != (d == ch ? m : 1)) return std::nullopt;
  return as_doubles(c);
}

struct Affine {
  std::vector<double> s, t;
};

// The affine map node `n` applies to its input `y` (a Conv output with m channels), if any.
std::optional<Affine> affine_of(const ir::Node& n, int32_t y, const GraphIndex& ix, int64_t m, int64_t rank,
                                DType dt) {
  const std::vector<double> ones(size_t(m), 1.0), zeros(size_t(m), 0.0);
  if (n.op == "BatchNormalization") {
    if (n.inputs.size() != 5 || n.inputs[0] != y || n.attr_int("training_mode") != 0) return std::nullopt;
    for (size_t k = 1; k < n.outputs.size(); ++k)
      if (n.outputs[k] >= 0) return std::nullopt;
    std::vector<std::vector<double>> p;
    for (size_t k = 1; k < 5; ++k) {
      const Tensor* c = ix.constant(n.inputs[k]);
      if (!c || c->rank() != 1 || c->numel() != m || c->dtype() != dt) return std::nullopt;
      p.push_back(as_doubles(*c));
    }
    const double eps = n.attr_float("epsilon");
    Affine a{ones, zeros};
    for (size_t o = 0; o < size_t(m); ++o) {
      a.s[o] = p[0][o] / std::sqrt(p[3][o] + eps);
      a.t[o] = p[1][o] - a.s[o] * p[2][o];
    }
    return a;
  }
  const bool commutative = n.op == "Mul" || n.op == "Add";
  if ((!commutative && n.op != "Div" && n.op != "Sub") || n.inputs.size() != 2 || n.outputs.size() != 1)
    return std::nullopt;
  int32_t other = -1;
  if (n.inputs[0] == y) other = n.inputs[1];
  else if (commutative && n.inputs[1] == y) other = n.inputs[0];
  const Tensor* c = other >= 0 && other != y ? ix.constant(other) : nullptr;
  if (!c) return std::nullopt;
  std::optional<std::vector<double>> v = per_channel(*c, m, rank, dt);
  if (!v) return std::nullopt;
  if (n.op == "Mul") return Affine{*v, zeros};
  if (n.op == "Add") return Affine{ones, *v};
  if (n.op == "Sub") {
    for (double& x : *v) x = -x;
    return Affine{ones, *v};
  }
  for (double& x : *v) {
    if (x == 0) return std::nullopt;
    x = 1.0 / x;
  }
  return Affine{*v, zeros};
}

}  // namespace

Expected<int64_t> fold_conv_bn(ir::Model& model, int32_t graph_index) {
  ir::Graph& g = model.graphs[size_t(graph_index)];
  GraphIndex ix(g);
  int64_t folded = 0;
  for (size_t a_i = 0; a_i < g.nodes.size(); ++a_i) {
    if (ix.dead(static_cast<int32_t>(a_i)) || g.nodes[a_i].inputs.empty()) continue;
    const ir::Node& node = g.nodes[a_i];
    if (node.op != "BatchNormalization" && node.op != "Mul" && node.op != "Add" && node.op != "Div" &&
        node.op != "Sub")
      continue;
    // The Conv input: BN's X, or whichever side of the binary op a Conv produces.
    int32_t y = -1, conv_i = -1;
    for (size_t k = 0; k < (node.op == "BatchNormalization" ? 1 : node.inputs.size()); ++k) {
      const int32_t p = ix.producer(node.inputs[k]);
      if (p >= 0 && !ix.dead(p) && g.nodes[size_t(p)].op == "Conv") {
        y = node.inputs[k];
        conv_i = p;
        break;
      }
    }
    if (conv_i < 0 || ix.sole_consumer(y) != static_cast<int32_t>(a_i)) continue;
    const ir::Node& conv = g.nodes[size_t(conv_i)];
    const Tensor* w = ix.constant(conv.inputs[1]);
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
    const Tensor* b = has_bias ? ix.constant(conv.inputs[2]) : nullptr;
    if (!w || (has_bias && !b)) continue;
    const DType dt = w->dtype();
    if ((dt != DType::kF32 && dt != DType::kF64) || w->rank() < 3) continue;
    const int64_t m = w->dim(0);
    if (b && (b->dtype() != dt || b->numel() != m)) continue;
    // The map must not change the output's shape (a per-channel constant could broadcast it up).
    const ir::TensorInfo& yi = g.tensors[size_t(y)];
    const ir::TensorInfo& oi = g.tensors[size_t(node.outputs[0])];
    if (!yi.has_shape || !oi.has_shape || yi.shape != oi.shape || oi.dtype != dt) continue;
    const std::optional<Affine> af = affine_of(node, y, ix, m, w->rank(), dt);
    if (!af) continue;

    std::vector<double> wv = as_doubles(*w);
    std::vector<double> bv = b ? as_doubles(*b) : std::vector<double>(size_t(m), 0.0);
    const int64_t per = w->numel() / m;
    for (int64_t o = 0; o < m; ++o) {
      const double s = af->s[size_t(o)];
      for (int64_t k = 0; k < per; ++k) wv[size_t(o * per + k)] *= s;
      bv[size_t(o)] = s * bv[size_t(o)] + af->t[size_t(o)];
    }
    TSR_ASSIGN_OR_RETURN(Tensor nw, make_like(dt, w->shape(), wv));
    TSR_ASSIGN_OR_RETURN(Tensor nb, make_like(dt, {m}, bv));
    const std::string base = str_cat(conv.name.empty() ? g.tensors[size_t(conv.outputs[0])].name : conv.name, "/folded_",
                                     node.op);
    const int32_t out = node.outputs[0];
    const int32_t wid = add_constant(g, base + "_W", std::move(nw));  // may reallocate g.tensors
    const int32_t bid = add_constant(g, base + "_B", std::move(nb));
    ir::Node& c = g.nodes[size_t(conv_i)];
    c.inputs.resize(3, -1);
    c.inputs[1] = wid;
    c.inputs[2] = bid;
    c.outputs[0] = out;  // the Conv now produces the map's output directly
    ix.set_producer(out, conv_i);
    ix.kill(static_cast<int32_t>(a_i));
    ++folded;
  }
  ix.compact();
  return folded;
}

}  // namespace tsr::passes::opt
