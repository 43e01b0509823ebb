// Inference helpers shared by the elementwise, unary and reduction op families.
#pragma once

#include <initializer_list>
#include <span>
#include <vector>

#include "core/ops/op_def.h"

namespace tsr::ops::ew {

// Dtype groups named as in the ONNX type constraints.
const std::vector<DType>& numeric_dtypes();       // every int/uint/float type
const std::vector<DType>& float_dtypes();         // f16, bf16, f32, f64
const std::vector<DType>& int_dtypes();           // i8..i64, u8..u64
const std::vector<DType>& signed_numeric_dtypes();  // floats + signed ints

// Checks that input i (when present and known) has one of `allowed`; the error names the input
// index, its dtype and the op's accepted set.
Status check_input_dtype(const InferContext& ctx, size_t i, std::span<const DType> allowed);
// The same for a list written in place (no vector built per call: inference runs every step).
inline Status check_input_dtype(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed) {
  return check_input_dtype(ctx, i, std::span<const DType>(allowed.begin(), allowed.size()));
}

// Output 0 gets `dtype` and the multidirectional broadcast of inputs [first, first+count)
// (omitted inputs are skipped). Unknown rank on any input gives an unknown output shape.
// Incompatible static dims are an error naming the node and both shapes.
Status infer_broadcast(InferContext& ctx, size_t first, size_t count, DType dtype);

// Output `out` = input `in`'s shape with `dtype` (unknown rank stays unknown).
void same_shape_output(InferContext& ctx, size_t in, size_t out, DType dtype);

}  // namespace tsr::ops::ew
