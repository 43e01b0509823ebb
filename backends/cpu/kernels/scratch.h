// Per-thread scratch of the CPU kernels (thread_local vectors): grown to what a call needs, never
// shrunk or cleared, so steady-state runs reuse the same memory without allocating or faulting
// in fresh pages. Callers write every element they later read.
#pragma once

#include <cstdint>
#include <vector>

namespace tsr::cpu {

template <typename T>
T* grow_scratch(std::vector<T>& buf, int64_t n) {
  if (buf.size() < static_cast<size_t>(n)) buf.resize(static_cast<size_t>(n));
  return buf.data();
}

}  // namespace tsr::cpu
