// Helpers shared by the Vulkan kernel families (not part of the backend's interface).
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/vulkan/vulkan_backend.h"

namespace tsr::vulkan {

inline VulkanBackend& vk(exec::DeviceKernelContext& ctx) { return static_cast<VulkanBackend&>(ctx.backend()); }

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

// Numpy-style strides of a dense shape.
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

inline int64_t norm_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

// Push constants of copy_strided.comp.
struct CopyPush {
  uint32_t n = 0, rank = 0;
  int32_t io = 0, oo = 0;
  uint32_t shape[6] = {};
  int32_t is[6] = {};
  int32_t os[6] = {};
};

// Records y[window] = x[window] over `shape` with element strides / offsets (rank <= 6).
inline Status copy_strided(VulkanBackend& b, const exec::DeviceTensor& x, const exec::DeviceTensor& y, const Shape& shape,
                           const std::vector<int64_t>& is, int64_t io, const std::vector<int64_t>& os, int64_t oo) {
  if (shape.size() > 6) return unsupported("vulkan: copy of rank ", shape.size(), " (at most 6)");
  CopyPush p;
  p.n = static_cast<uint32_t>(numel_of(shape));
  p.rank = static_cast<uint32_t>(shape.size());
  p.io = static_cast<int32_t>(io);
  p.oo = static_cast<int32_t>(oo);
  for (size_t d = 0; d < shape.size(); ++d) {
    p.shape[d] = static_cast<uint32_t>(shape[d]);
    p.is[d] = static_cast<int32_t>(is[d]);
    p.os[d] = static_cast<int32_t>(os[d]);
  }
  return b.dispatch_1d("copy_strided", {VulkanBackend::binding(x), VulkanBackend::binding(y)}, &p, sizeof p, p.n);
}

template <typename K>
Expected<std::unique_ptr<exec::DeviceKernel>> make_kernel(VulkanBackend&, const exec::KernelInit& init) {
  return std::unique_ptr<exec::DeviceKernel>(new K(init));
}

}  // namespace tsr::vulkan
