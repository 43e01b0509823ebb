#include "examples/ocr/ocr_detect.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace tsr::ocr {
namespace {

constexpr float kMean[3] = {0.485f, 0.456f, 0.406f};
constexpr float kStd[3] = {0.229f, 0.224f, 0.225f};
// Reading order: a column gutter is at least kColumnGap line heights wide, and the lines on both
// sides of it are kColumnLine line heights long (median).
constexpr float kColumnGap = 1.5f;
constexpr float kColumnLine = 4.0f;

// One 8-connected region of the binarized map: per row, its leftmost and rightmost pixel (all
// the convex hull needs) and its pixel count.
struct Region {
  std::vector<Point> extremes;
  int64_t pixels = 0;
};

std::vector<Region> find_regions(const float* prob, int w, int h, float thresh) {
  std::vector<uint8_t> seen(static_cast<size_t>(w) * h, 0);
  std::vector<Region> regions;
  std::vector<int32_t> stack;
  std::vector<std::pair<int, int>> rows;  // per row of the region's bounding box: min x, max x
  for (int y0 = 0; y0 < h; ++y0)
    for (int x0 = 0; x0 < w; ++x0) {
      const size_t i0 = static_cast<size_t>(y0) * w + x0;
      if (seen[i0] || !(prob[i0] > thresh)) continue;
      Region r;
      int ymin = y0, ymax = y0;
      rows.assign(1, {x0, x0});
      seen[i0] = 1;
      stack.assign(1, static_cast<int32_t>(i0));
      while (!stack.empty()) {
        const int32_t i = stack.back();
        stack.pop_back();
        ++r.pixels;
        const int x = i % w, y = i / w;
        if (y > ymax) {
          rows.resize(static_cast<size_t>(y - ymin + 1), {x, x});
          ymax = y;
        }  // rows above y0 are impossible: the scan found the region at its first pixel
        auto& row = rows[static_cast<size_t>(y - ymin)];
        row.first = std::min(row.first, x), row.second = std::max(row.second, x);
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int nx = x + dx, ny = y + dy;
            if ((dx == 0 && dy == 0) || nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
            const size_t j = static_cast<size_t>(ny) * w + nx;
            if (seen[j] || !(prob[j] > thresh)) continue;
            seen[j] = 1;
            stack.push_back(static_cast<int32_t>(j));
          }
      }
      for (size_t k = 0; k < rows.size(); ++k) {
        if (rows[k].first > rows[k].second) continue;
        const float y = static_cast<float>(ymin + static_cast<int>(k));
        r.extremes.push_back({static_cast<float>(rows[k].first), y});
        if (rows[k].second != rows[k].first) r.extremes.push_back({static_cast<float>(rows[k].second), y});
      }
      regions.push_back(std::move(r));
    }
  return regions;
}

// Mean of the map over the pixels (integer centres) inside q (PaddleOCR's box_score_fast).
float box_score(const float* prob, int w, int h, const Quad& q) {
  float fx0 = q[0].x, fx1 = q[0].x, fy0 = q[0].y, fy1 = q[0].y;
  for (const Point& p : q) fx0 = std::min(fx0, p.x), fx1 = std::max(fx1, p.x), fy0 = std::min(fy0, p.y), fy1 = std::max(fy1, p.y);
  const int x0 = std::clamp(static_cast<int>(std::floor(fx0)), 0, w - 1), x1 = std::clamp(static_cast<int>(std::ceil(fx1)), 0, w - 1);
  const int y0 = std::clamp(static_cast<int>(std::floor(fy0)), 0, h - 1), y1 = std::clamp(static_cast<int>(std::ceil(fy1)), 0, h - 1);
  double sum = 0;
  int64_t n = 0;
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x)
      if (inside_quad(q, {static_cast<float>(x), static_cast<float>(y)})) sum += prob[static_cast<size_t>(y) * w + x], ++n;
  return n ? static_cast<float>(sum / static_cast<double>(n)) : 0.0f;
}

struct Item {
  float x0, y0, x1, y1;
  size_t index;
};

// The widest gap between the union of the intervals [lo(i), hi(i)] (0 when they overlap into one):
// its width and its middle.
template <typename Lo, typename Hi>
std::pair<float, float> widest_gap(std::vector<Item>& items, Lo lo, Hi hi) {
  std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) { return lo(a) < lo(b); });
  float reach = hi(items[0]), best = 0, at = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    if (lo(items[i]) > reach && lo(items[i]) - reach > best) best = lo(items[i]) - reach, at = (lo(items[i]) + reach) / 2;
    reach = std::max(reach, hi(items[i]));
  }
  return {best, at};
}

