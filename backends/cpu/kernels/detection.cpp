// CPU kernels for NonMaxSuppression, RoiAlign and GridSample
// (semantics: core/ops/families/detection.cpp). Reference kernels in double precision.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

void store(Tensor& t, int64_t i, double v) {
  if (t.dtype() == DType::kF32) t.mut_data<float>()[i] = static_cast<float>(v);
  else if (t.dtype() == DType::kF64) t.mut_data<double>()[i] = v;
  else t.mut_data<Half>()[i].bits = f32_to_f16(static_cast<float>(v));
}

// ---- NonMaxSuppression ----------------------------------------------------------------------

struct Box {
  double y1, x1, y2, x2;
};

Box read_box(const float* p, bool center) {
  if (center) return {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
  return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
}

double iou(const Box& a, const Box& b) {
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1), iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0;
  const double inter = ih * iw;
  const double uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
  return uni <= 0 ? 0 : inter / uni;
}

Status non_max_suppression(KernelContext& ctx) {
  const Tensor& boxes = *ctx.input(0);
  const Tensor& scores = *ctx.input(1);
  const int64_t nb = boxes.dim(0), ns = boxes.dim(1), nc = scores.dim(1);
  if (scores.dim(0) != nb || scores.dim(2) != ns)
    return ctx.error("input[1] (scores) shape ", shape_str(scores.shape()), " does not match boxes ", shape_str(boxes.shape()));
  const int64_t max_out = ctx.input(2) && ctx.input(2)->numel() ? ctx.input(2)->scalar_i64() : 0;
  const double iou_th = ctx.input(3) && ctx.input(3)->numel() ? ctx.input(3)->scalar_f64() : 0.0;
  const bool has_score_th = ctx.input(4) && ctx.input(4)->numel();
  const double score_th = has_score_th ? ctx.input(4)->scalar_f64() : 0.0;
  const bool center = ctx.node().attr_int("center_point_box") == 1;
  std::vector<int64_t> selected;
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t c = 0; c < nc; ++c) {
      const float* sc = scores.data<float>() + (b * nc + c) * ns;
      order.clear();
      for (int64_t i = 0; i < ns; ++i)
        if (!has_score_th || sc[i] > score_th) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t d) { return sc[a] > sc[d]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        const Box box = read_box(boxes.data<float>() + (b * ns + i) * 4, center);
        if (std::any_of(kept.begin(), kept.end(), [&](const Box& k) { return iou(k, box) > iou_th; })) continue;
        kept.push_back(box);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0, DType::kI64, {static_cast<int64_t>(selected.size() / 3), 3}));
  std::copy(selected.begin(), selected.end(), y->mut_data<int64_t>());
  return ok_status();
}

// ---- RoiAlign -------------------------------------------------------------------------------

Status roi_align(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& rois = *ctx.input(1);
  const Tensor& idx = *ctx.input(2);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), nr = rois.dim(0);
  if (rois.dim(1) != 4) return ctx.error("input[1] (rois) must be [num_rois, 4]");
  if (idx.numel() != nr) return ctx.error("input[2] (batch_indices) has ", idx.numel(), " entries, rois has ", nr);
  const auto& node = ctx.node();
  const bool avg = node.attr_string("mode") == "avg";
  const bool half_pixel = node.attr_string("coordinate_transformation_mode") == "half_pixel";
  const int64_t oh = node.attr_int("output_height"), ow = node.attr_int("output_width");
  const int64_t sr = node.attr_int("sampling_ratio");
  const double scale = node.attr_float("spatial_scale"), offset = half_pixel ? 0.5 : 0.0;
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  for (int64_t r = 0; r < nr; ++r) {
    const int64_t bi = idx.scalar_i64(r);
    if (bi < 0 || bi >= n) return ctx.error("input[2] (batch_indices)[", r, "] = ", bi, " is outside [0, ", n, ")");
    const double x1 = rois.scalar_f64(r * 4) * scale - offset, y1 = rois.scalar_f64(r * 4 + 1) * scale - offset;
    double rw = rois.scalar_f64(r * 4 + 2) * scale - offset - x1, rh = rois.scalar_f64(r * 4 + 3) * scale - offset - y1;
    if (!half_pixel) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    const int64_t gh = sr > 0 ? sr : static_cast<int64_t>(std::ceil(rh / static_cast<double>(oh)));
    const int64_t gw = sr > 0 ? sr : static_cast<int64_t>(std::ceil(rw / static_cast<double>(ow)));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t plane = (bi * c + ch) * h * w;
      for (int64_t py = 0; py < oh; ++py)
        for (int64_t px = 0; px < ow; ++px) {
          double acc = avg ? 0.0 : -INFINITY;
          bool any = false;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double yy = y1 + static_cast<double>(py) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
              double xx = x1 + static_cast<double>(px) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
              if (yy < -1.0 || yy > static_cast<double>(h) || xx < -1.0 || xx > static_cast<double>(w)) {
                if (!avg) { acc = std::max(acc, 0.0); any = true; }
                continue;  // contributes 0 to the average
              }
              yy = std::max(yy, 0.0);
              xx = std::max(xx, 0.0);
              auto yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx);
              int64_t yh, xh;
              if (yl >= h - 1) { yh = yl = h - 1; yy = static_cast<double>(yl); } else { yh = yl + 1; }
              if (xl >= w - 1) { xh = xl = w - 1; xx = static_cast<double>(xl); } else { xh = xl + 1; }
              const double ly = yy - static_cast<double>(yl), lx = xx - static_cast<double>(xl), hy = 1 - ly, hx = 1 - lx;
              const double v1 = hy * hx * x.scalar_f64(plane + yl * w + xl), v2 = hy * lx * x.scalar_f64(plane + yl * w + xh);
              const double v3 = ly * hx * x.scalar_f64(plane + yh * w + xl), v4 = ly * lx * x.scalar_f64(plane + yh * w + xh);
              if (avg) acc += v1 + v2 + v3 + v4;
              else acc = std::max({acc, v1, v2, v3, v4});  // as onnxruntime: max of weighted taps
              any = true;
            }
          store(*y, ((r * c + ch) * oh + py) * ow + px, avg ? acc / count : (any ? acc : 0.0));
        }
    }
  }
  return ok_status();
}

