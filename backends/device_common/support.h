// Placement rule shared by the device backends' op tables (Vulkan, CUDA): which nodes a table
// entry takes. Header-only; no device needed, so placement is testable on any machine.
#pragma once

#include <cstdint>
#include <vector>

#include "core/exec/device.h"

namespace tsr::device_common {

// An op-table entry's placement fields.
//   host_inputs: bit k = input k is read on the host (shapes, axes, scalars), any dtype;
//   bool_inputs: bit k = device input k is bool (u8) instead of f32; inputs past the 32nd are f32;
//   check: extra test of the node and its load-time input types (null: none).
// Supported when every present input is a tensor, every device input has the wanted dtype and a
// known shape of rank <= 6, at least one input is on the device, and check passes.
inline exec::DeviceSupport table_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs, uint32_t host_inputs,
                                         uint32_t bool_inputs,
                                         bool (*check)(const ir::Node&, const std::vector<ops::ValueType>&)) {
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

}  // namespace tsr::device_common
