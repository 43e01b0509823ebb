// CPU kernels of the quantized convolutions (semantics: core/ops/families/quantize.cpp) on the
// shared int8 GEMM (qgemm.h): ConvInteger, QLinearConv. (The matmuls: qlinear.cpp.)
//
// Depthwise convs (one channel per group) run a direct loop instead (depthwise()).
// The convs (2-D) gather each group's input into pixel-major rows (im2col over an HWC copy, K
// ordered [kh][kw][C/group], padding with the input zero point, so padded taps contribute 0 after
// the zero point is subtracted) against the packed weights (one GEMM column per output channel, K
// in the same order) and write NCHW through the output stage's strides.
// What the fast paths do not cover (1-D or 3-D convs, an input zero point that is no scalar) runs the
// reference: the zero points subtracted into i32 copies, then Conv's im2col path on i32 (conv.h).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/conv.h"
#include "backends/cpu/kernels/qdepthwise.h"
#include "backends/cpu/kernels/qgemm.h"
#include "backends/cpu/kernels/qlinear_common.h"
#include "backends/cpu/kernels/qpointwise.h"
#include "core/base/mapped_pages.h"
#include "core/ops/spatial.h"

namespace tsr::cpu {

namespace {

using namespace qlinear;

// ---- The reference path ----

// Conv(x - x_zp, w - w_zp) into i32 `acc`; x's zero point is per tensor, w's per tensor or per
// output channel.
Status integer_conv(KernelContext& ctx, size_t ix, size_t ixzp, size_t iw, size_t iwzp, Tensor* acc,
                    const Tensor* x_nchw = nullptr) {
  const Tensor& x = x_nchw ? *x_nchw : *ctx.input(ix);
  const Tensor& w = *ctx.input(iw);
  if (w.rank() < 1 || w.dim(0) == 0) return ctx.error("input[", iw, "] (w): shape ", shape_str(w.shape()));
  TSR_ASSIGN_OR_RETURN(QParamIndex xi, qparam_index(ctx, ctx.input(ixzp), ixzp, 1, 1, "tensor"));
  TSR_ASSIGN_OR_RETURN(QParamIndex wi, qparam_index(ctx, ctx.input(iwzp), iwzp, w.numel() / w.dim(0), w.dim(0), "output channel"));
  TSR_ASSIGN_OR_RETURN(Tensor x32, centered_any(x, ctx.input(ixzp), xi));
  TSR_ASSIGN_OR_RETURN(Tensor w32, centered_any(w, ctx.input(iwzp), wi));
  return conv_i32(ctx, x32, w32, acc);
}

Status conv_integer(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  return integer_conv(ctx, 0, 2, 1, 3, y);
}

// Requantization as QLinearMatMul, per output channel m: (acc + B[m]) * (x_scale * w_scale[m] /
// y_scale) (requantize). x_nchw / y_nchw: the input and output in place of the node's (the
// channels-last kernel's NCHW copies).
Status qlinear_conv(KernelContext& ctx, const Tensor* x_nchw = nullptr, Tensor* y_nchw = nullptr) {
  Tensor* y = y_nchw;
  if (!y) {
    TSR_ASSIGN_OR_RETURN(y, ctx.alloc_output(0));
  }
  TSR_ASSIGN_OR_RETURN(Tensor acc, Tensor::empty(DType::kI32, y->shape()));
  TSR_RETURN_IF_ERROR(integer_conv(ctx, 0, 2, 3, 5, &acc, x_nchw));
  const int64_t m = y->rank() > 1 ? y->dim(1) : 1;
  const int64_t plane = y->numel() == 0 ? 1 : y->numel() / (y->dim(0) * m);
  TSR_ASSIGN_OR_RETURN(QParamIndex ws, qparam_index(ctx, ctx.input(4), 4, plane, m, "output channel"));
  TSR_ASSIGN_OR_RETURN(QParamIndex xs, qparam_index(ctx, ctx.input(1), 1, 1, 1, "tensor"));
  const Tensor* bias = ctx.input(8);
  if (bias && bias->numel() != m) return ctx.error("input[8] (B) has ", bias->numel(), " entries, expected ", m);
  const float x_scale = ctx.input(1)->data<float>()[xs(0)];
  const float* pws = ctx.input(4)->data<float>();
  const int32_t* pb = bias ? bias->data<int32_t>() : nullptr;
  const int32_t* pa = acc.data<int32_t>();
  return requantize(
      ctx, y, [&](int64_t o) { return pa[o] + (pb ? pb[(o / plane) % m] : 0); },
      [&](int64_t o) { return x_scale * pws[ws(o)]; });
}

// Whether a pointwise conv (mg output channels per group) runs W x X: where the activations
// outnumber the output channels, or on qpointwise (QLinearConv, constant s8 weights with zero point
// 0) on maps of at least half its 32-pixel panel (a 1x1 map, e.g. a squeeze-excitation conv's,
// would waste 31 of 32 lanes).
bool pointwise_w_x(int64_t mg, int64_t pixels, bool qlinear_constant, const Tensor& w, const Tensor* zp) {
  const bool symmetric = w.dtype() == DType::kI8 && (!zp || (uniform_zero_point(zp) && q_scalar_at(*zp, 0) == 0));
  return mg <= pixels || (pixels >= 16 && qlinear_constant && symmetric && qpointwise_available());
}

// ---- Convolutions ----

// Pixel-major im2col of one group of one image, in two steps that move whole runs of bytes:
// the group's channels [cg, H, W] are transposed to HWC (`hwc`, H*W rows of cg bytes), then row
// p = oh * OW + ow of `cols` is, for each tap (i < kh, j < kw), the cg bytes of input pixel
// (oh*sh - ph + i*dh, ow*sw - pw + j*dw), or cg copies of `pad` (the input zero point) outside the
// image. K is thus ordered [kh][kw][cg]: the packed weights use the same order (pack_conv_group).
// A 1x1, stride-1, unpadded conv reads `hwc` itself as the GEMM's A (returns it).
struct ConvGeom {
  int64_t h, w, kh, kw, sh, sw, dh, dw, ph, pw, oh, ow;
};

bool is_pointwise(const ConvGeom& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.oh == g.h && g.ow == g.w;
}

// Bytes im2col_u8 may read past `hwc`'s image and write past `cols`'s last row (the scratch holds
// them): short runs are copied kIm2colSlack bytes at a time.
constexpr int64_t kIm2colSlack = 64;
// Work (bytes written) below which im2col_u8 runs on the calling thread.
constexpr int64_t kIm2colParallelBytes = int64_t{1} << 16;

// The input of one group as HWC in `hwc` and, unless the conv is pointwise or `cols` is null, its
// im2col rows (pixel-major, K as [kh][kw][C/group], padding taps filled with `pad`) in `cols`;
// returns the GEMM's A (`hwc` or `cols`). `cols` must have kIm2colSlack bytes after its pixels * kg, and `hwc`
// kIm2colSlack readable bytes after its h * w * cg. Split over `pool` by pixels and output rows.
// x_hwc: x is HWC already (a channels-last conv of one group), copied into `hwc` as it is.
const uint8_t* im2col_u8(const uint8_t* x, int64_t cg, const ConvGeom& g, uint8_t pad, uint8_t* hwc, uint8_t* cols,
                         ThreadPool& pool, bool x_hwc = false) {
  const int64_t plane = g.h * g.w, kg = cg * g.kh * g.kw;
  const bool threaded = pool.num_threads() > 1 && plane * cg + g.oh * g.ow * kg >= kIm2colParallelBytes;
  constexpr int64_t kChunk = 512;  // pixels per task of the HWC transpose (a multiple of 32)
  auto transpose = [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t p0 = c * kChunk, n = std::min(kChunk, plane - p0);
      transpose_bytes(x + p0, cg, n, plane, hwc + p0 * cg, cg);
    }
  };
  const int64_t chunks = (plane + kChunk - 1) / kChunk;
  if (x_hwc) std::memcpy(hwc, x, size_t(plane * cg));
  else if (threaded) pool.parallel_for(chunks, 1, transpose);
  else transpose(0, chunks);
  if (is_pointwise(g) || !cols) return hwc;
  // A run of at most kIm2colSlack bytes (a 7x7 stem conv's 21) is copied as a fixed 64 bytes,
  // a few vector moves instead of a memcpy call; the excess is overwritten by the next run. Not
  // past the task's last row, which another task may have written already.
  const bool short_runs = g.kw * cg <= kIm2colSlack;
  auto rows = [&](int64_t oy0, int64_t oy1) {
    const uint8_t* const end = cols + oy1 * g.ow * kg;
    for (int64_t oy = oy0; oy < oy1; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        uint8_t* row = cols + (oy * g.ow + ox) * kg;
        const int64_t ix0 = ox * g.sw - g.pw;
        // Undilated taps of a row inside the image are kw * cg contiguous bytes of `hwc`: one copy
        // (a 7x7 stem conv over 3 channels would otherwise copy 3 bytes at a time).
        const bool row_inside = g.dw == 1 && ix0 >= 0 && ix0 + g.kw <= g.w;
        for (int64_t i = 0; i < g.kh; ++i) {
          const int64_t iy = oy * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.h) {
            std::memset(row, pad, size_t(g.kw * cg));
            row += g.kw * cg;
            continue;
          }
          if (row_inside) {
            if (short_runs && row + kIm2colSlack <= end)
              std::memcpy(row, hwc + (iy * g.w + ix0) * cg, size_t{kIm2colSlack});
            else
              std::memcpy(row, hwc + (iy * g.w + ix0) * cg, size_t(g.kw * cg));
            row += g.kw * cg;
            continue;
          }
          for (int64_t j = 0; j < g.kw; ++j, row += cg) {
            const int64_t ix = ix0 + j * g.dw;
            if (ix >= 0 && ix < g.w) std::memcpy(row, hwc + (iy * g.w + ix) * cg, size_t(cg));
            else std::memset(row, pad, size_t(cg));
          }
        }
      }
  };
  if (threaded) pool.parallel_for(g.oh, 1, rows);
  else rows(0, g.oh);
  return cols;
}

