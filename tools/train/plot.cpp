#include "tools/train/plot.h"

#include <stb_easy_font.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tsr::train {
namespace {

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(static_cast<size_t>(w) * h * 3, 255) {}

  void set(int x, int y, std::array<uint8_t, 3> c) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    uint8_t* p = &px_[(static_cast<size_t>(y) * w_ + x) * 3];
    p[0] = c[0], p[1] = c[1], p[2] = c[2];
  }
  void rect(int x0, int y0, int x1, int y1, std::array<uint8_t, 3> c) {
    for (int y = std::max(0, y0); y < std::min(h_, y1); ++y)
      for (int x = std::max(0, x0); x < std::min(w_, x1); ++x) set(x, y, c);
  }
  // A 2-pixel-wide segment, sampled densely enough to leave no gaps.
  void line(double x0, double y0, double x1, double y1, std::array<uint8_t, 3> c) {
    const int steps = static_cast<int>(std::max(std::abs(x1 - x0), std::abs(y1 - y0)) * 2) + 1;
    for (int s = 0; s <= steps; ++s) {
      const double t = static_cast<double>(s) / steps;
      const int x = static_cast<int>(std::lround(x0 + t * (x1 - x0))), y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
      rect(x, y, x + 2, y + 2, c);
    }
  }
  // Text at (x, y) (top-left), scaled by an integer factor; returns its width in pixels.
  int text(int x, int y, const std::string& s, int scale = 1, std::array<uint8_t, 3> c = {0, 0, 0}) {
    // stb_easy_font emits quads of 4 vertices, 16 bytes each (x, y, z floats + a color).
    std::vector<char> buf(s.size() * 270 + 64);
    const int quads = stb_easy_font_print(0, 0, const_cast<char*>(s.c_str()), nullptr, buf.data(), static_cast<int>(buf.size()));
    for (int q = 0; q < quads; ++q) {
      const float* v0 = reinterpret_cast<const float*>(&buf[static_cast<size_t>(q) * 64]);
      const float* v2 = reinterpret_cast<const float*>(&buf[static_cast<size_t>(q) * 64 + 32]);
      rect(x + static_cast<int>(v0[0]) * scale, y + static_cast<int>(v0[1]) * scale, x + static_cast<int>(v2[0]) * scale,
           y + static_cast<int>(v2[1]) * scale, c);
    }
    return stb_easy_font_width(const_cast<char*>(s.c_str())) * scale;
  }
  bool write_png(const std::string& path) const {
    return stbi_write_png(path.c_str(), w_, h_, 3, px_.data(), w_ * 3) != 0;
  }

 private:
  int w_, h_;
  std::vector<uint8_t> px_;
};

std::string tick(double v) {
  char b[32];
  std::snprintf(b, sizeof b, std::abs(v) >= 1e4 || (v != 0 && std::abs(v) < 1e-2) ? "%.2e" : "%.4g", v);
  return b;
}

}  // namespace

Status write_line_plot_png(const std::string& path, const std::vector<Series>& series, const std::string& title,
                           const std::string& x_label, const std::string& y_label, int width, int height) {
  if (width < 200 || height < 150) return invalid_argument("plot size ", width, " x ", height, " (minimum 200 x 150)");
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const Series& s : series) {
    if (s.x.size() != s.y.size())
      return invalid_argument("plot series \"", s.name, "\": ", s.x.size(), " x values, ", s.y.size(), " y values");
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]), y0 = std::min(y0, s.y[i]), y1 = std::max(y1, s.y[i]);
    }
  }
  if (!(x0 <= x1)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // no finite point: empty axes
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1;
  const double pad = (y1 - y0) * 0.05;
  y0 -= pad, y1 += pad;

  Canvas c(width, height);
  const int left = 80, right = width - 20, top = 40, bottom = height - 50;
  const std::array<uint8_t, 3> axis{0, 0, 0}, grid{225, 225, 225};
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * (right - left); };
  auto py = [&](double y) { return bottom - (y - y0) / (y1 - y0) * (bottom - top); };
  for (int k = 0; k <= 4; ++k) {
    const double yv = y0 + (y1 - y0) * k / 4, xv = x0 + (x1 - x0) * k / 4;
    const int gy = static_cast<int>(py(yv)), gx = static_cast<int>(px(xv));
    c.rect(left, gy, right, gy + 1, grid);
    c.rect(gx, top, gx + 1, bottom, grid);
    const std::string ys = tick(yv), xs = tick(xv);
    c.text(left - 8 - static_cast<int>(ys.size()) * 6, gy - 4, ys);
    c.text(gx - static_cast<int>(xs.size()) * 3, bottom + 8, xs);
  }
  c.rect(left, top, left + 1, bottom, axis);
  c.rect(left, bottom, right, bottom + 1, axis);
  c.text(left, 12, title, 2);
  c.text((left + right) / 2 - static_cast<int>(x_label.size()) * 3, bottom + 28, x_label);
  c.text(8, top - 16, y_label);
  int legend_y = top + 8;
  for (const Series& s : series) {
    bool have = false;
    double lx = 0, ly = 0;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      const double X = px(s.x[i]), Y = py(s.y[i]);
      if (have) c.line(lx, ly, X, Y, s.rgb);
      else c.rect(static_cast<int>(X), static_cast<int>(Y), static_cast<int>(X) + 2, static_cast<int>(Y) + 2, s.rgb);
      lx = X, ly = Y, have = true;
    }
    c.rect(right - 150, legend_y + 2, right - 135, legend_y + 5, s.rgb);
    c.text(right - 130, legend_y, s.name);
    legend_y += 14;
  }
  if (!c.write_png(path)) return not_found(path, ": cannot write the PNG file");
  return ok_status();
}

}  // namespace tsr::train
