// Selective build: which ops, and which dtypes of each, a build compiles in (cmake/selective.cmake,
// mobile/selective/CMakeLists.txt).
//
// A minimal runtime starts from an op list written by `tessera ops --used MODEL.tsr...`: one line
// per op type with the dtypes its nodes read and write. CMake turns the list into a header
// `tsr_selected_ops.h` (a constexpr table of SelectedOp) and compiles the op families and CPU
// kernel families that register a listed op once more, with TSR_SELECTIVE_BUILD=1 and that header
// on the include path. Every registration site is guarded by TSR_IF_SELECTED(op) and the kernels'
// dtype dispatch takes the op's mask (dispatch_dtype<kSel>, core/tensor/dtype.h), so an unselected
// op's OpDef and kernels, and an unselected dtype's kernel instantiations, are not compiled into
// those objects at all (ExecuTorch's selected_op_variants.h does the same). Nothing is defined
// twice: the guards are compile-time filters on the one definition.
//
// A normal build has no table: selected_dtypes() is kAllDTypes for every op, every guard is
// `if constexpr (true)` and every dispatch is the full switch, so the code is what it would be
// without them.
#pragma once

#include <cstdint>
#include <string_view>

namespace tsr {

// Bit d is set when the dtype whose ONNX code (DType value, core/tensor/dtype.h) is d is selected.
using DTypeMask = uint32_t;
inline constexpr DTypeMask kAllDTypes = ~DTypeMask{0};

struct SelectedOp {
  std::string_view name;  // ONNX op type
  DTypeMask dtypes;       // the dtypes its kernels are compiled for
};

}  // namespace tsr

#if TSR_SELECTIVE_BUILD
// Generated: namespace tsr::selection { constexpr SelectedOp kOps[] = {...}; }
#include "tsr_selected_ops.h"
#endif

namespace tsr {

// The dtypes `op` is compiled for: every dtype in a normal build; in a selective build the
// listed ones, or 0 when the op is not listed. consteval: evaluated where it is used, never
// emitted, so objects built with different tables cannot clash at link time.
consteval DTypeMask selected_dtypes(std::string_view op) {
#if TSR_SELECTIVE_BUILD
  for (const SelectedOp& s : selection::kOps)
    if (s.name == op) return s.dtypes;
  return 0;
#else
  static_cast<void>(op);
  return kAllDTypes;
#endif
}

}  // namespace tsr

// The size-first kernel set (TSR_SIZE_FIRST_KERNELS=1, what a minimal runtime built with
// TSR_MIN_OPTIMIZE=size compiles): Conv and FusedSeparableConv take one GEMM path, im2col (or the
// input as is, for pointwise convs) + the packed SGEMM, without sgemm_direct, the implicit GEMM
// or Winograd. Their code is then unreferenced and left out of the link; what remains computes
// the same values with a different summation order (within the 1e-4 the model tests use).
#ifndef TSR_SIZE_FIRST_KERNELS
#define TSR_SIZE_FIRST_KERNELS 0
#endif
namespace tsr {
inline constexpr bool kSizeFirstKernels = TSR_SIZE_FIRST_KERNELS != 0;
}  // namespace tsr

// Guards one registration site: `TSR_IF_SELECTED("Add") r.add_fn("Add", num, &kernel<kSel>);`.
// The statement is compiled only when the build selects `op`; inside it, kSel is the op's
// DTypeMask, for the kernel's dtype dispatch (dispatch_dtype<kSel>).
#define TSR_IF_SELECTED(op) \
  if constexpr (constexpr ::tsr::DTypeMask kSel = ::tsr::selected_dtypes(op); kSel != 0)
