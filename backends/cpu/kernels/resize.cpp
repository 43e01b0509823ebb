// CPU kernel for Resize (semantics: core/ops/families/resize.cpp).
//
// Nearest, linear and cubic interpolation are tensor products of 1-D kernels, so the N-D resize
// runs as one 1-D pass per axis whose length or coordinates change. Out-of-range taps take the
// edge value (or are dropped and the weights renormalized with exclude_outside); with
// tf_crop_and_resize, an output whose source coordinate leaves the input gets
// extrapolation_value (it stays constant through the later passes, whose weights sum to 1).
// That reference path computes in double. f32 tensors resized along their last two axes only (the
// NCHW image resize of real models) take a direct path instead: per output row, the source rows
// its taps name are blended into one input-width row (contiguous, vectorized), then gathered
// along the width; rows run on the thread pool.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/scratch.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

// Scratch arrays (backends/cpu/kernels/scratch.h): a steady-state run allocates nothing.
struct Taps {
  Scratch<int64_t> index;  // [out_len * n]
  Scratch<double> weight;  // [out_len * n]
  Scratch<bool> outside;   // [out_len]: extrapolate
  int n = 1;
};

struct ResizeAttrs {
  std::string_view mode, ct, nearest;  // views of the node's attributes
  double a = -0.75, extrapolation = 0;
  bool exclude_outside = false;
};

double source_coord(const ResizeAttrs& at, int64_t x, double scale, int64_t in, int64_t out, double roi_start,
                    double roi_end) {
  const double xf = static_cast<double>(x);
  if (at.ct == "half_pixel") return (xf + 0.5) / scale - 0.5;
  if (at.ct == "pytorch_half_pixel") return out > 1 ? (xf + 0.5) / scale - 0.5 : 0.0;
  if (at.ct == "align_corners") return out == 1 ? 0.0 : xf * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (at.ct == "asymmetric") return xf / scale;
  if (at.ct == "tf_half_pixel_for_nn") return (xf + 0.5) / scale;
  // tf_crop_and_resize
  return out > 1 ? roi_start * static_cast<double>(in - 1) + xf * (roi_end - roi_start) * static_cast<double>(in - 1) / static_cast<double>(out - 1)
                 : 0.5 * (roi_start + roi_end) * static_cast<double>(in - 1);
}

Expected<Taps> make_taps(KernelContext& ctx, const ResizeAttrs& at, int64_t in, int64_t out, double scale,
                        double roi_start, double roi_end) {
  const int n = at.mode == "nearest" ? 1 : at.mode == "linear" ? 2 : 4;
  TSR_ASSIGN_OR_RETURN(auto index, Scratch<int64_t>::make(ctx, static_cast<size_t>(out * n)));
  TSR_ASSIGN_OR_RETURN(auto weight, Scratch<double>::make(ctx, static_cast<size_t>(out * n)));
  TSR_ASSIGN_OR_RETURN(auto outside, Scratch<bool>::filled(ctx, static_cast<size_t>(out), false));
  Taps t{std::move(index), std::move(weight), std::move(outside), n};
  for (int64_t o = 0; o < out; ++o) {
    const double x = source_coord(at, o, scale, in, out, roi_start, roi_end);
    if (at.ct == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) t.outside[static_cast<size_t>(o)] = true;
    int64_t* idx = t.index.data() + o * t.n;
    double* w = t.weight.data() + o * t.n;
    auto clamp = [&](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), in - 1); };
    if (t.n == 1) {
      const double fl = std::floor(x), frac = x - fl;
      int64_t i;
      if (at.nearest == "floor") i = static_cast<int64_t>(fl);
      else if (at.nearest == "ceil") i = static_cast<int64_t>(std::ceil(x));
      else if (frac == 0.5) i = static_cast<int64_t>(at.nearest == "round_prefer_ceil" ? fl + 1 : fl);
      else i = static_cast<int64_t>(std::round(x));
      idx[0] = clamp(i);
      w[0] = 1;
      continue;
    }
    const double x0 = std::floor(x), r = x - x0;
    const auto base = static_cast<int64_t>(x0) - (t.n == 4 ? 1 : 0);
    if (t.n == 2) {
      w[0] = 1 - r;
      w[1] = r;
    } else {
      const double a = at.a, r1 = r + 1, r2 = 1 - r, r3 = 2 - r;
      w[0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
      w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
      w[2] = ((a + 2) * r2 - (a + 3)) * r2 * r2 + 1;
      w[3] = ((a * r3 - 5 * a) * r3 + 8 * a) * r3 - 4 * a;
    }
    double sum = 0;
    for (int k = 0; k < t.n; ++k) {
      const int64_t i = base + k;
      if (at.exclude_outside && (i < 0 || i >= in)) w[k] = 0;
      sum += w[k];
      idx[k] = clamp(i);
    }
    if (at.exclude_outside && sum != 0)
      for (int k = 0; k < t.n; ++k) w[k] /= sum;
  }
  return t;
}