// Depthwise convolution (group == C == M): per channel the GEMM would have one column, so a direct
// loop instead. Windows of up to kQDepthwiseMaxTaps taps (all real ones) run the float Conv's
// vectorized depthwise loops on the centered plane (qdepthwise.h: the f32 sums are exact). Larger
// ones run an integer loop over a copy of the plane padded with the zero point and centered
// (x - x_zp, i16), its rows split into sw column phases (phase q holds columns q, q + sw, ...), so
// that every tap reads a unit-stride run.
// acc is exact; the output stage is qgemm's (qgemm.h): i32 as is, or
// saturate(nearbyint(float(acc + bias) * scale[m]) + y_zp) in f32.
struct DepthwiseOut {
  bool quant = false, out_signed = false;
  int32_t out_zp = 0;
  const float* scale = nullptr;    // per channel (quant)
  const int32_t* bias = nullptr;   // per channel or null (quant)
};

// One channel's centered padded plane, split into `sw` column phases of `wq` columns each:
// phase q, row y, column k holds padded column k * sw + q (0 outside the image).
template <typename T>
void depthwise_plane(const T* x, int32_t x_zero, const ConvGeom& g, int64_t hp, int64_t wq, int16_t* xp) {
  const int64_t sw = g.sw;
  std::fill(xp, xp + sw * hp * wq, int16_t{0});
  for (int64_t q = 0; q < sw; ++q) {
    // Padded column k * sw + q is input column ix = k * sw + q - pw: the phase's first and last k
    // inside the image.
    const int64_t k0 = std::max<int64_t>(0, (g.pw - q + sw - 1) / sw);
    const int64_t k1 = std::min<int64_t>(wq, (g.w - 1 + g.pw - q) / sw + 1);
    for (int64_t iy = 0; iy < g.h; ++iy) {
      const T* src = x + iy * g.w + (k0 * sw + q - g.pw);
      int16_t* dst = xp + (q * hp + iy + g.ph) * wq;
      for (int64_t k = k0; k < k1; ++k, src += sw) dst[k] = static_cast<int16_t>(static_cast<int32_t>(*src) - x_zero);
    }
  }
}

// The output stage of one channel: saturate(nearbyint(float(acc + bias) * scale) + zp). The
// clamps are written as the compares vmaxps/vminps implement (NaN gives lo, as std::max(lo, v)),
// and the pointers are restrict (Y may be a char type, which aliases anything), so it vectorizes.
// (The f32 path's stage is qdepthwise_plane's, on the sums in registers.)
template <typename Acc, typename Y>
void depthwise_requantize(const Acc* __restrict acc, int64_t pixels, int32_t bias, float scale, float zp,
                          Y* __restrict y) {
  constexpr float lo = std::is_signed_v<Y> ? -128.0f : 0.0f, hi = std::is_signed_v<Y> ? 127.0f : 255.0f;
  for (int64_t p = 0; p < pixels; ++p) {
    float v = std::nearbyint(static_cast<float>(static_cast<int32_t>(acc[p]) + bias) * scale) + zp;
    v = v > lo ? v : lo;
    v = v < hi ? v : hi;
    y[p] = static_cast<Y>(static_cast<int32_t>(v));
  }
}

