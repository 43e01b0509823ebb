// The device tests' main: `[vulkan]` / `[cuda]` runs exit 77 (CTest: skipped) when this machine has no
// such device at all; every other failure, including a validation message, fails.

#include <cstring>
#include <iostream>

#include "core/exec/device.h"
#include "tests/catch/catch_run.h"

namespace {

// For a run that names `tag` ([vulkan], [cuda]): 77 when this machine has no such device (the
// backend's error contains `missing`), 1 when the backend fails otherwise, 0 to run the tests.
int probe_device(int argc, char** argv, const char* tag, const char* backend, const char* missing) {
  bool wanted = false;
  for (int i = 1; i < argc; ++i) wanted |= std::strstr(argv[i], tag) != nullptr;
  if (!wanted) return 0;
  auto b = tsr::exec::create_device_backend(backend);
  if (!b.ok() && b.status().message().find(missing) != std::string::npos) {
    std::cout << "SKIP: " << b.status().message() << "\n";
    return 77;
  }
  if (!b.ok()) {
    std::cerr << backend << " backend: " << b.status().to_string() << "\n";
    return 1;
  }
  std::cout << backend << " device: " << (*b)->name() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (int rc = probe_device(argc, argv, "[vulkan]", "vulkan", "no Vulkan device")) return rc;
  if (int rc = probe_device(argc, argv, "[cuda]", "cuda", "no CUDA device")) return rc;
  return tsr_catch_run(argc, argv);
}
