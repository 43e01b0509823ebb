// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
// 2014): a small, well-mixed generator whose output for a seed is the same on every platform,
// for reproducible random inputs (`tessera run --random-inputs`, the script language's randn).
// Not for cryptography. Not thread-safe: one generator per thread.
#pragma once

#include <cmath>
#include <cstdint>

namespace tsr {

struct SplitMix64 {
  uint64_t state = 0;

  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1) with 53 bits (never 0, so log() is finite).
  double uniform_open() { return (static_cast<double>(next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  // Uniform in [-1, 1) with 24 bits of resolution (exact in f32).
  float uniform_pm1_f32() { return static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f; }
  // Standard normal by Box-Muller (one of the pair).
  double normal() {
    const double u = uniform_open(), v = uniform_open();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
};

}  // namespace tsr
