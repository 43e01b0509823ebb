// MatMul and Gemm on a device backend, written once (Vulkan, CUDA): numpy-style batch
// broadcasting reduced to one batched row-major GEMM with a batch stride per operand, and Gemm's
// transposes, scales and broadcast C; Conv with window.h's geometry. Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/device_common/host_inputs.h"
#include "backends/device_common/op_table.h"
#include "backends/device_common/window.h"
#include "core/ir/graph.h"
#include "core/tensor/broadcast.h"

namespace tsr::device_common {

// Batch dims of a MatMul operand: equal to the output's (stride = matrix size) or all ones (0).
inline bool batch_stride(const Shape& s, const Shape& out_batch, int64_t mat, int64_t* stride) {
  const size_t r = s.size() < 2 ? 0 : s.size() - 2;
  int64_t n = 1;
  for (size_t d = 0; d < r; ++d) n *= s[d];
  if (n == 1) {
    *stride = 0;
    return true;
  }
  if (r != out_batch.size()) return false;
  for (size_t d = 0; d < r; ++d)
    if (s[d] != out_batch[d]) return false;
  *stride = mat;
  return true;
}

// Placement check: mixed batch broadcasting (e.g. [2,1,M,K] x [1,3,K,N]) stays on the CPU when
// visible at load time.
inline bool matmul_check(const ir::Node&, const std::vector<ops::ValueType>& in) {
  const Shape& a = in[0].shape;
  const Shape& b = in[1].shape;
  if (a.size() <= 2 || b.size() <= 2) return true;
  int64_t na = 1, nb = 1;
  for (size_t d = 0; d + 2 < a.size(); ++d) na *= a[d];
  for (size_t d = 0; d + 2 < b.size(); ++d) nb *= b[d];
  if (na == 1 || nb == 1) return true;
  return a.size() == b.size() && std::equal(a.begin(), a.end() - 2, b.begin());
}

// y[i] = a[i] (M x K) * b[i] (K x N) for i < batch; a's i-th matrix at i * sa, b's at i * sb (0:
// shared), y dense. 1-D operands count as a row (a) or a column (b) vector.
struct MatMulGeom {
  int64_t M, K, N, sa, sb, batch;
};

// kUnsupported naming the place and `backend` for batch broadcasting other than "equal or all ones".
inline Expected<MatMulGeom> matmul_geometry(const exec::DeviceKernelContext& ctx, const Shape& a, const Shape& b,
                                            const char* backend) {
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  MatMulGeom g{a1 ? 1 : a[a.size() - 2], a.back(), b1 ? 1 : b.back(), 0, 0, 1};
  Shape ob;  // the broadcast of both operands' batch dims
  const size_t ra = a.size() < 2 ? 0 : a.size() - 2, rb = b.size() < 2 ? 0 : b.size() - 2;
  const size_t r = std::max(ra, rb);
  for (size_t d = 0; d < r; ++d) {
    const int64_t da = d + ra >= r ? a[d + ra - r] : 1, db = d + rb >= r ? b[d + rb - r] : 1;
    ob.push_back(std::max(da, db));
  }
  if (!batch_stride(a, ob, g.M * g.K, &g.sa) || !batch_stride(b, ob, g.K * g.N, &g.sb))
    return unsupported(ctx.place(), ": MatMul batch broadcasting of ", shape_str(a), " x ", shape_str(b),
                       " is not supported by the ", backend, " kernel");
  g.batch = shape_numel(ob);
  return g;
}

// MatMul with numpy batch broadcasting; P::kName names the backend in messages and
// P::matmul(ctx, a, b, y, geom) records the batched GEMM.
template <class P>
class MatMulKernel final : public exec::DeviceKernel {
 public:
  explicit MatMulKernel(const exec::KernelInit&) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& a = *ctx.device_input(0);
    const exec::DeviceTensor& b = *ctx.device_input(1);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    TSR_ASSIGN_OR_RETURN(const MatMulGeom g, matmul_geometry(ctx, a.shape, b.shape, P::kName));
    return P::matmul(ctx, a, b, *y, g);
  }
};

// Gemm: Y [M, N] = alpha op(A) op(B) + beta C, op a transpose where transA / transB; A and B
// stored row-major with rows of lda / ldb elements; C (optional) read as broadcast to [M, N] with
// element strides c_rs / c_cs (0 along a broadcast dim).
struct GemmGeom {
  int64_t M, N, K, lda, ldb, c_rs, c_cs;
  bool ta, tb;
  float alpha, beta;
};

// P::gemm(ctx, a, b, c_or_null, y, geom) records the GEMM; attributes are read at create.
template <class P>
class GemmKernel final : public exec::DeviceKernel {
 public:
  explicit GemmKernel(const exec::KernelInit& init)
      : ta_(init.node.attr_int("transA", 0) != 0), tb_(init.node.attr_int("transB", 0) != 0),
        alpha_(static_cast<float>(init.node.attr_float("alpha"))),
        beta_(static_cast<float>(init.node.attr_float("beta"))) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& a = *ctx.device_input(0);
    const exec::DeviceTensor& b = *ctx.device_input(1);
    const exec::DeviceTensor* c = ctx.device_input(2);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    if (a.shape.size() != 2 || b.shape.size() != 2) return ctx.error("Gemm operands must be matrices");
    if (c && c->shape.size() > 2) return ctx.error("Gemm's C must have rank <= 2");
    GemmGeom g{y->shape[0], y->shape[1], ta_ ? a.shape[0] : a.shape[1], a.shape[1], b.shape[1], 0, 0, ta_, tb_, alpha_, beta_};
    if (c) {
      const Shape cs = broadcast_strides(c->shape, 2);
      g.c_rs = cs[0];
      g.c_cs = cs[1];
    }
    return P::gemm(ctx, a, b, c, *y, g);
  }

 private:
  bool ta_, tb_;
  float alpha_, beta_;
};

// Conv (1-D or 2-D, any group; bias optional): the geometry from window.h, checked here;
// P::conv(ctx, x, w, bias_or_null, y, geom) records it.
template <class P>
class ConvKernel final : public exec::DeviceKernel {
 public:
  explicit ConvKernel(const exec::KernelInit& init) : window_(init) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    const exec::DeviceTensor& x = *ctx.device_input(0);
    const exec::DeviceTensor& w = *ctx.device_input(1);
    const exec::DeviceTensor* bias = ctx.device_input(2);
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor * y, ctx.alloc_output(0));
    TSR_ASSIGN_OR_RETURN(const ConvGeom g, window_.geometry(ctx, x.shape, w.shape, y->shape));
    if (bias && bias->numel() != g.M) return ctx.error("bias has ", bias->numel(), " elements for ", g.M, " output channels");
    return P::conv(ctx, x, w, bias, *y, g);
  }

 private:
  ConvWindow window_;
};

// Adds the family's ops (MatMul, Gemm, Conv) to a backend's table; P: the policy of the three
// kernels above, with `using Backend` and kName.
template <class P>
void register_linear_ops(OpTable<typename P::Backend>& t) {
  using B = typename P::Backend;
  t.add("MatMul", 0u, &matmul_check, &make_kernel<MatMulKernel<P>, B>);
  t.add("Gemm", 0u, nullptr, &make_kernel<GemmKernel<P>, B>);
  t.add("Conv", 0u, &conv_check, &make_kernel<ConvKernel<P>, B>);
}

}  // namespace tsr::device_common
