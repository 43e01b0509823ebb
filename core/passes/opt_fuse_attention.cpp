// Attention written with plain ops -> one ONNX Attention node (optimize.h, fuse_attention).
//
// Exporters (torch.onnx at opset 17, hand-written decoders) spell scaled dot-product attention as
//   scores = MatMul(Q, Kt)  [* c | / c]...  [+ mask | Where(cond, ., fill)]
//   probs  = Softmax(scores, axis = last);  O = MatMul(probs, V)
// with Q, Kt, V reached from the projections through Reshape / Transpose (and scalar Mul / Div:
// Whisper scales q_proj's output, some exports scale Q and K by Dh^-0.25 each), and O turned back
// into [B, S, hidden] by Transpose / Reshape. Run as is, that materializes [B, H, S, T] twice
// (scores, probs): 36 MB per layer for Whisper's encoder (6 heads, T = 1500). The fused Attention
// kernel (backends/cpu/kernels/attention.cpp) tiles over keys with an online softmax instead.
//
// Layouts are proven, not guessed: each operand is tracked as a strided view of the tensor its
// Reshape/Transpose chain starts from (a list of (size, stride) atoms per dim, split and merged
// as Reshape regroups them), and the pass uses the opset-23 3-D form ([B, S, H*Dh], q_num_heads)
// only when every element of Q, K, V and of the output lands where that form puts it; the
// Transposes and Reshapes then disappear. Otherwise the 4-D form takes the MatMul operands as
// they are (plus one Transpose of Kt). Self-attention whose Q, K, V are the column thirds of one
// QKV projection (Slices of its last axis: torch nn.MultiheadAttention, ViT; or the outputs of one
// Split of it: GPT) gets Tessera's packed_qkv form instead: that tensor as all three inputs, read
// in place, and the Slices go (a Split still read elsewhere becomes Slices of what is read). A
// KV cache Concat(past, new, axis 2) on both K and V becomes the node's past_key/past_value inputs
// and present outputs.
//
// Masks: a float tensor added to the scaled scores becomes attn_mask; Where(cond, scores, fill)
// with a constant cond becomes is_causal when cond is exactly the causal pattern the node applies
// (key j visible from query i iff j <= i + past), nothing when cond is all true, else a bool
// attn_mask when every query row sees some key and fill is <= -1e30 (then the masked
// probabilities are 0 in both). Non-constant cond needs fill = -inf.
//
// A Where whose cond is computed as LessOrEqual(Range(0, P + a), P + b) with a - 1 <= b (a decode
// step's causal mask, one query row after the whole cache) is provably all true and vanishes.
//
// Only f32, softmax over the last axis, and scores / probs (and every other intermediate of the
// pattern) read by nothing else. Batch and head dims must be static; the sequence lengths S and T
// may be dynamic where the shapes let the views carry them as symbols (a Reshape with at most one
// unknown dim). Anything else is left as it is.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>

#include "core/ir/topo.h"
#include "core/passes/opt_fuse_attention_split.h"
#include "core/passes/opt_fuse_attention_views.h"
#include "core/passes/optimize_internal.h"
#include "core/passes/strided_view.h"

namespace tsr::passes::opt {

namespace {

using namespace attention_views;  // NOLINT: the pattern's operand tracing, private to this pass

// What the matched pattern's mask becomes.
struct Mask {
  int32_t tensor = -1;  // attn_mask input, or -1
  bool causal = false;
  int32_t node = -1;    // the Add / Where node
};

// Classifies a constant bool cond [..., S, T] (leading dims 1): 0 all true, 1 causal with key j
// visible from query i iff j <= i + (T - S), 2 another pattern with a visible key in every row,
// -1 a row with none visible.
int classify_cond(const Tensor& cond, int64_t s, int64_t t) {
  if (cond.numel() != s * t || cond.rank() < 2 || cond.dim(cond.rank() - 1) != t || cond.dim(cond.rank() - 2) != s)
    return -1;
  const bool* c = cond.data<bool>();
  bool all = true, causal = true;
  for (int64_t i = 0; i < s; ++i) {
    bool any = false;
    for (int64_t j = 0; j < t; ++j) {
      const bool v = c[i * t + j];
      any |= v;
      all &= v;
      causal &= v == (j <= i + (t - s));
    }
    if (!any) return -1;
  }
  return all ? 0 : causal ? 1 : 2;
}

class Fuser {
 public:
  using Attribute_list = std::vector<ir::Attribute>;

  explicit Fuser(GraphIndex& ix) : ix_(ix), g_(ix.graph()) {}

