// Tests for fuse_attention (core/passes/opt_fuse_attention.cpp): attention written with plain ops
// in the layouts exporters use becomes one Attention node with outputs equal to the unfused graph
// (run by the MatMul/Softmax kernels); patterns the Attention op cannot express stay as they are.
// Exported models: tests/transformers/gen_fused_attention.py (against onnxruntime).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/optimize_test_util.h"

using namespace tsr;
using namespace tsr::opt_test;

namespace {

ir::Attribute perm(std::vector<int64_t> p) { return ir::Attribute::make_ints("perm", std::move(p)); }

int32_t shape_const(Builder& b, std::vector<int64_t> s) {
  const auto n = static_cast<int64_t>(s.size());
  return b.constant(Tensor::from<int64_t>({n}, s));
}

int64_t count_op(const ir::Model& m, const std::string& op) {
  int64_t n = 0;
  for (const ir::Node& node : m.main().nodes) n += node.op == op;
  return n;
}

const ir::Node* find_op(const ir::Model& m, const std::string& op) {
  for (const ir::Node& node : m.main().nodes)
    if (node.op == op) return &node;
  return nullptr;
}

// Options: fuse_attention and DCE alone, so the counts below are this pass's.
passes::OptimizeOptions only_attention() {
  passes::OptimizeOptions o;
  o.fuse_elementwise = o.matmul_add = o.cse = o.fold_constants = false;
  o.fold_matmul_transpose = o.gelu = o.layer_norm = o.skip_layer_norm = false;  // the attention pass alone
  return o;
}

struct Spec {
  int64_t b = 1, s = 8, t = 8, h = 2, d = 4;
  std::string scale = "div";   // div | mul | qk (Q and K each by d^-0.25) | none | input (non-constant)
  std::string mask = "none";   // none | add | causal | where_cond (constant non-causal) | all_true
  std::string k_form = "t0132";  // t0132: Transpose [0,1,3,2] of [B,H,T,D]; t0231: [B,T,H,D] -> [0,2,3,1]
  int64_t softmax_axis = -1;
  bool extra_score_reader = false;
  bool merged_heads = false;  // 3-D bmm over [B*H, S, D] (Whisper)
};

// x [B, S, H*D] (and kv [B, T, H*D]) -> heads -> attention -> [B, S, H*D] output, built in the
// layouts of torch exports.
Builder build(const Spec& sp) {
  Builder b;
  const int64_t e = sp.h * sp.d;
  const int32_t xq = b.input({sp.b, sp.s, e});
  const int32_t xk = b.input({sp.b, sp.t, e});
  const int32_t xv = b.input({sp.b, sp.t, e});
  const auto heads = [&](int32_t x, int64_t len) {
    const int32_t r = b.node("Reshape", {x, shape_const(b, {sp.b, len, sp.h, sp.d})});
    const int32_t t = b.node("Transpose", {r}, {perm({0, 2, 1, 3})});
    return sp.merged_heads ? b.node("Reshape", {t, shape_const(b, {sp.b * sp.h, len, sp.d})}) : t;
  };
  int32_t q = heads(xq, sp.s), kt;
  if (sp.k_form == "t0231" && !sp.merged_heads) {
    kt = b.node("Transpose", {b.node("Reshape", {xk, shape_const(b, {sp.b, sp.t, sp.h, sp.d})})}, {perm({0, 2, 3, 1})});
  } else {
    kt = b.node("Transpose", {heads(xk, sp.t)}, {perm(sp.merged_heads ? std::vector<int64_t>{0, 2, 1}
                                                                          : std::vector<int64_t>{0, 1, 3, 2})});
  }
  const int32_t v = heads(xv, sp.t);
  const float quarter = static_cast<float>(std::pow(double(sp.d), -0.25));
  if (sp.scale == "qk") {
    q = b.node("Mul", {q, b.constant(Tensor::scalar<float>(quarter))});
    kt = b.node("Mul", {b.constant(Tensor::scalar<float>(quarter)), kt});
  }
  int32_t s = b.node("MatMul", {q, kt});
  if (sp.extra_score_reader) b.output(b.node("Neg", {s}));
  if (sp.scale == "div") s = b.node("Div", {s, b.constant(Tensor::scalar<float>(std::sqrt(float(sp.d))))});
  if (sp.scale == "mul") s = b.node("Mul", {s, b.constant(Tensor::scalar<float>(0.3f))});
  if (sp.scale == "input") s = b.node("Mul", {s, b.input({1})});
  if (sp.mask == "add") {
    s = b.node("Add", {s, b.input(sp.merged_heads ? Shape{1, 1, sp.t} : Shape{sp.b, 1, 1, sp.t})});
  } else if (sp.mask != "none") {
    std::vector<bool> c(static_cast<size_t>(sp.s * sp.t));
    for (int64_t i = 0; i < sp.s; ++i)
      for (int64_t j = 0; j < sp.t; ++j)
        c[size_t(i * sp.t + j)] = sp.mask == "all_true" ? true
                                  : sp.mask == "causal" ? j <= i + (sp.t - sp.s)
                                                        : (i + j) % 3 != 1;
    Tensor cond = Tensor::from<bool>({1, sp.s, sp.t}, std::vector<bool>(c.begin(), c.end()));
    s = b.node("Where", {b.constant(cond), s, b.constant(Tensor::scalar<float>(-std::numeric_limits<float>::max()))});
  }
  const int32_t p = b.node("Softmax", {s}, {ir::Attribute::make_int("axis", sp.softmax_axis)});
  int32_t o = b.node("MatMul", {p, v});
  if (sp.merged_heads) o = b.node("Reshape", {o, shape_const(b, {sp.b, sp.h, sp.s, sp.d})});
  o = b.node("Transpose", {o}, {perm({0, 2, 1, 3})});
  b.output(b.node("Reshape", {o, shape_const(b, {sp.b, sp.s, e})}));
  return b;
}

}  // namespace

