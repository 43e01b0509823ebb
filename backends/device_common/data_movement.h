// Data movement on a device backend, written once for every backend: Transpose, Slice, Concat,
// Split, Expand and constant Pad as strided copies (+ a fill), Gather (indices checked and wrapped
// on the host), Resize nearest/linear of the last two dims. What is device-independent lives here
// (attribute and host-input parsing, stride/offset geometry, the decomposition into primitives,
// error messages); a backend supplies the primitives as a policy class P with static members:
//   using Backend = ...;                       the backend class its op table's factories take
//   static constexpr const char* kName;        "CUDA", "Vulkan": in messages
//   Status copy_strided(ctx, x, y, shape, is, io, os, oo)   (Shapes; rank <= kMaxRank)
//       y[oo + i . os] = x[io + i . is] for every index i of `shape` (element strides/offsets)
//   Status fill(ctx, y, float value)           y[:] = value
//   Status gather(ctx, x, idx, y, const GatherGeom&)   idx: i32, in range (checked here)
//   Status resize(ctx, x, y, const ResizeGeom&)
// All take f32 device tensors; errors name ctx.place(). Attributes are read once, when a kernel is
// created. Thread safety: as the kernels' record().
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "backends/device_common/geometry.h"
#include "backends/device_common/host_inputs.h"
#include "backends/device_common/op_table.h"
#include "core/ir/graph.h"
#include "core/tensor/broadcast.h"

namespace tsr::device_common {

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
    Ints perm = perm_;
    if (perm.empty())
      for (size_t d = 0; d < r; ++d) perm.push_back(static_cast<int64_t>(r - 1 - d));
    const Shape xs = shape_strides(x.shape);
    Shape is(r);
    for (size_t d = 0; d < r; ++d) is[d] = xs[static_cast<size_t>(perm[d])];
    return P::copy_strided(ctx, x, *y, y->shape, is, 0, shape_strides(y->shape), 0);
  }

 private:
  Ints perm_;
};

template <class P>
class SliceKernel final : public exec::DeviceKernel {
 public:
  // Opset < 10 Slice has starts/axes attributes (and no ends input: the output shape says them).
  explicit SliceKernel(const exec::KernelInit& init)
      : starts_(init.node.attr_ints("starts")),
        axes_(init.node.attr_ints("axes")) {}
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
      starts.assign(starts_.begin(), starts_.end());
      axes.assign(axes_.begin(), axes_.end());
    }
    if (axes.empty())
      for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size()) return ctx.error("starts/axes/steps differ in length");
    const Shape xs = shape_strides(x.shape);
    Shape is = xs;
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
    return P::copy_strided(ctx, x, *y, y->shape, is, io, shape_strides(y->shape), 0);
  }

 private:
  Ints starts_, axes_;
};

// Concat (inputs -> y) and Split (x -> outputs): each part is a window of the whole along `axis`,
// one strided copy per part, in order.
template <class P>
class PartsKernel final : public exec::DeviceKernel {
 public:
  explicit PartsKernel(const exec::KernelInit& init)
      : axis_(init.node.attr_int("axis")), split_(init.node.op == "Split") {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor* whole = split_ ? ctx.device_input(0) : nullptr;
    if (!split_) {
      TSR_ASSIGN_OR_RETURN(whole, ctx.alloc_output(0));
    }
    const size_t ax = static_cast<size_t>(norm_axis(axis_, whole->shape.size()));
    const Shape ws = shape_strides(whole->shape);
    int64_t offset = 0;
    for (size_t k = 0; k < (split_ ? ctx.num_outputs() : ctx.num_inputs()); ++k) {
      const DeviceTensor* part = nullptr;
      if (!split_) {
        part = ctx.device_input(k);
      } else if (ctx.node().outputs[k] >= 0) {
        TSR_ASSIGN_OR_RETURN(part, ctx.alloc_output(k));
      }
      if (!part) continue;
      const Shape ps = shape_strides(part->shape);
      if (part->numel() > 0)
        TSR_RETURN_IF_ERROR(split_ ? P::copy_strided(ctx, *whole, *part, part->shape, ws, offset * ws[ax], ps, 0)
                                   : P::copy_strided(ctx, *part, *whole, part->shape, ps, 0, ws, offset * ws[ax]));
      offset += part->shape[ax];
    }
    return ok_status();
  }

