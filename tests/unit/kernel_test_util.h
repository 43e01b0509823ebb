// Shared by the CPU kernel tests (ops_nn_test, conv_kernels_test, exec_dispatch_test): the
// convolution by its definition, and running a test once per SIMD target this CPU supports.
#pragma once

#include <catch2/catch.hpp>
#include <hwy/targets.h>

#include <cstdint>
#include <vector>

#include "core/tensor/tensor.h"

namespace tsr::test {

// Direct convolution by definition (ONNX Conv), any spatial rank, explicit pads per dim.
inline std::vector<double> conv_ref(const Tensor& x, const Tensor& w, const Tensor* b, int64_t group,
                                    const std::vector<int64_t>& strides, const std::vector<int64_t>& dil,
                                    const std::vector<int64_t>& pb, const Shape& out_shape) {
  const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0), cg = c / group, mg = m / group;
  const size_t r = static_cast<size_t>(x.rank() - 2);
  const int64_t out_sp = shape_numel(Shape(out_shape.begin() + 2, out_shape.end()));
  const int64_t k_sp = shape_numel(Shape(w.shape().begin() + 2, w.shape().end()));
  const int64_t in_sp = shape_numel(Shape(x.shape().begin() + 2, x.shape().end()));
  std::vector<double> y(static_cast<size_t>(n * m * out_sp));
  std::vector<int64_t> o(r), kk(r);
  for (int64_t bn = 0; bn < n; ++bn)
    for (int64_t oc = 0; oc < m; ++oc) {
      const int64_t g = oc / mg;
      for (int64_t op = 0; op < out_sp; ++op) {
        int64_t t = op;
        for (size_t d = r; d-- > 0;) o[d] = t % out_shape[d + 2], t /= out_shape[d + 2];
        double s = b ? b->scalar_f64(oc) : 0.0;
        for (int64_t ic = 0; ic < cg; ++ic)
          for (int64_t kp = 0; kp < k_sp; ++kp) {
            int64_t t2 = kp, in_off = 0;
            bool inside = true;
            for (size_t d = r; d-- > 0;) kk[d] = t2 % w.dim(d + 2), t2 /= w.dim(d + 2);
            for (size_t d = 0; d < r; ++d) {
              const int64_t i = o[d] * strides[d] - pb[d] + kk[d] * dil[d];
              inside = inside && i >= 0 && i < x.dim(d + 2);
              in_off = in_off * x.dim(d + 2) + i;
            }
            if (!inside) continue;
            s += x.scalar_f64((bn * c + g * cg + ic) * in_sp + in_off) * w.scalar_f64((oc * cg + ic) * k_sp + kp);
          }
        y[static_cast<size_t>((bn * m + oc) * out_sp + op)] = s;
      }
    }
  return y;
}

// The targets this build compiled that this CPU can run, best first.
inline std::vector<int64_t> runnable_targets() {
  std::vector<int64_t> out;
#if (HWY_TARGETS & (HWY_TARGETS - 1)) != 0
  for (int64_t t = hwy::SupportedTargets() & HWY_TARGETS; t != 0; t &= t - 1) out.push_back(t & -t);
#else
  out.push_back(HWY_STATIC_TARGET);
#endif
  return out;
}

inline void use_target(int64_t target) {
#if (HWY_TARGETS & (HWY_TARGETS - 1)) != 0
  hwy::SetSupportedTargetsForTest(target);  // 0: back to the CPU's own set
#else
  (void)target;
#endif
}

// Calls fn(threads) for threads 1 and 3 under every SIMD target this CPU runs, then restores the
// CPU's own set.
template <typename Fn>
void for_targets_and_threads(const Fn& fn) {
  for (int64_t target : runnable_targets()) {
    use_target(target);
    INFO("target " << hwy::TargetName(target));
    for (int threads : {1, 3}) fn(threads);
  }
  use_target(0);
}

}  // namespace tsr::test
