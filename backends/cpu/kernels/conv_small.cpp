// The direct f32 ConvGradWeight of conv_small.h (layout and order there). Compiled once
// per SIMD target (hwy/foreach_target.h); the entry point dispatches to the best target this
// CPU supports.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/conv_small.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>

#include "backends/cpu/kernels/conv_small.h"

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/epilogue.h"
#include "backends/cpu/kernels/scratch.h"
#include "backends/cpu/kernels/short_rows-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using short_rows::copy_row;

// Output channels per register block: 4 where the target has 32 vector registers (16
// accumulators, 4 tap vectors and dY), 2 where it has 16.
constexpr int kBlockO = HWY_MAX_BYTES >= 64 ? 4 : 2;
constexpr int kBlockT = 4;

// acc[t][o] (lanes at acc + t * tap_stride + o * lanes) += the dots over `run` floats of the
// padded plane at xs + off[t] with the dY planes dys[o], for kT taps and kO output channels.
template <int kT, int kO>
HWY_INLINE void tap_block(const float* HWY_RESTRICT xs, const int64_t* off, const float* const* dys, int64_t run,
                          float* HWY_RESTRICT acc, int64_t tap_stride) {
  const hn::ScalableTag<float> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<decltype(d)> a[kT][kO];
  for (int t = 0; t < kT; ++t)
    for (int o = 0; o < kO; ++o) a[t][o] = hn::LoadU(d, acc + t * tap_stride + o * N);
  for (int64_t i = 0; i < run; i += N) {
    hn::Vec<decltype(d)> xv[kT];
    for (int t = 0; t < kT; ++t) xv[t] = hn::LoadU(d, xs + off[t] + i);
    for (int o = 0; o < kO; ++o) {
      const auto dv = hn::LoadU(d, dys[o] + i);
      for (int t = 0; t < kT; ++t) a[t][o] = hn::MulAdd(xv[t], dv, a[t][o]);
    }
  }
  for (int t = 0; t < kT; ++t)
    for (int o = 0; o < kO; ++o) hn::StoreU(a[t][o], d, acc + t * tap_stride + o * N);
}

// The block's instantiation for kt <= kBlockT taps and ko <= kBlockO output channels.
template <int kT>
HWY_INLINE void tap_block_o(int ko, const float* xs, const int64_t* off, const float* const* dys, int64_t run,
                            float* acc, int64_t tap_stride) {
  switch (ko) {
    case 1: return tap_block<kT, 1>(xs, off, dys, run, acc, tap_stride);
    case 2: return tap_block<kT, 2>(xs, off, dys, run, acc, tap_stride);
    case 3: if constexpr (kBlockO >= 3) return tap_block<kT, 3>(xs, off, dys, run, acc, tap_stride); break;
    default: if constexpr (kBlockO >= 4) return tap_block<kT, 4>(xs, off, dys, run, acc, tap_stride); break;
  }
}

void dispatch_block(int kt, int ko, const float* xs, const int64_t* off, const float* const* dys, int64_t run,
                    float* acc, int64_t tap_stride) {
  switch (kt) {
    case 1: return tap_block_o<1>(ko, xs, off, dys, run, acc, tap_stride);
    case 2: return tap_block_o<2>(ko, xs, off, dys, run, acc, tap_stride);
    case 3: return tap_block_o<3>(ko, xs, off, dys, run, acc, tap_stride);
    default: return tap_block_o<4>(ko, xs, off, dys, run, acc, tap_stride);
  }
}

}  // namespace