  Expected<bool> at(int32_t sm_index) {
    const ir::Node& sm = g_.nodes[size_t(sm_index)];
    if (sm.op != "Softmax" || sm.inputs.size() != 1 || sm.outputs.size() != 1) return false;
    const ir::TensorInfo& sc = info(ix_, sm.inputs[0]);
    if (!sc.has_shape || sc.dtype != DType::kF32 || (sc.shape.size() != 3 && sc.shape.size() != 4)) return false;
    const auto rank = static_cast<int64_t>(sc.shape.size());
    int64_t axis = sm.attr_int("axis", -1);
    if (axis < 0) axis += rank;
    if (axis != rank - 1) return false;
    // probs -> MatMul(probs, V)
    const int32_t mm2 = ix_.sole_consumer(sm.outputs[0]);
    if (mm2 < 0 || g_.nodes[size_t(mm2)].op != "MatMul" || g_.nodes[size_t(mm2)].inputs[0] != sm.outputs[0]) return false;
    // Back from the softmax input: [Add mask | Where] then scalar Mul/Div, to MatMul(Q, Kt).
    std::vector<int32_t> core = {sm_index, mm2};
    double scale = 1.0;
    Mask mask;
    int32_t t = sm.inputs[0];
    int32_t mm1 = -1;
    for (int step = 0; step < 8 && mm1 < 0; ++step) {
      const int32_t p = ix_.producer(t);
      if (p < 0 || ix_.dead(p) || ix_.sole_consumer(t) < 0) return false;
      const ir::Node& n = g_.nodes[size_t(p)];
      core.push_back(p);
      if (n.op == "MatMul") {
        mm1 = p;
      } else if (auto s = scalar_scale(ix_, n)) {
        scale *= s->second;
        t = s->first;
      } else if (mask.node < 0 && scale == 1.0 && (n.op == "Add" || n.op == "Where")) {
        // Only before any scale: a scale after the mask would scale the mask too.
        mask.node = p;
        t = n.op == "Add" ? pick_add_scores(n) : (n.inputs.size() == 3 ? n.inputs[1] : -1);
        // The mask must not broadcast the scores to a larger shape.
        if (t < 0 || info(ix_, t).shape != info(ix_, n.outputs[0]).shape) return false;
      } else {
        return false;
      }
    }
    if (mm1 < 0) return false;
    const ir::Node& m1 = g_.nodes[size_t(mm1)];
    const ir::Node& m2 = g_.nodes[size_t(mm2)];
    const int32_t q_op = m1.inputs[0], kt_op = m1.inputs[1], v_op = m2.inputs[1], o = m2.outputs[0];
    const ir::TensorInfo &qi = info(ix_, q_op), &ki = info(ix_, kt_op), &vi = info(ix_, v_op), &oi = info(ix_, o);
    for (const ir::TensorInfo* x : {&qi, &ki, &vi, &oi})
      if (!x->has_shape || x->dtype != DType::kF32 || x->shape.size() != size_t(rank)) return false;
    // Static but for the lengths S (Q, O, scores) and T (K, V, scores): views track those as
    // symbols; head sizes and batch dims must be known.
    const auto r2 = size_t(rank - 2), r1 = size_t(rank - 1);
    for (const ir::TensorInfo* x : {&qi, &ki, &vi, &oi, &sc})
      for (size_t d = 0; d < size_t(rank); ++d) {
        const bool may_vary = x == &sc ? d >= r2 : (x == &ki ? d == r1 : d == r2);
        if ((x->shape[d] < 0 && !may_vary) || x->shape[d] >= kMaxStaticDim) return false;
      }
    // Equal batch dims everywhere (no MatMul broadcasting).
    for (int64_t d = 0; d + 2 < rank; ++d)
      for (const ir::TensorInfo* x : {&qi, &ki, &vi, &oi})
        if (x->shape[size_t(d)] != sc.shape[size_t(d)]) return false;
    s_ = qi.shape[size_t(rank - 2)];
    dh_ = qi.shape[size_t(rank - 1)];
    t_ = ki.shape[size_t(rank - 1)];
    dv_ = vi.shape[size_t(rank - 1)];
    if (ki.shape[size_t(rank - 2)] != dh_ || vi.shape[size_t(rank - 2)] != t_ || dh_ < 2 || dv_ < 2) return false;
    rank_ = rank;
    n_ = 1;
    for (int64_t d = 0; d + 2 < rank; ++d) n_ *= sc.shape[size_t(d)];
    if (n_ <= 0 || s_ == 0 || t_ == 0) return false;
    for (int64_t d = 0; d + 2 < rank; ++d)
      if (sc.shape[size_t(d)] < 0) return false;
    scale_ = scale;
    core_ = core;

    if (mask.node >= 0 && !classify_mask(mask)) return false;
    mask_ = mask;
    return try_bsd(q_op, kt_op, v_op, o) || (s_ > 0 && t_ > 0 && rewrite_bnsh(q_op, kt_op, v_op, o));
  }

