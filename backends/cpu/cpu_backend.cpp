#include "backends/cpu/cpu_backend.h"

#include <hwy/targets.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_direct.h"

namespace tsr::cpu {

namespace {

// The dtypes in `mask`, by code.
std::vector<DType> dtypes_in(DTypeMask mask) {
  std::vector<DType> v;
  for (int d = 1; d <= 16; ++d)
    if (dtype_valid(d) && dtype_in(mask, static_cast<DType>(d))) v.push_back(static_cast<DType>(d));
  return v;
}

// FnKernel factories cannot capture, so stateless kernels are looked up again at creation.
Expected<std::unique_ptr<exec::Kernel>> make_fn_kernel(const exec::KernelInit&) {
  return internal_error("make_fn_kernel is a sentinel");
}

}  // namespace

void KernelRegistry::restrict_to(const SelectedOp* ops, size_t count) {
  selection_ = ops;
  selection_size_ = count;
}

void KernelRegistry::add(const std::string& op, std::vector<DType> dtypes, exec::KernelFactory create) {
  DTypeMask selected = kAllDTypes;
  if (selection_) {
    const SelectedOp* sel = std::find_if(selection_, selection_ + selection_size_,
                                         [&](const SelectedOp& s) { return s.name == op; });
    if (sel == selection_ + selection_size_) return;
    if (sel->dtypes != kAllDTypes) {
      if (dtypes.empty()) {
        dtypes = dtypes_in(sel->dtypes);
      } else {
        dtypes.erase(std::remove_if(dtypes.begin(), dtypes.end(), [&](DType d) { return !dtype_in(sel->dtypes, d); }),
                     dtypes.end());
      }
      if (dtypes.empty()) return;
    }
    selected = sel->dtypes;
  }
  // Registration is fixed code run once: a duplicate is a bug that would silently replace a kernel.
  if (!defs_.emplace(op, KernelDef{std::move(dtypes), create, selected}).second) {
    std::fprintf(stderr, "tessera: CPU kernel for '%s' registered twice\n", op.c_str());
    std::abort();
  }
}

void KernelRegistry::add_fn(const std::string& op, std::vector<DType> dtypes, exec::KernelFn fn) {
  add(op, std::move(dtypes), &make_fn_kernel);
  if (defs_.count(op)) fn_by_op_[op] = fn;
}

const KernelDef* KernelRegistry::find(std::string_view op) const {
  auto it = defs_.find(op);
  return it == defs_.end() ? nullptr : &it->second;
}

exec::KernelFn KernelRegistry::find_fn(std::string_view op) const {
  auto it = fn_by_op_.find(op);
  return it == fn_by_op_.end() ? nullptr : it->second;
}

namespace {

int64_t current_target() {
#if (HWY_TARGETS & (HWY_TARGETS - 1)) == 0
  // One compiled target (WASM, Arm, sanitizer builds): no libhwy call, which these builds lack.
  return HWY_STATIC_TARGET;
#else
  const int64_t t = hwy::SupportedTargets() & HWY_TARGETS;
  return t & -t;  // lower bits are better targets
#endif
}

}  // namespace

const char* simd_target() { return hwy::TargetName(current_target()); }

std::string compiled_simd_targets() {
  std::string s;
  for (int64_t t = HWY_TARGETS; t != 0; t &= t - 1) s += str_cat(s.empty() ? "" : " ", hwy::TargetName(t & -t));
  return s;
}

const KernelRegistry& kernel_registry() {
  // Registration runs each family's HWY_DYNAMIC_DISPATCH, which picks the current target.
  static std::mutex mu;
  static std::map<int64_t, std::unique_ptr<KernelRegistry>>* by_target =
      new std::map<int64_t, std::unique_ptr<KernelRegistry>>();
  const int64_t target = current_target();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<KernelRegistry>& r = (*by_target)[target];
  if (!r) {
    r = std::make_unique<KernelRegistry>();
    register_all_kernels(*r);
  }
  return *r;
}

namespace {

std::string dtype_list(DTypeMask mask) {
  std::string s;
  for (DType d : dtypes_in(mask)) s += str_cat(s.empty() ? "" : ", ", dtype_name(d));
  return s;
}

bool dtype_ok(const KernelDef& def, const std::vector<ops::ValueType>& inputs) {
  if (def.dtypes.empty() || inputs.empty() || inputs[0].dtype == DType::kUndefined) return true;
  return std::find(def.dtypes.begin(), def.dtypes.end(), inputs[0].dtype) != def.dtypes.end();
}

}  // namespace

bool CpuBackend::supports(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const {
  const KernelDef* def = kernel_registry().find(node.op);
  return def && dtype_ok(*def, inputs);
}

Expected<std::unique_ptr<exec::Kernel>> CpuBackend::create_kernel(const exec::KernelInit& init) {
  const KernelRegistry& reg = kernel_registry();
  const KernelDef* def = reg.find(init.node.op);
  if (!def) return unsupported(init.place, ": no cpu kernel for op ", init.node.op);
  if (!dtype_ok(*def, init.input_types)) {
    std::string have;
    for (DType d : def->dtypes) have += str_cat(have.empty() ? "" : ", ", dtype_name(d));
    return unsupported(init.place, ": no cpu kernel for ", init.node.op, " with input dtype ",
                       dtype_name(init.input_types[0].dtype), " (this build has ", have, ")");
  }
  if (def->selected != kAllDTypes) {
    // A selective build compiled the op's kernels for its op list's dtypes only (core/base/selective.h).
    for (size_t k = 0; k < init.input_types.size(); ++k) {
      const ops::ValueType& t = init.input_types[k];
      if (k < init.node.inputs.size() && init.node.inputs[k] >= 0 && t.dtype != DType::kUndefined &&
          !dtype_in(def->selected, t.dtype))
        return unsupported(init.place, ".input[", k, "]: no cpu kernel for ", init.node.op, " with dtype ",
                           dtype_name(t.dtype), " (this build has ", dtype_list(def->selected), ")");
    }
  }
  if (def->create == &make_fn_kernel)
    return std::unique_ptr<exec::Kernel>(new exec::FnKernel(reg.find_fn(init.node.op)));
  return def->create(init);
}

void CpuBackend::prepare_thread() {
  sgemm_prepare_thread();
  if constexpr (!kSizeFirstKernels) sgemm_direct_prepare_thread();
}

std::vector<DType> CpuBackend::kernel_dtypes(std::string_view op) const {
  const KernelDef* def = kernel_registry().find(op);
  if (!def) return {};
  return def->dtypes;
}

}  // namespace tsr::cpu
