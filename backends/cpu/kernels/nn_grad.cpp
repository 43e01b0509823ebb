// CPU kernels for Conv's gradient ops (semantics: core/ops/families/nn_grad.cpp), the adjoints
// of the forward im2col + GEMM (nn.cpp), on the same blocks of output rows:
//   ConvGradInput:  col = W_g^T · dY_g (GEMM), then col2im adds col onto dX_g;
//   ConvGradWeight: dW_g^T += im2col(X_g) · dY_g^T (GEMM with beta = 1), transposed at the end.
// 1x1 / stride-1 / unpadded convs skip the column matrix. Small images are put side by side in
// one column matrix (one wide GEMM for several images). Training batches are many small
// images, so the batch is split over the thread pool (each thread runs its GEMMs inline, the
// weight gradient into a per-thread partial sum); a single image uses the pool inside instead.
// f32 runs on the packed SGEMM, f64 on the reference GEMM.
#include <algorithm>
#include <type_traits>
#include <utility>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/conv_small.h"
#include "backends/cpu/kernels/depthwise_grad.h"
#include "backends/cpu/kernels/im2col.h"
#include "backends/cpu/kernels/matmul.h"
#include "backends/cpu/kernels/scratch.h"

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
  const Ints in(xs.begin() + 2, xs.end()), kernel(ws.begin() + 2, ws.end());  // inline: no allocation per step
  TSR_ASSIGN_OR_RETURN(g.w, resolve_window3(ctx, in, kernel, false));
  const Window3& w = g.w;
  g.group = ctx.node().attr_int("group");
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

// `chunks` buffers of `per` elements, one per chunk of over_batch (chunk ch at ch * per), from the
// run's scratch arena (scratch.h): indexed by chunk, so the requests and the partial sums' order
// repeat from run to run whichever thread runs a chunk, and a steady-state step allocates nothing.
template <typename T>
Expected<Scratch<T>> per_chunk(exec::KernelContext& ctx, int64_t chunks, int64_t per) {
  return Scratch<T>::make(ctx, static_cast<size_t>(std::max<int64_t>(chunks, 0) * per));
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

// Calls fn(n0, count, r0, r1) for the column blocks of images [n0, n1): `per_gemm` whole images
// side by side at a time (small images, the training case: one wide GEMM per block, the weights
// packed once per block), else one image in blocks of g.rows_per_block output rows.
template <typename Fn>
void for_col_blocks(const ConvGeom& g, int64_t n0, int64_t n1, int64_t per_gemm, const Fn& fn) {
  if (per_gemm > 1) {
    for (int64_t n = n0; n < n1; n += per_gemm) fn(n, std::min(per_gemm, n1 - n), int64_t{0}, g.rows);
    return;
  }
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t r0 = 0; r0 < g.rows; r0 += g.rows_per_block)
      fn(n, int64_t{1}, r0, std::min(g.rows, r0 + g.rows_per_block));
}

// Whole images per GEMM: up to ~512 KiB of f32 columns (an L2-sized block, which col2im /
// the GEMM's packing read back), when one image's columns fit in a block.
int64_t images_per_gemm(const ConvGeom& g) {
  if (g.pointwise || g.rows_per_block < g.rows) return 1;
  const int64_t per_image = std::max<int64_t>(1, g.kg * g.w.out_size());
  return std::clamp<int64_t>((int64_t{1} << 17) / per_image, 1, std::max<int64_t>(1, g.n_batch));
}

// dY_g of images [n0, n0 + count), output rows [r0, r1): a pointer and row stride, gathered into
// `buf` ([mg, count * ncols], images side by side) when there are several images.
template <typename T>
const T* gather_dy(const T* dy, const ConvGeom& g, int64_t gi, int64_t n0, int64_t count, int64_t r0, int64_t r1,
                   T* buf, int64_t* ld) {
  const int64_t out_size = g.w.out_size(), ow = g.w.out[2], ncols = (r1 - r0) * ow;
  const T* first = dy + (n0 * g.m + gi * g.mg) * out_size + r0 * ow;
  if (count == 1) {
    *ld = out_size;
    return first;
  }
  *ld = count * ncols;
  for (int64_t j = 0; j < count; ++j)
    for (int64_t o = 0; o < g.mg; ++o)
      std::memcpy(buf + o * *ld + j * ncols, first + (j * g.m + o) * out_size, static_cast<size_t>(ncols) * sizeof(T));
  return buf;
}

