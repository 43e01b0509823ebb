// CPU kernel of tessera's DynamicQuantizeConv (core/ops/families/quantize.cpp), which quantize_fusion
// makes from onnxruntime quantize_dynamic's conv pattern
//   DynamicQuantizeLinear(X) -> ConvInteger(x_q, W, x_zp, w_zp) -> Cast(f32) -> Mul(x_scale * w_scale)
//   [-> Add(bias)]
// (core/passes/opt_quantize_conv.cpp): a 1-D or 2-D conv of one group, unit dilations, constant W;
// and of tessera's ConvIntegerToFloat, the same conv on codes that a DynamicQuantizeLinear shared
// with other convs made (x_q, x_scale and x_zero_point given).
//
// Per run: X is quantized as DynamicQuantizeLinear does (dynamic_quantize_u8, the op kernel's own
// function: the same codes, scale and zero point), each image's codes are copied into a padded HWC
// buffer (padding = the zero point, so padded taps add 0 once it is subtracted), and the int8 GEMM
// (qgemm_gather, qgemm.h) reads each output pixel's kernel rows in place from it: a kernel row of an
// output pixel is kw * C contiguous bytes there (the "row form", as qconv.cpp's stem convs), rounded
// up to whole quads, whose extra bytes meet weights equal to the zero point (so they add 0). The
// packed weights (K = kh * row_run, [kh][kw][C] order) are made once at kernel creation.
// The output stage is float(acc) * (x_scale * w_scale) (+ bias[m]) with the rounding after the
// product and again after the sum (not an FMA), the unfused Cast -> Mul -> Add graph's arithmetic:
// outputs are bit-identical to it (and to onnxruntime, whose ConvInteger sums are exact too).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/qgemm.h"
#include "backends/cpu/kernels/quantize.h"
#include "core/base/mapped_pages.h"
#include "core/ops/spatial.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

// Bytes of a kernel row's run: kw * C rounded up to quads (qgemm_gather reads whole quads).
int64_t run_bytes(int64_t kw, int64_t c) { return (kw * c + 3) / 4 * 4; }

// The 1-D or 2-D geometry, a 1-D conv as 2-D with one input row (h = kh = 1).
struct Geom {
  int64_t h, w, kh, kw, sh, sw, ph, pw, oh, ow;
};

// W [M, C, kh, kw] or [M, C, kw] as qgemm's B for the row form: K = kh * run_bytes(kw, C), row
// i * run + j * C + c holding w[m][c][i][j]; the bytes past kw * C of each kernel row hold the
// zero point (they meet the next pixels' bytes, which thus add nothing).
QgemmPackedB pack_rows(const Tensor& w, const Tensor* zp) {
  const int64_t m = w.dim(0), c = w.dim(1), kh = w.rank() == 4 ? w.dim(2) : 1, kw = w.dim(w.rank() - 1);
  const int64_t seg = run_bytes(kw, c), k = kh * seg;
  const auto* base = static_cast<const uint8_t*>(w.raw());  // 1-byte elements
  const uint8_t fill = zp ? *static_cast<const uint8_t*>(zp->raw()) : 0;
  std::vector<uint8_t> b(size_t(m * k), fill);
  for (int64_t o = 0; o < m; ++o)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) b[size_t(o * k + i * seg + j * c + ci)] = base[((o * c + ci) * kh + i) * kw + j];
  return qgemm_pack_b(k, m, b.data(), w.dtype() == DType::kI8, k, true, zp ? zp->raw() : nullptr, zp ? 1 : 0);
}

class DynamicQuantizeConvKernel final : public exec::Kernel {
 public:
  DynamicQuantizeConvKernel(QgemmPackedB packed, bool quantized)
      : quantized_(quantized), packed_(std::move(packed)) {}

