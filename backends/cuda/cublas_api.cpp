#include "backends/cuda/cublas_api.h"

#include <dlfcn.h>

#include <string>

namespace tsr::cuda {

namespace {

// TSR_CUBLAS_PATH (the toolkit's library, set by cuda.cmake) first, then the soname through the
// dynamic loader's search path (LD_LIBRARY_PATH, ld.so.cache) for installs that move it.
void* open_cublas(std::string* tried) {
  for (const char* name : {TSR_CUBLAS_PATH, TSR_CUBLAS_SONAME}) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
    if (const char* e = dlerror()) *tried += std::string(tried->empty() ? "" : "; ") + e;
  }
  return nullptr;
}

template <class F>
bool resolve(void* lib, const char* symbol, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, symbol));
  return *out != nullptr;
}

}  // namespace

Expected<const CublasApi*> cublas_api() {
  static const Expected<const CublasApi*> loaded = []() -> Expected<const CublasApi*> {
    std::string tried;
    void* lib = open_cublas(&tried);  // kept open for the process: the table points into it
    if (!lib) return backend_error("cuda: cannot load cuBLAS (", tried, ")");
    static CublasApi api;
    const char* missing = nullptr;
    if (!resolve(lib, "cublasCreate_v2", &api.create)) missing = "cublasCreate_v2";
    else if (!resolve(lib, "cublasDestroy_v2", &api.destroy)) missing = "cublasDestroy_v2";
    else if (!resolve(lib, "cublasSetStream_v2", &api.set_stream)) missing = "cublasSetStream_v2";
    else if (!resolve(lib, "cublasSetMathMode", &api.set_math_mode)) missing = "cublasSetMathMode";
    else if (!resolve(lib, "cublasSgemmStridedBatched", &api.sgemm_strided_batched)) missing = "cublasSgemmStridedBatched";
    else if (!resolve(lib, "cublasGetStatusName", &api.status_name)) missing = "cublasGetStatusName";
    else if (!resolve(lib, "cublasGetStatusString", &api.status_string)) missing = "cublasGetStatusString";
    if (missing) return backend_error("cuda: ", TSR_CUBLAS_SONAME, " has no symbol ", missing, " (a cuBLAS older than the toolkit built against?)");
    return static_cast<const CublasApi*>(&api);
  }();
  return loaded;
}

}  // namespace tsr::cuda
