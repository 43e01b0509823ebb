// The vectorized f32 depthwise conv gradients of depthwise_grad.h (layout and order there), and
// its forward conv of small planes.
// Compiled once per SIMD target (hwy/foreach_target.h); the entry points dispatch to the best
// target this CPU supports.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/depthwise_grad.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>

#include "backends/cpu/kernels/depthwise_grad.h"
#include "backends/cpu/kernels/short_rows-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

using short_rows::copy_row;

// Stride 2 along the row: element iw of `row` (n of them) is column iw + o of the padded row,
// i.e. element (iw + o) / 2 of phase row (iw + o) % 2. ph[b] points at phase b's row.
// Split (ConvGradWeight's phases from X) and merge (ConvGradInput's dX from its phases), in
// ever narrower vectors (rows of 4-32: MobileNet's stride-2 layers), then single elements.
template <class D>
HWY_INLINE int64_t split_run2(D d, const float* HWY_RESTRICT row, int64_t j, int64_t n, float* HWY_RESTRICT even,
                              float* HWY_RESTRICT odd) {
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  for (; 2 * (j + L) <= n; j += L) {
    hn::Vec<D> v0, v1;
    hn::LoadInterleaved2(d, row + 2 * j, v0, v1);
    hn::StoreU(v0, d, even + j);
    hn::StoreU(v1, d, odd + j);
  }
  return j;
}
template <class D>
HWY_INLINE int64_t merge_run2(D d, float* HWY_RESTRICT row, int64_t j, int64_t n, const float* HWY_RESTRICT even,
                              const float* HWY_RESTRICT odd) {
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  for (; 2 * (j + L) <= n; j += L) hn::StoreInterleaved2(hn::LoadU(d, even + j), hn::LoadU(d, odd + j), d, row + 2 * j);
  return j;
}
void split_row2(const float* HWY_RESTRICT row, int64_t n, int64_t o, float* const ph[2]) {
  float* even = ph[o % 2] + o / 2;            // iw = 2j
  float* odd = ph[(o + 1) % 2] + (o + 1) / 2;  // iw = 2j + 1
  int64_t j = split_run2(hn::ScalableTag<float>(), row, 0, n, even, odd);
  j = split_run2(hn::CappedTag<float, 8>(), row, j, n, even, odd);
  j = split_run2(hn::CappedTag<float, 4>(), row, j, n, even, odd);
  for (int64_t iw = 2 * j; iw < n; ++iw) (iw % 2 ? odd : even)[iw / 2] = row[iw];
}
void merge_row2(float* HWY_RESTRICT row, int64_t n, int64_t o, const float* const ph[2]) {
  const float* even = ph[o % 2] + o / 2;
  const float* odd = ph[(o + 1) % 2] + (o + 1) / 2;
  int64_t j = merge_run2(hn::ScalableTag<float>(), row, 0, n, even, odd);
  j = merge_run2(hn::CappedTag<float, 8>(), row, j, n, even, odd);
  j = merge_run2(hn::CappedTag<float, 4>(), row, j, n, even, odd);
  for (int64_t iw = 2 * j; iw < n; ++iw) row[iw] = (iw % 2 ? odd : even)[iw / 2];
}

// Tap (i, j)'s phase index and its offset inside the phase plane of row pitch `pitch`.
struct Tap {
  int64_t phase, off;
};
Tap tap_of(const DepthwisePlan& p, int64_t i, int64_t j, int64_t pitch) {
  const int64_t y = i * p.dh, x = j * p.dw;
  return {(y % p.sh) * p.sw + x % p.sw, (y / p.sh) * pitch + x / p.sw};
}

