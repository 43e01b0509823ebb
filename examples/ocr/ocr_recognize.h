// The recognizer's and the direction classifier's outputs, read as PaddleOCR does.
//
// Recognition (ctc_decode, PaddleOCR CTCLabelDecode, greedy): argmax per time step, merge
// repeats, drop the blank class 0; class k in 1..N is line k of the keys file, class N+1 is a
// space (use_space_char). The confidence is the mean of the kept steps' probabilities (the model
// ends in a Softmax); 0 for an empty line.
//
// Direction (read_direction, PaddleOCR ClsPostProcess): ch_ppocr_mobile_v2.0_cls gives softmax
// scores [1, 2] for the labels "0" and "180"; the argmax and its score.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/tensor/tensor.h"

namespace tsr::ocr {

// The character list of `path`, one per line ("\r\n" accepted), with the space appended.
// kNotFound when it cannot be read, kInvalidArgument when it is empty.
Expected<std::vector<std::string>> load_keys(const std::string& path);

struct Decoded {
  std::string text;
  double confidence = 0;
};

// Greedy CTC decode of probs f32 [1, T, C] with C = keys.size() + 1 (the blank); kInvalidArgument
// otherwise.
Expected<Decoded> ctc_decode(const Tensor& probs, const std::vector<std::string>& keys);

struct Direction {
  bool upside_down = false;  // the label is "180"
  float score = 0;           // its softmax score
};

// The classifier's answer from its output f32 [1, 2]; kInvalidArgument for any other shape.
Expected<Direction> read_direction(const Tensor& scores);

}  // namespace tsr::ocr
