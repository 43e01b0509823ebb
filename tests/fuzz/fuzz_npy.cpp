// libFuzzer harness: the .npy reader (tsr::io::parse_npy) on arbitrary bytes, and a round trip
// of what it accepts: serialize_npy must write it and parse_npy read it back identically.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t = tsr::io::parse_npy(data, size, "fuzz.npy");
  if (!t.ok()) return 0;
  auto bytes = tsr::io::serialize_npy(*t);
  if (!bytes.ok()) return 0;  // e.g. a dtype the writer does not support
  auto back = tsr::io::parse_npy(bytes->data(), bytes->size(), "round trip");
  if (!back.ok() || back->dtype() != t->dtype() || back->shape() != t->shape() || back->nbytes() != t->nbytes())
    std::abort();  // the writer and the reader disagree
  if (t->dtype() == tsr::DType::kString) {
    // Elements compare by value: the bytes of two std::string objects differ even when their
    // text is equal (small strings point into themselves).
    for (int64_t i = 0; i < t->numel(); ++i)
      if (back->data<std::string>()[i] != t->data<std::string>()[i]) std::abort();
  } else if (t->nbytes() && std::memcmp(back->raw(), t->raw(), t->nbytes()) != 0) {
    std::abort();
  }
  return 0;
}
