// fuse_elementwise: trees of f32 elementwise nodes -> one FusedElementwise node
// (core/ops/fused_elementwise.h), so a chain such as LayerNorm's Sub/Pow/Add/Sqrt/Div/Mul/Add or
// an exporter's spelled-out activation crosses memory once instead of once per node.
//
// A node joins the tree of the node reading its output when that output has no other reader, is
// not a graph output and has the reader's shape as far as it is known (equal ranks and equal
// dims, a dynamic dim matching only a dynamic one): a fused program evaluates every step once per
// output element, so a smaller intermediate would be computed again for each element it is
// broadcast to. (Results are right either way; a dynamic dim that turns out to be 1 only costs
// that recomputation.) External operands become the
// fused node's inputs (at most EwProgram::kMaxInputs distinct tensors), scalar f32 constants and
// op parameters become immediates. The fused node takes the root's (last node's) place in the
// node list, after every member and every member's producers, so the list stays topologically
// sorted. Runs after the Conv/Gemm activation fusions, which take their activations first.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ops/fused_elementwise.h"
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

using ops::EwOp;
using ops::EwProgram;

// How a candidate node maps onto one step: its op, the tensors it reads as operands and the
// parameters it takes as immediates.
struct Candidate {
  bool ok = false;
  EwOp op = EwOp::kAdd;
  int n_data = 0;                  // tensor operands (inputs[0, n_data))
  int n_params = 0;                // parameter operands, after the data ones
  std::array<float, 2> params{};
};

// A scalar f32 constant's value.
bool scalar_constant(const GraphIndex& ix, int32_t id, float* v) {
  const Tensor* c = ix.constant(id);
  if (!c || c->dtype() != DType::kF32 || c->numel() != 1) return false;
  *v = c->data<float>()[0];
  return true;
}

Candidate candidate(const GraphIndex& ix, const ir::Graph& g, const ir::Node& n) {
  Candidate c;
  if (!ops::ew_op_of(n.op, &c.op) || n.outputs.size() != 1 || n.outputs[0] < 0) return c;
  const ir::TensorInfo& out = g.tensors[size_t(n.outputs[0])];
  if (out.dtype != DType::kF32 || out.kind != ValueKind::kTensor || !out.has_shape) return c;
  const int arity = ops::kEwOpArity[static_cast<int>(c.op)];
  c.n_data = arity;
  switch (c.op) {
    case EwOp::kPow: {
      float e = 0;
      if (n.inputs.size() != 2 || !scalar_constant(ix, n.inputs[1], &e) || (e != 1 && e != 2 && e != 3)) return c;
      c.n_data = 1;
      c.n_params = 1;
      c.params[0] = e;
      break;
    }
    case EwOp::kLeakyRelu:
      c.n_data = 1;
      c.n_params = 1;
      c.params[0] = static_cast<float>(n.attr_float("alpha"));
      break;
    case EwOp::kHardSigmoid:
      c.n_data = 1;
      c.n_params = 2;
      c.params = {static_cast<float>(n.attr_float("alpha")), static_cast<float>(n.attr_float("beta"))};
      break;
    case EwOp::kClip: {
      c.n_data = 1;
      c.n_params = 2;
      c.params = {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
      for (size_t k = 1; k < n.inputs.size() && k < 3; ++k)
        if (n.inputs[k] >= 0 && !scalar_constant(ix, n.inputs[k], &c.params[k - 1])) return c;
      if (n.inputs.size() > 3) return c;
      break;
    }
    default:
      if (n.inputs.size() != static_cast<size_t>(arity)) return c;
      break;
  }
  for (int k = 0; k < c.n_data; ++k) {
    const int32_t t = k < static_cast<int>(n.inputs.size()) ? n.inputs[size_t(k)] : -1;
    if (t < 0) return c;
    const ir::TensorInfo& ti = g.tensors[size_t(t)];
    if (ti.dtype != DType::kF32 || ti.kind != ValueKind::kTensor || !ti.has_shape) return c;
  }
  c.ok = true;
  return c;
}

// Builds the program of the tree whose members are `members` (ascending node indices, the root
// last); false when it exceeds the program's capacity.
bool build(const GraphIndex& ix, const ir::Graph& g, const std::vector<int32_t>& members,
           const std::vector<Candidate>& cand, EwProgram* p, std::vector<int32_t>* inputs) {
  inputs->clear();
  std::vector<std::pair<int32_t, int>> step_of;  // member's output tensor -> step index
  std::vector<std::array<int32_t, 3>> refs;      // per step: tensor operands (-1: none)
  // First pass: the external tensor operands (registers 0..n-1).
  for (int32_t m : members) {
    const ir::Node& n = g.nodes[size_t(m)];
    for (int k = 0; k < cand[size_t(m)].n_data; ++k) {
      const int32_t t = n.inputs[size_t(k)];
      float v;
      const bool internal = std::any_of(step_of.begin(), step_of.end(), [&](auto& s) { return s.first == t; });
      if (internal || scalar_constant(ix, t, &v) || std::find(inputs->begin(), inputs->end(), t) != inputs->end()) continue;
      inputs->push_back(t);
    }
    step_of.push_back({n.outputs[0], static_cast<int>(step_of.size())});
  }
  if (inputs->empty() || inputs->size() > EwProgram::kMaxInputs || members.size() > EwProgram::kMaxSteps) return false;
  // The fused node's shape is the broadcast of its tensor inputs: it must be the root's (a scalar
  // constant of higher rank, now an immediate, no longer widens it).
  Shape shape = g.tensors[size_t((*inputs)[0])].shape;
  for (size_t k = 1; k < inputs->size(); ++k) {
    auto b = broadcast_shapes(shape, g.tensors[size_t((*inputs)[k])].shape);
    if (!b.ok()) return false;
    shape = std::move(b).value();
  }
  if (shape != g.tensors[size_t(g.nodes[size_t(members.back())].outputs[0])].shape) return false;
  p->n_inputs = static_cast<int>(inputs->size());
  p->n_steps = 0;
  p->n_immediates = 0;
  const auto immediate = [&](float v) -> int {
    for (int i = 0; i < p->n_immediates; ++i)
      if (p->immediates[size_t(i)] == v || (std::isnan(v) && std::isnan(p->immediates[size_t(i)]))) return -1 - i;
    if (p->n_immediates == EwProgram::kMaxImmediates) return 0;
    p->immediates[size_t(p->n_immediates++)] = v;
    return -p->n_immediates;
  };
  for (size_t s = 0; s < members.size(); ++s) {
    const ir::Node& n = g.nodes[size_t(members[s])];
    const Candidate& c = cand[size_t(members[s])];
    ops::EwStep& step = p->steps[s];
    step.op = c.op;
    step.args = {0, 0, 0};
    for (int k = 0; k < c.n_data; ++k) {
      const int32_t t = n.inputs[size_t(k)];
      int r = 0;
      float v;
      auto in = std::find(inputs->begin(), inputs->end(), t);
      auto st = std::find_if(step_of.begin(), step_of.begin() + static_cast<std::ptrdiff_t>(s),
                             [&](auto& e) { return e.first == t; });
      if (st != step_of.begin() + static_cast<std::ptrdiff_t>(s)) r = p->n_inputs + st->second;
      else if (in != inputs->end()) r = static_cast<int>(in - inputs->begin());
      else if (scalar_constant(ix, t, &v) && (r = immediate(v)) < 0) {
      } else return false;
      step.args[size_t(k)] = static_cast<int16_t>(r);
    }
    for (int k = 0; k < c.n_params; ++k) {
      const int r = immediate(c.params[size_t(k)]);
      if (r >= 0) return false;
      step.args[size_t(c.n_data + k)] = static_cast<int16_t>(r);
    }
    ++p->n_steps;
  }
  return true;
}

}  // namespace

