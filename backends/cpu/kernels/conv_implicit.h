// Implicit-GEMM 2-D convolution for the CPU Conv kernel (nn.cpp), for convs whose output channels
// per group fit sgemm_direct (gemm_direct.h). im2col writes K = C * kh * kw shifted copies of the
// input before the GEMM reads them back; here the input of one group is copied once instead,
// zero-padded and, for strides > 1, split into its s_h x s_w phase planes (phase (qy, qx) holds
// padded rows qy + s_h * i and columns qx + s_w * j). Every tap (c, kh, kw) is then one phase
// plane shifted by (kh * d_h / s_h, kw * d_w / s_w), contiguous along output columns, and the conv
// is one GEMM whose K rows are these shifted views (sgemm_direct_rows), the idea of the indirect
// convolution algorithm (Dukhan, "The Indirect Convolution Algorithm", 2019) with a view per tap
// instead of a pointer per output pixel. The GEMM computes output rows as wide as a phase plane,
// Wq = OW + (kw - 1) * d_w / s_w (the extra columns are discarded), in blocks of rows whose
// results go to y with Z and the activation while they are in cache; where OW >= 64 and Wq > OW
// (the stems: 3x3 and 7x7 at stride 2), one GEMM per output row of OW columns writes y directly.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/gemm_direct.h"
#include "backends/cpu/kernels/nn_window.h"
#include "core/base/thread_pool.h"
#include "core/ops/fused_activation.h"

namespace tsr::cpu {

// Whether conv_implicit handles window `w`: 2-D (w.in[0] == w.k[0] == 1).
bool conv_implicit_applies(const Window3& w);

// One image and group: y (M x OH x OW, M = a.m) = act(conv(x, W) + bias + z), x the group's
// C = a.k / (kh * kw) planes (H x W, contiguous), W packed by sgemm_direct_pack_a from the group's
// M x (C * kh * kw) weights; bias (M floats) and z (y's layout) may be null. Blocks of output rows
// are spread over ctx.pool() when `threaded`. Takes scratch from ctx (KernelContext::scratch) of
// about C * (H + pads) * (W + pads) floats (the padded input) plus a block of outputs per slot.
// Errors: kResource when the scratch does not fit the memory budget.
Status conv_implicit(exec::KernelContext& ctx, const SgemmDirectA& a, const float* x, const Window3& w,
                     const float* bias, const float* z, const ops::ActivationSpec& act, float* y, bool threaded);

// All images and groups of a grouped conv (ResNeXt's 32 groups of 4..32 channels), the threads
// of ctx.pool() taking whole (image, group) pairs, each run as conv_implicit runs one unthreaded
// (a pool split inside each small group cost two fork/joins per group: the grouped convs ran
// slower on two threads than on one). a: `group` packed weights (one per group, equal m and k);
// x: n_batch x (group * C) x H x W; y, z: n_batch x (group * M) x OH x OW; bias: group * M or
// null. Scratch per slot of the pool: one group's padded input and a block of outputs.
// Errors: kResource when the scratch does not fit the memory budget.
Status conv_implicit_groups(exec::KernelContext& ctx, const SgemmDirectA* a, const float* x, int64_t n_batch,
                            int64_t group, const Window3& w, const float* bias, const float* z,
                            const ops::ActivationSpec& act, float* y);

}  // namespace tsr::cpu
