// FusedSeparableConv (core/ops/families/nn.cpp; made by core/passes/opt_fuse_separable.cpp), f32:
// a depthwise conv with its activation, then a 1x1 conv + Z with its activation, computed in
// bands of output rows. For each band, the depthwise rows of all C channels go to a per-thread
// buffer of about 256 KiB (depthwise.h, from the band's input rows copied with their padding),
// which the 1x1 product (sgemm_direct for <= 64 output channels, else the packed SGEMM) reads
// while it is still in cache: the C x OH x OW depthwise output never goes to memory. Bands are
// spread over the threads. Planes <= 16 wide with >= 128 channels (MobileNets' 14x14 and 7x7
// stages) run channels-last, each thread one run of output positions end to end: the depthwise
// stage vectorized over channels, then the packed SGEMM reading that output as B^T. With an
// expansion stage (W_ex: a 1x1 conv before the depthwise one, MobileNetV2's inverted residual
// blocks), each band first computes the expanded input rows it reads (sgemm_direct into a
// per-thread ring of rows, the rows it shares with the previous band of the same thread kept), so
// the expanded tensor never goes to memory either (with a width stride of 1, the depthwise stage
// reads that ring in place: depthwise_direct_rows_to); on small planes, each run of positions computes
// its input rows channels-last (E^T = X^T W_ex^T, W_ex^T packed as B), which the depthwise stage
// reads as they are; where threads share each band, it is computed whole first.
// Compiled once per SIMD target (hwy/foreach_target.h);
// register_conv_separable_kernels registers the best target's kernel.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/conv_separable.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/depthwise.h"
#include "backends/cpu/kernels/epilogue.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_direct.h"
#include "backends/cpu/kernels/nn_window.h"
#include "backends/cpu/kernels/scratch.h"
#include "core/ops/spatial.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

// Columns of a band below which threads share bands rather than take whole ones.
constexpr int64_t kMinBandCols = 128;
// Depthwise output per band: about this many floats (256 KiB: L2-resident between the two
// stages; M-LSD ran 10% faster than with 64 KiB bands, whose input halos are a larger share).
constexpr int64_t kBandFloats = int64_t{1} << 16;

// Output planes at most this wide run the depthwise stage channels-last (depthwise_channels_last)
// and the 1x1 product as the packed SGEMM (one band of all rows, whatever M): the per-channel row
// loop of depthwise.h costs ~70 ns a channel on a 7x7 plane, where its rows fill less than one
// vector.
constexpr int64_t kMaxChannelsLastWidth = 16;
// ... with at least this many channels (the transposes and the packed GEMM's setup cost more than
// they save on fewer).
constexpr int64_t kMinChannelsLast = 128;
// ... and on at most this many output positions, the 1x1 product transposed, Y^T = D^T W_pw^T
// (W_pw^T packed as B: the output channels on the vector lanes, then Y^T transposed into place;
// no B packed per call): 49 positions filled 49 of the 64 columns of two B panels (MobileNetV2's
// 7x7 blocks), a thread's 98 of a 14x14 plane 98 of 128, where 64, 96 and 160 output channels
// fill whole panels (MobileNetV2 at 1 thread: its 7x7 blocks 12% less work, its 14x14 ones 3-8%).
constexpr int64_t kMaxLanesPositions = 256;
// With an expansion stage, a band's expanded input rows and depthwise output together: about this
// many floats (512 KiB, half an L2 of the AVX-512 machine the zoo runs on), in bands of a multiple
// of kExpandRowQuantum rows (depthwise_rows_vec's rows per pass on rows wider than one vector).
constexpr int64_t kExpandBandFloats = int64_t{1} << 17;
constexpr int64_t kExpandRowQuantum = 4;

// y = act(W_ex * x + b_ex) over `n` columns (x: Cin rows of stride ldx; y: C rows of stride ldy).
void expand_columns(const SgemmDirectA* ea, const float* we, const float* be, const ops::ActivationSpec& act,
                    int64_t c, int64_t cin, int64_t n, const float* x, int64_t ldx, float* y, int64_t ldy) {
  if constexpr (kSizeFirstKernels) {
    sgemm(false, false, c, n, cin, 1.0f, we, cin, x, ldx, 0.0f, y, ldy, nullptr);
    apply_epilogue_rows(act, y, c, n, ldy, be);
  } else {
    sgemm_direct(*ea, n, x, ldx, be, nullptr, 0, y, ldy, &act);
  }
}

