// The null device: the skeleton of a device backend (Backend API version 2, core/exec/device.h)
// that needs no hardware. Its "device memory" is host memory it allocates itself, its copies are
// memcpy, and its device kernels run the host backend's kernels on those buffers. It exists to
// exercise placement, copy steps, device views and the Plan's device path in tests on any
// machine, and as the template a new device backend (CUDA, WebGPU) starts from.
//
// Ops: the list given at construction; create_backend("null") reads TSR_NULL_DEVICE_OPS (comma
// separated) or uses a default set of common CNN ops. Only f32 tensors are placed there; every
// non-f32 input of a supported node is read on the host (shapes, axes, indices).
//
// Thread safety: one Session at a time, like every backend.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "backends/device_common/device_base.h"
#include "core/base/thread_pool.h"
#include "core/exec/device.h"

namespace tsr::null_device {

class NullDevice final : public device_common::DeviceBase {
  static_assert(exec::DeviceBackend::kApiVersion == 2, "written against the version 2 contract");

 public:
  NullDevice(std::unique_ptr<exec::Backend> host, std::set<std::string, std::less<>> ops);
  std::string_view name() const override { return "null"; }
  std::vector<DType> kernel_dtypes(std::string_view op) const override {
    return ops_.count(op) ? std::vector<DType>{DType::kF32} : std::vector<DType>{};
  }
  exec::DeviceSupport device_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const override;
  Expected<std::unique_ptr<exec::DeviceKernel>> create_device_kernel(const exec::KernelInit& init) override;
  Expected<std::shared_ptr<exec::DeviceBuffer>> allocate(size_t bytes) override;

  // Bytes currently allocated (tests check that a run frees what it allocated).
  size_t live_bytes() const { return *live_bytes_; }
  ThreadPool& pool() { return pool_; }

 private:
  // memcpy, the null device's "transfers".
  Status write(const exec::DeviceTensor& dst, const void* src, size_t n) override;
  Status read(const exec::DeviceTensor& src, void* dst, size_t n) override;
  Status copy_bytes(const exec::DeviceTensor& src, const exec::DeviceTensor& dst, size_t n) override;

  std::unique_ptr<exec::Backend> host_;
  std::set<std::string, std::less<>> ops_;
  ThreadPool pool_{1};
  std::shared_ptr<size_t> live_bytes_ = std::make_shared<size_t>(0);
};

// The default op set (also what TSR_NULL_DEVICE_OPS replaces).
std::set<std::string, std::less<>> default_null_device_ops();

}  // namespace tsr::null_device
