// The ONNX rewrites of `tessera quantize` (onnx_quantize.h; docs/quantization.md).
#include "tools/onnx/onnx_quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <onnx/version_converter/convert.h>

#include "tools/onnx/onnx_import.h"
#include "tools/onnx/onnx_quantize_util.h"
#include "tools/onnx/onnx_tensor.h"

namespace tsr::onnx_quantize {

namespace detail {

int64_t default_opset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0;
}

size_t initializer_bytes(const onnx::GraphProto& g) {
  size_t total = 0;
  for (const TensorProto& t : g.initializer()) {
    if (t.has_raw_data()) {
      total += t.raw_data().size();
      continue;
    }
    total += static_cast<size_t>(t.float_data_size()) * 4 + static_cast<size_t>(t.int32_data_size()) * 4 +
             static_cast<size_t>(t.int64_data_size()) * 8 + static_cast<size_t>(t.double_data_size()) * 8 +
             static_cast<size_t>(t.uint64_data_size()) * 8;
  }
  return total;
}


TensorProto make_tensor(const std::string& name, int32_t dtype, const std::vector<int64_t>& dims, const void* data,
                        size_t bytes) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(dtype);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(static_cast<const char*>(data), bytes));
  return t;
}

TensorProto make_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  return make_tensor(name, TensorProto::FLOAT, dims, v.data(), v.size() * sizeof(float));
}

NodeProto make_node(const std::string& op, const std::string& name, std::vector<std::string> inputs,
                    std::vector<std::string> outputs) {
  NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (auto& s : inputs) n.add_input(std::move(s));
  for (auto& s : outputs) n.add_output(std::move(s));
  return n;
}

void set_int_attr(NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

const onnx::AttributeProto* find_attr(const NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t int_attr(const NodeProto& n, const std::string& name, int64_t dflt) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : dflt;
}
float float_attr(const NodeProto& n, const std::string& name, float dflt) {
  const auto* a = find_attr(n, name);
  return a ? a->f() : dflt;
}


QuantizedWeight quantize_weight(const float* w, const std::vector<int64_t>& dims, int axis, bool s8) {
  int64_t outer = 1, channels = 1, inner = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (axis < 0) inner *= dims[d];
    else if (static_cast<int>(d) < axis) outer *= dims[d];
    else if (static_cast<int>(d) == axis) channels = dims[d];
    else inner *= dims[d];
  }
  QuantizedWeight r;
  r.q.resize(static_cast<size_t>(outer * channels * inner));
  r.scale.resize(static_cast<size_t>(channels));
  r.zero_point.resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    float lo = 0.f, hi = 0.f;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const float v = w[(o * channels + c) * inner + i];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    float scale;
    int zp;
    if (s8) {
      const float amax = std::max(-lo, hi);
      scale = amax > 0.f ? amax / 127.f : 1.f;
      zp = 0;
    } else {
      scale = hi > lo ? (hi - lo) / 255.f : 1.f;
      zp = static_cast<int>(std::clamp(std::nearbyint(-lo / scale), 0.f, 255.f));
    }
    r.scale[static_cast<size_t>(c)] = scale;
    r.zero_point[static_cast<size_t>(c)] = s8 ? uint8_t{0} : static_cast<uint8_t>(zp);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const size_t k = static_cast<size_t>((o * channels + c) * inner + i);
        const float q = std::nearbyint(w[k] / scale) + static_cast<float>(zp);
        if (s8) r.q[k] = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(q, -127.f, 127.f)));
        else r.q[k] = static_cast<uint8_t>(std::clamp(q, 0.f, 255.f));
      }
  }
  return r;
}

// u8 asymmetric activation parameters for a calibrated range (0 kept inside, as ORT does).
std::pair<float, uint8_t> activation_params(std::pair<float, float> range) {
  const float lo = std::min(0.f, range.first), hi = std::max(0.f, range.second);
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {1.f, uint8_t{0}};
  const float scale = (hi - lo) / 255.f;
  return {scale, static_cast<uint8_t>(std::clamp(std::nearbyint(-lo / scale), 0.f, 255.f))};
}

