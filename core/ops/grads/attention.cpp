// Gradient rule of ONNX Attention (core/ops/families/attention.cpp) with respect to Q, K and V.
//
// Scope: no KV cache (past_key / past_value absent), no nonpad_kv_seqlen, no softcap. A float
// attn_mask is additive, so it takes dS summed to its shape (a learned position bias trains); a
// boolean mask has no gradient. Gradients flowing into present_key / present_value (then K and V
// themselves in [B, kvN, L, H]) add to dK / dV; one flowing into qk_matmul_output is an error.
// The rule recomputes the probabilities and composes the standard VJP from MatMul, Softmax and
// Transpose (heads in [B, N, S, H]; 3-D inputs reshaped to it and back):
//   S = scale * Q K^T + mask (+ causal -inf above the diagonal), P = softmax(S)
//   dV = P^T dY,  dP = dY V^T,  dS = P * (dP - rowsum(dP * P)),
//   dQ = scale * dS K,  dK = scale * dS^T Q,  dMask = dS summed to the mask's shape.
// GQA/MQA: K and V are repeated to the q heads (kv head h / group) and dK, dV summed back over
// each group. Needs the head counts and head size statically (3-D: the attributes; 4-D: Q's dims).
#include <cmath>
#include <limits>

#include "core/ops/grad.h"

