// Attention OpDefs: ONNX Attention (opset 23, with opset 24's nonpad_kv_seqlen input) and
// RotaryEmbedding (opset 23), and the onnxruntime contrib ops com.microsoft::MultiHeadAttention,
// com.microsoft::Attention, com.microsoft::GroupQueryAttention, com.microsoft::RotaryEmbedding
// (onnxruntime docs/ContribOperators.md). CPU kernels: backends/cpu/kernels/attention*.cpp.
//
// Layouts: "BSD" = [batch, seq, heads * head_size] (3-D, the heads split by a num_heads attribute),
// "BNSH" = [batch, heads, seq, head_size] (4-D). Errors: an attribute that does not split the
// hidden size into heads, mismatched batch / head sizes and wrong ranks are load-time errors
// naming the node.
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

const std::initializer_list<DType> kFloatTypes = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64};

int64_t dim_or(const ValueType& t, size_t d) { return t.has_shape && d < t.shape.size() ? t.shape[d] : -1; }
int64_t known_mul(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a * b; }
int64_t known_add(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a + b; }
int64_t known_div(int64_t a, int64_t b) { return a < 0 || b <= 0 ? -1 : a / b; }

// hidden % heads == 0 where both are known.
Status require_split(const InferContext& ctx, const char* what, int64_t hidden, int64_t heads) {
  if (heads <= 0) return ctx.ir_error(what, ": num_heads = ", heads, " must be positive");
  if (hidden >= 0 && hidden % heads != 0)
    return ctx.ir_error(what, ": hidden size ", hidden, " is not divisible by ", heads, " heads");
  return ok_status();
}

Status require_ranks(const InferContext& ctx, std::initializer_list<size_t> inputs, int64_t lo, int64_t hi) {
  for (size_t i : inputs) TSR_RETURN_IF_ERROR(ctx.require_rank(i, lo, hi));
  return ok_status();
}

