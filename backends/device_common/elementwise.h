// Device-independent parts of the device backends' elementwise families (Vulkan, CUDA): the
// placement checks the backends share and the ops that are views. Header-only.
#pragma once

#include <vector>

#include "backends/device_common/host_inputs.h"
#include "core/ir/graph.h"

namespace tsr::device_common {

// Elementwise binary ops take exactly two inputs on a device (variadic Sum/Max/... stay on the CPU).
inline bool binary_check(const ir::Node& node, const std::vector<ops::ValueType>&) { return node.inputs.size() == 2; }
// Gelu: the exact (erf) form only.
inline bool gelu_check(const ir::Node& node, const std::vector<ops::ValueType>&) {
  return node.attr_string("approximate", "none") == "none";
}
// Dropout at inference only: no training_mode input, no mask output.
inline bool dropout_check(const ir::Node& node, const std::vector<ops::ValueType>&) {
  return node.inputs.size() <= 2 && (node.outputs.size() < 2 || node.outputs[1] < 0);
}

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, inference Dropout: the input's buffer with the
// inferred output shape (no work recorded; the output aliases the input).
class ViewKernel final : public exec::DeviceKernel {
 public:
  explicit ViewKernel(const exec::KernelInit&) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    exec::DeviceTensor v = *ctx.device_input(0);
    v.shape = ctx.output_type(0).shape;
    ctx.set_output(0, std::move(v));
    return ok_status();
  }
};

// Adds the view ops through add(name, host_inputs_mask, check_or_null, factory); B: the backend class.
template <class B, class Add>
void register_view_ops(Add&& add) {
  add("Reshape", 0b10u, nullptr, &make_kernel<ViewKernel, B>);
  add("Flatten", 0u, nullptr, &make_kernel<ViewKernel, B>);
  add("Squeeze", 0b10u, nullptr, &make_kernel<ViewKernel, B>);
  add("Unsqueeze", 0b10u, nullptr, &make_kernel<ViewKernel, B>);
  add("Identity", 0u, nullptr, &make_kernel<ViewKernel, B>);
  add("Dropout", 0b110u, &dropout_check, &make_kernel<ViewKernel, B>);
}

}  // namespace tsr::device_common
