// The explicit list of backends compiled into this build (DESIGN.md §2: no static
// self-registration). Each optional backend adds itself here under its CMake option.
#include "backends/cpu/cpu_backend.h"
#include "core/exec/backend.h"

namespace tsr::exec {

std::vector<std::string> available_backends() { return {"cpu"}; }

Expected<std::unique_ptr<Backend>> create_backend(std::string_view name) {
  if (name == "cpu") return std::unique_ptr<Backend>(new cpu::CpuBackend());
  std::string list;
  for (const auto& b : available_backends()) list += str_cat(list.empty() ? "" : ", ", b);
  return not_found("no backend \"", name, "\" in this build (available: ", list, ")");
}

}  // namespace tsr::exec