  std::vector<ir::Node> take_new_nodes() { return std::move(new_nodes_); }

 private:
  // The scores side of Add(scores, mask) / Add(mask, scores): the side produced by the pattern
  // (a MatMul or scalar scale), the other must be an f32 tensor.
  int32_t pick_add_scores(const ir::Node& add) {
    if (add.inputs.size() != 2) return -1;
    for (int side = 0; side < 2; ++side) {
      // The side that reaches a MatMul through scalar scales (a mask may itself be scaled:
      // BERT's (1 - mask) * -10000).
      int32_t t = add.inputs[size_t(side)];
      for (int step = 0; step < 6; ++step) {
        const int32_t p = ix_.producer(t);
        if (p < 0 || ix_.dead(p)) break;
        const ir::Node& n = g_.nodes[size_t(p)];
        if (n.op == "MatMul") return add.inputs[size_t(side)];
        const auto s = scalar_scale(ix_, n);
        if (!s) break;
        t = s->first;
      }
    }
    return -1;
  }

  // Checks the mask node (set up by at()) and fills mask.tensor / mask.causal. The scores'
  // shape is [batch..., S, T] with rank_ dims.
  bool classify_mask(Mask& m) {
    const ir::Node& n = g_.nodes[size_t(m.node)];
    if (n.op == "Add") {
      const int32_t scores_side = pick_add_scores(n);
      const int32_t other = n.inputs[0] == scores_side ? n.inputs[1] : n.inputs[0];
      const ir::TensorInfo& mi = info(ix_, other);
      if (mi.dtype != DType::kF32 || !mi.has_shape || mi.shape.size() < 2 || mi.shape.size() > size_t(rank_)) return false;
      // With merged heads ([N, S, T] scores) a mask must not vary over N.
      if (rank_ == 3 && mi.shape.size() == 3 && mi.shape[0] != 1) return false;
      m.tensor = other;
      return true;
    }
    // Where(cond, scores, fill)
    if (n.inputs.size() != 3) return false;
    const auto fill = scalar_constant(ix_, n.inputs[2]);
    if (!fill) return false;
    const ir::TensorInfo& ci = info(ix_, n.inputs[0]);
    if (ci.dtype != DType::kBool || !ci.has_shape || ci.shape.size() < 2 || ci.shape.size() > size_t(rank_)) return false;
    if (rank_ == 3 && ci.shape.size() == 3 && ci.shape[0] != 1) return false;
    const bool neg_inf = std::isinf(*fill) && *fill < 0;
    const Tensor* cond = ix_.constant(n.inputs[0]);
    if (!cond && cond_all_true(n.inputs[0])) return true;  // nothing masked
    if (!cond) {
      if (!neg_inf) return false;
      m.tensor = n.inputs[0];
      return true;
    }
    switch (classify_cond(*cond, s_, t_)) {
      case 0: return true;  // nothing masked
      case 1:
        m.causal = true;  // checked against the node's own alignment when the form is known
        m.tensor = n.inputs[0];
        return true;
      case 2:
        if (!neg_inf && *fill > -1e30) return false;
        m.tensor = n.inputs[0];
        return true;
      default: return false;
    }
  }

  // The producer of `t` with Unsqueeze (constant axes: size-1 dims) and integer Casts skipped,
  // and the tensor it produces.
  std::pair<int32_t, const ir::Node*> through_unsqueeze(int32_t t) const {
    for (int step = 0; step < 6; ++step) {
      const int32_t p = ix_.producer(t);
      if (p < 0 || ix_.dead(p)) return {t, nullptr};
      const ir::Node& n = g_.nodes[size_t(p)];
      const bool int_cast = n.op == "Cast" && (n.attr_int("to") == 6 || n.attr_int("to") == 7) &&
                            (g_.tensors[size_t(n.inputs[0])].dtype == DType::kI64 ||
                             g_.tensors[size_t(n.inputs[0])].dtype == DType::kI32);
      if (n.op != "Unsqueeze" && !int_cast) return {t, &n};
      t = n.inputs[0];
    }
    return {t, nullptr};
  }

