// fuse_attention's operand tracing (opt_fuse_attention_views.h).
#include "core/passes/opt_fuse_attention_views.h"

#include <cmath>

#include "core/passes/opt_fuse_attention_split.h"

namespace tsr::passes::opt::attention_views {

// The scalar value of a one-element f32 constant, if `id` is one.
std::optional<double> scalar_constant(const GraphIndex& ix, int32_t id) {
  const Tensor* t = ix.constant(id);
  if (!t || t->dtype() != DType::kF32 || t->numel() != 1) return std::nullopt;
  return t->scalar_f64(0);
}

const ir::TensorInfo& info(GraphIndex& ix, int32_t id) { return ix.graph().tensors[size_t(id)]; }

// A Mul/Div of `node` by a scalar constant: the other (data) input and the factor it applies.
std::optional<std::pair<int32_t, double>> scalar_scale(const GraphIndex& ix, const ir::Node& n) {
  if ((n.op != "Mul" && n.op != "Div") || n.inputs.size() != 2 || n.outputs.size() != 1) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    if (n.op == "Div" && side == 0) continue;  // c / x is no scale
    const auto c = scalar_constant(ix, n.inputs[size_t(side)]);
    if (!c || *c == 0 || !std::isfinite(*c)) continue;
    return std::make_pair(n.inputs[size_t(1 - side)], n.op == "Div" ? 1.0 / *c : *c);
  }
  return std::nullopt;
}

Chain walk_back(GraphIndex& ix, int32_t operand) {
  Chain c{{operand}, {}, {1.0}};
  int32_t t = operand;
  for (int step = 0; step < 16; ++step) {
    const int32_t p = ix.producer(t);
    if (p < 0 || ix.dead(p)) break;
    const ir::Node& n = ix.graph().nodes[size_t(p)];
    int32_t next = -1;
    double f = 1.0;
    if ((n.op == "Reshape" || n.op == "Transpose") && n.outputs.size() == 1 && !n.inputs.empty()) {
      next = n.inputs[0];
    } else if (auto s = scalar_scale(ix, n)) {
      next = s->first;
      f = s->second;
    }
    // Dynamic dims (sequence, cache lengths) pass: view_from resolves them symbolically.
    if (next < 0 || !info(ix, next).has_shape || info(ix, next).dtype != DType::kF32) break;
    (void)t;
    c.nodes.push_back(p);
    c.links.push_back(next);
    c.scales.push_back(c.scales.back() * f);
    t = next;
  }
  return c;
}

std::optional<SourceView> view_from(GraphIndex& ix, const Chain& c, size_t from) {
  const auto src = symbolized(info(ix, c.links[from]).shape);
  if (!src) return std::nullopt;
  auto start = contiguous(*src);
  if (!start) return std::nullopt;
  View v = std::move(*start);
  for (size_t i = from; i-- > 0;) {
    const ir::Node& n = ix.graph().nodes[size_t(c.nodes[i])];
    if (n.op == "Reshape") {
      const auto to = resolved_target(v, info(ix, c.links[i]).shape);
      if (!to) return std::nullopt;
      auto r = reshaped(v, *to);
      if (!r) return std::nullopt;
      v = std::move(*r);
    } else if (n.op == "Transpose") {
      const auto perm = n.attr_ints("perm");
      if (perm.size() != v.size()) return std::nullopt;
      View t(v.size());
      for (size_t d = 0; d < v.size(); ++d) {
        if (perm[d] < 0 || size_t(perm[d]) >= v.size()) return std::nullopt;
        t[d] = v[size_t(perm[d])];
      }
      v = std::move(t);
    }
  }
  return SourceView{std::move(v), *src};
}

// Whether view `v` of a logical [batch..., len, d] operand (Kt: [batch..., d, len], transposed)
// reads its source as the 3-D attention form [B, len, H * d] does: element (b, h, l, x) at
// ((b * len + l) * H + h) * d + x. len (possibly a symbol) is the view's own.
bool matches_bsd(View v, bool transposed, int64_t b, int64_t h, int64_t d, int64_t& len) {
  if (v.size() < 3) return false;
  if (transposed) std::swap(v[v.size() - 1], v[v.size() - 2]);
  len = 1;
  for (const Atom& a : v[v.size() - 2]) len *= a.size;
  Atoms batch;
  for (size_t i = 0; i + 2 < v.size(); ++i) batch.insert(batch.end(), v[i].begin(), v[i].end());
  return normalized(batch) == normalized({{b, len * h * d}, {h, d}}) &&
         normalized(v[v.size() - 2]) == normalized({{len, h * d}}) && normalized(v.back()) == normalized({{d, 1}});
}

