// CPU Conv kernel (ONNX opset 17). f32: 1x1/stride-1/unpadded convs are one GEMM on the input
// as is; depthwise convs (one input and one output channel per group, spatial rank <= 2) run a
// direct loop vectorized along the output width (depthwise.h); 3x3 stride-1 convs with constant
// weights run Winograd F(4x4, 3x3) (winograd.h); other 2-D convs whose weights are packed for
// sgemm_direct (gemm_direct.h: few output channels per group, or wide outputs) run the implicit
// GEMM of conv_implicit.h; group-1 convs on small planes known at load (conv_lanes_pays) run
// transposed, the output channels on the lanes (conv_lanes); everything else is im2col in blocks
// of output rows + SGEMM (direct or packed, gemm.h). f64 takes the im2col path with the reference GEMM, and so does i32 for the
// quantized convs (conv_i32, conv.h). FusedConv is the same kernel: bias, its residual Z and its
// activation are one epilogue pass (epilogue.h) over each block of outputs right after the GEMM
// computes it (sgemm_direct applies all three in registers). The size-first kernel set of minimal
// runtimes (kSizeFirstKernels, core/base/selective.h) keeps only the pointwise / im2col + packed
// SGEMM path and the depthwise loop. FusedSeparableConv: conv_separable.cpp.
// Pool kernels: nn_pool.cpp; normalization/softmax: nn_norm.cpp.
// Compiled once per SIMD target (hwy/foreach_target.h); register_nn_kernels registers the
// kernels of the best target this CPU supports (see TSR_SIMD_DISPATCH in CMakeLists.txt).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/nn.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/conv.h"
#include "backends/cpu/kernels/conv_implicit.h"
#include "backends/cpu/kernels/conv_small.h"
#include "backends/cpu/kernels/depthwise.h"
#include "backends/cpu/kernels/depthwise_grad.h"
#include "backends/cpu/kernels/epilogue.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_direct.h"
#include "backends/cpu/kernels/huge_pages.h"
#include "backends/cpu/kernels/im2col.h"
#include "backends/cpu/kernels/nn_window.h"
#include "backends/cpu/kernels/scratch.h"
#include "backends/cpu/kernels/winograd.h"
#include "core/base/mapped_pages.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

// Pointwise convs on planes of at most this many positions (squeeze-excitation's 1x1 convs on
// the pooled [N, C, 1, 1]) run as matrix-vector products from W^T (GemvWeights).
constexpr int64_t kMaxGemvPositions = 8;

// Each group's weights transposed (K x M, rows padded with zeros to `mp`, a multiple of the
// lanes), so that a matrix-vector product is vertical FMAs along M: sgemm_direct ran along the
// 1-8 columns, one lane of 16 used (EfficientNet's 1152 -> 48: ~6x onnxruntime's time), and dot
// products along K pay a horizontal sum per output.
struct GemvWeights {
  int64_t m = 0, k = 0, mp = 0;
  std::vector<float> wt;  // group x k x mp
  bool empty() const { return wt.empty(); }
};

GemvWeights gemv_prepare(const float* w, int64_t group, int64_t mg, int64_t kg) {
  const int64_t nl = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  GemvWeights g{mg, kg, (mg + nl - 1) / nl * nl, {}};
  g.wt.assign(static_cast<size_t>(group * kg * g.mp), 0.0f);
  for (int64_t gi = 0; gi < group; ++gi)
    for (int64_t r = 0; r < mg; ++r)
      for (int64_t k = 0; k < kg; ++k) g.wt[static_cast<size_t>((gi * kg + k) * g.mp + r)] = w[(gi * mg + r) * kg + k];
  return g;
}

// y[r * ldy + j] = sum_k wt[k * mp + r] * x[k * ldx + j] for rows r < m, positions j < npos: NV
// vectors of rows at a time.
template <int NV>
void gemv_rows(const float* wt, int64_t m, int64_t mp, int64_t kg, const float* x, int64_t ldx, int64_t j,
               int64_t r0, float* y, int64_t ldy) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<decltype(d)> acc[NV];
  for (int i = 0; i < NV; ++i) acc[i] = hn::Zero(d);
  for (int64_t k = 0; k < kg; ++k) {
    const auto xv = hn::Set(d, x[k * ldx + j]);
    const float* row = wt + k * mp + r0;
    for (int i = 0; i < NV; ++i) acc[i] = hn::MulAdd(hn::LoadU(d, row + i * nl), xv, acc[i]);
  }
  HWY_ALIGN float tmp[HWY_MAX_BYTES / sizeof(float)];
  for (int i = 0; i < NV; ++i) {
    const int64_t rb = r0 + i * nl, cnt = std::min(nl, m - rb);
    if (ldy == 1 && cnt == nl) {
      hn::StoreU(acc[i], d, y + rb);
      continue;
    }
    hn::Store(acc[i], d, tmp);
    for (int64_t l = 0; l < cnt; ++l) y[(rb + l) * ldy + j] = tmp[l];
  }
}

// Rows [r_begin, r_end) of y (multiples of the lanes, r_end <= mp).
void gemv_t(const float* wt, int64_t m, int64_t mp, int64_t kg, const float* x, int64_t ldx, int64_t npos, float* y,
            int64_t ldy, int64_t r_begin, int64_t r_end) {
  const int64_t nl = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  for (int64_t j = 0; j < npos; ++j) {
    int64_t r0 = r_begin;
    for (; r0 + 4 * nl <= r_end; r0 += 4 * nl) gemv_rows<4>(wt, m, mp, kg, x, ldx, j, r0, y, ldy);
    for (; r0 < r_end; r0 += nl) gemv_rows<1>(wt, m, mp, kg, x, ldx, j, r0, y, ldy);
  }
}