// The output stage of one channel (acc: its pixels' sums), as i32 (ConvInteger) or requantized.
template <typename Acc>
void depthwise_store(const Acc* acc, int64_t pixels, int64_t r, int64_t ch, const DepthwiseOut& o, Tensor* y) {
  if (!o.quant) {
    int32_t* out = y->mut_data<int32_t>() + r * pixels;
    for (int64_t p = 0; p < pixels; ++p) out[p] = static_cast<int32_t>(acc[p]);
    return;
  }
  const int32_t b = o.bias ? o.bias[ch] : 0;
  const auto zp = static_cast<float>(o.out_zp);
  if (o.out_signed) depthwise_requantize(acc, pixels, b, o.scale[ch], zp, y->mut_data<int8_t>() + r * pixels);
  else depthwise_requantize(acc, pixels, b, o.scale[ch], zp, y->mut_data<uint8_t>() + r * pixels);
}

// packed3x3: qdepthwise_pack_3x3 of the constant weights, or null.
Status depthwise(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* w_zp, int32_t x_zero,
                 const ConvGeom& g, const DepthwiseOut& o, Tensor* y, const int32_t* packed3x3 = nullptr) {
  const int64_t batch = x.dim(0), c = x.dim(1), plane = g.h * g.w, pixels = g.oh * g.ow, taps = g.kh * g.kw;
  const int64_t ph_end = std::max<int64_t>(0, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.h - g.ph);
  const int64_t pw_end = std::max<int64_t>(0, (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.w - g.pw);
  const int64_t hp = g.h + g.ph + ph_end, wp = g.w + g.pw + pw_end;
  const int64_t wq = (wp + g.sw - 1) / g.sw;  // columns per phase
  const int slots = ctx.pool().num_threads();
  auto round64 = [](size_t b) { return (b + 63) & ~size_t{63}; };
  const bool x_signed = x.dtype() == DType::kI8, w_signed = w.dtype() == DType::kI8;
  auto load = [](const void* p, bool is_signed, int64_t i) -> int32_t {
    return is_signed ? static_cast<const int8_t*>(p)[i] : static_cast<const uint8_t*>(p)[i];
  };
  if (taps <= kQDepthwiseMaxTaps) {
    // The f32 depthwise loops, exact here (qdepthwise.h).
    Window3 win;
    win.in = {1, g.h, g.w};
    win.out = {1, g.oh, g.ow};
    win.k = {1, g.kh, g.kw};
    win.s = {1, g.sh, g.sw};
    win.d = {1, g.dh, g.dw};
    win.pb = {0, g.ph, g.pw};
    win.pe = {0, ph_end, pw_end};
    const size_t scratch_bytes = round64(size_t(qdepthwise_scratch_floats(win)) * sizeof(float));
    const size_t wk_bytes = round64(size_t(taps) * sizeof(float));
    const size_t slot_bytes = scratch_bytes + wk_bytes;
    TSR_ASSIGN_OR_RETURN(void* fmem, ctx.scratch(slot_bytes * size_t(slots)));
    QDepthwiseBatch qb;
    qb.x = x.raw();
    qb.x_signed = x_signed;
    qb.x_zp = x_zero;
    qb.x_bytes = int64_t(x.nbytes());
    qb.w = w.raw();
    qb.w_signed = w_signed;
    qb.w_zp = w_zp ? w_zp->raw() : nullptr;
    qb.w_zp_per_channel = w_zp && w_zp->numel() > 1;
    qb.channels = c;
    qb.kind = !o.quant ? QDepthwiseStage::kInt32 : o.out_signed ? QDepthwiseStage::kS8 : QDepthwiseStage::kU8;
    qb.bias = o.bias;
    qb.scale = o.scale;
    qb.y_zp = o.out_zp;
    qb.y = y->raw_mut();
    qb.packed3x3 = taps == 9 && g.kh == 3 && c == w.dim(0) ? packed3x3 : nullptr;
    ctx.pool().parallel_for_slots(batch * c, 1, [&](int slot, int64_t r0, int64_t r1) {
      char* base = static_cast<char*>(fmem) + slot_bytes * size_t(slot);
      qdepthwise_planes(qb, win, r0, r1, reinterpret_cast<float*>(base),
                        reinterpret_cast<float*>(base + scratch_bytes));
    });
    return ok_status();
  }
  const size_t plane_bytes = round64(size_t(g.sw * hp * wq) * sizeof(int16_t));
  const size_t per_slot = plane_bytes + round64(size_t(pixels) * sizeof(int32_t));
  TSR_ASSIGN_OR_RETURN(void* mem, ctx.scratch(per_slot * size_t(slots)));
  ctx.pool().parallel_for_slots(batch * c, 1, [&](int slot, int64_t r0, int64_t r1) {
    auto* xp = reinterpret_cast<int16_t*>(static_cast<char*>(mem) + per_slot * size_t(slot));
    auto* acc = reinterpret_cast<int32_t*>(reinterpret_cast<char*>(xp) + plane_bytes);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t ch = r % c;
      if (x_signed) depthwise_plane(x.data<int8_t>() + r * plane, x_zero, g, hp, wq, xp);
      else depthwise_plane(x.data<uint8_t>() + r * plane, x_zero, g, hp, wq, xp);
      std::fill(acc, acc + pixels, 0);
      const int32_t wz = w_zp ? load(w_zp->raw(), w_signed, w_zp->numel() > 1 ? ch : 0) : 0;
      for (int64_t t = 0; t < taps; ++t) {
        const auto wv = static_cast<int16_t>(load(w.raw(), w_signed, ch * taps + t) - wz);
        const int64_t i = t / g.kw, col = (t % g.kw) * g.dw;  // padded column of output column 0
        const int16_t* phase = xp + (col % g.sw) * hp * wq + col / g.sw;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int16_t* src = phase + (oy * g.sh + i * g.dh) * wq;
          int32_t* dst = acc + oy * g.ow;
          for (int64_t ox = 0; ox < g.ow; ++ox) dst[ox] += static_cast<int32_t>(wv) * src[ox];
        }
      }
      depthwise_store(acc, pixels, r, ch, o, y);
    }
  });
  return ok_status();
}

