// quantize_lookup (optimize.h): an elementwise f32 function between a DequantizeLinear and a
// QuantizeLinear (the activations of static-QDQ CNNs: SiLU, HardSwish, Sigmoid, ...) becomes a
// 256-entry table on the codes:
//   q = QuantizeLinear(f(DequantizeLinear(x, xs, xz)), ys, yz)  ->  q = tessera::QLinearLookup(x, T)
// where f is a chain of nodes, each elementwise (ONNX activations, the ops of FusedElementwise, a
// FusedElementwise node), reading only values of the chain (the DequantizeLinear's output included)
// and constants of one element, with no intermediate value read outside the chain. x is u8 or
// s8 and both parameter pairs are constant scalars with explicit zero points. T[c] (indexed by the
// code's byte, c reinterpreted as u8 for s8) is computed here, once, by running the original
// nodes' own kernels (OptimizeOptions::evaluate) on the 256 codes: the DequantizeLinear, each
// chain node, the QuantizeLinear. So the fused node's output is the unfused graph's, bit for bit,
// by construction. The DequantizeLinear stays for its other readers and dies in dce otherwise.
// Runs after fuse_elementwise, so that a chain already fused into one FusedElementwise is
// evaluated by the kernel the unfused graph runs.
//
// Not rewritten: per-axis parameters, implicit zero points, a chain value read elsewhere or a
// graph output, a chain input other than the one DequantizeLinear's output and scalar constants,
// nodes outside the elementwise set, more than kMaxChain nodes, a DequantizeLinear feeding the
// QuantizeLinear directly (no function between them), a failed evaluation.
#include <algorithm>
#include <map>
#include <string_view>

#include "core/ops/fused_elementwise.h"
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

constexpr size_t kMaxChain = 16;

// Elementwise ops whose one tensor operand maps element to element (besides kEwOpNames').
bool lookup_op(std::string_view op) {
  ops::EwOp ew;
  if (op == "FusedElementwise" || ops::ew_op_of(op, &ew)) return true;
  static constexpr std::string_view kMore[] = {"Elu",  "Selu",  "Celu", "Softplus", "Softsign", "Gelu",
                                               "Erf",  "Mish",  "ThresholdedRelu", "Identity", "Floor",
                                               "Ceil", "Round", "Sign", "Sin", "Cos", "Silu"};
  return std::find(std::begin(kMore), std::end(kMore), op) != std::end(kMore);
}

bool is_q8(DType t) { return t == DType::kU8 || t == DType::kI8; }

// A constant scalar f32 scale and an explicit constant scalar u8/i8 zero point.
bool scalar_qparams(const GraphIndex& ix, const ir::Node& q) {
  if (q.inputs.size() < 3 || q.inputs[1] < 0 || q.inputs[2] < 0) return false;
  const Tensor* s = ix.constant(q.inputs[1]);
  const Tensor* z = ix.constant(q.inputs[2]);
  return s && z && s->dtype() == DType::kF32 && s->numel() == 1 && s->rank() <= 1 && z->numel() == 1 &&
         z->rank() <= 1 && is_q8(z->dtype());
}

struct Chain {
  int32_t dq = -1;              // the DequantizeLinear
  std::vector<int32_t> nodes;   // the function's nodes, in graph (topological) order
};

// The chain between QuantizeLinear `at` and one DequantizeLinear, or false.
bool find_chain(GraphIndex& ix, int32_t at, Chain* c) {
  const ir::Graph& g = ix.graph();
  const ir::Node& qn = g.nodes[size_t(at)];
  if (qn.op != "QuantizeLinear" || qn.outputs.size() != 1 || qn.inputs.empty() || !scalar_qparams(ix, qn)) return false;
  std::vector<int32_t> pending = {qn.inputs[0]};
  int32_t dq_out = -1;
  int64_t max_const_rank = 0;
  while (!pending.empty()) {
    const int32_t v = pending.back();
    pending.pop_back();
    if (v == dq_out) continue;
    const int32_t p = ix.producer(v);
    if (p < 0 || ix.dead(p)) return false;
    if (std::find(c->nodes.begin(), c->nodes.end(), p) != c->nodes.end()) continue;
    const ir::Node& nd = g.nodes[size_t(p)];
    if (nd.op == "DequantizeLinear") {
      if (dq_out >= 0 || nd.outputs.size() != 1 || !scalar_qparams(ix, nd)) return false;
      const ir::TensorInfo& x = g.tensors[size_t(nd.inputs[0])];
      if (!is_q8(x.dtype) || !x.has_shape) return false;
      dq_out = v;
      c->dq = p;
      continue;
    }
    if (!lookup_op(nd.op) || nd.outputs.size() != 1 || nd.inputs.empty() || c->nodes.size() >= kMaxChain) return false;
    if (g.tensors[size_t(v)].dtype != DType::kF32) return false;
    c->nodes.push_back(p);
    for (int32_t i : nd.inputs) {
      if (i < 0) continue;
      if (const Tensor* k = ix.constant(i)) {
        // A one-element operand of rank <= 1 (checked against x's rank below): shape-preserving.
        if (k->numel() != 1 || k->rank() > 1) return false;
        max_const_rank = std::max<int64_t>(max_const_rank, k->rank());
        continue;
      }
      pending.push_back(i);
    }
  }
  if (c->dq < 0 || c->nodes.empty()) return false;
  if (int64_t(g.tensors[size_t(g.nodes[size_t(c->dq)].inputs[0])].shape.size()) < max_const_rank) return false;
  // Every value the chain makes is read by chain nodes (or the QuantizeLinear) alone.
  for (int32_t n : c->nodes) {
    const int32_t v = g.nodes[size_t(n)].outputs[0];
    int32_t reads = 0;
    for (int32_t m : c->nodes)
      for (int32_t i : g.nodes[size_t(m)].inputs) reads += i == v;
    for (int32_t i : qn.inputs) reads += i == v;
    if (ix.is_graph_output(v) || ix.uses(v) != reads) return false;
  }
  std::sort(c->nodes.begin(), c->nodes.end());
  return true;
}