  // `t` as G + a for an integer tensor G and a constant a (G alone: a = 0), through integer Casts.
  std::optional<std::pair<int32_t, int64_t>> offset_of(int32_t t) const {
    const auto [x, n] = through_unsqueeze(t);
    if (n && n->op == "Add" && n->inputs.size() == 2)
      for (int side = 0; side < 2; ++side) {
        const Tensor* c = ix_.constant(n->inputs[size_t(side)]);
        if (!c || c->numel() < 1 || (c->dtype() != DType::kI64 && c->dtype() != DType::kI32)) continue;
        int64_t lo = c->scalar_i64(0);
        for (int64_t i = 1; i < c->numel(); ++i) lo = std::min(lo, c->scalar_i64(i));
        return std::make_pair(through_unsqueeze(n->inputs[size_t(1 - side)]).first, lo);
      }
    return std::make_pair(x, int64_t{0});
  }

  // Whether a computed bool cond is provably all true: LessOrEqual(Range(0, G + a, 1), G + b)
  // (or GreaterOrEqual with the sides swapped), Unsqueezed to any rank, with the same G on both
  // sides and a - 1 <= min(b). The largest key index, G + a - 1, then never exceeds the smallest
  // limit: the causal mask of a decode step (one query row after the whole cache).
  bool cond_all_true(int32_t cond) const {
    const auto [c, cmp] = through_unsqueeze(cond);
    if (!cmp || cmp->inputs.size() != 2 || (cmp->op != "LessOrEqual" && cmp->op != "GreaterOrEqual")) return false;
    const int32_t keys = cmp->op == "LessOrEqual" ? cmp->inputs[0] : cmp->inputs[1];
    const int32_t limit = cmp->op == "LessOrEqual" ? cmp->inputs[1] : cmp->inputs[0];
    const auto [r, range] = through_unsqueeze(keys);
    if (!range || range->op != "Range" || range->inputs.size() != 3) return false;
    const Tensor *start = ix_.constant(range->inputs[0]), *delta = ix_.constant(range->inputs[2]);
    if (!start || !delta || start->numel() != 1 || delta->numel() != 1 || start->scalar_i64(0) != 0 ||
        delta->scalar_i64(0) != 1 || start->dtype() == DType::kF32 || delta->dtype() == DType::kF32)
      return false;
    const auto end = offset_of(range->inputs[1]), lim = offset_of(limit);
    if (!end || !lim || end->first != lim->first) return false;
    const DType dt = g_.tensors[size_t(end->first)].dtype;
    return (dt == DType::kI64 || dt == DType::kI32) && end->second - 1 <= lim->second;
  }

  int32_t new_tensor(const std::string& what, DType dt, Shape shape, Tensor constant = {}) {
    ir::TensorInfo t;
    t.name = "fuse_attention/" + what + "/" + std::to_string(g_.tensors.size());
    t.dtype = dt;
    t.has_shape = true;
    t.shape = std::move(shape);
    t.constant = std::move(constant);
    return g_.add_tensor(std::move(t));
  }

  // A Reshape of `x` to `shape`, appended to the new nodes; returns its output (x itself when it
  // already has that shape).
  int32_t reshape_to(int32_t x, const Shape& shape) {
    if (info(ix_, x).shape == shape) return x;
    const int32_t c = new_tensor("shape", DType::kI64, {static_cast<int64_t>(shape.size())},
                                 Tensor::from<int64_t>({static_cast<int64_t>(shape.size())},
                                                       std::vector<int64_t>(shape.begin(), shape.end())));
    const int32_t y = new_tensor("reshape", DType::kF32, shape);
    new_nodes_.push_back({"Reshape", 0, g_.tensors[size_t(x)].name + "/fuse_attention_reshape", {x, c}, {y}, {}});
    return y;
  }