// Pointwise convs on small planes (MobileNet's late 1x1 layers: 4-64 positions): images per
// GEMM, their planes side by side, so that the GEMM packs its weights once for them (1: planes
// of 256 positions and more go one image at a time).
int64_t pointwise_images(const ConvGeom& g) {
  const int64_t p = g.w.out_size();
  return g.pointwise && p < 256 ? std::clamp<int64_t>(4096 / std::max<int64_t>(1, p), 1, g.n_batch) : 1;
}

// For the blocks of up to `per` images of [n0, n1) and each group: dY_g gathered side by side
// into buf (gather_dy), then fn(n, count, group, dY_g, its ld, the rest of buf).
template <typename T, typename Fn>
void for_pointwise_blocks(const ConvGeom& g, const T* pdy, int64_t n0, int64_t n1, int64_t per, T* buf, const Fn& fn) {
  for (int64_t n = n0; n < n1; n += per) {
    const int64_t count = std::min(per, n1 - n);
    for (int64_t gi = 0; gi < g.group; ++gi) {
      int64_t ldb = 0;
      const T* b = gather_dy(pdy, g, gi, n, count, 0, g.rows, buf, &ldb);
      fn(n, count, gi, b, ldb, buf + g.mg * count * g.w.out_size());
    }
  }
}

// fn(x offset, side offset) for group gi's cg input-channel planes of images [n, n + count):
// their offsets in X ([N, c, P]) and in a buffer of them side by side ([cg, count * P]).
template <typename Fn>
void for_side_planes(const ConvGeom& g, int64_t n, int64_t count, int64_t gi, const Fn& fn) {
  const int64_t p = g.w.out_size();
  for (int64_t j = 0; j < count; ++j)
    for (int64_t c = 0; c < g.cg; ++c) fn(((n + j) * g.c + gi * g.cg + c) * p, c * count * p + j * p);
}

// Depthwise convs (one input and one output channel per group, MobileNet's 3x3 layers) skip the
// GEMM, whose [9 x 1] products per group cost more in call and packing overhead than the
// arithmetic. f32 2-D windows run the vectorized polyphase kernels of depthwise_grad.h; the rest
// (f64, 3-D) walk the window directly here, one (kd, kh, kw, od, oh) row of outputs at a time
// over the output columns whose input column lies inside the image.

// Outputs [lo, hi) along one dim whose input o * s - pb + koff lies in [0, in).
inline std::pair<int64_t, int64_t> valid_outputs(int64_t out, int64_t in, int64_t s, int64_t pb, int64_t koff) {
  const int64_t first = pb - koff;  // o * s >= first
  const int64_t lo = first <= 0 ? 0 : (first + s - 1) / s;
  const int64_t last = in - 1 + pb - koff;  // o * s <= last
  const int64_t hi = last < 0 ? 0 : last / s + 1;
  return {std::min(lo, out), std::clamp<int64_t>(hi, std::min(lo, out), out)};
}

// Calls fn(k, x_row_offset, y_row_offset, lo, hi, ioff) for each kernel tap k and each output
// row (od, oh) whose input row is inside the image: output column ow reads input column
// ow * s[2] + ioff.
template <typename Fn>
void for_depthwise_rows(const Window3& w, const Fn& fn) {
  int64_t k = 0;
  for (int64_t kd = 0; kd < w.k[0]; ++kd)
    for (int64_t kh = 0; kh < w.k[1]; ++kh)
      for (int64_t kw = 0; kw < w.k[2]; ++kw, ++k) {
        const auto [lo, hi] = valid_outputs(w.out[2], w.in[2], w.s[2], w.pb[2], kw * w.d[2]);
        if (lo >= hi) continue;
        const int64_t ioff = kw * w.d[2] - w.pb[2];
        for (int64_t od = 0; od < w.out[0]; ++od) {
          const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
          if (id < 0 || id >= w.in[0]) continue;
          for (int64_t oh = 0; oh < w.out[1]; ++oh) {
            const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
            if (ih < 0 || ih >= w.in[1]) continue;
            fn(k, (id * w.in[1] + ih) * w.in[2], (od * w.out[1] + oh) * w.out[2], lo, hi, ioff);
          }
        }
      }
}

