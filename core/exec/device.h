// The device half of the backend contract (DESIGN.md §9): DeviceBackend, API version 2.
//
// A *device* backend (Vulkan, CUDA, WebGPU) keeps values in its own memory. It is an exec::Backend
// (backend.h: name, kernel listing) that also implements the four groups of methods below; the
// host backend (CPU) implements none of them. Placement (core/passes/placement.h) splits a graph
// between the host backend and one DeviceBackend:
//
//   buffers   allocate(bytes) -> shared DeviceBuffer; freed when the last DeviceTensor drops it.
//   copies    upload(host -> device), download(device -> host), copy(device -> device).
//   kernels   device_support(node) for placement, create_device_kernel(init) once per Plan;
//             DeviceKernel::record appends the node's work to the backend's stream.
//   stream    work is recorded in order into one stream; flush() submits what was recorded,
//             synchronize() waits for everything submitted. download() synchronizes itself.
//
// Ordering rule (what makes buffer reuse safe): everything recorded on one backend executes in
// recording order, each dispatch/copy seeing the complete results of all earlier ones (the backend
// inserts the barriers). So a buffer freed after the last recorded use may be handed out again at
// once: its next user is recorded later and therefore runs later. Host memory given to upload()
// may be reused as soon as upload() returns (the backend stages it).
//
// Threading: a device backend is used by one Session from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/exec/backend.h"
#include "core/ir/graph.h"
#include "core/ops/op_def.h"
#include "core/tensor/tensor.h"

namespace tsr::exec {

class DeviceBackend;

// A block of device memory. Backends derive from it; the executor only holds and passes it.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  // Size in bytes (at least what was asked for).
  virtual size_t size() const = 0;
};

// A dense row-major tensor in device memory: `byte_offset` into `buffer`, dtype and shape. Copies
// share the buffer (Reshape-style views are DeviceTensors with another shape and the same buffer).
struct DeviceTensor {
  std::shared_ptr<DeviceBuffer> buffer;
  size_t byte_offset = 0;
  DType dtype = DType::kUndefined;
  Shape shape;

  bool defined() const { return buffer != nullptr; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
};

// What placement needs to know about one node on a device backend.
struct DeviceSupport {
  bool supported = false;
  // Bit k set: input k is read on the host (shapes, axes, scales: e.g. Reshape's input 1). The
  // executor then gives the kernel that input as a host Tensor, downloading it if needed. Inputs
  // past the 32nd (variadic ops such as optimizer updates) are always device inputs.
  uint32_t host_inputs = 0;
};

// Arguments of one DeviceKernel::record call. Inputs are parallel to node.inputs: device_input(k)
// is set for device-resident inputs, host_input(k) for the host_inputs bits and for constants
// (which also have a device copy, uploaded once per Plan). Omitted optional inputs give null.
class DeviceKernelContext {
 public:
  DeviceKernelContext(DeviceBackend& backend, const ir::Node& node, const std::string& place,
                      const std::vector<const DeviceTensor*>& dinputs, const std::vector<const Tensor*>& hinputs,
                      const std::vector<ops::ValueType>& output_types, std::vector<DeviceTensor>& outputs)
      : backend_(backend), node_(node), place_(place), dinputs_(dinputs), hinputs_(hinputs),
        output_types_(output_types), outputs_(outputs) {}

  DeviceBackend& backend() { return backend_; }
  const ir::Node& node() const { return node_; }
  const std::string& place() const { return place_; }
  size_t num_inputs() const { return dinputs_.size(); }
  const DeviceTensor* device_input(size_t k) const { return k < dinputs_.size() ? dinputs_[k] : nullptr; }
  const Tensor* host_input(size_t k) const { return k < hinputs_.size() ? hinputs_[k] : nullptr; }
  size_t num_outputs() const { return outputs_.size(); }
  // The output's type inferred from the input shapes (always fully known for device nodes).
  const ops::ValueType& output_type(size_t i) const { return output_types_.at(i); }
  const std::vector<ops::ValueType>& output_types() const { return output_types_; }
  // Allocates output i in device memory with its inferred dtype and shape.
  Expected<DeviceTensor*> alloc_output(size_t i);
  // Sets output i to an existing device tensor (a view sharing an input's buffer).
  void set_output(size_t i, DeviceTensor t) { outputs_.at(i) = std::move(t); }

