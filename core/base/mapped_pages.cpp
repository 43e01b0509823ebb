#include "core/base/mapped_pages.h"

#include <cstdint>
#include <mutex>
#include <vector>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#include <unistd.h>
#define TSR_DROP_PAGES 1
#endif

namespace tsr {

namespace {

struct Range {
  uintptr_t begin, end;
};

// Few mappings live at once (one per loaded .tsr), so a vector under a mutex; the mutex is also
// held across madvise so that a mapping cannot be unmapped meanwhile.
std::mutex& mappings_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Range>& mappings() {
  static std::vector<Range> v;
  return v;
}

}  // namespace

void register_file_mapping(const void* p, size_t n) {
  const auto b = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mappings_mutex());
  mappings().push_back({b, b + n});
}

void unregister_file_mapping(const void* p) {
  const auto b = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mappings_mutex());
  auto& v = mappings();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].begin == b) {
      v[i] = v.back();
      v.pop_back();
      return;
    }
}

size_t release_mapped_pages(const void* p, size_t n) {
#ifdef TSR_DROP_PAGES
  const auto b = reinterpret_cast<uintptr_t>(p);
  const auto e = b + n;
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t pb = (b + page - 1) / page * page, pe = e / page * page;  // whole pages only
  if (n == 0 || pe <= pb) return 0;
  std::lock_guard<std::mutex> lock(mappings_mutex());
  for (const Range& r : mappings())
    if (b >= r.begin && e <= r.end) {
      if (madvise(reinterpret_cast<void*>(pb), pe - pb, MADV_DONTNEED) != 0) return 0;
      return pe - pb;
    }
#else
  (void)p;
  (void)n;
#endif
  return 0;
}

}  // namespace tsr