 private:
  int64_t axis_;
  bool split_;
};

template <class P>
class ExpandKernel final : public exec::DeviceKernel {
 public:
  explicit ExpandKernel(const exec::KernelInit&) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    return P::copy_strided(ctx, x, *y, y->shape, broadcast_strides(x.shape, y->shape.size()), 0, shape_strides(y->shape), 0);
  }
};

template <class P>
class PadKernel final : public exec::DeviceKernel {
 public:
  // Opset < 11 Pad has pads/value attributes; later opsets give them as inputs.
  explicit PadKernel(const exec::KernelInit& init)
      : pads_(init.node.attr_ints("pads")),
        value_(static_cast<float>(init.node.attr_float("value"))) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const size_t r = x.shape.size();
    std::vector<int64_t> pads(pads_.begin(), pads_.end());
    float value = value_;
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
    const Shape xs = shape_strides(x.shape), ys = shape_strides(y->shape);
    Shape win(r);
    int64_t io = 0, oo = 0;
    for (size_t d = 0; d < r; ++d) {
      const int64_t crop_b = std::max<int64_t>(0, -begin[d]), crop_e = std::max<int64_t>(0, -end[d]);
      win[d] = std::max<int64_t>(0, x.shape[d] - crop_b - crop_e);
      io += crop_b * xs[d];
      oo += std::max<int64_t>(0, begin[d]) * ys[d];
    }
    if (shape_numel(win) == 0) return ok_status();
    return P::copy_strided(ctx, x, *y, win, xs, io, ys, oo);
  }

 private:
  Ints pads_;
  float value_;
};

inline bool pad_check(const ir::Node& node, const std::vector<ops::ValueType>&) {
  return node.attr_string("mode") == "constant";
}

template <class P>
class GatherKernel final : public exec::DeviceKernel {
 public:
  explicit GatherKernel(const exec::KernelInit& init) : axis_(init.node.attr_int("axis")) {}
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
  const std::string mode = node.attr_string("mode");
  return in[0].shape.size() == 4 && (mode == "nearest" || mode == "linear") && node.attr_int("antialias") == 0 &&
         mode_code(kCoord, node.attr_string("coordinate_transformation_mode")) >= 0 &&
         mode_code(kNearest, node.attr_string("nearest_mode")) >= 0 && node.attr_ints("axes").empty();
}

template <class P>
class ResizeKernel final : public exec::DeviceKernel {
 public:
  explicit ResizeKernel(const exec::KernelInit& init)
      : mode_(init.node.attr_string("mode") == "linear" ? 1 : 0),
        coord_(mode_code(kCoord, init.node.attr_string("coordinate_transformation_mode"))),
        nearest_(mode_code(kNearest, init.node.attr_string("nearest_mode"))) {}
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
    p.mode = mode_;
    p.coord = coord_;
    p.nearest = nearest_;
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
  int32_t mode_, coord_, nearest_;
};

}  // namespace data_movement_detail

// Adds the family's ops to a backend's table.
template <class P>
void register_data_movement_ops(OpTable<typename P::Backend>& t) {
  namespace d = data_movement_detail;
  using B = typename P::Backend;
  t.add("Transpose", 0u, nullptr, &make_kernel<d::TransposeKernel<P>, B>);
  t.add("Slice", 0b11110u, nullptr, &make_kernel<d::SliceKernel<P>, B>);
  t.add("Concat", 0u, nullptr, &make_kernel<d::PartsKernel<P>, B>);
  t.add("Split", 0b10u, nullptr, &make_kernel<d::PartsKernel<P>, B>);
  t.add("Expand", 0b10u, nullptr, &make_kernel<d::ExpandKernel<P>, B>);
  t.add("Pad", 0b1110u, &d::pad_check, &make_kernel<d::PadKernel<P>, B>);
  t.add("Gather", 0b10u, nullptr, &make_kernel<d::GatherKernel<P>, B>);
  t.add("Resize", 0b1110u, &d::resize_check, &make_kernel<d::ResizeKernel<P>, B>);
}

}  // namespace tsr::device_common
