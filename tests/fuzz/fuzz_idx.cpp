// libFuzzer harness: the IDX reader (tools/train/idx.h, plain and gzip) on arbitrary bytes,
// written to a private temporary file because read_idx takes a path.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "tools/train/idx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/tsr_fuzz_idx_" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto t = tsr::train::read_idx(path);
  (void)t;
  std::remove(path.c_str());
  return 0;
}