TEST_CASE("fuse_attention: export layouts -> one 3-D Attention, outputs unchanged", "[optimize][attention]") {
  std::vector<std::pair<std::string, Spec>> specs;
  specs.push_back({"div, no mask", Spec{}});
  {
    Spec s;
    s.scale = "mul";
    s.mask = "add";
    s.b = 2;
    s.s = s.t = 5;
    specs.push_back({"mul, additive padding mask, batch 2", s});
  }
  {
    Spec s;
    s.mask = "causal";
    specs.push_back({"causal Where", s});
  }
  {
    Spec s;
    s.scale = "qk";
    s.k_form = "t0231";
    specs.push_back({"Q and K scaled by d^-0.25, K by Transpose [0,2,3,1]", s});
  }
  {
    Spec s;
    s.merged_heads = true;
    s.s = s.t = 7;
    s.h = 3;
    specs.push_back({"Whisper-style merged [B*H, S, D] bmm", s});
  }
  {
    Spec s;
    s.s = 1;
    s.t = 9;
    s.mask = "all_true";
    specs.push_back({"one query, all-true Where", s});
  }
  {
    Spec s;
    s.s = 3;
    s.t = 6;
    s.mask = "where_cond";
    specs.push_back({"constant non-causal Where -> bool attn_mask", s});
  }
  {
    Spec s;
    s.s = 4;
    s.t = 6;
    s.mask = "causal";
    specs.push_back({"bottom-right causal with S < T (no cache): bool attn_mask", s});
  }
  for (const auto& [what, sp] : specs) {
    for (int threads : {1, 2}) {
      INFO(what << ", " << threads << " thread(s)");
      Builder b = build(sp);
      const ir::Model opt = optimize_and_compare(b, threads, only_attention());
      CHECK(count_op(opt, "Attention") == 1);
      CHECK(count_op(opt, "MatMul") == 0);
      CHECK(count_op(opt, "Softmax") == 0);
      CHECK(count_op(opt, "Transpose") == 0);  // the 3-D form: no head split left
      const ir::Node* a = find_op(opt, "Attention");
      REQUIRE(a);
      CHECK(a->attr_int("q_num_heads") == sp.h);
      CHECK(a->attr_int("is_causal") == (sp.mask == "causal" && sp.s == sp.t ? 1 : 0));
      const bool has_mask = a->inputs.size() > 3 && a->inputs[3] >= 0;
      CHECK(has_mask == (sp.mask == "add" || sp.mask == "where_cond" || (sp.mask == "causal" && sp.s != sp.t)));
    }
  }
}

