// quantize_fusion (optimize.h): onnxruntime quantize_dynamic's pattern (what transformers.js q8
// files contain)
//   (xq, xs, xz) = DynamicQuantizeLinear(x)
//   y = MatMulInteger(xq, W, xz, wz?)        W a constant 2-D u8/i8, wz a constant scalar or [N]
//   s = Mul(xs, ws)                          ws a constant f32 scalar or [N]
//   z = Mul(Cast(y, to=FLOAT), s)  [-> Add(z, b)]   b a constant f32 [N]
// becomes z = com.microsoft::DynamicQuantizeMatMul(x, W, ws, wz?, b?). The fused kernel quantizes x
// with DynamicQuantizeLinear's own function and computes float(acc) * (xs * ws[j]) (+ b[j]) in f32,
// the unfused graph's roundings (f32 products commute exactly), so outputs are bit-identical. One
// DynamicQuantizeLinear feeding several MatMulIntegers (Q, K, V) stays and runs once; each
// product becomes com.microsoft::MatMulIntegerToFloat(xq, W, xs, ws, xz, wz?, b?), the same
// arithmetic on the shared codes. The scale Mul (and an unshared DynamicQuantizeLinear) die in dce.
// Not fused (left as they are): a MatMulInteger whose A zero point is not the same
// DynamicQuantizeLinear's, non-constant W or zero point, W of rank > 2, a scale that is not
// xs * constant, a Cast/Mul/Add output read elsewhere, bias of another shape than [N].
// The same pattern around ConvInteger becomes tessera's DynamicQuantizeConv (opt_quantize_conv.cpp).
//
// The QDQ form (static quantization, onnxruntime's QDQ format):
//   QuantizeLinear(MatMul(DequantizeLinear(xq, xs, xz), DequantizeLinear(W, ws, wz)), ys, yz)
//     -> QLinearMatMul(xq, xs, xz, W, ws, wz, ys, yz)
//   QuantizeLinear(Conv(DQ(xq), DQ(W)[, DQ(B i32, xs * ws, 0)]), ys, yz) -> QLinearConv(..., B)
//   QuantizeLinear(Gemm(DQ(xq), DQ(W)[, DQ(C i32, xs * ws, 0)]), ys, yz)
//     -> com.microsoft::QGemm(xq, xs, xz, W, ws, wz, C, ys, yz)   (transA = 0, beta = 1)
// as onnxruntime's QDQ selectors do: the QLinear ops are what the QDQ format means (the integer
// product is exact where the f32 one rounds, so a value at a rounding tie may land one code apart
// from the unfused f32 graph; onnxruntime runs the same fused ops). Only with constant weights
// (scale scalar or per column of W for MatMul, per output channel for Conv), scalar activation
// and output parameters with explicit zero points, and a bias that DequantizeLinear gives from
// i32 with scale exactly xs * ws[m] (f32) and zero point 0; an f32 bias is not quantized here.
// A Relu or Clip between the op and the QuantizeLinear (what onnxruntime's quantizer and
// `tessera quantize` write for Conv -> Relu) is absorbed when the QuantizeLinear's saturation
// already does its work: Q(lo) is the lowest code and Q(hi) the highest (lo = 0 for Relu, Clip's
// constant bounds, absent = unbounded). Both are monotone, so Q(act(v)) = Q(v) for every v
// (NaN included: both give the lowest code), and the fused op is bit-identical.
// A MaxPool between a DequantizeLinear and a QuantizeLinear with the same parameters runs on the
// codes (fuse_qdq_maxpool), also bit-identical.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

// A constant f32 scalar ([] or [1]) or [n] vector.
bool is_f32_param(const Tensor* t, int64_t n) {
  return t && t->dtype() == DType::kF32 && t->rank() <= 1 && (t->numel() == 1 || t->numel() == n);
}