void conv_grad_weight_direct_target(const ConvSmallPlan& p, const float* x, const float* dy, float* dw,
                                    int64_t n0, int64_t n1, float* scratch) {
  const hn::ScalableTag<float> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t taps = p.taps(), in_size = p.h_in * p.w_in, out_size = p.h_out * p.w_out;
  float* xp = scratch;                // [c][x_plane], zero borders
  float* dyp = xp + p.c * p.x_plane;  // [m][dy_plane], zero extra columns and tail
  float* acc = dyp + p.m * p.dy_plane;  // [c][taps][m][N]
  std::fill(scratch, acc + p.c * taps * p.m * N, 0.0f);
  int64_t off[ConvSmallPlan::kMaxTaps];
  for (int64_t k = 0; k < taps; ++k) off[k] = (k / p.kw) * p.wp + k % p.kw;
  const float* dys[kBlockO];
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t ch = 0; ch < p.c; ++ch)
      for (int64_t ih = 0; ih < p.h_in; ++ih)
        copy_row(xp + ch * p.x_plane + (ih + p.pbh) * p.wp + p.pbw, x + (n * p.c + ch) * in_size + ih * p.w_in, p.w_in);
    for (int64_t o = 0; o < p.m; ++o)
      for (int64_t oh = 0; oh < p.h_out; ++oh)
        copy_row(dyp + o * p.dy_plane + oh * p.wp, dy + (n * p.m + o) * out_size + oh * p.w_out, p.w_out);
    for (int64_t ch = 0; ch < p.c; ++ch)
      for (int64_t k0 = 0; k0 < taps; k0 += kBlockT) {
        const int kt = static_cast<int>(std::min<int64_t>(kBlockT, taps - k0));
        for (int64_t o0 = 0; o0 < p.m; o0 += kBlockO) {
          const int ko = static_cast<int>(std::min<int64_t>(kBlockO, p.m - o0));
          for (int o = 0; o < ko; ++o) dys[o] = dyp + (o0 + o) * p.dy_plane;
          dispatch_block(kt, ko, xp + ch * p.x_plane, off + k0, dys, p.run, acc + ((ch * taps + k0) * p.m + o0) * N,
                         p.m * N);
        }
      }
  }
  for (int64_t o = 0; o < p.m; ++o)
    for (int64_t ch = 0; ch < p.c; ++ch)
      for (int64_t k = 0; k < taps; ++k) {
        const float* a = acc + ((ch * taps + k) * p.m + o) * N;
        double sum = 0;
        for (int64_t l = 0; l < N; ++l) sum += static_cast<double>(a[l]);
        dw[(o * p.c + ch) * taps + k] = static_cast<float>(sum);
      }
}

// Forward: out[o][i] (o < kO, i < run) = sum over channels and taps, in that order, of
// w[o][ch][k] * the padded plane of ch at off[k] + i: kV vectors of positions at a time (each
// broadcast weight used kV times), kO x kV accumulators.
template <int kO, int kV>
HWY_INLINE int64_t forward_block(const ConvSmallPlan& p, int64_t i, const float* HWY_RESTRICT xp, const int64_t* off,
                                 const float* HWY_RESTRICT w, float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t taps = p.taps(), wstride = p.c * taps;
  for (; i + kV * N <= p.run; i += kV * N) {
    hn::Vec<decltype(d)> a[kO][kV];
    for (int o = 0; o < kO; ++o)
      for (int v = 0; v < kV; ++v) a[o][v] = hn::Zero(d);
    for (int64_t ch = 0; ch < p.c; ++ch) {
      const float* xs = xp + ch * p.x_plane + i;
      const float* wc = w + ch * taps;
      for (int64_t k = 0; k < taps; ++k) {
        hn::Vec<decltype(d)> xv[kV];
        for (int v = 0; v < kV; ++v) xv[v] = hn::LoadU(d, xs + off[k] + v * N);
        for (int o = 0; o < kO; ++o) {
          const auto wv = hn::Set(d, wc[o * wstride + k]);
          for (int v = 0; v < kV; ++v) a[o][v] = hn::MulAdd(wv, xv[v], a[o][v]);
        }
      }
    }
    for (int o = 0; o < kO; ++o)
      for (int v = 0; v < kV; ++v) hn::StoreU(a[o][v], d, out + o * p.run + i + v * N);
  }
  return i;
}