// ONNX Attention (23/24). Inputs Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen?
// (24); outputs Y, present_key?, present_value?, qk_matmul_output?. Q [B, S, qN*H] / [B, qN, S, H],
// K [B, L, kvN*H] / [B, kvN, L, H], V likewise with head size Hv; past [B, kvN, P, H(v)].
// Y: [B, S, qN*Hv] / [B, qN, S, Hv]; present: [B, kvN, P+L, H(v)]; qk: [B, qN, S, P+L].
// Tessera extension packed_qkv = 1 (written by the fuse_attention pass, not in ONNX): Q, K and V
// are one tensor [B, S, (qN + 2 kvN) * H], each row Q's heads, then K's, then V's (GQA's packed
// query layout); the kernel reads the three in place with a row stride of the full width.
Status infer_onnx_attention(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  for (size_t i : {1, 2, 4, 5}) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(3, {DType::kBool, DType::kF32, DType::kF16, DType::kBF16, DType::kF64}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(6, {DType::kI64}));
  TSR_RETURN_IF_ERROR(require_ranks(ctx, {0, 1, 2}, 3, 4));
  TSR_RETURN_IF_ERROR(require_ranks(ctx, {4, 5}, 4, 4));
  TSR_RETURN_IF_ERROR(ctx.require_rank(3, 2, 4));
  TSR_RETURN_IF_ERROR(ctx.require_rank(6, 1, 1));
  const ValueType &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  const DType dt = q.dtype;
  const ir::Node& n = ctx.node();
  const int64_t mode = n.attr_int("qk_matmul_output_mode");
  if (mode < 0 || mode > 3) return ctx.ir_error("qk_matmul_output_mode = ", mode, ", expected 0..3");
  if (ctx.has_input(4) != ctx.has_input(5)) return ctx.ir_error("past_key and past_value must be given together");
  if (!q.has_shape || !k.has_shape || !v.has_shape) {
    for (size_t o = 0; o < ctx.num_outputs(); ++o) ctx.set_output_unknown_shape(o, dt);
    return ok_status();
  }
  const size_t rank = q.shape.size();
  if (k.shape.size() != rank || v.shape.size() != rank)
    return ctx.ir_error("Q, K, V ranks ", rank, ", ", k.shape.size(), ", ", v.shape.size(), " differ");
  int64_t qn, kvn, s, l, h, hk, hv;
  const int64_t b = q.shape[0];
  const bool packed = n.attr_int("packed_qkv") != 0;
  if (packed && (rank != 3 || q.shape != k.shape || q.shape != v.shape))
    return ctx.ir_error("packed_qkv needs Q, K and V to be one 3-D tensor [B, S, (q_num_heads + 2 * kv_num_heads) * H]");
  if (packed) {
    qn = n.attr_int("q_num_heads");
    kvn = n.attr_int("kv_num_heads");
    TSR_RETURN_IF_ERROR(require_split(ctx, "packed Q (q_num_heads + 2 * kv_num_heads)", q.shape[2], qn + 2 * kvn));
    s = l = q.shape[1];
    h = hk = hv = known_div(q.shape[2], qn + 2 * kvn);
  } else if (rank == 3) {
    qn = n.attr_int("q_num_heads");
    kvn = n.attr_int("kv_num_heads");
    TSR_RETURN_IF_ERROR(require_split(ctx, "Q (q_num_heads)", q.shape[2], qn));
    TSR_RETURN_IF_ERROR(require_split(ctx, "K (kv_num_heads)", k.shape[2], kvn));
    TSR_RETURN_IF_ERROR(require_split(ctx, "V (kv_num_heads)", v.shape[2], kvn));
    s = q.shape[1];
    l = k.shape[1];
    h = known_div(q.shape[2], qn);
    hk = known_div(k.shape[2], kvn);
    hv = known_div(v.shape[2], kvn);
  } else {
    qn = q.shape[1];
    kvn = k.shape[1];
    s = q.shape[2];
    l = k.shape[2];
    h = q.shape[3];
    hk = k.shape[3];
    hv = v.shape[3];
    if (v.shape[1] >= 0 && kvn >= 0 && v.shape[1] != kvn) return ctx.ir_error("K and V head counts differ");
  }
  if (h >= 0 && hk >= 0 && h != hk) return ctx.ir_error("Q head size ", h, " and K head size ", hk, " differ");
  if (qn > 0 && kvn > 0 && qn % kvn != 0)
    return ctx.ir_error("q heads ", qn, " are not a multiple of kv heads ", kvn);
  if (rank == 3 && v.shape[1] >= 0 && l >= 0 && v.shape[1] != l) return ctx.ir_error("K and V sequence lengths differ");
  int64_t p = 0;
  if (ctx.has_input(4) && ctx.input(4).has_shape) p = ctx.input(4).shape[2];
  const int64_t total = known_add(p, l);
  if (rank == 3) ctx.set_output(0, dt, {b, s, known_mul(qn, hv)});
  else ctx.set_output(0, dt, {b, qn, s, hv});
  if (ctx.num_outputs() > 1) ctx.set_output(1, dt, {b, kvn, total, hk});
  if (ctx.num_outputs() > 2) ctx.set_output(2, dt, {b, kvn, total, hv});
  if (ctx.num_outputs() > 3) ctx.set_output(3, dt, {b, qn, s, total});
  return ok_status();
}

// RotaryEmbedding, both forms: X (ONNX: [B, S, N*H] with num_heads, or [B, N, S, H]; contrib:
// the same), cos/sin caches; the output has X's shape.
Status infer_rotary(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  const bool contrib = ctx.node().op.rfind("com.microsoft::", 0) == 0;
  const size_t cos_i = contrib ? 2 : 1, sin_i = contrib ? 3 : 2, pos_i = contrib ? 1 : 3;
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, cos_i));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, sin_i));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(pos_i, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 3, 4));
  TSR_RETURN_IF_ERROR(ctx.require_rank(cos_i, 2, 3));
  const ValueType& x = ctx.input(0);
  const int64_t heads = ctx.node().attr_int("num_heads");
  if (heads < 0) return ctx.ir_error("num_heads = ", heads, " must be >= 0");
  if (x.has_shape && x.shape.size() == 3 && heads > 0) TSR_RETURN_IF_ERROR(require_split(ctx, "X", x.shape[2], heads));
  if (!contrib && x.has_shape && x.shape.size() == 3 && heads == 0)
    return ctx.ir_error("3-D input needs the num_heads attribute");
  if (x.has_shape) ctx.set_output(0, x.dtype, x.shape);
  else ctx.set_output_unknown_shape(0, x.dtype);
  return ok_status();
}

