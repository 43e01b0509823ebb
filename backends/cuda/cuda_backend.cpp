#include "backends/cuda/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/cublas_api.h"
#include "backends/cuda/ops/common.h"

namespace tsr::device_common {
TSR_DEVICE_FAMILIES(cuda::CudaBackend)
}  // namespace tsr::device_common

namespace tsr::cuda {

namespace {

class CudaBuffer final : public exec::DeviceBuffer {
 public:
  CudaBuffer(std::shared_ptr<CachingAllocator> a, CachingAllocator::Block b) : alloc_(std::move(a)), block_(b) {}
  ~CudaBuffer() override { alloc_->deallocate(block_); }
  size_t size() const override { return block_.size; }
  void* ptr() const { return block_.ptr; }

 private:
  std::shared_ptr<CachingAllocator> alloc_;  // outlives the backend if a tensor does
  CachingAllocator::Block block_;
};

// A size from the environment (bytes), or `fallback`.
size_t env_size(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return end && *end == '\0' && n > 0 ? static_cast<size_t>(n) : fallback;
}

constexpr size_t kSlots = 4;
constexpr size_t kMinSlotBytes = size_t{1} << 20;

}  // namespace

const device_common::OpTable<CudaBackend>& CudaBackend::op_table() {
  static const auto table = device_common::make_op_table<CudaBackend>("CUDA", {&register_training});
  return table;
}

Status CudaBackend::check(int e, const std::string& what) {
  if (e == cudaSuccess) return ok_status();
  const auto err = static_cast<cudaError_t>(e);
  return backend_error("cuda: ", what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

Status CudaBackend::check_cublas(int st, const std::string& what) {
  if (st == CUBLAS_STATUS_SUCCESS) return ok_status();
  const auto api = cublas_api();
  if (!api.ok()) return backend_error("cuda: ", what, ": cuBLAS status ", st);
  const auto s = static_cast<cublasStatus_t>(st);
  return backend_error("cuda: ", what, ": cuBLAS ", (*api)->status_name(s), ": ", (*api)->status_string(s));
}

Expected<std::unique_ptr<CudaBackend>> CudaBackend::create() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return backend_error("no CUDA device: ", cudaGetErrorString(e), " (cudaGetDeviceCount: ", cudaGetErrorName(e), ", error ",
                         static_cast<int>(e), ")");
  if (count == 0) return backend_error("no CUDA device: the driver reports 0 devices");
  auto b = std::unique_ptr<CudaBackend>(new CudaBackend());
  if (const char* v = std::getenv("TSR_CUDA_DEVICE"); v && *v) {
    char* end = nullptr;
    const long i = std::strtol(v, &end, 10);
    if (*end != '\0' || i < 0 || i > 1024) return invalid_argument("TSR_CUDA_DEVICE=\"", v, "\": expected a device index");
    b->device_ = static_cast<int>(i);
  }
  if (b->device_ >= count)
    return backend_error("no CUDA device: TSR_CUDA_DEVICE=", b->device_, " but the driver reports ", count, " device(s)");
  TSR_RETURN_IF_ERROR(check(cudaSetDevice(b->device_), "cudaSetDevice"));
  cudaDeviceProp prop{};
  TSR_RETURN_IF_ERROR(check(cudaGetDeviceProperties(&prop, b->device_), "cudaGetDeviceProperties"));
  b->device_name_ = prop.name;
  cudaStream_t s = nullptr;
  TSR_RETURN_IF_ERROR(check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
  b->stream_ = s;
  TSR_ASSIGN_OR_RETURN(b->blas_, cublas_api());
  cublasHandle_t h = nullptr;
  TSR_RETURN_IF_ERROR(check_cublas(b->blas_->create(&h), "cublasCreate"));
  b->cublas_ = h;
  TSR_RETURN_IF_ERROR(check_cublas(b->blas_->set_stream(h, s), "cublasSetStream"));
  // Full f32 GEMMs: the CPU reference is the truth, so no TF32 (10-bit mantissa) shortcuts.
  TSR_RETURN_IF_ERROR(check_cublas(b->blas_->set_math_mode(h, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode"));
  size_t free_bytes = 0, total = 0;
  TSR_RETURN_IF_ERROR(check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo"));
  const size_t cap = env_size("TSR_CUDA_MEMORY_CAP", free_bytes / 4 * 3);
  b->alloc_ = std::make_shared<CachingAllocator>(
      [](size_t n) -> void* {
        void* p = nullptr;
        return cudaMalloc(&p, n) == cudaSuccess ? p : (cudaGetLastError(), nullptr);
      },
      [](void* p) { cudaFree(p); }, cap);
  b->slots_.resize(kSlots);
  for (Slot& slot : b->slots_) {
    cudaEvent_t ev = nullptr;
    TSR_RETURN_IF_ERROR(check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate"));
    slot.done = ev;
  }
  return b;
}

CudaBackend::~CudaBackend() {
  if (stream_) cudaStreamSynchronize(stream_);
  for (Slot& slot : slots_) {
    if (slot.done) cudaEventDestroy(slot.done);
    if (slot.host) cudaFreeHost(slot.host);
  }
  if (cublas_) blas_->destroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
  // alloc_ (shared with live buffers) frees its cache when the last holder drops it.
}

Status CudaBackend::activate() const { return check(cudaSetDevice(device_), "cudaSetDevice"); }

Expected<std::shared_ptr<exec::DeviceBuffer>> CudaBackend::allocate(size_t bytes) {
  TSR_RETURN_IF_ERROR(activate());
  TSR_ASSIGN_OR_RETURN(CachingAllocator::Block blk, alloc_->allocate(std::max<size_t>(bytes, 4)));
  return std::shared_ptr<exec::DeviceBuffer>(new CudaBuffer(alloc_, blk));
}

void* CudaBackend::data(const exec::DeviceTensor& t) {
  return static_cast<char*>(static_cast<const CudaBuffer*>(t.buffer.get())->ptr()) + t.byte_offset;
}

Expected<exec::DeviceTensor> CudaBackend::scratch(DType dtype, const Shape& shape) {
  exec::DeviceTensor t;
  t.dtype = dtype;
  t.shape = shape;
  TSR_ASSIGN_OR_RETURN(t.buffer, allocate(t.nbytes()));
  return t;
}

Expected<CudaBackend::Slot*> CudaBackend::staging(size_t bytes) {
  Slot& slot = slots_[next_slot_];
  next_slot_ = (next_slot_ + 1) % slots_.size();
  // The copy that last read or wrote this slot must be done before the host touches it.
  TSR_RETURN_IF_ERROR(check(cudaEventSynchronize(slot.done), "waiting for a staging copy"));
  if (slot.size < bytes) {
    if (slot.host) cudaFreeHost(slot.host);
    slot.host = nullptr;
    slot.size = 0;
    const size_t size = std::max(kMinSlotBytes, CachingAllocator::bin_size(bytes));
    void* p = nullptr;
    TSR_RETURN_IF_ERROR(check(cudaMallocHost(&p, size), "cudaMallocHost (staging)"));
    slot.host = p;
    slot.size = size;
  }
  return &slot;
}

Status CudaBackend::write(const exec::DeviceTensor& dst, const void* src, size_t n) {
  TSR_RETURN_IF_ERROR(activate());
  TSR_ASSIGN_OR_RETURN(Slot * slot, staging(n));
  std::memcpy(slot->host, src, n);
  TSR_RETURN_IF_ERROR(check(cudaMemcpyAsync(data(dst), slot->host, n, cudaMemcpyHostToDevice, stream_), "upload"));
  return check(cudaEventRecord(slot->done, stream_), "cudaEventRecord");
}

Status CudaBackend::read(const exec::DeviceTensor& src, void* dst, size_t n) {
  TSR_RETURN_IF_ERROR(activate());
  if (n == 0) return synchronize();
  TSR_ASSIGN_OR_RETURN(Slot * slot, staging(n));
  TSR_RETURN_IF_ERROR(check(cudaMemcpyAsync(slot->host, data(src), n, cudaMemcpyDeviceToHost, stream_), "download"));
  TSR_RETURN_IF_ERROR(check(cudaEventRecord(slot->done, stream_), "cudaEventRecord"));
  // A kernel's failure surfaces here (the first wait after it), named by the stream's error.
  TSR_RETURN_IF_ERROR(check(cudaStreamSynchronize(stream_), "running the recorded work"));
  std::memcpy(dst, slot->host, n);
  return ok_status();
}

Status CudaBackend::copy_bytes(const exec::DeviceTensor& src, const exec::DeviceTensor& dst, size_t n) {
  return check(cudaMemcpyAsync(data(dst), data(src), n, cudaMemcpyDeviceToDevice, stream_), "copy");
}

Status CudaBackend::synchronize() {
  TSR_RETURN_IF_ERROR(activate());
  return check(cudaStreamSynchronize(stream_), "running the recorded work");
}

}  // namespace tsr::cuda
