// The byte lookup behind tessera QLinearLookup (backends/cpu/kernels/qlookup.cpp).
#pragma once

#include <cstdint>

namespace tsr::cpu {

// y[i] = table[x[i]] for i < n (table: 256 bytes; x and y may be the same buffer). `simd` false
// takes the portable loop even where the CPU has AVX-512 VBMI (for tests of both paths).
void qlookup_bytes(const uint8_t* x, int64_t n, const uint8_t* table, uint8_t* y, bool simd = true);

}  // namespace tsr::cpu
