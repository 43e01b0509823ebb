// Shared helpers of the libFuzzer harnesses (tests/fuzz): deterministic small inputs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/ir/graph.h"
#include "core/tensor/tensor.h"

namespace tsr::fuzz {

// Loop/Scan iterations and script host-loop iterations allowed per run: enough for every seed,
// small enough that a runaway loop ends in milliseconds instead of looking like a hang.
constexpr int64_t kMaxLoopIterations = 10000;
// Graph inputs with more elements than this are not fed (the run is skipped).
constexpr int64_t kMaxInputElements = int64_t{1} << 16;

// FNV-1a of the bytes: seeds the input values, so a reproducer gives the same run.
uint64_t hash(const uint8_t* data, size_t size);

// A tensor for the graph input `info`: dynamic dims (-1) become 2, an undefined dtype f32;
// values are small (floats in [-2, 2], integers in [-1, 3], bools, strings "a".."d") from the
// splitmix64 stream `*seed`. kInvalidArgument when it would exceed kMaxInputElements.
Expected<Tensor> small_input(const ir::TensorInfo& info, uint64_t* seed);

}  // namespace tsr::fuzz
