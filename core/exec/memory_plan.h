// Static memory planning: byte offsets in one arena for buffers whose lifetimes are known.
//
// Greedy by size, the strategy of TFLite's ArenaPlanner (kGreedyBySize, after Pisarchyk & Lee,
// "Efficient Memory Management for Deep Neural Net Inference", 2020) and close to onnxruntime's
// allocation planner: buffers are placed largest first, each at the lowest offset where it
// overlaps no already placed buffer that is live at the same time. Two buffers share bytes only
// when their lifetimes are disjoint. The arena is the highest end offset.
//
// Cost: O(n^2) in the number of buffers (a few thousand at most per graph), once per plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tsr::exec {

struct BufferLifetime {
  size_t bytes = 0;
  // Live from the start of step `first` to the end of step `last` (first <= last): written by
  // step `first`, last read by step `last`.
  int32_t first = 0, last = 0;
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // parallel to the buffers; multiples of the alignment
  size_t arena_bytes = 0;
};

// Offsets for `buffers` (alignment: a power of two; every buffer starts on a multiple of it).
MemoryPlan plan_greedy_by_size(const std::vector<BufferLifetime>& buffers, size_t alignment = 64);

}  // namespace tsr::exec