// com.microsoft::MultiHeadAttention: query [B, S, N*H]; key [B, L, N*H] or [B, N, L, H]; value
// likewise (head size Hv); output [B, S, N*Hv], present_key/value [B, N, P+L, H(v)], output_qk
// [B, N, S, P+L].
Status infer_mha(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  for (size_t i : {1, 2, 3, 5, 6, 7}) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(4, {DType::kI32}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 3, 3));
  TSR_RETURN_IF_ERROR(require_ranks(ctx, {1, 2}, 3, 4));
  TSR_RETURN_IF_ERROR(require_ranks(ctx, {6, 7}, 4, 4));
  if (!ctx.has_input(1) || !ctx.has_input(2))
    return ctx.ir_error("packed QKV / KV (key or value absent) is not supported; give query, key and value");
  const int64_t heads = ctx.node().attr_int("num_heads");
  const ValueType &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  if (q.has_shape) TSR_RETURN_IF_ERROR(require_split(ctx, "query", q.shape[2], heads));
  int64_t l = -1, hv = -1;
  if (v.has_shape && v.shape.size() == 3) {
    TSR_RETURN_IF_ERROR(require_split(ctx, "value", v.shape[2], heads));
    l = v.shape[1];
    hv = known_div(v.shape[2], heads);
  } else if (v.has_shape) {
    if (v.shape[1] >= 0 && v.shape[1] != heads) return ctx.ir_error("value: ", v.shape[1], " heads, expected ", heads);
    l = v.shape[2];
    hv = v.shape[3];
  }
  if (k.has_shape && k.shape.size() == 3) TSR_RETURN_IF_ERROR(require_split(ctx, "key", k.shape[2], heads));
  if (k.has_shape && v.has_shape && k.shape.size() != v.shape.size()) return ctx.ir_error("key and value ranks differ");
  if (ctx.has_input(6) != ctx.has_input(7)) return ctx.ir_error("past_key and past_value must be given together");
  const int64_t p = ctx.has_input(6) ? dim_or(ctx.input(6), 2) : 0;
  const int64_t h = known_div(dim_or(q, 2), heads), total = known_add(p, l);
  ctx.set_output(0, q.dtype, {dim_or(q, 0), dim_or(q, 1), known_mul(heads, hv)});
  if (ctx.num_outputs() > 1) ctx.set_output(1, q.dtype, {dim_or(q, 0), heads, total, h});
  if (ctx.num_outputs() > 2) ctx.set_output(2, q.dtype, {dim_or(q, 0), heads, total, hv});
  if (ctx.num_outputs() > 3) ctx.set_output(3, q.dtype, {dim_or(q, 0), heads, dim_or(q, 1), total});
  return ok_status();
}

// com.microsoft::Attention: input [B, S, Din], weights [Din, Dq+Dk+Dv] (qkv_hidden_sizes, default
// three equal parts), bias [Dq+Dk+Dv]; output [B, S, Dv]; present [2, B, N, P+S, H] (Dk == Dv).
Status infer_ms_attention(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  for (size_t i : {1, 2, 4, 5}) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(3, {DType::kI32}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 3, 3));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 2, 2));
  TSR_RETURN_IF_ERROR(ctx.require_rank(3, 1, 3));
  TSR_RETURN_IF_ERROR(ctx.require_rank(4, 5, 5));
  const ir::Node& n = ctx.node();
  if (n.attr_int("do_rotary") != 0) return ctx.ir_error("do_rotary = 1 is not supported");
  if (n.attr_int("past_present_share_buffer") != 0) return ctx.ir_error("past_present_share_buffer = 1 is not supported");
  if (ctx.has_input(6) || ctx.has_input(7)) return ctx.ir_error("past_sequence_length / cache inputs are not supported");
  const int64_t heads = n.attr_int("num_heads");
  const ValueType &x = ctx.input(0), &w = ctx.input(1);
  const auto sizes = n.attr_ints("qkv_hidden_sizes");
  int64_t dq = -1, dk = -1, dv = -1;
  if (!sizes.empty()) {
    if (sizes.size() != 3) return ctx.ir_error("qkv_hidden_sizes has ", sizes.size(), " values, expected 3");
    dq = sizes[0];
    dk = sizes[1];
    dv = sizes[2];
    if (w.has_shape && w.shape[1] >= 0 && w.shape[1] != dq + dk + dv)
      return ctx.ir_error("weights: ", w.shape[1], " columns, qkv_hidden_sizes sum to ", dq + dk + dv);
  } else if (w.has_shape && w.shape[1] >= 0) {
    if (w.shape[1] % 3 != 0) return ctx.ir_error("weights: ", w.shape[1], " columns, not 3 equal parts");
    dq = dk = dv = w.shape[1] / 3;
  }
  TSR_RETURN_IF_ERROR(require_split(ctx, "q hidden", dq, heads));
  TSR_RETURN_IF_ERROR(require_split(ctx, "k hidden", dk, heads));
  TSR_RETURN_IF_ERROR(require_split(ctx, "v hidden", dv, heads));
  if (dq >= 0 && dk >= 0 && dq != dk) return ctx.ir_error("q and k hidden sizes ", dq, ", ", dk, " differ");
  if (x.has_shape && w.has_shape && x.shape[2] >= 0 && w.shape[0] >= 0 && x.shape[2] != w.shape[0])
    return ctx.ir_error("input hidden ", x.shape[2], " != weights rows ", w.shape[0]);
  ctx.set_output(0, x.dtype, {dim_or(x, 0), dim_or(x, 1), dv});
  if (ctx.num_outputs() > 1) {
    if (dk != dv) return ctx.ir_error("present needs equal k and v hidden sizes");
    const int64_t p = ctx.has_input(4) ? dim_or(ctx.input(4), 3) : 0;
    ctx.set_output(1, x.dtype, {2, dim_or(x, 0), heads, known_add(p, dim_or(x, 1)), known_div(dk, heads)});
  }
  return ok_status();
}

