// Implicit-GEMM 2-D convolution (conv_implicit.h). Compiled once per SIMD target
// (hwy/foreach_target.h) for the padded copy and the epilogue; conv_implicit calls the best
// target this CPU supports.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/conv_implicit.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/conv_implicit.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/epilogue.h"
#include "backends/cpu/kernels/scratch.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

// From this output width, a conv whose phase rows are wider than its output rows (kw > 1) runs
// one GEMM per output row into y instead of blocks of rows through scratch and a copy pass
// (1 thread: MobileNetV2's 3x3/2 stem 0.184 -> 0.138 ms, ResNet-18's 7x7/2 stem 1.10 -> 0.96 ms).
constexpr int64_t kMinRowCols = 64;

// The phase planes of one group's input.
struct Phases {
  int64_t sh, sw, hq, wq;  // strides; rows and columns of a plane
  int64_t plane() const { return (hq + 1) * wq; }  // + one row read by the discarded columns
};

// dst[0, n) = src[0, n) in vectors and one masked tail, inline: the rows here are short (ResNeXt's
// grouped convs copy 14..58-float rows, ~15 K of them per conv), where a memcpy call cost more
// than its copy.
inline void copy_floats(float* dst, const float* src, int64_t n) {
  const hn::ScalableTag<float> df;
  const auto L = static_cast<int64_t>(hn::Lanes(df));
  int64_t j = 0;
  for (; j + L <= n; j += L) hn::StoreU(hn::LoadU(df, src + j), df, dst + j);
  if (j < n) {
    const auto mask = hn::FirstN(df, static_cast<size_t>(n - j));
    hn::BlendedStore(hn::MaskedLoad(mask, df, src + j), mask, df, dst + j);
  }
}

// row[j] = src[off + 2 * j] for j in [j0, j1) (stride-2 phase columns, all inside the source row of
// `wd`): the even lanes of deinterleaved pairs, then single ones where a pair would pass the row's
// end. The scalar loop took 60% of ResNeXt's stride-2 grouped convs (256 channels of 56 x 56).
void gather_even(const float* src, int64_t wd, int64_t off, int64_t j0, int64_t j1, float* row) {
  const hn::ScalableTag<float> df;
  const auto L = static_cast<int64_t>(hn::Lanes(df));
  int64_t j = j0;
  for (; j + L <= j1 && off + 2 * (j + L) <= wd; j += L) {
    hn::Vec<decltype(df)> even, odd;
    hn::LoadInterleaved2(df, src + off + 2 * j, even, odd);
    hn::StoreU(even, df, row + j);
  }
  for (; j < j1; ++j) row[j] = src[off + 2 * j];
}

// Phase (qy, qx) of channel plane x (h x wd), padding (pt, pl) made explicit: out[i][j] =
// x[qy + sh * i - pt][qx + sw * j - pl], 0 outside x.
void fill_phase(const float* x, int64_t h, int64_t wd, int64_t pt, int64_t pl, const Phases& ph, int64_t qy, int64_t qx,
                float* out) {
  for (int64_t i = 0; i <= ph.hq; ++i) {
    float* row = out + i * ph.wq;
    const int64_t ih = qy + ph.sh * i - pt;
    if (ih < 0 || ih >= h) {
      std::fill_n(row, ph.wq, 0.0f);
      continue;
    }
    const float* src = x + ih * wd;
    // Columns j with 0 <= qx + sw * j - pl < wd.
    const int64_t off = qx - pl;
    const int64_t j0 = std::min(ph.wq, off >= 0 ? 0 : (-off + ph.sw - 1) / ph.sw);
    const int64_t j1 = std::clamp<int64_t>(wd - 1 - off >= 0 ? (wd - 1 - off) / ph.sw + 1 : 0, j0, ph.wq);
    std::fill(row, row + j0, 0.0f);
    if (ph.sw == 1) {
      copy_floats(row + j0, src + j0 + off, j1 - j0);
    } else if (ph.sw == 2) {
      gather_even(src, wd, off, j0, j1, row);
    } else {
      const float* s = src + off;
      for (int64_t j = j0; j < j1; ++j) row[j] = s[ph.sw * j];
    }
    std::fill(row + j1, row + ph.wq, 0.0f);
  }
}

// The shapes of one image and group's implicit GEMM: phase planes, output rows per block.
struct Geometry {
  Phases ph;
  int64_t nph, c, m, kh_n, kw_n, dh, dw, h, wd, oh_n, ow_n, out_size;
  int64_t rb;      // output rows per block
  bool row_gemms;  // one GEMM per output row, straight into y
  bool scratch_block() const { return ph.wq != ow_n && !row_gemms; }  // blocks go through scratch
};