bool selected(const Options& o, const NodeProto& n, const std::vector<std::string>& default_ops) {
  const auto& ops = o.op_types.empty() ? default_ops : o.op_types;
  if (std::find(ops.begin(), ops.end(), n.op_type()) == ops.end()) return false;
  return n.domain().empty() || n.domain() == "ai.onnx";
}

bool excluded(const Options& o, const NodeProto& n) {
  return std::find(o.nodes_exclude.begin(), o.nodes_exclude.end(), n.name()) != o.nodes_exclude.end();
}

std::string describe(const NodeProto& n) { return str_cat("node \"", n.name(), "\" (", n.op_type(), ")"); }


Expected<Weight> read_weight(const std::unordered_map<std::string, const TensorProto*>& inits, const std::string& name,
                             const std::string& what) {
  auto it = inits.find(name);
  if (name.empty() || it == inits.end()) return invalid_argument(what, " is not a constant initializer");
  if (it->second->data_type() != TensorProto::FLOAT) return invalid_argument(what, " is not float32");
  auto t = onnx_import::tensor_from_proto(*it->second, name);
  if (!t.ok()) return t.status();
  Weight w;
  w.dims.assign(t->shape().begin(), t->shape().end());
  w.values.assign(t->data<float>(), t->data<float>() + t->numel());
  return w;
}

// Drops initializers no node (subgraphs included) reads any more and that are no graph output.
void remove_unused_initializers(onnx::GraphProto& g) {
  std::unordered_set<std::string> used;
  std::vector<const onnx::GraphProto*> stack{&g};
  while (!stack.empty()) {
    const onnx::GraphProto* cur = stack.back();
    stack.pop_back();
    for (const auto& n : cur->node()) {
      for (const auto& s : n.input()) used.insert(s);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) stack.push_back(&a.g());
        for (const auto& sg : a.graphs()) stack.push_back(&sg);
      }
    }
  }
  for (const auto& o : g.output()) used.insert(o.name());
  // Graph inputs naming a dropped initializer (IR < 4 lists initializers as inputs) go too, or
  // they would become required inputs.
  std::unordered_set<std::string> dropped;
  auto* inits = g.mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i)
    if (!used.count(inits->Get(i).name())) {
      dropped.insert(inits->Get(i).name());
      inits->DeleteSubrange(i, 1);
    }
  auto* inputs = g.mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i)
    if (dropped.count(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
}

std::unordered_map<std::string, const TensorProto*> initializer_map(const onnx::GraphProto& g) {
  std::unordered_map<std::string, const TensorProto*> m;
  for (const auto& t : g.initializer()) m[t.name()] = &t;
  return m;
}

int32_t onnx_dtype(DType t) {
  switch (t) {
    case DType::kF32: return TensorProto::FLOAT;
    case DType::kF16: return TensorProto::FLOAT16;
    case DType::kF64: return TensorProto::DOUBLE;
    case DType::kI64: return TensorProto::INT64;
    case DType::kI32: return TensorProto::INT32;
    case DType::kBool: return TensorProto::BOOL;
    case DType::kU8: return TensorProto::UINT8;
    case DType::kI8: return TensorProto::INT8;
    default: return 0;
  }
}

// Records the dtypes and shapes Tessera's importer infers as value_info: ONNX's version converter
// needs some (Softmax 12 -> 13), and ONNX's own inference stops at ops it cannot see through in
// old opsets. Best effort: a model the importer rejects keeps its value_info as is.
void add_inferred_value_info(onnx::ModelProto& model) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return;
  auto ir = onnx_import::import_onnx_bytes(bytes, "model");
  if (!ir.ok() || ir->graphs.empty()) return;
  onnx::GraphProto& g = *model.mutable_graph();
  std::unordered_set<std::string> known;
  for (const auto& v : g.input()) known.insert(v.name());
  for (const auto& v : g.output()) known.insert(v.name());
  for (const auto& v : g.value_info()) known.insert(v.name());
  for (const auto& t : g.initializer()) known.insert(t.name());
  for (const ir::TensorInfo& t : ir->graphs[0].tensors) {
    const int32_t type = onnx_dtype(t.dtype);
    if (t.constant.defined() || !t.has_shape || type == 0 || t.name.empty() || known.count(t.name)) continue;
    auto* v = g.add_value_info();
    v->set_name(t.name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : t.shape) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
    }
  }
}