// dX[n, c] += W[c, k] * dY[n, c] over the window, planes in parallel (dx zeroed by the caller).
template <typename T>
void depthwise_grad_input(const ConvGeom& g, const T* pdy, const T* pw, T* pdx, ThreadPool& pool) {
  const Window3& w = g.w;
  const int64_t in_size = w.in_size(), out_size = w.out_size(), ksize = w.k_size(), s = w.s[2];
  pool.parallel_for(g.n_batch * g.c, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t ch = p % g.c;
      T* dx = pdx + p * in_size;
      const T* dy = pdy + p * out_size;
      for_depthwise_rows(w, [&](int64_t k, int64_t xo, int64_t yo, int64_t lo, int64_t hi, int64_t ioff) {
        const T wv = pw[ch * ksize + k];
        T* xr = dx + xo + ioff;
        const T* yr = dy + yo;
        if (s == 1) {
          for (int64_t o = lo; o < hi; ++o) xr[o] += wv * yr[o];
        } else {
          for (int64_t o = lo; o < hi; ++o) xr[o * s] += wv * yr[o];
        }
      });
    }
  });
}

// dW[c, k] = sum over n and the outputs of X[n, c] (under tap k) * dY[n, c]; channels in
// parallel. Each tap sums into a row of out[2] lanes (acc[k][o] += x * dy, independent adds the
// compiler vectorizes, no loop-carried dependency per element), reduced in double at the end.
template <typename T>
Status depthwise_grad_weight(exec::KernelContext& ctx, const ConvGeom& g, const T* px, const T* pdy, T* pdw) {
  const Window3& w = g.w;
  const int64_t in_size = w.in_size(), out_size = w.out_size(), ksize = w.k_size(), s = w.s[2], ow = w.out[2];
  ThreadPool& pool = ctx.pool();
  TSR_ASSIGN_OR_RETURN(const SlotScratch<T> accs, SlotScratch<T>::make(ctx, static_cast<size_t>(ksize * ow)));
  pool.parallel_for_slots(g.c, 1, [&](int slot, int64_t c0, int64_t c1) {
    T* acc = accs.slot(slot);
    for (int64_t ch = c0; ch < c1; ++ch) {
      std::fill(acc, acc + ksize * ow, T(0));
      for (int64_t n = 0; n < g.n_batch; ++n) {
        const T* x = px + (n * g.c + ch) * in_size;
        const T* dy = pdy + (n * g.c + ch) * out_size;
        for_depthwise_rows(w, [&](int64_t k, int64_t xo, int64_t yo, int64_t lo, int64_t hi, int64_t ioff) {
          const T* xr = x + xo + ioff;
          const T* yr = dy + yo;
          T* a = acc + k * ow;
          if (s == 1) {
            for (int64_t o = lo; o < hi; ++o) a[o] += xr[o] * yr[o];
          } else {
            for (int64_t o = lo; o < hi; ++o) a[o] += xr[o * s] * yr[o];
          }
        });
      }
      for (int64_t k = 0; k < ksize; ++k) {
        double sum = 0;
        for (int64_t o = 0; o < ow; ++o) sum += static_cast<double>(acc[k * ow + o]);
        pdw[ch * ksize + k] = static_cast<T>(sum);
      }
    }
  });
  return ok_status();
}