// Output channels per block, and position vectors per block: 8 x 2 accumulators where the
// target has 32 vector registers, 8 x 1 where it has 16.
constexpr int kForwardBlockO = kSmallForwardBlockO;
constexpr int kForwardBlockV = HWY_MAX_BYTES >= 64 ? 2 : 1;

template <int kO>
void forward_rows(const ConvSmallPlan& p, const float* xp, const int64_t* off, const float* w, float* out) {
  const int64_t i = forward_block<kO, kForwardBlockV>(p, 0, xp, off, w, out);
  if (kForwardBlockV > 1) forward_block<kO, 1>(p, i, xp, off, w, out);
}

void forward_block_n(int ko, const ConvSmallPlan& p, const float* xp, const int64_t* off, const float* w, float* out) {
  short_rows::with_block8(ko, [&](auto o) { forward_rows<decltype(o)::value>(p, xp, off, w, out); });
}

void conv_small_forward_target(const ConvSmallPlan& p, const float* x, const float* w, const float* bias,
                               const float* z, const ops::ActivationSpec& act, int64_t n0, int64_t n1, float* y,
                               float* scratch) {
  const int64_t taps = p.taps(), in_size = p.h_in * p.w_in, out_size = p.h_out * p.w_out;
  float* xp = scratch;                  // [c][x_plane], zero borders
  float* out = xp + p.c * p.x_plane;    // [kForwardBlockO][run]
  std::fill(xp, out, 0.0f);
  int64_t off[ConvSmallPlan::kMaxTaps];
  for (int64_t k = 0; k < taps; ++k) off[k] = (k / p.kw) * p.wp + k % p.kw;
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t ch = 0; ch < p.c; ++ch)
      for (int64_t ih = 0; ih < p.h_in; ++ih)
        copy_row(xp + ch * p.x_plane + (ih + p.pbh) * p.wp + p.pbw, x + (n * p.c + ch) * in_size + ih * p.w_in, p.w_in);
    float* yn = y + n * p.m * out_size;
    for (int64_t o0 = 0; o0 < p.m; o0 += kForwardBlockO) {
      const int ko = static_cast<int>(std::min<int64_t>(kForwardBlockO, p.m - o0));
      forward_block_n(ko, p, xp, off, w + o0 * p.c * taps, out);
      for (int o = 0; o < ko; ++o)
        for (int64_t oh = 0; oh < p.h_out; ++oh)
          copy_row(yn + (o0 + o) * out_size + oh * p.w_out, out + o * p.run + oh * p.wp, p.w_out);
    }
    apply_epilogue_rows(act, yn, p.m, out_size, out_size, bias, z ? z + n * p.m * out_size : nullptr, out_size);
  }
}

void conv_small_gather_dy_target(const ConvSmallPlan& p, const float* dy, int64_t n0, int64_t count,
                                       float* dye) {
  const int64_t ld = count * p.run, out_size = p.h_out * p.w_out;
  std::fill(dye, dye + p.m * ld, 0.0f);
  for (int64_t j = 0; j < count; ++j)
    for (int64_t o = 0; o < p.m; ++o)
      for (int64_t oh = 0; oh < p.h_out; ++oh)
        copy_row(dye + o * ld + j * p.run + oh * p.wp, dy + ((n0 + j) * p.m + o) * out_size + oh * p.w_out, p.w_out);
}

