// Plane geometry for the text detector's post-processing and the line crops (tessera-ocr --page).
//
// Coordinates are pixels as floats, x to the right and y down, in the image the points come from.
// A Quad is a quadrilateral given clockwise on screen from its top-left corner: top-left,
// top-right, bottom-right, bottom-left (PaddleOCR's box order).
// Thread safety: plain functions on values.
#pragma once

#include <array>
#include <vector>

namespace tsr::ocr {

struct Point {
  float x = 0;
  float y = 0;
};

using Quad = std::array<Point, 4>;

// The convex hull of `pts` (Andrew's monotone chain), counter-clockwise in a y-up frame, without
// collinear points; fewer than 3 distinct points come back as they are (deduplicated).
std::vector<Point> convex_hull(std::vector<Point> pts);

// The minimum-area enclosing rectangle of a convex polygon `hull` (as convex_hull gives), in the
// order order_quad gives; `short_side` receives its shorter side length. One side of the optimal
// rectangle lies on a hull edge (the rotating-calipers theorem), so every edge direction is tried.
// A hull of 1 or 2 points gives a degenerate rectangle (short side 0).
Quad min_area_rect(const std::vector<Point>& hull, float* short_side);

// The four corners of a rectangle in PaddleOCR's get_mini_boxes order: the two leftmost points
// give top-left/bottom-left (smaller y on top), the two others top-right/bottom-right.
Quad order_quad(std::array<Point, 4> pts);

// The rectangle `rect` (corners in order) grown by `d` on every side: what offsetting a rectangle
// by d with round joins and taking the minimum-area rectangle of the result gives.
Quad expand_rect(const Quad& rect, float d);

double quad_area(const Quad& q);
double quad_perimeter(const Quad& q);

// Whether p is inside the convex quad q or on its border.
bool inside_quad(const Quad& q, Point p);

// The 3x3 homography (row-major, h[8] = 1) taking the corners (0,0), (w,0), (w,h), (0,h) to q's
// corners in order; false when q is degenerate (three corners on a line).
bool rect_to_quad_homography(float w, float h, const Quad& q, std::array<double, 9>* out);

}  // namespace tsr::ocr