  Status run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor& ws = *ctx.input(quantized_ ? 3 : 2);
    const Tensor* bias = ctx.input(quantized_ ? 6 : 4);
    const int64_t r = x.rank();
    if ((r != 3 && r != 4) || w.rank() != r || x.dim(1) != w.dim(1))
      return ctx.error("input[0] (X) ", shape_str(x.shape()), " and input[1] (W) ", shape_str(w.shape()),
                       ": expected a 1-D or 2-D conv of one group");
    const int64_t m = w.dim(0), c = x.dim(1);
    if (ws.numel() != 1 && ws.numel() != m)
      return ctx.error("w_scale has ", ws.numel(), " entries, expected 1 or ", m, " (per output channel)");
    if (bias && bias->numel() != m) return ctx.error("B has ", bias->numel(), " entries, expected ", m);
    const Ints in = r == 4 ? Ints{x.dim(2), x.dim(3)} : Ints{x.dim(2)};
    const Ints kernel = r == 4 ? Ints{w.dim(2), w.dim(3)} : Ints{w.dim(2)};
    auto sp = ops::resolve_spatial(ctx.node(), in, kernel, false);
    if (!sp.ok()) return sp.status().with_context(ctx.place());
    for (int64_t d : sp->dilations)
      if (d != 1) return ctx.error("dilations other than 1 are not supported here");
    const size_t s = sp->strides.size() - 1;  // the last (width) axis
    Geom g{r == 4 ? x.dim(2) : 1,          x.dim(r - 1), r == 4 ? w.dim(2) : 1,   w.dim(r - 1),
           r == 4 ? sp->strides[0] : 1,   sp->strides[s], r == 4 ? sp->pad_begin[0] : 0, sp->pad_begin[s],
           r == 4 ? sp->out[0] : 1,       sp->out[s]};
    TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
    if (y->numel() == 0) return ok_status();
    const int64_t seg = run_bytes(g.kw, c);
    if (packed_.n != m || packed_.k != g.kh * seg) return ctx.error("the packed weights do not match W");
    // The padded HWC copy: rows past the image bottom/right that some window reaches.
    const int64_t ph_end = std::max<int64_t>(0, (g.oh - 1) * g.sh + g.kh - g.h - g.ph);
    const int64_t pw_end = std::max<int64_t>(0, (g.ow - 1) * g.sw + g.kw - g.w - g.pw);
    const int64_t hp = g.h + g.ph + ph_end, wp = g.w + g.pw + pw_end;
    if (hp * wp * c >= (int64_t{1} << 30)) return ctx.error("input too large (", hp * wp * c, " padded bytes)");
    const size_t codes_bytes = quantized_ ? 0 : (size_t(x.numel()) + 63) & ~size_t{63};
    const size_t buf_bytes = (size_t(hp * wp * c) + 64 + 63) & ~size_t{63};  // + the quads' reach past the last run
    TSR_ASSIGN_OR_RETURN(void* mem, ctx.scratch(codes_bytes + buf_bytes + size_t(m) * sizeof(float)));
    const uint8_t* codes = static_cast<uint8_t*>(mem);
    auto* buf = static_cast<uint8_t*>(mem) + codes_bytes;
    DynamicQuantParams q;
    if (quantized_) {
      const Tensor& xs = *ctx.input(2);
      const Tensor* xz = ctx.input(4);
      if (x.dtype() != DType::kU8 || xs.numel() != 1 || (xz && (xz->numel() != 1 || xz->dtype() != DType::kU8)))
        return ctx.error("expected u8 X with a scalar x_scale and u8 x_zero_point (DynamicQuantizeLinear's)");
      codes = x.data<uint8_t>();
      q.scale = xs.data<float>()[0];
      q.zero_point = xz ? xz->data<uint8_t>()[0] : 0;
    } else {
      q = dynamic_quantize_u8(x.data<float>(), x.numel(), static_cast<uint8_t*>(mem), &ctx.pool());
    }
    // The padding (rows above and below the image, columns left and right of it, the slack after
    // it) holds the zero point; the image's pixels are copied in per image below.
    const size_t row = size_t(wp * c), left = size_t(g.pw * c), right = size_t((wp - g.pw - g.w) * c);
    std::memset(buf, q.zero_point, size_t(g.ph) * row);
    for (int64_t iy = g.ph; iy < g.ph + g.h; ++iy) {
      std::memset(buf + size_t(iy) * row, q.zero_point, left);
      std::memset(buf + size_t(iy) * row + left + size_t(g.w * c), q.zero_point, right);
    }
    std::memset(buf + size_t(g.ph + g.h) * row, q.zero_point, buf_bytes - size_t(g.ph + g.h) * row);
    // x_scale * w_scale[m] in f32, as the graph's Mul computes it.
    auto* scale = reinterpret_cast<float*>(buf + buf_bytes);
    for (int64_t j = 0; j < ws.numel(); ++j) scale[j] = q.scale * ws.data<float>()[j];
    QgemmOutput out;
    out.kind = QgemmOutput::kFloat;
    out.row_stride = 1;  // pixel-major rows, NCHW output: column j (channel) strides by a plane
    out.col_stride = g.oh * g.ow;
    out.scale = scale;
    out.scale_per_col = ws.numel() > 1;
    out.bias_f32 = bias ? bias->data<float>() : nullptr;
    const auto off = offsets(g, c, wp);
    const int64_t plane = g.h * g.w, pixels = g.oh * g.ow;
    for (int64_t nb = 0; nb < x.dim(0); ++nb) {
      const uint8_t* xb = codes + nb * c * plane;
      // Split over the threads by input rows, or (1-D: one row) by chunks of 512 pixels.
      constexpr int64_t kChunk = 512;
      const int64_t chunks = (g.w + kChunk - 1) / kChunk;
      auto copy = [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t iy = t / chunks, x0 = t % chunks * kChunk, n = std::min(kChunk, g.w - x0);
          transpose_bytes(xb + iy * g.w + x0, c, n, plane, buf + ((iy + g.ph) * wp + g.pw + x0) * c, c);
        }
      };
      if (ctx.pool().num_threads() > 1 && plane * c >= (int64_t{1} << 16))
        ctx.pool().parallel_for(g.h * chunks, 1, copy);
      else
        copy(0, g.h * chunks);
      out.out = y->mut_data<float>() + nb * m * pixels;
      qgemm_gather(pixels, buf, off->data(), seg, false, q.zero_point, packed_, out, &ctx.pool());
    }
    return ok_status();
  }

 private:
  // One offset per output pixel and kernel row into the padded HWC copy (width wp), built on the
  // first run of a geometry (every run of a static shape reuses it).
  std::shared_ptr<const std::vector<int32_t>> offsets(const Geom& g, int64_t c, int64_t wp) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::array<int64_t, 9> key{g.h, g.w, g.oh, g.ow, g.sh, g.sw, g.ph, c, wp};
    if (off_ && key == key_) return off_;
    auto off = std::make_shared<std::vector<int32_t>>(size_t(g.oh * g.ow * g.kh));
    int32_t* o = off->data();
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t i = 0; i < g.kh; ++i) *o++ = static_cast<int32_t>(((oy * g.sh + i) * wp + ox * g.sw) * c);
    key_ = key;
    off_ = std::move(off);
    return off_;
  }

  bool quantized_;  // ConvIntegerToFloat: X is u8 codes, x_scale and x_zero_point inputs
  QgemmPackedB packed_;
  std::mutex mu_;
  std::array<int64_t, 9> key_{};
  std::shared_ptr<const std::vector<int32_t>> off_;
};