// ConvGradInput on planes [p0, p1), kInputGroup planes at a time. Scratch per plane of a group:
// dyq [dyq_size] (zero margins, written once per call), then sh * sw phase outputs of
// out_stride floats.
void grad_input_planes(const DepthwisePlan& p, const float* dy, const float* wk, float* dx, int64_t p0, int64_t p1,
                       int64_t c, float* scratch) {
  const hn::ScalableTag<float> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t G = DepthwisePlan::kInputGroup;
  const int64_t taps = p.k_size(), in_size = p.h_in * p.w_in, out_size = p.h_out * p.w_out;
  const int64_t per_plane = p.dyq_size + p.sh * p.sw * p.out_stride;
  std::fill(scratch, scratch + G * per_plane, 0.0f);
  // Whole vectors (<= hq * wd + kSlack): blocks of 4, then single vectors (small planes).
  const int64_t len = round_up(p.hq * p.wd, N), len4 = len / (4 * N) * (4 * N);
  // Per phase, its taps in ascending order: out[i] = sum W[k] * dyq[i + qh * wd + qw - shift_k].
  int64_t src_off[DepthwisePlan::kMaxTaps], tap_k[DepthwisePlan::kMaxTaps], first[DepthwisePlan::kMaxTaps + 1];
  int64_t nt = 0;
  for (int64_t ph = 0; ph < p.sh * p.sw; ++ph) {
    first[ph] = nt;
    for (int64_t k = 0; k < taps; ++k) {
      const Tap t = tap_of(p, k / p.kw, k % p.kw, p.wd);
      if (t.phase != ph) continue;
      src_off[nt] = p.qh * p.wd + p.qw - t.off;
      tap_k[nt++] = k;
    }
  }
  first[p.sh * p.sw] = nt;
  float wv[G][DepthwisePlan::kMaxTaps];
  for (int64_t pl0 = p0; pl0 < p1; pl0 += G) {
    const int64_t ng = std::min(G, p1 - pl0);
    if (pl0 + G < p1) short_rows::prefetch_run(dy + (pl0 + G) * out_size, std::min(G, p1 - pl0 - G) * out_size);
    for (int64_t j = 0; j < ng; ++j) {
      const float* w = wk + ((pl0 + j) % c) * taps;
      for (int64_t t = 0; t < nt; ++t) wv[j][t] = w[tap_k[t]];
      const float* g = dy + (pl0 + j) * out_size;
      float* dyq = scratch + j * per_plane;
      for (int64_t oh = 0; oh < p.h_out; ++oh) copy_row(dyq + (oh + p.qh) * p.wd + p.qw, g + oh * p.w_out, p.w_out);
    }
    for (int64_t ph = 0; ph < p.sh * p.sw; ++ph) {
      // Mul then Add (not MulAdd): the rounding of the direct loop these kernels replaced.
      for (int64_t j = 0; j < ng; ++j) {
        const float* dyq = scratch + j * per_plane;
        float* o = scratch + j * per_plane + p.dyq_size + ph * p.out_stride;
        for (int64_t i = 0; i < len4; i += 4 * N) {
          auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
          for (int64_t t = first[ph]; t < first[ph + 1]; ++t) {
            const float* s = dyq + src_off[t] + i;
            const auto vw = hn::Set(d, wv[j][t]);
            a0 = hn::Add(a0, hn::Mul(vw, hn::LoadU(d, s)));
            a1 = hn::Add(a1, hn::Mul(vw, hn::LoadU(d, s + N)));
            a2 = hn::Add(a2, hn::Mul(vw, hn::LoadU(d, s + 2 * N)));
            a3 = hn::Add(a3, hn::Mul(vw, hn::LoadU(d, s + 3 * N)));
          }
          hn::StoreU(a0, d, o + i);
          hn::StoreU(a1, d, o + i + N);
          hn::StoreU(a2, d, o + i + 2 * N);
          hn::StoreU(a3, d, o + i + 3 * N);
        }
        if (ng == G) continue;  // single vectors below, G planes side by side
        for (int64_t i = len4; i < len; i += N) {
          auto a0 = hn::Zero(d);
          for (int64_t t = first[ph]; t < first[ph + 1]; ++t)
            a0 = hn::Add(a0, hn::Mul(hn::Set(d, wv[j][t]), hn::LoadU(d, dyq + src_off[t] + i)));
          hn::StoreU(a0, d, o + i);
        }
      }
      if (ng < G) continue;
      // Single vectors of the G planes together: G independent sums per tap instead of one
      // chain of dependent adds (small planes are all single vectors).
      static_assert(G == 4, "the block below names 4 planes");
      const float *q0 = scratch, *q1 = q0 + per_plane, *q2 = q1 + per_plane, *q3 = q2 + per_plane;
      float* o0 = scratch + p.dyq_size + ph * p.out_stride;
      for (int64_t i = len4; i < len; i += N) {
        auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
        for (int64_t t = first[ph]; t < first[ph + 1]; ++t) {
          const int64_t s = src_off[t] + i;
          a0 = hn::Add(a0, hn::Mul(hn::Set(d, wv[0][t]), hn::LoadU(d, q0 + s)));
          a1 = hn::Add(a1, hn::Mul(hn::Set(d, wv[1][t]), hn::LoadU(d, q1 + s)));
          a2 = hn::Add(a2, hn::Mul(hn::Set(d, wv[2][t]), hn::LoadU(d, q2 + s)));
          a3 = hn::Add(a3, hn::Mul(hn::Set(d, wv[3][t]), hn::LoadU(d, q3 + s)));
        }
        hn::StoreU(a0, d, o0 + i);
        hn::StoreU(a1, d, o0 + per_plane + i);
        hn::StoreU(a2, d, o0 + 2 * per_plane + i);
        hn::StoreU(a3, d, o0 + 3 * per_plane + i);
      }
    }
    for (int64_t j = 0; j < ng; ++j) {
      const float* outs = scratch + j * per_plane + p.dyq_size;
      const int64_t pl = pl0 + j;
      // dX[ih][iw] = phase ((ih + pbh) % sh, (iw + pbw) % sw) at ((ih + pbh) / sh, (iw + pbw) / sw).
      float* out = dx + pl * in_size;
      for (int64_t ih = 0; ih < p.h_in; ++ih) {
        const int64_t y = ih + p.pbh;
        const float* rows = outs + (y % p.sh) * p.sw * p.out_stride + (y / p.sh) * p.wd;
        float* orow = out + ih * p.w_in;
        if (p.sw == 1) {
          copy_row(orow, rows + p.pbw, p.w_in);
          continue;
        }
        if (p.sw == 2) {
          const float* const ph[2] = {rows, rows + p.out_stride};
          merge_row2(orow, p.w_in, p.pbw, ph);
          continue;
        }
        int64_t b = p.pbw % p.sw, cx = p.pbw / p.sw;  // input column iw + pbw = sw * cx + b
        for (int64_t iw = 0; iw < p.w_in; ++iw) {
          orow[iw] = rows[b * p.out_stride + cx];
          if (++b == p.sw) b = 0, ++cx;
        }
      }
    }
  }
}

