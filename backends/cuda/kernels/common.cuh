// Helpers of the .cu files (device side only; not part of the launchers' interface).
#pragma once

#include <cstdint>

#include "backends/cuda/kernels/launch.h"

namespace tsr::cuda::k {

constexpr int kBlock = 256;

// Blocks for a grid-stride loop over n elements (each kernel loops, so the cap is only a bound).
inline unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 262144 ? 262144 : b));
}

#define TSR_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(blockDim.x) * gridDim.x)

// The input offsets of output element i under `st` (inputs 0..k-1).
template <int K>
__device__ inline void strided_offsets(const Strided& st, int64_t i, int64_t (&off)[K]) {
  for (int j = 0; j < K; ++j) off[j] = 0;
  for (int d = st.rank - 1; d >= 0; --d) {
    const int64_t c = i % st.shape[d];
    i /= st.shape[d];
    for (int j = 0; j < K; ++j) off[j] += c * st.s[j][d];
  }
}

inline cudaError_t launched() { return cudaGetLastError(); }

}  // namespace tsr::cuda::k
