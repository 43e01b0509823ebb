// The device tests' main: `[vulkan]` runs exit 77 (CTest: skipped) when this machine has no
// Vulkan device at all; every other failure, including a validation message, fails.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstring>
#include <iostream>

#include "core/exec/device.h"

int main(int argc, char** argv) {
  bool wants_vulkan = false;
  for (int i = 1; i < argc; ++i) wants_vulkan |= std::strstr(argv[i], "[vulkan]") != nullptr;
  if (wants_vulkan) {
    auto b = tsr::exec::create_device_backend("vulkan");
    if (!b.ok() && b.status().message().find("no Vulkan device") != std::string::npos) {
      std::cout << "SKIP: " << b.status().message() << "\n";
      return 77;
    }
    if (!b.ok()) {
      std::cerr << "vulkan backend: " << b.status().to_string() << "\n";
      return 1;
    }
    std::cout << "Vulkan device: " << (*b)->name() << "\n";
  }
  bool wants_cuda = false;
  for (int i = 1; i < argc; ++i) wants_cuda |= std::strstr(argv[i], "[cuda]") != nullptr;
  if (wants_cuda) {
    auto b = tsr::exec::create_device_backend("cuda");
    if (!b.ok() && b.status().message().find("no CUDA device") != std::string::npos) {
      std::cout << "SKIP: " << b.status().message() << "\n";
      return 77;
    }
    if (!b.ok()) {
      std::cerr << "cuda backend: " << b.status().to_string() << "\n";
      return 1;
    }
  }
  return Catch::Session().run(argc, argv);
}