// ---- GridSample -----------------------------------------------------------------------------

double reflect(double v, double twice_lo, double twice_hi) {
  if (twice_lo == twice_hi) return 0;
  const double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
  v = std::fabs(v - lo);
  const double extra = std::fmod(v, span);
  const auto flips = static_cast<int64_t>(std::floor(v / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

struct Sampler {
  const Tensor* x;
  int64_t h, w, plane;
  int pad;  // 0 zeros, 1 border, 2 reflection
  bool align;

  // Applies the padding rule to a coordinate (bilinear / nearest).
  double pad_coord(double v, int64_t size) const {
    if (pad == 1) return std::clamp(v, 0.0, static_cast<double>(size - 1));
    if (pad == 2) {
      v = align ? reflect(v, 0, 2.0 * static_cast<double>(size - 1)) : reflect(v, -1, 2.0 * static_cast<double>(size) - 1);
      return std::clamp(v, 0.0, static_cast<double>(size - 1));
    }
    return v;
  }
  // Pixel value with out-of-range reads handled by the padding rule (bicubic taps).
  double pixel(int64_t yy, int64_t xx, bool pad_index) const {
    if (pad_index && pad != 0) {
      yy = static_cast<int64_t>(pad_coord(static_cast<double>(yy), h));
      xx = static_cast<int64_t>(pad_coord(static_cast<double>(xx), w));
    }
    if (yy < 0 || yy >= h || xx < 0 || xx >= w) return 0;
    return x->scalar_f64(plane + yy * w + xx);
  }
};

double cubic_weight(double t, int k) {  // taps at -1, 0, 1, 2 with a = -0.75
  const double a = -0.75;
  const double d = std::fabs(t - (k - 1));
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

Status grid_sample(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& grid = *ctx.input(1);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (grid.dim(0) != n) return ctx.error("input[1] (grid) batch ", grid.dim(0), " != input[0] batch ", n);
  const int64_t ho = grid.dim(1), wo = grid.dim(2);
  const std::string mode = ctx.node().attr_string("mode");
  const std::string pad = ctx.node().attr_string("padding_mode");
  const bool align = ctx.node().attr_int("align_corners") != 0;
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  auto unnormalize = [&](double v, int64_t size) {
    return align ? (v + 1) / 2 * static_cast<double>(size - 1) : ((v + 1) * static_cast<double>(size) - 1) / 2;
  };
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      Sampler s{&x, h, w, (b * c + ch) * h * w, pad == "zeros" ? 0 : pad == "border" ? 1 : 2, align};
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          const int64_t g = ((b * ho + i) * wo + j) * 2;
          double gx = unnormalize(grid.scalar_f64(g), w), gy = unnormalize(grid.scalar_f64(g + 1), h);
          double v = 0;
          if (mode == "bicubic") {
            const double fx = std::floor(gx), fy = std::floor(gy);
            for (int ky = 0; ky < 4; ++ky)
              for (int kx = 0; kx < 4; ++kx)
                v += cubic_weight(gy - fy, ky) * cubic_weight(gx - fx, kx) *
                     s.pixel(static_cast<int64_t>(fy) + ky - 1, static_cast<int64_t>(fx) + kx - 1, true);
          } else {
            gx = s.pad_coord(gx, w);
            gy = s.pad_coord(gy, h);
            if (mode == "nearest") {
              v = s.pixel(static_cast<int64_t>(std::nearbyint(gy)), static_cast<int64_t>(std::nearbyint(gx)), false);
            } else {
              const double fx = std::floor(gx), fy = std::floor(gy), lx = gx - fx, ly = gy - fy;
              const auto x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
              v = (1 - ly) * (1 - lx) * s.pixel(y0, x0, false) + (1 - ly) * lx * s.pixel(y0, x0 + 1, false) +
                  ly * (1 - lx) * s.pixel(y0 + 1, x0, false) + ly * lx * s.pixel(y0 + 1, x0 + 1, false);
            }
          }
          store(*y, ((b * c + ch) * ho + i) * wo + j, v);
        }
    }
  return ok_status();
}

}  // namespace

void register_detection_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("NonMaxSuppression") r.add_fn("NonMaxSuppression", {DType::kF32}, non_max_suppression);
  TSR_IF_SELECTED("RoiAlign") r.add_fn("RoiAlign", {DType::kF32, DType::kF64, DType::kF16}, roi_align);
  TSR_IF_SELECTED("GridSample") r.add_fn("GridSample", {DType::kF32, DType::kF64, DType::kF16}, grid_sample);
}

}  // namespace tsr::cpu
