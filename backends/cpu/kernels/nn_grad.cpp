// CPU kernels for Conv's gradient ops (semantics: core/ops/families/nn_grad.cpp), the adjoints
// of the forward im2col + GEMM (nn.cpp), on the same blocks of output rows:
//   ConvGradInput:  col = W_g^T · dY_g (GEMM), then col2im adds col onto dX_g;
//   ConvGradWeight: dW_g += dY_g · im2col(X_g)^T (GEMM with beta = 1).
// 1x1 / stride-1 / unpadded convs skip the column matrix. Training batches are many small
// images, so the batch is split over the thread pool (each thread runs its GEMMs inline, the
// weight gradient into a per-thread partial sum); a single image uses the pool inside instead.
// f32 runs on the packed SGEMM, f64 on the reference GEMM.
#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/im2col.h"
#include "backends/cpu/kernels/matmul.h"

namespace tsr::cpu {
namespace {

using matmul_detail::gemm_any;

// The geometry shared by both kernels, from X's shape and W's shape.
struct ConvGeom {
  Window3 w;
  int64_t n_batch = 0, c = 0, m = 0, group = 1, cg = 0, mg = 0, kg = 0;
  int64_t rows = 0, rows_per_block = 1;  // output rows (od, oh) and rows per im2col block
  bool pointwise = false;                // 1x1 window, stride 1, no padding: col == X
};

Expected<ConvGeom> conv_geom(exec::KernelContext& ctx, const Shape& xs, const Shape& ws) {
  ConvGeom g;
  std::vector<int64_t> in(xs.begin() + 2, xs.end()), kernel(ws.begin() + 2, ws.end());
  TSR_ASSIGN_OR_RETURN(g.w, resolve_window3(ctx, in, kernel, false));
  const Window3& w = g.w;
  g.group = ctx.node().attr_int("group", 1);
  g.n_batch = xs[0];
  g.c = xs[1];
  g.m = ws[0];
  g.cg = g.c / g.group;
  g.mg = g.m / g.group;
  g.kg = g.cg * w.k_size();
  g.pointwise = w.k_size() == 1 && w.s == std::array<int64_t, 3>{1, 1, 1} &&
                w.pb == std::array<int64_t, 3>{0, 0, 0} && w.pe == std::array<int64_t, 3>{0, 0, 0};
  // Blocks of whole output rows: ~1 MiB of columns, at least 512 wide for the GEMM (as Conv).
  const int64_t ow = w.out[2];
  g.rows = w.out[0] * w.out[1];
  g.rows_per_block = std::max<int64_t>((512 + ow - 1) / std::max<int64_t>(1, ow),
                                       (int64_t{1} << 18) / std::max<int64_t>(1, g.kg * ow));
  g.rows_per_block = std::clamp<int64_t>(g.rows_per_block, 1, std::max<int64_t>(1, g.rows));
  return g;
}

// Per-thread column scratch of at least n elements, reused across calls.
template <typename T>
T* col_scratch(size_t n) {
  thread_local std::vector<T> col;
  if (col.size() < n) col.resize(n);
  return col.data();
}

// Images [0, n_batch) split into `chunks` contiguous ranges; fn(chunk, n0, n1, inner pool).
// One chunk runs inline with the pool left to the GEMMs (and im2col/col2im); several run on the
// pool, each inline.
template <typename Fn>
void over_batch(ThreadPool& pool, int64_t n_batch, int64_t chunks, const Fn& fn) {
  if (chunks <= 1) {
    fn(int64_t{0}, int64_t{0}, n_batch, &pool);
    return;
  }
  pool.parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ++ch) fn(ch, ch * n_batch / chunks, (ch + 1) * n_batch / chunks, nullptr);
  });
}

int64_t batch_chunks(ThreadPool& pool, int64_t n_batch) {
  return std::clamp<int64_t>(pool.num_threads(), 1, std::max<int64_t>(1, n_batch));
}