Geometry geometry(const SgemmDirectA& a, const Window3& w, int threads) {
  Geometry g{};
  g.kh_n = w.k[1], g.kw_n = w.k[2], g.h = w.in[1], g.wd = w.in[2], g.oh_n = w.out[1], g.ow_n = w.out[2];
  g.dh = w.d[1], g.dw = w.d[2], g.m = a.m, g.c = a.k / (g.kh_n * g.kw_n);
  g.ph = Phases{w.s[1], w.s[2], 0, 0};
  g.ph.hq = g.oh_n + (g.kh_n - 1) * g.dh / g.ph.sh;
  g.ph.wq = g.ow_n + (g.kw_n - 1) * g.dw / g.ph.sw;
  g.nph = g.ph.sh * g.ph.sw;
  g.out_size = g.oh_n * g.ow_n;
  // Blocks of output rows: about 1024 GEMM columns each, and 8 per thread where there are rows
  // (with 4 the last blocks left one thread idle for a tenth of ResNet's stem at two threads),
  // but at least 128 columns (each block reads all of A).
  g.rb = std::clamp<int64_t>(1024 / g.ph.wq, 1, g.oh_n);
  if (threads > 1) g.rb = std::min(g.rb, std::max((128 + g.ph.wq - 1) / g.ph.wq, g.oh_n / (8 * threads)));
  g.row_gemms = g.ph.wq != g.ow_n && g.ow_n >= kMinRowCols;  // else blocks through scratch when wq != ow
  return g;
}

// Phase planes [q0, q1) (plane q: channel q / nph, phase q % nph) of one group's input x into xq.
void fill_planes(const float* x, const Window3& w, const Geometry& g, int64_t q0, int64_t q1, float* xq) {
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t ci = q / g.nph, f = q % g.nph;
    fill_phase(x + ci * g.h * g.wd, g.h, g.wd, w.pb[1], w.pb[2], g.ph, f / g.ph.sw, f % g.ph.sw, xq + q * g.ph.plane());
  }
}

// Row p = (ci * kh + i) * kw + j of B: the view of tap (ci, i, j) in the phase planes xq.
void tap_rows(const Geometry& g, const float* xq, const float** rows) {
  for (int64_t ci = 0; ci < g.c; ++ci)
    for (int64_t i = 0; i < g.kh_n; ++i)
      for (int64_t j = 0; j < g.kw_n; ++j) {
        const int64_t oy = i * g.dh, ox = j * g.dw;
        const int64_t f = (oy % g.ph.sh) * g.ph.sw + ox % g.ph.sw;
        rows[static_cast<size_t>((ci * g.kh_n + i) * g.kw_n + j)] =
            xq + (ci * g.nph + f) * g.ph.plane() + (oy / g.ph.sh) * g.ph.wq + ox / g.ph.sw;
      }
}

// Output row blocks [b0, b1) of one image and group; `out`: m * rb * wq floats where
// g.scratch_block().
void run_blocks(const SgemmDirectA& a, const Geometry& g, const float* const* rows, const float* bias, const float* z,
                const ops::ActivationSpec& act, float* y, float* out, int64_t b0, int64_t b1) {
  const int64_t oh_n = g.oh_n, ow_n = g.ow_n, rb = g.rb, out_size = g.out_size, wq = g.ph.wq;
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t r0 = b * rb, r1 = std::min(oh_n, r0 + rb), cols = (r1 - r0) * wq;
    float* y0 = y + r0 * ow_n;
    if (wq == ow_n) {
      // No discarded columns (kw == 1): straight into y, Z and the activation in registers.
      sgemm_direct_rows(a, cols, rows, r0 * wq, bias, z ? z + r0 * ow_n : nullptr, out_size, y0, out_size, &act);
      continue;
    }
    if (g.row_gemms) {
      // Wide output rows: one GEMM per output row, its Wq - OW discarded columns never
      // computed, straight into y with Z and the activation in registers (no copy pass).
      for (int64_t r = r0; r < r1; ++r)
        sgemm_direct_rows(a, ow_n, rows, r * wq, bias, z ? z + r * ow_n : nullptr, out_size, y + r * ow_n, out_size,
                          &act);
      continue;
    }
    // Without Z the activation goes in the tiles' registers (as nn.cpp's sgemm_direct blocks
    // apply it, Sigmoid excepted), so the copy is the only pass over the block.
    const bool act_in_tiles = !z && act.kind != ops::FusedActivation::kSigmoid;
    sgemm_direct_rows(a, cols, rows, r0 * wq, bias, nullptr, 0, out, cols, act_in_tiles ? &act : nullptr);
    for (int64_t mo = 0; mo < g.m; ++mo) {
      float* ym = y0 + mo * out_size;
      for (int64_t r = 0; r < r1 - r0; ++r) copy_floats(ym + r * ow_n, out + mo * cols + r * wq, ow_n);
    }
    if (!act_in_tiles)
      apply_epilogue_rows(act, y0, g.m, (r1 - r0) * ow_n, out_size, static_cast<const float*>(nullptr),
                          z ? z + r0 * ow_n : nullptr, out_size);
  }
}

}  // namespace

