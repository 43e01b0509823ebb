// Device-independent helpers of the device backends' host-side kernel code (Vulkan, CUDA):
// reading host inputs (shapes, axes, scalars) and dense-layout geometry. Header-only; depends only
// on base, tensor and the exec device interface (DESIGN.md §2), so every backend can include it.
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

// Numpy-style element strides of a dense row-major shape.
inline std::vector<int64_t> dense_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t d = s.size(); d-- > 0;) {
    st[d] = acc;
    acc *= s[d];
  }
  return st;
}

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A possibly negative axis made non-negative (range checks are the caller's).
inline int64_t norm_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

// ONNX auto_pad of a windowed op (Conv, pooling) over nsp spatial dims: SAME_UPPER / SAME_LOWER
// set pads (leading [0, nsp), trailing [nsp, 2 nsp)) so that the output has out[d] positions,
// VALID zeroes them, NOTSET keeps the given ones. in/out/k: the spatial sizes, kernel taps in
// dim d; strides and dilations one per dim.
inline void resolve_auto_pad(const std::string& auto_pad, size_t nsp, const int64_t* in, const int64_t* out, const int64_t* k,
                             const std::vector<int64_t>& strides, const std::vector<int64_t>& dil, std::vector<int64_t>& pads) {
  for (size_t d = 0; d < nsp; ++d) {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, (out[d] - 1) * strides[d] + (k[d] - 1) * dil[d] + 1 - in[d]);
      pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[d + nsp] = total - pads[d];
    } else if (auto_pad == "VALID") {
      pads[d] = pads[d + nsp] = 0;
    }
  }
}

// The factory a backend's op table stores for kernel class K (B: the backend's class).
template <typename K, typename B>
Expected<std::unique_ptr<exec::DeviceKernel>> make_kernel(B&, const exec::KernelInit& init) {
  return std::unique_ptr<exec::DeviceKernel>(new K(init));
}

}  // namespace tsr::device_common
