// The f32 activation epilogue (epilogue.h) on the best SIMD target this CPU supports, for kernels
// compiled for the static target only (linalg.cpp's FusedGemm, qlinear.cpp's fused
// DynamicQuantizeMatMul): there the epilogue would run on the baseline's vectors (AVX2 on an
// x86-64-v3 build), and a Gelu or Silu over a transformer MLP's outputs costs twice as much on
// AVX2 as on AVX-512. A CPU kernel helper (cmake/register.cmake): not compiled in size-first
// builds (kSizeFirstKernels), whose callers apply the static target's epilogue instead.
#pragma once

#include <cstdint>

#include "core/base/thread_pool.h"
#include "core/ops/fused_activation.h"

namespace tsr::cpu {

// y[r * ld + j] = act(y[r * ld + j]) for r < rows, j < cols (`a` as epilogue.h applies it: the
// activation, its affine, its bounds; kNone with no affine or bounds does nothing). The rows are
// split over `pool` (may be null) from 2^14 outputs for the transcendental activations, 2^16 for
// the others.
void apply_epilogue_best(ThreadPool* pool, const ops::ActivationSpec& a, float* y, int64_t rows, int64_t cols,
                         int64_t ld);

}  // namespace tsr::cpu
