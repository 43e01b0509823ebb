// fuse_dynamic_conv (part of quantize_fusion, optimize.h): onnxruntime quantize_dynamic's Conv
// pattern (its default op types include Conv; `tessera quantize --mode dynamic` writes the same)
//   (xq, xs, xz) = DynamicQuantizeLinear(x)
//   y = ConvInteger(xq, W, xz, wz?)          W a constant u8/i8 [M, C, k] or [M, C, kh, kw]
//   z = Mul(Cast(y, to=FLOAT), Mul(xs, ws))  ws a constant f32 scalar, or M values along the
//                                            output's channel axis ([M, 1(, 1)], [1, M, 1(, 1)])
//   [-> Add(z, b)]                           b a constant f32 of M values along the channel axis:
//                                            [1, M, 1(, 1)], [M, 1(, 1)], or onnxruntime's
//                                            Reshape(b [M], [1, -1, 1(, 1)]) of a constant
// becomes z = tessera DynamicQuantizeConv(x, W, ws, wz?, b [M]?) with ConvInteger's attributes, or,
// where other nodes read the codes too (two convs of one input), ConvIntegerToFloat(xq, W, xs, ws,
// xz, wz?, b?) on them (the DynamicQuantizeLinear then stays and runs once)
// (backends/cpu/kernels/qconv_dynamic.cpp). The kernel quantizes x with DynamicQuantizeLinear's own
// function, sums exactly in i32 and computes float(acc) * (xs * ws) (+ b[m]) with the unfused
// graph's roundings, so the outputs are bit-identical. Not fused (left as they are): group != 1
// (depthwise convs run ConvInteger's own kernel), dilations other than 1, a per-channel weight
// zero point, a Cast / Mul / Add output read elsewhere.
#include <cstring>
#include <string>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

// The M values of `b` when it broadcasts against a conv output of rank `rank` along the channel
// axis (1) only (any leading 1s, then M, then 1s to the end), as a [M] tensor; else an empty one.
Tensor channel_values(const Tensor& b, const Shape& shape, int64_t m, int64_t rank) {
  if (b.dtype() != DType::kF32 || b.numel() != m) return Tensor();
  const auto rb = static_cast<int64_t>(shape.size());
  if (rb < rank - 1 || rb > rank) return Tensor();
  for (int64_t k = 0; k < rb; ++k)
    if (shape[size_t(k)] != (rank - rb + k == 1 ? m : 1)) return Tensor();
  auto t = Tensor::empty(DType::kF32, {m});
  if (!t.ok()) return Tensor();
  std::memcpy(t->raw_mut(), b.raw(), size_t(m) * sizeof(float));
  return std::move(*t);
}

// The bias [M] that the Add's other input `id` holds (a constant, or a Reshape of a constant by a
// constant shape), or an empty tensor.
Tensor bias_of(GraphIndex& ix, int32_t id, int64_t m, int64_t rank) {
  if (const Tensor* b = ix.constant(id)) return channel_values(*b, b->shape(), m, rank);
  const int32_t p = ix.producer(id);
  if (p < 0 || ix.dead(p)) return Tensor();
  const ir::Node& r = ix.graph().nodes[size_t(p)];
  if (r.op != "Reshape" || r.inputs.size() != 2 || r.attr_int("allowzero", 0) != 0) return Tensor();
  const Tensor* b = ix.constant(r.inputs[0]);
  const Tensor* s = ix.constant(r.inputs[1]);
  if (!b || !s || s->dtype() != DType::kI64 || s->rank() != 1) return Tensor();
  Shape shape(size_t(s->numel()));
  int64_t known = 1, unknown = -1;
  for (int64_t k = 0; k < s->numel(); ++k) {
    const int64_t d = s->data<int64_t>()[k];
    if (d == -1 && unknown < 0) unknown = k;
    else if (d <= 0) return Tensor();  // 0 (copy a dim) or a second -1: not the form exporters write
    else known *= d;
    shape[size_t(k)] = d;
  }
  if (unknown >= 0) {
    if (known == 0 || b->numel() % known != 0) return Tensor();
    shape[size_t(unknown)] = b->numel() / known;
  }
  return channel_values(*b, shape, m, rank);
}

}  // namespace

