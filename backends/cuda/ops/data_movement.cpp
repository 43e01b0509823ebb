// Data movement on the device: Transpose, Slice, Concat, Split, Expand and constant Pad as strided
// copies (+ a fill), Gather (indices checked and wrapped on the host), Resize nearest/linear.
#include "backends/cuda/ops/common.h"

namespace tsr::cuda {

namespace {

using exec::DeviceKernelContext;
using exec::DeviceTensor;

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
    return copy_strided(ctx, x, *y, y->shape, is, 0, dense_strides(y->shape), 0);
  }

 private:
  std::vector<int64_t> perm_;
};

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
    return copy_strided(ctx, x, *y, y->shape, is, io, dense_strides(y->shape), 0);
  }

 private:
  const ir::Node& node_;
};

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
        TSR_RETURN_IF_ERROR(copy_strided(ctx, *x, *y, x->shape, dense_strides(x->shape), 0, ys, offset * ys[ax]));
      offset += x->shape[ax];
    }
    return ok_status();
  }

 private:
  int64_t axis_;
};

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
        TSR_RETURN_IF_ERROR(copy_strided(ctx, x, *y, y->shape, xs, offset * xs[ax], dense_strides(y->shape), 0));
      offset += y->shape[ax];
    }
    return ok_status();
  }

 private:
  int64_t axis_;
};

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
    return copy_strided(ctx, x, *y, y->shape, is, 0, dense_strides(y->shape), 0);
  }
};

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
    TSR_RETURN_IF_ERROR(launched(ctx, k::fill(stream_of(ctx), ptr(*y), value, y->numel())));
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
    return copy_strided(ctx, x, *y, win, xs, io, ys, oo);
  }

 private:
  const ir::Node& node_;
};

bool pad_check(const ir::Node& node, const std::vector<ops::ValueType>&) {
  return node.attr_string("mode", "constant") == "constant";
}

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
    // The staged upload is ordered before the kernel on the one stream; `di` is freed after it.
    TSR_ASSIGN_OR_RETURN(DeviceTensor di, cu(ctx).upload(it));
    int64_t inner = 1, outer = 1;
    for (size_t d = ax + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    for (size_t d = 0; d < ax; ++d) outer *= x.shape[d];
    return launched(ctx, k::gather(stream_of(ctx), ptr(x), ptr<int32_t>(di), ptr(*y), outer, len,
                                   static_cast<int64_t>(i32.size()), inner));
  }

 private:
  int64_t axis_;
};

int mode_code(const std::vector<std::string>& names, const std::string& v) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == v) return static_cast<int>(i);
  return -1;
}
const std::vector<std::string> kCoord = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                         "tf_half_pixel_for_nn"};
const std::vector<std::string> kNearest = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

bool resize_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  const std::string mode = node.attr_string("mode", "nearest");
  return in[0].shape.size() == 4 && (mode == "nearest" || mode == "linear") && node.attr_int("antialias", 0) == 0 &&
         mode_code(kCoord, node.attr_string("coordinate_transformation_mode", "half_pixel")) >= 0 &&
         mode_code(kNearest, node.attr_string("nearest_mode", "round_prefer_floor")) >= 0 && node.attr_ints("axes").empty();
}

class ResizeKernel final : public exec::DeviceKernel {
 public:
  explicit ResizeKernel(const exec::KernelInit& init) : node_(init.node) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    if (y->shape[0] != x.shape[0] || y->shape[1] != x.shape[1])
      return unsupported(ctx.place(), ": the CUDA Resize scales only the last two dims");
    k::ResizeParams p{};
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
    return launched(ctx, k::resize(stream_of(ctx), p, ptr(x), ptr(*y)));
  }

 private:
  const ir::Node& node_;
};

}  // namespace

void register_data_movement(CuOpTable& t) {
  t["Transpose"] = {0, 0, nullptr, &make_kernel<TransposeKernel>};
  t["Slice"] = {0b11110, 0, nullptr, &make_kernel<SliceKernel>};
  t["Concat"] = {0, 0, nullptr, &make_kernel<ConcatKernel>};
  t["Split"] = {0b10, 0, nullptr, &make_kernel<SplitKernel>};
  t["Expand"] = {0b10, 0, nullptr, &make_kernel<ExpandKernel>};
  t["Pad"] = {0b1110, 0, &pad_check, &make_kernel<PadKernel>};
  t["Gather"] = {0b10, 0, nullptr, &make_kernel<GatherKernel>};
  t["Resize"] = {0b1110, 0, &resize_check, &make_kernel<ResizeKernel>};
}

}  // namespace tsr::cuda