// acc[t] (N lanes at acc + t * N) += dot(s + off[t], dy) over len floats, for kT taps at once:
// one dY load per kT tap loads and products (one accumulator per tap).
constexpr int kMaxTapBlock = 8;
template <int kT>
HWY_INLINE void tap_dots(const float* HWY_RESTRICT s, const int64_t* off, const float* HWY_RESTRICT dy, int64_t len,
                         float* HWY_RESTRICT acc) {
  const hn::ScalableTag<float> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<decltype(d)> a[kT];
  for (int t = 0; t < kT; ++t) a[t] = hn::Zero(d);
  for (int64_t i = 0; i < len; i += N) {
    const auto dv = hn::LoadU(d, dy + i);
    for (int t = 0; t < kT; ++t) a[t] = hn::MulAdd(hn::LoadU(d, s + off[t] + i), dv, a[t]);
  }
  for (int t = 0; t < kT; ++t) hn::StoreU(hn::Add(hn::LoadU(d, acc + t * N), a[t]), d, acc + t * N);
}

void tap_dots_n(int kt, const float* s, const int64_t* off, const float* dy, int64_t len, float* acc) {
  short_rows::with_block8(kt, [&](auto t) { tap_dots<decltype(t)::value>(s, off, dy, len, acc); });
}