template <typename T>
Status conv_grad_input_typed(exec::KernelContext& ctx) {
  const Tensor& dy = *ctx.input(0);
  const Tensor& wt = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * dx, ctx.alloc_output(0));
  TSR_ASSIGN_OR_RETURN(const ConvGeom g, conv_geom(ctx, dx->shape(), wt.shape()));
  T* pdx = dx->mut_data<T>();
  const bool depthwise = g.cg == 1 && g.mg == 1 && g.group > 1;
  DepthwisePlan plan;
  if constexpr (std::is_same_v<T, float>) {
    DepthwiseSmallPlan small_dw;  // planes of <= 16 outputs: 16 channels per vector (depthwise_grad.h)
    if (depthwise && dy.numel() > 0 && dx->numel() > 0 && make_depthwise_small_plan(g.w, g.c, &small_dw)) {
      TSR_ASSIGN_OR_RETURN(const Scratch<float> wt_small, Scratch<float>::make(ctx, small_dw.weight_floats()));
      depthwise_small_weights(small_dw, wt.data<float>(), nullptr, g.c, wt_small.data());
      TSR_ASSIGN_OR_RETURN(const SlotScratch<float> bufs, SlotScratch<float>::make(ctx, small_dw.scratch_floats()));
      ctx.pool().parallel_for_slots(g.n_batch * (small_dw.cpad / DepthwiseSmallPlan::kBlock), 1,
                                    [&](int slot, int64_t b0, int64_t b1) {
        depthwise_small_grad_input(small_dw, dy.data<float>(), wt_small.data(), pdx, g.c, b0, b1, bufs.slot(slot));
      });
      return ok_status();
    }
    if (depthwise && dy.numel() > 0 && dx->numel() > 0 && make_depthwise_plan(g.w, &plan)) {
      // Writes every element of dX: no zero fill.
      TSR_ASSIGN_OR_RETURN(const SlotScratch<float> bufs, SlotScratch<float>::make(ctx, plan.input_scratch()));
      ctx.pool().parallel_for_slots(g.n_batch * g.c, 1, [&](int slot, int64_t p0, int64_t p1) {
        depthwise_grad_input_planes(plan, dy.data<float>(), wt.data<float>(), pdx, p0, p1, g.c, bufs.slot(slot));
      });
      return ok_status();
    }
    ConvSmallPlan direct;
    if (dy.numel() > 0 && dx->numel() > 0 && make_conv_small_plan(g.w, g.c, g.m, g.group, &direct)) {
      // Small dense stride-1 convs: the GEMM on dY laid out at the padded input's row pitch, then
      // one contiguous add per tap (conv_small.h) instead of col2im's short rows.
      ThreadPool& pool = ctx.pool();
      const int64_t kg = g.kg, run = direct.run;
      const int64_t per_gemm = std::clamp<int64_t>((int64_t{1} << 17) / std::max<int64_t>(1, kg * run), 1, g.n_batch);
      const int64_t chunks = batch_chunks(pool, g.n_batch);
      const int64_t per = (g.mg + kg) * per_gemm * run + direct.x_plane;
      TSR_ASSIGN_OR_RETURN(const Scratch<float> bufs, per_chunk<float>(ctx, chunks, per));
      over_batch(pool, g.n_batch, chunks, [&](int64_t ch, int64_t n0, int64_t n1, ThreadPool* inner) {
        float* dye = bufs.data() + ch * per;
        for (int64_t n = n0; n < n1; n += per_gemm) {
          const int64_t count = std::min(per_gemm, n1 - n), ld = count * run;
          float* col = dye + g.mg * ld;
          conv_small_gather_dy(direct, dy.data<float>(), n, count, dye);
          gemm_any<float>(true, false, kg, ld, g.mg, 1.0f, wt.data<float>(), kg, dye, ld, 0.0f, col, ld, inner);
          conv_grad_input_direct_col2im(direct, col, n, count, pdx, col + kg * ld);
        }
      });
      return ok_status();
    }
  }
  std::fill(pdx, pdx + dx->numel(), T(0));
  if (dx->numel() == 0 || dy.numel() == 0) return ok_status();
  const Window3& w = g.w;
  const int64_t in_size = w.in_size(), out_size = w.out_size(), ow = w.out[2], ksize = w.k_size();
  const T* pdy = dy.data<T>();
  const T* pw = wt.data<T>();
  ThreadPool& pool = ctx.pool();
  if (depthwise) {
    depthwise_grad_input<T>(g, pdy, pw, pdx, pool);
    return ok_status();
  }
  const int64_t per_gemm = images_per_gemm(g);
  const int64_t max_cols = std::max(per_gemm * out_size, g.rows_per_block * ow);
  const int64_t chunks = batch_chunks(pool, g.n_batch);
  TSR_ASSIGN_OR_RETURN(const Scratch<T> cols, per_chunk<T>(ctx, g.pointwise ? 0 : chunks, g.kg * max_cols));
  TSR_ASSIGN_OR_RETURN(const Scratch<T> dybs, per_chunk<T>(ctx, per_gemm > 1 ? chunks : 0, g.mg * max_cols));
  const int64_t pw_count = pointwise_images(g), pw_per = (g.mg + g.kg) * pw_count * out_size;
  TSR_ASSIGN_OR_RETURN(const Scratch<T> pw_bufs, per_chunk<T>(ctx, pw_count > 1 ? chunks : 0, pw_per));
  over_batch(pool, g.n_batch, chunks, [&](int64_t ch, int64_t n0, int64_t n1, ThreadPool* inner) {
    if (pw_count > 1) {  // dX_g = W_g^T · dY_g of several images at once, copied into each
      for_pointwise_blocks<T>(g, pdy, n0, n1, pw_count, pw_bufs.data() + ch * pw_per,
                              [&](int64_t n, int64_t count, int64_t gi, const T* b, int64_t ldb, T* colb) {
                                const int64_t ld = count * out_size;
                                gemm_any<T>(true, false, g.kg, ld, g.mg, T(1), pw + gi * g.mg * g.kg, g.kg, b, ldb, T(0),
                                            colb, ld, inner);
                                for_side_planes(g, n, count, gi, [&](int64_t xo, int64_t so) {
                                  std::memcpy(pdx + xo, colb + so, static_cast<size_t>(out_size) * sizeof(T));
                                });
                              });
      return;
    }
    if (g.pointwise) {  // dX_g = W_g^T · dY_g, written in place
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t gi = 0; gi < g.group; ++gi)
          gemm_any<T>(true, false, g.kg, out_size, g.mg, T(1), pw + gi * g.mg * g.kg, g.kg,
                      pdy + (n * g.m + gi * g.mg) * out_size, out_size, T(0), pdx + (n * g.c + gi * g.cg) * in_size,
                      in_size, inner);
      return;
    }
    T* col = cols.data() + ch * g.kg * max_cols;
    T* dyb = per_gemm > 1 ? dybs.data() + ch * g.mg * max_cols : nullptr;
    for_col_blocks(g, n0, n1, per_gemm, [&](int64_t nb, int64_t count, int64_t r0, int64_t r1) {
      const int64_t ncols = (r1 - r0) * ow;
      for (int64_t gi = 0; gi < g.group; ++gi) {
        int64_t ldb = 0;
        const T* b = gather_dy(pdy, g, gi, nb, count, r0, r1, dyb, &ldb);
        const int64_t ld = count * ncols;
        gemm_any<T>(true, false, g.kg, ld, g.mg, T(1), pw + gi * g.mg * g.kg, g.kg, b, ldb, T(0), col, ld, inner);
        for (int64_t j = 0; j < count; ++j) {
          T* dxg = pdx + ((nb + j) * g.c + gi * g.cg) * in_size;
          const T* cj = col + j * ncols;
          if (inner && inner->num_threads() > 1 && g.cg > 1) {
            // Disjoint channels per task: col2im rows of one channel may hit the same element.
            inner->parallel_for(g.cg, 1, [&](int64_t c0, int64_t c1) {
              col2im_add<T>(cj, w, r0, r1, c0 * ksize, c1 * ksize, dxg, ld);
            });
          } else {
            col2im_add<T>(cj, w, r0, r1, 0, g.kg, dxg, ld);
          }
        }
      }
    });
  });
  return ok_status();
}

