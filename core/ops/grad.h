// Gradient rules: the contract between passes/autodiff (and the eager tape) and the VJPs that
// core/ops/grads/<family>.cpp register with each OpDef (DESIGN.md §5, §7).
//
// A rule receives the forward node (attributes), its input and output Values, and the gradients
// flowing into its outputs (dL/dY, an invalid Value where no gradient flows: zero). It emits the
// gradients of the inputs the caller wants (dL/dX, same dtype and shape as X) through the
// Emitter and sets them with set_grad. Rules read forward values only through Values, so the
// pass keeps alive exactly the forward values some rule used (the executor frees the rest).
//
//   Status relu_grad(GradContext& g) {   // dX = dY * (X > 0)
//     Emitter& e = g.emitter();
//     Value mask = e.emit("Cast", {e.emit("Greater", {g.input(0), zeros})}, {to(dtype)});
//     g.set_grad(0, e.emit("Mul", {g.grad_output(0), mask}));
//     return ok_status();
//   }
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ops/emitter.h"

namespace tsr::ops {

class GradContext {
 public:
  // `inputs`/`outputs` are parallel to node.inputs/outputs (invalid = omitted); `grad_outputs`
  // to node.outputs (invalid = no gradient flows into that output); `wants` to node.inputs.
  GradContext(Emitter& emitter, const ir::Node& node, std::string place, std::vector<Value> inputs,
              std::vector<Value> outputs, std::vector<Value> grad_outputs, std::vector<bool> wants);

  Emitter& emitter() { return emitter_; }
  const ir::Node& node() const { return node_; }
  const std::string& place() const { return place_; }

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i].valid(); }
  Value input(size_t i) const { return i < inputs_.size() ? inputs_[i] : Value{}; }
  Value output(size_t i) const { return i < outputs_.size() ? outputs_[i] : Value{}; }
  ValueType input_type(size_t i) const { return emitter_.type(input(i)); }
  ValueType output_type(size_t i) const { return emitter_.type(output(i)); }
  // dL/d output[i]; invalid when no gradient flows into it (treat as zero).
  Value grad_output(size_t i) const { return i < grad_outputs_.size() ? grad_outputs_[i] : Value{}; }
  // dL/d output[i], materialized as zeros when no gradient flows into it.
  Value grad_output_or_zeros(size_t i);
  // Whether the caller needs dL/d input[i].
  bool wants(size_t i) const { return i < wants_.size() && wants_[i]; }
  // Sets dL/d input[i] (ignored when not wanted). The Value must have input[i]'s dtype and shape.
  void set_grad(size_t i, Value g);
  Value grad(size_t i) const { return i < grads_.size() ? grads_[i] : Value{}; }

  // An error naming the node: "<place>: gradient: ...".
  template <typename... A> Status error(const A&... a) const {
    return unsupported(place_, ": gradient: ", a...);
  }

 private:
  Emitter& emitter_;
  const ir::Node& node_;
  std::string place_;
  std::vector<Value> inputs_, outputs_, grad_outputs_;
  std::vector<bool> wants_;
  std::vector<Value> grads_;
};

// ---- Helpers shared by gradient rules (all emit through `e`) ---------------------------------

// A scalar constant of `dtype` (a floating-point or integer dtype) holding `v`.
Value scalar(Emitter& e, DType dtype, double v);
// Shape(v) as an i64 1-D value.
Value shape_of(Emitter& e, Value v);
// Zeros / a constant fill with v's dtype and shape (ConstantOfShape of Shape(v)).
Value fill_like(Emitter& e, Value v, double fill);
// A `dtype` tensor filled with `fill`, of the shape held by the i64 1-D value `shape`.
Value fill_shape(Emitter& e, Value shape, DType dtype, double fill);
inline Value zeros_like(Emitter& e, Value v) { return fill_like(e, v, 0.0); }
// Reduces a gradient `g` that was broadcast from `like` back to like's shape (sums over the
// broadcast axes, NumPy rules). No node when the shapes are known equal.
Value sum_to(Emitter& e, Value g, Value like);
// Dims [start, end) of v's shape (Shape's start/end semantics) as an i64 1-D value: a constant
// when those dims are statically known, else a Shape node.
Value dims_of(Emitter& e, Value v, int64_t start = 0, int64_t end = std::numeric_limits<int64_t>::max());
// The values of an integer input known now (a constant axes/shape/pads input), else nullopt.
std::optional<std::vector<int64_t>> known_ints(Emitter& e, Value v);
// Sum of `terms` (Add for two, Sum for more); terms must be non-empty.
Value add_n(Emitter& e, const std::vector<Value>& terms);
// An i64 1-D constant.
Value ints_const(Emitter& e, const std::vector<int64_t>& v);
// Cast of `v` to `to` (no node when v already has that dtype).
Value cast(Emitter& e, Value v, DType to);
// dY of a Reduce* node (g) broadcast back to its input's shape (core/ops/grads/reduce.cpp).
Expected<Value> unreduce(GradContext& g, Value dy);
// The attributes of `node` among `names` that it sets (to pass a forward node's attributes on
// to its gradient op; unset ones keep the gradient op's identical defaults).
std::vector<ir::Attribute> copy_attrs(const ir::Node& node, std::initializer_list<std::string_view> names);
// dL/dX of Y = LogSoftmax(X, axis) from Y and dY: dY - exp(Y) * sum_axis(dY)
// (core/ops/grads/nn_norm.cpp; also the log_prob output of SoftmaxCrossEntropyLoss).
Value log_softmax_vjp(Emitter& e, Value y, Value dy, int64_t axis);
// Normalizes `axis` against v's rank (which must be known); the caller reports errors.
Expected<int64_t> static_axis(Emitter& e, Value v, int64_t axis);

// The kUnsupported error of a reverse pass that met ops without a gradient rule: `missing` maps
// each op to the places of its nodes, all listed at once, e.g. "2 nodes have no gradient rule
// (1 op):\n  graph[0].node[3] (Einsum ...)". `noun` names a place ("node", "eager op").
Status missing_rules_error(const std::map<std::string, std::vector<std::string>>& missing, std::string_view noun);

}  // namespace tsr::ops