// One group's weights [M/group, C/group, kh, kw] as qgemm's B (K x N: column j = output channel j),
// K reordered to [kh][kw][C/group] as im2col_u8 lays out its rows, with its slice of a
// per-output-channel zero point.
QgemmPackedB pack_conv_group(const Tensor& w, const Tensor* zp, int64_t group, int64_t g) {
  const int64_t mg = w.dim(0) / group, cg = w.dim(1), taps = w.dim(2) * w.dim(3), kg = cg * taps;
  const auto* base = static_cast<const uint8_t*>(w.raw()) + g * mg * kg;  // 1-byte elements
  std::vector<uint8_t> hwc(size_t(mg * kg));
  for (int64_t m = 0; m < mg; ++m)
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t t = 0; t < taps; ++t) hwc[size_t(m * kg + t * cg + c)] = base[m * kg + c * taps + t];
  const bool per_channel = zp && zp->numel() > 1;
  const void* pz = zp ? static_cast<const int8_t*>(zp->raw()) + (per_channel ? g * mg : 0) : nullptr;
  return qgemm_pack_b(kg, mg, hwc.data(), w.dtype() == DType::kI8, kg, true, pz, zp ? (per_channel ? mg : 1) : 0);
}

// Bytes of one kernel row's run in the row form (QConvKernel::run_rows): kw * C rounded up to quads.
int64_t row_run(int64_t kw, int64_t cg) { return (kw * cg + 3) / 4 * 4; }

// The weights [M, C, kh, kw] (group 1) as qgemm's B for the row form: K = kh * row_run, row
// i * row_run + j * C + c holding w[m][c][i][j] and the rows past kw * C of each kernel row zero
// (they meet the next pixels' bytes, which thus add nothing).
QgemmPackedB pack_conv_rows(const Tensor& w, const Tensor* zp) {
  const int64_t m = w.dim(0), cg = w.dim(1), kh = w.dim(2), kw = w.dim(3), seg = row_run(kw, cg), k = kh * seg;
  const auto* base = static_cast<const uint8_t*>(w.raw());  // 1-byte elements
  std::vector<uint8_t> b(size_t(m * k), 0);
  for (int64_t o = 0; o < m; ++o)
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) b[size_t(o * k + i * seg + j * cg + c)] = base[((o * cg + c) * kh + i) * kw + j];
  return qgemm_pack_b(k, m, b.data(), w.dtype() == DType::kI8, k, true, zp ? zp->raw() : nullptr,
                      zp ? (zp->numel() > 1 ? m : 1) : 0);
}

class QConvKernel final : public exec::Kernel {
 public:
  QConvKernel(bool qlinear, std::vector<QgemmPackedB> packed, bool constant_w, std::optional<QgemmPackedB> rows_b,
              bool channels_last = false)
      : qlinear_(qlinear), channels_last_(channels_last), constant_w_(constant_w), packed_(std::move(packed)),
        rows_b_(std::move(rows_b)) {}

  Status run(KernelContext& ctx) override { return run_on(ctx, *ctx.input(0), nullptr, channels_last_); }

