// FastMath names and the CPU check (core/base/fast_math.h).
#include "core/base/fast_math.h"

namespace tsr {

const char* fast_math_name(FastMath m) { return m == FastMath::kBf16 ? "bf16" : "none"; }

bool parse_fast_math(std::string_view name, FastMath* out) {
  if (name == "none") *out = FastMath::kNone;
  else if (name == "bf16") *out = FastMath::kBf16;
  else return false;
  return true;
}

bool fast_math_supported(FastMath m) {
  if (m == FastMath::kNone) return true;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__EMSCRIPTEN__)
  // __builtin_cpu_init: the check may run before libgcc's constructor fills the CPU model.
  static const bool bf16 = (__builtin_cpu_init(), __builtin_cpu_supports("avx512bf16") &&
                                                      __builtin_cpu_supports("avx512bw") &&
                                                      __builtin_cpu_supports("avx512vl"));
  return bf16;
#else
  return false;
#endif
}

}  // namespace tsr