// dW accumulates transposed, dW_g^T [kg, mg] += im2col(X_g) · dY_g^T: the column matrix is
// then GEMM's A, read along its rows, and only the small dY_g is packed transposed (with dW_g
// = dY_g · im2col^T the packing of the wide transposed columns cost as much as the product).
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
  if (g.cg == 1 && g.mg == 1 && g.group > 1) {
    DepthwisePlan plan;
    if constexpr (std::is_same_v<T, float>) {
      DepthwiseSmallPlan small_dw;  // planes of <= 16 outputs: 16 channels per vector (depthwise_grad.h)
      if (make_depthwise_small_plan(w, g.c, &small_dw)) {
        TSR_ASSIGN_OR_RETURN(const SlotScratch<float> bufs, SlotScratch<float>::make(ctx, small_dw.scratch_floats()));
        pool.parallel_for_slots(small_dw.cpad / DepthwiseSmallPlan::kBlock, 1, [&](int slot, int64_t b0, int64_t b1) {
          depthwise_small_grad_weight(small_dw, px, pdy, pdw, g.n_batch, g.c, b0, b1, bufs.slot(slot));
        });
        return ok_status();
      }
      if (make_depthwise_plan(w, &plan)) {
        TSR_ASSIGN_OR_RETURN(const SlotScratch<float> bufs, SlotScratch<float>::make(ctx, plan.weight_scratch()));
        pool.parallel_for_slots(g.c, 1, [&](int slot, int64_t c0, int64_t c1) {
          depthwise_grad_weight_channels(plan, px, pdy, pdw, c0, c1, g.n_batch, g.c, bufs.slot(slot));
        });
        return ok_status();
      }
    }
    return depthwise_grad_weight<T>(ctx, g, px, pdy, pdw);
  }
  const int64_t chunks = batch_chunks(pool, g.n_batch);
  if constexpr (std::is_same_v<T, float>) {
    // Small dense 2-D convs (few output channels, stride 1): the direct kernel, per chunk of
    // images into a partial dW, the partials added in chunk order.
    ConvSmallPlan plan;
    if (make_conv_small_plan(w, g.c, g.m, g.group, &plan)) {
      TSR_ASSIGN_OR_RETURN(const Scratch<float> partial, per_chunk<float>(ctx, chunks, wsize));
      TSR_ASSIGN_OR_RETURN(const Scratch<float> bufs,
                           per_chunk<float>(ctx, chunks, static_cast<int64_t>(plan.scratch_floats())));
      over_batch(pool, g.n_batch, chunks, [&](int64_t ch, int64_t n0, int64_t n1, ThreadPool*) {
        conv_grad_weight_direct(plan, px, pdy, partial.data() + ch * wsize, n0, n1,
                                bufs.data() + ch * static_cast<int64_t>(plan.scratch_floats()));
      });
      for (int64_t ch = 0; ch < chunks; ++ch)
        for (int64_t i = 0; i < wsize; ++i) pdw[i] += partial.data()[ch * wsize + i];
      return ok_status();
    }
  }
  const int64_t per_gemm = images_per_gemm(g);
  const int64_t max_cols = std::max(per_gemm * out_size, g.rows_per_block * ow);
  // Per chunk: the transposed partial sums [group, kg, mg], added up at the end; the columns.
  TSR_ASSIGN_OR_RETURN(const Scratch<T> partial, per_chunk<T>(ctx, chunks, wsize));
  TSR_ASSIGN_OR_RETURN(const Scratch<T> cols, per_chunk<T>(ctx, g.pointwise ? 0 : chunks, g.kg * max_cols));
  TSR_ASSIGN_OR_RETURN(const Scratch<T> dybs, per_chunk<T>(ctx, per_gemm > 1 ? chunks : 0, g.mg * max_cols));
  const int64_t pw_count = pointwise_images(g), pw_per = (g.mg + g.kg) * pw_count * out_size;
  TSR_ASSIGN_OR_RETURN(const Scratch<T> pw_bufs, per_chunk<T>(ctx, pw_count > 1 ? chunks : 0, pw_per));
  std::fill(partial.begin(), partial.end(), T(0));
  over_batch(pool, g.n_batch, chunks, [&](int64_t ch, int64_t n0, int64_t n1, ThreadPool* inner) {
    T* acc = partial.data() + ch * wsize;
    if (pw_count > 1) {  // dW_g^T += X_g · dY_g^T over several images at once (depth count * P)
      for_pointwise_blocks<T>(g, pdy, n0, n1, pw_count, pw_bufs.data() + ch * pw_per,
                              [&](int64_t n, int64_t count, int64_t gi, const T* b, int64_t ldb, T* xb) {
                                const int64_t ld = count * out_size;
                                for_side_planes(g, n, count, gi, [&](int64_t xo, int64_t so) {
                                  std::memcpy(xb + so, px + xo, static_cast<size_t>(out_size) * sizeof(T));
                                });
                                gemm_any<T>(false, true, g.kg, g.mg, ld, T(1), xb, ld, b, ldb, T(1),
                                            acc + gi * g.mg * g.kg, g.mg, inner);
                              });
      return;
    }
    if (g.pointwise) {  // dW_g^T += X_g · dY_g^T
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t gi = 0; gi < g.group; ++gi)
          gemm_any<T>(false, true, g.kg, g.mg, out_size, T(1), px + (n * g.c + gi * g.cg) * in_size, in_size,
                      pdy + (n * g.m + gi * g.mg) * out_size, out_size, T(1), acc + gi * g.mg * g.kg, g.mg, inner);
      return;
    }
    T* col = cols.data() + ch * g.kg * max_cols;
    T* dyb = per_gemm > 1 ? dybs.data() + ch * g.mg * max_cols : nullptr;
    for_col_blocks(g, n0, n1, per_gemm, [&](int64_t nb, int64_t count, int64_t r0, int64_t r1) {
      const int64_t ncols = (r1 - r0) * ow, ld = count * ncols;
      for (int64_t gi = 0; gi < g.group; ++gi) {
        for (int64_t j = 0; j < count; ++j) {
          const T* xg = px + ((nb + j) * g.c + gi * g.cg) * in_size;
          T* cj = col + j * ncols;
          if (inner && inner->num_threads() > 1 && g.kg > 1) {
            inner->parallel_for(g.kg, 8, [&](int64_t k0, int64_t k1) { im2col<T>(xg, w, r0, r1, k0, k1, cj, ld); });
          } else {
            im2col<T>(xg, w, r0, r1, 0, g.kg, cj, ld);
          }
        }
        int64_t ldb = 0;
        const T* b = gather_dy(pdy, g, gi, nb, count, r0, r1, dyb, &ldb);
        gemm_any<T>(false, true, g.kg, g.mg, ld, T(1), col, ld, b, ldb, T(1), acc + gi * g.mg * g.kg, g.mg, inner);
      }
    });
  });
  // dW[gi][o][k] = sum over chunks of partial[ch][gi][k][o].
  for (int64_t gi = 0; gi < g.group; ++gi)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      const T* p = partial.data() + ch * wsize + gi * g.mg * g.kg;
      T* d = pdw + gi * g.mg * g.kg;
      for (int64_t k = 0; k < g.kg; ++k)
        for (int64_t o = 0; o < g.mg; ++o) d[o * g.kg + k] += p[k * g.mg + o];
    }
  return ok_status();
}

// The registry admits f32 and f64 only.
Status conv_grad_input(exec::KernelContext& ctx) {
  if (ctx.input(0)->dtype() == DType::kF64) return conv_grad_input_typed<double>(ctx);
  return conv_grad_input_typed<float>(ctx);
}
Status conv_grad_weight(exec::KernelContext& ctx) {
  if (ctx.input(0)->dtype() == DType::kF64) return conv_grad_weight_typed<double>(ctx);
  return conv_grad_weight_typed<float>(ctx);
}

}  // namespace

void register_nn_grad_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("ConvGradInput") r.add_fn("ConvGradInput", {DType::kF32, DType::kF64}, &conv_grad_input);
  TSR_IF_SELECTED("ConvGradWeight") r.add_fn("ConvGradWeight", {DType::kF32, DType::kF64}, &conv_grad_weight);
}

}  // namespace tsr::cpu