// ConvGradWeight on channels [c0, c1). Scratch: sh * sw phase planes of phase_stride floats
// (zero padding, written once per call), dyp [dyp_size] (zero columns), per-tap lane sums.
void grad_weight_channels(const DepthwisePlan& p, const float* x, const float* dy, float* dw, int64_t c0, int64_t c1,
                          int64_t n_batch, int64_t c, float* scratch) {
  const hn::ScalableTag<float> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t taps = p.k_size(), in_size = p.h_in * p.w_in, out_size = p.h_out * p.w_out;
  float* phases = scratch;
  float* dyp = phases + p.sh * p.sw * p.phase_stride;
  float* acc = dyp + p.dyp_size;
  std::fill(phases, acc, 0.0f);
  // Whole vectors (<= h_out * wq + kSlack): blocks of 4, then single vectors (small planes).
  const int64_t len = round_up(p.h_out * p.wq, N);
  int64_t tap_off[DepthwisePlan::kMaxTaps];
  for (int64_t k = 0; k < taps; ++k) {
    const Tap t = tap_of(p, k / p.kw, k % p.kw, p.wq);
    tap_off[k] = t.phase * p.phase_stride + t.off;
  }
  for (int64_t ch = c0; ch < c1; ++ch) {
    std::fill(acc, acc + taps * N, 0.0f);
    for (int64_t n = 0; n < n_batch; ++n) {
      const float* xs = x + (n * c + ch) * in_size;
      const float* g = dy + (n * c + ch) * out_size;
      if (n + 1 < n_batch) {  // the next image's planes, c planes on (short_rows::prefetch_run)
        short_rows::prefetch_run(xs + c * in_size, in_size);
        short_rows::prefetch_run(g + c * out_size, out_size);
      }
      for (int64_t ih = 0; ih < p.h_in; ++ih) {
        const int64_t y = ih + p.pbh;
        float* row = phases + (y % p.sh) * p.sw * p.phase_stride + (y / p.sh) * p.wq;
        const float* xr = xs + ih * p.w_in;
        if (p.sw == 1) {
          copy_row(row + p.pbw, xr, p.w_in);
          continue;
        }
        if (p.sw == 2) {
          float* const ph[2] = {row, row + p.phase_stride};
          split_row2(xr, p.w_in, p.pbw, ph);
          continue;
        }
        int64_t b = p.pbw % p.sw, cx = p.pbw / p.sw;  // input column iw + pbw = sw * cx + b
        for (int64_t iw = 0; iw < p.w_in; ++iw) {
          row[b * p.phase_stride + cx] = xr[iw];
          if (++b == p.sw) b = 0, ++cx;
        }
      }
      for (int64_t oh = 0; oh < p.h_out; ++oh) copy_row(dyp + oh * p.wq, g + oh * p.w_out, p.w_out);
      // Taps in blocks of up to kMaxTapBlock (9 -> 5 + 4): each dY vector loaded once per block.
      const int64_t nblocks = (taps + kMaxTapBlock - 1) / kMaxTapBlock;
      const int64_t per = (taps + nblocks - 1) / nblocks;
      for (int64_t k0 = 0; k0 < taps; k0 += per)
        tap_dots_n(static_cast<int>(std::min(per, taps - k0)), phases, tap_off + k0, dyp, len, acc + k0 * N);
    }
    for (int64_t k = 0; k < taps; ++k) {
      double sum = 0;
      for (int64_t l = 0; l < N; ++l) sum += static_cast<double>(acc[k * N + l]);
      dw[ch * taps + k] = static_cast<float>(sum);
    }
  }
}


// [rows][kBlock] from `cnt` planes of `rows` floats at src (zeros past cnt), and back.
void to_block(const float* src, int64_t rows, int64_t cnt, float* t) {
  constexpr int64_t B = DepthwiseSmallPlan::kBlock;
  for (int64_t l = 0; l < cnt; ++l)
    for (int64_t i = 0; i < rows; ++i) t[i * B + l] = src[l * rows + i];
  for (int64_t l = cnt; l < B; ++l)
    for (int64_t i = 0; i < rows; ++i) t[i * B + l] = 0.0f;
}
void from_block(const float* t, int64_t rows, int64_t cnt, float* dst) {
  constexpr int64_t B = DepthwiseSmallPlan::kBlock;
  for (int64_t l = 0; l < cnt; ++l)
    for (int64_t i = 0; i < rows; ++i) dst[l * rows + i] = t[i * B + l];
}

// For blocks [b0, b1) of 16 channels of one image each (as depthwise_small_forward): the block's
// src planes ([N, c, src_rows]) to [src_rows][16] at scratch, fn(first channel, that, out), and out
// ([dst_rows][16], after it in scratch) back to the dst planes ([N, c, dst_rows]).
template <class Fn>
void through_blocks(const DepthwiseSmallPlan& p, const float* src, int64_t src_rows, float* dst, int64_t dst_rows,
                    int64_t c, int64_t b0, int64_t b1, float* scratch, const Fn& fn) {
  constexpr int64_t B = DepthwiseSmallPlan::kBlock;
  const int64_t per_image = p.cpad / B;
  float* out = scratch + src_rows * B;
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t n = b / per_image, c0 = b % per_image * B, cnt = std::min(B, c - c0);
    to_block(src + (n * c + c0) * src_rows, src_rows, cnt, scratch);
    fn(c0, static_cast<const float*>(scratch), out);
    from_block(out, dst_rows, cnt, dst + (n * c + c0) * dst_rows);
  }
}