// Small output planes (ResNet's 7x7 stage: 49 positions) fill the GEMM's panels of 2 vectors of
// output positions poorly (49 of 64 lanes). There the conv runs as Y^T = im2col(X)^T * W^T: the
// output channels along the lanes (W^T packed once as sgemm's B, SgemmPackedB), the positions as
// rows in tiles of any height; the result is transposed into y with bias, Z and the activation.
// Taken where the channels fill the panels better than the positions (conv_lanes_pays), for
// planes of at most kMaxLanesPositions positions (the transpose is one more pass over y).
constexpr int64_t kMaxLanesPositions = 256;

// Whether a group-1 conv with `m` output channels, `kg` terms per output and `positions` output
// positions per image runs with the channels on the lanes: at least 17 positions (fewer: the
// few-row GEMM paths or GemvWeights), and the lanes it saves (1 - the positions' panel fill over
// the channels': 49 positions 0.77, 512 channels 1.0) at least 12% + 16 / kg, the cost of the
// transpose and of C^T's extra pass relative to the GEMM's kg multiply-adds per output (measured,
// AVX-512: 49 positions gain 13-20% from kg = 512 and 3-7% at kg = 160-320; ResNet-50's 1x1 convs
// on 14x14, 0.875 of 1.0, lost up to 15% at kg = 256 and were even at 1024).
bool conv_lanes_pays(int64_t m, int64_t kg, int64_t positions) {
  if (kSizeFirstKernels || positions < 17 || positions > kMaxLanesPositions || kg < 64 || m < 16) return false;
  const int64_t nr = 2 * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  auto fill = [nr](int64_t v) { return static_cast<double>(v) / static_cast<double>((v + nr - 1) / nr * nr); };
  return 1.0 - fill(positions) / fill(m) >= 0.12 + 16.0 / static_cast<double>(kg);
}

// The group-1 f32 conv with the output channels on the lanes (see kMaxLanesPositions), image by
// image: `lanes` is W^T (kg x m) packed by sgemm_pack_b, `pw` the raw weights (m x kg, read only
// where `lanes` was packed by another SIMD target).
Status conv_lanes(exec::KernelContext& ctx, const SgemmPackedB& lanes, const float* pw, const float* px,
                  int64_t n_batch, int64_t c, const Window3& w, bool pointwise, const float* pb, const float* pz,
                  const ops::ActivationSpec& act, float* py, ThreadPool* pool) {
  const int64_t m = lanes.n, kg = lanes.k, pos = w.out_size(), in_size = w.in_size();
  TSR_ASSIGN_OR_RETURN(auto cols, Scratch<float>::make(ctx, pointwise ? 0 : static_cast<size_t>(kg * pos)));
  TSR_ASSIGN_OR_RETURN(auto yt, Scratch<float>::make(ctx, static_cast<size_t>(pos * m)));
  for (int64_t n = 0; n < n_batch; ++n) {
    const float* xn = px + n * c * in_size;
    const float* a = xn;  // op(A) = A^T: A is kg x pos (x itself, or its im2col)
    // The im2col and the transpose + epilogue split over the threads too: on one thread they
    // were 13-18% of ResNet-50's layer4 convs at two threads, the other thread idle.
    if (!pointwise) {
      if (pool) {
        pool->parallel_for(kg, 64, [&](int64_t r0, int64_t r1) {
          im2col<float>(xn, w, 0, w.out[0] * w.out[1], r0, r1, cols.data(), pos);
        });
      } else {
        im2col<float>(xn, w, 0, w.out[0] * w.out[1], 0, kg, cols.data());
      }
      a = cols.data();
    }
    sgemm_prepacked_b(true, pos, 1.0f, a, pos, lanes, pw, kg, 0.0f, yt.data(), m, pool);
    float* yn = py + n * m * pos;
    const float* zn = pz ? pz + n * m * pos : nullptr;
    // Output channels [r0, r1): transposed into y, then bias, Z and the activation. Split over
    // the threads in runs of 16 channels (serial, it was a fifth of MobileNetV2's 7x7 expansions
    // at two threads).
    auto finish = [&](int64_t r0, int64_t r1) {
      short_rows::transpose_rows(yt.data() + r0, m, pos, r1 - r0, yn + r0 * pos, pos);
      apply_epilogue_rows(act, yn + r0 * pos, r1 - r0, pos, pos, pb ? pb + r0 : nullptr, zn ? zn + r0 * pos : nullptr,
                          pos);
    };
    constexpr int64_t kRun = 16;
    if (pool && pool->num_threads() > 1 && m > kRun && m * pos >= (int64_t{1} << 14))
      pool->parallel_for((m + kRun - 1) / kRun, 1,
                         [&](int64_t q0, int64_t q1) { finish(q0 * kRun, std::min(m, q1 * kRun)); });
    else
      finish(0, m);
  }
  return ok_status();
}

template <typename T>
void gemm_any(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
              int64_t ldc, ThreadPool* pool) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(false, false, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc, pool);
  } else {
    gemm_reference<T>(false, false, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
  }
}

