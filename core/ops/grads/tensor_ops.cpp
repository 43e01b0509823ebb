// Gradient rules of the data-movement ops (core/ops/families/tensor_ops.cpp): Concat, Split,
// Slice, Pad, CumSum, Trilu. Index-like inputs (split sizes, starts/ends/axes/steps, pads, axis,
// k) are integers and get no gradient.
#include <algorithm>

#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

using ir::Attribute;

// Omitted trailing optional inputs are dropped, so emitted nodes look like hand-written ones.
std::vector<Value> trim(std::vector<Value> v) {
  while (!v.empty() && !v.back().valid()) v.pop_back();
  return v;
}

// Y = Concat(X_0, ..., X_n-1): dX_i is dY's block of X_i's size along the axis.
Status concat_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const int64_t axis, static_axis(e, g.output(0), g.node().attr_int("axis")));
  // The split sizes: a constant when every input's size along the axis is static.
  std::vector<int64_t> known;
  for (size_t i = 0; i < g.num_inputs(); ++i) {
    const ValueType t = g.input_type(i);
    if (t.has_shape && t.shape[static_cast<size_t>(axis)] >= 0) known.push_back(t.shape[static_cast<size_t>(axis)]);
  }
  Value split;
  if (known.size() == g.num_inputs()) {
    split = ints_const(e, known);
  } else {
    std::vector<Value> sizes;
    for (size_t i = 0; i < g.num_inputs(); ++i) sizes.push_back(dims_of(e, g.input(i), axis, axis + 1));
    split = e.emit("Concat", sizes, {Attribute::make_int("axis", 0)});
  }
  const std::vector<Value> parts =
      e.emit_n("Split", {g.grad_output(0), split}, g.num_inputs(), {Attribute::make_int("axis", axis)});
  for (size_t i = 0; i < parts.size(); ++i) g.set_grad(i, parts[i]);
  return ok_status();
}

// Zeros shaped like Split's output k when the node omitted it (no Value to take the shape of):
// X's shape with `size` along the axis.
Expected<Value> omitted_split_zeros(GradContext& g, int64_t axis, size_t k) {
  Emitter& e = g.emitter();
  const ValueType x = g.input_type(0);
  int64_t size = -1;
  const int64_t d = x.shape[static_cast<size_t>(axis)];
  const auto n = static_cast<int64_t>(g.num_outputs());
  if (g.has_input(1)) {
    if (auto s = known_ints(e, g.input(1)); s && s->size() == g.num_outputs()) size = (*s)[k];
  } else if (d >= 0) {  // equal parts; with num_outputs the last may be smaller
    const int64_t chunk = g.node().attr("num_outputs") ? (d + n - 1) / n : d / n;
    size = std::clamp<int64_t>(d - static_cast<int64_t>(k) * chunk, 0, chunk);
  }
  if (size < 0) return g.error("output ", k, " is omitted and its size is not known statically");
  const Value shape = e.emit("Concat", {dims_of(e, g.input(0), 0, axis), ints_const(e, {size}), dims_of(e, g.input(0), axis + 1)},
                             {Attribute::make_int("axis", 0)});
  return fill_shape(e, shape, x.dtype, 0.0);
}

// (Y_0, ..., Y_n-1) = Split(X): dX = Concat(dY_0, ..., dY_n-1); outputs without a gradient
// contribute zeros.
Status split_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const int64_t axis, static_axis(e, g.input(0), g.node().attr_int("axis")));
  std::vector<Value> parts;
  for (size_t k = 0; k < g.num_outputs(); ++k) {
    if (g.grad_output(k).valid()) parts.push_back(g.grad_output(k));
    else if (g.output(k).valid()) parts.push_back(zeros_like(e, g.output(k)));
    else {
      TSR_ASSIGN_OR_RETURN(Value z, omitted_split_zeros(g, axis, k));
      parts.push_back(z);
    }
  }
  g.set_grad(0, parts.size() == 1 ? parts[0] : e.emit("Concat", parts, {Attribute::make_int("axis", axis)}));
  return ok_status();
}