// depthwise_small_forward (depthwise_grad.h): per output position, its taps in order.
void small_forward(const DepthwiseSmallPlan& p, const float* x, const float* wt, float* y, int64_t c, int64_t b0,
                   int64_t b1, float* scratch) {
  const hn::CappedTag<float, DepthwiseSmallPlan::kBlock> d;
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t B = DepthwiseSmallPlan::kBlock;
  const float* bias = wt + p.taps * p.cpad;
  through_blocks(p, x, p.in_size, y, p.out_size, c, b0, b1, scratch, [&](int64_t c0, const float* xt, float* yt) {
    for (int64_t v = 0; v < B; v += L) {
      const float* wv = wt + c0 + v;
      for (int64_t q = 0; q < p.out_size; ++q) {
        auto acc = hn::LoadU(d, bias + c0 + v);
        for (int32_t e = p.first[q]; e < p.first[q + 1]; ++e)
          acc = hn::MulAdd(hn::LoadU(d, wv + p.tap[e] * p.cpad), hn::LoadU(d, xt + p.src[e] * B + v), acc);
        hn::StoreU(acc, d, yt + q * B + v);
      }
    }
  });
}

// depthwise_small_grad_input: each position's dY times its taps' weights, added into dX.
void small_grad_input(const DepthwiseSmallPlan& p, const float* dy, const float* wt, float* dx, int64_t c, int64_t b0,
                      int64_t b1, float* scratch) {
  const hn::CappedTag<float, DepthwiseSmallPlan::kBlock> d;
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t B = DepthwiseSmallPlan::kBlock;
  through_blocks(p, dy, p.out_size, dx, p.in_size, c, b0, b1, scratch, [&](int64_t c0, const float* dyt, float* dxt) {
    std::fill(dxt, dxt + p.in_size * B, 0.0f);
    for (int64_t v = 0; v < B; v += L) {
      const float* wv = wt + c0 + v;
      for (int64_t q = 0; q < p.out_size; ++q) {
        const auto g = hn::LoadU(d, dyt + q * B + v);
        for (int32_t e = p.first[q]; e < p.first[q + 1]; ++e) {
          float* o = dxt + p.src[e] * B + v;
          hn::StoreU(hn::MulAdd(hn::LoadU(d, wv + p.tap[e] * p.cpad), g, hn::LoadU(d, o)), d, o);
        }
      }
    }
  });
}

// depthwise_small_grad_weight: per image, each tap's products over the positions in f32, added
// in double over the images.
void small_grad_weight(const DepthwiseSmallPlan& p, const float* x, const float* dy, float* dw, int64_t n_batch,
                       int64_t c, int64_t cb0, int64_t cb1, float* scratch) {
  const hn::CappedTag<float, DepthwiseSmallPlan::kBlock> d;
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t B = DepthwiseSmallPlan::kBlock;
  float* xt = scratch;                  // [in_size][B]
  float* dyt = scratch + p.in_size * B;  // [out_size][B]
  HWY_ALIGN float part[DepthwiseSmallPlan::kMaxTaps * B];
  double sum[DepthwiseSmallPlan::kMaxTaps * B];
  for (int64_t cb = cb0; cb < cb1; ++cb) {
    const int64_t c0 = cb * B, cnt = std::min(B, c - c0);
    std::fill(sum, sum + p.taps * B, 0.0);
    for (int64_t n = 0; n < n_batch; ++n) {
      to_block(x + (n * c + c0) * p.in_size, p.in_size, cnt, xt);
      to_block(dy + (n * c + c0) * p.out_size, p.out_size, cnt, dyt);
      std::fill(part, part + p.taps * B, 0.0f);
      for (int64_t v = 0; v < B; v += L)
        for (int64_t q = 0; q < p.out_size; ++q) {
          const auto g = hn::LoadU(d, dyt + q * B + v);
          for (int32_t e = p.first[q]; e < p.first[q + 1]; ++e) {
            float* a = part + p.tap[e] * B + v;
            hn::StoreU(hn::MulAdd(hn::LoadU(d, xt + p.src[e] * B + v), g, hn::LoadU(d, a)), d, a);
          }
        }
      for (int64_t i = 0; i < p.taps * B; ++i) sum[i] += static_cast<double>(part[i]);
    }
    for (int64_t l = 0; l < cnt; ++l)
      for (int64_t t = 0; t < p.taps; ++t) dw[(c0 + l) * p.taps + t] = static_cast<float>(sum[t * B + l]);
  }
}

}  // namespace