// `id`, or the value a chain of live Identity nodes copies into it.
int32_t through_identity(GraphIndex& ix, int32_t id) {
  for (int32_t p = ix.producer(id); p >= 0 && !ix.dead(p); p = ix.producer(id)) {
    const ir::Node& nd = ix.graph().nodes[size_t(p)];
    if (nd.op != "Identity" || nd.inputs.size() != 1 || nd.inputs[0] < 0) break;
    id = nd.inputs[0];
  }
  return id;
}

Expected<bool> fuse_dynamic_matmul(GraphIndex& ix, int32_t at) {
  ir::Graph& g = ix.graph();
  const ir::Node& mm = g.nodes[size_t(at)];
  if (mm.op != "MatMulInteger" || mm.inputs.size() < 3 || mm.outputs.size() != 1) return false;
  // A and its zero point: outputs 0 and 2 of one DynamicQuantizeLinear.
  const int32_t dq = ix.producer(mm.inputs[0]);
  if (dq < 0 || ix.dead(dq) || g.nodes[size_t(dq)].op != "DynamicQuantizeLinear") return false;
  const ir::Node& dql = g.nodes[size_t(dq)];
  if (dql.outputs.size() < 3 || dql.outputs[0] != mm.inputs[0] || dql.outputs[2] != mm.inputs[2] || dql.outputs[1] < 0 ||
      dql.outputs[2] < 0)
    return false;
  const Tensor* w = ix.constant(mm.inputs[1]);
  if (!w || w->rank() != 2 || (w->dtype() != DType::kU8 && w->dtype() != DType::kI8)) return false;
  const int64_t n = w->dim(1);
  const int32_t wz_id = mm.inputs.size() > 3 ? mm.inputs[3] : -1;
  const Tensor* wz = wz_id >= 0 ? ix.constant(wz_id) : nullptr;
  if (wz_id >= 0 && (!wz || wz->dtype() != w->dtype() || wz->rank() > 1 || (wz->numel() != 1 && wz->numel() != n)))
    return false;
  // Cast(to FLOAT) -> Mul(., xs * ws).
  const int32_t ci = ix.sole_consumer(mm.outputs[0]);
  if (ci < 0 || g.nodes[size_t(ci)].op != "Cast" || g.nodes[size_t(ci)].attr_int("to") != 1) return false;
  const ir::Node& cast = g.nodes[size_t(ci)];
  if (cast.outputs.size() != 1) return false;
  const int32_t mi = ix.sole_consumer(cast.outputs[0]);
  if (mi < 0 || g.nodes[size_t(mi)].op != "Mul" || g.nodes[size_t(mi)].inputs.size() != 2) return false;
  const ir::Node& mul = g.nodes[size_t(mi)];
  const int32_t s = mul.inputs[0] == cast.outputs[0] ? mul.inputs[1] : mul.inputs[0];
  if (s == cast.outputs[0]) return false;  // Mul(c, c)
  const int32_t si = ix.producer(s);
  if (si < 0 || ix.dead(si) || g.nodes[size_t(si)].op != "Mul" || g.nodes[size_t(si)].inputs.size() != 2) return false;
  const ir::Node& smul = g.nodes[size_t(si)];
  const int32_t xs = dql.outputs[1];
  int32_t ws_id = -1;
  if (smul.inputs[0] == xs) ws_id = smul.inputs[1];
  else if (smul.inputs[1] == xs) ws_id = smul.inputs[0];
  if (ws_id < 0 || !is_f32_param(ix.constant(ws_id), n)) return false;
  // An optional bias Add of a constant [N] (as is or through Identity nodes: exporters that
  // deduplicate equal initializers, e.g. torchvision's ViT, write Identity copies of one bias).
  int32_t out = mul.outputs[0], bias = -1, add_at = -1;
  const int32_t ai = ix.sole_consumer(mul.outputs[0]);
  if (ai >= 0 && g.nodes[size_t(ai)].op == "Add" && g.nodes[size_t(ai)].inputs.size() == 2) {
    const ir::Node& add = g.nodes[size_t(ai)];
    const int32_t other = through_identity(ix, add.inputs[0] == mul.outputs[0] ? add.inputs[1] : add.inputs[0]);
    const Tensor* b = ix.constant(other);
    if (other != mul.outputs[0] && b && b->dtype() == DType::kF32 && b->rank() == 1 && b->dim(0) == n) {
      bias = other;
      out = add.outputs[0];
      add_at = ai;
    }
  }
  // The Mul by a scalar or [N] and the Add of [N] broadcast nothing beyond the MatMulInteger's
  // output (rank >= 1, last dim N), so the fused node has its shape, known or not (dynamic
  // batch/sequence dims of transformers.js files).
  // x quantized for several MatMulIntegers (Q, K and V of one input): the DynamicQuantizeLinear
  // stays and runs once, each product reads its codes (com.microsoft::MatMulIntegerToFloat: the
  // same kernel and arithmetic, with A given quantized). Otherwise one fused node quantizes x.
  const bool shared = ix.uses(dql.outputs[0]) > 1;
  ir::Node fused = shared ? ir::Node{"com.microsoft::MatMulIntegerToFloat", 0, mm.name,
                                     {mm.inputs[0], mm.inputs[1], xs, ws_id, mm.inputs[2], wz_id, bias}, {out}, {}}
                          : ir::Node{"com.microsoft::DynamicQuantizeMatMul", 0, mm.name,
                                     {dql.inputs[0], mm.inputs[1], ws_id, wz_id, bias}, {out}, {}};
  if (bias < 0) fused.inputs.pop_back();
  if (bias < 0 && wz_id < 0) fused.inputs.pop_back();
  if (!shared) {
    // Keep the use counts right for the DynamicQuantizeLinear outputs (other MatMulIntegers may
    // still read them; dce removes them once unread).
    ix.replace_input(at, mm.inputs[0], -1);
    ix.replace_input(at, mm.inputs[2], -1);
  }
  g.nodes[size_t(at)] = std::move(fused);
  ix.set_producer(out, at);
  ix.kill(ci);
  ix.kill(mi);
  if (add_at >= 0) ix.kill(add_at);
  return true;
}