// Runs the DequantizeLinear, the chain and the QuantizeLinear on the 256 codes: the table, or an
// undefined tensor where an evaluation fails or disagrees with the graph's types.
Tensor build_table(GraphIndex& ix, const Chain& c, int32_t at, const NodeEvaluator& evaluate) {
  const ir::Graph& g = ix.graph();
  const ir::Node& dq = g.nodes[size_t(c.dq)];
  const DType xt = g.tensors[size_t(dq.inputs[0])].dtype;
  auto made = Tensor::empty_fresh(xt, {256});
  if (!made.ok()) return Tensor();
  Tensor codes = std::move(*made);
  for (int i = 0; i < 256; ++i) codes.mut_data<uint8_t>()[i] = static_cast<uint8_t>(i);  // byte i: code i's bits
  std::map<int32_t, Tensor> vals;
  vals[dq.inputs[0]] = codes;
  auto run = [&](const ir::Node& nd) -> bool {
    std::vector<const Tensor*> in(nd.inputs.size(), nullptr);
    for (size_t k = 0; k < nd.inputs.size(); ++k) {
      if (nd.inputs[k] < 0) continue;
      auto it = vals.find(nd.inputs[k]);
      in[k] = it != vals.end() ? &it->second : ix.constant(nd.inputs[k]);
      if (!in[k]) return false;
    }
    auto out = evaluate(nd, in);
    if (!out.ok() || out->size() != 1 || !(*out)[0].defined() || (*out)[0].numel() != 256) return false;
    vals[nd.outputs[0]] = std::move((*out)[0]);
    return true;
  };
  if (!run(dq)) return Tensor();
  for (int32_t n : c.nodes)
    if (!run(g.nodes[size_t(n)])) return Tensor();
  const ir::Node& qn = g.nodes[size_t(at)];
  if (!run(qn)) return Tensor();
  Tensor t = vals[qn.outputs[0]];
  if (t.dtype() != ix.constant(qn.inputs[2])->dtype()) return Tensor();
  return t;
}

}  // namespace

Expected<int64_t> quantize_lookup(ir::Model& model, int32_t graph_index, const NodeEvaluator& evaluate) {
  if (!evaluate) return int64_t{0};
  return rewrite_nodes(model, graph_index, [&](GraphIndex& ix, int32_t at) -> Expected<bool> {
    Chain c;
    if (!find_chain(ix, at, &c)) return false;
    Tensor table = build_table(ix, c, at, evaluate);
    if (!table.defined()) return false;
    ir::Graph& g = ix.graph();
    const int32_t x = g.nodes[size_t(c.dq)].inputs[0];
    const int32_t q = g.nodes[size_t(at)].outputs[0];
    ir::TensorInfo info;
    info.name = g.tensors[size_t(q)].name + "/lookup_table";
    info.dtype = table.dtype();
    info.has_shape = true;
    info.shape = {256};
    info.constant = std::move(table);
    const int32_t t = g.add_tensor(std::move(info));
    ir::Node fused{"QLinearLookup", 0, g.nodes[size_t(at)].name, {x, t}, {q}, {}};
    g.nodes[size_t(at)] = std::move(fused);
    for (int32_t n : c.nodes) ix.kill(n);
    return true;
  });
}

}  // namespace tsr::passes::opt
