// MatMul and Conv geometry shared by the device backends (Vulkan, CUDA): numpy-style batch
// broadcasting reduced to one batched row-major GEMM with a batch stride per operand, and the
// Conv attributes (strides, dilations, pads or auto_pad, group) checked and resolved. Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/device_common/host_inputs.h"
#include "core/ir/graph.h"

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
  g.batch = numel_of(ob);
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

// Gemm's attributes: Y = alpha op(A) op(B) + beta C, op a transpose where transA / transB.
struct GemmAttrs {
  bool ta, tb;
  float alpha, beta;
};
inline GemmAttrs gemm_attrs(const ir::Node& node) {
  return {node.attr_int("transA", 0) != 0, node.attr_int("transB", 0) != 0,
          static_cast<float>(node.attr_float("alpha", 1.0)), static_cast<float>(node.attr_float("beta", 1.0))};
}

// Geometry of a Conv / ConvGradInput / ConvGradWeight node: x [N, C, (H,) W], w [M, C/group,
// (KH,) KW], y [N, M, (OH,) OW]; 1-D convs as 2-D with H = OH = KH = 1; ph/pw the leading pads.
struct ConvGeom {
  int64_t N, C, H, W, M, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw, group;
};

// Whether a conv-family input rank is one the device kernels take (1-D or 2-D: rank 3 or 4).
inline bool conv_rank_ok(const Shape& x) { return x.size() == 3 || x.size() == 4; }

inline Expected<ConvGeom> conv_geometry(const exec::DeviceKernelContext& ctx, const ir::Node& node, const Shape& x, const Shape& w,
                                           const Shape& y) {
  if (!conv_rank_ok(x) || w.size() != x.size() || y.size() != x.size())
    return ctx.error("conv shapes ", shape_str(x), ", ", shape_str(w), ", ", shape_str(y), " are not 1-D or 2-D NC(H)W");
  const bool one_d = x.size() == 3;
  const size_t nsp = one_d ? 1 : 2;
  ConvGeom g{};
  g.N = x[0];
  g.C = x[1];
  g.H = one_d ? 1 : x[2];
  g.W = x.back();
  g.M = y[1];
  g.OH = one_d ? 1 : y[2];
  g.OW = y.back();
  g.KH = one_d ? 1 : w[2];
  g.KW = w.back();
  const std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(nsp, 1));
  const std::vector<int64_t> dil = node.attr_ints("dilations", std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * nsp, 0));
  if (strides.size() != nsp || dil.size() != nsp || pads.size() != 2 * nsp)
    return ctx.error("strides/dilations/pads do not match ", nsp, " spatial dims");
  // The spatial dims from the last nsp of {H, W} (1-D: W only).
  const int64_t in_sp[2] = {g.H, g.W}, out_sp[2] = {g.OH, g.OW}, k_sp[2] = {g.KH, g.KW};
  resolve_auto_pad(node.attr_string("auto_pad", "NOTSET"), nsp, in_sp + 2 - nsp, out_sp + 2 - nsp, k_sp + 2 - nsp, strides, dil,
                   pads);
  g.sh = one_d ? 1 : strides[0];
  g.sw = strides.back();
  g.dh = one_d ? 1 : dil[0];
  g.dw = dil.back();
  g.ph = one_d ? 0 : pads[0];
  g.pw = pads[nsp - 1];
  g.group = node.attr_int("group", 1);
  if (g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1) return ctx.error("strides and dilations must be >= 1");
  if (g.group <= 0 || g.C % g.group || g.M % g.group) return ctx.error("group ", g.group, " does not divide the channels");
  if (w[1] * g.group != g.C) return ctx.error("weights ", shape_str(w), " do not match ", g.C, " input channels");
  return g;
}

}  // namespace tsr::device_common