 private:
  // The conv of `x` into `y_given` (null: the node's output), x and y NCHW, or NHWC with `nhwc`
  // (com.microsoft::QLinearConv with channels_last; y_given is then null). The NHWC paths take
  // one group (run_nhwc); other channels-last convs run on NCHW copies (run_transposed).
  Status run_on(KernelContext& ctx, const Tensor& x, Tensor* y_given, bool nhwc) {
    const size_t ixzp = 2, iw = qlinear_ ? 3 : 1, iwzp = qlinear_ ? 5 : 3;
    const Tensor& w = *ctx.input(iw);
    const Tensor* x_zp = ctx.input(ixzp);
    const Tensor* w_zp = ctx.input(iwzp);
    const int64_t group = ctx.node().attr_int("group", 1);
    const int ic = nhwc ? 3 : 1, ih = nhwc ? 1 : 2;  // x's channel and first spatial dim
    const bool fast = x.rank() == 4 && w.rank() == 4 && group >= 1 && w.dim(0) % group == 0 &&
                      x.dim(ic) == w.dim(1) * group && qparam_count(x_zp, 1) >= 0 &&
                      qparam_count(w_zp, w.dim(0)) >= 0 && (!qlinear_ || qparam_count(ctx.input(1), 1) >= 0);
    const bool nhwc_direct = fast && group == 1 && w.dim(0) > 0 && w.dim(1) * w.dim(2) * w.dim(3) < (int64_t{1} << 15);
    if (nhwc && !nhwc_direct) return run_transposed(ctx, x);
    if (!fast) return qlinear_ ? qlinear_conv(ctx, y_given ? &x : nullptr, y_given) : conv_integer(ctx);
    auto sp = ops::resolve_spatial(ctx.node(), Ints{x.dim(ih), x.dim(ih + 1)}, Ints{w.dim(2), w.dim(3)}, false);
    if (!sp.ok()) return sp.status().with_context(ctx.place());
    Tensor* y = y_given;
    if (!y) {
      TSR_ASSIGN_OR_RETURN(y, ctx.alloc_output(0));
    }
    if (y->numel() == 0) return ok_status();
    const ConvGeom geo{x.dim(ih),       x.dim(ih + 1),   w.dim(2),        w.dim(3),
                       sp->strides[0],  sp->strides[1],  sp->dilations[0], sp->dilations[1],
                       sp->pad_begin[0], sp->pad_begin[1], y->dim(ih),      y->dim(ih + 1)};
    const int64_t batch = x.dim(0), c = x.dim(ic), cg = c / group, m = w.dim(0), mg = m / group;
    const int64_t kg = cg * geo.kh * geo.kw, pixels = geo.oh * geo.ow;
    if (kg >= (int64_t{1} << 15)) return qlinear_ ? qlinear_conv(ctx, y_given ? &x : nullptr, y_given) : conv_integer(ctx);
    const int32_t x_zero = x_zp ? q_scalar(*x_zp) : 0;
    const auto pad = static_cast<uint8_t>(x_zero);  // the zero point's byte, u8 or s8

    QgemmOutput out;
    out.row_stride = 1;  // pixel-major rows, NCHW output: column j (channel) strides by a plane
    out.col_stride = pixels;
    float* scale = nullptr;  // scratch (per output channel)
    if (qlinear_) {
      const Tensor& ys = *ctx.input(6);
      const Tensor& yz = *ctx.input(7);
      if (ys.numel() != 1 || yz.numel() != 1) return ctx.error("y_scale and y_zero_point must be scalars");
      const Tensor& ws = *ctx.input(4);
      if (qparam_count(&ws, m) < 0) return ctx.error("input[4] (w_scale): shape ", shape_str(ws.shape()), ", expected a scalar or [", m, "]");
      const Tensor* bias = ctx.input(8);
      if (bias && bias->numel() != m) return ctx.error("input[8] (B) has ", bias->numel(), " entries, expected ", m);
      // onnxruntime's rounding: x_scale * w_scale[m] / y_scale, in f32, in that order.
      const float x_s = ctx.input(1)->data<float>()[0], y_s = ys.data<float>()[0];
      TSR_ASSIGN_OR_RETURN(void* mem, ctx.scratch(size_t(m) * sizeof(float)));
      scale = static_cast<float*>(mem);
      // (A per-tensor w_scale broadcast first, so that the loop vectorizes: one division per
      // output channel on every run, serial work before the split.)
      const float* wsp = ws.data<float>();
      if (ws.numel() > 1) {
        for (int64_t j = 0; j < m; ++j) scale[j] = x_s * wsp[j] / y_s;
      } else {
        std::fill(scale, scale + m, x_s * wsp[0] / y_s);
      }
      out.kind = QgemmOutput::kQuant;
      out.scale_per_col = true;
      out.out_signed = y->dtype() == DType::kI8;
      out.out_zp = q_scalar(yz);
      out.bias_i32 = bias ? bias->data<int32_t>() : nullptr;
    }
    if (nhwc) {
      TSR_ASSIGN_OR_RETURN(bool done, run_nhwc(ctx, x, w, w_zp, geo, pad, x_zero, scale, out, y));
      return done ? ok_status() : run_transposed(ctx, x, y);
    }
    if (group == c && m == c && cg == 1) {
      DepthwiseOut dwo;
      dwo.quant = qlinear_;
      dwo.out_signed = out.out_signed;
      dwo.out_zp = out.out_zp;
      dwo.scale = scale;
      dwo.bias = out.bias_i32;
      return depthwise(ctx, x, w, w_zp, x_zero, geo, dwo, y, dw_packed_.empty() ? nullptr : dw_packed_.data());
    }
    const int32_t* bias_base = out.bias_i32;
    const size_t out_bytes = dtype_size(y->dtype());
    if (is_pointwise(geo) && uniform_zero_point(w_zp) && pointwise_w_x(mg, pixels, qlinear_ && constant_w_, w, w_zp)) {
      // Pointwise: per group, W (mg x cg, as stored) x X (cg x H*W: the NCHW input as it is) gives
      // the output channels as rows of NCHW, so neither the input nor the output is transposed.
      // The weights are qgemm's A (one zero point), the activations its B, packed per call; so
      // only where the activations outnumber the weights (mg <= H*W): on small maps with many
      // channels, packing the weights every call would cost more than the transposes it saves.
      // qpointwise (constant symmetric weights, packed once) takes most shapes (pointwise_w_x).
      // (The same orientation for 3x3 convs, over a channel-major im2col, measured no faster than
      // the pixel-major path below on ResNet-18 q8: the im2col matrix is then packed a second time.)
      thread_local QgemmPackedB act;
      const int32_t wz = w_zp ? q_scalar_at(*w_zp, 0) : 0;
      const bool x_signed = x.dtype() == DType::kI8, w_signed = w.dtype() == DType::kI8;
      const auto* wraw = static_cast<const uint8_t*>(w.raw());  // 1-byte elements
      // Constant weights: A packed on the first run, for every later one (the packing was 3% of
      // MobileNetV2 q8). The first run, not creation: only convs that take this path pay the memory.
      // s8 weights with zero point 0 (symmetric) also for qpointwise (VNNI, operands unshifted).
      const bool sym = w_signed && wz == 0;
      if (constant_w_)
        std::call_once(pointwise_once_, [&] {
          for (int64_t g = 0; g < group; ++g) {
            pointwise_a_.push_back(qgemm_pack_a(mg, wraw + g * mg * cg, w_signed, cg, cg));
            if (sym && qlinear_) pointwise_w_.push_back(qpointwise_pack(reinterpret_cast<const int8_t*>(wraw) + g * mg * cg, mg, cg));
          }
          release_mapped_pages(w.raw(), w.nbytes());  // as for the packed B
        });
      out.row_stride = pixels;
      out.col_stride = 1;
      out.per_row = true;
      for (int64_t g = 0; g < group; ++g) {
        if (qlinear_) {
          out.scale = scale + g * mg;
          out.bias_i32 = bias_base ? bias_base + g * mg : nullptr;
        }
        for (int64_t nb = 0; nb < batch; ++nb) {
          const auto* xg = static_cast<const uint8_t*>(x.raw()) + (nb * c + g * cg) * pixels;
          // qpointwise reads no column sums; should it decline after all, the activations are
          // packed again with them for qgemm.
          const bool vnni = !pointwise_w_.empty() && qpointwise_available();
          qgemm_pack_b_rows(cg, pixels, xg, x_signed, pixels, x_zero, &act, !vnni, &ctx.pool());
          out.out = static_cast<char*>(y->raw_mut()) + size_t((nb * m + g * mg) * pixels) * out_bytes;
          if (vnni && qpointwise(pointwise_w_[size_t(g)], act, x_zero, x_signed,
                                 {out.out, pixels, out.bias_i32, out.scale, out.out_zp, out.out_signed}, &ctx.pool()))
            continue;
          if (vnni) qgemm_pack_b_rows(cg, pixels, xg, x_signed, pixels, x_zero, &act, true, &ctx.pool());
          if (constant_w_) qgemm_packed(pointwise_a_[size_t(g)], wraw + g * mg * cg, cg, wz, act, out, &ctx.pool());
          else qgemm(mg, wraw + g * mg * cg, w_signed, cg, wz, act, out, &ctx.pool());
        }
      }
      return ok_status();
    }
    if (rows_b_ && group == 1 && geo.dw == 1 && x.dtype() == DType::kU8 && rows_b_->n == m &&
        rows_b_->k == geo.kh * row_run(geo.kw, cg)) {
      out.scale = scale;
      return run_rows(ctx, x, geo, pad, x_zero, out, y, false);
    }
    // Channels per group a multiple of 16 (ResNet's 3x3 convs): the taps are read in place from the
    // HWC copy (qgemm_gather), one offset per pixel and tap, padding taps pointing at a run of zero
    // points after the copy; no im2col matrix is written and read back.
    const bool gather = !is_pointwise(geo) && cg % 16 == 0 && geo.h * geo.w * cg < (int64_t{1} << 30);
    const size_t hwc_bytes = (size_t(geo.h * geo.w * cg) + 63) & ~size_t{63};
    const size_t pad_bytes = (size_t(cg) + 63) & ~size_t{63};
    const size_t a_bytes = is_pointwise(geo) ? 0
                           : gather          ? pad_bytes
                                             : size_t(pixels * kg + kIm2colSlack);
    TSR_ASSIGN_OR_RETURN(void* cols_mem, ctx.scratch(hwc_bytes + a_bytes));
    auto* hwc = static_cast<uint8_t*>(cols_mem);
    auto* cols = hwc + hwc_bytes;
    std::shared_ptr<const std::vector<int32_t>> off;
    if (gather) {
      std::memset(cols, pad, size_t(cg));
      off = gather_offsets(geo, cg, int64_t(hwc_bytes));
    }
    const bool prepared = int64_t(packed_.size()) == group && (packed_.empty() || packed_[0].k == kg);
    for (int64_t g = 0; g < group; ++g) {
      std::optional<QgemmPackedB> local;
      if (!prepared) local = pack_conv_group(w, w_zp, group, g);
      const QgemmPackedB& pb = local ? *local : packed_[size_t(g)];
      if (qlinear_) {
        out.scale = scale + g * mg;
        out.bias_i32 = bias_base ? bias_base + g * mg : nullptr;
      }
      for (int64_t nb = 0; nb < batch; ++nb) {
        const auto* xg = static_cast<const uint8_t*>(x.raw()) + (nb * c + g * cg) * geo.h * geo.w;
        const uint8_t* a = im2col_u8(xg, cg, geo, pad, hwc, gather ? nullptr : cols, ctx.pool());
        out.out = static_cast<char*>(y->raw_mut()) + size_t((nb * m + g * mg) * pixels) * out_bytes;
        if (gather) qgemm_gather(pixels, a, off->data(), cg, x.dtype() == DType::kI8, x_zero, pb, out, &ctx.pool());
        else qgemm(pixels, a, x.dtype() == DType::kI8, kg, x_zero, pb, out, &ctx.pool());
      }
    }
    return ok_status();
  }

