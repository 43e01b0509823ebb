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
// - Layout, the same in every device backend: ops/<family>.cpp is host code (one file per op
//   family: elementwise, linear, data_movement, reduce, plus training here; most of each family is
//   written once in backends/device_common/<family>.h), kernels/*.cu is device code, reached only
//   through the launchers of kernels/launch.h. Ops, dtypes and attributes outside the table stay
//   on the CPU through placement (README.md, "Backends").
//
// Thread safety: one Session at a time (the contract's rule); the backend makes its device
// current on the calling thread in each entry point that enqueues work.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/caching_allocator.h"
#include "backends/device_common/device_base.h"
#include "core/exec/device.h"

// Opaque CUDA handles, so that users of this header need no CUDA include path.
struct CUstream_st;
struct CUevent_st;
struct cublasContext;

namespace tsr::cuda {

struct CublasApi;  // cublas_api.h
class CudaBackend final : public device_common::TableBackend<CudaBackend> {
  static_assert(exec::DeviceBackend::kApiVersion == 2, "written against the version 2 contract");

 public:
  // kBackend "no CUDA device: <driver's error text>" when the machine has none (or no driver).
  static Expected<std::unique_ptr<CudaBackend>> create();
  // The op table (ops/*.cpp). Needs no device: placement and the table's self-check
  // (device_common::check_op_table, run by the device tests) work on any machine.
  static const device_common::OpTable<CudaBackend>& op_table();
  ~CudaBackend() override;

  std::string_view name() const override { return "cuda"; }
  Expected<std::shared_ptr<exec::DeviceBuffer>> allocate(size_t bytes) override;
  // Work is submitted as it is enqueued, so flush() keeps the contract's default (nothing to do).
  Status synchronize() override;

  // For the op families: the stream, cuBLAS, a device pointer of a tensor, a scratch tensor, and
  // the status of a launch (kBackend naming `what` and the CUDA error).
  CUstream_st* stream() const { return stream_; }
  cublasContext* cublas() const { return cublas_; }
  const CublasApi& blas() const { return *blas_; }  // cuBLAS entry points (loaded at create())
  static void* data(const exec::DeviceTensor& t);
  Expected<exec::DeviceTensor> scratch(DType dtype, const Shape& shape);
  static Status check(int cuda_error, const std::string& what);
  static Status check_cublas(int cublas_status, const std::string& what);
  const std::string& device_name() const { return device_name_; }
  const CachingAllocator& memory() const { return *alloc_; }

 private:
  CudaBackend() : TableBackend(op_table()) {}
  // Host copies go through a staging slot: write() returns once the bytes are in it; read() waits.
  Status write(const exec::DeviceTensor& dst, const void* src, size_t n) override;
  Status read(const exec::DeviceTensor& src, void* dst, size_t n) override;
  Status copy_bytes(const exec::DeviceTensor& src, const exec::DeviceTensor& dst, size_t n) override;
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
  const CublasApi* blas_ = nullptr;
  std::shared_ptr<CachingAllocator> alloc_;
  std::vector<Slot> slots_;
  size_t next_slot_ = 0;
};

}  // namespace tsr::cuda
