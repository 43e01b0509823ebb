// CPU kernel for ConvTranspose (semantics: core/ops/families/conv_transpose.cpp): per image and
// group, columns = W_g^T · X_g by GEMM ([M/g * k, C/g] x [C/g, in]), then col2im scatters each
// column back onto the output window it came from (the adjoint of Conv's im2col).
#include <array>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/scratch.h"
#include "core/ops/conv_transpose.h"

namespace tsr::cpu {

namespace {

template <typename T>
void gemm_tn(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c, ThreadPool& pool) {
  // C[m, n] = A^T · B with A [k, m], B [k, n].
  if constexpr (std::is_same_v<T, float>) sgemm(true, false, m, n, k, 1.0f, a, m, b, n, 0.0f, c, n, &pool);
  else gemm_reference<T>(true, false, m, n, k, T(1), a, m, b, n, T(0), c, n);
}

template <typename T>
Status conv_transpose_typed(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(1);
  const Tensor* bias = ctx.input(2);
  const int64_t rank = x.rank() - 2;
  if (rank < 1 || rank > 3) return unsupported(ctx.place(), ": spatial rank ", rank, " (the cpu kernel handles 1 to 3)");
  const Ints in(x.shape().begin() + 2, x.shape().end()), kernel(w.shape().begin() + 2, w.shape().end());
  auto geo = ops::resolve_conv_transpose(ctx.node(), in, kernel);
  if (!geo.ok()) return ctx.error(geo.status().message());
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const int64_t n = x.dim(0), c = x.dim(1), group = ctx.node().attr_int("group");
  const int64_t m = y->dim(1), cg = c / group, mg = m / group;
  if (bias && bias->numel() != m) return ctx.error("input[2] (B) has ", bias->numel(), " elements, expected ", m);
  // Lift to 3-D with leading unit dims.
  std::array<int64_t, 3> id{1, 1, 1}, od{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0};
  for (int64_t i = 0; i < rank; ++i) {
    const size_t o = static_cast<size_t>(3 - rank + i);
    id[o] = in[static_cast<size_t>(i)];
    od[o] = geo->out[static_cast<size_t>(i)];
    k[o] = geo->kernel[static_cast<size_t>(i)];
    s[o] = geo->strides[static_cast<size_t>(i)];
    d[o] = geo->dilations[static_cast<size_t>(i)];
    pb[o] = geo->pad_begin[static_cast<size_t>(i)];
  }
  const int64_t in_size = id[0] * id[1] * id[2], out_size = od[0] * od[1] * od[2], ksize = k[0] * k[1] * k[2];
  TSR_ASSIGN_OR_RETURN(Scratch<T> cols, Scratch<T>::make(ctx, static_cast<size_t>(mg * ksize * in_size)));
  T* out = y->mut_data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < group; ++g) {
      // W_g is [cg, mg * ksize] (row-major), X_g is [cg, in_size].
      gemm_tn<T>(mg * ksize, in_size, cg, w.data<T>() + g * cg * mg * ksize, x.data<T>() + (b * c + g * cg) * in_size,
                 cols.data(), ctx.pool());
      for (int64_t oc = 0; oc < mg; ++oc) {
        T* plane = out + (b * m + g * mg + oc) * out_size;
        const T init = bias ? bias->data<T>()[g * mg + oc] : T(0);
        std::fill_n(plane, out_size, init);
        for (int64_t kk = 0; kk < ksize; ++kk) {
          const int64_t kz = kk / (k[1] * k[2]), ky = (kk / k[2]) % k[1], kx = kk % k[2];
          const T* col = cols.data() + (oc * ksize + kk) * in_size;
          for (int64_t iz = 0; iz < id[0]; ++iz) {
            const int64_t oz = iz * s[0] + kz * d[0] - pb[0];
            if (oz < 0 || oz >= od[0]) continue;
            for (int64_t iy = 0; iy < id[1]; ++iy) {
              const int64_t oy = iy * s[1] + ky * d[1] - pb[1];
              if (oy < 0 || oy >= od[1]) continue;
              const T* src = col + (iz * id[1] + iy) * id[2];
              T* dst = plane + (oz * od[1] + oy) * od[2];
              for (int64_t ix = 0; ix < id[2]; ++ix) {
                const int64_t ox = ix * s[2] + kx * d[2] - pb[2];
                if (ox >= 0 && ox < od[2]) dst[ox] += src[ix];
              }
            }
          }
        }
      }
    }
  return ok_status();
}

Status conv_transpose(exec::KernelContext& ctx) {
  if (ctx.input(0)->dtype() == DType::kF64) return conv_transpose_typed<double>(ctx);
  return conv_transpose_typed<float>(ctx);
}

}  // namespace

void register_conv_transpose_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("ConvTranspose") r.add_fn("ConvTranspose", {DType::kF32, DType::kF64}, conv_transpose);
}

}  // namespace tsr::cpu
