// MatMul geometry shared by the device backends (Vulkan, CUDA): numpy-style batch broadcasting
// reduced to one batched row-major GEMM with a batch stride per operand. Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/device_common/host_inputs.h"

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

}  // namespace tsr::device_common