void conv_grad_input_direct_col2im_target(const ConvSmallPlan& p, const float* col, int64_t n0, int64_t count,
                                          float* dx, float* scratch) {
  const hn::ScalableTag<float> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t taps = p.taps(), ld = count * p.run, in_size = p.h_in * p.w_in;
  for (int64_t j = 0; j < count; ++j)
    for (int64_t ch = 0; ch < p.c; ++ch) {
      std::fill(scratch, scratch + p.x_plane, 0.0f);
      for (int64_t k = 0; k < taps; ++k) {
        float* dst = scratch + (k / p.kw) * p.wp + k % p.kw;
        const float* src = col + (ch * taps + k) * ld + j * p.run;
        for (int64_t i = 0; i < p.run; i += N) hn::StoreU(hn::Add(hn::LoadU(d, dst + i), hn::LoadU(d, src + i)), d, dst + i);
      }
      float* dxc = dx + ((n0 + j) * p.c + ch) * in_size;
      for (int64_t ih = 0; ih < p.h_in; ++ih)
        copy_row(dxc + ih * p.w_in, scratch + (ih + p.pbh) * p.wp + p.pbw, p.w_in);
    }
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(conv_grad_weight_direct_target);
HWY_EXPORT(conv_small_gather_dy_target);
HWY_EXPORT(conv_small_forward_target);
HWY_EXPORT(conv_grad_input_direct_col2im_target);

bool make_conv_small_plan(const Window3& w, int64_t c, int64_t m, int64_t group, ConvSmallPlan* p) {
  if (group != 1 || w.k[0] != 1 || w.in[0] != 1 || w.out[0] != 1 || w.pb[0] != 0 || w.pe[0] != 0) return false;
  for (int a = 1; a < 3; ++a)
    if (w.s[a] != 1 || w.d[a] != 1 || w.pb[a] < 0 || w.pe[a] < 0) return false;
  ConvSmallPlan q;
  q.c = c, q.m = m, q.h_in = w.in[1], q.w_in = w.in[2], q.h_out = w.out[1], q.w_out = w.out[2];
  q.kh = w.k[1], q.kw = w.k[2], q.pbh = w.pb[1], q.pbw = w.pb[2];
  const int64_t taps = q.taps();
  if (m < 1 || m > 16 || c < 1 || taps < 2 || taps > ConvSmallPlan::kMaxTaps || c * taps * m > 8192) return false;
  q.wp = q.w_in + q.pbw + w.pe[2];
  if (q.h_out < 1 || q.w_out < 1 || q.h_out != q.h_in + q.pbh + w.pe[1] - q.kh + 1 || q.w_out != q.wp - q.kw + 1)
    return false;
  const int64_t L = ConvSmallPlan::kMaxLanes;
  q.run = (q.h_out * q.wp + L - 1) / L * L;
  q.x_plane = ((q.kh - 1) * q.wp + q.kw - 1 + q.run + L - 1) / L * L;
  q.dy_plane = q.run;
  *p = q;
  return true;
}

void conv_grad_weight_direct(const ConvSmallPlan& p, const float* x, const float* dy, float* dw, int64_t n0,
                             int64_t n1, float* scratch) {
  HWY_DYNAMIC_DISPATCH(conv_grad_weight_direct_target)(p, x, dy, dw, n0, n1, scratch);
}

Status conv_small_forward(exec::KernelContext& ctx, const ConvSmallPlan& p, const float* x, const float* w,
                          const float* bias, const float* z, const ops::ActivationSpec& act, int64_t n_batch,
                          float* y) {
  const size_t per = static_cast<size_t>(p.c * p.x_plane + kSmallForwardBlockO * p.run);
  TSR_ASSIGN_OR_RETURN(const SlotScratch<float> bufs, SlotScratch<float>::make(ctx, per));
  ctx.pool().parallel_for_slots(n_batch, 1, [&](int slot, int64_t n0, int64_t n1) {
    HWY_DYNAMIC_DISPATCH(conv_small_forward_target)(p, x, w, bias, z, act, n0, n1, y, bufs.slot(slot));
  });
  return ok_status();
}

void conv_small_gather_dy(const ConvSmallPlan& p, const float* dy, int64_t n0, int64_t count, float* dye) {
  HWY_DYNAMIC_DISPATCH(conv_small_gather_dy_target)(p, dy, n0, count, dye);
}

void conv_grad_input_direct_col2im(const ConvSmallPlan& p, const float* col, int64_t n0, int64_t count, float* dx,
                                   float* scratch) {
  HWY_DYNAMIC_DISPATCH(conv_grad_input_direct_col2im_target)(p, col, n0, count, dx, scratch);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
