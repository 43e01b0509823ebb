// The CUDA backend (DESIGN.md §9): a device backend on the contract of core/exec/device.h.
//
// - One device (TSR_CUDA_DEVICE=<index>, default 0) and one non-blocking stream per backend, i.e.
//   per Session: every kernel, cuBLAS call and copy is enqueued on it in recording order, which
//   is the contract's ordering rule. Nothing waits for the device except download() (copy nodes
//   to the host, If/Loop conditions and graph outputs go through it), synchronize(), a staging
//   slot being reused while its previous upload is still pending, and giving cached memory back.
// - Memory: a caching allocator with size-class bins and a cap (caching_allocator.h; the cap is
//   TSR_CUDA_MEMORY_CAP bytes, default 3/4 of the device memory free at creation).
// - Host copies go through page-locked staging slots (cudaMallocHost) so that cudaMemcpyAsync is
//   truly asynchronous for uploads; each slot's cudaEvent says when it may be overwritten.
// - Kernels: op families in backends/cuda/ops/*.cpp (host side: shapes, attributes, cuBLAS) over
//   the launchers of backends/cuda/kernels/launch.h (the .cu files). Ops, dtypes and attributes
//   outside the table stay on the CPU through placement (README.md, "Backends").
//
// Thread safety: one Session at a time (the contract's rule); the backend makes its device
// current on the calling thread in each entry point that enqueues work.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/caching_allocator.h"
#include "core/exec/device.h"

// Opaque CUDA handles, so that users of this header need no CUDA include path.
struct CUstream_st;
struct CUevent_st;
struct cublasContext;

namespace tsr::cuda {

class CudaBackend;

struct CuOpDef {
  uint32_t host_inputs = 0;  // inputs read on the host (shapes, axes, scalars, targets)
  uint32_t bool_inputs = 0;  // device inputs that are bool (u8) instead of f32
  // Extra placement check on the node and its load-time input types (null: none).
  bool (*check)(const ir::Node&, const std::vector<ops::ValueType>&) = nullptr;
  Expected<std::unique_ptr<exec::DeviceKernel>> (*create)(CudaBackend&, const exec::KernelInit&) = nullptr;
};
using CuOpTable = std::map<std::string, CuOpDef, std::less<>>;

// The op families (backends/cuda/ops/): each adds its ops; a duplicate is a programming error
// (build_op_table() fails an assertion in the tests' self-check).
void register_elementwise(CuOpTable& t);
void register_linear(CuOpTable& t);
void register_data_movement(CuOpTable& t);
void register_reduce(CuOpTable& t);
void register_training(CuOpTable& t);

// The whole table. Needs no device: placement decisions are testable on any machine.
const CuOpTable& op_table();
// The backend's device_support() on a given table (no device needed).
exec::DeviceSupport device_support_of(const CuOpTable& table, const ir::Node& node, const std::vector<ops::ValueType>& inputs);

class CudaBackend final : public exec::DeviceBackend {
  static_assert(exec::DeviceBackend::kApiVersion == 2, "written against the version 2 contract");

 public:
  // kBackend "no CUDA device: <driver's error text>" when the machine has none (or no driver).
  static Expected<std::unique_ptr<CudaBackend>> create();
  ~CudaBackend() override;

  std::string_view name() const override { return "cuda"; }
  std::vector<DType> kernel_dtypes(std::string_view op) const override;
  exec::DeviceSupport device_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const override;
  Expected<std::unique_ptr<exec::DeviceKernel>> create_device_kernel(const exec::KernelInit& init) override;
  Expected<std::shared_ptr<exec::DeviceBuffer>> allocate(size_t bytes) override;
  Expected<exec::DeviceTensor> upload(const Tensor& src) override;
  Expected<Tensor> download(const exec::DeviceTensor& src) override;
  Expected<exec::DeviceTensor> copy(const exec::DeviceTensor& src) override;
  // Work is submitted as it is enqueued, so flush() has nothing to do.
  Status flush() override { return ok_status(); }
  Status synchronize() override;

  // For the op families: the stream, cuBLAS, a device pointer of a tensor, a scratch tensor, and
  // the status of a launch (kBackend naming `what` and the CUDA error).
  CUstream_st* stream() const { return stream_; }
  cublasContext* cublas() const { return cublas_; }
  static void* data(const exec::DeviceTensor& t);
  Expected<exec::DeviceTensor> scratch(DType dtype, const Shape& shape);
  static Status check(int cuda_error, const std::string& what);
  static Status check_cublas(int cublas_status, const std::string& what);
  const std::string& device_name() const { return device_name_; }
  const CachingAllocator& memory() const { return *alloc_; }

 private:
  CudaBackend() = default;
  Status activate() const;
  struct Slot {
    void* host = nullptr;  // page-locked
    size_t size = 0;
    CUevent_st* done = nullptr;  // recorded after the copy that last used the slot
  };
  // A staging slot of at least `bytes`, free to overwrite (waits for its last copy if needed).
  Expected<Slot*> staging(size_t bytes);

  int device_ = 0;
  std::string device_name_;
  CUstream_st* stream_ = nullptr;
  cublasContext* cublas_ = nullptr;
  std::shared_ptr<CachingAllocator> alloc_;
  std::vector<Slot> slots_;
  size_t next_slot_ = 0;
};

}  // namespace tsr::cuda