// One 1-D pass over axis `axis` of `src` (as doubles), giving `out_len` along it.
std::vector<double> resize_axis(const std::vector<double>& src, const Shape& shape, size_t axis, const Taps& taps,
                                int64_t out_len, double extrapolation) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t in_len = shape[axis];
  std::vector<double> dst(static_cast<size_t>(outer * out_len * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t x = 0; x < out_len; ++x) {
      double* row = dst.data() + (o * out_len + x) * inner;
      if (taps.outside[static_cast<size_t>(x)]) {
        std::fill_n(row, inner, extrapolation);
        continue;
      }
      std::fill_n(row, inner, 0.0);
      for (int k = 0; k < taps.n; ++k) {
        const double w = taps.weight[static_cast<size_t>(x * taps.n + k)];
        if (w == 0) continue;
        const double* s = src.data() + (o * in_len + taps.index[static_cast<size_t>(x * taps.n + k)]) * inner;
        for (int64_t i = 0; i < inner; ++i) row[i] += w * s[i];
      }
    }
  return dst;
}

// f32, only the last two axes resized, no extrapolation: y[p, oy, ox] =
// sum_kh wh[oy,kh] * sum_kw ww[ox,kw] * x[p, ih[oy,kh], iw[ox,kw]], summed in float.
Status resize_f32_hw(KernelContext& ctx, const Tensor& x, Tensor* y, const Taps& th, const Taps& tw) {
  const int64_t rank = x.rank(), H = x.dim(rank - 2), W = x.dim(rank - 1);
  const int64_t OH = y->dim(rank - 2), OW = y->dim(rank - 1), planes = y->numel() / (OH * OW);
  TSR_ASSIGN_OR_RETURN(auto wh, Scratch<float>::make(ctx, th.weight.size()));
  TSR_ASSIGN_OR_RETURN(auto ww, Scratch<float>::make(ctx, tw.weight.size()));
  TSR_ASSIGN_OR_RETURN(auto iw, Scratch<int32_t>::make(ctx, tw.index.size()));
  std::copy(th.weight.begin(), th.weight.end(), wh.begin());
  std::copy(tw.weight.begin(), tw.weight.end(), ww.begin());
  std::copy(tw.index.begin(), tw.index.end(), iw.begin());
  const float* src = x.data<float>();
  float* dst = y->mut_data<float>();
  const int nh = th.n, nw = tw.n;
  TSR_ASSIGN_OR_RETURN(auto blended, SlotScratch<float>::make(ctx, static_cast<size_t>(W)));
  ctx.pool().parallel_for_slots(planes * OH, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, OW * nw)), [&](int slot, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t p = r / OH, oy = r % OH;
      const float* plane = src + p * H * W;
      float* b = blended.slot(slot);
      const float w0 = wh[static_cast<size_t>(oy * nh)];
      const float* s0 = plane + th.index[static_cast<size_t>(oy * nh)] * W;
      for (int64_t i = 0; i < W; ++i) b[i] = w0 * s0[i];
      for (int k = 1; k < nh; ++k) {
        const float wk = wh[static_cast<size_t>(oy * nh + k)];
        if (wk == 0) continue;
        const float* sk = plane + th.index[static_cast<size_t>(oy * nh + k)] * W;
        for (int64_t i = 0; i < W; ++i) b[i] += wk * sk[i];
      }
      float* out = dst + r * OW;
      const float* wx = ww.data();
      const int32_t* ix = iw.data();
      if (nw == 2) {
        for (int64_t o = 0; o < OW; ++o) out[o] = wx[2 * o] * b[ix[2 * o]] + wx[2 * o + 1] * b[ix[2 * o + 1]];
      } else {
        for (int64_t o = 0; o < OW; ++o) {
          float acc = 0;
          for (int k = 0; k < nw; ++k) acc += wx[o * nw + k] * b[ix[o * nw + k]];
          out[o] = acc;
        }
      }
    }
  });
  return ok_status();
}

