// Compile-time unrolling for the register-blocked SIMD kernels (gemm_direct.cpp): the
// body sees its index as a constant, so arrays of accumulator vectors indexed by it stay in
// registers and a loop over a template-sized window has no trip count to test.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace tsr::cpu {

template <class F, size_t... I>
inline __attribute__((always_inline)) void unroll_impl(F&& f, std::index_sequence<I...>) {
  (f(std::integral_constant<size_t, I>{}), ...);
}

// Calls f(std::integral_constant<size_t, I>{}) for I = 0 .. N-1, in order.
template <size_t N, class F>
inline __attribute__((always_inline)) void unroll(F&& f) {
  unroll_impl(f, std::make_index_sequence<N>{});
}

}  // namespace tsr::cpu
