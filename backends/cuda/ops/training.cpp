// The training ops a LeNet-style train_step graph runs (core/passes/training): the convolution
// and max-pool VJPs, the softmax cross-entropy loss and its VJP, and the Adam / AdamW updates.
// Semantics are the CPU kernels' (backends/cpu/kernels/{nn_grad,loss,optimizer}.cpp); targets are
// range-checked on the host (an error names the position) and uploaded as i32, -1 = ignored.
#include <cmath>

#include "backends/cuda/ops/common.h"
#include "backends/device_common/window.h"

namespace tsr::cuda {

namespace {

using exec::DeviceKernelContext;
using exec::DeviceTensor;

bool conv_grad_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  // Group 1 only (im2col / col2im + GEMM); grouped convolutions train on the CPU.
  return node.attr_int("group") == 1 && device_common::window_rank_ok(in[0].shape) &&
         in[1].shape.size() == in[0].shape.size();
}

// The convolution VJPs, with P = OH*OW and CKK = C*KH*KW:
//   ConvGradInput(dY [N, M, O...], W [M, C, k...], X_shape) -> dX: dcol[n] [CKK, P] =
//     W^T [CKK, M] . dY[n] [M, P], dX = col2im(dcol);
//   ConvGradWeight(X [N, C, D...], dY [N, M, O...], W_shape) -> dW [M, CKK] = sum_n dY[n] [M, P] .
//     im2col(X[n])^T [P, CKK], accumulated over the batch in order.
class ConvGradKernel final : public exec::DeviceKernel {
 public:
  explicit ConvGradKernel(const exec::KernelInit& init) : window_(init), weight_(init.node.op == "ConvGradWeight") {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& in0 = *ctx.device_input(0);
    const DeviceTensor& in1 = *ctx.device_input(1);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * out, ctx.alloc_output(0));
    const DeviceTensor& dy = weight_ ? in1 : in0;
    const Shape& x = weight_ ? in0.shape : out->shape;
    const Shape& w = weight_ ? out->shape : in1.shape;
    TSR_ASSIGN_OR_RETURN(const k::ConvGeom g, window_.geometry(ctx, x, w, dy.shape));
    const int64_t P = g.OH * g.OW, CKK = g.C * g.KH * g.KW;
    TSR_ASSIGN_OR_RETURN(DeviceTensor col, cu(ctx).scratch(DType::kF32, {g.N, CKK, P}));
    if (!weight_) {
      TSR_RETURN_IF_ERROR(gemm_rm(ctx, true, false, CKK, P, g.M, 1.0f, ptr(in1), CKK, 0, ptr(dy), P, g.M * P, 0.0f, ptr(col), P,
                                  CKK * P, g.N));
      return launched(ctx, k::col2im(stream_of(ctx), g, ptr(col), ptr(*out)));
    }
    TSR_RETURN_IF_ERROR(launched(ctx, k::im2col(stream_of(ctx), g, ptr(in0), ptr(col))));
    if (g.N == 0) return launched(ctx, k::fill(stream_of(ctx), ptr(*out), 0.0f, out->numel()));
    for (int64_t n = 0; n < g.N; ++n)
      TSR_RETURN_IF_ERROR(gemm_rm(ctx, false, true, g.M, CKK, P, 1.0f, ptr(dy) + n * g.M * P, P, 0, ptr(col) + n * CKK * P, P, 0,
                                  n == 0 ? 0.0f : 1.0f, ptr(*out), CKK, 0, 1));
    return ok_status();
  }

 private:
  device_common::ConvWindow window_;
  bool weight_;
};

class MaxPoolGradKernel final : public exec::DeviceKernel {
 public:
  explicit MaxPoolGradKernel(const exec::KernelInit& init) : window_(init) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    const DeviceTensor& dy = *ctx.device_input(1);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * dx, ctx.alloc_output(0));
    TSR_ASSIGN_OR_RETURN(const k::PoolGeom g, window_.geometry(ctx, x.shape, dy.shape));
    return launched(ctx, k::max_pool_grad(stream_of(ctx), g, ptr(x), ptr(dy), ptr(*dx)));
  }

 private:
  device_common::PoolWindow window_;
};

// Loss ops without the optional class weights (those stay on the CPU).
bool loss_check(const ir::Node& node, const std::vector<ops::ValueType>& in, size_t weight_input) {
  if (node.inputs.size() > weight_input && node.inputs[weight_input] >= 0) return false;
  const std::string red = node.attr_string("reduction");
  return in[0].shape.size() >= 2 && (red == "none" || red == "sum" || red == "mean");
}
bool sce_check(const ir::Node& node, const std::vector<ops::ValueType>& in) { return loss_check(node, in, 2); }
bool sce_grad_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  const std::string red = node.attr_string("reduction");
  return (node.inputs.size() < 4 || node.inputs[3] < 0) && in[1].shape.size() >= 2 &&
         (red == "none" || red == "sum" || red == "mean");
}

