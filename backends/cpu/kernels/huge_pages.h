// Transparent huge pages for the CPU kernels' packed constant weights (Linux).
//
// A batch-1 CNN streams most of its packed weights from DRAM on every run (ResNet-50: ~100 MB
// against a 32 MiB L3), a few K steps per cache line of each tile. On 4 KiB pages that is a TLB
// miss every 4 KiB, and the prefetches the tiles issue ahead of their reads wait on page walks:
// Winograd's 36 weight matrices of a 512-channel conv (37.7 MB) streamed at 9 GB/s on 4 KiB pages
// and at 17.5 GB/s on 2 MiB ones. Where transparent huge pages are "madvise" only (the default of
// many distributions), heap memory gets them only when advised.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#endif

namespace tsr::cpu {

// Advises the whole 2 MiB pages inside [p, p + bytes) to be transparent huge pages: for a buffer
// written once when a kernel is created (packed weights). `populated`: the pages were written
// already, so (Linux 6.1+, MADV_COLLAPSE) they are copied into huge pages now (ResNet-50's load:
// ~0.01 s more system time, within its noise);
// else (memory reserved, not yet touched) the first writes fault huge pages in directly. Ranges
// holding no whole 2 MiB page, other platforms and kernels without the advice are left as they
// are; nothing is reported (the buffer is the same either way, only its pages differ). Only for
// memory the caller owns for the buffer's life (a vector's data): the advice outlives it.
inline void advise_huge_pages(const void* p, size_t bytes, bool populated = true) {
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (p == nullptr || e <= b) return;
  // MADV_COLLAPSE ignores the system's setting: none where the administrator chose "[never]".
  static const bool thp_allowed = [] {
    char buf[128] = {};
    if (FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) {
      const size_t got = std::fread(buf, 1, sizeof(buf) - 1, f);
      std::fclose(f);
      buf[got] = '\0';
    }
    return std::strstr(buf, "[never]") == nullptr;
  }();
  if (!thp_allowed) return;
  void* start = reinterpret_cast<void*>(b);
  if (madvise(start, e - b, MADV_HUGEPAGE) != 0) return;
#ifndef MADV_COLLAPSE
  constexpr int MADV_COLLAPSE = 25;  // linux/mman.h since 6.1; older kernels answer EINVAL
#endif
  if (populated) (void)madvise(start, e - b, MADV_COLLAPSE);
#else
  (void)p;
  (void)bytes;
  (void)populated;
#endif
}

}  // namespace tsr::cpu