TEST_CASE("fuse_attention: patterns the Attention op cannot take stay unfused", "[optimize][attention]") {
  std::vector<std::pair<std::string, Spec>> specs;
  {
    Spec s;
    s.extra_score_reader = true;
    specs.push_back({"scores read by another node", s});
  }
  {
    Spec s;
    s.softmax_axis = 2;
    specs.push_back({"softmax over the query axis", s});
  }
  {
    Spec s;
    s.scale = "input";
    specs.push_back({"non-constant scale", s});
  }
  for (const auto& [what, sp] : specs) {
    INFO(what);
    Builder b = build(sp);
    const ir::Model opt = optimize_and_compare(b, 1, only_attention());
    CHECK(count_op(opt, "Attention") == 0);
    CHECK(count_op(opt, "Softmax") == 1);
    CHECK(count_op(opt, "MatMul") == 2);
  }
}

TEST_CASE("fuse_attention: KV cache Concat -> past_key/past_value and present outputs", "[optimize][attention]") {
  // GPT decode step: one new token, past 6; present = Concat(past, new) is a graph output.
  const int64_t h = 2, d = 4, past = 6, e = h * d;
  Builder b;
  const int32_t x = b.input({1, 1, 3 * e});
  const int32_t pk = b.input({1, h, past, d}), pv = b.input({1, h, past, d});
  const auto slice = [&](int64_t k) {
    const int32_t sl = b.node("Slice", {x, shape_const(b, {k * e}), shape_const(b, {(k + 1) * e}), shape_const(b, {2})});
    return b.node("Transpose", {b.node("Reshape", {sl, shape_const(b, {1, 1, h, d})})}, {perm({0, 2, 1, 3})});
  };
  const int32_t q = slice(0);
  const int32_t k = b.node("Concat", {pk, slice(1)}, {ir::Attribute::make_int("axis", 2)});
  const int32_t v = b.node("Concat", {pv, slice(2)}, {ir::Attribute::make_int("axis", -2)});
  int32_t s = b.node("MatMul", {q, b.node("Transpose", {k}, {perm({0, 1, 3, 2})})});
  s = b.node("Mul", {s, b.constant(Tensor::scalar<float>(0.5f))});
  const int32_t o = b.node("MatMul", {b.node("Softmax", {s}, {ir::Attribute::make_int("axis", 3)}), v});
  b.output(b.node("Reshape", {b.node("Transpose", {o}, {perm({0, 2, 1, 3})}), shape_const(b, {1, 1, e})}));
  b.output(k);
  b.output(v);
  const ir::Model opt = optimize_and_compare(b, 1, only_attention());
  CHECK(count_op(opt, "Attention") == 1);
  CHECK(count_op(opt, "Concat") == 0);
  const ir::Node* a = find_op(opt, "Attention");
  REQUIRE(a);
  REQUIRE(a->inputs.size() == 6);
  CHECK(a->inputs[4] == pk);
  CHECK(a->inputs[5] == pv);
  CHECK(a->outputs.size() == 3);
}