// Constant nodes holding a tensor (PaddlePaddle's exporter stores every weight so) become
// initializers, where the rewrites look for weights.
void constants_to_initializers(onnx::GraphProto& g) {
  auto* nodes = g.mutable_node();
  int kept = 0;
  for (int i = 0; i < nodes->size(); ++i) {
    NodeProto& n = *nodes->Mutable(i);
    const bool plain = n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx") &&
                       n.output_size() == 1 && n.attribute_size() == 1 && n.attribute(0).name() == "value" &&
                       n.attribute(0).has_t();
    if (plain) {
      TensorProto* t = g.add_initializer();
      *t = n.attribute(0).t();
      t->set_name(n.output(0));
      continue;
    }
    if (kept != i) nodes->SwapElements(kept, i);
    ++kept;
  }
  nodes->DeleteSubrange(kept, nodes->size() - kept);
}

Status require_nodes(const Report& report, const char* what) {
  if (report.quantized > 0) return ok_status();
  std::string why;
  for (const auto& s : report.skipped) why += "\n  " + s;
  return invalid_argument("no node to quantize (", what, "): ", report.candidates, " candidate node(s)",
                          report.candidates ? ":" : "", why);
}

// A DynamicQuantizeLinear's outputs: the codes, the scale and the zero point.
struct DynQ {
  std::string q, scale, zp;
};

// The dynamic rewrite of one Conv `n` with a constant f32 weight (onnxruntime quantize_dynamic's
// ConvInteger form): DynamicQuantizeLinear(x) (from `quantized_input`, shared) -> ConvInteger(x_q,
// W_q, x_zp, w_zp) with the Conv's attributes -> Cast(f32) -> Mul(., Mul(x_scale, w_scale)), and
// for a bias Add(., Reshape(B, [1, -1, 1, ...])). The weight is quantized per tensor (onnxruntime's
// quantizer), or with --per-channel and s8 weights per output channel: W_scale [M, 1, ...] (rank
// of W less one, so that the Mul broadcasts it along the output's channel axis) and one zero
// point 0 (onnxruntime's ConvInteger takes a scalar weight zero point only, so u8 weights stay per
// tensor). Appends to `nodes` / `inits`; an error says why the Conv stays f32.
template <class QuantizeInput>
Status dynamic_conv(const NodeProto& n, const Options& o, const Initializers& inits, Names& names,
                    QuantizeInput&& quantized_input, std::vector<NodeProto>& nodes, std::vector<TensorProto>& new_inits) {
  if (inits.count(n.input(0))) return invalid_argument("input 0 is a constant");
  auto w = read_weight(inits, n.input(1), "weight");
  if (!w.ok()) return w.status();
  if (w->dims.size() < 3) return invalid_argument("weight has rank ", w->dims.size(), ", expected >= 3");
  int64_t numel = 1;
  for (int64_t d : w->dims) numel *= d;
  if (numel < o.min_weight_elements) return invalid_argument("weight has ", numel, " elements (< --min-weight-elements)");
  std::string bias = n.input_size() > 2 ? n.input(2) : std::string();
  if (!bias.empty() && !inits.count(bias)) return invalid_argument("bias is not a constant initializer");
  const int32_t wtype = o.weight_signed ? TensorProto::INT8 : TensorProto::UINT8;
  const bool per_channel = o.per_channel && o.weight_signed;
  const QuantizedWeight q = quantize_weight(w->values.data(), w->dims, per_channel ? 0 : -1, o.weight_signed);
  std::vector<int64_t> sdims;
  if (per_channel) {
    sdims.assign(w->dims.size() - 1, 1);
    sdims[0] = w->dims[0];
  }
  const std::string base = n.name().empty() ? n.output(0) : n.name();
  const std::string wq = names.fresh(n.input(1) + "_quantized");
  const std::string ws = names.fresh(n.input(1) + "_scale");
  const std::string wz = names.fresh(n.input(1) + "_zero_point");
  new_inits.push_back(make_tensor(wq, wtype, w->dims, q.q.data(), q.q.size()));
  new_inits.push_back(make_f32(ws, sdims, q.scale));
  new_inits.push_back(make_tensor(wz, wtype, {}, q.zero_point.data(), 1));
  const DynQ& dq = quantized_input(n.input(0));
  const std::string acc = names.fresh(base + "_output_quantized");
  const std::string accf = names.fresh(base + "_output_quantized_cast_output");
  const std::string scale = names.fresh(base + "_scales_mul_output");
  const std::string y = bias.empty() ? n.output(0) : names.fresh(base + "_output_scaled");
  NodeProto conv = make_node("ConvInteger", names.fresh(base + "_quant"), {dq.q, wq, dq.zp, wz}, {acc});
  for (const auto& a : n.attribute()) *conv.add_attribute() = a;
  nodes.push_back(std::move(conv));
  NodeProto cast = make_node("Cast", names.fresh(base + "_cast"), {acc}, {accf});
  set_int_attr(cast, "to", TensorProto::FLOAT);
  nodes.push_back(std::move(cast));
  nodes.push_back(make_node("Mul", names.fresh(base + "_scales_mul"), {dq.scale, ws}, {scale}));
  nodes.push_back(make_node("Mul", names.fresh(base + "_output_scale_mul"), {accf, scale}, {y}));
  if (!bias.empty()) {
    // The bias [M] along the output's channel axis, as onnxruntime writes it.
    std::vector<int64_t> shape(w->dims.size(), 1);
    shape[1] = -1;
    const std::string shape_name = names.fresh(base + "_bias_reshape_shape");
    const std::string reshaped = names.fresh(base + "_bias_reshape_output");
    new_inits.push_back(make_tensor(shape_name, TensorProto::INT64, {int64_t(shape.size())}, shape.data(),
                                    shape.size() * sizeof(int64_t)));
    nodes.push_back(make_node("Reshape", names.fresh(base + "_bias_reshape"), {bias, shape_name}, {reshaped}));
    nodes.push_back(make_node("Add", names.fresh(base + "_bias_add"), {y, reshaped}, {n.output(0)}));
  }
  return ok_status();
}

}  // namespace detail