Expected<int64_t> fuse_elementwise(ir::Model& model, int32_t graph_index) {
  ir::Graph& g = model.graphs[size_t(graph_index)];
  GraphIndex ix(g);
  const size_t nn = g.nodes.size();
  std::vector<Candidate> cand(nn);
  for (size_t n = 0; n < nn; ++n) cand[n] = candidate(ix, g, g.nodes[n]);
  // members[n]: the tree rooted at n so far (ascending); absorbed[n]: n joined its reader's tree.
  std::vector<std::vector<int32_t>> members(nn);
  std::vector<bool> absorbed(nn, false);
  for (size_t n = 0; n < nn; ++n) {
    if (!cand[n].ok) continue;
    const ir::Node& node = g.nodes[n];
    const ir::TensorInfo& out = g.tensors[size_t(node.outputs[0])];
    members[n] = {static_cast<int32_t>(n)};
    for (int k = 0; k < cand[n].n_data; ++k) {
      const int32_t t = node.inputs[size_t(k)];
      const int32_t p = ix.producer(t);
      if (p < 0 || !cand[size_t(p)].ok || absorbed[size_t(p)] || ix.sole_consumer(t) != static_cast<int32_t>(n)) continue;
      const ir::TensorInfo& ti = g.tensors[size_t(t)];
      if (ti.shape != out.shape) continue;
      if (members[size_t(p)].size() + members[n].size() > EwProgram::kMaxSteps) continue;
      members[n].insert(members[n].end(), members[size_t(p)].begin(), members[size_t(p)].end());
      members[size_t(p)].clear();
      absorbed[size_t(p)] = true;
    }
    std::sort(members[n].begin(), members[n].end());
  }
  int64_t fused = 0;
  EwProgram program;
  std::vector<int32_t> inputs;
  for (size_t n = 0; n < nn; ++n) {
    if (absorbed[n] || members[n].size() < 2) continue;
    if (!build(ix, g, members[n], cand, &program, &inputs)) {
      // Over capacity: leave the tree unfused (its members run as they are).
      continue;
    }
    ir::Node f;
    f.op = "FusedElementwise";
    f.name = g.nodes[n].name.empty() ? g.tensors[size_t(g.nodes[n].outputs[0])].name : g.nodes[n].name;
    f.name += "/fused";
    f.inputs = inputs;
    f.outputs = g.nodes[n].outputs;
    f.attributes = ops::ew_program_attributes(program);
    for (int32_t m : members[n])
      if (m != static_cast<int32_t>(n)) ix.kill(m);
    g.nodes[n] = std::move(f);
    fused += static_cast<int64_t>(members[n].size()) - 1;
  }
  ix.compact();
  return fused;
}

}  // namespace tsr::passes::opt
