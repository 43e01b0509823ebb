#include "backends/cpu/cpu_backend.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tsr::cpu {

namespace {

// FnKernel factories cannot capture, so stateless kernels are looked up again at creation.
Expected<std::unique_ptr<exec::Kernel>> make_fn_kernel(const exec::KernelInit&) {
  return internal_error("make_fn_kernel is a sentinel");
}

}  // namespace

void KernelRegistry::add(const std::string& op, std::vector<DType> dtypes, exec::KernelFactory create) {
  // Registration is fixed code run once: a duplicate is a bug that would silently replace a kernel.
  if (!defs_.emplace(op, KernelDef{std::move(dtypes), create}).second) {
    std::fprintf(stderr, "tessera: CPU kernel for '%s' registered twice\n", op.c_str());
    std::abort();
  }
}

void KernelRegistry::add_fn(const std::string& op, std::vector<DType> dtypes, exec::KernelFn fn) {
  add(op, std::move(dtypes), &make_fn_kernel);
  fn_by_op_[op] = fn;
}

const KernelDef* KernelRegistry::find(std::string_view op) const {
  auto it = defs_.find(op);
  return it == defs_.end() ? nullptr : &it->second;
}

exec::KernelFn KernelRegistry::find_fn(std::string_view op) const {
  auto it = fn_by_op_.find(op);
  return it == fn_by_op_.end() ? nullptr : it->second;
}

const KernelRegistry& kernel_registry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry();
    register_all_kernels(*reg);
    return reg;
  }();
  return *r;
}

namespace {

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
  if (!dtype_ok(*def, init.input_types))
    return unsupported(init.place, ": no cpu kernel for ", init.node.op, " with input dtype ",
                       dtype_name(init.input_types[0].dtype));
  if (def->create == &make_fn_kernel)
    return std::unique_ptr<exec::Kernel>(new exec::FnKernel(reg.find_fn(init.node.op)));
  return def->create(init);
}

std::vector<DType> CpuBackend::kernel_dtypes(std::string_view op) const {
  const KernelDef* def = kernel_registry().find(op);
  if (!def) return {};
  return def->dtypes;
}

}  // namespace tsr::cpu