// A live DequantizeLinear producing `id`: its node, or null.
const ir::Node* dequantize_of(GraphIndex& ix, int32_t id) {
  const int32_t p = ix.producer(id);
  if (p < 0 || ix.dead(p)) return nullptr;
  const ir::Node& nd = ix.graph().nodes[size_t(p)];
  return nd.op == "DequantizeLinear" && nd.outputs.size() == 1 ? &nd : nullptr;
}

bool is_q8(DType t) { return t == DType::kU8 || t == DType::kI8; }

// A constant scalar f32 scale and an explicit constant scalar u8/i8 zero point of type `t` (or any
// 8-bit type when t is kUndefined).
bool scalar_params(GraphIndex& ix, const ir::Node& q, DType t) {
  if (q.inputs.size() < 3 || q.inputs[2] < 0) return false;
  const Tensor* s = ix.constant(q.inputs[1]);
  const Tensor* z = ix.constant(q.inputs[2]);
  return s && z && s->dtype() == DType::kF32 && s->numel() == 1 && s->rank() <= 1 && z->numel() == 1 &&
         z->rank() <= 1 && is_q8(z->dtype()) && (t == DType::kUndefined || z->dtype() == t);
}

// QuantizeLinear's code for v with scalar scale s and zero point z of type t (onnx: saturate(
// round_half_even(v / s) + z), computed in f32 as the CPU kernel does).
int32_t quantize_code(float v, float s, int32_t z, DType t) {
  const float lo = t == DType::kU8 ? 0.0f : -128.0f, hi = t == DType::kU8 ? 255.0f : 127.0f;
  return static_cast<int32_t>(std::min(hi, std::max(lo, std::nearbyint(v / s) + static_cast<float>(z))));
}

