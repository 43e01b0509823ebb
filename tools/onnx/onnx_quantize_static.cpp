// The static (QDQ) mode of `tessera quantize` (onnx_quantize.h; docs/quantization.md): which
// nodes it rewrites (static_targets) and the rewrite (quantize_static).
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tools/onnx/onnx_quantize.h"
#include "tools/onnx/onnx_quantize_util.h"

namespace tsr::onnx_quantize {

using namespace detail;

namespace {

// The node index of a Relu or Clip with constant (or absent) bounds that is the only reader of
// `y` (which is no graph output), else -1.
int sole_activation(const onnx::GraphProto& g, const std::unordered_map<std::string, const TensorProto*>& inits,
                    const std::string& y) {
  for (const auto& v : g.output())
    if (v.name() == y) return -1;
  int reader = -1, readers = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto& n = g.node(i);
    for (const auto& in : n.input()) readers += in == y ? 1 : 0;
    for (const auto& a : n.attribute())  // a subgraph may read y too
      if (a.has_g() || a.graphs_size() > 0) readers += 2;
    if (std::find(n.input().begin(), n.input().end(), y) != n.input().end()) reader = i;
  }
  if (readers != 1 || reader < 0) return -1;
  const NodeProto& a = g.node(reader);
  if (a.output_size() != 1 || a.input(0) != y) return -1;
  if (a.op_type() == "Relu") return reader;
  if (a.op_type() != "Clip" || a.attribute_size() != 0) return -1;  // opset >= 11: bounds are inputs
  for (int k = 1; k < a.input_size(); ++k)
    if (!a.input(k).empty() && !inits.count(a.input(k))) return -1;
  return reader;
}

// Residual Adds, quantized as onnxruntime's quantize_static (QDQ) does: an Add of two activations
// (no constant input) of which at least one is a quantized output (of a Conv/MatMul/Gemm target or
// of an earlier such Add) gets QuantizeLinear -> DequantizeLinear on its output (after a sole
// Relu/Clip, as for the weight targets), and every input it reads through a DequantizeLinear. Its
// sum then reaches every reader (the next conv, the next residual Add) as codes, and
// DQ -> Add -> Q runs as one QLinearAdd in both runtimes. Adds of other tensors (a bias, a
// transformer's residual stream after a LayerNorm) stay f32. Not with --op-types lacking "Add",
// nor for --nodes-exclude names.
void add_residual_targets(const onnx::GraphProto& g, const Options& o,
                          const std::unordered_map<std::string, const TensorProto*>& inits,
                          std::vector<StaticTarget>& targets) {
  if (!o.op_types.empty() && std::find(o.op_types.begin(), o.op_types.end(), "Add") == o.op_types.end()) return;
  std::unordered_set<std::string> quantized;
  for (const auto& t : targets) quantized.insert(t.quantized_output());
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto& n = g.node(i);
    if (n.op_type() != "Add" || !(n.domain().empty() || n.domain() == "ai.onnx") || excluded(o, n) ||
        n.input_size() != 2 || n.output_size() != 1 || n.input(0).empty() || n.input(1).empty() ||
        n.input(0) == n.input(1))
      continue;
    if (inits.count(n.input(0)) || inits.count(n.input(1))) continue;
    if (!quantized.count(n.input(0)) && !quantized.count(n.input(1))) continue;
    StaticTarget t{.node = i, .x = n.input(0), .y = n.output(0), .add = true, .x2 = n.input(1)};
    t.act = sole_activation(g, inits, t.y);
    if (t.act >= 0) t.y_act = g.node(t.act).output(0);
    quantized.insert(t.quantized_output());
    targets.push_back(std::move(t));
  }
}

}  // namespace