// Conv of x by wt (+ bias) into yt (allocated with the inferred shape), the node's window.
// `packed` (f32 only, may be null): the weights of each group pre-packed by sgemm_pack_a.
// `z` (FusedConv's residual input, may be null): added before the activation; yt's shape.
// `act`: the FusedConv activation (kNone for Conv), applied block by block.
// `wino` (f32 only, may be null): the weights transformed for Winograd, used where the window allows.
// Pointwise convs on small planes with weights from an input (conv_into): images [n0, n0 + per)
// side by side, X gathered into [c, per * p] columns, one GEMM with W [m, c] into [m, per * p],
// then scattered into Y ([N, m, p]) with bias, Z and the activation.
constexpr int64_t kMaxSidePositions = 16, kSideColumns = 256;
[[maybe_unused]] Status pointwise_side_by_side(exec::KernelContext& ctx, const float* px, const float* pw, const float* pb,
                              const float* pz, const ops::ActivationSpec& act, int64_t n_batch, int64_t c, int64_t m,
                              int64_t p, int64_t per, float* py) {
  const int64_t cols = per * p;
  TSR_ASSIGN_OR_RETURN(const SlotScratch<float> buf, SlotScratch<float>::make(ctx, static_cast<size_t>((c + m) * cols)));
  ctx.pool().parallel_for_slots((n_batch + per - 1) / per, 1, [&](int slot, int64_t q0, int64_t q1) {
    float* b = buf.slot(slot);
    float* out = b + c * cols;
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n0 = q * per, cnt = std::min(per, n_batch - n0), w = cnt * p;
      for (int64_t j = 0; j < cnt; ++j)
        for (int64_t k = 0; k < c; ++k) std::copy_n(px + ((n0 + j) * c + k) * p, p, b + k * w + j * p);
      gemm_any<float>(m, w, c, pw, c, b, w, 0.0f, out, w, nullptr);
      for (int64_t j = 0; j < cnt; ++j) {
        float* yj = py + (n0 + j) * m * p;
        for (int64_t o = 0; o < m; ++o) std::copy_n(out + o * w + j * p, p, yj + o * p);
        apply_epilogue_rows(act, yj, m, p, p, pb, pz ? pz + (n0 + j) * m * p : nullptr, p);
      }
    }
  });
  return ok_status();
}

