// The byte lookup behind tessera QLinearLookup (backends/cpu/kernels/qlookup.cpp).
#pragma once

#include <cstdint>

namespace tsr::cpu {

// y[i] = table[x[i]] for i < n (table: 256 bytes; x and y may be the same buffer). The best loop
// the CPU runs up to `max_level` (for tests of each path): 2 AVX-512 VBMI, 1 AVX2, 0 portable.
void qlookup_bytes(const uint8_t* x, int64_t n, const uint8_t* table, uint8_t* y, int max_level = 2);

}  // namespace tsr::cpu