int32_t reduction_code(const ir::Node& node) {
  const std::string red = node.attr_string("reduction");
  return red == "none" ? 0 : (red == "sum" ? 1 : 2);
}

// The loss ops' attributes, read at create: reduction (0 none, 1 sum, 2 mean) and ignore_index.
struct LossAttrs {
  explicit LossAttrs(const ir::Node& node)
      : reduction(reduction_code(node)), has_ignore(node.attr("ignore_index") != nullptr),
        ignore(node.attr_int("ignore_index", 0)) {}
  int32_t reduction;
  bool has_ignore;
  int64_t ignore;
};

// Targets of scores x [N, C, D...] checked on the host and uploaded as i32 (-1 = ignore_index);
// *count = the number of positions not ignored.
Expected<DeviceTensor> upload_targets(DeviceKernelContext& ctx, const LossAttrs& attrs, size_t k, const Shape& x, float* count) {
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> t, host_ints(ctx, k));
  const int64_t n = x[0], c = x[1], d = shape_numel(x) / std::max<int64_t>(n * c, 1);
  if (static_cast<int64_t>(t.size()) != n * d)
    return ctx.error("input[", k, "] (target) has ", t.size(), " elements, expected ", n * d);
  std::vector<int32_t> t32(t.size());
  int64_t kept = 0;
  for (size_t p = 0; p < t.size(); ++p) {
    if (attrs.has_ignore && t[p] == attrs.ignore) {
      t32[p] = -1;
      continue;
    }
    if (t[p] < 0 || t[p] >= c) return ctx.error("input[", k, "] (target) value ", t[p], " at ", p, " is outside [0, ", c, ")");
    t32[p] = static_cast<int32_t>(t[p]);
    ++kept;
  }
  *count = static_cast<float>(kept);
  return cu(ctx).upload(Tensor::from<int32_t>({static_cast<int64_t>(t32.size())}, t32));
}

class SceLossKernel final : public exec::DeviceKernel {
 public:
  explicit SceLossKernel(const exec::KernelInit& init) : attrs_(init.node) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& x = *ctx.device_input(0);
    float count = 0;
    TSR_ASSIGN_OR_RETURN(DeviceTensor t, upload_targets(ctx, attrs_, 1, x.shape, &count));
    const int64_t n = x.shape[0], c = x.shape[1], d = x.numel() / std::max<int64_t>(n * c, 1);
    TSR_ASSIGN_OR_RETURN(DeviceTensor * y, ctx.alloc_output(0));
    float* logp = nullptr;
    if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0) {
      TSR_ASSIGN_OR_RETURN(DeviceTensor * lp, ctx.alloc_output(1));
      logp = ptr(*lp);
    }
    DeviceTensor pos;
    float* pos_loss = ptr(*y);  // "none": the per-position losses are the output
    if (attrs_.reduction != 0) {
      TSR_ASSIGN_OR_RETURN(pos, cu(ctx).scratch(DType::kF32, {std::max<int64_t>(n * d, 1)}));
      pos_loss = ptr(pos);
    }
    return launched(ctx, k::sce_loss(stream_of(ctx), ptr(x), ptr<int32_t>(t), n, c, d, attrs_.reduction, count, pos_loss, logp,
                                     ptr(*y)));
  }

 private:
  LossAttrs attrs_;
};

class SceGradKernel final : public exec::DeviceKernel {
 public:
  explicit SceGradKernel(const exec::KernelInit& init) : attrs_(init.node) {}
  Status record(DeviceKernelContext& ctx) override {
    const DeviceTensor& dl = *ctx.device_input(0);
    const DeviceTensor& x = *ctx.device_input(1);
    float count = 0;
    TSR_ASSIGN_OR_RETURN(DeviceTensor t, upload_targets(ctx, attrs_, 2, x.shape, &count));
    const int64_t n = x.shape[0], c = x.shape[1], d = x.numel() / std::max<int64_t>(n * c, 1);
    if (dl.numel() != (attrs_.reduction == 0 ? n * d : 1)) return ctx.error("input[0] (dLoss) has ", dl.numel(), " elements");
    TSR_ASSIGN_OR_RETURN(DeviceTensor * dx, ctx.alloc_output(0));
    return launched(ctx,
                    k::sce_grad(stream_of(ctx), ptr(dl), ptr(x), ptr<int32_t>(t), n, c, d, attrs_.reduction, count, ptr(*dx)));
  }

 private:
  LossAttrs attrs_;
};

