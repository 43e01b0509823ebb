// Data movement on a device backend, written once for every backend: Transpose, Slice, Concat,
// Split, Expand and constant Pad as strided copies (+ a fill), Gather (indices checked and wrapped
// on the host), Resize nearest/linear of the last two dims. What is device-independent lives here
// (attribute and host-input parsing, stride/offset geometry, the decomposition into primitives,
// error messages); a backend supplies the primitives as a policy class P with static members:
//   using Backend = ...;                       the backend class its op table's factories take
//   static constexpr const char* kName;        "CUDA", "Vulkan": in messages
//   Status copy_strided(ctx, x, y, shape, is, io, os, oo)
//       y[oo + i . os] = x[io + i . is] for every index i of `shape` (element strides/offsets)
//   Status fill(ctx, y, float value)           y[:] = value
//   Status gather(ctx, x, idx, y, const GatherGeom&)   idx: i32, in range (checked here)
//   Status resize(ctx, x, y, const ResizeGeom&)
// All take f32 device tensors; errors name ctx.place(). Thread safety: as the kernels' record().
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "backends/device_common/host_inputs.h"
#include "core/ir/graph.h"

namespace tsr::device_common {

// y[o, j, i] = x[o, idx[j], i] with o < outer, j < n_idx, i < inner; idx values in [0, axis_len).
struct GatherGeom {
  int64_t outer, axis_len, n_idx, inner;
};

// Resize of the last two dims of NC planes (x [NC, H, W] -> y [NC, OH, OW]). mode 0 nearest,
// 1 linear; coord 0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel,
// 4 tf_half_pixel_for_nn; nearest 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil;
// sh, sw the scales (out / in, or as given).
struct ResizeGeom {
  int64_t NC, H, W, OH, OW;
  int32_t mode, coord, nearest;
  float sh, sw;
};

namespace data_movement_detail {

using exec::DeviceKernelContext;
using exec::DeviceTensor;

template <class P>
class TransposeKernel final : public exec::DeviceKernel {
 public:
  explicit TransposeKernel(const exec::KernelInit& init) : perm_(init.node.attr_ints("perm")) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    const size_t r = x.shape.size();
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (size_t d = 0; d < r; ++d) perm.push_back(static_cast<int64_t>(r - 1 - d));
    const std::vector<int64_t> xs = dense_strides(x.shape);
    std::vector<int64_t> is(r);
    for (size_t d = 0; d < r; ++d) is[d] = xs[static_cast<size_t>(perm[d])];
    return P::copy_strided(ctx, x, *y, y->shape, is, 0, dense_strides(y->shape), 0);
  }

 private:
  std::vector<int64_t> perm_;
};

template <class P>
class SliceKernel final : public exec::DeviceKernel {
 public:
  explicit SliceKernel(const exec::KernelInit& init) : node_(init.node) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    const size_t r = x.shape.size();
    std::vector<int64_t> starts, axes, steps;
    if (ctx.num_inputs() >= 3) {
      TSR_ASSIGN_OR_RETURN(starts, host_ints(ctx, 1));
      if (ctx.host_input(3)) {
        TSR_ASSIGN_OR_RETURN(axes, host_ints(ctx, 3));
      }
      if (ctx.host_input(4)) {
        TSR_ASSIGN_OR_RETURN(steps, host_ints(ctx, 4));
      }
    } else {
      starts = node_.attr_ints("starts");
      axes = node_.attr_ints("axes");
    }
    if (axes.empty())
      for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size()) return ctx.error("starts/axes/steps differ in length");
    const std::vector<int64_t> xs = dense_strides(x.shape);
    std::vector<int64_t> is = xs;
    int64_t io = 0;
    for (size_t k = 0; k < starts.size(); ++k) {
      const int64_t ax = norm_axis(axes[k], r);
      if (ax < 0 || ax >= static_cast<int64_t>(r)) return ctx.error("axis ", axes[k], " out of range");
      const int64_t dim = x.shape[static_cast<size_t>(ax)], step = steps[k];
      if (step == 0) return ctx.error("step 0");
      int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
      s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
      io += s * xs[static_cast<size_t>(ax)];
      is[static_cast<size_t>(ax)] = xs[static_cast<size_t>(ax)] * step;
    }
    if (y->numel() == 0) return ok_status();
    return P::copy_strided(ctx, x, *y, y->shape, is, io, dense_strides(y->shape), 0);
  }

 private:
  const ir::Node& node_;
};

