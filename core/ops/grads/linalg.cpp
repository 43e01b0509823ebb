// Gradient rules of MatMul and Gemm (core/ops/families/linalg.cpp). 2-D products are emitted as
// Gemm with transA/transB so no transpose is materialized; batched MatMul transposes the
// (smaller) other operand and sums broadcast batch dims back with sum_to.
#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

using ir::Attribute;

// Gemm(a, b) with the given transposes and alpha (no C).
Value gemm(Emitter& e, Value a, Value b, bool ta, bool tb, double alpha = 1.0) {
  std::vector<Attribute> attrs;
  if (ta) attrs.push_back(Attribute::make_int("transA", 1));
  if (tb) attrs.push_back(Attribute::make_int("transB", 1));
  if (alpha != 1.0) attrs.push_back(Attribute::make_float("alpha", alpha));
  return e.emit("Gemm", {a, b}, std::move(attrs));
}

// v with its last two axes swapped (rank >= 2).
Value transpose_last2(Emitter& e, Value v, size_t rank) {
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return e.emit("Transpose", {v}, {Attribute::make_ints("perm", perm)});
}

Value unsqueeze(Emitter& e, Value v, int64_t axis) { return e.emit("Unsqueeze", {v, ints_const(e, {axis})}); }
Value squeeze(Emitter& e, Value v, int64_t axis) { return e.emit("Squeeze", {v, ints_const(e, {axis})}); }

// Y = A @ B (numpy): dA = dY @ B^T, dB = A^T @ dY, each summed back over broadcast batch dims;
// a 1-D A is a row [1, k] and a 1-D B a column [k, 1] whose added axis Y lacks (so dY gets it
// back before the product and the gradient loses it after). With a rank unknown when the backward
// graph is built, the batched form is written with Einsum (dA = dY B^T as "...ij,...kj->...ik").
Status matmul_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const ValueType at = g.input_type(0), bt = g.input_type(1);
  const Value a = g.input(0), b = g.input(1), dy = g.grad_output(0);
  Value da, db;
  if (!at.has_shape || !bt.has_shape) {
    // A rank unknown until run time (a dynamic-rank model): the batched rule written with
    // Einsum's ellipsis, which broadcasts the batch dims of any rank >= 2. A 1-D operand (vector
    // promotion) cannot be told apart here, so a known rank 1 is refused and an unknown one that
    // turns out 1-D fails in Einsum at run time with its shapes named.
    if ((at.has_shape && at.shape.size() < 2) || (bt.has_shape && bt.shape.size() < 2))
      return g.error("a 1-D operand with the other's rank unknown is not supported");
    if (g.wants(0)) da = e.emit("Einsum", {dy, b}, {Attribute::make_string("equation", "...ij,...kj->...ik")});
    if (g.wants(1)) db = e.emit("Einsum", {a, dy}, {Attribute::make_string("equation", "...ki,...kj->...ij")});
    if (g.wants(0)) g.set_grad(0, sum_to(e, da, a));
    if (g.wants(1)) g.set_grad(1, sum_to(e, db, b));
    return ok_status();
  }
  const size_t ra = at.shape.size(), rb = bt.shape.size();
  if (ra == 1 && rb == 1) {  // Y = a . b (a scalar): dA = dY b, dB = dY a
    if (g.wants(0)) da = e.emit("Mul", {dy, b});
    if (g.wants(1)) db = e.emit("Mul", {dy, a});
  } else if (ra == 1) {  // Y [..., n] = a [k] @ B [..., k, n]
    // dA = sum over batch of B @ dY; dB = a (outer) dY.
    const int64_t last = static_cast<int64_t>(rb) - 1;
    if (g.wants(0)) da = squeeze(e, e.emit("MatMul", {b, unsqueeze(e, dy, last)}), last);  // [..., k, 1] -> [..., k]
    if (g.wants(1)) db = e.emit("Mul", {unsqueeze(e, a, 1), unsqueeze(e, dy, static_cast<int64_t>(rb) - 2)});
  } else if (rb == 1) {  // Y [..., m] = A [..., m, k] @ b [k]
    // dA = dY (outer) b; dB = sum over batch of dY @ A.
    if (g.wants(0)) da = e.emit("Mul", {unsqueeze(e, dy, static_cast<int64_t>(ra) - 1), b});
    const int64_t row = static_cast<int64_t>(ra) - 2;  // dY as [..., 1, m]
    if (g.wants(1)) db = squeeze(e, e.emit("MatMul", {unsqueeze(e, dy, row), a}), row);
  } else if (ra == 2 && rb == 2) {
    if (g.wants(0)) da = gemm(e, dy, b, false, true);
    if (g.wants(1)) db = gemm(e, a, dy, true, false);
  } else {
    if (g.wants(0)) da = e.emit("MatMul", {dy, transpose_last2(e, b, rb)});
    if (g.wants(1)) db = e.emit("MatMul", {transpose_last2(e, a, ra), dy});
  }
  if (g.wants(0)) g.set_grad(0, sum_to(e, da, a));
  if (g.wants(1)) g.set_grad(1, sum_to(e, db, b));
  return ok_status();
}

// Y = alpha op(A) op(B) + beta C, with op(A) = A or A^T:
//   d op(A) = alpha dY op(B)^T,  d op(B) = alpha op(A)^T dY,  dC = beta sum_to(dY);
// dA is d op(A), transposed back when transA (so each case is one Gemm with flags).
Status gemm_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const ir::Node& n = g.node();
  const bool ta = n.attr_int("transA") != 0, tb = n.attr_int("transB") != 0;
  const double alpha = n.attr_float("alpha"), beta = n.attr_float("beta");
  const Value a = g.input(0), b = g.input(1), dy = g.grad_output(0);
  if (g.wants(0)) {
    // !ta: dA = alpha dY op(B)^T.  ta: dA = alpha op(B) dY^T.
    g.set_grad(0, ta ? gemm(e, b, dy, tb, true, alpha) : gemm(e, dy, b, false, !tb, alpha));
  }
  if (g.wants(1)) {
    // !tb: dB = alpha op(A)^T dY.  tb: dB = alpha dY^T op(A).
    g.set_grad(1, tb ? gemm(e, dy, a, true, ta, alpha) : gemm(e, a, dy, !ta, false, alpha));
  }
  if (g.wants(2) && g.has_input(2)) {
    const DType dt = g.input_type(2).dtype;
    Value dc = sum_to(e, dy, g.input(2));
    if (beta != 1.0) dc = e.emit("Mul", {dc, scalar(e, dt, beta)});
    g.set_grad(2, dc);
  }
  return ok_status();
}

}  // namespace

void register_linalg_grads(OpRegistry& r) {
  r.set_grad("MatMul", &matmul_grad);
  r.set_grad("Gemm", &gemm_grad);
}

}  // namespace tsr::ops