  // The output side in the 3-D form: the farthest tensor reached from O through Reshape /
  // Transpose nodes (each the sole reader) whose flat order is Y's [B, S, H*Dv]; the nodes passed.
  // Z's shape in the symbols of O's: `exact` when it is Y's [B, S, H*Dv] (no Reshape after the node).
  struct Output {
    int32_t z;
    std::vector<int32_t> passed;
    bool exact;
  };
  std::optional<Output> bsd_output(int32_t o, int64_t b, int64_t h) {
    const auto os = symbolized(info(ix_, o).shape);
    if (!os) return std::nullopt;
    auto start = contiguous(*os);
    if (!start) return std::nullopt;
    View v = std::move(*start);
    const int64_t s = (*os)[os->size() - 2];
    const Atoms want = normalized({{b, h * s * dv_}, {s, dv_}, {h, s * dv_}, {dv_, 1}});
    std::optional<Output> best;
    std::vector<int32_t> passed;
    int32_t t = o;
    Shape shape = *os;
    for (int step = 0; step < 8; ++step) {
      Atoms flat;
      for (const Atoms& d : v) flat.insert(flat.end(), d.begin(), d.end());
      const bool exact = shape == Shape{b, s, h * dv_};
      // A Reshape to Z needs Z static.
      if (normalized(flat) == want && (exact || has_static_shape(info(ix_, t)))) best = Output{t, passed, exact};
      const int32_t c = ix_.sole_consumer(t);
      if (c < 0) break;
      const ir::Node& n = g_.nodes[size_t(c)];
      if ((n.op != "Reshape" && n.op != "Transpose") || n.inputs[0] != t || n.outputs.size() != 1) break;
      const int32_t next = n.outputs[0];
      if (!info(ix_, next).has_shape) break;
      if (n.op == "Reshape") {
        const auto to = resolved_target(v, info(ix_, next).shape);
        if (!to) break;
        auto r = reshaped(v, *to);
        if (!r) break;
        v = std::move(*r);
        shape = *to;
      } else {
        const auto perm = n.attr_ints("perm");
        if (perm.size() != v.size()) break;
        View tv(v.size());
        Shape ts(v.size());
        for (size_t d = 0; d < v.size(); ++d) {
          if (perm[d] < 0 || size_t(perm[d]) >= v.size()) return best;
          tv[d] = v[size_t(perm[d])];
          ts[d] = shape[size_t(perm[d])];
        }
        v = std::move(tv);
        shape = std::move(ts);
      }
      passed.push_back(c);
      t = next;
    }
    return best;
  }

  // Whether chain `c` (operand <- ... <- source) is only Transposes and scalar scales whose
  // composition, source to operand, is the permutation `want` (shapes may be dynamic).
  bool transposes_to(const Chain& c, std::vector<int64_t> want) const {
    std::vector<int64_t> p = {0, 1, 2, 3};  // operand dim d reads source dim p[d]
    for (int32_t n : c.nodes) {
      const ir::Node& node = g_.nodes[size_t(n)];
      if (node.op == "Reshape") return false;
      if (node.op != "Transpose") continue;
      const auto perm = node.attr_ints("perm");
      if (perm.size() != 4) return false;
      std::vector<int64_t> q(4);
      for (size_t d = 0; d < 4; ++d) {
        if (perm[d] < 0 || perm[d] > 3) return false;
        q[d] = perm[size_t(p[d])];
      }
      p = q;
    }
    return p == want;
  }

  // The causal pattern found by classify_mask holds for the node iff its alignment matches:
  // key j visible from query i iff j <= i + past (past 0 without a cache).
  void settle_causal(Mask& m, int64_t past) const {
    if (m.causal && (past < 0 || s_ < 0 || t_ < 0 || past != t_ - s_)) m.causal = false;  // keep cond as a bool attn_mask instead
    if (m.causal) m.tensor = -1;
  }

  Attribute_list base_attrs(double scale, bool causal) const {
    Attribute_list a = {ir::Attribute::make_float("scale", scale)};
    if (causal) a.push_back(ir::Attribute::make_int("is_causal", 1));
    return a;
  }

  // Removes the matched core nodes and the Reshape/Transpose/scale chains left without readers.
  void release(int32_t n) {
    ir::Node& node = g_.nodes[size_t(n)];
    const std::vector<int32_t> ins = node.inputs;
    for (int32_t i : ins)
      if (i >= 0) ix_.replace_input(n, i, -1);
    ix_.kill(n);
    for (int32_t i : ins) release_if_unused(i);
  }
  void release_if_unused(int32_t t) {
    if (t < 0 || ix_.uses(t) != 0 || ix_.is_graph_output(t) || read_by_new_.count(t)) return;
    const int32_t p = ix_.producer(t);
    if (p < 0 || ix_.dead(p)) return;
    const ir::Node& n = g_.nodes[size_t(p)];
    if (n.outputs.size() != 1) return;
    if (n.op == "Reshape" || n.op == "Transpose" || n.op == "Slice" || scalar_scale(ix_, n)) release(p);
  }

  void finish(ir::Node attention, int32_t out_tensor, const std::vector<int32_t>& out_chain) {
    for (int32_t n : out_chain) core_.push_back(n);
    attention.name = g_.nodes[size_t(core_[0])].name + "/fused_attention";
    attention.outputs[0] = out_tensor;
    new_nodes_.push_back(std::move(attention));
    for (const ir::Node& n : new_nodes_)
      for (int32_t i : n.inputs) read_by_new_.insert(i);
    // The node outputs now produced by the new node must not keep their old producers.
    for (int32_t n : core_) g_.nodes[size_t(n)].outputs.assign(g_.nodes[size_t(n)].outputs.size(), -1);
    for (int32_t n : core_)
      if (!ix_.dead(n)) release(n);
  }

