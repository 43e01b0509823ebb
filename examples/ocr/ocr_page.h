// Whole-page OCR (tessera-ocr --page): detect text boxes, straighten each into a line crop, turn
// lines the direction classifier finds upside down, recognize each line; PaddleOCR's TextSystem
// pipeline with PP-OCRv4 det + ch_ppocr_mobile_v2.0_cls + PP-OCRv4 rec, through tsr::Session.
//
//   det:  det_input -> det model -> db_postprocess -> sort_reading_order  (ocr_detect.h)
//   crop: crop_quad per box grown by crop_margin                           (ocr_crop.h)
//   cls:  line_input(crop, 192) -> cls model -> rotate180 when "180" scores above cls_thresh
//   rec:  line_input(crop, rec_input_width) -> rec model -> ctc_decode    (ocr_recognize.h)
// Lines recognized with confidence below drop_score are left out (PaddleOCR's drop_score, 0.5).
// Lines run one at a time (batch 1), so a line's result does not depend on its neighbours.
//
// Errors: a model that fails or gives an unexpected output fails the page (kInvalidArgument /
// the session's code, with the stage named); a degenerate box is skipped, not an error.
// Thread safety: a PageReader runs one page at a time (its Sessions are not re-entrant).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "examples/ocr/ocr_detect.h"
#include "examples/ocr/ocr_image.h"
#include "examples/ocr/ocr_recognize.h"
#include "tessera/session.h"

namespace tsr::ocr {

struct PageOptions {
  DetOptions det;
  // Each crop is taken from its box grown by this fraction of the box's height on every side.
  // PaddleOCR crops the box as detected (0); those boxes hug the glyphs, and the recognizer then
  // often runs Latin words together ("CORNERMARKET"): a little background around the line gives
  // the spaces back (README.md, section OCR, has the measurements).
  float crop_margin = 0.15f;
  float cls_thresh = 0.9f;  // turn a line when "180" scores above this
  float drop_score = 0.5f;  // leave out lines recognized with a lower confidence
};

struct PageLine {
  Quad quad;                  // page pixels, top-left first, clockwise on screen
  float box_score = 0;        // detector's mean probability inside the box
  std::string text;
  double confidence = 0;      // recognizer's mean probability of the kept characters
  bool turned = false;        // the classifier found it upside down and it was turned
};

// Milliseconds per stage (wall clock): det = preprocessing + the det model; post = DB
// post-processing + reading order; crop; cls and rec = preprocessing + model, over all lines.
struct PageTimings {
  double det_ms = 0, post_ms = 0, crop_ms = 0, cls_ms = 0, rec_ms = 0;
  double total() const { return det_ms + post_ms + crop_ms + cls_ms + rec_ms; }
};

struct PageResult {
  std::vector<PageLine> lines;  // reading order
  int boxes = 0;                // boxes the detector found (before drop_score)
  int det_width = 0, det_height = 0;  // the detector input's size
  PageTimings timings;
};

class PageReader {
 public:
  // `cls` may be null (no direction classifier). The sessions must outlive the reader.
  PageReader(Session& det, Session* cls, Session& rec, std::vector<std::string> keys, PageOptions options = {})
      : det_(det), cls_(cls), rec_(rec), keys_(std::move(keys)), options_(options) {}

  Expected<PageResult> read(const Image& page);

 private:
  Session& det_;
  Session* cls_;
  Session& rec_;
  std::vector<std::string> keys_;
  PageOptions options_;
};

}  // namespace tsr::ocr