// Four output positions of the channels-last depthwise stage whose taps all fall inside the input:
// position k reads xt at x0 + k * step + rel[t] for tap t (weights at wt + wof[t]), channels
// [cb, ce) in whole vectors, bias `bd` (may be null; indexed like the channels), outputs at
// out + k * ldo, each then clamped to [lo, hi] (bounds: 0 none, 1 the lower one, 2 both: a Relu or
// Clip activation in registers). Two vectors of channels by four positions: eight independent FMA
// chains, each weight load shared by the four (one position at a time, the chains waited on the
// FMA latency and every FMA took two loads).
HWY_INLINE void depthwise_cl_four(const float* x0, int64_t step, const int64_t* rel, const float* wt, const int64_t* wof,
                                  int64_t nt, const float* bd, int64_t cb, int64_t ce, int bounds, float lo, float hi,
                                  float* out, int64_t ldo) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const auto vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  const auto clamp = [&](auto v) { return bounds == 0 ? v : bounds == 1 ? hn::Max(v, vlo) : hn::Min(hn::Max(v, vlo), vhi); };
  int64_t cv = cb;
  for (; cv + 2 * nl <= ce; cv += 2 * nl) {
    const auto b0 = bd ? hn::LoadU(d, bd + cv) : hn::Zero(d), b1 = bd ? hn::LoadU(d, bd + cv + nl) : hn::Zero(d);
    auto a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1, a30 = b0, a31 = b1;
    for (int64_t t = 0; t < nt; ++t) {
      const auto w0 = hn::LoadU(d, wt + wof[t] + cv), w1 = hn::LoadU(d, wt + wof[t] + cv + nl);
      const float* xp = x0 + rel[t] + cv;
      a00 = hn::MulAdd(hn::LoadU(d, xp), w0, a00);
      a01 = hn::MulAdd(hn::LoadU(d, xp + nl), w1, a01);
      a10 = hn::MulAdd(hn::LoadU(d, xp + step), w0, a10);
      a11 = hn::MulAdd(hn::LoadU(d, xp + step + nl), w1, a11);
      a20 = hn::MulAdd(hn::LoadU(d, xp + 2 * step), w0, a20);
      a21 = hn::MulAdd(hn::LoadU(d, xp + 2 * step + nl), w1, a21);
      a30 = hn::MulAdd(hn::LoadU(d, xp + 3 * step), w0, a30);
      a31 = hn::MulAdd(hn::LoadU(d, xp + 3 * step + nl), w1, a31);
    }
    hn::StoreU(clamp(a00), d, out + cv);
    hn::StoreU(clamp(a01), d, out + cv + nl);
    hn::StoreU(clamp(a10), d, out + ldo + cv);
    hn::StoreU(clamp(a11), d, out + ldo + cv + nl);
    hn::StoreU(clamp(a20), d, out + 2 * ldo + cv);
    hn::StoreU(clamp(a21), d, out + 2 * ldo + cv + nl);
    hn::StoreU(clamp(a30), d, out + 3 * ldo + cv);
    hn::StoreU(clamp(a31), d, out + 3 * ldo + cv + nl);
  }
  for (; cv + nl <= ce; cv += nl) {
    const auto b0 = bd ? hn::LoadU(d, bd + cv) : hn::Zero(d);
    auto a0 = b0, a1 = b0, a2 = b0, a3 = b0;
    for (int64_t t = 0; t < nt; ++t) {
      const auto w0 = hn::LoadU(d, wt + wof[t] + cv);
      const float* xp = x0 + rel[t] + cv;
      a0 = hn::MulAdd(hn::LoadU(d, xp), w0, a0);
      a1 = hn::MulAdd(hn::LoadU(d, xp + step), w0, a1);
      a2 = hn::MulAdd(hn::LoadU(d, xp + 2 * step), w0, a2);
      a3 = hn::MulAdd(hn::LoadU(d, xp + 3 * step), w0, a3);
    }
    hn::StoreU(clamp(a0), d, out + cv);
    hn::StoreU(clamp(a1), d, out + ldo + cv);
    hn::StoreU(clamp(a2), d, out + 2 * ldo + cv);
    hn::StoreU(clamp(a3), d, out + 3 * ldo + cv);
  }
}

// The input rows [iy0, iy1) that output positions [p0, p1) (p1 > p0, row-major over the OH x OW
// plane) read.
std::pair<int64_t, int64_t> channels_last_input_rows(const Window3& w, int64_t p0, int64_t p1) {
  const int64_t h = w.in[1], ow_n = w.out[2];
  const int64_t iy0 = std::clamp<int64_t>(p0 / ow_n * w.s[1] - w.pb[1], 0, h);
  return {iy0, std::clamp<int64_t>((p1 - 1) / ow_n * w.s[1] - w.pb[1] + (w.k[1] - 1) * w.d[1] + 1, iy0, h)};
}

