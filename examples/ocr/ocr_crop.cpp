#include "examples/ocr/ocr_crop.h"

#include <algorithm>
#include <cmath>

namespace tsr::ocr {

Expected<Image> crop_quad(const Image& page, const Quad& q) {
  auto len = [](Point a, Point b) { return std::hypot(double(a.x) - b.x, double(a.y) - b.y); };
  const int w = static_cast<int>(std::max(len(q[0], q[1]), len(q[3], q[2])));
  const int h = static_cast<int>(std::max(len(q[0], q[3]), len(q[1], q[2])));
  std::array<double, 9> m{};
  if (w < 1 || h < 1 || !rect_to_quad_homography(static_cast<float>(w), static_cast<float>(h), q, &m))
    return invalid_argument("crop_quad: degenerate box (", q[0].x, ",", q[0].y, ") (", q[1].x, ",", q[1].y, ") (", q[2].x,
                            ",", q[2].y, ") (", q[3].x, ",", q[3].y, ")");
  Image out;
  out.width = w;
  out.height = h;
  out.rgb.resize(static_cast<size_t>(w) * h * 3);
  const int pw = page.width, ph = page.height;
  auto px = [&](int x, int y, int c) {  // border replicated
    x = std::clamp(x, 0, pw - 1), y = std::clamp(y, 0, ph - 1);
    return static_cast<float>(page.rgb[(static_cast<size_t>(y) * pw + x) * 3 + c]);
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double den = m[6] * x + m[7] * y + m[8];
      const double sx = (m[0] * x + m[1] * y + m[2]) / den, sy = (m[3] * x + m[4] * y + m[5]) / den;
      const double fx = std::floor(sx), fy = std::floor(sy);
      const float ax = static_cast<float>(sx - fx), ay = static_cast<float>(sy - fy);
      // Far outside the page (a wild homography) is clamped to the border like any other pixel.
      const int x0 = static_cast<int>(std::clamp(fx, -1.0, double(pw))), y0 = static_cast<int>(std::clamp(fy, -1.0, double(ph)));
      uint8_t* o = &out.rgb[(static_cast<size_t>(y) * w + x) * 3];
      for (int c = 0; c < 3; ++c) {
        const float top = px(x0, y0, c) * (1 - ax) + px(x0 + 1, y0, c) * ax;
        const float bottom = px(x0, y0 + 1, c) * (1 - ax) + px(x0 + 1, y0 + 1, c) * ax;
        o[c] = static_cast<uint8_t>(std::clamp(std::nearbyint(top * (1 - ay) + bottom * ay), 0.0f, 255.0f));
      }
    }
  if (h >= 1.5 * w) {  // np.rot90: counter-clockwise, out(x, y) = in(w - 1 - y, x)
    Image rot;
    rot.width = h;
    rot.height = w;
    rot.rgb.resize(out.rgb.size());
    for (int y = 0; y < rot.height; ++y)
      for (int x = 0; x < rot.width; ++x)
        std::copy_n(&out.rgb[(static_cast<size_t>(x) * w + (w - 1 - y)) * 3], 3, &rot.rgb[(static_cast<size_t>(y) * h + x) * 3]);
    return rot;
  }
  return out;
}

Image rotate180(const Image& img) {
  Image out = img;
  const size_t n = static_cast<size_t>(img.width) * img.height;
  for (size_t i = 0; i < n; ++i) std::copy_n(&img.rgb[(n - 1 - i) * 3], 3, &out.rgb[i * 3]);
  return out;
}

}  // namespace tsr::ocr