// `act` (a Relu or Clip read only by `q`) changes nothing after q's saturation.
bool activation_absorbed(GraphIndex& ix, const ir::Node& act, const ir::Node& q) {
  const Tensor* qs = ix.constant(q.inputs[1]);
  const Tensor* qz = ix.constant(q.inputs[2]);
  const float s = qs->data<float>()[0];
  const auto z = static_cast<int32_t>(qz->scalar_i64());
  const int32_t qmin = qz->dtype() == DType::kU8 ? 0 : -128, qmax = qz->dtype() == DType::kU8 ? 255 : 127;
  float lo = -INFINITY, hi = INFINITY;
  if (act.op == "Relu") {
    lo = 0.0f;
  } else if (act.op == "Clip" && act.attributes.empty()) {
    for (size_t k = 1; k < act.inputs.size() && k < 3; ++k) {
      if (act.inputs[k] < 0) continue;
      const Tensor* b = ix.constant(act.inputs[k]);
      if (!b || b->dtype() != DType::kF32 || b->numel() != 1) return false;
      (k == 1 ? lo : hi) = b->data<float>()[0];
    }
  } else {
    return false;
  }
  if (!(s > 0) || !std::isfinite(s)) return false;
  return (lo == -INFINITY || quantize_code(lo, s, z, qz->dtype()) == qmin) &&
         (hi == INFINITY || quantize_code(hi, s, z, qz->dtype()) == qmax);
}

// For q = QuantizeLinear at `at` (scalar constant parameters): the node whose output it alone
// reads (*op), through a Relu/Clip that alone reads that output and that q's saturation makes
// redundant (*act, else -1; activation_absorbed). False if q is no such QuantizeLinear.
bool quantized_producer(GraphIndex& ix, int32_t at, int32_t* op, int32_t* act) {
  const ir::Graph& g = ix.graph();
  const ir::Node& qn = g.nodes[size_t(at)];
  if (qn.op != "QuantizeLinear" || qn.outputs.size() != 1 || !scalar_params(ix, qn, DType::kUndefined)) return false;
  int32_t pi = ix.producer(qn.inputs[0]);
  if (pi < 0 || ix.dead(pi) || ix.sole_consumer(qn.inputs[0]) != at) return false;
  *act = -1;
  if (const ir::Node& a = g.nodes[size_t(pi)]; (a.op == "Relu" || a.op == "Clip") && !a.inputs.empty() &&
                                               a.outputs.size() == 1 && activation_absorbed(ix, a, qn)) {
    const int32_t op_at = ix.producer(a.inputs[0]);
    if (op_at < 0 || ix.dead(op_at) || ix.sole_consumer(a.inputs[0]) != pi) return false;
    *act = pi;
    pi = op_at;
  }
  *op = pi;
  return true;
}