// Depthwise conv of channels [c0, c1) at output positions [p0, p1) (row-major over the OH x OW
// plane), channels-last: the input rows those positions read, of x's channels (c x H x W),
// transposed into xt (one row of c1 - c0 per input position; with x_cl, x is those rows already:
// channels-last, all C channels, as the expansion stage wrote them) and the weights (C x taps)
// into wt (taps rows of c1 - c0), then each output position's channels are one vector loop over the taps
// that fall inside the input. dst: the depthwise output as p1 - p0 rows of `ldd` channels (columns
// [c0, c1) written), + bias `bd` (may be null), then `act`: B^T of the 1x1 product.
void depthwise_channels_last(const float* x, bool x_cl, const float* wd, const float* bd, const Window3& w, int64_t c0,
                             int64_t c1, int64_t p0, int64_t p1, const ops::ActivationSpec& act, float* xt, float* wt,
                             float* dst, int64_t ldd) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const int64_t cr = c1 - c0, h = w.in[1], wd_n = w.in[2], in_size = h * wd_n, kh = w.k[1], kw = w.k[2];
  const int64_t taps = kh * kw, ow_n = w.out[2];
  if (p1 <= p0) return;
  const auto [iy0, iy1] = channels_last_input_rows(w, p0, p1);
  if (x_cl) xt = const_cast<float*>(x);
  else short_rows::transpose_rows(x + c0 * in_size + iy0 * wd_n, in_size, cr, (iy1 - iy0) * wd_n, xt, cr);
  short_rows::transpose_rows(wd + c0 * taps, taps, cr, taps, wt, cr);
  // Blocks of kBlock channels, each over all positions: a position's taps then read a few KiB of
  // xt and wt that nearby positions read too (L1), not every channel's (over all of them, 9 taps
  // of 960 channels were 69 KiB a position, from L2).
  constexpr int64_t kBlock = 128;
  // Interior positions (every tap inside the input) four at a time (depthwise_cl_four): the taps'
  // offsets from the position's tap (0, 0), and the output columns [ox_a, ox_b) whose taps all
  // fall inside a row.
  int64_t rel[64], wof[64];
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      rel[i * kw + j] = (i * w.d[1] * wd_n + j * w.d[2]) * cr;
      wof[i * kw + j] = (i * kw + j) * cr;
    }
  const int64_t ox_a = std::min(ow_n, (w.pb[2] + w.s[2] - 1) / w.s[2]);
  const int64_t last_x = wd_n - 1 - (kw - 1) * w.d[2] + w.pb[2];  // the last tap-(0, 0) column inside, + pb
  const int64_t ox_b = last_x < 0 ? ox_a : std::clamp<int64_t>(last_x / w.s[2] + 1, ox_a, ow_n);
  // A Relu or Clip activation (nothing after it) applied by depthwise_cl_four in registers.
  using A = ops::FusedActivation;
  const bool in_registers = !act.has_post() && (act.kind == A::kNone || act.kind == A::kRelu || act.kind == A::kClip);
  const int bounds = !in_registers || act.kind == A::kNone ? 0 : act.kind == A::kRelu ? 1 : 2;
  const float lo = act.kind == A::kClip ? act.p0 : 0.0f, hi = act.kind == A::kClip ? act.p1 : 0.0f;
  for (int64_t cb0 = 0; cb0 < cr; cb0 += kBlock) {
    const int64_t cb1 = std::min(cr, cb0 + kBlock), cv_end = cb0 + (cb1 - cb0) / nl * nl;
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t oy = p / ow_n, ox = p % ow_n;
      const int64_t iy_top = oy * w.s[1] - w.pb[1];
      if (p + 4 <= p1 && ox >= ox_a && ox + 4 <= ox_b && iy_top >= 0 && iy_top + (kh - 1) * w.d[1] < h) {
        float* out = dst + (p - p0) * ldd + c0;
        const float* x0 = xt + ((iy_top - iy0) * wd_n + ox * w.s[2] - w.pb[2]) * cr;
        const int64_t step = w.s[2] * cr;
        depthwise_cl_four(x0, step, rel, wt, wof, taps, bd ? bd + c0 : nullptr, cb0, cv_end, bounds, lo, hi, out, ldd);
        for (int64_t k = 0; k < 4; ++k) {
          for (int64_t cv = cv_end; cv < cb1; ++cv) {
            float acc = bd ? bd[c0 + cv] : 0.0f;
            for (int64_t t = 0; t < taps; ++t) acc += x0[k * step + rel[t] + cv] * wt[wof[t] + cv];
            out[k * ldd + cv] = acc;
          }
          // The activation where depthwise_cl_four did not apply it.
          const int64_t done = in_registers ? cv_end : cb0;
          apply_epilogue(act, out + k * ldd + done, cb1 - done);
        }
        p += 3;
        continue;
      }
      // The taps inside the input: offsets into xt and wt.
      int64_t xoff[64], woff[64], nt = 0;
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t iy = oy * w.s[1] - w.pb[1] + i * w.d[1];
        if (iy < 0 || iy >= h) continue;
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t ix = ox * w.s[2] - w.pb[2] + j * w.d[2];
          if (ix < 0 || ix >= wd_n) continue;
          xoff[nt] = ((iy - iy0) * wd_n + ix) * cr;
          woff[nt++] = (i * kw + j) * cr;
        }
      }
      float* out = dst + (p - p0) * ldd + c0;
      int64_t cv = cb0;
      // Four vectors of channels at a time: independent FMA chains (one chain waits on the FMA
      // latency every tap).
      for (; cv + 4 * nl <= cv_end; cv += 4 * nl) {
        auto a0 = bd ? hn::LoadU(d, bd + c0 + cv) : hn::Zero(d);
        auto a1 = bd ? hn::LoadU(d, bd + c0 + cv + nl) : hn::Zero(d);
        auto a2 = bd ? hn::LoadU(d, bd + c0 + cv + 2 * nl) : hn::Zero(d);
        auto a3 = bd ? hn::LoadU(d, bd + c0 + cv + 3 * nl) : hn::Zero(d);
        for (int64_t t = 0; t < nt; ++t) {
          const float* xp = xt + xoff[t] + cv;
          const float* wp = wt + woff[t] + cv;
          a0 = hn::MulAdd(hn::LoadU(d, xp), hn::LoadU(d, wp), a0);
          a1 = hn::MulAdd(hn::LoadU(d, xp + nl), hn::LoadU(d, wp + nl), a1);
          a2 = hn::MulAdd(hn::LoadU(d, xp + 2 * nl), hn::LoadU(d, wp + 2 * nl), a2);
          a3 = hn::MulAdd(hn::LoadU(d, xp + 3 * nl), hn::LoadU(d, wp + 3 * nl), a3);
        }
        hn::StoreU(a0, d, out + cv);
        hn::StoreU(a1, d, out + cv + nl);
        hn::StoreU(a2, d, out + cv + 2 * nl);
        hn::StoreU(a3, d, out + cv + 3 * nl);
      }
      for (; cv < cv_end; cv += nl) {
        auto acc = bd ? hn::LoadU(d, bd + c0 + cv) : hn::Zero(d);
        for (int64_t t = 0; t < nt; ++t)
          acc = hn::MulAdd(hn::LoadU(d, xt + xoff[t] + cv), hn::LoadU(d, wt + woff[t] + cv), acc);
        hn::StoreU(acc, d, out + cv);
      }
      for (cv = cv_end; cv < cb1; ++cv) {
        float acc = bd ? bd[c0 + cv] : 0.0f;
        for (int64_t t = 0; t < nt; ++t) acc += xt[xoff[t] + cv] * wt[woff[t] + cv];
        out[cv] = acc;
      }
      apply_epilogue(act, out + cb0, cb1 - cb0);
    }
  }
}

