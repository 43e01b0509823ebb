// CPU kernel of SumTo (core/ops/families/sum_to.cpp).
#include <algorithm>
#include <cstring>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {
namespace {

// Y[j] = sum of X[i] over the i that broadcast to j. X is walked once in row-major order; the
// matching Y offset advances by Y's stride, or by 0 along the broadcast (summed) axes.
template <typename T>
void sum_to(const T* x, const Shape& xs, T* y, const Shape& ys, int64_t y_numel) {
  const size_t r = xs.size(), off = r - ys.size();
  Ints ystride(r, 0);  // inline up to rank 6: no allocation per step
  int64_t s = 1;
  for (size_t k = ys.size(); k-- > 0;) {
    if (ys[k] != 1) ystride[off + k] = s;
    s *= ys[k];
  }
  std::fill(y, y + y_numel, T(0));
  if (r == 0) {
    y[0] = x[0];
    return;
  }
  const int64_t inner = xs[r - 1], is = ystride[r - 1];
  Ints idx(r, 0);
  int64_t outer = 1;
  for (size_t k = 0; k + 1 < r; ++k) outer *= xs[k];
  for (int64_t o = 0; o < outer; ++o) {
    int64_t yo = 0;
    for (size_t k = 0; k + 1 < r; ++k) yo += idx[k] * ystride[k];
    const T* xr = x + o * inner;
    if (is == 0) {
      T acc = y[yo];
      for (int64_t i = 0; i < inner; ++i) acc += xr[i];
      y[yo] = acc;
    } else {
      for (int64_t i = 0; i < inner; ++i) y[yo + i * is] += xr[i];
    }
    for (size_t k = r - 1; k-- > 0;) {
      if (++idx[k] < xs[k]) break;
      idx[k] = 0;
    }
  }
}

Status sum_to_kernel(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  if (ctx.output_type(0).shape == x.shape()) {
    ctx.set_output(0, x);
    return ok_status();
  }
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  if (x.numel() == 0) {  // an empty X sums to zeros
    std::memset(y->raw_mut(), 0, y->nbytes());
    return ok_status();
  }
  if (x.dtype() == DType::kF32) sum_to(x.data<float>(), x.shape(), y->mut_data<float>(), y->shape(), y->numel());
  else sum_to(x.data<double>(), x.shape(), y->mut_data<double>(), y->shape(), y->numel());
  return ok_status();
}

}  // namespace

void register_sum_to_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("SumTo") r.add_fn("SumTo", {DType::kF32, DType::kF64}, &sum_to_kernel);
}

}  // namespace tsr::cpu
