// The CPU backend: portable reference kernels plus Highway SIMD kernels for hot ops.
//
// Kernel families live in backends/cpu/kernels/<family>.cpp, each defining
// `void register_<family>_kernels(tsr::cpu::KernelRegistry&)`; CMake generates
// register_all_kernels() from the file names. A kernel is registered per op with the dtypes it
// handles for the op's principal type (input 0 unless the family says otherwise). Registrations
// are guarded by TSR_IF_SELECTED("Op") and dtype dispatch takes the op's mask kSel
// (core/base/selective.h), so that a selective build compiles only its ops and dtypes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/base/selective.h"
#include "core/exec/backend.h"

namespace tsr::cpu {

struct KernelDef {
  std::vector<DType> dtypes;  // dtypes of input 0 the kernel handles; empty = any (kernel checks)
  exec::KernelFactory create = nullptr;
  // A selective build's dtypes for the op (every input must have one of them); kAllDTypes else.
  DTypeMask selected = kAllDTypes;
};

class KernelRegistry {
 public:
  // Selective builds (core/base/selective.h) call this before the families register: add() then
  // keeps only the listed ops, each with the listed dtypes (a kernel registered for any dtype gets
  // exactly those), so that a node of an unselected dtype is reported as unsupported, naming the
  // node, when its Plan is created rather than failing inside the kernel. `ops` must outlive the
  // registry (the generated table is static). Inputs other than input 0 are checked against the
  // op's dtypes too (KernelDef::selected).
  void restrict_to(const SelectedOp* ops, size_t count);
  void add(const std::string& op, std::vector<DType> dtypes, exec::KernelFactory create);
  // Registers a stateless kernel function.
  void add_fn(const std::string& op, std::vector<DType> dtypes, exec::KernelFn fn);
  const KernelDef* find(std::string_view op) const;
  // The function registered with add_fn for `op`, or null.
  exec::KernelFn find_fn(std::string_view op) const;
  const std::map<std::string, KernelDef, std::less<>>& all() const { return defs_; }

 private:
  std::map<std::string, KernelDef, std::less<>> defs_;
  std::map<std::string, exec::KernelFn, std::less<>> fn_by_op_;
  const SelectedOp* selection_ = nullptr;  // restrict_to; null: every op and dtype
  size_t selection_size_ = 0;
};

// Generated (CMake): calls every register_<family>_kernels in backends/cpu/kernels/.
void register_all_kernels(KernelRegistry& registry);
// The registry of the SIMD target that runs now (simd_target()): kernel families compiled per
// target register that target's functions. Built once per target on first use (thread-safe); the
// reference stays valid for the life of the process.
const KernelRegistry& kernel_registry();

// The Highway target CPU kernels run with: the best of the compiled targets (TSR_SIMD_DISPATCH)
// that this CPU supports, e.g. "AVX3" (AVX-512), "AVX2", "SSE4", "NEON", "WASM". Tests may narrow
// the choice with hwy::SetSupportedTargetsForTest; kernels created afterwards use the new target.
const char* simd_target();
// Every target compiled into this build, best first, space-separated (e.g. "AVX3 AVX2 SSE4").
std::string compiled_simd_targets();

class CpuBackend final : public exec::Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  bool supports(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const override;
  Expected<std::unique_ptr<exec::Kernel>> create_kernel(const exec::KernelInit& init) override;
  std::vector<DType> kernel_dtypes(std::string_view op) const override;
  // Sizes the calling thread's GEMM buffers (sgemm_prepare_thread, sgemm_direct_prepare_thread).
  void prepare_thread() override;
};

// All the dtypes a kernel may list.
inline const std::vector<DType>& all_numeric_dtypes() {
  static const std::vector<DType> k = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                       DType::kI8,  DType::kU8,  DType::kI16, DType::kU16,
                                       DType::kI32, DType::kI64, DType::kU32, DType::kU64};
  return k;
}

}  // namespace tsr::cpu
