// exp_nonpositive (backends/cpu/kernels/f32_math-inl.h: softmax's exp in the attention kernels,
// GELU's erf) against double-precision exp, on the static SIMD target of the test build (the
// kernels compile the same code once per target).
#include <catch2/catch.hpp>

#include <hwy/highway.h>

#include <cmath>
#include <vector>

#include "backends/cpu/kernels/f32_math-inl.h"

namespace tsr::cpu::HWY_NAMESPACE {
namespace {

TEST_CASE("exp_nonpositive: within 1.2e-7 of exp on [-86, 0], exactly 1 at 0", "[f32_math]") {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  // 2^20 points spread over the range, the ends, and the values near 0 where r is tiny.
  std::vector<float> xs;
  for (int i = 0; i <= (1 << 20); ++i) xs.push_back(-86.0f * static_cast<float>(i) / float(1 << 20));
  for (float x = -1e-3f; x < -1e-30f; x *= 0.99f) xs.push_back(x);
  xs.push_back(-0.0f);
  while (xs.size() % lanes != 0) xs.push_back(0.0f);
  std::vector<float> ys(xs.size());
  for (size_t i = 0; i < xs.size(); i += lanes)
    hn::StoreU(exp_nonpositive(d, hn::LoadU(d, xs.data() + i)), d, ys.data() + i);
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = std::exp(static_cast<double>(xs[i]));
    const double rel = std::fabs(ys[i] - want) / want;
    if (rel > worst) {
      worst = rel;
      worst_x = xs[i];
    }
    if (xs[i] == 0.0f) REQUIRE(ys[i] == 1.0f);
  }
  INFO("worst relative error " << worst << " at " << worst_x);
  CHECK(worst < 1.2e-7);
}

}  // namespace
}  // namespace tsr::cpu::HWY_NAMESPACE
