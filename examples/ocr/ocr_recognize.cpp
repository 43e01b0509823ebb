#include "examples/ocr/ocr_recognize.h"

#include <fstream>

namespace tsr::ocr {

Expected<std::vector<std::string>> load_keys(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path, ": cannot open the keys file");
  std::vector<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    keys.push_back(line);
  }
  if (keys.empty()) return invalid_argument(path, ": the keys file is empty");
  keys.push_back(" ");  // PaddleOCR's use_space_char: the last class
  return keys;
}

Expected<Decoded> ctc_decode(const Tensor& probs, const std::vector<std::string>& keys) {
  if (probs.dtype() != DType::kF32 || probs.rank() != 3 || probs.dim(0) != 1)
    return invalid_argument("unexpected recognizer output ", dtype_name(probs.dtype()), " ", shape_str(probs.shape()),
                            ", expected f32 [1, T, C]");
  const int64_t steps = probs.dim(1), classes = probs.dim(2);
  if (classes != static_cast<int64_t>(keys.size()) + 1)
    return invalid_argument("the model has ", classes, " classes but the keys file gives ", keys.size() - 1,
                            " characters + space + blank = ", keys.size() + 1);
  Decoded d;
  double conf_sum = 0;
  int64_t kept = 0, prev = -1;
  const float* p = probs.data<float>();
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = p + t * classes;
    int64_t best = 0;
    for (int64_t k = 1; k < classes; ++k)
      if (row[k] > row[best]) best = k;
    if (best != 0 && best != prev) {
      d.text += keys[static_cast<size_t>(best - 1)];
      conf_sum += row[best];
      ++kept;
    }
    prev = best;
  }
  d.confidence = kept ? conf_sum / static_cast<double>(kept) : 0;
  return d;
}

Expected<Direction> read_direction(const Tensor& scores) {
  if (scores.dtype() != DType::kF32 || scores.numel() != 2 || scores.rank() != 2)
    return invalid_argument("unexpected classifier output ", dtype_name(scores.dtype()), " ", shape_str(scores.shape()),
                            ", expected f32 [1, 2]");
  const float* s = scores.data<float>();
  return Direction{s[1] > s[0], s[1] > s[0] ? s[1] : s[0]};
}

}  // namespace tsr::ocr
