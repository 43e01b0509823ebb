// Output shape of numpy.matmul, shared by MatMul and the quantized matmuls.
#pragma once

#include "core/ops/op_def.h"

namespace tsr::ops {

// Sets output 0 to dtype `dt` and the numpy.matmul shape of inputs ia (A) and ib (B): 1-D A is
// promoted to [1, K] and 1-D B to [K, 1] (the added dims are removed from the result), batch
// dims broadcast. Unknown shapes give an unknown output shape; a scalar operand, differing inner
// dims or non-broadcasting batch dims are errors. Defined in linalg.cpp.
// ta/tb: use the operand with its last two axes swapped (com.microsoft FusedMatMul).
Status infer_matmul_shape(InferContext& ctx, size_t ia, size_t ib, DType dt, bool ta = false, bool tb = false);

}  // namespace tsr::ops