// com.microsoft::GroupQueryAttention: query [B, S, N*H], key/value [B, S, kvN*H] (or both absent:
// packed QKV, query [B, S, (N + 2 kvN) * H]), past_key/value [B, kvN, P, H], seqlens_k [B] (i32,
// total length - 1 per batch), total_sequence_length (i32 scalar), cos/sin_cache?, position_ids?
// [B, S] (i64, with do_rotary), attention_bias? [B|1, N|1, S, T], head_sink? [N] (query dtype);
// output [B, S, N*H], present [B, kvN, max(P, total), H], output_qk? [B, N, S, max(P, total)]
// (qk_output 1: scaled, soft-capped scores plus attention_bias; 2: the softmax; masked keys 0).
Status infer_gqa(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  for (size_t i : {1, 2, 3, 4, 7, 8, 10, 11}) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(9, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(9, 2, 2));
  TSR_RETURN_IF_ERROR(ctx.require_rank(10, 4, 4));
  TSR_RETURN_IF_ERROR(ctx.require_rank(11, 1, 1));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(5, {DType::kI32}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(6, {DType::kI32}));
  TSR_RETURN_IF_ERROR(require_ranks(ctx, {0, 1, 2}, 3, 3));
  TSR_RETURN_IF_ERROR(require_ranks(ctx, {3, 4}, 4, 4));
  const ir::Node& n = ctx.node();
  for (size_t i = 12; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) return ctx.ir_error("input[", i, "] is not supported");
  if (ctx.has_input(9) && n.attr_int("do_rotary") == 0) return ctx.ir_error("position_ids needs do_rotary = 1");
  if (ctx.has_input(1) != ctx.has_input(2))
    return ctx.ir_error("key and value must be given together (both absent: packed QKV in query)");
  const bool packed = !ctx.has_input(1);
  if (!ctx.has_input(5) || !ctx.has_input(6)) return ctx.ir_error("seqlens_k and total_sequence_length are required");
  if (n.attr_int("do_rotary") != 0 && (!ctx.has_input(7) || !ctx.has_input(8)))
    return ctx.ir_error("do_rotary = 1 needs cos_cache and sin_cache");
  const int64_t heads = n.attr_int("num_heads"), kv_heads = n.attr_int("kv_num_heads");
  if (heads <= 0 || kv_heads <= 0)
    return ctx.ir_error("num_heads = ", heads, ", kv_num_heads = ", kv_heads, ": both must be positive");
  const ValueType& q = ctx.input(0);
  const int64_t parts = packed ? heads + 2 * kv_heads : heads;  // head-size slices of a query row
  TSR_RETURN_IF_ERROR(require_split(ctx, packed ? "packed query (num_heads + 2 * kv_num_heads)" : "query", dim_or(q, 2), parts));
  if (!packed) TSR_RETURN_IF_ERROR(require_split(ctx, "key", dim_or(ctx.input(1), 2), kv_heads));
  if (heads % kv_heads != 0) return ctx.ir_error("num_heads ", heads, " is not a multiple of kv_num_heads ", kv_heads);
  const int64_t h = known_div(dim_or(q, 2), parts);
  int64_t present = -1;
  const Tensor* total = ctx.input_value(6);
  const int64_t p = ctx.has_input(3) ? dim_or(ctx.input(3), 2) : 0;
  if (total != nullptr && total->numel() == 1 && p >= 0) present = std::max<int64_t>(p, total->scalar_i64(0));
  ctx.set_output(0, q.dtype, {dim_or(q, 0), dim_or(q, 1), known_mul(heads, h)});
  for (size_t o = 1; o < 3 && o < ctx.num_outputs(); ++o) ctx.set_output(o, q.dtype, {dim_or(q, 0), kv_heads, present, h});
  if (ctx.num_outputs() > 3) {
    const int64_t mode = n.attr_int("qk_output");
    if (mode != 1 && mode != 2) return ctx.ir_error("output_qk needs qk_output = 1 (scores) or 2 (softmax), got ", mode);
    ctx.set_output(3, q.dtype, {dim_or(q, 0), heads, dim_or(q, 1), present});
  }
  return ok_status();
}