namespace detail {

std::vector<StaticTarget> static_targets(const onnx::GraphProto& g, const Options& o, Report* report) {
  static const std::vector<std::string> kOps = {"Conv", "MatMul", "Gemm"};
  const auto inits = initializer_map(g);
  std::vector<StaticTarget> out;
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto& n = g.node(i);
    if (!selected(o, n, kOps) || n.op_type() == "Add") continue;  // Adds: add_residual_targets
    if (report) ++report->candidates;
    auto skip = [&](const std::string& why) {
      if (report) report->skipped.push_back(str_cat(describe(n), ": ", why));
    };
    if (std::find(kOps.begin(), kOps.end(), n.op_type()) == kOps.end()) {
      skip("static mode quantizes Conv, MatMul and Gemm only");
      continue;
    }
    if (excluded(o, n)) {
      skip("excluded (--nodes-exclude)");
      continue;
    }
    if (n.input_size() < 2 || n.output_size() < 1) continue;
    StaticTarget t{i, n.input(0), n.input(1), "", n.output(0), 0};
    if (inits.count(t.x)) {
      skip("input 0 is a constant");
      continue;
    }
    auto w = inits.find(t.w);
    if (w == inits.end() || w->second->data_type() != TensorProto::FLOAT) {
      skip("weight is not a constant float32 initializer");
      continue;
    }
    const int rank = w->second->dims_size();
    int64_t numel = 1;
    for (int64_t d : w->second->dims()) numel *= d;
    if (numel < o.min_weight_elements) {
      skip(str_cat("weight has ", numel, " elements (< --min-weight-elements)"));
      continue;
    }
    if (n.op_type() == "Conv") {
      if (rank < 3) {
        skip("weight rank < 3");
        continue;
      }
      t.axis = 0;
      if (n.input_size() > 2) t.bias = n.input(2);
    } else if (n.op_type() == "MatMul") {
      if (rank != 2) {
        skip("weight is not rank 2");
        continue;
      }
      t.axis = 1;
    } else {  // Gemm
      if (int_attr(n, "transA", 0) != 0) {
        skip("transA=1");
        continue;
      }
      t.axis = int_attr(n, "transB", 0) ? 0 : 1;
      // The bias goes to i32 only where it is added as is (alpha = beta = 1, 1-D of N).
      if (n.input_size() > 2 && float_attr(n, "alpha", 1.f) == 1.f && float_attr(n, "beta", 1.f) == 1.f) {
        auto b = inits.find(n.input(2));
        if (b != inits.end() && b->second->dims_size() == 1 && b->second->dims(0) == w->second->dims(t.axis))
          t.bias = n.input(2);
      }
    }
    if (!t.bias.empty()) {
      auto b = inits.find(t.bias);
      if (b == inits.end() || b->second->data_type() != TensorProto::FLOAT) t.bias.clear();
    }
    t.act = sole_activation(g, inits, t.y);
    if (t.act >= 0) t.y_act = g.node(t.act).output(0);
    out.push_back(std::move(t));
  }
  add_residual_targets(g, o, inits, out);
  return out;
}

}  // namespace detail