// The farthest link of `c` whose view of the operand matches the 3-D form, preferring one already
// shaped [B, len, H*d] (no Reshape to insert).
std::optional<Source> bsd_source(GraphIndex& ix, const Chain& c, bool transposed, int64_t b, int64_t h, int64_t d) {
  std::optional<Source> best;
  for (size_t i = c.links.size(); i-- > 0;) {
    auto v = view_from(ix, c, i);
    int64_t len = 0;
    if (!v || !matches_bsd(v->view, transposed, b, h, d, len)) continue;
    const bool exact = v->source == Shape{b, len, h * d};
    // A Reshape to insert needs static dims.
    if (!exact && is_symbolic(len)) continue;
    if (!best || (exact && !best->exact)) best = Source{c.links[i], c.scales[i], i, exact, len};
  }
  return best;
}

// The head count a chain's view implies: the stride of the sequence dim over the head size.
std::optional<int64_t> implied_heads(GraphIndex& ix, const Chain& c, bool transposed, int64_t d) {
  auto sv = view_from(ix, c, c.links.size() - 1);
  if (!sv || sv->view.size() < 3) return std::nullopt;
  const View& v = sv->view;
  const Atoms s = normalized(v[transposed ? v.size() - 1 : v.size() - 2]);
  if (s.size() != 1 || s[0].stride % d != 0 || is_symbolic(s[0].stride)) return std::nullopt;
  return s[0].stride / d;
}

std::optional<Column> last_axis_slice(GraphIndex& ix, int32_t t) {
  const int32_t p = ix.producer(t);
  if (p < 0 || ix.dead(p)) return std::nullopt;
  const ir::Node& n = ix.graph().nodes[size_t(p)];
  if (n.op == "Split") {  // GPT-style exports (opt_fuse_attention_split.cpp)
    const auto c = split_column(ix, t);
    return c ? std::optional<Column>(Column{c->packed, c->start}) : std::nullopt;
  }
  const ir::TensorInfo &src = info(ix, n.inputs.empty() ? t : n.inputs[0]), &out = info(ix, t);
  if (n.op != "Slice" || n.inputs.size() < 3 || n.outputs.size() != 1 || !src.has_shape || !out.has_shape ||
      src.dtype != DType::kF32 || src.shape.empty() || out.shape.size() != src.shape.size())
    return std::nullopt;
  for (int64_t d : src.shape)
    if (d < 0 || d >= kMaxStaticDim) return std::nullopt;
  const auto rank = static_cast<int64_t>(src.shape.size());
  const auto one = [&](size_t i, int64_t absent) -> std::optional<int64_t> {
    if (i >= n.inputs.size() || n.inputs[i] < 0) return absent;
    const Tensor* c = ix.constant(n.inputs[i]);
    if (!c || c->numel() != 1 || (c->dtype() != DType::kI64 && c->dtype() != DType::kI32)) return std::nullopt;
    return c->scalar_i64(0);
  };
  const auto start = one(1, 0), axis = one(3, rank - 1), step = one(4, 1);
  if (!start || !axis || !step || *step != 1 || (*axis != rank - 1 && *axis != -1)) return std::nullopt;
  const int64_t w = src.shape.back(), first = *start < 0 ? *start + w : *start;
  Shape want = src.shape;
  want.back() = out.shape.back();
  if (first < 0 || out.shape != want || want.back() <= 0 || first + want.back() > w) return std::nullopt;
  return Column{n.inputs[0], first};
}

std::optional<Cache> kv_concat(GraphIndex& ix, int32_t t) {
  const int32_t p = ix.producer(t);
  if (p < 0 || ix.dead(p)) return std::nullopt;
  const ir::Node& n = ix.graph().nodes[size_t(p)];
  if (n.op != "Concat" || n.inputs.size() != 2 || n.outputs.size() != 1) return std::nullopt;
  const ir::TensorInfo &o = info(ix, t), &a = info(ix, n.inputs[0]), &b = info(ix, n.inputs[1]);
  // The lengths may be dynamic; the other dims are checked by the caller.
  if (!o.has_shape || o.shape.size() != 4 || !a.has_shape || !b.has_shape) return std::nullopt;
  if (a.dtype != DType::kF32 || b.dtype != DType::kF32 || a.shape.size() != 4 || b.shape.size() != 4) return std::nullopt;
  int64_t axis = n.attr_int("axis");
  if (axis < 0) axis += 4;
  if (axis != 2) return std::nullopt;
  return Cache{p, n.inputs[0], n.inputs[1]};
}

}  // namespace tsr::passes::opt::attention_views
