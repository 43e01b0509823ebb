// 2-D toy classification data for the Train panel (TensorFlow Playground's sets): two classes,
// points roughly inside [-1.5, 1.5]^2, drawn from std::mt19937(seed) so a seed gives the same set
// on every platform's libc++/libstdc++ up to the distributions' implementations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tsr::playground {

struct ToyData {
  std::vector<float> x;    // [n, 2] row-major
  std::vector<int64_t> y;  // [n] class 0 or 1
  int64_t n = 0;
};

// "circles" (inner disc vs outer ring), "xor" (sign of x0 * x1), "spiral" (two interleaved
// arms), "gaussians" (two blobs).
const std::vector<std::string>& toy_dataset_names();
// Errors: an unknown name (listing the known ones), n outside [2, 100000], noise outside [0, 1].
Expected<ToyData> make_toy_data(const std::string& name, int64_t n, double noise, uint32_t seed);

}  // namespace tsr::playground
