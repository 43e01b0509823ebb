// f32 kernels of small dense 2-D convs (LeNet's: 1 -> 6 and 6 -> 16 channels, 5x5, stride 1)
// for training: a direct ConvGradWeight (nn_grad.cpp) in place of im2col + GEMM, whose 32-column
// output tiles those few output channels leave mostly empty (and whose column matrix is written
// and packed again), the col2im of ConvGradInput as one run per tap (nn_grad.cpp), and a direct
// forward Conv for weights that come from an input (nn.cpp).
//
// As the depthwise kernels (depthwise_grad.h), each tap becomes one contiguous run: the input
// plane is zero-padded to [hp, wp] (row pitch wp = w_in + pads) and dY is laid out with the
// same pitch (zero in the wp - w_out extra columns), so tap (kh, kw) of channel c reads the run
// of h_out * wp floats of the padded plane at kh * wp + kw, and
//   dW[o, c, kh, kw] = sum over images of dot(padded X_c at kh * wp + kw, dY_o with pitch wp).
// ConvGradWeight's dots run a few vectors at a time: blocks of up to 4 taps x 4 output channels (4 x 2 on
// 16-register targets) accumulate in registers over each image's run, into per-lane sums kept in
// memory across the images of a call and reduced (in double) at the end.
// ConvGradWeight's scratch per call: scratch_floats() (the caller's arena, no allocation per
// step). Errors: none (the plan's checks decide where these kernels apply).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cpu/kernels/nn_window.h"
#include "core/exec/kernel.h"
#include "core/ops/fused_activation.h"

namespace tsr::cpu {

struct ConvSmallPlan {
  static constexpr int64_t kMaxLanes = 16;  // the widest target's f32 lanes (AVX-512)
  static constexpr int64_t kMaxTaps = 64;
  int64_t c = 0, m = 0, h_in = 0, w_in = 0, h_out = 0, w_out = 0, kh = 0, kw = 0, pbh = 0, pbw = 0;
  int64_t wp = 0;        // padded row pitch
  int64_t run = 0;       // h_out * wp rounded up to kMaxLanes: the floats each tap's dot reads
  int64_t x_plane = 0;   // floats per padded input plane, with the slack the last tap's run reads
  int64_t dy_plane = 0;  // floats per dY plane at pitch wp
  int64_t taps() const { return kh * kw; }
  size_t scratch_floats() const {
    return static_cast<size_t>(c * x_plane + m * dy_plane + c * taps() * m * kMaxLanes);
  }
};

// The plan for window `w` of a group-1 conv with `c` input and `m` output channels, or false
// where the GEMM path should run: not 2-D, strided, dilated, negative pads, a 1x1 window, more
// than 16 output channels (then the GEMM's tiles are at least half full) or kMaxTaps taps.
bool make_conv_small_plan(const Window3& w, int64_t c, int64_t m, int64_t group, ConvSmallPlan* p);

// Forward (Conv with weights from an input, as training runs it, over few input taps: c * taps
// <= kMaxForwardTaps): y [n_batch, m, h_out, w_out] = act(conv(x, w) + bias + z) (bias, z may be
// null), images in parallel; per image, up to kSmallForwardBlockO output channels at a time
// accumulate a vector of positions over every channel and tap (one tap load, a broadcast weight
// per product), then the epilogue (epilogue.h) runs on the image's output.
inline constexpr int kSmallForwardBlockO = 8;
inline constexpr int64_t kMaxForwardTaps = 256;
Status conv_small_forward(exec::KernelContext& ctx, const ConvSmallPlan& p, const float* x, const float* w,
                          const float* bias, const float* z, const ops::ActivationSpec& act, int64_t n_batch, float* y);

// ConvGradInput on the same layout (the GEMM stays nn_grad.cpp's): dYe = images [n0, n0 + count)
// of dY as [m, count * run] (image j's run at j * run, rows at pitch wp, zeros elsewhere), then
// col = W^T dYe [c * taps, count * run] (sgemm), then each tap's row of col is added onto a
// zero-padded dX plane as one contiguous run (kernel rows in order, as col2im_add) and the
// plane's interior copied out (every element of those images' dX written). The scratch of
// conv_grad_input_direct_col2im: one plane, x_plane floats.
void conv_small_gather_dy(const ConvSmallPlan& p, const float* dy, int64_t n0, int64_t count, float* dye);
void conv_grad_input_direct_col2im(const ConvSmallPlan& p, const float* col, int64_t n0, int64_t count, float* dx,
                                   float* scratch);

// dW [m, c, kh, kw] = the weight gradient of images [n0, n1) of X [N, c, h_in, w_in] and
// dY [N, m, h_out, w_out] (overwritten, not added to).
void conv_grad_weight_direct(const ConvSmallPlan& p, const float* x, const float* dy, float* dw, int64_t n0,
                             int64_t n1, float* scratch);

}  // namespace tsr::cpu