// Adam (ONNX, preview.training) and AdamW (tessera): (R, T, X[n], G[n], V[n], H[n]) ->
// (X_new[n], V_new[n], H_new[n]); R and T are read on the host.
class AdamKernel final : public exec::DeviceKernel {
 public:
  // The attributes, read once: AdamW's beta1/beta2/epsilon/weight_decay or Adam's
  // alpha/beta/epsilon/norm_coefficient/norm_coefficient_post (b1, b2, eps, decay or norm, post).
  explicit AdamKernel(const exec::KernelInit& init) : adamw_(init.node.op == "AdamW") {
    const ir::Node& n = init.node;
    b1_ = n.attr_float(adamw_ ? "beta1" : "alpha", 0.9);
    b2_ = n.attr_float(adamw_ ? "beta2" : "beta", 0.999);
    eps_ = n.attr_float("epsilon");  // each op's own default, filled from its OpDef
    wd_or_norm_ = adamw_ ? n.attr_float("weight_decay") : n.attr_float("norm_coefficient");
    post_ = adamw_ ? 0.0 : n.attr_float("norm_coefficient_post");
  }
  Status record(DeviceKernelContext& ctx) override {
    if (ctx.num_inputs() < 6 || (ctx.num_inputs() - 2) % 4 != 0) return ctx.error(ctx.num_inputs(), " inputs, expected 2 + 4n");
    const size_t n = (ctx.num_inputs() - 2) / 4;
    TSR_ASSIGN_OR_RETURN(const double lr, host_scalar(ctx, 0));
    const Tensor* tt = ctx.host_input(1);
    if (!tt || tt->numel() != 1 || (tt->dtype() != DType::kI64 && tt->dtype() != DType::kI32))
      return ctx.error("input[1] (T) must be an integer scalar");
    const int64_t step = tt->scalar_i64();
    k::AdamParams p{};
    p.adamw = adamw_ ? 1 : 0;
    p.lr = lr;
    p.b1 = b1_;
    p.b2 = b2_;
    p.eps = eps_;
    if (adamw_) {
      p.decay = 1.0 - lr * wd_or_norm_;
      const double t = static_cast<double>(std::max<int64_t>(step, 1));
      p.c1 = 1.0 / (1.0 - std::pow(p.b1, t));
      p.c2 = 1.0 / (1.0 - std::pow(p.b2, t));
    } else {
      p.norm = wd_or_norm_;
      p.post = post_;
      const double t = static_cast<double>(step);
      if (step > 0) p.lr = lr * std::sqrt(1 - std::pow(p.b2, t)) / (1 - std::pow(p.b1, t));
    }
    for (size_t i = 0; i < n; ++i) {
      const DeviceTensor* in[4];
      for (size_t k = 0; k < 4; ++k) {
        in[k] = ctx.device_input(2 + k * n + i);
        if (!in[k]) return ctx.error("input[", 2 + k * n + i, "] is missing");
        if (in[k]->numel() != in[0]->numel())
          return ctx.error("input[", 2 + k * n + i, "] has ", in[k]->numel(), " elements, X[", i, "] has ", in[0]->numel());
      }
      TSR_ASSIGN_OR_RETURN(DeviceTensor * xo, ctx.alloc_output(i));
      TSR_ASSIGN_OR_RETURN(DeviceTensor * mo, ctx.alloc_output(n + i));
      TSR_ASSIGN_OR_RETURN(DeviceTensor * vo, ctx.alloc_output(2 * n + i));
      TSR_RETURN_IF_ERROR(launched(ctx, k::adam(stream_of(ctx), p, ptr(*in[0]), ptr(*in[1]), ptr(*in[2]), ptr(*in[3]), ptr(*xo),
                                                ptr(*mo), ptr(*vo), in[0]->numel())));
    }
    return ok_status();
  }

 private:
  bool adamw_;
  double b1_, b2_, eps_, wd_or_norm_, post_;
};

}  // namespace

void register_training(device_common::OpTable<CudaBackend>& t) {
  using B = CudaBackend;
  t.add("ConvGradInput", 0b100, &conv_grad_check, &make_kernel<ConvGradKernel, B>);
  t.add("ConvGradWeight", 0b100, &conv_grad_check, &make_kernel<ConvGradKernel, B>);
  t.add("MaxPoolGrad", 0, &device_common::pool_check, &make_kernel<MaxPoolGradKernel, B>);
  t.add("SoftmaxCrossEntropyLoss", 0b10, &sce_check, &make_kernel<SceLossKernel, B>);
  t.add("SoftmaxCrossEntropyLossGrad", 0b100, &sce_grad_check, &make_kernel<SceGradKernel, B>);
  t.add("Adam", 0b11, nullptr, &make_kernel<AdamKernel, B>);
  t.add("AdamW", 0b11, nullptr, &make_kernel<AdamKernel, B>);
}

}  // namespace tsr::cuda