Expected<bool> fuse_qdq(GraphIndex& ix, int32_t at) {
  ir::Graph& g = ix.graph();
  const ir::Node& qn = g.nodes[size_t(at)];
  int32_t pi = -1, act = -1;
  if (!quantized_producer(ix, at, &pi, &act)) return false;
  const ir::Node& op = g.nodes[size_t(pi)];
  const bool conv = op.op == "Conv", gemm = op.op == "Gemm";
  if ((!conv && !gemm && op.op != "MatMul") || op.outputs.size() != 1 || op.inputs.size() < 2) return false;
  // Gemm: QGemm's form (transA = 0; C, if any, added as is: beta = 1).
  const bool trans_b = gemm && op.attr_int("transB", 0) != 0;
  if (gemm && (op.attr_int("transA", 0) != 0 || (op.inputs.size() > 2 && op.inputs[2] >= 0 && op.attr_float("beta", 1.0) != 1.0)))
    return false;
  const ir::Node* dx = dequantize_of(ix, op.inputs[0]);
  const ir::Node* dw = dequantize_of(ix, op.inputs[1]);
  if (!dx || !dw || dx->inputs.size() < 3 || dw->inputs.empty()) return false;
  const ir::TensorInfo& xq = g.tensors[size_t(dx->inputs[0])];
  if (!is_q8(xq.dtype) || !scalar_params(ix, *dx, xq.dtype)) return false;
  const Tensor* w = ix.constant(dw->inputs[0]);
  const Tensor* ws = dw->inputs.size() > 1 ? ix.constant(dw->inputs[1]) : nullptr;
  const int32_t wz_id = dw->inputs.size() > 2 ? dw->inputs[2] : -1;
  const Tensor* wz = wz_id >= 0 ? ix.constant(wz_id) : nullptr;
  if (!w || !is_q8(w->dtype()) || !ws || ws->dtype() != DType::kF32 || !wz || wz->dtype() != w->dtype() ||
      wz->numel() != ws->numel() || ws->rank() > 1)
    return false;
  // Per-axis weight parameters must sit on the axis the QLinear op reads them along: B's columns
  // (MatMul, 2-D W, axis 1; Gemm: axis 0 of a transB weight) or the output channels (Conv, axis 0).
  if (gemm && w->rank() != 2) return false;
  const int64_t channels = conv || trans_b ? w->dim(0) : w->dim(w->rank() - 1);  // output channels / columns
  if (ws->numel() > 1) {
    const int64_t axis = dw->attr_int("axis", 1);
    const int64_t r = w->rank();
    const int64_t want = conv || trans_b ? 0 : r - 1;
    if (w->rank() < 1 || (conv ? false : r != 2) || (axis < 0 ? axis + r : axis) != want || ws->numel() != w->dim(want))
      return false;
  }
  int32_t bias = -1;
  if ((conv || gemm) && op.inputs.size() > 2 && op.inputs[2] >= 0) {
    const ir::Node* db = dequantize_of(ix, op.inputs[2]);
    if (!db || db->inputs.size() < 2) return false;
    const Tensor* bq = ix.constant(db->inputs[0]);
    const Tensor* bs = ix.constant(db->inputs[1]);
    const Tensor* bz = db->inputs.size() > 2 && db->inputs[2] >= 0 ? ix.constant(db->inputs[2]) : nullptr;
    if (db->inputs.size() > 2 && db->inputs[2] >= 0 && !bz) return false;
    if (!bq || bq->dtype() != DType::kI32 || bq->rank() != 1 || bq->numel() != channels || !bs ||
        bs->dtype() != DType::kF32 || bs->rank() > 1 || (bs->numel() != 1 && bs->numel() != bq->numel()))
      return false;
    for (int64_t i = 0; bz && i < bz->numel(); ++i)
      if (bz->scalar_f64(i) != 0) return false;
    // The bias scale must be xs * ws[m] in f32, bit for bit.
    const float xs = ix.constant(dx->inputs[1])->data<float>()[0];
    for (int64_t m = 0; m < bq->numel(); ++m) {
      const float want = xs * ws->data<float>()[ws->numel() > 1 ? m : 0];
      if (bs->data<float>()[bs->numel() > 1 ? m : 0] != want) return false;
    }
    bias = db->inputs[0];
  }
  if (gemm) {
    // com.microsoft::QGemm(A, as, az, B, bs, bz, C?, ys, yz) with alpha and transB.
    std::vector<ir::Attribute> attrs;
    for (const ir::Attribute& a : op.attributes)
      if (a.name == "alpha" || a.name == "transB") attrs.push_back(a);
    ir::Node fused{"com.microsoft::QGemm", 0, op.name,
                   {dx->inputs[0], dx->inputs[1], dx->inputs[2], dw->inputs[0], dw->inputs[1], wz_id, bias,
                    qn.inputs[1], qn.inputs[2]},
                   {qn.outputs[0]}, std::move(attrs)};
    g.nodes[size_t(at)] = std::move(fused);
    ix.kill(pi);
    if (act >= 0) ix.kill(act);
    return true;
  }
  ir::Node fused{conv ? "QLinearConv" : "QLinearMatMul", 0, op.name,
                 {dx->inputs[0], dx->inputs[1], dx->inputs[2], dw->inputs[0], dw->inputs[1], wz_id, qn.inputs[1],
                  qn.inputs[2]},
                 {qn.outputs[0]}, conv ? op.attributes : std::vector<ir::Attribute>{}};
  if (bias >= 0) fused.inputs.push_back(bias);
  g.nodes[size_t(at)] = std::move(fused);
  ix.kill(pi);
  if (act >= 0) ix.kill(act);
  return true;
}