// y (rows x cols, contiguous) = act(y + bias) with one bias per column (may be null), row by row
// while each is in L1: the channels-last expansion's epilogue.
void bias_rows_epilogue(const ops::ActivationSpec& act, float* y, int64_t rows, int64_t cols, const float* bias) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = y + r * cols;
    if (bias) {
      int64_t j = 0;
      for (; j + nl <= cols; j += nl) hn::StoreU(hn::Add(hn::LoadU(d, yr + j), hn::LoadU(d, bias + j)), d, yr + j);
      for (; j < cols; ++j) yr[j] += bias[j];
    }
    apply_epilogue(act, yr, cols);
  }
}

// `direct_` and, with more rows than sgemm_direct takes for any N, `packed_`: W_pw packed when it
// is a constant (else packed at every run).
class SeparableKernel final : public exec::Kernel {
 public:
  SeparableKernel(ops::ActivationSpec dw_act, ops::ActivationSpec act, ops::ActivationSpec ex_act,
                  std::vector<SgemmDirectA> direct, std::vector<SgemmPackedA> packed, std::vector<SgemmDirectA> expand,
                  std::vector<SgemmPackedB> expand_lanes, std::vector<SgemmPackedB> lanes)
      : dw_act_(dw_act), act_(act), ex_act_(ex_act), direct_(std::move(direct)), packed_(std::move(packed)),
        expand_(std::move(expand)), expand_lanes_(std::move(expand_lanes)), lanes_(std::move(lanes)) {}

