// Device-independent helpers of the device backends' host code (Vulkan, CUDA): reading host
// inputs (shapes, axes, scalars). Dense strides and broadcasting are core/tensor's
// (shape_strides, broadcast_strides). Header-only; depends only on base, tensor and the exec
// device interface (DESIGN.md §2), so every backend can include it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/device.h"

namespace tsr::device_common {

// An integer host tensor (i64 or i32) as int64 values; kInvalidArgument naming the input otherwise.
inline Expected<std::vector<int64_t>> host_ints(const exec::DeviceKernelContext& ctx, size_t k) {
  const Tensor* t = ctx.host_input(k);
  if (!t) return ctx.error("input[", k, "] is missing");
  std::vector<int64_t> v(static_cast<size_t>(t->numel()));
  if (t->dtype() == DType::kI64) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t->data<int64_t>()[i];
  } else if (t->dtype() == DType::kI32) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t->data<int32_t>()[i];
  } else {
    return ctx.error("input[", k, "] is ", dtype_name(t->dtype()), ", expected an integer tensor");
  }
  return v;
}

// A float host scalar (f32/f64, or i64), e.g. a learning rate; kInvalidArgument naming the input otherwise.
inline Expected<double> host_scalar(const exec::DeviceKernelContext& ctx, size_t k) {
  const Tensor* t = ctx.host_input(k);
  if (!t || t->numel() != 1) return ctx.error("input[", k, "] must be a scalar");
  if (t->dtype() == DType::kF32) return static_cast<double>(t->data<float>()[0]);
  if (t->dtype() == DType::kF64) return t->data<double>()[0];
  if (t->dtype() == DType::kI64) return static_cast<double>(t->data<int64_t>()[0]);
  return ctx.error("input[", k, "] is ", dtype_name(t->dtype()), ", expected a float scalar");
}

// A possibly negative axis made non-negative (range checks are the caller's).
inline int64_t norm_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

}  // namespace tsr::device_common