  // The 3-D form, with the KV cache when both K and V come from Concat(past, new, axis 2).
  bool try_bsd(int32_t q_op, int32_t kt_op, int32_t v_op, int32_t o) {
    const Chain qc = walk_back(ix_, q_op), kc = walk_back(ix_, kt_op), vc = walk_back(ix_, v_op);
    // Candidate (B, H): the batch dims of 4-D operands, else the head count the layouts imply.
    std::vector<std::pair<int64_t, int64_t>> cands;
    const ir::TensorInfo& qi = info(ix_, q_op);
    if (rank_ == 4) cands.push_back({qi.shape[0], qi.shape[1]});
    for (auto h : {implied_heads(ix_, qc, false, dh_), implied_heads(ix_, kc, true, dh_)})
      if (h && *h > 0 && n_ % *h == 0) cands.push_back({n_ / *h, *h});
    cands.push_back({1, n_});
    for (const auto& cand : cands) {
      // Plain copies, not structured bindings: the lambdas below capture them, which clang 14
      // (the wasm and sanitizer builds) rejects for bindings.
      const int64_t b = cand.first, h = cand.second;
      if (rank_ == 4 && (b != qi.shape[0] || h != qi.shape[1])) continue;
      const auto q = bsd_source(ix_, qc, false, b, h, dh_);
      if (!q) continue;
      const auto out = bsd_output(o, b, h);
      if (!out || (!out->exact && s_ < 0)) continue;
      // K and V: plain chains, or both through a KV-cache Concat.
      std::optional<Source> k, v;
      std::optional<Cache> kcache, vcache;
      const int32_t k_end = kc.links.back(), v_end = vc.links.back();
      kcache = kv_concat(ix_, k_end);
      vcache = kv_concat(ix_, v_end);
      int64_t past = 0;
      if (kcache && vcache) {
        // The chains must read the concatenated caches exactly as K^T and V: [B, H, T, d].
        const auto kview = view_from(ix_, kc, kc.links.size() - 1), vview = view_from(ix_, vc, vc.links.size() - 1);
        const auto canon = [&](const std::optional<SourceView>& view, bool tr, int64_t d) {
          if (!view) return false;
          View w = view->view;
          if (tr) std::swap(w[w.size() - 1], w[w.size() - 2]);
          Atoms flat;
          for (const Atoms& x : w) flat.insert(flat.end(), x.begin(), x.end());
          return normalized(flat) == normalized({{b * h * t_ * d, 1}});
        };
        const Shape pk = info(ix_, kcache->past).shape, pv = info(ix_, vcache->past).shape;
        past = pk[2];
        const int64_t l = info(ix_, kcache->fresh).shape[2];
        const bool reads_cache = t_ > 0 ? canon(kview, true, dh_) && canon(vview, false, dv_)
                                        : transposes_to(kc, {0, 1, 3, 2}) && transposes_to(vc, {0, 1, 2, 3});
        if (reads_cache && (t_ < 0 || past < 0 || t_ == past + l) && pk == Shape{b, h, past, dh_} &&
            pv == Shape{b, h, past, dv_} && info(ix_, kcache->fresh).shape == Shape{b, h, l, dh_} &&
            info(ix_, vcache->fresh).shape == Shape{b, h, l, dv_}) {
          const Chain kn = walk_back(ix_, kcache->fresh), vn = walk_back(ix_, vcache->fresh);
          k = bsd_source(ix_, kn, false, b, h, dh_);
          v = bsd_source(ix_, vn, false, b, h, dv_);
          if (k) k->scale *= kc.scales.back();
          if (v && vc.scales.back() != 1.0) v.reset();
        }
        if (!k || !v) kcache.reset();
      }
      if (!kcache) {
        past = 0;
        k = bsd_source(ix_, kc, true, b, h, dh_);
        v = bsd_source(ix_, vc, false, b, h, dv_);
        if (v && v->scale != 1.0) v.reset();
      }
      if (!k || !v) continue;
      Mask m = mask_;
      settle_causal(m, past);
      if (m.tensor >= 0 && !mask_fits(m.tensor, b, h)) return false;
      ir::Node a{"Attention", 0, "", {}, {-1}, base_attrs(scale_ * q->scale * k->scale, m.causal)};
      a.attributes.push_back(ir::Attribute::make_int("q_num_heads", h));
      a.attributes.push_back(ir::Attribute::make_int("kv_num_heads", h));
      const auto input = [&](const Source& src, int64_t d) {
        return src.exact ? src.tensor : reshape_to(src.tensor, {b, src.len, h * d});
      };
      if (const int32_t qkv = kcache ? -1 : packed_qkv(*q, *k, *v, b, h); qkv >= 0) {
        a.attributes.push_back(ir::Attribute::make_int("packed_qkv", 1));
        const int32_t x = reshape_to(qkv, {b, s_, 3 * h * dh_});
        a.inputs = {x, x, x, m.tensor};
      } else {
        a.inputs = {input(*q, dh_), input(*k, dh_), input(*v, dv_), m.tensor};
      }
      if (kcache) {
        a.inputs.push_back(kcache->past);
        a.inputs.push_back(vcache->past);
        a.outputs = {-1, g_.nodes[size_t(kcache->concat)].outputs[0], g_.nodes[size_t(vcache->concat)].outputs[0]};
        core_.push_back(kcache->concat);
        core_.push_back(vcache->concat);
      }
      while (!a.inputs.empty() && a.inputs.back() < 0) a.inputs.pop_back();
      const int32_t y = out->z;
      const std::vector<int32_t>& chain = out->passed;
      // Y is [B, S, H*Dv]; a differently shaped (static) Z gets a Reshape after the node.
      const Shape yshape{b, s_, h * dv_};
      if (!out->exact) {
        const int32_t y3 = new_tensor("y", DType::kF32, yshape);
        finish(std::move(a), y3, chain);
        const int32_t c = new_tensor("shape", DType::kI64, {int64_t(info(ix_, y).shape.size())},
                                     Tensor::from<int64_t>({int64_t(info(ix_, y).shape.size())},
                                                           std::vector<int64_t>(info(ix_, y).shape.begin(), info(ix_, y).shape.end())));
        new_nodes_.push_back({"Reshape", 0, g_.tensors[size_t(y)].name + "/fuse_attention_reshape", {y3, c}, {y}, {}});
      } else {
        finish(std::move(a), y, chain);
      }
      return true;
    }
    return false;
  }

