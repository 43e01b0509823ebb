// Vectorized f32 gradients of 2-D depthwise convs (one input and one output channel per group,
// MobileNet's 3x3 layers), used by ConvGradInput / ConvGradWeight (nn_grad.cpp), and the
// forward conv of small planes (Conv, nn.cpp; below).
//
// A strided window becomes stride 1 on polyphase planes: the zero-padded input plane Xp
// [Hp, Wp] (Hp = in_h + pad_begin_h + pad_end_h) splits into sh * sw phases P_ab[r][c] =
// Xp[sh r + a][sw c + b] of [Hq, Wq] (Hq = ceil(Hp / sh)), and tap (kh, kw) reads phase
// ((kh dh) % sh, (kw dw) % sw) shifted by ((kh dh) / sh, (kw dw) / sw). Laid out with one row
// pitch, every tap is then one contiguous run over a whole plane (no per-row bounds, no short
// rows: the outputs of these layers are 2-32 wide), which the kernels walk a few vectors at a time:
//   ConvGradWeight: dW[k] = sum over images of dot(P_k shifted, dY with pitch Wq, zero columns);
//   ConvGradInput:  dX phase ab = sum over the taps of phase ab of W[k] * dY shifted (dY with
//                   pitch Wd and zero margins), taps in ascending order as the direct loop (the
//                   same products and sums, in the same order, per element), then interleaved
//                   back into dX.
// ConvGradInput computes kInputGroup planes at a time (small planes are single vectors: their
// sums over the taps run side by side instead of as one chain of dependent adds).
// Scratch per thread slot: the sizes below (the caller's arena, no allocation per step).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cpu/kernels/nn_window.h"

namespace tsr::cpu {

struct DepthwisePlan {
  static constexpr int64_t kMaxTaps = 64;
  static constexpr int64_t kSlack = 256;  // floats past each run: a block of 4 vectors of any target
  static constexpr int64_t kInputGroup = 4;  // ConvGradInput: planes computed side by side
  int64_t h_in = 0, w_in = 0, h_out = 0, w_out = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, pbh = 0, pbw = 0;
  int64_t hq = 0, wq = 0;    // phase plane [hq, wq]
  int64_t qh = 0, qw = 0;    // largest tap shift in phase rows / columns
  int64_t wd = 0;            // ConvGradInput's dY pitch (wq + qw)
  int64_t phase_stride = 0;  // ConvGradWeight: floats per phase plane
  int64_t dyp_size = 0;      // ConvGradWeight: dY with pitch wq
  int64_t dyq_size = 0;      // ConvGradInput: dY with pitch wd and qh zero rows above
  int64_t out_stride = 0;    // ConvGradInput: floats per phase of dX
  int64_t k_size() const { return kh * kw; }
  size_t weight_scratch() const {
    return static_cast<size_t>(sh * sw * phase_stride + dyp_size + kMaxTaps * kSlack);
  }
  size_t input_scratch() const { return static_cast<size_t>(kInputGroup * (dyq_size + sh * sw * out_stride)); }
};

// The plan of window `w` (one input and output channel per group), or false where these kernels
// do not apply (3-D windows, more than kMaxTaps taps or phases, negative pads): the direct loops then run.
inline bool make_depthwise_plan(const Window3& w, DepthwisePlan* p) {
  if (w.k[0] != 1 || w.in[0] != 1 || w.out[0] != 1 || w.pb[0] != 0 || w.pe[0] != 0) return false;
  if (w.k_size() > DepthwisePlan::kMaxTaps || w.k_size() < 1 || w.in[1] < 1 || w.in[2] < 1) return false;
  if (w.pb[1] < 0 || w.pb[2] < 0 || w.pe[1] < 0 || w.pe[2] < 0 || w.out[1] < 1 || w.out[2] < 1) return false;
  DepthwisePlan q;
  q.h_in = w.in[1], q.w_in = w.in[2], q.h_out = w.out[1], q.w_out = w.out[2];
  q.kh = w.k[1], q.kw = w.k[2], q.sh = w.s[1], q.sw = w.s[2], q.dh = w.d[1], q.dw = w.d[2];
  q.pbh = w.pb[1], q.pbw = w.pb[2];
  if (q.sh < 1 || q.sw < 1 || q.dh < 1 || q.dw < 1 || q.sh * q.sw > DepthwisePlan::kMaxTaps) return false;
  const int64_t hp = q.h_in + q.pbh + w.pe[1], wp = q.w_in + q.pbw + w.pe[2];
  q.hq = (hp + q.sh - 1) / q.sh;
  q.wq = (wp + q.sw - 1) / q.sw;
  q.qh = (q.kh - 1) * q.dh / q.sh;
  q.qw = (q.kw - 1) * q.dw / q.sw;
  if (q.h_out + q.qh > q.hq || q.w_out + q.qw > q.wq) return false;  // inconsistent window
  q.wd = q.wq + q.qw;
  q.phase_stride = q.hq * q.wq + q.wq + DepthwisePlan::kSlack;
  q.dyp_size = q.h_out * q.wq + DepthwisePlan::kSlack;
  q.dyq_size = (q.hq + q.qh + 1) * q.wd + DepthwisePlan::kSlack;
  q.out_stride = q.hq * q.wd + DepthwisePlan::kSlack;
  *p = q;
  return true;
}

// The forward depthwise conv of small planes (MobileNetV2's 4x4 and 2x2 layers in training,
// where a plane is 4-16 outputs and the per-plane loops cost several times the products):
// vectorized across 16 channels at a time. Per block of 16 channels of one image, X is
// transposed to [in_size][16] (xt), every output position sums its in-bounds taps in order
// (bias first, then kh, kw ascending: the padded taps the plane loops add are zeros, so the sums
// are those of depthwise.h's rows), and the [out_size][16] result goes back to the planes.
// wt: the weights as [taps][cpad] and the bias (zeros without one) at wt + taps * cpad.
struct DepthwiseSmallPlan {
  static constexpr int64_t kBlock = 16;   // channels per block
  static constexpr int64_t kMaxIn = 64, kMaxOut = 16, kMaxTaps = 25;
  int64_t in_size = 0, out_size = 0, taps = 0, cpad = 0;
  int32_t first[kMaxOut + 1] = {};             // position p's entries [first[p], first[p + 1])
  int32_t tap[kMaxOut * kMaxTaps] = {};        // the weight of an entry
  int32_t src[kMaxOut * kMaxTaps] = {};        // its input element
  size_t weight_floats() const { return static_cast<size_t>((taps + 1) * cpad); }
  size_t scratch_floats() const { return static_cast<size_t>((in_size + out_size) * kBlock); }
};

// The plan of window `w` over c channels, or false where it does not apply (3-D windows, planes
// over kMaxIn inputs or kMaxOut outputs, over kMaxTaps taps): depthwise.h's plane loops then run.
inline bool make_depthwise_small_plan(const Window3& w, int64_t c, DepthwiseSmallPlan* p) {
  if (w.k[0] != 1 || w.in[0] != 1 || w.out[0] != 1 || w.k_size() < 1 || w.k_size() > DepthwiseSmallPlan::kMaxTaps)
    return false;
  if (w.in_size() > DepthwiseSmallPlan::kMaxIn || w.out_size() > DepthwiseSmallPlan::kMaxOut || w.out_size() < 1 || c < 1)
    return false;
  p->in_size = w.in_size(), p->out_size = w.out_size(), p->taps = w.k_size();
  p->cpad = (c + DepthwiseSmallPlan::kBlock - 1) / DepthwiseSmallPlan::kBlock * DepthwiseSmallPlan::kBlock;
  int32_t e = 0;
  for (int64_t oh = 0; oh < w.out[1]; ++oh)
    for (int64_t ow = 0; ow < w.out[2]; ++ow) {
      p->first[oh * w.out[2] + ow] = e;
      for (int64_t kh = 0; kh < w.k[1]; ++kh)
        for (int64_t kw = 0; kw < w.k[2]; ++kw) {
          const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1], iw = ow * w.s[2] - w.pb[2] + kw * w.d[2];
          if (ih < 0 || ih >= w.in[1] || iw < 0 || iw >= w.in[2]) continue;
          p->tap[e] = static_cast<int32_t>(kh * w.k[2] + kw);
          p->src[e++] = static_cast<int32_t>(ih * w.in[2] + iw);
        }
    }
  p->first[p->out_size] = e;
  return true;
}

