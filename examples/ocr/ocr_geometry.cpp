#include "examples/ocr/ocr_geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tsr::ocr {
namespace {

double cross(Point o, Point a, Point b) {
  return (double(a.x) - o.x) * (double(b.y) - o.y) - (double(a.y) - o.y) * (double(b.x) - o.x);
}

double dist(Point a, Point b) { return std::hypot(double(a.x) - b.x, double(a.y) - b.y); }

}  // namespace

std::vector<Point> convex_hull(std::vector<Point> pts) {
  std::sort(pts.begin(), pts.end(), [](Point a, Point b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  pts.erase(std::unique(pts.begin(), pts.end(), [](Point a, Point b) { return a.x == b.x && a.y == b.y; }), pts.end());
  if (pts.size() < 3) return pts;
  std::vector<Point> hull(2 * pts.size());
  size_t k = 0;
  for (size_t i = 0; i < pts.size(); ++i) {  // lower chain
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  for (size_t i = pts.size() - 1, lower = k + 1; i-- > 0;) {  // upper chain
    while (k >= lower && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  hull.resize(k - 1);  // the last point repeats the first
  return hull;
}

Quad min_area_rect(const std::vector<Point>& hull, float* short_side) {
  if (hull.empty()) {
    *short_side = 0;
    return {};
  }
  if (hull.size() < 3) {
    const Point a = hull.front(), b = hull.back();
    *short_side = 0;
    return order_quad({a, b, b, a});
  }
  double best_area = std::numeric_limits<double>::infinity();
  Quad best{};
  const size_t n = hull.size();
  for (size_t i = 0; i < n; ++i) {
    const Point a = hull[i], b = hull[(i + 1) % n];
    const double len = dist(a, b);
    if (len == 0) continue;
    // The frame of this edge: u along it, v perpendicular; the rectangle spans the extremes.
    const double ux = (double(b.x) - a.x) / len, uy = (double(b.y) - a.y) / len;
    double umin = 0, umax = 0, vmin = 0, vmax = 0;
    for (const Point& p : hull) {
      const double dx = double(p.x) - a.x, dy = double(p.y) - a.y;
      const double u = dx * ux + dy * uy, v = -dx * uy + dy * ux;
      umin = std::min(umin, u), umax = std::max(umax, u), vmin = std::min(vmin, v), vmax = std::max(vmax, v);
    }
    const double area = (umax - umin) * (vmax - vmin);
    if (area < best_area) {
      best_area = area;
      auto at = [&](double u, double v) {
        return Point{static_cast<float>(a.x + u * ux - v * uy), static_cast<float>(a.y + u * uy + v * ux)};
      };
      best = {at(umin, vmin), at(umax, vmin), at(umax, vmax), at(umin, vmax)};
      *short_side = static_cast<float>(std::min(umax - umin, vmax - vmin));
    }
  }
  return order_quad(best);
}

Quad order_quad(std::array<Point, 4> p) {
  std::stable_sort(p.begin(), p.end(), [](Point a, Point b) { return a.x < b.x; });
  const Point tl = p[1].y > p[0].y ? p[0] : p[1], bl = p[1].y > p[0].y ? p[1] : p[0];
  const Point tr = p[3].y > p[2].y ? p[2] : p[3], br = p[3].y > p[2].y ? p[3] : p[2];
  return {tl, tr, br, bl};
}

Quad expand_rect(const Quad& r, float d) {
  // Unit vectors along the top edge (u) and the left edge downwards (v) of the rectangle.
  const double w = dist(r[0], r[1]), h = dist(r[0], r[3]);
  double ux = 1, uy = 0, vx = 0, vy = 1;
  if (w > 0) ux = (double(r[1].x) - r[0].x) / w, uy = (double(r[1].y) - r[0].y) / w;
  if (h > 0) {
    vx = (double(r[3].x) - r[0].x) / h, vy = (double(r[3].y) - r[0].y) / h;
  } else {
    vx = -uy, vy = ux;
  }
  if (w == 0) ux = vy, uy = -vx;
  auto move = [&](Point p, double su, double sv) {
    return Point{static_cast<float>(p.x + d * (su * ux + sv * vx)), static_cast<float>(p.y + d * (su * uy + sv * vy))};
  };
  return order_quad({move(r[0], -1, -1), move(r[1], 1, -1), move(r[2], 1, 1), move(r[3], -1, 1)});
}

double quad_area(const Quad& q) {
  double s = 0;
  for (int i = 0; i < 4; ++i) s += double(q[i].x) * q[(i + 1) % 4].y - double(q[(i + 1) % 4].x) * q[i].y;
  return std::abs(s) / 2;
}

double quad_perimeter(const Quad& q) {
  double s = 0;
  for (int i = 0; i < 4; ++i) s += dist(q[i], q[(i + 1) % 4]);
  return s;
}

bool inside_quad(const Quad& q, Point p) {
  bool pos = false, neg = false;
  for (int i = 0; i < 4; ++i) {
    const double c = cross(q[i], q[(i + 1) % 4], p);
    pos |= c > 1e-9;
    neg |= c < -1e-9;
  }
  return !(pos && neg);
}

bool rect_to_quad_homography(float w, float h, const Quad& q, std::array<double, 9>* out) {
  // Solve for h0..h7 in x' = (h0 x + h1 y + h2) / (h6 x + h7 y + 1), y' likewise with h3..h5,
  // from the four correspondences: an 8x8 system, Gaussian elimination with partial pivoting.
  const double src[4][2] = {{0, 0}, {w, 0}, {w, h}, {0, h}};
  double m[8][9];
  for (int i = 0; i < 4; ++i) {
    const double x = src[i][0], y = src[i][1], X = q[i].x, Y = q[i].y;
    const double r0[9] = {x, y, 1, 0, 0, 0, -x * X, -y * X, X};
    const double r1[9] = {0, 0, 0, x, y, 1, -x * Y, -y * Y, Y};
    std::copy(r0, r0 + 9, m[2 * i]);
    std::copy(r1, r1 + 9, m[2 * i + 1]);
  }
  for (int c = 0; c < 8; ++c) {
    int piv = c;
    for (int r = c + 1; r < 8; ++r)
      if (std::abs(m[r][c]) > std::abs(m[piv][c])) piv = r;
    if (std::abs(m[piv][c]) < 1e-12) return false;
    std::swap(m[c], m[piv]);
    for (int r = 0; r < 8; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (int k = c; k < 9; ++k) m[r][k] -= f * m[c][k];
    }
  }
  for (int i = 0; i < 8; ++i) (*out)[i] = m[i][8] / m[i][i];
  (*out)[8] = 1;
  return true;
}

}  // namespace tsr::ocr
