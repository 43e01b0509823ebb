// Reductions on a device backend, written once for every backend: Reduce* over any axes (one
// reduction with a mask of reduced dims), Softmax/LogSoftmax, Max/Average/Global pooling and
// inference BatchNormalization (a per-channel affine with the statistics folded on the host).
// Attribute and host-input parsing, geometry and messages live here; a backend supplies a policy
// class P with static members (f32 device tensors; errors name ctx.place()):
//   using Backend = ...;                                  its op table's factories take it
//   Status reduce(ctx, int32_t op, x, y, uint32_t mask)   op: reduce_ops() code; x non-empty
//   Status softmax(ctx, x, y, rows, len, inner, bool log) rows of `len` elements `inner` apart
//   Status pool(ctx, x, y, const PoolGeom&)
//   Status channel_affine(ctx, x, scale, shift, y, C, inner)  y = x * scale[c] + shift[c]
// Attributes are read once, when a kernel is created.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backends/device_common/host_inputs.h"
#include "backends/device_common/op_table.h"
#include "backends/device_common/window.h"
#include "core/ir/graph.h"

namespace tsr::device_common {

// Reduce op codes, in the order of the backends' reduction kernels (CUDA k::Reduce, reduce.comp).
inline const std::map<std::string, int32_t, std::less<>>& reduce_ops() {
  static const std::map<std::string, int32_t, std::less<>> k = {
      {"ReduceSum", 0}, {"ReduceMean", 1},      {"ReduceMax", 2}, {"ReduceMin", 3},       {"ReduceProd", 4},
      {"ReduceSumSquare", 5}, {"ReduceL1", 6}, {"ReduceL2", 7}, {"ReduceLogSum", 8}, {"ReduceLogSumExp", 9}};
  return k;
}

namespace reduce_detail {

using exec::DeviceKernelContext;
using exec::DeviceTensor;

template <class P>
class ReduceKernel final : public exec::DeviceKernel {
 public:
  explicit ReduceKernel(const exec::KernelInit& init)
      : op_(reduce_ops().at(init.node.op)),
        axes_(init.node.attr_ints("axes")),
        noop_with_empty_axes_(init.node.attr_int("noop_with_empty_axes") != 0) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const size_t r = x.shape.size();
    std::vector<int64_t> axes(axes_.begin(), axes_.end());
    if (ctx.host_input(1)) {
      TSR_ASSIGN_OR_RETURN(axes, host_ints(ctx, 1));
    }
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    uint32_t mask = 0;
    if (axes.empty() && !noop_with_empty_axes_) mask = (1u << r) - 1;
    for (int64_t a : axes) {
      const int64_t ax = norm_axis(a, r);
      if (ax < 0 || ax >= static_cast<int64_t>(r)) return ctx.error("axis ", a, " out of range");
      mask |= 1u << ax;
    }
    if (x.numel() == 0) return unsupported(ctx.place(), ": empty reduction on the device");
    return P::reduce(ctx, op_, x, *y, mask);
  }

 private:
  int32_t op_;
  Ints axes_;
  bool noop_with_empty_axes_;
};

// Opset < 13 Softmax flattens [axis, rank) into one row (version 0 means the latest opset).
inline bool legacy(const ir::Node& n) { return n.version != 0 && n.version < 13; }

template <class P>
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
    return P::softmax(ctx, x, *y, outer * inner, len, inner, log_);
  }

 private:
  int64_t axis_;
  bool legacy_, log_;
};

template <class P>
class PoolKernel final : public exec::DeviceKernel {
 public:
  explicit PoolKernel(const exec::KernelInit& init) : window_(init) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    TSR_ASSIGN_OR_RETURN(const PoolGeom g, window_.geometry(ctx, x.shape, y->shape));
    return P::pool(ctx, x, *y, g);
  }

 private:
  PoolWindow window_;
};

inline bool bn_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  if (node.attr_int("training_mode") != 0) return false;
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i] >= 0) return false;
  for (size_t k = 1; k < 5 && k < in.size(); ++k)
    if (in[k].dtype != DType::kF32) return false;
  return in[0].shape.size() >= 2;
}

// y = (x - mean) / sqrt(var + eps) * scale + bias = x * s + b, folded on the host once for
// constant statistics, per run otherwise.
template <class P>
class BatchNormKernel final : public exec::DeviceKernel {
 public:
  explicit BatchNormKernel(const exec::KernelInit& init)
      : eps_(static_cast<float>(init.node.attr_float("epsilon"))),
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
      TSR_ASSIGN_OR_RETURN(s_, ctx.backend().upload(Tensor::from<float>({C}, s)));
      TSR_ASSIGN_OR_RETURN(b_, ctx.backend().upload(Tensor::from<float>({C}, b)));
    }
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    int64_t inner = 1;
    for (size_t d = 2; d < x.shape.size(); ++d) inner *= x.shape[d];
    Status st = P::channel_affine(ctx, x, s_, b_, *y, C, inner);
    if (!constant_) s_ = b_ = DeviceTensor();  // freed after their last recorded use
    return st;
  }

 private:
  float eps_;
  bool constant_;
  DeviceTensor s_, b_;
};

}  // namespace reduce_detail

using reduce_detail::bn_check;

// Adds the family's ops to a backend's table.
template <class P>
void register_reduce_ops(OpTable<typename P::Backend>& t) {
  namespace d = reduce_detail;
  using B = typename P::Backend;
  for (const auto& kv : reduce_ops()) t.add(kv.first, 0b10u, nullptr, &make_kernel<d::ReduceKernel<P>, B>);
  t.add("Softmax", 0u, nullptr, &make_kernel<d::SoftmaxKernel<P>, B>);
  t.add("LogSoftmax", 0u, nullptr, &make_kernel<d::SoftmaxKernel<P>, B>);
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
    t.add(op, 0u, &pool_check, &make_kernel<d::PoolKernel<P>, B>);
  t.add("BatchNormalization", 0b11110u, &d::bn_check, &make_kernel<d::BatchNormKernel<P>, B>);
}

}  // namespace tsr::device_common