using namespace detail;

Status quantize_dynamic(onnx::ModelProto& model, const Options& o, Report& report) {
  // Conv only when --op-types names it (onnxruntime's default includes it): per-tensor conv weights
  // cost a CNN much more accuracy than the transformers' MatMuls (docs/quantization.md).
  static const std::vector<std::string> kOps = {"MatMul", "Gemm"};
  if (const int64_t opset = default_opset(model); opset < 11)
    return unsupported("dynamic quantization needs opset >= 11 (DynamicQuantizeLinear); the model has opset ", opset);
  onnx::GraphProto& g = *model.mutable_graph();
  const auto inits = initializer_map(g);
  Names names(g);
  std::vector<TensorProto> new_inits;
  std::vector<NodeProto> nodes;
  std::unordered_map<std::string, DynQ> dql;  // A -> its DynamicQuantizeLinear outputs
  const int32_t wtype = o.weight_signed ? TensorProto::INT8 : TensorProto::UINT8;

  for (const NodeProto& n : g.node()) {
    if (!selected(o, n, kOps)) {
      nodes.push_back(n);
      continue;
    }
    ++report.candidates;
    auto skip = [&](const std::string& why) {
      report.skipped.push_back(str_cat(describe(n), ": ", why));
      nodes.push_back(n);
    };
    if (n.op_type() != "MatMul" && n.op_type() != "Gemm" && n.op_type() != "Conv") {
      skip("dynamic mode quantizes MatMul, Gemm and Conv only");
      continue;
    }
    if (excluded(o, n)) {
      skip("excluded (--nodes-exclude)");
      continue;
    }
    if (n.input_size() < 2 || n.output_size() < 1) {
      skip("malformed node");
      continue;
    }
    // x's DynamicQuantizeLinear, one per distinct input (shared by the nodes that read it).
    auto quantized_input = [&](const std::string& a) -> const DynQ& {
      auto dq = dql.find(a);
      if (dq == dql.end()) {
        DynQ d{names.fresh(a + "_quantized"), names.fresh(a + "_scale"), names.fresh(a + "_zero_point")};
        nodes.push_back(make_node("DynamicQuantizeLinear", names.fresh(a + "_QuantizeLinear"), {a}, {d.q, d.scale, d.zp}));
        dq = dql.emplace(a, std::move(d)).first;
      }
      return dq->second;
    };
    if (n.op_type() == "Conv") {
      if (Status st = dynamic_conv(n, o, inits, names, quantized_input, nodes, new_inits); !st.ok()) skip(st.message());
      else ++report.quantized;
      continue;
    }
    const bool gemm = n.op_type() == "Gemm";
    if (gemm && int_attr(n, "transA", 0) != 0) {
      skip("transA=1");
      continue;
    }
    if (inits.count(n.input(0))) {
      skip("input 0 is a constant");
      continue;
    }
    auto w = read_weight(inits, n.input(1), "weight");
    if (!w.ok()) {
      skip(w.status().message());
      continue;
    }
    if (w->dims.size() != 2) {
      skip("weight is not rank 2");
      continue;
    }
    const int64_t numel = w->dims[0] * w->dims[1];
    if (numel < o.min_weight_elements) {
      skip(str_cat("weight has ", numel, " elements (< --min-weight-elements)"));
      continue;
    }
    const float alpha = gemm ? float_attr(n, "alpha", 1.f) : 1.f;
    const float beta = gemm ? float_attr(n, "beta", 1.f) : 1.f;
    std::string bias;
    if (gemm && n.input_size() > 2 && !n.input(2).empty()) {
      bias = n.input(2);
      if (beta != 1.f) {
        auto c = read_weight(inits, bias, "bias C with beta != 1");
        if (!c.ok()) {
          skip(c.status().message());
          continue;
        }
        for (float& v : c->values) v *= beta;
        bias = names.fresh(n.input(2) + "_scaled");
        new_inits.push_back(make_f32(bias, c->dims, c->values));
      }
    }
    // MatMulInteger takes B as K x N: a transB Gemm's weight is stored transposed.
    std::vector<float> kn = std::move(w->values);
    int64_t k = w->dims[0], cols = w->dims[1];
    if (gemm && int_attr(n, "transB", 0)) {
      std::vector<float> t(kn.size());
      for (int64_t r = 0; r < k; ++r)
        for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * k + r)] = kn[static_cast<size_t>(r * cols + c)];
      kn = std::move(t);
      std::swap(k, cols);
    }
    QuantizedWeight q = quantize_weight(kn.data(), {k, cols}, o.per_channel ? 1 : -1, o.weight_signed);
    if (alpha != 1.f)
      for (float& s : q.scale) s *= alpha;
    const std::string base = n.name().empty() ? n.output(0) : n.name();
    const std::string wq = names.fresh(n.input(1) + "_quantized");
    const std::string ws = names.fresh(n.input(1) + "_scale");
    const std::string wz = names.fresh(n.input(1) + "_zero_point");
    const std::vector<int64_t> pdims = o.per_channel ? std::vector<int64_t>{cols} : std::vector<int64_t>{};
    new_inits.push_back(make_tensor(wq, wtype, {k, cols}, q.q.data(), q.q.size()));
    new_inits.push_back(make_f32(ws, pdims, q.scale));
    new_inits.push_back(make_tensor(wz, wtype, pdims, q.zero_point.data(), q.zero_point.size()));

    const DynQ& dq = quantized_input(n.input(0));
    const std::string acc = names.fresh(base + "_output_quantized");
    const std::string accf = names.fresh(base + "_output_quantized_cast_output");
    const std::string scale = names.fresh(base + "_scales_mul_output");
    const std::string y = bias.empty() ? n.output(0) : names.fresh(base + "_output_scaled");
    nodes.push_back(make_node("MatMulInteger", names.fresh(base + "_quant"), {dq.q, wq, dq.zp, wz}, {acc}));
    NodeProto cast = make_node("Cast", names.fresh(base + "_cast"), {acc}, {accf});
    set_int_attr(cast, "to", TensorProto::FLOAT);
    nodes.push_back(std::move(cast));
    nodes.push_back(make_node("Mul", names.fresh(base + "_scales_mul"), {dq.scale, ws}, {scale}));
    nodes.push_back(make_node("Mul", names.fresh(base + "_output_scale_mul"), {accf, scale}, {y}));
    if (!bias.empty()) nodes.push_back(make_node("Add", names.fresh(base + "_bias_add"), {y, bias}, {n.output(0)}));
    ++report.quantized;
  }
  if (Status s = require_nodes(report, "dynamic: MatMul/Gemm with a constant rank-2 float32 weight (or Conv, with --op-types naming it)");
      !s.ok())
    return s;
  g.clear_node();
  for (auto& n : nodes) *g.add_node() = std::move(n);
  for (auto& t : new_inits) *g.add_initializer() = std::move(t);
  remove_unused_initializers(g);
  return ok_status();
}