  bool qlinear_;
  bool channels_last_;                // com.microsoft::QLinearConv with channels_last = 1: NHWC x and y
  bool constant_w_;                   // the weights are a constant (packing them once is right)
  std::vector<QgemmPackedB> packed_;  // per group, from constant weights (and zero point)
  // qgemm_gather's offsets of the last geometry, built on the first run (the same for every run of
  // a static shape): with wp 0, one per pixel and tap into the HWC copy, padding taps at `pad_at`
  // (-1: qgemm_gather's `pad` run);
  // else (run_rows) one per pixel and kernel row into the padded HWC copy of width wp.
  std::shared_ptr<const std::vector<int32_t>> gather_offsets(const ConvGeom& g, int64_t cg, int64_t pad_at,
                                                             int64_t wp = 0) {
    std::lock_guard<std::mutex> lock(gather_mu_);
    const std::array<int64_t, 7> key{g.h, g.w, g.oh, g.ow, cg, wp, pad_at};
    if (gather_off_ && key == gather_key_) return gather_off_;
    auto off = std::make_shared<std::vector<int32_t>>(size_t(g.oh * g.ow * g.kh * (wp ? 1 : g.kw)));
    int32_t* o = off->data();
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t i = 0; i < g.kh; ++i) {
          const int64_t iy = oy * g.sh - g.ph + i * g.dh;
          if (wp) {
            *o++ = static_cast<int32_t>(((iy + g.ph) * wp + ox * g.sw) * cg);
            continue;
          }
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t ix = ox * g.sw - g.pw + j * g.dw;
            *o++ = static_cast<int32_t>(iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? (iy * g.w + ix) * cg : pad_at);
          }
        }
    gather_key_ = key;
    gather_off_ = std::move(off);
    return gather_off_;
  }

  // The row form (few input channels: a stem conv over RGB, where taps of C bytes are too short
  // to gather): the input as an HWC copy padded with the zero point, so that each kernel row of an
  // output pixel is kw * C contiguous bytes, read in place by qgemm_gather as one run of
  // row_run(kw, C) bytes (the bytes past kw * C meet rows_b_'s zero weights). No im2col matrix, no
  // A packing (taken only where qgemm_gather reads in place).
  // With `nhwc`, x is [N, H, W, C] (its rows copied as they are) and `out` writes NHWC.
  Status run_rows(KernelContext& ctx, const Tensor& x, const ConvGeom& geo, uint8_t pad, int32_t x_zero,
                  const QgemmOutput& out, Tensor* y, bool nhwc) {
    const int64_t batch = x.dim(0), cg = x.dim(nhwc ? 3 : 1), m = y->dim(nhwc ? 3 : 1), pixels = geo.oh * geo.ow;
    const int64_t ph_end = std::max<int64_t>(0, (geo.oh - 1) * geo.sh + (geo.kh - 1) * geo.dh + 1 - geo.h - geo.ph);
    const int64_t pw_end = std::max<int64_t>(0, (geo.ow - 1) * geo.sw + geo.kw - geo.w - geo.pw);
    const int64_t hp = geo.h + geo.ph + ph_end, wp = geo.w + geo.pw + pw_end;
    const size_t bytes = size_t(hp * wp * cg) + 64;  // + the quads' reach past the last run
    if (hp * wp * cg >= (int64_t{1} << 30)) return unsupported(ctx.place(), ": input too large for the row form");
    TSR_ASSIGN_OR_RETURN(void* mem, ctx.scratch(bytes));
    auto* buf = static_cast<uint8_t*>(mem);
    std::memset(buf, pad, bytes);
    const auto off = gather_offsets(geo, cg, 0, wp);
    QgemmOutput o = out;
    for (int64_t nb = 0; nb < batch; ++nb) {
      const auto* xb = static_cast<const uint8_t*>(x.raw()) + nb * cg * geo.h * geo.w;
      auto copy_rows = [&](int64_t y0, int64_t y1) {
        for (int64_t iy = y0; iy < y1; ++iy) {
          uint8_t* row = buf + ((iy + geo.ph) * wp + geo.pw) * cg;
          if (nhwc) std::memcpy(row, xb + iy * geo.w * cg, size_t(geo.w * cg));
          else transpose_bytes(xb + iy * geo.w, cg, geo.w, geo.h * geo.w, row, cg);
        }
      };
      // (A 224x224 RGB stem's copy is a serial step of a 2-thread run otherwise.)
      if (ctx.pool().num_threads() > 1 && geo.h * geo.w * cg >= kIm2colParallelBytes) ctx.pool().parallel_for(geo.h, 8, copy_rows);
      else copy_rows(0, geo.h);
      o.out = static_cast<char*>(y->raw_mut()) + size_t(nb * m * pixels) * dtype_size(y->dtype());
      qgemm_gather(pixels, buf, off->data(), row_run(geo.kw, cg), false, x_zero, *rows_b_, o, &ctx.pool());
    }
    return ok_status();
  }

  // Channels last, one group (run_on's output stage `out` and `scale` prepared): the row form,
  // or the taps of every other conv with C a multiple of 16 read by qgemm_gather from x in place
  // (x is the HWC copy the NCHW path makes), padding taps reading a run of zero points in
  // scratch (negative offsets); a pointwise conv's pixels as qgemm's A rows; im2col rows from a
  // copy of x for other channel counts. The output rows are written as they come (row stride M).
  // false where none applies (the caller transposes).
  Expected<bool> run_nhwc(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* w_zp,
                          const ConvGeom& geo, uint8_t pad, int32_t x_zero, const float* scale, QgemmOutput out,
                          Tensor* y) {
    const int64_t batch = x.dim(0), c = x.dim(3), m = y->dim(3), pixels = geo.oh * geo.ow, kg = c * geo.kh * geo.kw;
    const int64_t plane = geo.h * geo.w * c;
    const size_t out_bytes = dtype_size(y->dtype());
    const bool x_signed = x.dtype() == DType::kI8;
    out.row_stride = m;
    out.col_stride = 1;
    out.scale = scale;
    if (rows_b_ && geo.dw == 1 && !x_signed && rows_b_->n == m && rows_b_->k == geo.kh * row_run(geo.kw, c)) {
      TSR_RETURN_IF_ERROR(run_rows(ctx, x, geo, pad, x_zero, out, y, true));
      return true;
    }
    const bool pointwise = is_pointwise(geo);
    std::optional<QgemmPackedB> local;
    if (!(packed_.size() == 1 && packed_[0].k == kg)) local = pack_conv_group(w, w_zp, 1, 0);
    const QgemmPackedB& pb = local ? *local : packed_[0];
    const auto* x0 = static_cast<const uint8_t*>(x.raw());
    if (!pointwise && c % 16 != 0) {  // im2col rows from a copy of x (the rows' runs read past it)
      const size_t hwc_bytes = (size_t(plane) + kIm2colSlack + 63) & ~size_t{63};
      TSR_ASSIGN_OR_RETURN(void* mem, ctx.scratch(hwc_bytes + size_t(pixels * kg + kIm2colSlack)));
      auto* hwc = static_cast<uint8_t*>(mem);
      for (int64_t nb = 0; nb < batch; ++nb) {
        const uint8_t* a = im2col_u8(x0 + nb * plane, c, geo, pad, hwc, hwc + hwc_bytes, ctx.pool(), true);
        out.out = static_cast<char*>(y->raw_mut()) + size_t(nb * pixels * m) * out_bytes;
        qgemm(pixels, a, x_signed, kg, x_zero, pb, out, &ctx.pool());
      }
      return true;
    }
    if (c % 16 != 0) {  // pointwise, A rows of C bytes
      for (int64_t nb = 0; nb < batch; ++nb) {
        out.out = static_cast<char*>(y->raw_mut()) + size_t(nb * pixels * m) * out_bytes;
        qgemm(pixels, x0 + nb * plane, x_signed, c, x_zero, pb, out, &ctx.pool());
      }
      return true;
    }
    // Taps outside the image read a run of zero points in scratch, named by negative offsets (a
    // scratch buffer is too far from x for 32-bit offsets from x, and copying x to put the run
    // after it cost 1.7% of a q8 ResNet-50); x itself is read in place.
    const bool padded = geo.ph > 0 || geo.pw > 0 || (geo.oh - 1) * geo.sh + (geo.kh - 1) * geo.dh >= geo.h + geo.ph ||
                        (geo.ow - 1) * geo.sw + (geo.kw - 1) * geo.dw >= geo.w + geo.pw;
    if (plane >= (int64_t{1} << 30)) return false;
    uint8_t* pad_run = nullptr;
    if (padded) {
      TSR_ASSIGN_OR_RETURN(void* mem, ctx.scratch((size_t(c) + 63) & ~size_t{63}));
      pad_run = static_cast<uint8_t*>(mem);
      std::memset(pad_run, pad, size_t(c));
    }
    const auto off = gather_offsets(geo, c, -1);
    for (int64_t nb = 0; nb < batch; ++nb) {
      const uint8_t* a = x0 + nb * plane;
      out.out = static_cast<char*>(y->raw_mut()) + size_t(nb * pixels * m) * out_bytes;
      qgemm_gather(pixels, a, off->data(), c, x_signed, x_zero, pb, out, &ctx.pool(), pad_run);
    }
    return true;
  }

  // A channels-last conv as the NCHW one: x [N, H, W, C] transposed to NCHW, run_on, the result
  // transposed back into the node's [N, OH, OW, M] output.
  // y: the node's output, allocated already, or null.
  Status run_transposed(KernelContext& ctx, const Tensor& x, Tensor* y = nullptr) {
    if (x.rank() != 4) return ctx.error("channels_last: input[0] (X) has rank ", x.rank(), ", expected 4");
    if (!y) {
      TSR_ASSIGN_OR_RETURN(y, ctx.alloc_output(0));
    }
    const int64_t n = x.dim(0), h = x.dim(1), wd = x.dim(2), c = x.dim(3);
    const int64_t oh = y->dim(1), ow = y->dim(2), m = y->dim(3);
    TSR_ASSIGN_OR_RETURN(Tensor xt, Tensor::empty(x.dtype(), {n, c, h, wd}));
    TSR_ASSIGN_OR_RETURN(Tensor yt, Tensor::empty(y->dtype(), {n, m, oh, ow}));
    for (int64_t b = 0; b < n; ++b)
      transpose_bytes(static_cast<const uint8_t*>(x.raw()) + b * h * wd * c, h * wd, c, c,
                      static_cast<uint8_t*>(xt.raw_mut()) + b * h * wd * c, h * wd);
    TSR_RETURN_IF_ERROR(run_on(ctx, xt, &yt, false));
    for (int64_t b = 0; b < n; ++b)
      transpose_bytes(static_cast<const uint8_t*>(yt.raw()) + b * m * oh * ow, m, oh * ow, oh * ow,
                      static_cast<uint8_t*>(y->raw_mut()) + b * m * oh * ow, m);
    return ok_status();
  }

  // qdepthwise_pack_3x3 of constant 3x3 depthwise QLinearConv weights (and zero point), else empty.
  std::vector<int32_t> dw_packed_;

 public:
  void set_depthwise_packed(std::vector<int32_t> p) { dw_packed_ = std::move(p); }

 private:
  std::once_flag pointwise_once_;
  std::vector<QgemmPackedA> pointwise_a_;  // per group: the pointwise path's A (constant weights)
  std::vector<QPointwiseWeights> pointwise_w_;  // per group, for qpointwise (symmetric s8 weights)
  std::mutex gather_mu_;
  std::array<int64_t, 7> gather_key_{};
  std::shared_ptr<const std::vector<int32_t>> gather_off_;
  std::optional<QgemmPackedB> rows_b_;  // the row form's weights (run_rows), instead of packed_
};