float median_width(std::vector<Item> items) {
  std::vector<float> w;
  for (const Item& it : items) w.push_back(it.x1 - it.x0);
  std::nth_element(w.begin(), w.begin() + w.size() / 2, w.end());
  return w[w.size() / 2];
}

void xy_cut(std::vector<Item> items, float line_h, const std::vector<TextBox>& boxes, std::vector<size_t>& order) {
  if (items.size() <= 1) {
    for (const Item& it : items) order.push_back(it.index);
    return;
  }
  const auto [gx, cx] = widest_gap(items, [](const Item& i) { return i.x0; }, [](const Item& i) { return i.x1; });
  const auto [gy, cy] = widest_gap(items, [](const Item& i) { return i.y0; }, [](const Item& i) { return i.y1; });
  std::vector<Item> first, second;
  if (gx >= kColumnGap * line_h && gx > gy) {
    for (const Item& it : items) ((it.x0 + it.x1) / 2 < cx ? first : second).push_back(it);
    // Columns of text, or a table's fields (a receipt's prices)? Only text columns, whose lines
    // are long on both sides, are read one after the other; fields are read row by row.
    if (median_width(first) < kColumnLine * line_h || median_width(second) < kColumnLine * line_h) {
      first.clear(), second.clear();
      if (gy > 0) {
        for (const Item& it : items) ((it.y0 + it.y1) / 2 < cy ? first : second).push_back(it);
      }
    }
  } else if (gy > 0) {
    for (const Item& it : items) ((it.y0 + it.y1) / 2 < cy ? first : second).push_back(it);
  }
  if (first.empty() || second.empty()) {
    // PaddleOCR's sorted_boxes: by top-left corner (y, then x); neighbours whose top-left corners
    // are within 10 px vertically count as one row and go left to right.
    std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
      const Point pa = boxes[a.index].quad[0], pb = boxes[b.index].quad[0];
      return pa.y < pb.y || (pa.y == pb.y && pa.x < pb.x);
    });
    for (size_t i = 0; i + 1 < items.size(); ++i)
      for (size_t j = i + 1; j-- > 0;) {
        const Point a = boxes[items[j].index].quad[0], b = boxes[items[j + 1].index].quad[0];
        if (std::abs(b.y - a.y) < 10 && b.x < a.x) {
          std::swap(items[j], items[j + 1]);
        } else {
          break;
        }
      }
    for (const Item& it : items) order.push_back(it.index);
    return;
  }
  xy_cut(std::move(first), line_h, boxes, order);
  xy_cut(std::move(second), line_h, boxes, order);
}

}  // namespace

Expected<DetInput> det_input(const Image& page, int limit_side) {
  if (limit_side < 32) return invalid_argument("det_input: limit_side ", limit_side, " is below 32");
  const double ratio = std::max(page.width, page.height) > limit_side
                           ? static_cast<double>(limit_side) / std::max(page.width, page.height)
                           : 1.0;
  auto round32 = [&](int side) {
    const int scaled = static_cast<int>(side * ratio);
    return std::max(static_cast<int>(std::lround(scaled / 32.0)) * 32, 32);
  };
  DetInput in;
  in.width = round32(page.width);
  in.height = round32(page.height);
  TSR_ASSIGN_OR_RETURN(Image resized, resize_image(page, in.width, in.height));
  TSR_ASSIGN_OR_RETURN(in.x, Tensor::zeros(DType::kF32, {1, 3, in.height, in.width}));
  float* dst = in.x.mut_data<float>();
  const size_t plane = static_cast<size_t>(in.width) * in.height;
  for (size_t i = 0; i < plane; ++i)
    for (int c = 0; c < 3; ++c)  // BGR: plane 0 is blue (rgb[2])
      dst[c * plane + i] = (resized.rgb[i * 3 + 2 - c] / 255.0f - kMean[c]) / kStd[c];
  return in;
}

