// Conv entry points shared with other kernel families (the quantized convs).
#pragma once

#include "core/exec/kernel.h"

namespace tsr::cpu {

// Integer convolution for ConvInteger / QLinearConv: y (i32, allocated with Conv's output
// shape) = Conv(x, w) with the node's group / strides / dilations / pads / auto_pad, x [N, C, D...]
// and w [M, C/group, k...] both i32 (zero points already subtracted), i32 accumulation (wraps on
// overflow). Same im2col + GEMM path as Conv (nn.cpp) with the reference GEMM.
Status conv_i32(exec::KernelContext& ctx, const Tensor& x, const Tensor& w, Tensor* y);

}  // namespace tsr::cpu
