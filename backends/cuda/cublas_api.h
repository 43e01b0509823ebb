// cuBLAS, loaded with dlopen when the first CUDA backend is created rather than linked.
//
// Why: linking libcublas makes every process that loads Tessera pay about 215 MB of resident
// memory for the library's relocations at start-up, GPU or not (measured: `tessera --version`
// 223 MB with it, 14 MB without), so a CPU-only `tessera run` would use more memory than
// onnxruntime. Only the handful of entry points below are used; they are resolved once.
//
// Contract: cublas_api() is thread-safe (a function-local static); it returns the table, or a
// kBackendError naming the library and the missing symbol when libcublas cannot be loaded, in
// which case the CUDA backend does not start (the same as having no device).
#pragma once

#include <cublas_v2.h>

#include "core/base/status.h"

namespace tsr::cuda {

struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// The loaded table (never null on success; lives for the process).
Expected<const CublasApi*> cublas_api();

}  // namespace tsr::cuda