Expected<std::vector<TextBox>> db_postprocess(const Tensor& prob, int page_w, int page_h, const DetOptions& opts) {
  if (prob.dtype() != DType::kF32 || prob.rank() != 4 || prob.dim(0) != 1 || prob.dim(1) != 1 || prob.dim(2) < 1 ||
      prob.dim(3) < 1)
    return invalid_argument("the detector gave ", dtype_name(prob.dtype()), " ", shape_str(prob.shape()),
                            ", expected f32 [1, 1, H, W]");
  if (page_w < 1 || page_h < 1 || opts.max_candidates < 1 || opts.min_size < 0 || !(opts.unclip_ratio > 0))
    return invalid_argument("db_postprocess: bad options or a ", page_w, " x ", page_h, " page");
  const int w = static_cast<int>(prob.dim(3)), h = static_cast<int>(prob.dim(2));
  const float* p = prob.data<float>();
  std::vector<Region> regions = find_regions(p, w, h, opts.thresh);
  if (regions.size() > static_cast<size_t>(opts.max_candidates)) {
    std::partial_sort(regions.begin(), regions.begin() + opts.max_candidates, regions.end(),
                      [](const Region& a, const Region& b) { return a.pixels > b.pixels; });
    regions.resize(static_cast<size_t>(opts.max_candidates));
  }
  std::vector<TextBox> boxes;
  const float sx = static_cast<float>(page_w) / w, sy = static_cast<float>(page_h) / h;
  for (const Region& r : regions) {
    float short_side = 0;
    const Quad rect = min_area_rect(convex_hull(r.extremes), &short_side);
    if (short_side < opts.min_size) continue;
    const float score = box_score(p, w, h, rect);
    if (score < opts.box_thresh) continue;
    const double perimeter = quad_perimeter(rect);
    const float d = static_cast<float>(quad_area(rect) * opts.unclip_ratio / perimeter);
    const Quad grown = expand_rect(rect, d);
    if (short_side + 2 * d < opts.min_size + 2) continue;
    TextBox b;
    b.score = score;
    for (int k = 0; k < 4; ++k)
      b.quad[k] = {std::clamp(std::round(grown[k].x * sx), 0.0f, static_cast<float>(page_w - 1)),
                   std::clamp(std::round(grown[k].y * sy), 0.0f, static_cast<float>(page_h - 1))};
    b.quad = order_quad({b.quad[0], b.quad[1], b.quad[2], b.quad[3]});
    const float bw = std::hypot(b.quad[1].x - b.quad[0].x, b.quad[1].y - b.quad[0].y);
    const float bh = std::hypot(b.quad[3].x - b.quad[0].x, b.quad[3].y - b.quad[0].y);
    if (bw <= 3 || bh <= 3) continue;
    boxes.push_back(b);
  }
  return boxes;
}

void sort_reading_order(std::vector<TextBox>& boxes) {
  if (boxes.size() < 2) return;
  // Deskew first: the boxes' corners turned by minus the median text angle, so that the rows of a
  // page photographed at a slant separate again (their upright bounding boxes would overlap).
  std::vector<float> angles, heights;
  for (const TextBox& b : boxes) {
    angles.push_back(std::atan2(b.quad[1].y - b.quad[0].y, b.quad[1].x - b.quad[0].x));
    // The line height: the box's shorter side (its text runs along the longer one).
    const float a = std::hypot(b.quad[1].x - b.quad[0].x, b.quad[1].y - b.quad[0].y);
    const float c = std::hypot(b.quad[3].x - b.quad[0].x, b.quad[3].y - b.quad[0].y);
    heights.push_back(std::min(a, c));
  }
  const size_t mid = boxes.size() / 2;
  std::nth_element(angles.begin(), angles.begin() + mid, angles.end());
  std::nth_element(heights.begin(), heights.begin() + mid, heights.end());
  const float ca = std::cos(angles[mid]), sa = std::sin(angles[mid]);
  std::vector<TextBox> upright = boxes;
  std::vector<Item> items;
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (Point& p : upright[i].quad) p = {p.x * ca + p.y * sa, -p.x * sa + p.y * ca};
    const Quad& q = upright[i].quad;
    Item it{q[0].x, q[0].y, q[0].x, q[0].y, i};
    for (const Point& p : q)
      it.x0 = std::min(it.x0, p.x), it.x1 = std::max(it.x1, p.x), it.y0 = std::min(it.y0, p.y), it.y1 = std::max(it.y1, p.y);
    items.push_back(it);
  }
  std::vector<size_t> order;
  xy_cut(std::move(items), heights[mid], upright, order);
  std::vector<TextBox> sorted;
  sorted.reserve(boxes.size());
  for (size_t i : order) sorted.push_back(boxes[i]);
  boxes = std::move(sorted);
}

}  // namespace tsr::ocr
