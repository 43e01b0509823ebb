// Backend: the interface every execution backend implements (DESIGN.md §9).
//
// API version 1 covers what the CPU backend needs: identity, placement queries and per-node
// kernel creation. Device buffers, host<->device copies and streams are added for Vulkan/CUDA
// with a version bump; a backend built against an older version keeps working because new
// methods get defaults here.
//
// Backends are created through create_backend(name), defined in backends/backends.cpp, which
// lists the backends compiled into this build explicitly (no static self-registration).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/exec/kernel.h"

namespace tsr::exec {

class Backend {
 public:
  static constexpr int kApiVersion = 1;
  virtual ~Backend() = default;

  // Short stable name: "cpu", "vulkan", "cuda".
  virtual std::string_view name() const = 0;
  // Placement: whether this backend has a kernel for the node with these input types.
  // Default: false.
  virtual bool supports(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const {
    (void)node; (void)inputs;
    return false;
  }
  // Creates the node's kernel. kUnsupported (naming the op and dtype) if there is none.
  virtual Expected<std::unique_ptr<Kernel>> create_kernel(const KernelInit& init) = 0;
  // The dtypes this backend supports for `op` (for `tessera ops`); empty if the op is missing.
  virtual std::vector<DType> kernel_dtypes(std::string_view op) const = 0;
  // Called once on each thread that will run this backend's kernels for a Session (its pool's
  // workers and the thread creating it) before any run: per-thread buffers the kernels keep are
  // sized here, so that runs do not allocate them (issue 12). Must be thread-safe. Default:
  // nothing.
  virtual void prepare_thread() {}
};

// Creates a backend by name ("cpu"); kNotFound lists the backends in this build.
Expected<std::unique_ptr<Backend>> create_backend(std::string_view name);
// Names of the backends compiled into this build.
std::vector<std::string> available_backends();
// One line naming the SIMD target the CPU kernels run with on this machine and the targets
// compiled in, e.g. "cpu SIMD: AVX3 (compiled: AVX3 AVX2 SSE4; runtime dispatch)".
std::string cpu_simd_description();

}  // namespace tsr::exec
