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

}  // namespace

Status conv_implicit_impl(exec::KernelContext& ctx, const SgemmDirectA& a, const float* x, const Window3& w,
                          const float* bias, const float* z, const ops::ActivationSpec& act, float* y, bool threaded) {
  ThreadPool& pool = ctx.pool();
  const int64_t kh_n = w.k[1], kw_n = w.k[2], h = w.in[1], wd = w.in[2], oh_n = w.out[1], ow_n = w.out[2];
  const int64_t dh = w.d[1], dw = w.d[2], m = a.m, taps = kh_n * kw_n, c = a.k / taps;
  Phases ph{w.s[1], w.s[2], 0, 0};
  ph.hq = oh_n + (kh_n - 1) * dh / ph.sh;
  ph.wq = ow_n + (kw_n - 1) * dw / ph.sw;
  const int64_t nph = ph.sh * ph.sw;
  TSR_ASSIGN_OR_RETURN(auto input, Scratch<float>::make(ctx, static_cast<size_t>(c * nph * ph.plane())));
  float* xq = input.data();  // read by every slot
  auto fill = [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t ci = q / nph, f = q % nph;
      fill_phase(x + ci * h * wd, h, wd, w.pb[1], w.pb[2], ph, f / ph.sw, f % ph.sw, xq + q * ph.plane());
    }
  };
  if (threaded) pool.parallel_for(c * nph, 1, fill);
  else fill(0, c * nph);
  // Row p = (ci * kh + i) * kw + j of B: the view of tap (ci, i, j).
  TSR_ASSIGN_OR_RETURN(auto row_table, Scratch<const float*>::make(ctx, static_cast<size_t>(a.k)));
  const float** rows = row_table.data();
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t i = 0; i < kh_n; ++i)
      for (int64_t j = 0; j < kw_n; ++j) {
        const int64_t oy = i * dh, ox = j * dw;
        const int64_t f = (oy % ph.sh) * ph.sw + ox % ph.sw;
        rows[static_cast<size_t>((ci * kh_n + i) * kw_n + j)] =
            xq + (ci * nph + f) * ph.plane() + (oy / ph.sh) * ph.wq + ox / ph.sw;
      }
  // Blocks of output rows: about 1024 GEMM columns each, and 8 per thread where there are rows
  // (with 4 the last blocks left one thread idle for a tenth of ResNet's stem at two threads),
  // but at least 128 columns (each block reads all of A).
  const int threads = threaded ? pool.num_threads() : 1;
  int64_t rb = std::clamp<int64_t>(1024 / ph.wq, 1, oh_n);
  if (threads > 1) rb = std::min(rb, std::max((128 + ph.wq - 1) / ph.wq, oh_n / (8 * threads)));
  const int64_t blocks = (oh_n + rb - 1) / rb, out_size = oh_n * ow_n;
  const bool parallel = threads > 1 && blocks > 1;
  const bool row_gemms = ph.wq != ow_n && ow_n >= kMinRowCols;  // else blocks through scratch when wq != ow
  TSR_ASSIGN_OR_RETURN(auto block, SlotScratch<float>::make(
                                       ctx, ph.wq == ow_n || row_gemms ? 0 : static_cast<size_t>(m * rb * ph.wq), parallel));
  auto run = [&](int slot, int64_t b0, int64_t b1) {
    float* out = block.slot(slot);
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * rb, r1 = std::min(oh_n, r0 + rb), cols = (r1 - r0) * ph.wq;
      float* y0 = y + r0 * ow_n;
      if (ph.wq == ow_n) {
        // No discarded columns (kw == 1): straight into y, Z and the activation in registers.
        sgemm_direct_rows(a, cols, rows, r0 * ph.wq, bias, z ? z + r0 * ow_n : nullptr, out_size, y0, out_size, &act);
        continue;
      }
      if (row_gemms) {
        // Wide output rows: one GEMM per output row, its Wq - OW discarded columns never
        // computed, straight into y with Z and the activation in registers (no copy pass).
        for (int64_t r = r0; r < r1; ++r)
          sgemm_direct_rows(a, ow_n, rows, r * ph.wq, bias, z ? z + r * ow_n : nullptr, out_size, y + r * ow_n,
                            out_size, &act);
        continue;
      }
      // Without Z the activation goes in the tiles' registers (as nn.cpp's sgemm_direct blocks
      // apply it, Sigmoid excepted), so the copy is the only pass over the block.
      const bool act_in_tiles = !z && act.kind != ops::FusedActivation::kSigmoid;
      sgemm_direct_rows(a, cols, rows, r0 * ph.wq, bias, nullptr, 0, out, cols, act_in_tiles ? &act : nullptr);
      for (int64_t mo = 0; mo < m; ++mo) {
        float* ym = y0 + mo * out_size;
        for (int64_t r = 0; r < r1 - r0; ++r) copy_floats(ym + r * ow_n, out + mo * cols + r * ph.wq, ow_n);
      }
      if (!act_in_tiles)
        apply_epilogue_rows(act, y0, m, (r1 - r0) * ow_n, out_size, static_cast<const float*>(nullptr),
                            z ? z + r0 * ow_n : nullptr, out_size);
    }
  };
  if (parallel) pool.parallel_for_slots(blocks, 1, run);
  else run(0, 0, blocks);
  return ok_status();
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(conv_implicit_impl);

bool conv_implicit_applies(const Window3& w) { return w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1; }

Status conv_implicit(exec::KernelContext& ctx, const SgemmDirectA& a, const float* x, const Window3& w,
                     const float* bias, const float* z, const ops::ActivationSpec& act, float* y, bool threaded) {
  return HWY_DYNAMIC_DISPATCH(conv_implicit_impl)(ctx, a, x, w, bias, z, act, y, threaded);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
