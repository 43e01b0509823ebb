// The broadcast-stride rule of every backend (CPU, Vulkan, CUDA kernels read broadcast inputs
// through it), next to shape_strides in tensor.h. Header-only: backends include it freely
// (DESIGN.md §2: backends depend on base and tensor).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/tensor/tensor.h"

namespace tsr {

// Element strides of a dense tensor of shape `s` read as a broadcast tensor of rank `rank` >=
// s.size() (numpy rules, `s` right-aligned): 0 along the missing leading dims and the dims of
// size 1, s's row-major strides elsewhere.
inline Shape broadcast_strides(const Shape& s, size_t rank) {
  Shape st(rank, 0);
  int64_t acc = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    const size_t src = s.size() - 1 - d, dst = rank - 1 - d;
    st[dst] = s[src] == 1 ? 0 : acc;
    acc *= s[src];
  }
  return st;
}

}  // namespace tsr
