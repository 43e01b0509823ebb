// Reductions on the device: Reduce* over any axes and SumTo (one reduction kernel with a mask of
// reduced dims), Softmax/LogSoftmax, Max/Average/Global pooling, and inference
// BatchNormalization (a per-channel affine with the statistics folded on the host).
#include <cmath>

#include "backends/cuda/ops/common.h"

namespace tsr::cuda {

using exec::DeviceKernelContext;
using exec::DeviceTensor;

Expected<k::PoolGeom> pool_geometry(const DeviceKernelContext& ctx, const ir::Node& node, const Shape& x, const Shape& y,
                                    int32_t mode) {
  if ((x.size() != 3 && x.size() != 4) || y.size() != x.size())
    return ctx.error("pool shapes ", shape_str(x), " -> ", shape_str(y), " are not 1-D or 2-D NC(H)W");
  const bool one_d = x.size() == 3;
  const size_t nsp = one_d ? 1 : 2;
  const bool global = node.op == "GlobalAveragePool" || node.op == "GlobalMaxPool";
  k::PoolGeom p{};
  p.mode = mode;
  p.NC = x[0] * x[1];
  p.H = one_d ? 1 : x[2];
  p.W = x.back();
  p.OH = one_d ? 1 : y[2];
  p.OW = y.back();
  if (global) {
    p.KH = p.H;
    p.KW = p.W;
    p.sh = p.sw = p.dh = p.dw = 1;
    return p;
  }
  const std::vector<int64_t> k = node.attr_ints("kernel_shape");
  const std::vector<int64_t> s = node.attr_ints("strides", std::vector<int64_t>(nsp, 1));
  const std::vector<int64_t> dl = node.attr_ints("dilations", std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * nsp, 0));
  if (k.size() != nsp || s.size() != nsp || dl.size() != nsp || pads.size() != 2 * nsp)
    return ctx.error("kernel_shape/strides/dilations/pads do not match ", nsp, " spatial dims");
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const int64_t in_sp[2] = {p.H, p.W}, out_sp[2] = {p.OH, p.OW};
  for (size_t d = 0; d < nsp; ++d) {
    const size_t i = one_d ? 1 : d;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, (out_sp[i] - 1) * s[d] + (k[d] - 1) * dl[d] + 1 - in_sp[i]);
      pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[d + nsp] = total - pads[d];
    } else if (auto_pad == "VALID") {
      pads[d] = pads[d + nsp] = 0;
    }
  }
  p.KH = one_d ? 1 : k[0];
  p.KW = k.back();
  p.sh = one_d ? 1 : s[0];
  p.sw = s.back();
  p.dh = one_d ? 1 : dl[0];
  p.dw = dl.back();
  p.ph = one_d ? 0 : pads[0];
  p.pw = pads[nsp - 1];
  p.peh = one_d ? 0 : pads[nsp];
  p.pew = pads[2 * nsp - 1];
  if (p.KH < 1 || p.KW < 1 || p.sh < 1 || p.sw < 1 || p.dh < 1 || p.dw < 1)
    return ctx.error("kernel_shape, strides and dilations must be >= 1");
  return p;
}