template <typename T>
Status conv_into(exec::KernelContext& ctx, const Tensor& x, const Tensor& wt, const Tensor* bias, Tensor* yt,
                 const std::vector<SgemmPackedA>* packed = nullptr, const ops::ActivationSpec& act = {},
                 const Tensor* z = nullptr, const WinogradWeights* wino = nullptr,
                 const std::vector<SgemmDirectA>* direct_a = nullptr, const GemvWeights* gemv = nullptr,
                 const SgemmPackedB* lanes = nullptr, const PresolvedWindow* window = nullptr,
                 int64_t group_attr = -1) {
  // `window` and `group_attr` (>= 1): the node's window and group as read at kernel creation.
  const int64_t group = group_attr >= 1 ? group_attr : ctx.node().attr_int("group");
  const Ints in(x.shape().begin() + 2, x.shape().end());
  const Ints kernel(wt.shape().begin() + 2, wt.shape().end());
  TSR_ASSIGN_OR_RETURN(Window3 w, resolve_window3(ctx, in, kernel, window));
  if (yt->numel() == 0) return ok_status();
  const int64_t n_batch = x.dim(0), c = x.dim(1), m = wt.dim(0);
  const int64_t cg = c / group, mg = m / group;
  const int64_t kg = cg * w.k_size();
  const int64_t in_size = w.in_size(), out_size = w.out_size();
  const T* px = x.data<T>();
  const T* pw = wt.data<T>();
  const T* pb = bias && bias->numel() > 0 ? bias->data<T>() : nullptr;
  if (z && z->shape() != yt->shape())
    return invalid_argument(ctx.place(), ": input[3] (Z): shape ", shape_str(z->shape()), " differs from the output's ",
                            shape_str(yt->shape()));
  const T* pz = z ? z->data<T>() : nullptr;
  T* py = yt->mut_data<T>();
  ThreadPool& pool = ctx.pool();
  if constexpr (std::is_same_v<T, float>) {
    if (!kSizeFirstKernels && wino && wino->m == m && wino->c == c && group == 1 && winograd_window_applies(w) &&
        winograd_pays(w, n_batch)) {
      return winograd_conv(ctx, *wino, px, n_batch, w, pb, pz, act, py);
    }
    // Weights from an input (training), few input taps (LeNet's first conv: 1 channel, 5x5):
    // conv_small.h's direct loop over padded planes instead of a 25-row im2col per image.
    ConvSmallPlan small;
    if (!kSizeFirstKernels && !packed && !direct_a && kg <= kMaxForwardTaps && make_conv_small_plan(w, c, m, group, &small))
      return conv_small_forward(ctx, small, px, pw, pb, pz, act, n_batch, py);
  }

  const int64_t macs = n_batch * m * kg * out_size;
  if (cg == 1 && mg == 1 && w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1) {
    if constexpr (std::is_same_v<T, float> && !kSizeFirstKernels) {
      // Planes of 4-16 outputs (MobileNetV2's late layers at 64x64, as trained): 16 channels per
      // vector instead of a plane at a time (depthwise_grad.h; the same sums, in the same order).
      DepthwiseSmallPlan small_dw;
      if (act.kind == ops::FusedActivation::kNone && !pz && make_depthwise_small_plan(w, c, &small_dw)) {
        TSR_ASSIGN_OR_RETURN(const Scratch<float> wt_small, Scratch<float>::make(ctx, small_dw.weight_floats()));
        depthwise_small_weights(small_dw, pw, pb, c, wt_small.data());
        TSR_ASSIGN_OR_RETURN(const SlotScratch<float> buf, SlotScratch<float>::make(ctx, small_dw.scratch_floats()));
        const int64_t blocks = n_batch * (small_dw.cpad / DepthwiseSmallPlan::kBlock);
        const int64_t grain = std::max<int64_t>(1, kMinParallelConvMacs / 8 / (16 * kg * out_size));
        pool.parallel_for_slots(blocks, grain, [&](int slot, int64_t b0, int64_t b1) {
          depthwise_small_forward(small_dw, px, wt_small.data(), py, c, b0, b1, buf.slot(slot));
        });
        return ok_status();
      }
    }
    // A depthwise multiply-add costs several GEMM ones (memory bound, no reuse): a lower bar.
    const int64_t grain = std::max<int64_t>(1, kMinParallelConvMacs / 8 / std::max<int64_t>(1, kg * out_size));
    // The padded plane per slot of the pool (see parallel_for_slots).
    const DwGeom geom = depthwise_geom(w);
    TSR_ASSIGN_OR_RETURN(auto phased,
                         SlotScratch<T>::make(ctx, static_cast<size_t>(depthwise_band_size(w, geom, 0, w.out[1]))));
    pool.parallel_for_slots(n_batch * m, grain, [&](int slot, int64_t p0, int64_t p1) {
      T* plane = phased.slot(slot);
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t ch = p % m;
        T* yp = py + p * out_size;
        const T* wk = pw + ch * w.k_size();
        const T bv = pb ? pb[ch] : T(0);
        depthwise_prepare_band<T>(px + p * in_size, w, geom, 0, w.out[1], plane);
        depthwise_prepared_rows<T>(plane, geom, wk, bv, w, 0, w.out[1], yp);
        apply_epilogue_rows(act, yp, 1, out_size, out_size, static_cast<const T*>(nullptr),
                            pz ? pz + p * out_size : nullptr, out_size);
      }
    });
    return ok_status();
  }

  if (packed && (static_cast<int64_t>(packed->size()) != group || (*packed)[0].m != mg || (*packed)[0].k != kg))
    packed = nullptr;
  // One group's product: C = W_g (mg x kg) * B (kg x ncols) + beta * C; `inner` may be null.
  auto gemm_group = [&](int64_t g, int64_t ncols, const T* b, int64_t ldb, T beta, T* c, int64_t ldc, ThreadPool* inner) {
    if constexpr (std::is_same_v<T, float>) {
      if (packed) {
        sgemm_prepacked((*packed)[static_cast<size_t>(g)], pw + g * mg * kg, kg, false, ncols, 1.0f, b, ldb, beta, c,
                        ldc, inner);
        return;
      }
    }
    gemm_any<T>(mg, ncols, kg, pw + g * mg * kg, kg, b, ldb, beta, c, ldc, inner);
  };
  // The output is computed in blocks of output positions of one image and group: the GEMM, then
  // bias, Z and the activation in one pass (apply_epilogue_rows) while the block is in cache. A pointwise conv reads its columns
  // straight from x (<= 256 KiB of output per block); any other conv im2cols whole output rows
  // (~1 MiB of columns, at least 512 wide for the GEMM) into per-thread scratch.
  const bool unpadded = w.pb == std::array<int64_t, 3>{0, 0, 0} && w.pe == std::array<int64_t, 3>{0, 0, 0};
  const bool pointwise = w.k_size() == 1 && w.s == std::array<int64_t, 3>{1, 1, 1} && unpadded;
  const int64_t ow = w.out[2], rows = w.out[0] * w.out[1];
  const int threads = macs < kMinParallelConvMacs ? 1 : pool.num_threads();
  if constexpr (std::is_same_v<T, float>) {
    if (gemv && pointwise && out_size <= kMaxGemvPositions && gemv->m == mg && gemv->k == kg &&
        static_cast<int64_t>(gemv->wt.size()) == group * kg * gemv->mp &&
        gemv->mp % static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())) == 0) {
      for (int64_t n = 0; n < n_batch; ++n)
        for (int64_t g = 0; g < group; ++g) {
          const int64_t y0 = (n * m + g * mg) * out_size;
          float* yg = py + y0;
          const float* bg = pb ? pb + g * mg : nullptr;
          const float* wg = gemv->wt.data() + g * kg * gemv->mp;
          const float* xg = px + (n * c + g * cg) * in_size;
          // Memory bound (each weight read once): from 2^15 multiply-adds the threads split the
          // rows in runs of 4 vectors (squeeze-excitation's 576 x 144 ran on one thread, a fifth
          // of MobileNetV3-small's work at 2 threads).
          const int64_t run = 4 * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
          const int64_t runs = (gemv->mp + run - 1) / run;
          auto rows = [&](int64_t q0, int64_t q1) {
            gemv_t(wg, mg, gemv->mp, kg, xg, in_size, out_size, yg, out_size, q0 * run,
                   std::min(gemv->mp, q1 * run));
          };
          if (pool.num_threads() > 1 && runs > 1 && mg * kg * out_size >= (int64_t{1} << 15))
            pool.parallel_for(runs, 1, rows);
          else
            rows(0, runs);
          if (out_size == 1) {
            // One position: the outputs are contiguous, so the epilogue is one row of mg (row by
            // row it was mg scalar calls, 5% of MobileNetV3-small).
            if (bg)
              for (int64_t r = 0; r < mg; ++r) yg[r] += bg[r];
            apply_epilogue_rows(act, yg, 1, mg, mg, static_cast<const float*>(nullptr), pz ? pz + y0 : nullptr, mg);
          } else {
            apply_epilogue_rows(act, yg, mg, out_size, out_size, bg, pz ? pz + y0 : nullptr, out_size);
          }
        }
      return ok_status();
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    // (A run on a larger plane than the one the form was chosen for takes the paths below, from
    // the raw weights: conv_lanes takes the whole plane's im2col at once.)
    if (lanes && group == 1 && lanes->k == kg && lanes->n == m && out_size <= kMaxLanesPositions)
      return conv_lanes(ctx, *lanes, pw, px, n_batch, c, w, pointwise, pb, pz, act, py, threads > 1 ? &pool : nullptr);
  }
  if constexpr (std::is_same_v<T, float> && !kSizeFirstKernels) {
    // Weights from an input (training) and planes of <= kMaxSidePositions (MobileNetV2's late
    // 1x1 layers at 64x64: 4-16 positions): several images side by side in one GEMM, which packs
    // W once for them instead of once per image (the GEMM of one small image is mostly packing).
    if (pointwise && group == 1 && !packed && !direct_a && !gemv && !lanes && n_batch > 1 &&
        out_size <= kMaxSidePositions && !sgemm_direct_preferred(m, out_size, kg)) {
      const int64_t per_thread = (n_batch + pool.num_threads() - 1) / pool.num_threads();
      const int64_t per = std::clamp<int64_t>(std::min(kSideColumns / out_size, per_thread), 1, n_batch);
      if (per > 1) return pointwise_side_by_side(ctx, px, pw, pb, pz, act, n_batch, c, m, out_size, per, py);
    }
  }
  int64_t block = 0, per_image = 0;  // block: columns (pointwise) or output rows (im2col)
  if (pointwise) {
    block = std::min(out_size, std::max<int64_t>(512, (int64_t{1} << 16) / std::max<int64_t>(1, mg)));
    per_image = (out_size + block - 1) / block;
  } else {
    block = std::max<int64_t>((512 + ow - 1) / ow, (int64_t{1} << 18) / std::max<int64_t>(1, kg * ow));
    block = std::clamp<int64_t>(block, 1, rows);
    per_image = (rows + block - 1) / block;
  }
  if (threads > 1 && n_batch * group * per_image < 4 * int64_t{threads}) {
    // Smaller blocks, so that every thread can take whole ones (>= 4 per thread), as long as a
    // block stays >= 256 output positions wide; threading inside one small GEMM costs more
    // barriers than it saves (BlazeFace's 24x24 1x1 convs at 128x128).
    const int64_t want = (4 * int64_t{threads} + n_batch * group - 1) / (n_batch * group);
    if (pointwise) {
      block = std::max<int64_t>(256, (out_size + want - 1) / want);
      per_image = (out_size + block - 1) / block;
    } else {
      block = std::clamp<int64_t>(std::max((256 + ow - 1) / ow, (rows + want - 1) / want), 1, rows);
      per_image = (rows + block - 1) / block;
    }
  }
  // Too few blocks for two a thread, but rows for one block of >= 256 positions each (ResNet's
  // stride-2 convs into 28 x 28: 10 + 10 + 8 rows, each block's GEMM split over the threads,
  // 9 column panels 5 : 4 per K block): one block a thread of about equal rows, no barriers.
  bool one_each = false;
  if (!pointwise && threads > 1 && n_batch * group == 1 && per_image < 2 * int64_t{threads}) {
    const int64_t even = (rows + threads - 1) / threads;
    if (even * ow >= 256 && (rows % threads == 0 || even >= 8) && (rows + even - 1) / even == threads) {
      block = even;
      per_image = threads;
      one_each = true;
    }
  }
  // Pointwise blocks start at multiples of kColQuantum columns (sgemm_direct's widest strip), so
  // that each output sums its terms the same way whatever the threads, and with threads that
  // take whole blocks they are about equal: 784 positions in blocks of 256 left a last block of
  // 16, so one thread did 512 and the other 272 (EfficientNet's 28 x 28 expansions).
  constexpr int64_t kColQuantum = 64;
  const int64_t quanta = (out_size + kColQuantum - 1) / kColQuantum;
  if (pointwise && threads > 1 && n_batch * group == 1 && per_image >= 2 * int64_t{threads})
    per_image = (per_image + threads - 1) / threads * threads;  // a multiple of the threads
  if (pointwise) per_image = std::min(per_image, quanta);
  auto block_start = [&](int64_t j) { return std::min(out_size, j * quanta / per_image * kColQuantum); };
  const int64_t nblocks = n_batch * group * per_image;
  // Few output channels per group: B (x itself, or the im2col block) is read in place.
  const bool direct =
      std::is_same_v<T, float> && sgemm_direct_preferred(mg, std::min(out_size, pointwise ? block : block * ow), kg);
  if (!direct || (direct_a && (static_cast<int64_t>(direct_a->size()) != group || (*direct_a)[0].m != mg ||
                                (*direct_a)[0].k != kg)))
    direct_a = nullptr;
  constexpr int64_t kDirectCols = 128;  // columns per task when threads share one block
  if constexpr (std::is_same_v<T, float>) {
    if (direct_a && !pointwise && conv_implicit_applies(w)) {
      // Grouped (ResNeXt): the threads take whole groups.
      if constexpr (!kSizeFirstKernels)
        if (group > 1) return conv_implicit_groups(ctx, direct_a->data(), px, n_batch, group, w, pb, pz, act, py);
      for (int64_t n = 0; n < n_batch; ++n)
        for (int64_t g = 0; g < group; ++g) {
          const int64_t y0 = (n * m + g * mg) * out_size;
          TSR_RETURN_IF_ERROR(conv_implicit(ctx, (*direct_a)[static_cast<size_t>(g)], px + (n * c + g * cg) * in_size,
                                            w, pb ? pb + g * mg : nullptr, pz ? pz + y0 : nullptr, act, py + y0,
                                            threads > 1));
        }
      return ok_status();
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    // One input channel, a 1-D window without padding (Silero VAD's STFT: 256 taps at stride
    // 128 over the audio): column j of the im2col matrix is x's own window at j * stride, so the
    // GEMM reads B^T in place (rows `stride` apart, overlapping) instead of im2col building it
    // tap by tap (256 rows of 4 columns each).
    if (!direct && !pointwise && cg == 1 && group == 1 && unpadded && rows == 1 && w.in[0] == 1 && w.in[1] == 1 &&
        w.d[2] == 1) {
      for (int64_t n = 0; n < n_batch; ++n) {
        float* yn = py + n * m * out_size;
        sgemm(false, true, m, ow, kg, 1.0f, pw, kg, px + n * c * in_size, w.s[2], 0.0f, yn, out_size,
              threads > 1 ? &pool : nullptr);
        apply_epilogue_rows(act, yn, m, out_size, out_size, pb, pz ? pz + n * m * out_size : nullptr, out_size);
      }
      return ok_status();
    }
  }
  // Weights from an input (training): each group's A packed once for sgemm_direct, here rather
  // than per block into a per-thread buffer (which grew whenever a block first landed on another
  // thread, so a steady-state step allocated).
  float* packed_a = nullptr;
  if constexpr (std::is_same_v<T, float>) {
    if (direct && !direct_a && !kSizeFirstKernels) {
      TSR_ASSIGN_OR_RETURN(auto packed, Scratch<float>::make(ctx, static_cast<size_t>(group * mg * kg)));
      packed_a = packed.data();
      for (int64_t g = 0; g < group; ++g) sgemm_direct_pack_a_into(mg, kg, pw + g * mg * kg, kg, packed_a + g * mg * kg);
    }
  }
  // im2col scratch per slot of the pool (see parallel_for_slots), for the widest block.
  const bool block_parallel = threads > 1 && (nblocks >= 2 * int64_t{threads} || one_each);
  TSR_ASSIGN_OR_RETURN(auto cols, SlotScratch<T>::make(ctx, pointwise ? 0 : static_cast<size_t>(kg * block * ow),
                                                       block_parallel));
  auto run_block = [&](int slot, int64_t bi, ThreadPool* inner) {
    const int64_t n = bi / (group * per_image), g = bi / per_image % group, j = bi % per_image;
    int64_t c0 = 0, ncols = 0;  // output positions [c0, c0 + ncols)
    const T* src = nullptr;
    int64_t ldb = 0;
    if (pointwise) {
      c0 = block_start(j);
      ncols = block_start(j + 1) - c0;
      src = px + (n * c + g * cg) * in_size + c0;
      ldb = in_size;
    } else {
      const int64_t r0 = j * block, r1 = std::min(rows, r0 + block);
      c0 = r0 * ow;
      ncols = (r1 - r0) * ow;
      T* pc = cols.slot(slot);  // im2col writes every element it uses
      const T* xg = px + (n * c + g * cg) * in_size;
      if (inner && kg > 1) inner->parallel_for(kg, 8, [&](int64_t k0, int64_t k1) { im2col<T>(xg, w, r0, r1, k0, k1, pc); });
      else im2col<T>(xg, w, r0, r1, 0, kg, pc);
      src = pc;
      ldb = ncols;
    }
    T* yg = py + (n * m + g * mg) * out_size + c0;
    const T* bg = pb ? pb + g * mg : nullptr;
    const T* zg = pz ? pz + (n * m + g * mg) * out_size + c0 : nullptr;
    // (kSizeFirstKernels spelled out: `direct` is read through the closure, not folded.)
    if constexpr (std::is_same_v<T, float> && !kSizeFirstKernels) {
      if (direct) {
        // Bias, Z and the activation are applied in registers.
        // Sigmoid runs over the part's rows after its GEMM (still in cache): sgemm_direct would
        // apply it per tile, one call per 64 columns of a row, whose setup cost about as much as
        // the math (EfficientNet's 16->96 1x1 conv with Silu on 112x112: 1.08 -> 0.87 ms). Silu
        // is applied in the tiles' registers (gemm_direct.cpp), without the pass over the rows.
        const bool act_after = act.kind == ops::FusedActivation::kSigmoid;
        const ops::ActivationSpec* tile_act = act_after ? nullptr : &act;
        auto part = [&](int64_t q0, int64_t q1) {
          const int64_t j0 = q0 * kDirectCols, j1 = std::min(ncols, q1 * kDirectCols);
          if (direct_a)
            sgemm_direct((*direct_a)[static_cast<size_t>(g)], j1 - j0, src + j0, ldb, bg, zg ? zg + j0 : nullptr,
                         out_size, yg + j0, out_size, tile_act);
          else
            sgemm_direct_packed(mg, j1 - j0, kg, packed_a + g * mg * kg, src + j0, ldb, bg, zg ? zg + j0 : nullptr,
                                out_size, yg + j0, out_size, tile_act);
          if (act_after) apply_epilogue_rows(act, yg + j0, mg, j1 - j0, out_size);
        };
        const int64_t parts = (ncols + kDirectCols - 1) / kDirectCols;
        if (inner) inner->parallel_for(parts, 1, part);
        else part(0, parts);
        return;
      }
    }
    gemm_group(g, ncols, src, ldb, T(0), yg, out_size, inner);
    apply_epilogue_rows_pooled(inner, act, yg, mg, ncols, out_size, bg, zg, out_size);
  };
  // With enough blocks each thread takes whole blocks (single-threaded GEMMs, no barrier per
  // block); otherwise (few, narrow blocks) all threads share each block's im2col and GEMM.
  if (block_parallel) {
    pool.parallel_for_slots(nblocks, 1, [&](int slot, int64_t b0, int64_t b1) {
      for (int64_t bi = b0; bi < b1; ++bi) run_block(slot, bi, nullptr);
    });
  } else {
    for (int64_t bi = 0; bi < nblocks; ++bi) run_block(0, bi, threads > 1 ? &pool : nullptr);
  }
  return ok_status();
}