Expected<Report> quantize(onnx::ModelProto& model, const Options& o) {
  if (!model.has_graph()) return invalid_model("the model has no graph");
  if (o.percentile <= 50.0 || o.percentile > 100.0)
    return invalid_argument("--percentile must be in (50, 100], got ", o.percentile);
  Report report;
  constants_to_initializers(*model.mutable_graph());
  report.weight_bytes_before = initializer_bytes(model.graph());
  // The integer ops need opset 11 (DynamicQuantizeLinear) or 13 (per-axis DequantizeLinear):
  // older models go through ONNX's version converter to opset 13 first (PaddlePaddle's exports
  // are opset 9-11), which rewrites the ops whose form changed (Softmax, Squeeze, Clip, ...).
  if (const int64_t opset = default_opset(model); opset < 13 && (o.mode == Mode::kStatic || opset < 11)) {
    try {
      add_inferred_value_info(model);
      model = onnx::version_conversion::ConvertVersion(model, 13);
    } catch (const std::exception& e) {
      return unsupported("the model has opset ", opset, ", quantization needs ", o.mode == Mode::kStatic ? 13 : 11,
                         ", and ONNX's version converter failed: ", e.what());
    }
    report.converted_from_opset = opset;
  }
  if (o.mode == Mode::kDynamic) {
    if (Status s = quantize_dynamic(model, o, report); !s.ok()) return s;
  } else {
    if (o.calibration_dir.empty()) return invalid_argument("--mode static needs --calibration DIR");
    if (const int64_t opset = default_opset(model); opset < 13)
      return unsupported("static (QDQ) quantization needs opset >= 13 (per-axis DequantizeLinear); the model has opset ",
                         opset);
    Report probe;
    std::vector<std::string> tensors;
    for (const auto& t : static_targets(model.graph(), o, &probe)) {
      tensors.push_back(t.x);
      if (t.add) tensors.push_back(t.x2);
      tensors.push_back(t.quantized_output());
    }
    if (tensors.empty()) {
      if (Status s = require_nodes(probe, "static: Conv/MatMul/Gemm with a constant float32 weight"); !s.ok()) return s;
    }
    std::sort(tensors.begin(), tensors.end());
    tensors.erase(std::unique(tensors.begin(), tensors.end()), tensors.end());
    auto ranges = calibrate(model, tensors, o, &report.samples);
    if (!ranges.ok()) return ranges.status();
    report.calibrated_tensors = ranges->size();
    if (Status s = quantize_static(model, o, *ranges, report); !s.ok()) return s;
  }
  report.weight_bytes_after = initializer_bytes(model.graph());
  return report;
}

Expected<onnx::ModelProto> read_model(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found(path, ": cannot open the file");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.size() >= 8 && std::memcmp(bytes.data() + 4, "TSR1", 4) == 0)
    return invalid_model(path, ": a .tsr model; `tessera quantize` rewrites ONNX files (quantize the .onnx, then convert)");
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes) || !m.has_graph())
    return invalid_model(path, ": not an ONNX model (no ModelProto with a graph)");
  return m;
}

}  // namespace tsr::onnx_quantize
