// Small helpers shared by the shape / data-movement op families' inference functions and by backend
// kernels that resolve the same attributes (a declared shared header, like core/ops/spatial.h).
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "core/ops/op_def.h"

namespace tsr::ops::shape_util {

// Input i's value as int64s when it is present and its value is known now (a constant at load
// time, always at run time); nullopt otherwise. The caller checks dtype (i32/i64) beforehand.
inline std::optional<Ints> known_i64(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return std::nullopt;
  const Tensor* v = ctx.input_value(i);
  if (!v) return std::nullopt;
  return v->to_shape();
}

// Rank of input i, or -1 when unknown.
inline int64_t rank_of(const InferContext& ctx, size_t i) {
  const ValueType& t = ctx.input(i);
  return t.has_shape ? static_cast<int64_t>(t.shape.size()) : -1;
}

// Number of elements of a 1-D input whose length is statically known, else -1.
inline int64_t static_len_1d(const InferContext& ctx, size_t i) {
  const ValueType& t = ctx.input(i);
  if (!t.has_shape) return -1;
  if (t.shape.empty()) return 1;
  return t.shape.size() == 1 ? t.shape[0] : -1;
}

// Normalizes `axis` into [0, rank) with an error naming the node and attribute/input.
inline Expected<int64_t> norm_axis(const InferContext& ctx, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    return ctx.ir_error(what, " ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

// Product of dims, or -1 if any is dynamic.
inline int64_t known_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

// Checks a value-derived dim (from a shape input, a repeat count, ...) is non-negative and not
// absurd; bounds what later allocations may request.
inline Status check_dim(const InferContext& ctx, int64_t d, const char* what) {
  if (d < 0) return ctx.arg_error(what, ": negative dim ", d);
  if (d > (int64_t{1} << 48)) return ctx.arg_error(what, ": dim ", d, " is too large");
  return ok_status();
}

// Sets output 0 to `dtype` with the shape held by the i64 1-D input i (gradient ops whose output
// takes the forward input's shape): exact when the value is known, else its rank when that is.
inline Status set_output_from_shape_input(InferContext& ctx, DType dtype, size_t i) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(i, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(i, 1, 1));
  if (auto dims = known_i64(ctx, i)) {
    for (int64_t d : *dims) TSR_RETURN_IF_ERROR(check_dim(ctx, d, "shape input"));
    ctx.set_output(0, dtype, *dims);
    return ok_status();
  }
  const int64_t n = static_len_1d(ctx, i);
  if (n < 0) ctx.set_output_unknown_shape(0, dtype);
  else ctx.set_output(0, dtype, Shape(static_cast<size_t>(n), -1));
  return ok_status();
}

// Per-axis Slice parameters after the spec's normalization and clamping (ONNX Slice-13): for
// each data axis, the first index, the step and the element count (untouched axes: 0, 1, dim).
struct SliceParams {
  Ints start, step, count;
};

// Computes SliceParams for `dims` (all >= 0). `axes` empty = 0..n-1, `steps` empty = all 1.
// Errors (returned as a message, the caller adds the place): length mismatch, axis out of range
// or repeated, zero step.
inline Expected<SliceParams> slice_params(const Shape& dims, const Ints& starts, const Ints& ends, Ints axes,
                                          Ints steps) {
  const auto r = static_cast<int64_t>(dims.size());
  const size_t n = starts.size();
  if (ends.size() != n) return invalid_argument("starts has ", n, " values but ends has ", ends.size());
  if (axes.empty())
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(n, 1);
  if (axes.size() != n || steps.size() != n)
    return invalid_argument("starts, ends, axes and steps have different lengths (", n, ", ", ends.size(), ", ",
                            axes.size(), ", ", steps.size(), ")");
  SliceParams p;
  p.start.assign(dims.size(), 0);
  p.step.assign(dims.size(), 1);
  p.count = dims;
  SmallVector<bool, kInlineDims> seen(dims.size(), false);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes[i];
    if (a < -r || a >= r) return invalid_argument("axes[", i, "] = ", a, " is out of range for rank ", r);
    if (a < 0) a += r;
    if (seen[static_cast<size_t>(a)]) return invalid_argument("axis ", axes[i], " is repeated in axes");
    seen[static_cast<size_t>(a)] = true;
    const int64_t d = dims[static_cast<size_t>(a)], st = steps[i];
    if (st == 0) return invalid_argument("steps[", i, "] is 0");
    int64_t b = starts[i], e = ends[i];
    // Large magnitudes (INT64_MAX/MIN as "to the end") must not overflow when d is added.
    if (b < 0) b = b < -d ? -1 : b + d;
    if (e < 0) e = e < -d ? -1 : e + d;
    if (d == 0) {
      b = e = 0;
    } else if (st > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
    } else {  // the spec clamps a negative-step start into [0, d-1] (numpy would give empty)
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
    }
    // |step| >= the span gives one element; capping it keeps the arithmetic below overflow-free
    // for steps like INT64_MIN.
    const int64_t mag = st > 0 ? std::min<int64_t>(st, int64_t{1} << 50) : std::min<int64_t>(-(st + 1), (int64_t{1} << 50) - 1) + 1;
    int64_t c = 0;
    if (st > 0 && e > b) c = (e - b + mag - 1) / mag;
    if (st < 0 && b > e) c = (b - e + mag - 1) / mag;
    p.start[static_cast<size_t>(a)] = b;
    p.step[static_cast<size_t>(a)] = c <= 1 ? 1 : (st > 0 ? mag : -mag);
    p.count[static_cast<size_t>(a)] = c;
  }
  return p;
}

}  // namespace tsr::ops::shape_util