  template <typename... A> Status error(const A&... a) const { return invalid_argument(place_, ": ", a...); }

 private:
  DeviceBackend& backend_;
  const ir::Node& node_;
  const std::string& place_;
  const std::vector<const DeviceTensor*>& dinputs_;
  const std::vector<const Tensor*>& hinputs_;
  const std::vector<ops::ValueType>& output_types_;
  std::vector<DeviceTensor>& outputs_;
};

// A node's device kernel, created once per Plan (pipelines, repacked weights).
class DeviceKernel {
 public:
  virtual ~DeviceKernel() = default;
  // Records the node's work on the backend's stream (does not wait for it). Errors name the node.
  virtual Status record(DeviceKernelContext& ctx) = 0;
};

class DeviceBackend : public Backend {
 public:
  // Version 2 of the backend contract: version 1 (Backend) plus this class. A backend states the
  // version it was written against by static_assert(DeviceBackend::kApiVersion == 2).
  static constexpr int kApiVersion = 2;

  // Host kernels: a device backend runs nodes only through device kernels. Default: kUnsupported.
  Expected<std::unique_ptr<Kernel>> create_kernel(const KernelInit& init) override {
    return unsupported(init.place, ": ", name(), " runs nodes only through device kernels");
  }

  // ---- kernels ----
  // Whether a device kernel exists for the node with these (load-time) input types, and which
  // inputs it reads on the host. Called by placement for every node except control flow.
  virtual DeviceSupport device_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const = 0;
  // Creates the device kernel of a node device_support accepted, once per Plan (pipelines,
  // repacked weights). Errors name init.place.
  virtual Expected<std::unique_ptr<DeviceKernel>> create_device_kernel(const KernelInit& init) = 0;

  // ---- buffers ----
  // Allocates `bytes` (> 0) of device memory, aligned for any kernel binding; freed when the
  // last holder drops it (see the ordering rule above). kResource when the device is out of memory.
  virtual Expected<std::shared_ptr<DeviceBuffer>> allocate(size_t bytes) = 0;

  // ---- copies ----
  // Records a host -> device copy of `src` (a dense tensor) into a new device tensor. The host
  // data is staged before returning: `src` may change or die at once.
  virtual Expected<DeviceTensor> upload(const Tensor& src) = 0;
  // Copies a device tensor to a new host tensor: submits what is recorded and waits for it.
  virtual Expected<Tensor> download(const DeviceTensor& src) = 0;
  // Records a device -> device copy into a new device tensor. Default: kUnsupported (callers
  // then stage through the host with download + upload).
  virtual Expected<DeviceTensor> copy(const DeviceTensor& src) {
    (void)src;
    return unsupported(name(), " has no device-to-device copy");
  }

  // ---- stream ----
  // Submits what has been recorded without waiting for it. Default: nothing to do.
  virtual Status flush() { return ok_status(); }
  // Waits until everything recorded so far has finished; reports device failures (lost device,
  // failed submission, validation messages) as kBackend. Default: nothing to do.
  virtual Status synchronize() { return ok_status(); }
};

// Creates a device backend by name ("vulkan", "null"). kBackend with a message starting
// "no Vulkan device" (etc.) when the backend is compiled in but the machine has no such device;
// kNotFound for a name that is no device backend of this build. Defined in backends/backends.cpp.
Expected<std::unique_ptr<DeviceBackend>> create_device_backend(std::string_view name);
// The device backends compiled into this build, preferred first ("null" last: a test device).
std::vector<std::string> available_device_backends();

}  // namespace tsr::exec