  Status run(exec::KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& wd = *ctx.input(1);
    const Tensor& wp = *ctx.input(2);
    const Tensor* bd = ctx.input(3);
    const Tensor* bp = ctx.input(4);
    const Tensor* z = ctx.input(5);
    const Tensor* we = ctx.input(6);
    const Tensor* be = ctx.input(7);
    if (x.dtype() != DType::kF32) return unsupported(ctx.place(), ": FusedSeparableConv has no cpu kernel for ", dtype_name(x.dtype()));
    if (x.rank() != 4 || wd.rank() != 4 || wp.rank() != 4)
      return invalid_argument(ctx.place(), ": X, W_dw and W_pw must be 4-D, got ", shape_str(x.shape()), ", ",
                              shape_str(wd.shape()), ", ", shape_str(wp.shape()));
    if (we && (we->rank() != 4 || we->dim(1) != x.dim(1) || we->dim(2) != 1 || we->dim(3) != 1 ||
               (be && be->numel() != 0 && be->numel() != we->dim(0))))
      return invalid_argument(ctx.place(), ": W_ex ", shape_str(we->shape()), " / B_ex ",
                              be ? shape_str(be->shape()) : std::string("none"), " do not fit X ", shape_str(x.shape()));
    // With the expansion stage, X has cin channels and the depthwise stage c.
    const int64_t n_batch = x.dim(0), cin = x.dim(1), c = we ? we->dim(0) : cin, m = wp.dim(0);
    if (wd.dim(0) != c || wd.dim(1) != 1 || wp.dim(1) != c || wp.dim(2) != 1 || wp.dim(3) != 1)
      return invalid_argument(ctx.place(), ": W_dw ", shape_str(wd.shape()), " / W_pw ", shape_str(wp.shape()),
                              " do not fit X ", shape_str(x.shape()));
    const Ints in(x.shape().begin() + 2, x.shape().end()), kernel(wd.shape().begin() + 2, wd.shape().end());
    TSR_ASSIGN_OR_RETURN(Window3 w, resolve_window3(ctx, in, kernel, false));
    TSR_ASSIGN_OR_RETURN(Tensor * yt, ctx.alloc_output(0));
    if (z && z->shape() != yt->shape())
      return invalid_argument(ctx.place(), ": input[5] (Z): shape ", shape_str(z->shape()), " differs from the output's ",
                              shape_str(yt->shape()));
    if (yt->numel() == 0) return ok_status();

    const float* px = x.data<float>();
    const float* pwd = wd.data<float>();
    const float* pbd = bd && bd->numel() > 0 ? bd->data<float>() : nullptr;
    const float* pbp = bp && bp->numel() > 0 ? bp->data<float>() : nullptr;
    const float* pz = z ? z->data<float>() : nullptr;
    const float* pwe = we ? we->data<float>() : nullptr;
    const float* pbe = be && be->numel() > 0 ? be->data<float>() : nullptr;
    float* py = yt->mut_data<float>();
    const int64_t oh_n = w.out[1], ow_n = w.out[2], in_size = w.in_size(), out_size = w.out_size(), taps = w.k_size();
    const int64_t iw_n = w.in[2];
    ThreadPool& pool = ctx.pool();
    const int64_t macs = n_batch * (out_size * (c * taps + m * c) + (we ? in_size * c * cin : 0));
    const int threads = macs < kMinParallelConvMacs ? 1 : pool.num_threads();
    // Bands go to the threads whole when each still has kMinBandCols columns (every band reads
    // all of W_pw); otherwise the threads share each band: its channels, then the 1x1 product's
    // columns or row blocks (PP-OCRv4 det's 384 x 384 convs on 10 x 10 planes ran slower on two
    // threads than on one with 10-column bands).
    const bool small_plane =
        ow_n <= kMaxChannelsLastWidth && c >= kMinChannelsLast && taps <= 64 && !kSizeFirstKernels;
    // The expansion stage band by band (else, on small planes, whole first): a band's expanded
    // rows (s1 input rows of W per output row) count too. `plan` sets the band rows and whether
    // threads take whole bands.
    bool band_expand = we && !small_plane;
    int64_t rb = 0;
    bool whole_bands = false;
    auto plan = [&] {
      rb = std::clamp<int64_t>(kBandFloats / std::max<int64_t>(1, c * ow_n), 1, oh_n);
      if (band_expand)
        rb = std::clamp<int64_t>(kExpandBandFloats / std::max<int64_t>(1, c * (ow_n + w.s[1] * iw_n)) /
                                     kExpandRowQuantum * kExpandRowQuantum,
                                 kExpandRowQuantum, std::max(oh_n, kExpandRowQuantum));
      whole_bands = false;
      if (threads > 1) {
        int64_t rb_split = std::min(rb, std::max<int64_t>(1, oh_n / (4 * threads)));
        if (band_expand && rb_split > kExpandRowQuantum) rb_split = rb_split / kExpandRowQuantum * kExpandRowQuantum;
        whole_bands = rb_split * ow_n >= kMinBandCols;
        if (!whole_bands && !band_expand) {
          // Fewer, wider bands: the fewest that fit kBandFloats, a multiple of the threads. Shared
          // bands (the depthwise stage split by channels, the product by columns) had each thread
          // read half its product's input from the other's cache (MobileNetV2's 28 x 28 blocks,
          // cores that share no last-level cache); whole bands keep a band on one thread.
          const int64_t per = ((oh_n + rb - 1) / rb + threads - 1) / threads * threads;
          rb_split = (oh_n + per - 1) / per;
          whole_bands = per <= oh_n && rb_split * ow_n >= kMinBandCols;
        }
        if (whole_bands) rb = rb_split;
      }
    };
    plan();
    // Threads sharing each band: the expansion whole first, split by columns (band by band, each
    // band's expansion, depthwise stage and product were three jobs, each reading what the other
    // thread wrote: MobileNetV2's 28 x 28 blocks at two threads, 10% more span than apart).
    if (band_expand && threads > 1 && !whole_bands) {
      band_expand = false;
      plan();
    }
    // W_pw packed once per kernel when constant (else now), for sgemm_direct where a band's
    // columns make it the faster product.
    std::vector<SgemmDirectA> direct_now;
    std::vector<SgemmPackedA> packed_now;
    const SgemmDirectA* da = nullptr;
    const SgemmPackedA* pa = nullptr;
    std::vector<SgemmPackedB> lanes_pw_now;
    const SgemmPackedB* pb = nullptr;  // W_pw^T as B, for Y^T on planes of <= kMaxLanesPositions
    // Small planes with many channels take the packed product whatever M: its B^T read is what
    // lets the depthwise stage run channels-last (MobileNetV2's 384 -> 64 on 14x14: 0.167 -> 0.141
    // ms a block; BlazeFace's 24-96 channels on 16x16 and 8x8 ran 5% slower so).
    std::vector<SgemmDirectA> expand_now;
    const SgemmDirectA* ea = nullptr;
    if (we && !kSizeFirstKernels && !small_plane)
      ea = !expand_.empty() && expand_[0].m == c && expand_[0].k == cin
               ? &expand_[0]
               : &expand_now.emplace_back(sgemm_direct_pack_a(c, cin, pwe, cin));
    // Small planes: the expansion channels-last, E^T = X^T W_ex^T (the output channels on the
    // vector lanes), each thread's input rows as its run of positions reads them.
    std::vector<SgemmPackedB> lanes_now;
    const SgemmPackedB* eb = nullptr;
    if (we && small_plane)
      eb = !expand_lanes_.empty() && expand_lanes_[0].n == c && expand_lanes_[0].k == cin
               ? &expand_lanes_[0]
               : &lanes_now.emplace_back(sgemm_pack_b(true, cin, c, pwe, cin));
    if (!small_plane && sgemm_direct_preferred(m, std::min(oh_n, rb) * ow_n, c)) {
      da = !direct_.empty() && direct_[0].m == m && direct_[0].k == c
               ? &direct_[0]
               : &direct_now.emplace_back(sgemm_direct_pack_a(m, c, wp.data<float>(), c));
    } else if (small_plane && out_size <= kMaxLanesPositions) {
      pb = !lanes_.empty() && lanes_[0].n == m && lanes_[0].k == c
               ? &lanes_[0]
               : &lanes_pw_now.emplace_back(sgemm_pack_b(true, c, m, wp.data<float>(), c));
      rb = oh_n;
      whole_bands = false;
    } else {
      pa = !packed_.empty() && packed_[0].m == m && packed_[0].k == c
               ? &packed_[0]
               : &packed_now.emplace_back(sgemm_pack_a(false, m, c, wp.data<float>(), c));
      // The packed SGEMM packs B and streams all of A per call: one band of all rows, shared by
      // the threads (these are convs with many channels on small planes, PP-OCRv4 rec's).
      rb = oh_n;
      whole_bands = false;
    }
    const int64_t bands = (oh_n + rb - 1) / rb;
    // Bands of equal rows, give or take one: a short last band (28 rows as 12 + 12 + 4) was too
    // narrow for the threads to share its 1x1 product and ran on one (MobileNetV2's 28x28 blocks).
    rb = (oh_n + bands - 1) / bands;
    const DwGeom geom = depthwise_geom(w);
    ThreadPool* inner = threads > 1 && !whole_bands ? &pool : nullptr;
    // Per slot of the pool (parallel_for_slots): the padded input rows of one channel's band, and
    // a band's depthwise output (C x its columns). Slots are whole bands', or else the inner
    // channel split's (the depthwise output then shared, slot 0).
    const bool parallel = threads > 1;
    TSR_ASSIGN_OR_RETURN(auto pads, SlotScratch<float>::make(ctx, static_cast<size_t>(depthwise_band_size(w, geom, 0, rb)),
                                                             parallel));
    // Small planes (one band, the packed product): the depthwise stage channels-last, its output
    // read by the GEMM as B^T; per slot, the transposed input and weights of its channels (and,
    // threads taking runs of positions, its depthwise output).
    const bool channels_last = (pa || pb) && small_plane;
    TSR_ASSIGN_OR_RETURN(auto dbufs, SlotScratch<float>::make(ctx, static_cast<size_t>(c * rb * ow_n),
                                                              parallel && (whole_bands || channels_last)));
    TSR_ASSIGN_OR_RETURN(auto tbufs, SlotScratch<float>::make(
                                         ctx, channels_last ? static_cast<size_t>(c * (in_size + taps)) : 0, parallel));
    TSR_ASSIGN_OR_RETURN(auto ybufs, SlotScratch<float>::make(ctx, pb ? static_cast<size_t>(m * out_size) : 0, parallel));
    // The expanded input: a band's rows per slot (ecap rows of each channel), or the whole image.
    const int64_t ecap = band_expand ? std::min(w.in[1], depthwise_band_rows(w, 0, rb)) : 0;
    TSR_ASSIGN_OR_RETURN(auto ebufs, SlotScratch<float>::make(
                                         ctx, static_cast<size_t>(band_expand ? c * ecap * iw_n
                                                                  : we && !channels_last ? c * in_size
                                                                                         : 0),
                                         parallel && whole_bands));
    // Per slot (as pads): the offsets of a band's input rows for the in-place depthwise reads below.
    const int64_t max_band_rows = depthwise_band_rows(w, 0, rb);
    TSR_ASSIGN_OR_RETURN(auto offs, SlotScratch<int64_t>::make(ctx, static_cast<size_t>(max_band_rows), parallel));
    // The depthwise rows [r0, r1) of channels [c0, c1) into dst (channel-major, cols per channel),
    // from each channel's plane at xi + ch * cstride (input row ih at row ih % ring for ring > 0).
    auto depthwise_part = [&](int slot, const float* xi, int64_t cstride, int64_t ring, int64_t r0, int64_t r1,
                              int64_t c0, int64_t c1, float* dst) {
      const int64_t cols = (r1 - r0) * ow_n;
      float* pad = pads.slot(slot);
      // Width stride 1 with the expansion stage: the depthwise rows read the expansion's ring of
      // rows where they are, the padding as masked-off lanes and a row of zeros (pad's first iw_n
      // floats), not a padded copy of each channel's rows (MobileNetV2's 56x56 block: 5% less
      // work). Reading a plane of the input so (features.1's 112x112, 1.6 MB: from L3) was no
      // faster than the copy.
      // Offsets of the band's input rows in a channel's plane (-1: a padding row).
      const int64_t first = r0 * w.s[1] - w.pb[1], band_rows = depthwise_band_rows(w, r0, r1);
      int64_t* row_off = nullptr;  // null: the padded copy below
      if (w.s[2] == 1 && ring > 0 && band_rows <= max_band_rows) {
        std::fill_n(pad, iw_n, 0.0f);
        row_off = offs.slot(slot);
        for (int64_t i = 0, ih = first; i < band_rows; ++i, ++ih)
          row_off[i] = ih < 0 || ih >= w.in[1] ? -1 : (ring > 0 ? ih % ring : ih) * iw_n;
      }
      for (int64_t ch = c0; ch < c1; ++ch) {
        float* dc = dst + ch * cols;
        const float* plane = xi + ch * cstride;
        const auto row = [plane, ring, iw_n](int64_t ih) { return plane + (ring > 0 ? ih % ring : ih) * iw_n; };
        const float* wk = pwd + ch * taps;
        const float bias = pbd ? pbd[ch] : 0.0f;
        if (!row_off ||
            !depthwise_direct_rows_to(plane, row_off, pad, wk, bias, w, r0, r1, DwStoreRows<float>{dc, ow_n})) {
          // The band's input rows padded in a small buffer (not the whole plane).
          depthwise_prepare_band_rows<float>([&row](int64_t ih, float*) { return row(ih); }, nullptr, w, geom, r0, r1,
                                             pad);
          depthwise_prepared_rows<float>(pad, geom, wk, bias, w, r0, r1, dc);
        }
        apply_epilogue(dw_act_, dc, cols);
      }
    };
    // sgemm_direct on columns [j0, j1) of a band (dst: C x cols) into y0, + z0, the activation.
    auto direct_part = [&](const float* dst, int64_t cols, float* y0, const float* z0, int64_t j0, int64_t j1) {
      sgemm_direct(*da, j1 - j0, dst + j0, cols, pbp, z0 ? z0 + j0 : nullptr, out_size, y0 + j0, out_size, &act_);
    };
    // Expanded rows [a, b) of image xi into e (rows of channel ch at e + ch * lde), on the inner
    // pool's threads in parts of whole 64-column strips.
    // The whole image's expansion (not band by band) is split over the pool even where the bands
    // then go to the threads whole: the parts are runs of rows, as the bands that read them.
    ThreadPool* const epool = inner ? inner : threads > 1 && !band_expand ? &pool : nullptr;
    auto expand_rows = [&](const float* xi, int64_t a, int64_t b, float* e, int64_t lde) {
      const int64_t n = (b - a) * iw_n;
      if (!epool || n < 2 * kMinBandCols) {
        expand_columns(ea, pwe, pbe, ex_act_, c, cin, n, xi + a * iw_n, in_size, e, lde);
        return;
      }
      const int64_t quanta = (n + 63) / 64, parts = std::min<int64_t>(quanta, threads);
      epool->parallel_for(parts, 1, [&](int64_t q0, int64_t q1) {
        const int64_t j0 = std::min(n, q0 * quanta / parts * 64), j1 = std::min(n, q1 * quanta / parts * 64);
        expand_columns(ea, pwe, pbe, ex_act_, c, cin, j1 - j0, xi + a * iw_n + j0, in_size, e + j0, lde);
      });
    };
    for (int64_t img = 0; img < n_batch; ++img) {
      const float* xi = px + img * cin * in_size;
      if (we && !band_expand && !channels_last) {
        // Small planes: the expanded image whole, then as without the stage.
        expand_rows(xi, 0, w.in[1], ebufs.slot(0), in_size);
        xi = ebufs.slot(0);
      }
      auto run_bands = [&](int slot, int64_t b0, int64_t b1) {
        float* dst = dbufs.slot(slot);
        // Expanded input rows [e0, e1) held in this slot's buffer, a ring of ecap rows (row ih at
        // ih % ecap).
        float* ebuf = band_expand ? ebufs.slot(slot) : nullptr;
        const int64_t lde = ecap * iw_n;
        int64_t e0 = 0, e1 = 0;
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t r0 = b * rb, r1 = std::min(oh_n, r0 + rb), cols = (r1 - r0) * ow_n;
          if (band_expand) {
            // The input rows the band reads; those the previous band computed move to the front.
            const int64_t first = r0 * w.s[1] - w.pb[1];
            const int64_t n0 = std::max<int64_t>(0, first);
            const int64_t n1 = std::min(w.in[1], first + depthwise_band_rows(w, r0, r1));
            // The rows the band shares with the one before stay (n1 - n0 <= ecap: the new rows
            // take the places of rows before n0).
            for (int64_t a = n0 >= e0 && n0 < e1 ? e1 : n0; a < n1;) {
              const int64_t at = a % ecap, b2 = std::min(n1, a + ecap - at);
              expand_rows(xi, a, b2, ebuf + at * iw_n, lde);
              a = b2;
            }
            e0 = n0;
            e1 = n1;
          }
          const float* dx = band_expand ? ebuf : xi;
          const int64_t dstride = band_expand ? lde : in_size, ring = band_expand ? ecap : 0;
          float* y0 = py + img * m * out_size + r0 * ow_n;
          const float* z0 = pz ? pz + img * m * out_size + r0 * ow_n : nullptr;
          if (channels_last) {
            // One run of the plane's output positions a thread, end to end (depthwise stage, 1x1
            // product, epilogue), each reading only its own depthwise output and the input rows
            // its positions need. Three pooled jobs (the depthwise stage split by channels, then
            // the product, then the epilogue) had each thread read half of its product's input
            // from the other core (MobileNetV2's 14 x 14 and 7 x 7 blocks at two threads).
            const int64_t parts = inner ? threads : 1;
            auto part = [&](int s, int64_t t0, int64_t t1) {
              const int64_t p0 = t0 * cols / parts, p1 = t1 * cols / parts;
              if (p1 <= p0) return;
              float* t = tbufs.slot(s);
              float* dd = parts > 1 ? dbufs.slot(s) : dst;
              if (eb) {
                // The expanded input rows the positions read, channels-last, into t.
                const auto [iy0, iy1] = channels_last_input_rows(w, p0, p1);
                const int64_t ne = (iy1 - iy0) * iw_n;
                sgemm_prepacked_b(true, ne, 1.0f, xi + iy0 * iw_n, in_size, *eb, pwe, cin, 0.0f, t, c, nullptr);
                bias_rows_epilogue(ex_act_, t, ne, c, pbe);
              }
              depthwise_channels_last(eb ? t : xi, eb != nullptr, pwd, pbd, w, 0, c, p0, p1, dw_act_, t,
                                      t + c * in_size, dd, c);
              if (pb) {
                float* yt = ybufs.slot(s);
                sgemm_prepacked_b(false, p1 - p0, 1.0f, dd, c, *pb, wp.data<float>(), c, 0.0f, yt, m, nullptr);
                short_rows::transpose_rows(yt, m, p1 - p0, m, y0 + p0, out_size);
              } else {
                sgemm_prepacked(*pa, nullptr, c, true, p1 - p0, 1.0f, dd, c, 0.0f, y0 + p0, out_size, nullptr);
              }
              apply_epilogue_rows(act_, y0 + p0, m, p1 - p0, out_size, pbp, z0 ? z0 + p0 : nullptr, out_size);
            };
            if (parts > 1) pool.parallel_for_slots(parts, 1, part);
            else part(slot, 0, 1);
            continue;
          }
          if (inner)
            inner->parallel_for_slots(
                c, 1, [&](int s, int64_t c0, int64_t c1) { depthwise_part(s, dx, dstride, ring, r0, r1, c0, c1, dst); });
          else depthwise_part(slot, dx, dstride, ring, r0, r1, 0, c, dst);
          if (pa) {
            sgemm_prepacked(*pa, nullptr, c, false, cols, 1.0f, dst, cols, 0.0f, y0, out_size, inner);
            apply_epilogue_rows_pooled(inner, act_, y0, m, cols, out_size, pbp, z0, out_size);
          } else if (inner) {
            // About kMinBandCols columns a part, as many parts as a multiple of the threads where
            // there are enough, starting at multiples of 64 columns (sgemm_direct's widest strip:
            // each output sums as at one thread). A band of 336 was 128 + 128 + 80, split 208 :
            // 128 on 2 threads (MobileNetV2's 28 x 28 blocks); now 192 : 144.
            const int64_t quanta = (cols + 63) / 64;
            int64_t parts = std::min(quanta, std::max<int64_t>(1, cols / kMinBandCols));
            if (parts >= threads) parts = parts / threads * threads;
            else if (quanta >= threads) parts = threads;  // narrower parts rather than idle threads
            inner->parallel_for(parts, 1, [&](int64_t q0, int64_t q1) {
              direct_part(dst, cols, y0, z0, std::min(cols, q0 * quanta / parts * 64),
                          std::min(cols, q1 * quanta / parts * 64));
            });
          } else {
            direct_part(dst, cols, y0, z0, 0, cols);
          }
        }
      };
      // With the expansion stage, one run of bands a thread (each run recomputes the rows its
      // first band shares with the band before it; two runs a thread: 3% more span at two threads).
      if (whole_bands && bands > 1)
        pool.parallel_for_slots(bands, band_expand ? (bands + threads - 1) / threads : 1, run_bands);
      else run_bands(0, 0, bands);
    }
    return ok_status();
  }

 private:
  ops::ActivationSpec dw_act_, act_, ex_act_;
  std::vector<SgemmDirectA> direct_;  // one or none
  std::vector<SgemmPackedA> packed_;  // one or none
  std::vector<SgemmDirectA> expand_;  // W_ex packed, one or none
  std::vector<SgemmPackedB> expand_lanes_;  // W_ex^T packed as B (small planes' channels-last expansion), one or none
  std::vector<SgemmPackedB> lanes_;  // W_pw^T packed as B (planes of <= kMaxLanesPositions), one or none
};