namespace {

using R = k::Reduce;

const std::map<std::string, R, std::less<>>& reduce_ops() {
  static const std::map<std::string, R, std::less<>> k = {
      {"ReduceSum", R::kSum},   {"ReduceMean", R::kMean},         {"ReduceMax", R::kMax},   {"ReduceMin", R::kMin},
      {"ReduceProd", R::kProd}, {"ReduceSumSquare", R::kSumSquare}, {"ReduceL1", R::kL1},  {"ReduceL2", R::kL2},
      {"ReduceLogSum", R::kLogSum}, {"ReduceLogSumExp", R::kLogSumExp}};
  return k;
}

Status record_reduce(DeviceKernelContext& ctx, R op, const DeviceTensor& x, DeviceTensor& y, uint32_t mask) {
  if (x.shape.size() > static_cast<size_t>(k::kMaxRank))
    return unsupported(ctx.place(), ": rank ", x.shape.size(), " exceeds the CUDA kernels' ", k::kMaxRank);
  if (x.numel() == 0) return unsupported(ctx.place(), ": empty reduction on the device");
  return launched(ctx, k::reduce(stream_of(ctx), op, x.shape.data(), static_cast<int32_t>(x.shape.size()), mask, ptr(x),
                                 ptr(y), y.numel()));
}

class ReduceKernel final : public exec::DeviceKernel {
 public:
  explicit ReduceKernel(const exec::KernelInit& init) : node_(init.node), op_(reduce_ops().at(init.node.op)) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const size_t r = x.shape.size();
    std::vector<int64_t> axes = node_.attr_ints("axes");
    if (ctx.host_input(1)) {
      TSR_ASSIGN_OR_RETURN(axes, host_ints(ctx, 1));
    }
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    uint32_t mask = 0;
    if (axes.empty() && node_.attr_int("noop_with_empty_axes", 0) == 0) mask = (1u << r) - 1;
    for (int64_t a : axes) {
      const int64_t ax = norm_axis(a, r);
      if (ax < 0 || ax >= static_cast<int64_t>(r)) return ctx.error("axis ", a, " out of range");
      mask |= 1u << ax;
    }
    return record_reduce(ctx, op_, x, *y, mask);
  }

 private:
  const ir::Node& node_;
  R op_;
};

// SumTo(X, shape): the sum of X over the dims it was broadcast along to reach `shape`.
class SumToKernel final : public exec::DeviceKernel {
 public:
  explicit SumToKernel(const exec::KernelInit&) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    const Shape& ys = y->shape;
    if (ys.size() > x.shape.size()) return ctx.error("target rank ", ys.size(), " exceeds the input's ", x.shape.size());
    const size_t lead = x.shape.size() - ys.size();
    uint32_t mask = 0;
    for (size_t d = 0; d < x.shape.size(); ++d) {
      const int64_t want = d < lead ? 1 : ys[d - lead];
      if (want == x.shape[d]) continue;
      if (want != 1) return ctx.error("cannot sum ", shape_str(x.shape), " to ", shape_str(ys));
      mask |= 1u << d;
    }
    if (mask == 0)  // nothing to sum: a copy
      return copy_strided(ctx, x, *y, x.shape, dense_strides(x.shape), 0, dense_strides(x.shape), 0);
    return record_reduce(ctx, R::kSum, x, *y, mask);
  }
};

// Opset < 13 Softmax flattens [axis, rank) into one row (version 0 means the latest opset).
bool legacy(const ir::Node& n) { return n.version != 0 && n.version < 13; }

class SoftmaxKernel final : public exec::DeviceKernel {
 public:
  explicit SoftmaxKernel(const exec::KernelInit& init)
      : axis_(init.node.attr_int("axis", legacy(init.node) ? 1 : -1)), legacy_(legacy(init.node)),
        log_(init.node.op == "LogSoftmax") {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    const size_t r = x.shape.size();
    const int64_t ax = norm_axis(axis_, r);
    if (ax < 0 || ax >= static_cast<int64_t>(r)) return ctx.error("axis ", axis_, " out of range");
    int64_t outer = 1, len = 1, inner = 1;
    for (size_t d = 0; d < r; ++d) (static_cast<int64_t>(d) < ax ? outer : static_cast<int64_t>(d) == ax ? len : inner) *= x.shape[d];
    if (legacy_) {  // opset < 13: softmax over the flattened [axis, rank) block
      len *= inner;
      inner = 1;
    }
    return launched(ctx, k::softmax(stream_of(ctx), ptr(x), ptr(*y), outer * inner, len, inner, log_));
  }

 private:
  int64_t axis_;
  bool legacy_, log_;
};

bool pool_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  const size_t r = in[0].shape.size();
  if (r != 3 && r != 4) return false;
  if (node.outputs.size() > 1 && node.outputs[1] >= 0) return false;  // MaxPool's Indices
  return node.attr_int("storage_order", 0) == 0;
}