// Whether every run of this conv takes run()'s pointwise W x X path, which reads the weights as
// qgemm's A and never the packed B: a 1x1 window, stride 1, no padding, one weight zero point, and
// a static input that pointwise_w_x accepts. The packed B is then not built (it would be held for
// nothing: two copies of the weights); a run that does not match after all (another input shape)
// packs per call.
bool always_pointwise(const exec::KernelInit& init, const Tensor& w, const Tensor* zp, int64_t group, bool qlinear) {
  if (w.dim(2) != 1 || w.dim(3) != 1 || !uniform_zero_point(zp) || init.input_types.empty()) return false;
  const ops::ValueType& x = init.input_types[0];
  if (!x.has_shape || x.shape.size() != 4 || x.shape[2] < 0 || x.shape[3] < 0) return false;
  auto sp = ops::resolve_spatial(init.node, Ints{x.shape[2], x.shape[3]}, Ints{1, 1}, false);
  if (!sp.ok()) return false;
  const ConvGeom geo{x.shape[2],       x.shape[3],       1, 1, sp->strides[0], sp->strides[1], 1, 1,
                     sp->pad_begin[0], sp->pad_begin[1], sp->out[0], sp->out[1]};
  return is_pointwise(geo) && pointwise_w_x(w.dim(0) / group, x.shape[2] * x.shape[3], qlinear, w, zp);
}