Expected<std::unique_ptr<exec::Kernel>> create_separable(const exec::KernelInit& init) {
  TSR_ASSIGN_OR_RETURN(ops::ActivationSpec act, ops::activation_of(init.node, init.place));
  TSR_ASSIGN_OR_RETURN(ops::ActivationSpec dw_act, ops::activation_of(init.node, init.place, "dw_"));
  TSR_ASSIGN_OR_RETURN(ops::ActivationSpec ex_act, ops::activation_of(init.node, init.place, "ex_"));
  std::vector<SgemmDirectA> direct, expand;
  std::vector<SgemmPackedB> expand_lanes, lanes;
  const Tensor* we = init.constant_inputs.size() > 6 ? init.constant_inputs[6] : nullptr;
  const bool we_f32 = !kSizeFirstKernels && we && we->dtype() == DType::kF32 && we->rank() == 4;
  std::vector<SgemmPackedA> packed;
  const Tensor* wp = init.constant_inputs.size() > 2 ? init.constant_inputs[2] : nullptr;
  if (wp && wp->dtype() == DType::kF32 && wp->rank() == 4) {
    const int64_t m = wp->dim(0), k = wp->numel() / std::max<int64_t>(1, m);
    // The output width where the load-time shapes tell it (-1: known at run time only): planes
    // <= 16 wide with channels enough take the packed product whatever M, others sgemm_direct
    // where it is preferred; only the forms a run can take are kept (the packed one pads to whole
    // cache blocks: MobileNetV2 kept 5 MB more with both).
    int64_t ow = -1, out_n = -1;
    const ops::ValueType* xt = init.input_types.empty() ? nullptr : &init.input_types[0];
    const Tensor* wd = init.constant_inputs.size() > 1 ? init.constant_inputs[1] : nullptr;
    if (xt && xt->has_shape && xt->shape.size() == 4 && wd && wd->rank() == 4 && xt->shape[2] > 0 && xt->shape[3] > 0) {
      const Ints in{xt->shape[2], xt->shape[3]};
      auto sp = ops::resolve_spatial(init.node, in, Ints{wd->dim(2), wd->dim(3)}, false);
      if (sp.ok()) {
        const Window3 w3 = window3_of(*sp, in);
        ow = w3.out[2];
        out_n = w3.out[1] * w3.out[2];
      }
    }
    const bool small_plane = !kSizeFirstKernels && k >= kMinChannelsLast && ow >= 0 && ow <= kMaxChannelsLastWidth;
    const bool maybe_small = !kSizeFirstKernels && k >= kMinChannelsLast && (ow < 0 || ow <= kMaxChannelsLastWidth);
    if (!kSizeFirstKernels && !small_plane) direct.push_back(sgemm_direct_pack_a(m, k, wp->data<float>(), k));
    // Y^T on planes of <= kMaxLanesPositions (W_pw^T as B), else the packed A.
    const bool lanes_pw = small_plane && out_n <= kMaxLanesPositions;
    const bool maybe_lanes = maybe_small && (out_n < 0 || out_n <= kMaxLanesPositions);
    if ((!sgemm_direct_preferred(m, -1, k) || maybe_small) && !lanes_pw)
      packed.push_back(sgemm_pack_a(false, m, k, wp->data<float>(), k));
    if (maybe_lanes) lanes.push_back(sgemm_pack_b(true, k, m, wp->data<float>(), k));
    // W_ex as the form the run takes: sgemm_direct's A off small planes, W_ex^T packed as B on them.
    if (we_f32 && !small_plane) expand.push_back(sgemm_direct_pack_a(we->dim(0), we->dim(1), we->data<float>(), we->dim(1)));
    if (we_f32 && maybe_small) expand_lanes.push_back(sgemm_pack_b(true, we->dim(1), we->dim(0), we->data<float>(), we->dim(1)));
  } else if (we_f32) {
    expand.push_back(sgemm_direct_pack_a(we->dim(0), we->dim(1), we->data<float>(), we->dim(1)));
  }
  return std::unique_ptr<exec::Kernel>(
      new SeparableKernel(dw_act, act, ex_act, std::move(direct), std::move(packed), std::move(expand),
                          std::move(expand_lanes), std::move(lanes)));
}

}  // namespace

void register_conv_separable_target(KernelRegistry& r) {
  TSR_IF_SELECTED("FusedSeparableConv") r.add("FusedSeparableConv", {DType::kF32}, &create_separable);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_conv_separable_target);

void register_conv_separable_kernels(KernelRegistry& r) { HWY_DYNAMIC_DISPATCH(register_conv_separable_target)(r); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