  // Self-attention whose Q, K, V sources (3-D form, [B, S, H*d] in flat order) are the column
  // slices [0, E), [E, 2E), [2E, 3E) (E = H*d) of one tensor P whose rows are B*S tokens 3E wide
  // (one QKV projection: ViT, torch.nn.MultiheadAttention): P, for the packed_qkv form that reads
  // Q, K, V in place; else -1.
  int32_t packed_qkv(const Source& q, const Source& k, const Source& v, int64_t b, int64_t h) {
    if (dh_ != dv_ || s_ <= 0 || s_ != t_) return -1;
    const int64_t e = h * dh_;
    const auto cq = last_axis_slice(ix_, q.tensor), ck = last_axis_slice(ix_, k.tensor), cv = last_axis_slice(ix_, v.tensor);
    if (!cq || !ck || !cv || ck->packed != cq->packed || cv->packed != cq->packed) return -1;
    if (cq->start != 0 || ck->start != e || cv->start != 2 * e) return -1;
    const Shape& ps = info(ix_, cq->packed).shape;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < ps.size(); ++d) rows *= ps[d];
    if (ps.back() != 3 * e || rows != b * s_) return -1;
    return cq->packed;
  }

  // attn_mask must broadcast to [B, H, S, T] the way the Add / Where broadcast it to the scores.
  bool mask_fits(int32_t m, int64_t b, int64_t h) const {
    const ir::TensorInfo& mi = g_.tensors[size_t(m)];
    if (rank_ == 4 || mi.shape.size() <= 2) return true;  // same dims as the scores
    (void)b;
    (void)h;
    return mi.shape[0] == 1;  // [1, S, T] against [N, S, T]
  }