Expected<bool> fuse_dynamic_conv(GraphIndex& ix, int32_t at) {
  ir::Graph& g = ix.graph();
  const ir::Node& ci = g.nodes[size_t(at)];
  if (ci.op != "ConvInteger" || ci.inputs.size() < 3 || ci.outputs.size() != 1) return false;
  const int32_t dq = ix.producer(ci.inputs[0]);
  if (dq < 0 || ix.dead(dq) || g.nodes[size_t(dq)].op != "DynamicQuantizeLinear") return false;
  const ir::Node& dql = g.nodes[size_t(dq)];
  if (dql.inputs.size() != 1 || dql.outputs.size() < 3 || dql.outputs[0] != ci.inputs[0] ||
      dql.outputs[2] != ci.inputs[2] || dql.outputs[1] < 0 || dql.outputs[2] < 0)
    return false;
  const Tensor* w = ix.constant(ci.inputs[1]);
  if (!w || (w->rank() != 3 && w->rank() != 4) || (w->dtype() != DType::kU8 && w->dtype() != DType::kI8) ||
      w->dim(0) < 1)
    return false;
  const int64_t m = w->dim(0), rank = w->rank();
  const int32_t wz_id = ci.inputs.size() > 3 ? ci.inputs[3] : -1;
  const Tensor* wz = wz_id >= 0 ? ix.constant(wz_id) : nullptr;
  if (wz_id >= 0 && (!wz || wz->dtype() != w->dtype() || wz->numel() != 1)) return false;
  if (ci.attr_int("group", 1) != 1) return false;
  for (int64_t d : ci.attr_ints("dilations"))
    if (d != 1) return false;
  // Cast(to FLOAT) -> Mul(., xs * ws).
  const int32_t cast_at = ix.sole_consumer(ci.outputs[0]);
  if (cast_at < 0 || g.nodes[size_t(cast_at)].op != "Cast" || g.nodes[size_t(cast_at)].attr_int("to") != 1 ||
      g.nodes[size_t(cast_at)].outputs.size() != 1)
    return false;
  const int32_t cast_out = g.nodes[size_t(cast_at)].outputs[0];
  const int32_t mul_at = ix.sole_consumer(cast_out);
  if (mul_at < 0 || g.nodes[size_t(mul_at)].op != "Mul" || g.nodes[size_t(mul_at)].inputs.size() != 2) return false;
  const ir::Node& mul = g.nodes[size_t(mul_at)];
  const int32_t s = mul.inputs[0] == cast_out ? mul.inputs[1] : mul.inputs[0];
  if (s == cast_out) return false;  // Mul(c, c)
  const int32_t smul_at = ix.producer(s);
  if (smul_at < 0 || ix.dead(smul_at) || g.nodes[size_t(smul_at)].op != "Mul" ||
      g.nodes[size_t(smul_at)].inputs.size() != 2)
    return false;
  const ir::Node& smul = g.nodes[size_t(smul_at)];
  const int32_t xs = dql.outputs[1];
  const int32_t ws_id = smul.inputs[0] == xs ? smul.inputs[1] : smul.inputs[1] == xs ? smul.inputs[0] : -1;
  const Tensor* ws = ws_id >= 0 ? ix.constant(ws_id) : nullptr;
  if (!ws || ws->dtype() != DType::kF32) return false;
  // A per-channel scale ([M, 1, ...] or [1, M, 1, ...], along the output's channel axis) as [M].
  Tensor ws_m;
  if (ws->numel() == 1) {
    if (ws->rank() > rank) return false;  // would broadcast the output to a higher rank
  } else {
    ws_m = channel_values(*ws, ws->shape(), m, rank);
    if (ws_m.numel() != m) return false;
  }
  // An optional bias Add of M values along the channel axis.
  int32_t out = mul.outputs[0], add_at = -1;
  Tensor bias;
  if (const int32_t ai = ix.sole_consumer(mul.outputs[0]);
      ai >= 0 && g.nodes[size_t(ai)].op == "Add" && g.nodes[size_t(ai)].inputs.size() == 2) {
    const ir::Node& add = g.nodes[size_t(ai)];
    const int32_t other = add.inputs[0] == mul.outputs[0] ? add.inputs[1] : add.inputs[0];
    if (other != mul.outputs[0]) bias = bias_of(ix, other, m, rank);
    if (bias.numel() == m) {
      out = add.outputs[0];
      add_at = ai;
    }
  }
  const std::string name = ci.name;
  const std::vector<ir::Attribute> attrs = ci.attributes;
  const int32_t x = dql.inputs[0], w_id = ci.inputs[1];
  auto add_vector = [&](const std::string& suffix, Tensor t) {
    ir::TensorInfo info;
    info.name = g.tensors[size_t(out)].name + suffix;
    info.dtype = DType::kF32;
    info.has_shape = true;
    info.shape = {m};
    info.constant = std::move(t);
    return g.add_tensor(std::move(info));  // may reallocate g.tensors (no references held)
  };
  const int32_t b_id = add_at >= 0 ? add_vector("_bias", std::move(bias)) : -1;
  const int32_t w_scale = ws_m.numel() == m ? add_vector("_w_scale", std::move(ws_m)) : ws_id;
  // x quantized for several convs (a ResNet block's first conv and its downsample): the
  // DynamicQuantizeLinear stays and runs once, each conv reads its codes (ConvIntegerToFloat).
  const bool shared = ix.uses(ci.inputs[0]) > 1;
  const int32_t xq = ci.inputs[0], xz = ci.inputs[2], xs_id = xs;
  ir::Node fused = shared ? ir::Node{"ConvIntegerToFloat", 0, name, {xq, w_id, xs_id, w_scale, xz, wz_id, b_id}, {out}, attrs}
                          : ir::Node{"DynamicQuantizeConv", 0, name, {x, w_id, w_scale, wz_id, b_id}, {out}, attrs};
  if (b_id < 0) fused.inputs.pop_back();
  if (b_id < 0 && wz_id < 0) fused.inputs.pop_back();
  if (!shared) {
    // The ConvInteger's reads of the DynamicQuantizeLinear's outputs go (dce removes it once unread).
    ix.replace_input(at, xq, -1);
    ix.replace_input(at, xz, -1);
  }
  g.nodes[size_t(at)] = std::move(fused);
  ix.set_producer(out, at);
  ix.kill(cast_at);
  ix.kill(mul_at);
  if (add_at >= 0) ix.kill(add_at);
  return true;
}

}  // namespace tsr::passes::opt