namespace tsr::ops {

namespace {

Value transpose(Emitter& e, Value v, std::vector<int64_t> perm) {
  return e.emit("Transpose", {v}, {ir::Attribute::make_ints("perm", std::move(perm))});
}

// [B, T, N*H] -> [B, N, T, H]
Value to_heads(Emitter& e, Value v, int64_t n, int64_t h) {
  return transpose(e, e.emit("Reshape", {v, ints_const(e, {0, 0, n, h})}), {0, 2, 1, 3});
}

// [B, N, T, H] -> [B, T, N*H]
Value from_heads(Emitter& e, Value v, int64_t n, int64_t h) {
  return e.emit("Reshape", {transpose(e, v, {0, 2, 1, 3}), ints_const(e, {0, 0, n * h})});
}

// [B, kvN, L, H] repeated to [B, kvN*g, L, H] (kv head k serves q heads k*g .. k*g+g-1).
Value repeat_heads(Emitter& e, Value v, int64_t kvn, int64_t g, int64_t h) {
  if (g == 1) return v;
  const Value u = e.emit("Unsqueeze", {v, ints_const(e, {2})});
  const Value x = e.emit("Expand", {u, ints_const(e, {1, 1, g, 1, 1})});
  return e.emit("Reshape", {x, ints_const(e, {0, kvn * g, -1, h})});
}

// The inverse sum: [B, kvN*g, L, H] -> [B, kvN, L, H].
Value sum_groups(Emitter& e, Value v, int64_t kvn, int64_t g, int64_t h) {
  if (g == 1) return v;
  const Value r = e.emit("Reshape", {v, ints_const(e, {0, kvn, g, -1, h})});
  return e.emit("ReduceSum", {r, ints_const(e, {2})}, {ir::Attribute::make_int("keepdims", 0)});
}

Status attention_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const ir::Node& node = g.node();
  for (size_t i : {4, 5, 6})
    if (g.has_input(i)) return g.error("past_key / past_value / nonpad_kv_seqlen are not supported");
  if (node.attr_float("softcap") != 0.0) return g.error("softcap is not supported");
  if (node.attr_int("packed_qkv") != 0) return g.error("packed_qkv (an optimized inference graph) is not supported");
  if (g.grad_output(3).valid()) return g.error("no gradient flows through qk_matmul_output");
  const ValueType qt = g.input_type(0), kt = g.input_type(1), vt = g.input_type(2);
  if (!qt.has_shape || !kt.has_shape || !vt.has_shape) return g.error("Q, K, V ranks must be known");
  const bool bsd = qt.shape.size() == 3;
  int64_t qn, kvn, h, hv;
  if (bsd) {
    qn = node.attr_int("q_num_heads");
    kvn = node.attr_int("kv_num_heads");
    if (qn <= 0 || kvn <= 0 || qt.shape[2] < 0 || vt.shape[2] < 0) return g.error("head counts and hidden sizes must be known");
    h = qt.shape[2] / qn;
    hv = vt.shape[2] / kvn;
  } else {
    qn = qt.shape[1];
    kvn = kt.shape[1];
    h = qt.shape[3];
    hv = vt.shape[3];
  }
  if (qn <= 0 || kvn <= 0 || h <= 0 || hv <= 0 || qn % kvn != 0) return g.error("head counts and sizes must be known");
  const int64_t grp = qn / kvn;
  const DType dt = qt.dtype;
  const double scale = node.attr("scale") ? node.attr_float("scale") : 1.0 / std::sqrt(static_cast<double>(h));
  const Value q4 = bsd ? to_heads(e, g.input(0), qn, h) : g.input(0);
  const Value k4 = bsd ? to_heads(e, g.input(1), kvn, h) : g.input(1);
  const Value v4 = bsd ? to_heads(e, g.input(2), kvn, hv) : g.input(2);
  const Value ke = repeat_heads(e, k4, kvn, grp, h), ve = repeat_heads(e, v4, kvn, grp, hv);
  const Value sc = scalar(e, dt, scale);
  Value s = e.emit("Mul", {e.emit("MatMul", {q4, transpose(e, ke, {0, 1, 3, 2})}), sc});
  const double ninf = -std::numeric_limits<double>::infinity();
  if (g.has_input(3)) {
    const Value m = g.input(3);
    const Value bias = g.input_type(3).dtype == DType::kBool
                           ? e.emit("Where", {m, scalar(e, dt, 0.0), scalar(e, dt, ninf)})
                           : cast(e, m, dt);
    s = e.emit("Add", {s, bias});
  }
  if (node.attr_int("is_causal") != 0) {
    // Key j is visible to query i when j <= i (no cache: offset 0).
    const int64_t sq = bsd ? qt.shape[1] : qt.shape[2], l = bsd ? kt.shape[1] : kt.shape[2];
    if (sq < 0 || l < 0) return g.error("is_causal needs static sequence lengths");
    std::vector<double> tri(static_cast<size_t>(sq * l));
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < l; ++j) tri[static_cast<size_t>(i * l + j)] = j <= i ? 0.0 : ninf;
    s = e.emit("Add", {s, cast(e, e.constant(Tensor::from<double>({sq, l}, tri)), dt)});
  }
  const Value p = e.emit("Softmax", {s}, {ir::Attribute::make_int("axis", -1)});
  Value dy = g.grad_output(0);
  std::vector<Value> dk_terms, dv_terms;
  if (dy.valid()) {
    const Value dy4 = bsd ? to_heads(e, dy, qn, hv) : dy;
    const Value dv_e = e.emit("MatMul", {transpose(e, p, {0, 1, 3, 2}), dy4});
    const Value dp = e.emit("MatMul", {dy4, transpose(e, ve, {0, 1, 3, 2})});
    const Value row = e.emit("ReduceSum", {e.emit("Mul", {dp, p}), ints_const(e, {-1})}, {ir::Attribute::make_int("keepdims", 1)});
    const Value ds_unscaled = e.emit("Mul", {p, e.emit("Sub", {dp, row})});
    if (g.wants(3) && g.has_input(3) && dtype_is_float(g.input_type(3).dtype))
      g.set_grad(3, sum_to(e, ds_unscaled, g.input(3)));
    const Value ds = e.emit("Mul", {ds_unscaled, sc});
    const Value dq4 = e.emit("MatMul", {ds, ke});
    const Value dk_e = e.emit("MatMul", {transpose(e, ds, {0, 1, 3, 2}), q4});
    if (g.wants(0)) g.set_grad(0, bsd ? from_heads(e, dq4, qn, h) : dq4);
    dk_terms.push_back(sum_groups(e, dk_e, kvn, grp, h));
    dv_terms.push_back(sum_groups(e, dv_e, kvn, grp, hv));
  }
  // present_key / present_value are K and V in [B, kvN, L, H] when there is no cache.
  if (g.grad_output(1).valid()) dk_terms.push_back(g.grad_output(1));
  if (g.grad_output(2).valid()) dv_terms.push_back(g.grad_output(2));
  if (g.wants(1) && !dk_terms.empty()) {
    const Value d = add_n(e, dk_terms);
    g.set_grad(1, bsd ? from_heads(e, d, kvn, h) : d);
  }
  if (g.wants(2) && !dv_terms.empty()) {
    const Value d = add_n(e, dv_terms);
    g.set_grad(2, bsd ? from_heads(e, d, kvn, hv) : d);
  }
  return ok_status();
}

}  // namespace

void register_attention_grads(OpRegistry& r) {
  TSR_IF_SELECTED("Attention") r.set_grad("Attention", &attention_grad);
}

}  // namespace tsr::ops