class PoolKernel final : public exec::DeviceKernel {
 public:
  explicit PoolKernel(const exec::KernelInit& init) : node_(init.node) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    const bool is_max = node_.op == "MaxPool" || node_.op == "GlobalMaxPool";
    const int32_t mode = is_max ? 0 : (node_.attr_int("count_include_pad", 0) ? 1 : 2);
    TSR_ASSIGN_OR_RETURN(const k::PoolGeom g, pool_geometry(ctx, node_, x.shape, y->shape, mode));
    return launched(ctx, k::pool(stream_of(ctx), g, ptr(x), ptr(*y)));
  }

 private:
  const ir::Node& node_;
};

bool bn_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  if (node.attr_int("training_mode", 0) != 0) return false;
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i] >= 0) return false;
  for (size_t k = 1; k < 5 && k < in.size(); ++k)
    if (in[k].dtype != DType::kF32) return false;
  return in[0].shape.size() >= 2;
}

// y = (x - mean) / sqrt(var + eps) * scale + bias = x * s + b, folded on the host once for
// constant statistics, per run otherwise.
class BatchNormKernel final : public exec::DeviceKernel {
 public:
  explicit BatchNormKernel(const exec::KernelInit& init)
      : eps_(static_cast<float>(init.node.attr_float("epsilon", 1e-5))),
        constant_(init.constant_inputs.size() >= 5 && init.constant_inputs[1] && init.constant_inputs[2] &&
                  init.constant_inputs[3] && init.constant_inputs[4]) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const int64_t C = x.shape[1];
    if (!constant_ || !s_.defined()) {
      std::vector<float> s(static_cast<size_t>(C)), b(static_cast<size_t>(C));
      const Tensor* in[4];
      for (size_t k = 0; k < 4; ++k) {
        in[k] = ctx.host_input(k + 1);
        if (!in[k] || in[k]->numel() != C || in[k]->dtype() != DType::kF32)
          return ctx.error("input[", k + 1, "] must be f32 of ", C, " elements");
      }
      for (int64_t c = 0; c < C; ++c) {
        const float inv = in[0]->data<float>()[c] / std::sqrt(in[3]->data<float>()[c] + eps_);
        s[static_cast<size_t>(c)] = inv;
        b[static_cast<size_t>(c)] = in[1]->data<float>()[c] - in[2]->data<float>()[c] * inv;
      }
      TSR_ASSIGN_OR_RETURN(s_, cu(ctx).upload(Tensor::from<float>({C}, s)));
      TSR_ASSIGN_OR_RETURN(b_, cu(ctx).upload(Tensor::from<float>({C}, b)));
    }
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    int64_t inner = 1;
    for (size_t d = 2; d < x.shape.size(); ++d) inner *= x.shape[d];
    Status st = launched(ctx, k::channel_affine(stream_of(ctx), ptr(x), ptr(s_), ptr(b_), ptr(*y), x.numel(), C, inner));
    if (!constant_) s_ = b_ = DeviceTensor();  // freed after their last recorded use
    return st;
  }

 private:
  float eps_;
  bool constant_;
  DeviceTensor s_, b_;
};

}  // namespace

void register_reduce(CuOpTable& t) {
  for (const auto& kv : reduce_ops()) t[kv.first] = {0b10, 0, nullptr, &make_kernel<ReduceKernel>};
  t["SumTo"] = {0b10, 0, nullptr, &make_kernel<SumToKernel>};
  t["Softmax"] = {0, 0, nullptr, &make_kernel<SoftmaxKernel>};
  t["LogSoftmax"] = {0, 0, nullptr, &make_kernel<SoftmaxKernel>};
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
    t[op] = {0, 0, &pool_check, &make_kernel<PoolKernel>};
  t["BatchNormalization"] = {0b11110, 0, &bn_check, &make_kernel<BatchNormKernel>};
}

}  // namespace tsr::cuda
