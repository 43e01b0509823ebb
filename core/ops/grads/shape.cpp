// Gradient rules of the shape-manipulation ops (core/ops/families/shape.cpp). These ops move
// elements without arithmetic, so each VJP moves dY back: the inverse reshape or permutation, or
// a sum over the copies for the broadcasting ones (Expand, Tile). Shape-like inputs (shape, axes,
// repeats) are integers and get no gradient.
#include <algorithm>

#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

using ir::Attribute;

// dY reshaped to X's shape. allowzero=1: X's own zero dims must not read as "copy dY's dim".
Value reshape_to(Emitter& e, Value dy, Value like) {
  return e.emit("Reshape", {dy, dims_of(e, like)}, {Attribute::make_int("allowzero", 1)});
}

// Reshape, Flatten, Squeeze, Unsqueeze: Y is X's elements in the same order, so dX = Reshape(dY,
// Shape(X)).
Status reshape_grad(GradContext& g) {
  g.set_grad(0, reshape_to(g.emitter(), g.grad_output(0), g.input(0)));
  return ok_status();
}

// Y = broadcast(X): dX = SumTo(dY, Shape(X)).
Status expand_grad(GradContext& g) {
  g.set_grad(0, sum_to(g.emitter(), g.grad_output(0), g.input(0)));
  return ok_status();
}

// Y = Tile(X, r): Y viewed as [r0, d0, r1, d1, ...] holds r0*r1*... copies of X, so dX sums that
// view over the repeat axes 0, 2, 4, ...
Status tile_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const ValueType x = g.input_type(0);
  if (!x.has_shape) return g.error("the input rank must be known");
  const auto r = static_cast<int64_t>(x.shape.size());
  if (r == 0) {
    g.set_grad(0, g.grad_output(0));
    return ok_status();
  }
  const auto reps = known_ints(e, g.input(1));
  if (reps && std::all_of(reps->begin(), reps->end(), [](int64_t k) { return k == 1; })) {
    g.set_grad(0, g.grad_output(0));
    return ok_status();
  }
  Value view;
  if (reps && x.fully_known()) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < r; ++i) {
      v.push_back((*reps)[static_cast<size_t>(i)]);
      v.push_back(x.shape[static_cast<size_t>(i)]);
    }
    view = ints_const(e, v);
  } else {  // interleave at run time: Concat([reps, dims] as columns) flattened row-major
    const Value one = ints_const(e, {1});
    const Value cols = e.emit("Concat", {e.emit("Unsqueeze", {g.input(1), one}), e.emit("Unsqueeze", {dims_of(e, g.input(0)), one})},
                              {Attribute::make_int("axis", 1)});
    view = e.emit("Reshape", {cols, ints_const(e, {-1})});
  }
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < r; ++i) axes.push_back(2 * i);
  const Value viewed = e.emit("Reshape", {g.grad_output(0), view}, {Attribute::make_int("allowzero", 1)});
  g.set_grad(0, e.emit("ReduceSum", {viewed, ints_const(e, axes)}, {Attribute::make_int("keepdims", 0)}));
  return ok_status();
}

// Y = Transpose(X, p): Y[i] = X[i permuted by p], so dX = Transpose(dY, p^-1).
Status transpose_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const ir::Attribute* pa = g.node().attr("perm");
  if (!pa) {  // the default reverses the axes, its own inverse
    g.set_grad(0, e.emit("Transpose", {g.grad_output(0)}));
    return ok_status();
  }
  std::vector<int64_t> inv(pa->ints.size());
  for (size_t i = 0; i < pa->ints.size(); ++i) {
    const int64_t p = pa->ints[i];
    if (p < 0 || p >= static_cast<int64_t>(inv.size())) return g.error("perm is not a permutation");
    inv[static_cast<size_t>(p)] = static_cast<int64_t>(i);
  }
  g.set_grad(0, e.emit("Transpose", {g.grad_output(0)}, {Attribute::make_ints("perm", inv)}));
  return ok_status();
}

// DepthToSpace is a permutation; its adjoint is the inverse permutation. For DCR that is
// SpaceToDepth. CRD moves [N, C, b, b, H, W] to [N, C, H, b, W, b]: undo it through the 6-D view.
Status depth_to_space_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const int64_t b = g.node().attr_int("blocksize");
  const Value dy = g.grad_output(0);
  if (g.node().attr_string("mode") != "CRD") {
    g.set_grad(0, e.emit("SpaceToDepth", {dy}, {Attribute::make_int("blocksize", b)}));
    return ok_status();
  }
  const Value x = g.input(0);
  const Value blk = ints_const(e, {b});
  const Value view = e.emit("Concat", {ints_const(e, {0, 0}), dims_of(e, x, 2, 3), blk, dims_of(e, x, 3, 4), blk},
                            {Attribute::make_int("axis", 0)});
  const Value v6 = e.emit("Reshape", {dy, view});
  const Value t = e.emit("Transpose", {v6}, {Attribute::make_ints("perm", {0, 1, 3, 5, 2, 4})});
  g.set_grad(0, reshape_to(e, t, x));
  return ok_status();
}

// SpaceToDepth is the inverse of DepthToSpace(DCR), so its adjoint is that.
Status space_to_depth_grad(GradContext& g) {
  g.set_grad(0, g.emitter().emit("DepthToSpace", {g.grad_output(0)},
                                 {Attribute::make_int("blocksize", g.node().attr_int("blocksize")),
                                  Attribute::make_string("mode", "DCR")}));
  return ok_status();
}

}  // namespace

void register_shape_grads(OpRegistry& r) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) r.set_grad(op, &reshape_grad);
  r.set_grad("Expand", &expand_grad);
  r.set_grad("Tile", &tile_grad);
  r.set_grad("Transpose", &transpose_grad);
  r.set_grad("DepthToSpace", &depth_to_space_grad);
  r.set_grad("SpaceToDepth", &space_to_depth_grad);
}

}  // namespace tsr::ops
