// HardSwish recognition (optimize.h): exporters (Paddle2ONNX for PP-OCR, older PyTorch) spell
// HardSwish out as x * Clip(x + 3, 0, 6) / 6 in four nodes. Written as one HardSwish node it runs
// as one pass over the tensor and, after a Conv, fuses into the Conv's epilogue. Matched forms
// (Mul commutative, "/ 6" also as "* (1/6)"):
//   Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)      Mul(x, Div(Clip(Add(x, 3), 0, 6), 6))
// Only where every intermediate result feeds nothing else; f32/f64 scalar constants.
#include <cmath>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

struct Matcher : PatternMatcher {
  // `id` = x "/ 6": Div(v, 6) or Mul(v, 1/6) / Mul(1/6, v); returns v or -1.
  int32_t div6(int32_t id) {
    const size_t mark = matched.size();
    if (const ir::Node* d = sole(id, "Div"); d && d->inputs.size() == 2 && is_scalar_constant(ix, d->inputs[1], 6.0))
      return d->inputs[0];
    matched.resize(mark);
    if (const ir::Node* m = sole(id, "Mul"); m && m->inputs.size() == 2) {
      if (is_scalar_constant(ix, m->inputs[1], 1.0 / 6.0)) return m->inputs[0];
      if (is_scalar_constant(ix, m->inputs[0], 1.0 / 6.0)) return m->inputs[1];
    }
    matched.resize(mark);
    return -1;
  }
  // `id` = Clip(Add(x, 3), 0, 6) for this x.
  bool clip_of(int32_t id, int32_t x) {
    const size_t mark = matched.size();
    const ir::Node* c = sole(id, "Clip");
    if (c && c->inputs.size() == 3 && is_scalar_constant(ix, c->inputs[1], 0.0) && is_scalar_constant(ix, c->inputs[2], 6.0)) {
      const ir::Node* a = sole(c->inputs[0], "Add");
      if (a && a->inputs.size() == 2 &&
          ((a->inputs[0] == x && is_scalar_constant(ix, a->inputs[1], 3.0)) || (a->inputs[1] == x && is_scalar_constant(ix, a->inputs[0], 3.0))))
        return true;
    }
    matched.resize(mark);
    return false;
  }
  // x with `id` = HardSwish(x) in one of the two forms, or -1.
  int32_t hardswish_arg(const ir::Node& last) {
    if (last.inputs.size() != 2 || last.outputs.size() != 1) return -1;
    // Form 1: last is the "/ 6" of Mul(x, clip).
    matched.clear();
    if (last.op == "Div" || last.op == "Mul") {
      int32_t prod = -1;
      if (last.op == "Div" && is_scalar_constant(ix, last.inputs[1], 6.0)) prod = last.inputs[0];
      if (last.op == "Mul" && is_scalar_constant(ix, last.inputs[1], 1.0 / 6.0)) prod = last.inputs[0];
      if (last.op == "Mul" && is_scalar_constant(ix, last.inputs[0], 1.0 / 6.0)) prod = last.inputs[1];
      if (prod >= 0) {
        if (const ir::Node* m = sole(prod, "Mul"); m && m->inputs.size() == 2) {
          for (int s = 0; s < 2; ++s)
            if (clip_of(m->inputs[size_t(1 - s)], m->inputs[size_t(s)])) return m->inputs[size_t(s)];
        }
      }
    }
    // Form 2: last is Mul(x, clip / 6).
    matched.clear();
    if (last.op == "Mul") {
      for (int s = 0; s < 2; ++s) {
        const size_t mark = matched.size();
        const int32_t clip = div6(last.inputs[size_t(1 - s)]);
        if (clip >= 0 && clip_of(clip, last.inputs[size_t(s)])) return last.inputs[size_t(s)];
        matched.resize(mark);
      }
    }
    return -1;
  }
};

}  // namespace

Expected<int64_t> recognize_hardswish(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t ni) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const size_t n = size_t(ni);
    Matcher mt{{g, ix, {}}};
    const int32_t x = mt.hardswish_arg(g.nodes[n]);
    if (x < 0) return false;
    const DType dt = g.tensors[size_t(x)].dtype;
    if (dt != DType::kF32 && dt != DType::kF64) return false;
    for (int32_t k : mt.matched) ix.kill(k);
    ir::Node& last = g.nodes[n];
    last = ir::Node{"HardSwish", 0, last.name, {x}, {last.outputs[0]}, {}};
    return true;
  });
}

}  // namespace tsr::passes::opt
