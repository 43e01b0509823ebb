// The text detector's side of tessera-ocr --page: PP-OCRv4 det (a DB, "differentiable
// binarization", network) input preparation and the post-processing of its probability map into
// text boxes, as PaddleOCR's DetResizeForTest / NormalizeImage / DBPostProcess / sorted_boxes do.
//
// Input (det_input): the page is resized so that its longer side is at most limit_side (never
// enlarged), then each side is rounded to the nearest multiple of 32 (at least 32), bilinear;
// channels in BGR order normalised with ImageNet's mean/std as PaddleOCR does on cv2's BGR image:
// plane c = (x/255 - mean[c]) / std[c] with mean (0.485, 0.456, 0.406), std (0.229, 0.224, 0.225).
//
// Post-processing (db_postprocess) of the map prob [1, 1, H, W] (f32 in [0, 1]):
//   1. binarize at `thresh`; 8-connected regions (cv2.findContours' outer contours);
//   2. per region, the minimum-area rectangle of its pixels' convex hull; regions whose rectangle
//      has a short side < min_size are dropped;
//   3. score = mean probability over the map pixels inside that rectangle; < box_thresh dropped;
//   4. unclip: the rectangle grows by area * unclip_ratio / perimeter on every side (pyclipper's
//      round-join offset, then the minimum-area rectangle, is exactly that for a rectangle);
//      short side < min_size + 2 dropped;
//   5. scaled from the map to the page, rounded and clipped to it; boxes of width or height <= 3
//      page pixels dropped.
// At most max_candidates regions (the largest first) are considered.
//
// Reading order (sort_reading_order): the box corners are first turned by minus the median text
// angle (a slanted photo reads like an upright page), then a recursive XY-cut runs over the
// boxes' bounding rectangles. A block is cut at its widest whitespace gap: at a vertical gutter
// (a column break) when it is at least 1.5 median line heights wide, wider than every horizontal
// gap, and the boxes on both sides are text lines (median length >= 4 line heights; narrower ones,
// like a receipt's prices, are fields of a table read row by row), else between rows; a block
// without such gaps (one row, or rows that still overlap) is read top to bottom with PaddleOCR's
// sorted_boxes rule (top-left corners within 10 px vertically: one row, left to right).
//
// Errors: kInvalidArgument for a map that is not f32 [1, 1, H, W] or options out of range.
#pragma once

#include <vector>

#include "core/base/status.h"
#include "core/tensor/tensor.h"
#include "examples/ocr/ocr_geometry.h"
#include "examples/ocr/ocr_image.h"

namespace tsr::ocr {

struct DetOptions {
  int limit_side = 960;      // longest side of the detector input, pixels (multiple of 32, >= 32)
  float thresh = 0.3f;       // binarization threshold of the probability map
  float box_thresh = 0.6f;   // minimum mean probability inside a box
  float unclip_ratio = 1.5f; // how far a box grows: area * ratio / perimeter
  int max_candidates = 1000; // regions considered at most
  int min_size = 3;          // smallest short side of a region's rectangle, map pixels
};

struct DetInput {
  Tensor x;        // f32 [1, 3, height, width]
  int width = 0;   // the resized page, multiples of 32
  int height = 0;
};

struct TextBox {
  Quad quad;          // page pixels, top-left first, clockwise on screen
  float score = 0;    // mean detector probability inside the box (before unclip)
};

// The detector's input for `page` (see above). kInvalidArgument for limit_side < 32.
Expected<DetInput> det_input(const Image& page, int limit_side);

// The boxes of the map `prob` [1, 1, H, W], in page coordinates (page_w x page_h), unordered.
Expected<std::vector<TextBox>> db_postprocess(const Tensor& prob, int page_w, int page_h, const DetOptions& opts);

// Puts `boxes` in reading order (see above).
void sort_reading_order(std::vector<TextBox>& boxes);

}  // namespace tsr::ocr
