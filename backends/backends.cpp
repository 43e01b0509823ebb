// The explicit list of backends compiled into this build (DESIGN.md §2: no static
// self-registration). Each optional backend adds itself here under its CMake option.
#include "backends/cpu/cpu_backend.h"
#include "core/exec/backend.h"

namespace tsr::exec {

std::vector<std::string> available_backends() { return {"cpu"}; }

namespace {

// The build's static SIMD target must run on this CPU (see TSR_X86_64_LEVEL in CMakeLists.txt).
Status check_cpu_features() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
#if defined(__AVX512F__)
  if (!__builtin_cpu_supports("avx512f")) return unsupported("this build needs AVX-512 (x86-64-v4); rebuild with -DTSR_X86_64_LEVEL=v3 or lower");
#endif
#if defined(__AVX2__)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    return unsupported("this build needs AVX2 and FMA (x86-64-v3); rebuild with -DTSR_X86_64_LEVEL=v2 or v1");
#endif
#if defined(__SSE4_2__)
  if (!__builtin_cpu_supports("sse4.2")) return unsupported("this build needs SSE4.2 (x86-64-v2); rebuild with -DTSR_X86_64_LEVEL=v1");
#endif
#endif
  return ok_status();
}

}  // namespace

Expected<std::unique_ptr<Backend>> create_backend(std::string_view name) {
  if (name == "cpu") {
    TSR_RETURN_IF_ERROR(check_cpu_features());
    return std::unique_ptr<Backend>(new cpu::CpuBackend());
  }
  std::string list;
  for (const auto& b : available_backends()) list += str_cat(list.empty() ? "" : ", ", b);
  return not_found("no backend \"", name, "\" in this build (available: ", list, ")");
}

}  // namespace tsr::exec
