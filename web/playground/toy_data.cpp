#include "web/playground/toy_data.h"

#include <cmath>
#include <random>

namespace tsr::playground {

const std::vector<std::string>& toy_dataset_names() {
  static const std::vector<std::string> names = {"circles", "xor", "spiral", "gaussians"};
  return names;
}

Expected<ToyData> make_toy_data(const std::string& name, int64_t n, double noise, uint32_t seed) {
  if (n < 2 || n > 100000) return invalid_argument("toy data: ", n, " points (expected 2 .. 100000)");
  if (!(noise >= 0 && noise <= 1)) return invalid_argument("toy data: noise ", noise, " (expected 0 .. 1)");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  constexpr double kPi = 3.14159265358979323846;
  ToyData d;
  d.n = n;
  d.x.reserve(static_cast<size_t>(2 * n));
  d.y.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = i % 2;
    double a = 0, b = 0;
    if (name == "circles") {
      const double r = label == 0 ? 0.5 * std::sqrt(uni(rng)) : 0.8 + 0.4 * uni(rng);
      const double t = 2 * kPi * uni(rng);
      a = r * std::cos(t), b = r * std::sin(t);
    } else if (name == "xor") {
      a = 2 * uni(rng) - 1, b = 2 * uni(rng) - 1;
      // Keep a margin around the axes so the classes are separable at noise 0.
      a += a > 0 ? 0.05 : -0.05, b += b > 0 ? 0.05 : -0.05;
      if ((a * b > 0) != (label == 1)) b = -b;
    } else if (name == "spiral") {
      const double t = 0.1 + 0.9 * uni(rng);
      const double angle = 3 * kPi * t + (label == 1 ? kPi : 0);
      a = 1.2 * t * std::cos(angle), b = 1.2 * t * std::sin(angle);
    } else if (name == "gaussians") {
      const double c = label == 0 ? -0.6 : 0.6;
      a = c + 0.35 * gauss(rng), b = c + 0.35 * gauss(rng);
    } else {
      return invalid_argument("toy data: unknown set \"", name, "\" (expected circles, xor, spiral or gaussians)");
    }
    a += noise * gauss(rng), b += noise * gauss(rng);
    d.x.push_back(static_cast<float>(a));
    d.x.push_back(static_cast<float>(b));
    d.y.push_back(label);
  }
  return d;
}

}  // namespace tsr::playground
