// Reverse-mode automatic differentiation on the graph (DESIGN.md §7).
//
// The pass walks a graph's nodes in reverse topological order and applies each OpDef's gradient
// rule (core/ops/grads/: vector-Jacobian products written against the Emitter) to append the
// backward nodes to the same graph. Forward values that some rule reads stay alive until the
// backward node that reads them (the executor frees every value after its last use); nothing
// else is saved.
//
// Control flow is differentiated, not unrolled (core/passes/autodiff_control_flow.cpp):
//  - If: the gradient is an If over the branches' VJP graphs, taking the branch inputs and the
//    output gradients (each branch's forward is recomputed inside its VJP graph);
//  - Loop: the forward Loop is rewritten to push each iteration's starting state (iteration
//    number, condition, loop-carried values) to per-value sequences (stacks); the gradient is a
//    reverse Loop, with the trip count read from the stacks, that pops one state per step,
//    recomputes that iteration's body and applies its VJP, accumulating the gradients of the
//    captured (loop-invariant) values. Data-dependent trip counts and shape changes work.
//  - Scan: the forward Scan also stacks each iteration's starting states as extra scan outputs;
//    the gradient is a Scan in the opposite direction over (stacked states, scan inputs, output
//    gradients) that recomputes each step and applies its VJP; all scan axes and directions
//    are supported, batched (ONNX Scan-8) Scans are not, and states must keep their shape.
// Nested control flow follows by recursion. Sources: Griewank & Walther, "Evaluating
// Derivatives" (2008), ch. 3-4 (reverse mode, tape of intermediate states); the stack-based
// loop adjoint follows the approach of TensorFlow's while_v2 gradient.
#pragma once

#include <string>
#include <vector>

#include "core/ops/graph_builder.h"
#include "core/ir/graph.h"

namespace tsr::passes {

using ops::Value;

// A gradient flowing into a forward tensor: dL/d(tensor) = grad (a Value of the builder's graph).
struct Seed {
  int32_t tensor = -1;
  Value grad;
};

// Appends to `b`'s graph the reverse pass over the nodes it holds now: from `seeds` back to the
// tensors `wrt` (graph inputs, constants or intermediates). Returns dL/d wrt[i], or an invalid
// Value where no differentiable path connects wrt[i] to a seed. The graph's TensorInfos must be
// typed (passes::infer_types). Errors: every op on the path without a gradient rule, listed in
// one kUnsupported error naming each node; a rule's own error.
Expected<std::vector<Value>> backward(ops::GraphBuilder& b, const std::vector<Seed>& seeds,
                                      const std::vector<int32_t>& wrt);

// Appends to model.graphs[graph] the gradient of tensor `loss` with respect to the tensors `wrt`
// and returns the gradient tensor ids (zeros where wrt[i] does not affect the loss). A
// non-scalar loss is summed first (as backward() with ones). Types are inferred first.
Expected<std::vector<int32_t>> append_gradients(ir::Model& model, int32_t graph, int32_t loss,
                                                const std::vector<int32_t>& wrt);

// What `tessera grad` computes.
struct GradientModelOptions {
  std::string loss;              // an output name of the main graph; "" = the first output
  // Graph inputs or constants; empty = every floating-point constant of the main graph that the
  // loss depends on differentiably (constants used only in conditions are left out).
  std::vector<std::string> wrt;
};

// A model whose main graph has `model`'s inputs and outputs, followed by d(loss)/d(wrt[i]) named
// "<wrt>_grad". Errors name the unknown loss/wrt names, a non-float loss or wrt, and every op
// without a gradient rule.
Expected<ir::Model> gradient_model(ir::Model model, const GradientModelOptions& options);

}  // namespace tsr::passes