  // The 4-D form on the MatMul operands as they are: Q [B, H, S, Dh], K [B, H, T, Dh] (Kt's
  // producer when it is a Transpose of the last two dims, else one new Transpose), V.
  bool rewrite_bnsh(int32_t q_op, int32_t kt_op, int32_t v_op, int32_t o) {
    const Shape& qs = info(ix_, q_op).shape;
    const int64_t b = rank_ == 4 ? qs[0] : 1, h = rank_ == 4 ? qs[1] : n_;
    Mask m = mask_;
    settle_causal(m, 0);
    if (m.tensor >= 0 && !mask_fits(m.tensor, b, h)) return false;
    double scale = scale_;
    int32_t q = q_op;
    // A scalar factor on Q or Kt right at the MatMul moves into the scale.
    if (const int32_t p = ix_.producer(q); p >= 0 && !ix_.dead(p))
      if (auto s = scalar_scale(ix_, g_.nodes[size_t(p)]); s && info(ix_, s->first).shape == qs) {
        q = s->first;
        scale *= s->second;
      }
    int32_t kt = kt_op;
    if (const int32_t p = ix_.producer(kt); p >= 0 && !ix_.dead(p))
      if (auto s = scalar_scale(ix_, g_.nodes[size_t(p)]); s && info(ix_, s->first).shape == info(ix_, kt).shape) {
        kt = s->first;
        scale *= s->second;
      }
    int32_t k = -1;
    const int32_t kp = ix_.producer(kt);
    if (kp >= 0 && !ix_.dead(kp) && g_.nodes[size_t(kp)].op == "Transpose") {
      const auto perm = g_.nodes[size_t(kp)].attr_ints("perm");
      bool swap = perm.size() == size_t(rank_);
      for (int64_t d = 0; swap && d < rank_; ++d)
        swap = perm[size_t(d)] == (d == rank_ - 1 ? rank_ - 2 : d == rank_ - 2 ? rank_ - 1 : d);
      if (swap) k = g_.nodes[size_t(kp)].inputs[0];
    }
    if (k < 0) {
      std::vector<int64_t> perm(static_cast<size_t>(rank_), 0);
      for (int64_t d = 0; d < rank_; ++d) perm[size_t(d)] = d;
      std::swap(perm[size_t(rank_ - 1)], perm[size_t(rank_ - 2)]);
      Shape ks = info(ix_, kt).shape;
      std::swap(ks[size_t(rank_ - 1)], ks[size_t(rank_ - 2)]);
      k = new_tensor("k", DType::kF32, ks);
      new_nodes_.push_back({"Transpose", 0, g_.tensors[size_t(kt)].name + "/fuse_attention_transpose", {kt},
                            {k}, {ir::Attribute::make_ints("perm", perm)}});
    }
    ir::Node a{"Attention", 0, "", {}, {-1}, base_attrs(scale, m.causal)};
    a.inputs = {reshape_to(q, {b, h, s_, dh_}), reshape_to(k, {b, h, t_, dh_}), reshape_to(v_op, {b, h, t_, dv_}), m.tensor};
    while (!a.inputs.empty() && a.inputs.back() < 0) a.inputs.pop_back();
    if (rank_ == 4) {
      finish(std::move(a), o, {});
    } else {
      const int32_t y4 = new_tensor("y", DType::kF32, {b, h, s_, dv_});
      finish(std::move(a), y4, {});
      const Shape os = info(ix_, o).shape;
      const int32_t c = new_tensor("shape", DType::kI64, {int64_t(os.size())},
                                   Tensor::from<int64_t>({int64_t(os.size())}, std::vector<int64_t>(os.begin(), os.end())));
      new_nodes_.push_back({"Reshape", 0, g_.tensors[size_t(o)].name + "/fuse_attention_reshape", {y4, c}, {o}, {}});
    }
    return true;
  }

  GraphIndex& ix_;
  ir::Graph& g_;
  std::vector<ir::Node> new_nodes_;
  std::unordered_set<int32_t> read_by_new_;  // tensors the new nodes read: never released
  // The current match (set by at()).
  std::vector<int32_t> core_;
  Mask mask_;
  double scale_ = 1.0;
  int64_t rank_ = 0, n_ = 0, s_ = 0, t_ = 0, dh_ = 0, dv_ = 0;
};

}  // namespace

Expected<int64_t> fuse_attention(ir::Model& model, int32_t graph_index) {
  std::vector<ir::Node> added;
  std::optional<Fuser> fuser;  // one per graph: rewrite_nodes passes the same index every time
  TSR_ASSIGN_OR_RETURN(const int64_t n, rewrite_nodes(model, graph_index, [&](GraphIndex& ix, int32_t i) -> Expected<bool> {
    if (!fuser) fuser.emplace(ix);
    return fuser->at(i);
  }));
  if (fuser) added = fuser->take_new_nodes();
  if (n == 0) return n;
  // The new nodes go at the end; put the list back into topological order for the later passes.
  ir::Graph& g = model.graphs[size_t(graph_index)];
  for (ir::Node& node : added) g.nodes.push_back(std::move(node));
  TSR_ASSIGN_OR_RETURN(const std::vector<int32_t> order, ir::topological_order(g, graph_index));
  std::vector<ir::Node> sorted;
  sorted.reserve(order.size());
  for (int32_t i : order) sorted.push_back(std::move(g.nodes[size_t(i)]));
  g.nodes = std::move(sorted);
  slice_split_leftovers(g);
  return n;
}

}  // namespace tsr::passes::opt