// A residual Add on the codes: q = QuantizeLinear([Relu|Clip](Add(DequantizeLinear(a, sa, za),
// DequantizeLinear(b, sb, zb))), sc, zc) becomes q = com.microsoft::QLinearAdd(a, sa, za, b, sb, zb,
// sc, zc), as onnxruntime's QDQ transformer does: the fused op is what the QDQ format means, and
// it rounds as onnxruntime's kernel (backends/cpu/kernels/qadd.cpp), which may land one code
// apart from the unfused f32 graph at a rounding tie. Only with scalar constant parameters of one
// 8-bit type throughout, scale ratios sa / sc and sb / sc in [2^-14, 2^8) (where the kernel's f32
// sums are far from overflow; onnxruntime's limits for its fixed-point kernel), an activation only
// where q's saturation does its work (activation_absorbed; onnxruntime's ReluQuantFusion and
// ClipQuantFusion drop it there before fusing), and a and b of
// one fully known shape or one of them a single element (the broadcasts the kernel runs). The
// DequantizeLinears stay for their other readers (the skip path) and die in dce otherwise.
Expected<bool> fuse_qdq_add(GraphIndex& ix, int32_t at) {
  ir::Graph& g = ix.graph();
  const ir::Node& qn = g.nodes[size_t(at)];
  // The Add, through an absorbed Relu/Clip (ResNet's Add -> Relu) as for the convs.
  int32_t pi = -1, act = -1;
  if (!quantized_producer(ix, at, &pi, &act)) return false;
  const ir::Node& add = g.nodes[size_t(pi)];
  if (add.op != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
  const ir::Node* da = dequantize_of(ix, add.inputs[0]);
  const ir::Node* db = dequantize_of(ix, add.inputs[1]);
  const DType t = ix.constant(qn.inputs[2])->dtype();
  if (!da || !db || !scalar_params(ix, *da, t) || !scalar_params(ix, *db, t)) return false;
  const ir::TensorInfo& ta = g.tensors[size_t(da->inputs[0])];
  const ir::TensorInfo& tb = g.tensors[size_t(db->inputs[0])];
  if (ta.dtype != t || tb.dtype != t || !ta.has_shape || !tb.has_shape) return false;
  auto known = [](const Shape& s) { return std::all_of(s.begin(), s.end(), [](int64_t d) { return d >= 0; }); };
  auto single = [&](const Shape& s) { return known(s) && shape_numel(s) == 1; };
  if (!((ta.shape == tb.shape && known(ta.shape)) || single(ta.shape) || single(tb.shape))) return false;
  const float sc = ix.constant(qn.inputs[1])->data<float>()[0];
  for (const ir::Node* d : {da, db}) {
    const float r = ix.constant(d->inputs[1])->data<float>()[0] / sc;
    if (!(r >= 0x1p-14f && r < 256.0f)) return false;
  }
  ir::Node fused{"com.microsoft::QLinearAdd", 0, add.name,
                 {da->inputs[0], da->inputs[1], da->inputs[2], db->inputs[0], db->inputs[1], db->inputs[2],
                  qn.inputs[1], qn.inputs[2]},
                 {qn.outputs[0]}, {}};
  g.nodes[size_t(at)] = std::move(fused);
  ix.kill(pi);
  if (act >= 0) ix.kill(act);
  return true;
}

// MaxPool on the codes: y = MaxPool(DequantizeLinear(xq, s, z)) read by q = QuantizeLinear(y, s,
// z) (the same scalar scale, bit for bit, and zero point) becomes q = MaxPool(xq) and
// y = DequantizeLinear(q, s, z), the two nodes trading places (so y, if anything else reads it,
// e.g. a residual Add, is still there, and dies in dce otherwise). Exact: DequantizeLinear is
// increasing (s > 0), so the max of a dequantized window is the dequantized max (y unchanged bit
// for bit), and Q(DQ(v)) = v, since float(v - z) * s / s is within |v - z| * 2^-23 < 0.5 of v - z
// for a normal, finite s. Only where every window holds an input element (pads below the window's
// extent, floor mode), so that no window's max is -inf. onnxruntime's QDQ transformer runs such a
// MaxPool on the codes too.
Expected<bool> fuse_qdq_maxpool(GraphIndex& ix, int32_t at) {
  ir::Graph& g = ix.graph();
  const ir::Node& qn = g.nodes[size_t(at)];
  if (qn.op != "QuantizeLinear" || qn.outputs.size() != 1 || !scalar_params(ix, qn, DType::kUndefined)) return false;
  const int32_t y = qn.inputs[0];
  const int32_t pi = ix.producer(y);
  if (pi < 0 || ix.dead(pi) || pi > at) return false;
  const ir::Node& pool = g.nodes[size_t(pi)];
  if (pool.op != "MaxPool" || pool.outputs.size() != 1 || pool.inputs.size() != 1) return false;
  const ir::Node* dq = dequantize_of(ix, pool.inputs[0]);
  if (!dq || dq->inputs.size() < 3) return false;
  const Tensor* qz = ix.constant(qn.inputs[2]);
  if (!scalar_params(ix, *dq, qz->dtype()) || g.tensors[size_t(dq->inputs[0])].dtype != qz->dtype()) return false;
  const float s = ix.constant(qn.inputs[1])->data<float>()[0];
  if (!(s >= std::numeric_limits<float>::min() && s <= 1e30f) || ix.constant(dq->inputs[1])->data<float>()[0] != s ||
      ix.constant(dq->inputs[2])->scalar_i64() != qz->scalar_i64())
    return false;
  // Every window holds an input element.
  const std::string auto_pad = pool.attr_string("auto_pad", "NOTSET");
  if ((auto_pad != "NOTSET" && auto_pad != "VALID") || pool.attr_int("ceil_mode", 0) != 0) return false;
  const Ints k = pool.attr_ints("kernel_shape");
  const Ints d = pool.attr_ints("dilations");
  const Ints pads = pool.attr_ints("pads");
  if (k.empty() || (!d.empty() && d.size() != k.size()) || (!pads.empty() && pads.size() != 2 * k.size())) return false;
  for (size_t i = 0; i < k.size() && auto_pad == "NOTSET" && !pads.empty(); ++i) {
    const int64_t extent = (k[i] - 1) * (d.empty() ? 1 : d[i]) + 1;
    if (pads[i] >= extent || pads[i + k.size()] >= extent) return false;
  }
  // y's other readers must come after `at`, where y will be produced.
  for (int32_t n = pi + 1; n < at; ++n)
    if (!ix.dead(n))
      for (int32_t i : g.nodes[size_t(n)].inputs)
        if (i == y) return false;
  const int32_t xq = dq->inputs[0], dq_out = pool.inputs[0], q = qn.outputs[0];
  ir::Node& p = g.nodes[size_t(pi)];
  ix.replace_input(pi, dq_out, xq);
  p.outputs = {q};
  ix.set_producer(q, pi);
  ir::Node& back = g.nodes[size_t(at)];
  back.op = "DequantizeLinear";
  back.attributes.clear();
  ix.replace_input(at, y, q);
  back.outputs = {y};
  ix.set_producer(y, at);
  return true;
}

}  // namespace

Expected<int64_t> quantize_fusion(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t n) -> Expected<bool> {
    TSR_ASSIGN_OR_RETURN(const bool dynamic, fuse_dynamic_matmul(ix, n));
    if (dynamic) return true;
    TSR_ASSIGN_OR_RETURN(const bool conv, fuse_dynamic_conv(ix, n));
    if (conv) return true;
    TSR_ASSIGN_OR_RETURN(const bool pool, fuse_qdq_maxpool(ix, n));
    if (pool) return true;
    TSR_ASSIGN_OR_RETURN(const bool add, fuse_qdq_add(ix, n));
    if (add) return true;
    return fuse_qdq(ix, n);
  });
}

}  // namespace tsr::passes::opt
