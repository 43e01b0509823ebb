// libFuzzer harness: tessera-ocr's image path (stb_image decode, the Resize op to 48 px high,
// normalization and padding) on arbitrary bytes. Any Status is a correct outcome; a result must
// be [1, 3, 48, W] with W in [320, 16384] and values in [-1, 1].
#include <cstdint>
#include <cstdlib>

#include "examples/ocr/ocr_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto x = tsr::ocr::preprocess_image(data, size, "fuzz.img");
  if (!x.ok()) return 0;
  if (x->rank() != 4 || x->dim(0) != 1 || x->dim(1) != 3 || x->dim(2) != tsr::ocr::kOcrHeight ||
      x->dim(3) < tsr::ocr::kOcrMinWidth || x->dim(3) > tsr::ocr::kOcrMaxWidth)
    std::abort();
  const float* p = x->data<float>();
  for (int64_t i = 0; i < x->numel(); ++i)
    if (!(p[i] >= -1.0f && p[i] <= 1.0f)) std::abort();
  return 0;
}