template <bool kQuantized>
Expected<std::unique_ptr<exec::Kernel>> create_dynamic_quantize_conv(const exec::KernelInit& init) {
  auto constant = [&](size_t i) { return i < init.constant_inputs.size() ? init.constant_inputs[i] : nullptr; };
  const Tensor* w = constant(1);
  const size_t izp = kQuantized ? 5 : 3;
  const bool has_zp = init.node.inputs.size() > izp && init.node.inputs[izp] >= 0;
  const Tensor* zp = constant(izp);
  if (!w || (has_zp && !zp))
    return unsupported("DynamicQuantizeConv / ConvIntegerToFloat: W and its zero point must be constants (quantize_fusion makes it so)");
  if ((w->rank() != 3 && w->rank() != 4) || w->dim(0) < 1 || init.node.attr_int("group", 1) != 1 ||
      (zp && (zp->numel() != 1 || zp->dtype() != w->dtype())))
    return invalid_argument("DynamicQuantizeConv: expected W [M, C, k] or [M, C, kh, kw], one group, a scalar zero point; W ",
                            shape_str(w->shape()));
  const int64_t kh = w->rank() == 4 ? w->dim(2) : 1;
  if (kh * run_bytes(w->dim(w->rank() - 1), w->dim(1)) >= (int64_t{1} << 15))
    return unsupported("DynamicQuantizeConv: C * kh * kw too large for the int8 GEMM (K < 2^15)");
  QgemmPackedB packed = pack_rows(*w, zp);
  release_mapped_pages(w->raw(), w->nbytes());  // the packed copy is what runs read
  return std::unique_ptr<exec::Kernel>(new DynamicQuantizeConvKernel(std::move(packed), kQuantized));
}

}  // namespace

void register_qconv_dynamic_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("DynamicQuantizeConv") r.add("DynamicQuantizeConv", {DType::kF32}, &create_dynamic_quantize_conv<false>);
  TSR_IF_SELECTED("ConvIntegerToFloat") r.add("ConvIntegerToFloat", {DType::kU8}, &create_dynamic_quantize_conv<true>);
}

}  // namespace tsr::cpu