Status quantize_static(onnx::ModelProto& model, const Options& o, const Ranges& ranges, Report& report) {
  if (const int64_t opset = default_opset(model); opset < 13)
    return unsupported("static (QDQ) quantization needs opset >= 13 (per-axis DequantizeLinear); the model has opset ",
                       opset);
  onnx::GraphProto& g = *model.mutable_graph();
  const std::vector<StaticTarget> targets = static_targets(g, o, &report);
  if (Status s = require_nodes({report.candidates, targets.size(), report.skipped},
                               "static: Conv/MatMul/Gemm with a constant float32 weight");
      !s.ok())
    return s;
  const auto inits = initializer_map(g);
  Names names(g);
  std::vector<TensorProto> new_inits;
  std::vector<NodeProto> prologue;  // Q/DQ of graph inputs, DequantizeLinear of constants
  std::unordered_map<int, const StaticTarget*> by_node, by_act;
  std::unordered_set<std::string> target_outputs;
  for (const auto& t : targets) {
    by_node[t.node] = &t;
    if (t.act >= 0) by_act[t.act] = &t;
    target_outputs.insert(t.quantized_output());
  }
  std::unordered_map<std::string, std::pair<float, uint8_t>> qparams;  // activation -> (scale, zp)
  auto params = [&](const std::string& name) -> Expected<std::pair<float, uint8_t>> {
    if (auto it = qparams.find(name); it != qparams.end()) return it->second;
    auto r = ranges.find(name);
    if (r == ranges.end()) return internal_error("no calibration range for \"", name, "\"");
    return qparams[name] = activation_params(r->second);
  };
  // QuantizeLinear(from) -> DequantizeLinear -> to, with the parameters of `range_of`.
  auto qdq = [&](const std::string& from, const std::string& to, const std::string& range_of,
                 std::vector<NodeProto>& out) -> Status {
    auto p = params(range_of);
    if (!p.ok()) return p.status();
    const std::string s = names.fresh(range_of + "_scale"), z = names.fresh(range_of + "_zero_point");
    new_inits.push_back(make_f32(s, {}, {p->first}));
    new_inits.push_back(make_tensor(z, TensorProto::UINT8, {}, &p->second, 1));
    const std::string q = names.fresh(range_of + "_QuantizeLinear_Output");
    out.push_back(make_node("QuantizeLinear", names.fresh(range_of + "_QuantizeLinear"), {from, s, z}, {q}));
    out.push_back(make_node("DequantizeLinear", names.fresh(range_of + "_DequantizeLinear"), {q, s, z}, {to}));
    return ok_status();
  };

  // Inputs of targets that no target produces get their QDQ after their producer (or first,
  // for graph inputs), read through a new name by the targets only.
  std::unordered_map<std::string, std::string> input_dq;
  std::unordered_set<std::string> produced;
  for (const auto& n : g.node())
    for (const auto& s : n.output()) produced.insert(s);
  for (const auto& t : targets)
    for (const std::string* x : {&t.x, &t.x2}) {
      if (x->empty() || target_outputs.count(*x) || input_dq.count(*x)) continue;
      input_dq[*x] = names.fresh(*x + "_DequantizeLinear_Output");
      if (!produced.count(*x))
        if (Status s = qdq(*x, input_dq[*x], *x, prologue); !s.ok()) return s;
    }

  std::unordered_map<std::string, std::string> weight_dq;  // "name/axis" -> DequantizeLinear output
  std::vector<NodeProto> body;
  for (int i = 0; i < g.node_size(); ++i) {
    NodeProto n = g.node(i);
    auto it = by_node.find(i);
    if (auto a = by_act.find(i); a != by_act.end()) {
      // The activation after a target: act -> Y_pre -> Q -> DQ -> Y.
      const std::string& y = a->second->y_act;
      const std::string pre = names.fresh(y + "_pre_quant");
      n.set_output(0, pre);
      body.push_back(n);
      if (Status s = qdq(pre, y, y, body); !s.ok()) return s;
    } else if (it == by_node.end()) {
      body.push_back(n);
    } else if (const StaticTarget& t = *it->second; t.add) {
      // A residual Add: inputs through their DequantizeLinear, output as a weight target's
      // (after its activation instead, when it has one).
      for (int k = 0; k < 2; ++k)
        if (auto d = input_dq.find(n.input(k)); d != input_dq.end()) n.set_input(k, d->second);
      const std::string pre = t.act >= 0 ? t.y : names.fresh(t.y + "_pre_quant");
      n.set_output(0, pre);
      body.push_back(n);
      if (Status s = t.act < 0 ? qdq(pre, t.y, t.y, body) : ok_status(); !s.ok()) return s;
      ++report.residual_adds;
    } else {
      if (auto d = input_dq.find(t.x); d != input_dq.end()) n.set_input(0, d->second);
      // Weight: s8 symmetric per output channel + DequantizeLinear(axis).
      auto w = read_weight(inits, t.w, "weight");
      if (!w.ok()) return w.status().with_context(describe(n));
      const std::string key = str_cat(t.w, "/", t.axis);
      QuantizedWeight q = quantize_weight(w->values.data(), w->dims, t.axis, true);
      if (!weight_dq.count(key)) {
        const std::string wq = names.fresh(t.w + "_quantized"), ws = names.fresh(t.w + "_scale"),
                          wz = names.fresh(t.w + "_zero_point"), out = names.fresh(t.w + "_DequantizeLinear_Output");
        const std::vector<int64_t> cdims{static_cast<int64_t>(q.scale.size())};
        new_inits.push_back(make_tensor(wq, TensorProto::INT8, w->dims, q.q.data(), q.q.size()));
        new_inits.push_back(make_f32(ws, cdims, q.scale));
        new_inits.push_back(make_tensor(wz, TensorProto::INT8, cdims, q.zero_point.data(), q.zero_point.size()));
        NodeProto dq = make_node("DequantizeLinear", names.fresh(t.w + "_DequantizeLinear"), {wq, ws, wz}, {out});
        set_int_attr(dq, "axis", t.axis);
        prologue.push_back(std::move(dq));
        weight_dq[key] = out;
      }
      n.set_input(1, weight_dq[key]);
      // Bias: i32 with scale x_scale * w_scale[c], zero point 0.
      if (!t.bias.empty()) {
        auto b = read_weight(inits, t.bias, "bias");
        auto xp = params(t.x);
        if (!xp.ok()) return xp.status();
        if (b.ok() && b->values.size() == q.scale.size()) {
          std::vector<int32_t> bq(b->values.size());
          std::vector<float> bs(b->values.size());
          for (size_t c = 0; c < bq.size(); ++c) {
            bs[c] = xp->first * q.scale[c];
            const double v = std::nearbyint(static_cast<double>(b->values[c]) / bs[c]);
            bq[c] = static_cast<int32_t>(std::clamp(v, -2147483648.0, 2147483647.0));
          }
          const std::string bqn = names.fresh(t.bias + "_quantized"), bsn = names.fresh(t.bias + "_scale"),
                            out = names.fresh(t.bias + "_DequantizeLinear_Output");
          const std::vector<int64_t> cdims{static_cast<int64_t>(bq.size())};
          new_inits.push_back(make_tensor(bqn, TensorProto::INT32, cdims, bq.data(), bq.size() * 4));
          new_inits.push_back(make_f32(bsn, cdims, bs));
          NodeProto dq = make_node("DequantizeLinear", names.fresh(t.bias + "_DequantizeLinear"), {bqn, bsn}, {out});
          set_int_attr(dq, "axis", 0);
          prologue.push_back(std::move(dq));
          n.set_input(2, out);
        }
      }
      // Output: op -> Y_pre -> Q -> DQ -> Y, so Y keeps its name for every consumer (after the
      // activation instead, when the target has one).
      if (t.act >= 0) {
        body.push_back(n);
      } else {
        const std::string pre = names.fresh(t.y + "_pre_quant");
        n.set_output(0, pre);
        body.push_back(n);
        if (Status s = qdq(pre, t.y, t.y, body); !s.ok()) return s;
      }
      ++report.quantized;
    }
    // QDQ of target inputs produced by this (non-target) node.
    if (it == by_node.end())
      for (const auto& out : g.node(i).output())
        if (auto d = input_dq.find(out); d != input_dq.end())
          if (Status s = qdq(out, d->second, out, body); !s.ok()) return s;
  }
  g.clear_node();
  for (auto& n : prologue) *g.add_node() = std::move(n);
  for (auto& n : body) *g.add_node() = std::move(n);
  for (auto& t : new_inits) *g.add_initializer() = std::move(t);
  remove_unused_initializers(g);
  return ok_status();
}

}  // namespace tsr::onnx_quantize
