// Read-only file mappings whose pages a kernel may drop from the process's resident set once it
// has copied what it needs (e.g. Conv weights packed for the GEMM or transformed for Winograd):
// the .tsr loader maps the file (core/io/tsr_load.cpp) and its constants are used in place, so
// every weight byte a kernel read while packing would otherwise stay resident beside the packed
// copy for the session's life (ResNet-50: ~100 MB).
#pragma once

#include <cstddef>

namespace tsr {

// Registers [p, p + n) as a PROT_READ, MAP_PRIVATE mapping of a file: its pages are never written,
// so dropping them loses nothing. Unregister before munmap.
void register_file_mapping(const void* p, size_t n);
void unregister_file_mapping(const void* p);

// Drops the whole pages inside [p, p + n) from the resident set when the range lies in one
// registered mapping (madvise MADV_DONTNEED, Linux): a later read faults them back in from the page
// cache, with the file's bytes, so callers may still read the range. Anywhere else (heap memory,
// other platforms) it does nothing. Returns the bytes dropped.
size_t release_mapped_pages(const void* p, size_t n);

}  // namespace tsr