template <class P>
class ConcatKernel final : public exec::DeviceKernel {
 public:
  explicit ConcatKernel(const exec::KernelInit& init) : axis_(init.node.attr_int("axis", 0)) {}
  Status record(DeviceKernelContext& ctx) override {
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    const size_t ax = static_cast<size_t>(norm_axis(axis_, y->shape.size()));
    const std::vector<int64_t> ys = dense_strides(y->shape);
    int64_t offset = 0;
    for (size_t k = 0; k < ctx.num_inputs(); ++k) {
      const DeviceTensor* x = ctx.device_input(k);
      if (!x) continue;
      if (x->numel() > 0)
        TSR_RETURN_IF_ERROR(P::copy_strided(ctx, *x, *y, x->shape, dense_strides(x->shape), 0, ys, offset * ys[ax]));
      offset += x->shape[ax];
    }
    return ok_status();
  }

 private:
  int64_t axis_;
};

template <class P>
class SplitKernel final : public exec::DeviceKernel {
 public:
  explicit SplitKernel(const exec::KernelInit& init) : axis_(init.node.attr_int("axis", 0)) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const size_t ax = static_cast<size_t>(norm_axis(axis_, x.shape.size()));
    const std::vector<int64_t> xs = dense_strides(x.shape);
    int64_t offset = 0;
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
      if (ctx.node().outputs[i] < 0) continue;
      TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(i));
      if (y->numel() > 0)
        TSR_RETURN_IF_ERROR(P::copy_strided(ctx, x, *y, y->shape, xs, offset * xs[ax], dense_strides(y->shape), 0));
      offset += y->shape[ax];
    }
    return ok_status();
  }

 private:
  int64_t axis_;
};

template <class P>
class ExpandKernel final : public exec::DeviceKernel {
 public:
  explicit ExpandKernel(const exec::KernelInit&) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    const size_t r = y->shape.size(), lead = r - x.shape.size();
    const std::vector<int64_t> xs = dense_strides(x.shape);
    std::vector<int64_t> is(r, 0);
    for (size_t d = lead; d < r; ++d) is[d] = x.shape[d - lead] == 1 ? 0 : xs[d - lead];
    return P::copy_strided(ctx, x, *y, y->shape, is, 0, dense_strides(y->shape), 0);
  }
};

template <class P>
class PadKernel final : public exec::DeviceKernel {
 public:
  explicit PadKernel(const exec::KernelInit& init) : node_(init.node) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const size_t r = x.shape.size();
    std::vector<int64_t> pads = node_.attr_ints("pads");
    float value = static_cast<float>(node_.attr_float("value", 0.0));
    if (ctx.host_input(1)) {
      TSR_ASSIGN_OR_RETURN(pads, host_ints(ctx, 1));
    }
    if (const Tensor* v = ctx.host_input(2)) {
      if (v->dtype() != DType::kF32 || v->numel() != 1) return ctx.error("constant_value must be an f32 scalar");
      value = v->data<float>()[0];
    }
    std::vector<int64_t> begin(r, 0), end(r, 0);
    std::vector<int64_t> axes;
    if (ctx.host_input(3)) {
      TSR_ASSIGN_OR_RETURN(axes, host_ints(ctx, 3));
    }
    if (axes.empty())
      for (size_t d = 0; d < r; ++d) axes.push_back(static_cast<int64_t>(d));
    if (pads.size() != 2 * axes.size()) return ctx.error("pads has ", pads.size(), " values for ", axes.size(), " axes");
    for (size_t k = 0; k < axes.size(); ++k) {
      const size_t ax = static_cast<size_t>(norm_axis(axes[k], r));
      begin[ax] = pads[k];
      end[ax] = pads[k + axes.size()];
    }
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    TSR_RETURN_IF_ERROR(P::fill(ctx, *y, value));
    // The kept part of x lands at max(begin, 0); negative pads crop.
    const std::vector<int64_t> xs = dense_strides(x.shape), ys = dense_strides(y->shape);
    Shape win(r);
    int64_t io = 0, oo = 0;
    for (size_t d = 0; d < r; ++d) {
      const int64_t crop_b = std::max<int64_t>(0, -begin[d]), crop_e = std::max<int64_t>(0, -end[d]);
      win[d] = std::max<int64_t>(0, x.shape[d] - crop_b - crop_e);
      io += crop_b * xs[d];
      oo += std::max<int64_t>(0, begin[d]) * ys[d];
    }
    if (numel_of(win) == 0) return ok_status();
    return P::copy_strided(ctx, x, *y, win, xs, io, ys, oo);
  }

 private:
  const ir::Node& node_;
};

inline bool pad_check(const ir::Node& node, const std::vector<ops::ValueType>&) {
  return node.attr_string("mode", "constant") == "constant";
}

