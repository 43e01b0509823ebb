// Winograd F(4x4, 3x3) convolution for the CPU Conv kernel (nn.cpp), after Lavin & Gray, "Fast
// Algorithms for Convolutional Neural Networks" (CVPR 2016). Each 4x4 block of outputs is computed
// from a 6x6 input tile as Y = A^T [U (.) V] A, with U = G g G^T (weights, transformed once when
// the kernel is created) and V = B^T d B (input tiles). Summed over input channels, the 36
// element-wise products become 36 GEMMs [M x C] x [C x tiles], 36 multiply-adds per 16 outputs
// instead of 144: 4x fewer than im2col + GEMM, for about 1e-6 relative rounding error (points
// 0, +-1, +-2; the conformance and real-model tests hold at 1e-4).
//
// Dilated convs (the same dilation on both axes) are split into d x d phases: the outputs
// (ry + d*j, rx + d*i) of one phase are an undilated 3x3 conv of the input sampled every d, so
// each phase is tiled like an undilated conv, reading the input split once into its d x d phase
// planes (contiguous rows instead of a gather per element).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_direct.h"
#include "backends/cpu/kernels/nn_window.h"
#include "core/base/selective.h"
#include "core/base/thread_pool.h"
#include "core/ops/fused_activation.h"

namespace tsr::cpu {

// The weights of a group-1 3x3 Conv (W: M x C x 3 x 3, f32) transformed for F(4x4, 3x3): for
// each xi = 6 * a + b (the position in the 6x6 tile), the M x C matrix of (G g G^T)[a][b], packed
// for sgemm_direct (as fast as the packed SGEMM or faster on these products of a few vectors of
// columns, M and C from 8 to 256, without copying the transformed input); 4x the weights'
// memory, the raw matrices are not kept. The 36 matrices are one buffer, on transparent huge
// pages where it holds whole ones (huge_pages.h: they are streamed from DRAM on every run).
struct WinogradWeights {
  int64_t m = 0, c = 0;
  std::vector<float> packed;  // 36 * m * c: matrix xi at xi * m * c (sgemm_direct_pack_a_into); empty: none
  bool empty() const { return packed.empty(); }
  const float* matrix(int64_t xi) const { return packed.data() + xi * m * c; }
};

// Whether the weights (M x C x kh x kw, group `group`) can use Winograd at all: 3x3, group 1, and
// enough channels (C, M >= 8) for the 36 GEMMs to outweigh the tile transforms. Checked when the
// kernel is created, before spending memory on the transformed weights (4x the weights).
// Never in the size-first kernel set (core/base/selective.h).
inline bool winograd_weights_apply(int64_t m, int64_t c, int64_t kh, int64_t kw, int64_t group) {
  return !kSizeFirstKernels && group == 1 && kh == 3 && kw == 3 && c >= 8 && m >= 8;
}

// Whether a conv with these weights runs Winograd for window `w` (known at run time): 2-D, 3x3,
// stride 1, equal dilations, and at least one whole 4x4 tile per phase.
bool winograd_window_applies(const Window3& w);

// Whether Winograd is worth it for window `w` over `n` images (winograd_window_applies(w) holding):
// its 36 GEMMs run whole vectors of tile columns (up to 16 lanes, plus one spare tile per tile row)
// and stream 4x the weights, so on small maps they do more work than im2col + GEMM's 9 per output.
// It pays when 36 * (tile columns, rounded up to 16) <= 0.75 * 9 * outputs. Measured (1 thread,
// AVX-512, torchvision ResNet-18 shapes): 512 channels on 7x7 ran 45-65 GFLOP/s in Winograd (16
// columns for 4 real tiles) against ~103 with im2col + GEMM, while 256 channels on 14x14 ran
// 100-170 against ~72, and 28x28 or larger wins 2-4x.
bool winograd_pays(const Window3& w, int64_t n);

// Transforms W (M x C x 3 x 3, contiguous) in double precision, then rounds to f32.
WinogradWeights winograd_prepare(const float* w, int64_t m, int64_t c);

// y = act(conv(x, W) + bias + z) for `n` images: x is N x C x H x W, y (and z, the FusedConv
// residual, may be null) N x M x OH x OW, bias M floats or null; `w` as resolved for the node
// (winograd_window_applies(w) must hold). Blocks of tile rows are spread over ctx.pool(), their
// buffers taken from ctx.scratch. Errors: kResource when the scratch does not fit the budget.
Status winograd_conv(exec::KernelContext& ctx, const WinogradWeights& u, const float* x, int64_t n, const Window3& w,
                     const float* bias, const float* z, const ops::ActivationSpec& act, float* y);

}  // namespace tsr::cpu
