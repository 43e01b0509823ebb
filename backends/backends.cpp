// The explicit list of backends compiled into this build (DESIGN.md §2: no static
// self-registration). Each optional backend adds itself here under its CMake option.
#include <cstdlib>
#include <set>
#include <sstream>

#include "backends/cpu/cpu_backend.h"
// The null device is a test device (placement and device paths without a GPU); minimal runtimes
// (mobile/selective) leave it out with TSR_HAVE_NULL_DEVICE=0.
#ifndef TSR_HAVE_NULL_DEVICE
#define TSR_HAVE_NULL_DEVICE 1
#endif
#if TSR_HAVE_NULL_DEVICE
#include "backends/null/null_device.h"
#endif
#include "core/exec/backend.h"
#include "core/exec/device.h"
#if TSR_HAVE_VULKAN
#include "backends/vulkan/vulkan_backend.h"
#endif
#if TSR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

namespace tsr::exec {

std::vector<std::string> available_backends() {
  std::vector<std::string> v = {"cpu"};
  for (auto& d : available_device_backends()) v.push_back(std::move(d));
  return v;
}

std::string cpu_simd_description() {
  const std::string compiled = cpu::compiled_simd_targets();
  return str_cat("cpu SIMD: ", cpu::simd_target(), " (compiled: ", compiled,
                 compiled.find(' ') == std::string::npos ? "; static" : "; runtime dispatch", ")");
}

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
#if defined(__AES__) && defined(__PCLMUL__)
  if (!__builtin_cpu_supports("aes") || !__builtin_cpu_supports("pclmul"))
    return unsupported("this build needs AES-NI and PCLMULQDQ (Highway's SSE4 target); rebuild with -DTSR_X86_64_LEVEL=v1");
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
  if (name == "null" || name == "vulkan" || name == "cuda") {
    TSR_ASSIGN_OR_RETURN(auto dev, create_device_backend(name));
    return std::unique_ptr<Backend>(std::move(dev));
  }
  std::string list;
  for (const auto& b : available_backends()) list += str_cat(list.empty() ? "" : ", ", b);
  return not_found("no backend \"", name, "\" in this build (available: ", list, ")");
}

std::vector<std::string> available_device_backends() {
  // Preferred first: CUDA (a discrete NVIDIA GPU) before Vulkan (which may be a CPU rasterizer).
  std::vector<std::string> v;
#if TSR_HAVE_CUDA
  v.push_back("cuda");
#endif
#if TSR_HAVE_VULKAN
  v.push_back("vulkan");
#endif
#if TSR_HAVE_NULL_DEVICE
  v.push_back("null");
#endif
  return v;
}

Expected<std::unique_ptr<DeviceBackend>> create_device_backend(std::string_view name) {
#if TSR_HAVE_NULL_DEVICE
  if (name == "null") {
    // The skeleton device (backends/null): TSR_NULL_DEVICE_OPS="Conv,Relu" picks its ops.
    TSR_RETURN_IF_ERROR(check_cpu_features());
    auto ops = null_device::default_null_device_ops();
    if (const char* env = std::getenv("TSR_NULL_DEVICE_OPS")) {
      ops.clear();
      std::stringstream ss(env);
      for (std::string op; std::getline(ss, op, ',');)
        if (!op.empty()) ops.insert(op);
    }
    return std::unique_ptr<DeviceBackend>(new null_device::NullDevice(std::make_unique<cpu::CpuBackend>(), std::move(ops)));
  }
#endif
#if TSR_HAVE_VULKAN
  if (name == "vulkan") {
    TSR_ASSIGN_OR_RETURN(auto vk, vulkan::VulkanBackend::create());
    return std::unique_ptr<DeviceBackend>(std::move(vk));
  }
#else
  if (name == "vulkan") return backend_error("no Vulkan device: this build has no Vulkan backend (configure with -DTSR_VULKAN=ON)");
#endif
#if TSR_HAVE_CUDA
  if (name == "cuda") {
    TSR_ASSIGN_OR_RETURN(auto cu, cuda::CudaBackend::create());
    return std::unique_ptr<DeviceBackend>(std::move(cu));
  }
#else
  if (name == "cuda") return backend_error("no CUDA device: this build has no CUDA backend (configure with -DTSR_CUDA=ON)");
#endif
  std::string list;
  for (const auto& b : available_device_backends()) list += str_cat(list.empty() ? "" : ", ", b);
  return not_found("no device backend \"", name, "\" in this build (available: ", list, ")");
}

}  // namespace tsr::exec