void depthwise_small_grad_input_target(const DepthwiseSmallPlan& p, const float* dy, const float* wt, float* dx,
                                       int64_t c, int64_t b0, int64_t b1, float* scratch) {
  small_grad_input(p, dy, wt, dx, c, b0, b1, scratch);
}
void depthwise_small_grad_weight_target(const DepthwiseSmallPlan& p, const float* x, const float* dy, float* dw,
                                        int64_t n_batch, int64_t c, int64_t cb0, int64_t cb1, float* scratch) {
  small_grad_weight(p, x, dy, dw, n_batch, c, cb0, cb1, scratch);
}
void depthwise_small_forward_target(const DepthwiseSmallPlan& p, const float* x, const float* wt, float* y, int64_t c,
                                    int64_t b0, int64_t b1, float* scratch) {
  small_forward(p, x, wt, y, c, b0, b1, scratch);
}
void depthwise_grad_input_target(const DepthwisePlan& p, const float* dy, const float* wk, float* dx, int64_t p0,
                                 int64_t p1, int64_t c, float* scratch) {
  grad_input_planes(p, dy, wk, dx, p0, p1, c, scratch);
}
void depthwise_grad_weight_target(const DepthwisePlan& p, const float* x, const float* dy, float* dw, int64_t c0,
                                  int64_t c1, int64_t n_batch, int64_t c, float* scratch) {
  grad_weight_channels(p, x, dy, dw, c0, c1, n_batch, c, scratch);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(depthwise_grad_input_target);
HWY_EXPORT(depthwise_small_forward_target);
HWY_EXPORT(depthwise_small_grad_input_target);
HWY_EXPORT(depthwise_small_grad_weight_target);

void depthwise_small_grad_input(const DepthwiseSmallPlan& p, const float* dy, const float* wt, float* dx, int64_t c,
                                int64_t b0, int64_t b1, float* scratch) {
  HWY_DYNAMIC_DISPATCH(depthwise_small_grad_input_target)(p, dy, wt, dx, c, b0, b1, scratch);
}
void depthwise_small_grad_weight(const DepthwiseSmallPlan& p, const float* x, const float* dy, float* dw,
                                 int64_t n_batch, int64_t c, int64_t cb0, int64_t cb1, float* scratch) {
  HWY_DYNAMIC_DISPATCH(depthwise_small_grad_weight_target)(p, x, dy, dw, n_batch, c, cb0, cb1, scratch);
}

void depthwise_small_weights(const DepthwiseSmallPlan& p, const float* wk, const float* bias, int64_t c, float* wt) {
  std::fill(wt, wt + p.weight_floats(), 0.0f);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t t = 0; t < p.taps; ++t) wt[t * p.cpad + ch] = wk[ch * p.taps + t];
    if (bias) wt[p.taps * p.cpad + ch] = bias[ch];
  }
}
void depthwise_small_forward(const DepthwiseSmallPlan& p, const float* x, const float* wt, float* y, int64_t c,
                             int64_t b0, int64_t b1, float* scratch) {
  HWY_DYNAMIC_DISPATCH(depthwise_small_forward_target)(p, x, wt, y, c, b0, b1, scratch);
}
HWY_EXPORT(depthwise_grad_weight_target);

void depthwise_grad_input_planes(const DepthwisePlan& p, const float* dy, const float* wk, float* dx, int64_t p0,
                                 int64_t p1, int64_t c, float* scratch) {
  HWY_DYNAMIC_DISPATCH(depthwise_grad_input_target)(p, dy, wk, dx, p0, p1, c, scratch);
}
void depthwise_grad_weight_channels(const DepthwisePlan& p, const float* x, const float* dy, float* dw, int64_t c0,
                                    int64_t c1, int64_t n_batch, int64_t c, float* scratch) {
  HWY_DYNAMIC_DISPATCH(depthwise_grad_weight_target)(p, x, dy, dw, c0, c1, n_batch, c, scratch);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