TEST_CASE("fuse_attention: dynamic cache length and a decode-step mask computed from it", "[optimize][attention]") {
  // As exported with a dynamic past: past_k/v [1, H, P?, D]; the mask is
  //   LessOrEqual(Range(0, P + 1, 1)[None], [[0]] + P) -> [1, 1, 1, P + 1], Where(mask, scores, -10000),
  // all true for the one query row: it must vanish, leaving no attn_mask.
  const int64_t h = 2, d = 4, past = 5, e = h * d;
  Builder b;
  const int32_t x = b.input({1, 1, 3 * e});
  const int32_t pk = b.input({1, h, past, d}), pv = b.input({1, h, past, d});
  for (int32_t p : {pk, pv}) b.g().tensors[size_t(p)].shape[2] = -1;  // declared dynamic
  const auto slice = [&](int64_t k) {
    const int32_t sl = b.node("Slice", {x, shape_const(b, {k * e}), shape_const(b, {(k + 1) * e}), shape_const(b, {2})});
    return b.node("Transpose", {b.node("Reshape", {sl, shape_const(b, {1, 1, h, d})})}, {perm({0, 2, 1, 3})});
  };
  const int32_t q = slice(0);
  const int32_t k = b.node("Concat", {pk, slice(1)}, {ir::Attribute::make_int("axis", 2)});
  const int32_t v = b.node("Concat", {pv, slice(2)}, {ir::Attribute::make_int("axis", 2)});
  const int32_t plen = b.node("Gather", {b.node("Shape", {pk}), b.constant(Tensor::scalar<int64_t>(2))},
                              {ir::Attribute::make_int("axis", 0)});
  const int32_t keys = b.node("Range", {b.constant(Tensor::scalar<int64_t>(0)),
                                         b.node("Add", {plen, b.constant(Tensor::scalar<int64_t>(1))}),
                                         b.constant(Tensor::scalar<int64_t>(1))});
  const int32_t lim = b.node("Add", {b.constant(Tensor::from<int64_t>({1, 1}, {0})), plen});
  const int32_t cond = b.node("Unsqueeze", {b.node("LessOrEqual", {b.node("Unsqueeze", {keys, shape_const(b, {0})}), lim}),
                                            shape_const(b, {0, 1})});
  int32_t s = b.node("MatMul", {q, b.node("Transpose", {k}, {perm({0, 1, 3, 2})})});
  s = b.node("Div", {s, b.constant(Tensor::scalar<float>(2.0f))});
  s = b.node("Where", {cond, s, b.constant(Tensor::scalar<float>(-10000.0f))});
  const int32_t o = b.node("MatMul", {b.node("Softmax", {s}, {ir::Attribute::make_int("axis", -1)}), v});
  b.output(b.node("Reshape", {b.node("Transpose", {o}, {perm({0, 2, 1, 3})}), shape_const(b, {1, 1, e})}));
  b.output(k);
  b.output(v);
  const ir::Model opt = optimize_and_compare(b, 1, only_attention());
  CHECK(count_op(opt, "Attention") == 1);
  CHECK(count_op(opt, "Where") == 0);
  CHECK(count_op(opt, "Concat") == 0);
  const ir::Node* a = find_op(opt, "Attention");
  REQUIRE(a);
  REQUIRE(a->inputs.size() == 6);
  CHECK(a->inputs[3] == -1);
  CHECK(a->inputs[4] == pk);
  CHECK(a->attr_float("scale") == Approx(0.5));
}

namespace {

// One QKV projection output x, sliced into Q, K, V along its last axis (offsets `order` * E) as
// torch.nn.MultiheadAttention exports it (ViT): seq_first x [S, 1, 3E] -> [S, H, D] ->
// Transpose [1, 0, 2] (K: [1, 2, 0]); else x [B, S, 3E] -> [B, S, H, D] -> Transpose [0, 2, 1, 3].
Builder build_packed(int64_t batch, int64_t s, int64_t h, int64_t d, bool seq_first, std::vector<int64_t> order = {0, 1, 2}) {
  Builder b;
  const int64_t e = h * d;
  const int32_t x = b.input(seq_first ? Shape{s, 1, 3 * e} : Shape{batch, s, 3 * e});
  const auto part = [&](int64_t k, bool kt) {
    const int64_t start = order[size_t(k)] * e, end = start + e == 3 * e ? std::numeric_limits<int64_t>::max() : start + e;
    const int32_t sl = b.node("Slice", {x, shape_const(b, {start}), shape_const(b, {end}), shape_const(b, {-1})});
    if (seq_first)
      return b.node("Transpose", {b.node("Reshape", {sl, shape_const(b, {s, h, d})})}, {perm(kt ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{1, 0, 2})});
    const int32_t t = b.node("Transpose", {b.node("Reshape", {sl, shape_const(b, {batch, s, h, d})})}, {perm({0, 2, 1, 3})});
    return kt ? b.node("Transpose", {t}, {perm({0, 1, 3, 2})}) : t;
  };
  const int32_t q = b.node("Div", {part(0, false), b.constant(Tensor::scalar<float>(std::sqrt(float(d))))});
  const int32_t sc = b.node("MatMul", {q, part(1, true)});
  const int32_t o = b.node("MatMul", {b.node("Softmax", {sc}, {ir::Attribute::make_int("axis", -1)}), part(2, false)});
  if (seq_first) {
    b.output(b.node("Reshape", {b.node("Transpose", {o}, {perm({1, 0, 2})}), shape_const(b, {s, e})}));
  } else {
    b.output(b.node("Reshape", {b.node("Transpose", {o}, {perm({0, 2, 1, 3})}), shape_const(b, {batch, s, e})}));
  }
  return b;
}

}  // namespace