template <typename T>
Status conv_grad_input_typed(exec::KernelContext& ctx) {
  const Tensor& dy = *ctx.input(0);
  const Tensor& wt = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * dx, ctx.alloc_output(0));
  TSR_ASSIGN_OR_RETURN(const ConvGeom g, conv_geom(ctx, dx->shape(), wt.shape()));
  T* pdx = dx->mut_data<T>();
  std::fill(pdx, pdx + dx->numel(), T(0));
  if (dx->numel() == 0 || dy.numel() == 0) return ok_status();
  const Window3& w = g.w;
  const int64_t in_size = w.in_size(), out_size = w.out_size(), ow = w.out[2], ksize = w.k_size();
  const T* pdy = dy.data<T>();
  const T* pw = wt.data<T>();
  ThreadPool& pool = ctx.pool();
  over_batch(pool, g.n_batch, batch_chunks(pool, g.n_batch), [&](int64_t, int64_t n0, int64_t n1, ThreadPool* inner) {
    T* col = g.pointwise ? nullptr : col_scratch<T>(static_cast<size_t>(g.kg * g.rows_per_block * ow));
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t gi = 0; gi < g.group; ++gi) {
        const T* wg = pw + gi * g.mg * g.kg;  // [mg, kg]
        const T* dyg = pdy + (n * g.m + gi * g.mg) * out_size;
        T* dxg = pdx + (n * g.c + gi * g.cg) * in_size;
        if (g.pointwise) {  // dX_g = W_g^T · dY_g, written in place
          gemm_any<T>(true, false, g.kg, out_size, g.mg, T(1), wg, g.kg, dyg, out_size, T(0), dxg, in_size, inner);
          continue;
        }
        for (int64_t r0 = 0; r0 < g.rows; r0 += g.rows_per_block) {
          const int64_t r1 = std::min(g.rows, r0 + g.rows_per_block), ncols = (r1 - r0) * ow;
          gemm_any<T>(true, false, g.kg, ncols, g.mg, T(1), wg, g.kg, dyg + r0 * ow, out_size, T(0), col, ncols, inner);
          if (inner && inner->num_threads() > 1 && g.cg > 1) {
            // Disjoint channels per task: col2im rows of one channel may hit the same element.
            inner->parallel_for(g.cg, 1, [&](int64_t c0, int64_t c1) {
              col2im_add<T>(col, w, r0, r1, c0 * ksize, c1 * ksize, dxg);
            });
          } else {
            col2im_add<T>(col, w, r0, r1, 0, g.kg, dxg);
          }
        }
      }
  });
  return ok_status();
}

template <typename T>
Status conv_grad_weight_typed(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& dy = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * dw, ctx.alloc_output(0));
  TSR_ASSIGN_OR_RETURN(const ConvGeom g, conv_geom(ctx, x.shape(), dw->shape()));
  T* pdw = dw->mut_data<T>();
  const int64_t wsize = dw->numel();
  std::fill(pdw, pdw + wsize, T(0));
  if (wsize == 0 || dy.numel() == 0) return ok_status();
  const Window3& w = g.w;
  const int64_t in_size = w.in_size(), out_size = w.out_size(), ow = w.out[2];
  const T* px = x.data<T>();
  const T* pdy = dy.data<T>();
  ThreadPool& pool = ctx.pool();
  const int64_t chunks = batch_chunks(pool, g.n_batch);
  // Chunk 0 accumulates into dW itself, the others into partial sums added at the end.
  std::vector<T> partial(static_cast<size_t>((chunks - 1) * wsize), T(0));
  over_batch(pool, g.n_batch, chunks, [&](int64_t ch, int64_t n0, int64_t n1, ThreadPool* inner) {
    T* acc = ch == 0 ? pdw : partial.data() + (ch - 1) * wsize;
    T* col = g.pointwise ? nullptr : col_scratch<T>(static_cast<size_t>(g.kg * g.rows_per_block * ow));
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t gi = 0; gi < g.group; ++gi) {
        const T* xg = px + (n * g.c + gi * g.cg) * in_size;
        const T* dyg = pdy + (n * g.m + gi * g.mg) * out_size;
        T* dwg = acc + gi * g.mg * g.kg;  // [mg, kg]
        if (g.pointwise) {  // dW_g += dY_g · X_g^T
          gemm_any<T>(false, true, g.mg, g.kg, out_size, T(1), dyg, out_size, xg, in_size, T(1), dwg, g.kg, inner);
          continue;
        }
        for (int64_t r0 = 0; r0 < g.rows; r0 += g.rows_per_block) {
          const int64_t r1 = std::min(g.rows, r0 + g.rows_per_block), ncols = (r1 - r0) * ow;
          if (inner && inner->num_threads() > 1 && g.kg > 1) {
            inner->parallel_for(g.kg, 8, [&](int64_t k0, int64_t k1) { im2col<T>(xg, w, r0, r1, k0, k1, col); });
          } else {
            im2col<T>(xg, w, r0, r1, 0, g.kg, col);
          }
          gemm_any<T>(false, true, g.mg, g.kg, ncols, T(1), dyg + r0 * ow, out_size, col, ncols, T(1), dwg, g.kg, inner);
        }
      }
  });
  for (int64_t ch = 1; ch < chunks; ++ch) {
    const T* p = partial.data() + (ch - 1) * wsize;
    for (int64_t i = 0; i < wsize; ++i) pdw[i] += p[i];
  }
  return ok_status();
}

// The registry admits f32 and f64 only.
Status conv_grad_input(exec::KernelContext& ctx) {
  return ctx.input(0)->dtype() == DType::kF64 ? conv_grad_input_typed<double>(ctx) : conv_grad_input_typed<float>(ctx);
}
Status conv_grad_weight(exec::KernelContext& ctx) {
  return ctx.input(0)->dtype() == DType::kF64 ? conv_grad_weight_typed<double>(ctx) : conv_grad_weight_typed<float>(ctx);
}

}  // namespace

void register_nn_grad_kernels(KernelRegistry& r) {
  r.add_fn("ConvGradInput", {DType::kF32, DType::kF64}, &conv_grad_input);
  r.add_fn("ConvGradWeight", {DType::kF32, DType::kF64}, &conv_grad_weight);
}

}  // namespace tsr::cpu
