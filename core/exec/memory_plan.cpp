#include "core/exec/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace tsr::exec {

MemoryPlan plan_greedy_by_size(const std::vector<BufferLifetime>& buffers, size_t alignment) {
  const size_t n = buffers.size();
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  const auto rounded = [&](size_t bytes) { return (bytes + alignment - 1) / alignment * alignment; };
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; ties by first use, so equal sizes stack in execution order.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;  // indices already given an offset
  std::vector<std::pair<size_t, size_t>> busy;  // [begin, end) of placed buffers live meanwhile
  for (size_t i : order) {
    const BufferLifetime& b = buffers[i];
    busy.clear();
    for (size_t j : placed) {
      const BufferLifetime& o = buffers[j];
      if (o.last < b.first || b.last < o.first) continue;  // never live together
      busy.emplace_back(plan.offsets[j], plan.offsets[j] + rounded(o.bytes));
    }
    std::sort(busy.begin(), busy.end());
    const size_t need = rounded(b.bytes);
    size_t offset = 0;  // the lowest gap that fits
    for (const auto& [begin, end] : busy) {
      if (begin >= offset + need) break;
      offset = std::max(offset, end);
    }
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + need);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace tsr::exec