AttrSpec opt_float(const char* name) { return {name, AttrKind::kFloat, false}; }
AttrSpec opt_int(const char* name) { return {name, AttrKind::kInt, false}; }

}  // namespace

void register_attention_ops(OpRegistry& r) {
  TSR_IF_SELECTED("Attention") r.add({"Attention", "", 23, 3, 7, 1, 4,
         {int_attr("is_causal", 0), opt_int("kv_num_heads"), opt_int("q_num_heads"), int_attr("qk_matmul_output_mode", 0),
          opt_float("scale"), float_attr("softcap", 0.0), opt_int("softmax_precision"), int_attr("packed_qkv", 0)},
         infer_onnx_attention,
         "scaled dot-product attention (MHA/GQA/MQA, masks, KV cache, opset 24 nonpad_kv_seqlen)"});
  TSR_IF_SELECTED("RotaryEmbedding") r.add({"RotaryEmbedding", "", 23, 3, 4, 1, 1,
         {int_attr("interleaved", 0), int_attr("num_heads", 0), int_attr("rotary_embedding_dim", 0)}, infer_rotary,
         "rotary position embedding of [B, S, N*H] or [B, N, S, H] from cos/sin caches"});
  TSR_IF_SELECTED("com.microsoft::RotaryEmbedding") r.add({"com.microsoft::RotaryEmbedding", "com.microsoft", 1, 4, 4, 1, 1,
         {int_attr("interleaved", 0), int_attr("num_heads", 0), int_attr("rotary_embedding_dim", 0),
          float_attr("scale", 1.0), int_attr("is_packed_batching", 0)},
         infer_rotary, "onnxruntime contrib rotary position embedding (position_ids [B, S] or an offset [1])"});
  TSR_IF_SELECTED("com.microsoft::MultiHeadAttention") r.add({"com.microsoft::MultiHeadAttention", "com.microsoft", 1, 1, 10, 1, 4,
         {{"num_heads", AttrKind::kInt, true}, float_attr("scale", 0.0), float_attr("mask_filter_value", -10000.0),
          int_attr("unidirectional", 0)},
         infer_mha, "onnxruntime contrib multi-head attention (separate Q, K, V; bias, masks, KV cache)"});
  TSR_IF_SELECTED("com.microsoft::Attention") r.add({"com.microsoft::Attention", "com.microsoft", 1, 2, 8, 1, 2,
         {{"num_heads", AttrKind::kInt, true}, ints_attr("qkv_hidden_sizes", {}), int_attr("unidirectional", 0),
          float_attr("scale", 0.0), float_attr("mask_filter_value", -10000.0), int_attr("do_rotary", 0),
          int_attr("past_present_share_buffer", 0), int_attr("rotary_embedding_dim", 0)},
         infer_ms_attention, "onnxruntime contrib self-attention with the QKV projection (BERT / GPT-2 exports)"});
  TSR_IF_SELECTED("com.microsoft::GroupQueryAttention") r.add({"com.microsoft::GroupQueryAttention", "com.microsoft", 1, 1, 14, 1, 4,
         {{"num_heads", AttrKind::kInt, true}, {"kv_num_heads", AttrKind::kInt, true}, float_attr("scale", 0.0),
          int_attr("local_window_size", -1), int_attr("do_rotary", 0), int_attr("rotary_interleaved", 0),
          float_attr("softcap", 0.0), int_attr("smooth_softmax", 0), int_attr("qk_output", 0)},
         infer_gqa, "onnxruntime contrib grouped-query attention with a KV cache (causal, rotary, packed QKV, bias, sinks)"});
}

}  // namespace tsr::ops