template <bool kQLinear>
Expected<std::unique_ptr<exec::Kernel>> create_qconv(const exec::KernelInit& init) {
  // com.microsoft::QLinearConv (an OpDef default fills channels_last; ONNX's ops lack it).
  const bool channels_last = kQLinear && init.node.attr_int("channels_last", 0) != 0;
  const size_t iw = kQLinear ? 3 : 1, iwzp = kQLinear ? 5 : 3;
  auto constant = [&](size_t i) { return i < init.constant_inputs.size() ? init.constant_inputs[i] : nullptr; };
  const bool has_zp = iwzp < init.node.inputs.size() && init.node.inputs[iwzp] >= 0;
  const Tensor* w = constant(iw);
  const Tensor* zp = constant(iwzp);
  const int64_t group = init.node.attr_int("group", 1);
  std::vector<QgemmPackedB> packed;
  const bool depthwise_w = w && w->rank() == 4 && w->dim(1) == 1 && w->dim(0) == group;  // depthwise(): no GEMM
  // The row form (run_rows) instead of the packed groups: one group of few channels (not a multiple
  // of 16, which gathers taps), s8 weights with zero points 0, a u8 input, undilated rows, and a CPU
  // whose qgemm_gather reads in place.
  const Ints dil = init.node.attr_ints("dilations", Ints{1, 1});
  const bool rows_form = w && w->rank() == 4 && group == 1 && w->dim(1) % 16 != 0 && w->dim(0) > 0 &&
                         (w->dim(2) > 1 || w->dim(3) > 1) && w->dtype() == DType::kI8 &&
                         (!has_zp || (zp && uniform_zero_point(zp) && q_scalar_at(*zp, 0) == 0)) &&
                         dil.size() == 2 && dil[1] == 1 && !init.input_types.empty() &&
                         init.input_types[0].dtype == DType::kU8 && qgemm_gather_in_place() &&
                         w->dim(2) * row_run(w->dim(3), w->dim(1)) < (int64_t{1} << 15);
  std::optional<QgemmPackedB> rows_b;
  if (rows_form) {
    rows_b = pack_conv_rows(*w, zp);
    release_mapped_pages(w->raw(), w->nbytes());
  }
  if (w && !rows_form && !depthwise_w && w->rank() == 4 && (w->dtype() == DType::kU8 || w->dtype() == DType::kI8) && (!has_zp || zp) && group >= 1 &&
      w->dim(0) > 0 && w->dim(0) % group == 0 && qparam_count(zp, w->dim(0)) >= 0 &&
      (!zp || zp->dtype() == w->dtype()) && w->numel() / w->dim(0) < (int64_t{1} << 15) &&
      (channels_last || !always_pointwise(init, *w, zp, group, kQLinear))) {
    for (int64_t g = 0; g < group; ++g) packed.push_back(pack_conv_group(*w, zp, group, g));
    release_mapped_pages(w->raw(), w->nbytes());  // as for the matmuls
  }
  auto kernel = std::make_unique<QConvKernel>(kQLinear, std::move(packed), w != nullptr, std::move(rows_b),
                                              channels_last);
  // 3x3 depthwise QLinearConv weights (constant, with a constant zero point): packed for the VNNI
  // forms once (qdepthwise_pack_3x3), not centered again for every plane of every run.
  if (kQLinear && depthwise_w && w->dim(2) == 3 && w->dim(3) == 3 && (!has_zp || zp) &&
      (w->dtype() == DType::kI8 || w->dtype() == DType::kU8) && (!zp || zp->dtype() == w->dtype()) &&
      qparam_count(zp, w->dim(0)) >= 0)
    kernel->set_depthwise_packed(qdepthwise_pack_3x3(w->raw(), w->dtype() == DType::kI8, zp ? zp->raw() : nullptr,
                                                     zp && zp->numel() > 1, w->dim(0)));
  return std::unique_ptr<exec::Kernel>(std::move(kernel));
}

}  // namespace

void register_qconv_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("ConvInteger") r.add("ConvInteger", {DType::kU8, DType::kI8}, &create_qconv<false>);
  TSR_IF_SELECTED("QLinearConv") r.add("QLinearConv", {DType::kU8, DType::kI8}, &create_qconv<true>);
  TSR_IF_SELECTED("com.microsoft::QLinearConv")
    r.add("com.microsoft::QLinearConv", {DType::kU8, DType::kI8}, &create_qconv<true>);
}

}  // namespace tsr::cpu