Status resize(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ResizeAttrs at;
  at.mode = ctx.node().attr_string_view("mode");
  at.ct = ctx.node().attr_string_view("coordinate_transformation_mode");
  at.nearest = ctx.node().attr_string_view("nearest_mode");
  at.a = ctx.node().attr_float("cubic_coeff_a");
  at.extrapolation = ctx.node().attr_float("extrapolation_value");
  at.exclude_outside = ctx.node().attr_int("exclude_outside") != 0;
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const size_t rank = static_cast<size_t>(x.rank());
  SmallVector<double, kInlineDims> scales(rank, 1.0);
  const Tensor* sc = ctx.input(2);
  if (sc && sc->numel() > 0) {
    for (size_t d = 0; d < rank; ++d) scales[d] = sc->scalar_f64(static_cast<int64_t>(d));
  } else {
    for (size_t d = 0; d < rank; ++d)
      scales[d] = x.shape()[d] == 0 ? 1.0 : static_cast<double>(y->shape()[d]) / static_cast<double>(x.shape()[d]);
  }
  SmallVector<double, 2 * kInlineDims> roi(2 * rank, 0.0);
  for (size_t d = 0; d < rank; ++d) roi[rank + d] = 1.0;
  if (ctx.input(1) && ctx.input(1)->numel() > 0) {
    if (static_cast<size_t>(ctx.input(1)->numel()) != 2 * rank) return ctx.error("input[1] (roi) must have 2 * rank = ", 2 * rank, " entries");
    for (size_t i = 0; i < 2 * rank; ++i) roi[i] = ctx.input(1)->scalar_f64(static_cast<int64_t>(i));
  }
  if (x.numel() == 0 || y->numel() == 0) return ok_status();
  bool leading_kept = rank >= 2 && at.ct != "tf_crop_and_resize";
  for (size_t d = 0; d + 2 < rank && leading_kept; ++d) leading_kept = y->shape()[d] == x.shape()[d] && scales[d] == 1.0;
  if (x.dtype() == DType::kF32 && leading_kept) {
    // Axes that keep their length at scale 1 are copied, as the reference path skips them.
    const auto taps_of = [&](size_t d) -> Expected<Taps> {
      if (y->shape()[d] != x.shape()[d] || scales[d] != 1.0) return make_taps(ctx, at, x.shape()[d], y->shape()[d], scales[d], roi[d], roi[rank + d]);
      const auto len = static_cast<size_t>(x.shape()[d]);
      TSR_ASSIGN_OR_RETURN(auto index, Scratch<int64_t>::make(ctx, len));
      TSR_ASSIGN_OR_RETURN(auto weight, Scratch<double>::filled(ctx, len, 1.0));
      TSR_ASSIGN_OR_RETURN(auto outside, Scratch<bool>::filled(ctx, len, false));
      for (size_t i = 0; i < len; ++i) index[i] = static_cast<int64_t>(i);
      return Taps{std::move(index), std::move(weight), std::move(outside), 1};
    };
    TSR_ASSIGN_OR_RETURN(Taps th, taps_of(rank - 2));
    TSR_ASSIGN_OR_RETURN(Taps tw, taps_of(rank - 1));
    return resize_f32_hw(ctx, x, y, th, tw);
  }
  std::vector<double> buf(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) buf[static_cast<size_t>(i)] = x.scalar_f64(i);
  Shape shape = x.shape();
  for (size_t d = 0; d < rank; ++d) {
    const int64_t out = y->shape()[d];
    if (out == shape[d] && scales[d] == 1.0 && at.ct != "tf_crop_and_resize") continue;
    TSR_ASSIGN_OR_RETURN(const Taps taps, make_taps(ctx, at, shape[d], out, scales[d], roi[d], roi[rank + d]));
    buf = resize_axis(buf, shape, d, taps, out, at.extrapolation);
    shape[d] = out;
  }
  const bool is_int = dtype_is_integer(x.dtype());
  bool ok = dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = y->mut_data<T>();
    for (int64_t i = 0; i < y->numel(); ++i) {
      double v = buf[static_cast<size_t>(i)];
      if (is_int) v = std::nearbyint(v);
      if constexpr (std::is_same_v<T, Half>) o[i].bits = f32_to_f16(static_cast<float>(v));
      else if constexpr (std::is_same_v<T, BFloat16>) o[i].bits = f32_to_bf16(static_cast<float>(v));
      else o[i] = static_cast<T>(v);
    }
  });
  if (!ok) return unsupported(ctx.place(), ": Resize of ", dtype_name(x.dtype()));
  return ok_status();
}

}  // namespace

void register_resize_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("Resize") r.add_fn("Resize", {DType::kF32, DType::kF64, DType::kF16, DType::kU8, DType::kI8, DType::kI32, DType::kI64}, resize);
}

}  // namespace tsr::cpu
