// The op table of a device backend (Vulkan, CUDA), one type for all of them: op name -> the
// placement fields and the kernel factory. Header-only; building a table needs no device, so
// placement and the table's self-check (check_op_table) run on any machine.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/exec/device.h"
#include "core/ops/op_def.h"

namespace tsr::device_common {

// Extra placement test of a node and its load-time input types.
using CheckFn = bool (*)(const ir::Node&, const std::vector<ops::ValueType>&);

// An op-table entry. B: the backend class its factory takes.
//   host_inputs: bit k = input k is read on the host (shapes, axes, scalars), any dtype;
//   bool_inputs: bit k = device input k is bool (u8) instead of f32; inputs past the 32nd are f32;
//   check: extra test of the node and its load-time input types (null: none).
template <class B>
struct OpDef {
  uint32_t host_inputs = 0;
  uint32_t bool_inputs = 0;
  CheckFn check = nullptr;
  Expected<std::unique_ptr<exec::DeviceKernel>> (*create)(B&, const exec::KernelInit&) = nullptr;
};

// The factory a table stores for kernel class K (constructed from the KernelInit).
template <typename K, typename B>
Expected<std::unique_ptr<exec::DeviceKernel>> make_kernel(B&, const exec::KernelInit& init) {
  return std::unique_ptr<exec::DeviceKernel>(new K(init));
}

// Placement rule of a table entry: supported when every present input is a tensor, every device
// input has the wanted dtype (f32, or bool per bool_inputs) and a known shape of rank <= 6, at
// least one input is on the device, and check passes.
inline exec::DeviceSupport table_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs, uint32_t host_inputs,
                                         uint32_t bool_inputs, CheckFn check) {
  exec::DeviceSupport s;
  if (inputs.size() < node.inputs.size()) return s;
  bool any_device_input = false;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    if (node.inputs[k] < 0) continue;
    const ops::ValueType& t = inputs[k];
    if (t.kind != ValueKind::kTensor) return s;
    if (k < 32 && (host_inputs >> k & 1u)) continue;
    const DType want = k < 32 && (bool_inputs >> k & 1u) ? DType::kBool : DType::kF32;
    if (t.dtype != want || !t.has_shape || t.shape.size() > 6) return s;
    any_device_input = true;
  }
  if (!any_device_input) return s;
  if (check && !check(node, inputs)) return s;
  s.supported = true;
  s.host_inputs = host_inputs;
  return s;
}

template <class B>
class OpTable {
 public:
  // `backend` names the backend in messages ("Vulkan", "CUDA").
  explicit OpTable(const char* backend) : backend_(backend) {}

  // Adds op `name`; false (and the table unchanged) when it is already there.
  bool try_add(std::string_view name, OpDef<B> def) { return defs_.emplace(std::string(name), def).second; }
  // Adds op `name`. Registration is fixed code run once: a duplicate is a bug that would silently
  // replace a kernel, so it aborts (as the CPU kernel registry does).
  void add(std::string_view name, OpDef<B> def) {
    if (try_add(name, def)) return;
    std::fprintf(stderr, "tessera: %s kernel for '%.*s' registered twice\n", backend_, static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
  void add(std::string_view name, uint32_t host_inputs, CheckFn check,
           Expected<std::unique_ptr<exec::DeviceKernel>> (*create)(B&, const exec::KernelInit&), uint32_t bool_inputs = 0) {
    add(name, OpDef<B>{host_inputs, bool_inputs, check, create});
  }

  const char* backend() const { return backend_; }
  const std::map<std::string, OpDef<B>, std::less<>>& all() const { return defs_; }
  const OpDef<B>* find(std::string_view op) const {
    auto it = defs_.find(op);
    return it == defs_.end() ? nullptr : &it->second;
  }

  // The DeviceBackend methods of a table-driven backend.
  std::vector<DType> kernel_dtypes(std::string_view op) const {
    return find(op) ? std::vector<DType>{DType::kF32} : std::vector<DType>{};
  }
  exec::DeviceSupport device_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const {
    const OpDef<B>* def = find(node.op);
    if (!def) return {};
    return table_support(node, inputs, def->host_inputs, def->bool_inputs, def->check);
  }
  Expected<std::unique_ptr<exec::DeviceKernel>> create(B& backend, const exec::KernelInit& init) const {
    const OpDef<B>* def = find(init.node.op);
    if (!def) return unsupported(init.place, ": no ", backend_, " kernel for ", init.node.op);
    return def->create(backend, init);
  }

 private:
  const char* backend_;
  std::map<std::string, OpDef<B>, std::less<>> defs_;
};

// The op families every device backend has, one per ops/<family>.cpp file: each backend defines
// the four for its class B (an explicit specialization that adds its policy's instance of the
// family written in device_common/<family>.h).
template <class B> void register_elementwise(OpTable<B>& t);
template <class B> void register_linear(OpTable<B>& t);
template <class B> void register_data_movement(OpTable<B>& t);
template <class B> void register_reduce(OpTable<B>& t);

// Declares backend class B's four specializations; the translation unit that builds B's table
// (make_op_table) must see them (a specialization is declared before its use). Used inside
// namespace tsr::device_common.
#define TSR_DEVICE_FAMILIES(B)                                   \
  template <> void register_elementwise<B>(OpTable<B> & t);      \
  template <> void register_linear<B>(OpTable<B> & t);           \
  template <> void register_data_movement<B>(OpTable<B> & t);    \
  template <> void register_reduce<B>(OpTable<B> & t);

// A backend's table, named `backend` ("Vulkan", "CUDA"): the four families, then the backend's
// own (`extra`), in order.
template <class B>
OpTable<B> make_op_table(const char* backend, std::initializer_list<void (*)(OpTable<B>&)> extra = {}) {
  OpTable<B> t(backend);
  register_elementwise<B>(t);
  register_linear<B>(t);
  register_data_movement<B>(t);
  register_reduce<B>(t);
  for (auto add_family : extra) add_family(t);
  return t;
}

// The self-check the backends' headers promise: every entry names an op of the op registry, has a
// factory, and reads on the host or as bool only inputs the op can have (and no input both ways).
// kInternal naming the first bad entry.
template <class B>
Status check_op_table(const OpTable<B>& table) {
  for (const auto& [name, def] : table.all()) {
    const ops::OpDef* op = ops::OpRegistry::global().find(name);
    if (!op) return internal_error(table.backend(), " op table: '", name, "' is not an op of the registry");
    if (!def.create) return internal_error(table.backend(), " op table: '", name, "' has no kernel factory");
    if (def.host_inputs & def.bool_inputs)
      return internal_error(table.backend(), " op table: '", name, "' reads an input both on the host and as bool");
    const uint32_t masks = def.host_inputs | def.bool_inputs;
    if (op->max_inputs >= 0 && op->max_inputs < 32 && (masks >> op->max_inputs) != 0)
      return internal_error(table.backend(), " op table: '", name, "' names inputs past its ", op->max_inputs);
  }
  return ok_status();
}

}  // namespace tsr::device_common