template <typename T>
Status conv_typed(exec::KernelContext& ctx, const std::vector<SgemmPackedA>* packed, const ops::ActivationSpec& act,
                  const WinogradWeights* wino, const std::vector<SgemmDirectA>* direct_a,
                  const GemvWeights* gemv = nullptr, const SgemmPackedB* lanes = nullptr,
                  const PresolvedWindow* window = nullptr, int64_t group = -1) {
  TSR_ASSIGN_OR_RETURN(Tensor * yt, ctx.alloc_output(0));
  return conv_into<T>(ctx, *ctx.input(0), *ctx.input(1), ctx.input(2), yt, packed, act, ctx.input(3), wino, direct_a,
                      gemv, lanes, window, group);
}

// The dtypes Conv and FusedConv are compiled for: f32 and f64, or a selective build's subset
// (core/base/selective.h).
constexpr DTypeMask kConvDTypes = selected_dtypes("Conv") | selected_dtypes("FusedConv");

// Conv and FusedConv (`act_` from the node's activation attributes, parsed once). With constant
// f32 weights, each group's weight matrix is packed once at kernel creation, for sgemm_direct
// (`direct_`, few output channels per group) or the packed SGEMM (`packed_`), and 3x3 group-1
// weights are also transformed for Winograd (`wino_`, used for stride-1 windows).
class ConvKernel final : public exec::Kernel {
 public:
  ConvKernel(std::vector<SgemmPackedA> packed, std::vector<SgemmDirectA> direct, ops::ActivationSpec act,
             WinogradWeights wino = {}, GemvWeights gemv = {}, SgemmPackedB lanes = {})
      : packed_(std::move(packed)),
        direct_(std::move(direct)),
        act_(act),
        wino_(std::move(wino)),
        gemv_(std::move(gemv)),
        lanes_(std::move(lanes)) {}
  Status run(exec::KernelContext& ctx) override {
    switch (ctx.input(0)->dtype()) {
      case DType::kF32:
        return conv_typed<float>(ctx, packed_.empty() ? nullptr : &packed_, act_, wino_.empty() ? nullptr : &wino_,
                                 direct_.empty() ? nullptr : &direct_, gemv_.empty() ? nullptr : &gemv_,
                                 lanes_.data.empty() ? nullptr : &lanes_, &window_, group_);
      case DType::kF64:
        if constexpr (dtype_in(kConvDTypes, DType::kF64)) return conv_typed<double>(ctx, nullptr, act_, nullptr, nullptr);
        break;
      default: break;
    }
    return unsupported(ctx.place(), ": Conv has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
  }

  // Reads the node's group and, where the load-time input and weight shapes are known, resolves
  // its window once (f32 runs at those shapes skip the attribute parsing).
  void presolve(const exec::KernelInit& init) {
    group_ = init.node.attr_int("group");
    if (init.input_types.size() < 2) return;
    const ops::ValueType& xt = init.input_types[0];
    const ops::ValueType& wt = init.input_types[1];
    if (!xt.has_shape || !wt.has_shape || xt.shape.size() < 3 || wt.shape.size() != xt.shape.size()) return;
    window_ = presolve_window3(init.node, Ints(xt.shape.begin() + 2, xt.shape.end()),
                               Ints(wt.shape.begin() + 2, wt.shape.end()));
  }

 private:
  std::vector<SgemmPackedA> packed_;
  std::vector<SgemmDirectA> direct_;
  ops::ActivationSpec act_;
  WinogradWeights wino_;
  GemvWeights gemv_;
  SgemmPackedB lanes_;
  PresolvedWindow window_;
  int64_t group_ = -1;
};

// Which forms of constant f32 weights (M x C/group x window, `mg` x `kg` per group) a Conv may run
// from. sgemm_direct's packing serves M <= kMaxDirectM, or K <= kMaxDirectWideK on a wide enough
// output (sgemm_direct_preferred); the packed SGEMM's the rest. Winograd's needs stride 1, and
// where the load-time input shape is fully known, winograd_window_applies and winograd_pays for it
// (e.g. not ResNet's 512-channel 7x7 convs at batch 1); then, Winograd being taken on every run,
// neither GEMM form is kept. A group-1 conv on a small plane known at load where Winograd does
// not pay keeps W^T packed as sgemm's B alone (conv_lanes_pays), and runs with it at any shape.
// A run at another shape still computes right from the raw weights.
struct WeightForms {
  bool direct = false, packed = false, winograd = false, gemv = false, lanes = false;
};
WeightForms conv_weight_forms(const exec::KernelInit& init, const Tensor& wt, int64_t group, int64_t mg, int64_t kg) {
  WeightForms f;
  f.direct = !kSizeFirstKernels && (mg <= kMaxDirectM || kg <= kMaxDirectWideK);
  f.packed = !sgemm_direct_preferred(mg, -1, kg);
  if (wt.rank() != 4) return f;
  const ops::ValueType* xt = init.input_types.empty() ? nullptr : &init.input_types[0];
  Ints in{-1, -1};
  int64_t n = -1;
  if (xt && xt->has_shape && xt->shape.size() == 4) {
    n = xt->shape[0];
    in = {xt->shape[2], xt->shape[3]};
  }
  auto sp = ops::resolve_spatial(init.node, in, Ints{wt.dim(2), wt.dim(3)}, false);
  if (!sp.ok()) return f;  // reported when the node runs
  const Window3 w = window3_of(*sp, in);
  // A pointwise conv known to have <= kMaxGemvPositions positions: W^T alone (GemvWeights).
  if (!kSizeFirstKernels && w.k_size() == 1 && w.s == std::array<int64_t, 3>{1, 1, 1} &&
      w.pb == std::array<int64_t, 3>{0, 0, 0} && w.pe == std::array<int64_t, 3>{0, 0, 0} && w.out[1] >= 1 &&
      w.out[2] >= 1 && w.out_size() <= kMaxGemvPositions) {
    WeightForms gf;
    gf.gemv = true;
    return gf;
  }
  const bool wino_weights = winograd_weights_apply(wt.dim(0), wt.dim(1), wt.dim(2), wt.dim(3), group) &&
                            w.s[1] == 1 && w.s[2] == 1 && w.d[1] == w.d[2];
  if (group == 1 && n >= 1 && w.out[1] >= 1 && w.out[2] >= 1 && conv_lanes_pays(mg, kg, w.out_size()) &&
      !(wino_weights && winograd_window_applies(w) && winograd_pays(w, n))) {
    WeightForms lf;  // a small plane at a known shape: W^T alone (conv_lanes)
    lf.lanes = true;
    return lf;
  }
  if (!wino_weights) return f;
  if (n < 1 || w.out[1] < 1 || w.out[2] < 1) {  // not known until run time: keep every form
    f.winograd = true;
    return f;
  }
  if (!winograd_window_applies(w) || !winograd_pays(w, n)) return f;
  return {false, false, true};
}

Expected<std::unique_ptr<exec::Kernel>> create_conv(const exec::KernelInit& init) {
  TSR_ASSIGN_OR_RETURN(ops::ActivationSpec act, ops::activation_of(init.node, init.place));
  const Tensor* wt = init.constant_inputs.size() > 1 ? init.constant_inputs[1] : nullptr;
  const int64_t group = init.node.attr_int("group");
  if (wt && wt->dtype() == DType::kF32 && wt->rank() >= 3 && group >= 1 && wt->dim(0) % group == 0 &&
      !(wt->dim(1) == 1 && wt->dim(0) == group)) {  // depthwise convs take the direct loop
    const int64_t mg = wt->dim(0) / group;
    const int64_t kg = wt->numel() / std::max<int64_t>(1, wt->dim(0));
    if (kg > 0) {
      // Only the forms a run can take are prepared: each is another copy of the weights (Winograd's
      // 4x), and ResNet-18 kept ~7x its weights resident with all of them.
      const WeightForms forms = conv_weight_forms(init, *wt, group, mg, kg);
      std::vector<SgemmPackedA> packed;
      std::vector<SgemmDirectA> direct;
      for (int64_t g = 0; g < group; ++g) {
        const float* wg = wt->data<float>() + g * mg * kg;
        if (forms.direct) direct.push_back(sgemm_direct_pack_a(mg, kg, wg, kg));
        if (forms.packed) packed.push_back(sgemm_pack_a(false, mg, kg, wg, kg));
      }
      WinogradWeights wino;
      // kSizeFirstKernels spelled out: where conv_weight_forms is not inlined (armv7 minimal
      // runtimes) the call would stay and need winograd.cpp, which those builds leave out.
      if (!kSizeFirstKernels && forms.winograd) wino = winograd_prepare(wt->data<float>(), wt->dim(0), wt->dim(1));
      GemvWeights gemv;
      if (forms.gemv) gemv = gemv_prepare(wt->data<float>(), group, mg, kg);
      SgemmPackedB lanes;
      if (forms.lanes) lanes = sgemm_pack_b(true, kg, mg, wt->data<float>(), kg);
      // Streamed from DRAM on every run at batch 1: on huge pages where they hold whole ones.
      for (const SgemmDirectA& d : direct) advise_huge_pages(d.data.data(), d.data.size() * sizeof(float));
      for (const SgemmPackedA& pa : packed) advise_huge_pages(pa.data.data(), pa.data.size() * sizeof(float));
      advise_huge_pages(lanes.data.data(), lanes.data.size() * sizeof(float));
      // Runs read the prepared forms (the raw weights only off the shapes they were made for):
      // the pages just read need not stay resident when they are the .tsr's mapping.
      if (forms.direct || forms.packed || forms.winograd || forms.gemv || forms.lanes)
        release_mapped_pages(wt->data<float>(), wt->nbytes());
      auto k = std::make_unique<ConvKernel>(std::move(packed), std::move(direct), act, std::move(wino),
                                            std::move(gemv), std::move(lanes));
      k->presolve(init);
      return std::unique_ptr<exec::Kernel>(std::move(k));
    }
  }
  auto k = std::make_unique<ConvKernel>(std::vector<SgemmPackedA>{}, std::vector<SgemmDirectA>{}, act);
  k->presolve(init);
  return std::unique_ptr<exec::Kernel>(std::move(k));
}

}  // namespace

Status conv_i32_impl(exec::KernelContext& ctx, const Tensor& x, const Tensor& w, Tensor* y) {
  return conv_into<int32_t>(ctx, x, w, nullptr, y);
}

void register_nn_target(KernelRegistry& r) {
  TSR_IF_SELECTED("Conv") r.add("Conv", {DType::kF32, DType::kF64}, &create_conv);
  TSR_IF_SELECTED("FusedConv") r.add("FusedConv", {DType::kF32, DType::kF64}, &create_conv);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_nn_target);
HWY_EXPORT(conv_i32_impl);

Status conv_i32(exec::KernelContext& ctx, const Tensor& x, const Tensor& w, Tensor* y) {
  return HWY_DYNAMIC_DISPATCH(conv_i32_impl)(ctx, x, w, y);
}

void register_nn_kernels(KernelRegistry& r) { HWY_DYNAMIC_DISPATCH(register_nn_target)(r); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