template <class P>
class GatherKernel final : public exec::DeviceKernel {
 public:
  explicit GatherKernel(const exec::KernelInit& init) : axis_(init.node.attr_int("axis", 0)) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const size_t ax = static_cast<size_t>(norm_axis(axis_, x.shape.size()));
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> idx, host_ints(ctx, 1));
    const int64_t len = x.shape[ax];
    std::vector<int32_t> i32(idx.size());
    for (size_t j = 0; j < idx.size(); ++j) {
      const int64_t v = idx[j] < 0 ? idx[j] + len : idx[j];
      if (v < 0 || v >= len) return ctx.error("index ", idx[j], " out of range for axis of ", len);
      i32[j] = static_cast<int32_t>(v);
    }
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    if (y->numel() == 0) return ok_status();
    Tensor it = Tensor::from<int32_t>({static_cast<int64_t>(i32.size())}, i32);
    // The backend orders the upload before the gather it records (CUDA: the one stream; Vulkan:
    // the command buffer), so `di` may be released when record() returns.
    TSR_ASSIGN_OR_RETURN(DeviceTensor di, ctx.backend().upload(it));
    int64_t inner = 1, outer = 1;
    for (size_t d = ax + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    for (size_t d = 0; d < ax; ++d) outer *= x.shape[d];
    return P::gather(ctx, x, di, *y, GatherGeom{outer, len, static_cast<int64_t>(i32.size()), inner});
  }

 private:
  int64_t axis_;
};

inline int mode_code(const std::vector<std::string>& names, const std::string& v) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == v) return static_cast<int>(i);
  return -1;
}
inline const std::vector<std::string> kCoord = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                         "tf_half_pixel_for_nn"};
inline const std::vector<std::string> kNearest = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

inline bool resize_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  const std::string mode = node.attr_string("mode", "nearest");
  return in[0].shape.size() == 4 && (mode == "nearest" || mode == "linear") && node.attr_int("antialias", 0) == 0 &&
         mode_code(kCoord, node.attr_string("coordinate_transformation_mode", "half_pixel")) >= 0 &&
         mode_code(kNearest, node.attr_string("nearest_mode", "round_prefer_floor")) >= 0 && node.attr_ints("axes").empty();
}

template <class P>
class ResizeKernel final : public exec::DeviceKernel {
 public:
  explicit ResizeKernel(const exec::KernelInit& init) : node_(init.node) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    if (y->shape[0] != x.shape[0] || y->shape[1] != x.shape[1])
      return unsupported(ctx.place(), ": the ", P::kName, " Resize scales only the last two dims");
    ResizeGeom p{};
    p.NC = x.shape[0] * x.shape[1];
    p.H = x.shape[2];
    p.W = x.shape[3];
    p.OH = y->shape[2];
    p.OW = y->shape[3];
    p.mode = node_.attr_string("mode", "nearest") == "linear" ? 1 : 0;
    p.coord = mode_code(kCoord, node_.attr_string("coordinate_transformation_mode", "half_pixel"));
    p.nearest = mode_code(kNearest, node_.attr_string("nearest_mode", "round_prefer_floor"));
    p.sh = static_cast<float>(p.OH) / static_cast<float>(p.H);
    p.sw = static_cast<float>(p.OW) / static_cast<float>(p.W);
    // Given scales are used as given (they may differ from out/in after flooring).
    const Tensor* scales = ctx.host_input(2);
    if (scales && scales->numel() == 4 && scales->dtype() == DType::kF32) {
      p.sh = scales->data<float>()[2];
      p.sw = scales->data<float>()[3];
    }
    return P::resize(ctx, x, *y, p);
  }

 private:
  const ir::Node& node_;
};

}  // namespace data_movement_detail

// Adds the family's ops through add(name, host_inputs_mask, check_or_null, factory), the factory
// being &make_kernel<K, typename P::Backend>; each backend maps that onto its op-table entry.
template <class P, class Add>
void register_data_movement_ops(Add&& add) {
  namespace d = data_movement_detail;
  using B = typename P::Backend;
  add("Transpose", 0u, nullptr, &make_kernel<d::TransposeKernel<P>, B>);
  add("Slice", 0b11110u, nullptr, &make_kernel<d::SliceKernel<P>, B>);
  add("Concat", 0u, nullptr, &make_kernel<d::ConcatKernel<P>, B>);
  add("Split", 0b10u, nullptr, &make_kernel<d::SplitKernel<P>, B>);
  add("Expand", 0b10u, nullptr, &make_kernel<d::ExpandKernel<P>, B>);
  add("Pad", 0b1110u, &d::pad_check, &make_kernel<d::PadKernel<P>, B>);
  add("Gather", 0b10u, nullptr, &make_kernel<d::GatherKernel<P>, B>);
  add("Resize", 0b1110u, &d::resize_check, &make_kernel<d::ResizeKernel<P>, B>);
}

}  // namespace tsr::device_common