// wt (plan.weight_floats()) from the weights [c, taps] and the bias (null: zeros).
void depthwise_small_weights(const DepthwiseSmallPlan& p, const float* wk, const float* bias, int64_t c, float* wt);
// Y of blocks [b0, b1) (block b: image b / blocks_per_image, channels 16 (b % blocks_per_image)
// on) of x [N, c, in_size] into y [N, c, out_size]; scratch: plan.scratch_floats().
void depthwise_small_forward(const DepthwiseSmallPlan& p, const float* x, const float* wt, float* y, int64_t c,
                             int64_t b0, int64_t b1, float* scratch);

// The gradients of the same small planes, across 16 channels the same way: dX of blocks [b0, b1)
// (as depthwise_small_forward; wt from depthwise_small_weights) summed per input element over
// the positions in order; dW of channel blocks [cb0, cb1) (channels 16 cb on), each tap summed in
// f32 over one image's positions and in double over the images. scratch: plan.scratch_floats().
void depthwise_small_grad_input(const DepthwiseSmallPlan& p, const float* dy, const float* wt, float* dx, int64_t c,
                                int64_t b0, int64_t b1, float* scratch);
void depthwise_small_grad_weight(const DepthwiseSmallPlan& p, const float* x, const float* dy, float* dw,
                                 int64_t n_batch, int64_t c, int64_t cb0, int64_t cb1, float* scratch);

// dX of planes [p0, p1) of an [N, C] batch (plane p: channel p % c, weights wk + (p % c) * taps).
void depthwise_grad_input_planes(const DepthwisePlan& p, const float* dy, const float* wk, float* dx, int64_t p0,
                                 int64_t p1, int64_t c, float* scratch);
// dW of channels [c0, c1) summed over the n_batch images of an [N, C] batch.
void depthwise_grad_weight_channels(const DepthwisePlan& p, const float* x, const float* dy, float* dw, int64_t c0,
                                    int64_t c1, int64_t n_batch, int64_t c, float* scratch);

}  // namespace tsr::cpu