Status conv_implicit_impl(exec::KernelContext& ctx, const SgemmDirectA& a, const float* x, const Window3& w,
                          const float* bias, const float* z, const ops::ActivationSpec& act, float* y, bool threaded) {
  ThreadPool& pool = ctx.pool();
  const int threads = threaded ? pool.num_threads() : 1;
  const Geometry g = geometry(a, w, threads);
  TSR_ASSIGN_OR_RETURN(auto input, Scratch<float>::make(ctx, static_cast<size_t>(g.c * g.nph * g.ph.plane())));
  float* xq = input.data();  // read by every slot
  if (threaded) pool.parallel_for(g.c * g.nph, 1, [&](int64_t q0, int64_t q1) { fill_planes(x, w, g, q0, q1, xq); });
  else fill_planes(x, w, g, 0, g.c * g.nph, xq);
  TSR_ASSIGN_OR_RETURN(auto row_table, Scratch<const float*>::make(ctx, static_cast<size_t>(a.k)));
  const float** rows = row_table.data();
  tap_rows(g, xq, rows);
  const int64_t blocks = (g.oh_n + g.rb - 1) / g.rb;
  const bool parallel = threads > 1 && blocks > 1;
  TSR_ASSIGN_OR_RETURN(auto block, SlotScratch<float>::make(
                                       ctx, g.scratch_block() ? static_cast<size_t>(g.m * g.rb * g.ph.wq) : 0, parallel));
  auto run = [&](int slot, int64_t b0, int64_t b1) { run_blocks(a, g, rows, bias, z, act, y, block.slot(slot), b0, b1); };
  if (parallel) pool.parallel_for_slots(blocks, 1, run);
  else run(0, 0, blocks);
  return ok_status();
}

Status conv_implicit_groups_impl(exec::KernelContext& ctx, const SgemmDirectA* a, const float* x, int64_t n_batch,
                                 int64_t group, const Window3& w, const float* bias, const float* z,
                                 const ops::ActivationSpec& act, float* y) {
  const Geometry g = geometry(a[0], w, 1);
  const int64_t in_size = w.in[1] * w.in[2], plane_floats = g.c * g.nph * g.ph.plane();
  const int64_t block_floats = g.scratch_block() ? g.m * g.rb * g.ph.wq : 0;
  // Per slot: the group's phase planes, then the block buffer; and its row table.
  TSR_ASSIGN_OR_RETURN(auto buf, SlotScratch<float>::make(ctx, static_cast<size_t>(plane_floats + block_floats)));
  TSR_ASSIGN_OR_RETURN(auto row_tables, SlotScratch<const float*>::make(ctx, static_cast<size_t>(a[0].k)));
  const int64_t blocks = (g.oh_n + g.rb - 1) / g.rb;
  ctx.pool().parallel_for_slots(n_batch * group, 1, [&](int slot, int64_t p0, int64_t p1) {
    float* xq = buf.slot(slot);
    const float** rows = row_tables.slot(slot);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n = p / group, gi = p % group;
      const int64_t y0 = (n * group + gi) * g.m * g.out_size;
      fill_planes(x + (n * group + gi) * g.c * in_size, w, g, 0, g.c * g.nph, xq);
      tap_rows(g, xq, rows);
      run_blocks(a[gi], g, rows, bias ? bias + gi * g.m : nullptr, z ? z + y0 : nullptr, act, y + y0,
                 xq + plane_floats, 0, blocks);
    }
  });
  return ok_status();
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(conv_implicit_impl);
HWY_EXPORT(conv_implicit_groups_impl);

bool conv_implicit_applies(const Window3& w) { return w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1; }

Status conv_implicit(exec::KernelContext& ctx, const SgemmDirectA& a, const float* x, const Window3& w,
                     const float* bias, const float* z, const ops::ActivationSpec& act, float* y, bool threaded) {
  return HWY_DYNAMIC_DISPATCH(conv_implicit_impl)(ctx, a, x, w, bias, z, act, y, threaded);
}

Status conv_implicit_groups(exec::KernelContext& ctx, const SgemmDirectA* a, const float* x, int64_t n_batch,
                            int64_t group, const Window3& w, const float* bias, const float* z,
                            const ops::ActivationSpec& act, float* y) {
  return HWY_DYNAMIC_DISPATCH(conv_implicit_groups_impl)(ctx, a, x, n_batch, group, w, bias, z, act, y);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