// Y = Slice(X, starts, ends, axes, steps): dX is zeros of X's shape with dY at the sliced
// positions (tessera SliceGrad: any step, negative steps, clamping as Slice).
Status slice_grad(GradContext& g) {
  Emitter& e = g.emitter();
  g.set_grad(0, e.emit("SliceGrad", trim({g.grad_output(0), dims_of(e, g.input(0)), g.input(1), g.input(2),
                                          g.input(3), g.input(4)})));
  return ok_status();
}

// Y = Pad(X, p, c) in constant mode: Y is X shifted by p's begins inside a c-filled frame (or
// cropped where p < 0). Its adjoint shifts back: dX = Pad(dY, -p) with zeros (crops what was
// padded, zero-fills what was cropped). dc = sum(dY) - sum(dX): the padded positions.
// Reflect/edge modes copy input elements into the frame: dX = PadGrad(dY, p, Shape(X)) adds
// every copy back (tessera op).
Status pad_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const std::string mode = g.node().attr_string("mode");
  if (g.has_input(3)) return g.error("Pad's axes input is not supported");
  const Value dy = g.grad_output(0);
  if (mode != "constant") {
    g.set_grad(0, e.emit("PadGrad", {dy, g.input(1), dims_of(e, g.input(0))}, {Attribute::make_string("mode", mode)}));
    return ok_status();  // the constant input is unused in these modes
  }
  Value neg;
  if (auto p = known_ints(e, g.input(1))) {
    for (int64_t& v : *p) v = -v;
    neg = ints_const(e, *p);
  } else {
    neg = e.emit("Neg", {g.input(1)});
  }
  const Value dx = e.emit("Pad", {dy, neg});
  g.set_grad(0, dx);
  if (g.wants(2)) {
    const Attribute keep0 = Attribute::make_int("keepdims", 0);
    const Value dc = e.emit("Sub", {e.emit("ReduceSum", {dy}, {keep0}), e.emit("ReduceSum", {dx}, {keep0})});
    g.set_grad(2, e.emit("Reshape", {dc, dims_of(e, g.input(2))}));
  }
  return ok_status();
}

// Y = CumSum(X): Y_i sums X_j over j <= i (j < i if exclusive; >= / > if reverse), so X_j feeds
// every Y_i on the other side: dX = CumSum(dY) with the same exclusive and the opposite reverse.
Status cumsum_grad(GradContext& g) {
  const ir::Node& n = g.node();
  g.set_grad(0, g.emitter().emit("CumSum", {g.grad_output(0), g.input(1)},
                                 {Attribute::make_int("exclusive", n.attr_int("exclusive")),
                                  Attribute::make_int("reverse", n.attr_int("reverse") == 0 ? 1 : 0)}));
  return ok_status();
}

// Y = X * mask (Trilu's triangle): dX = dY * mask = Trilu(dY) with the same k and upper.
Status trilu_grad(GradContext& g) {
  g.set_grad(0, g.emitter().emit("Trilu", trim({g.grad_output(0), g.input(1)}),
                                 {Attribute::make_int("upper", g.node().attr_int("upper"))}));
  return ok_status();
}

// dX = SliceGrad(dY, ...) is linear in dY with adjoint Slice: d(dY) = Slice(d(dX), ...).
Status slice_grad_grad(GradContext& g) {
  g.set_grad(0, g.emitter().emit("Slice", trim({g.grad_output(0), g.input(2), g.input(3), g.input(4), g.input(5)})));
  return ok_status();
}

// dX = PadGrad(dY, p, shape) is linear in dY with adjoint Pad: d(dY) = Pad(d(dX), p, mode).
Status pad_grad_grad(GradContext& g) {
  g.set_grad(0, g.emitter().emit("Pad", {g.grad_output(0), g.input(1)},
                                 {Attribute::make_string("mode", g.node().attr_string("mode"))}));
  return ok_status();
}

}  // namespace

void register_tensor_ops_grads(OpRegistry& r) {
  r.set_grad("Concat", &concat_grad);
  r.set_grad("Split", &split_grad);
  r.set_grad("Slice", &slice_grad);
  r.set_grad("SliceGrad", &slice_grad_grad);
  r.set_grad("Pad", &pad_grad);
  r.set_grad("PadGrad", &pad_grad_grad);
  r.set_grad("CumSum", &cumsum_grad);
  r.set_grad("Trilu", &trilu_grad);
}

}  // namespace tsr::ops
