#include "examples/ocr/ocr_page.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "examples/ocr/ocr_crop.h"

namespace tsr::ocr {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Runs a one-input, one-output model.
Expected<Tensor> run_one(Session& s, Tensor x, const char* stage) {
  auto out = s.run(std::vector<Tensor>{std::move(x)});
  if (!out.ok()) return out.status().with_context(stage);
  if (out->empty()) return invalid_argument(stage, ": the model has no outputs");
  return std::move(out->front());
}

}  // namespace

Expected<PageResult> PageReader::read(const Image& page) {
  PageResult res;
  auto t = Clock::now();
  TSR_ASSIGN_OR_RETURN(DetInput in, det_input(page, options_.det.limit_side));
  res.det_width = in.width;
  res.det_height = in.height;
  TSR_ASSIGN_OR_RETURN(Tensor prob, run_one(det_, std::move(in.x), "text detector"));
  res.timings.det_ms = ms_since(t);

  t = Clock::now();
  auto boxes = db_postprocess(prob, page.width, page.height, options_.det);
  if (!boxes.ok()) return boxes.status().with_context("text detector");
  sort_reading_order(*boxes);
  res.boxes = static_cast<int>(boxes->size());
  res.timings.post_ms = ms_since(t);

  for (const TextBox& box : *boxes) {
    t = Clock::now();
    const Quad& q = box.quad;
    const float height = std::min(std::hypot(q[3].x - q[0].x, q[3].y - q[0].y), std::hypot(q[1].x - q[0].x, q[1].y - q[0].y));
    auto crop = crop_quad(page, options_.crop_margin > 0 ? expand_rect(q, options_.crop_margin * height) : q);
    res.timings.crop_ms += ms_since(t);
    if (!crop.ok()) continue;  // a degenerate box holds no text
    PageLine line;
    line.quad = box.quad;
    line.box_score = box.score;
    if (cls_) {
      t = Clock::now();
      TSR_ASSIGN_OR_RETURN(Tensor x, line_input(*crop, 192));
      TSR_ASSIGN_OR_RETURN(Tensor scores, run_one(*cls_, std::move(x), "direction classifier"));
      auto dir = read_direction(scores);
      if (!dir.ok()) return dir.status();
      if (dir->upside_down && dir->score > options_.cls_thresh) {
        *crop = rotate180(*crop);
        line.turned = true;
      }
      res.timings.cls_ms += ms_since(t);
    }
    t = Clock::now();
    TSR_ASSIGN_OR_RETURN(Tensor x, line_input(*crop, rec_input_width(*crop)));
    TSR_ASSIGN_OR_RETURN(Tensor probs, run_one(rec_, std::move(x), "recognizer"));
    auto d = ctc_decode(probs, keys_);
    if (!d.ok()) return d.status();
    res.timings.rec_ms += ms_since(t);
    if (d->confidence < options_.drop_score) continue;
    line.text = std::move(d->text);
    line.confidence = d->confidence;
    res.lines.push_back(std::move(line));
  }
  return res;
}

}  // namespace tsr::ocr