TEST_CASE("fuse_attention: Q, K, V sliced from one QKV projection -> packed_qkv, read in place", "[optimize][attention]") {
  struct Case {
    const char* what;
    int64_t batch, s, h, d;
    bool seq_first;
  };
  for (const Case& c : {Case{"seq-first [S, 1, 3E] (torch MHA, ViT)", 1, 7, 3, 5, true},
                        Case{"batch-first [B, S, 3E], batch 2", 2, 9, 3, 5, false}}) {
    for (int threads : {1, 2}) {
      INFO(c.what << ", " << threads << " thread(s)");
      Builder b = build_packed(c.batch, c.s, c.h, c.d, c.seq_first);
      const ir::Model opt = optimize_and_compare(b, threads, only_attention());
      CHECK(count_op(opt, "Attention") == 1);
      CHECK(count_op(opt, "Slice") == 0);
      CHECK(count_op(opt, "Transpose") == 0);
      const ir::Node* a = find_op(opt, "Attention");
      REQUIRE(a);
      CHECK(a->attr_int("packed_qkv") == 1);
      CHECK(a->attr_int("q_num_heads") == c.h);
      CHECK(a->inputs[0] == a->inputs[1]);
      CHECK(a->inputs[0] == a->inputs[2]);
    }
  }
  SECTION("slices in another order: fused with separate inputs") {
    Builder b = build_packed(1, 6, 2, 3, true, {1, 0, 2});
    const ir::Model opt = optimize_and_compare(b, 1, only_attention());
    CHECK(count_op(opt, "Attention") == 1);
    const ir::Node* a = find_op(opt, "Attention");
    REQUIRE(a);
    CHECK(a->attr_int("packed_qkv") == 0);
    CHECK(count_op(opt, "Slice") == 3);
  }
}

TEST_CASE("fuse_attention: Q, K, V from one Split of the QKV projection -> packed_qkv (GPT)", "[optimize][attention]") {
  // x [B, S, 3E] -> Split(axis 2, [E, E, E]) -> [B, S, H, D] -> Transpose [0, 2, 1, 3], as GPT-style
  // exports write it; with `present`, K and V in [B, H, S, D] are graph outputs too (a prefill's
  // present_key/value), so the Split's K and V columns stay read: they become two Slices.
  const int64_t batch = 2, s = 7, h = 3, d = 5, e = h * d;
  for (bool present : {false, true}) {
    for (int threads : {1, 2}) {
      INFO("present " << present << ", " << threads << " thread(s)");
      Builder b;
      const int32_t x = b.input({batch, s, 3 * e});
      std::vector<int32_t> parts;
      for (int k = 0; k < 3; ++k) parts.push_back(b.g().add_tensor(ir::TensorInfo{"split" + std::to_string(k)}));
      b.g().nodes.push_back({"Split", 0, "split", {x, shape_const(b, {e, e, e})}, parts, {ir::Attribute::make_int("axis", 2)}});
      const auto heads = [&](int k) {
        return b.node("Transpose", {b.node("Reshape", {parts[size_t(k)], shape_const(b, {batch, s, h, d})})}, {perm({0, 2, 1, 3})});
      };
      const int32_t q = heads(0), k = heads(1), v = heads(2);
      const int32_t sc = b.node("Div", {b.node("MatMul", {q, b.node("Transpose", {k}, {perm({0, 1, 3, 2})})}),
                                        b.constant(Tensor::scalar<float>(std::sqrt(float(d))))});
      const int32_t o = b.node("MatMul", {b.node("Softmax", {sc}, {ir::Attribute::make_int("axis", -1)}), v});
      b.output(b.node("Reshape", {b.node("Transpose", {o}, {perm({0, 2, 1, 3})}), shape_const(b, {batch, s, e})}));
      if (present) {
        b.output(k);
        b.output(v);
      }
      const ir::Model opt = optimize_and_compare(b, threads, only_attention());
      CHECK(count_op(opt, "Attention") == 1);
      CHECK(count_op(opt, "Split") == 0);
      CHECK(count_op(opt, "Slice") == (present ? 2 : 0));
      const ir::Node* a = find_op(opt, "Attention");
      REQUIRE(a);
      CHECK(a->attr_int("packed_qkv") == 1);
      CHECK(a->inputs[0] == x);
      CHECK(a->inputs[1] == x);
    }
  }
}
