// FusedDepthwiseSE (core/ops/families/nn.cpp; made by core/passes/opt_fuse_se.cpp), f32: a
// depthwise conv with its activation, times its squeeze-excitation gate. Per image:
//   1. each channel's plane as Conv's depthwise path computes it (depthwise.h: padded rows, then
//      the row kernels; bias and activation by epilogue.h), written to Y, and its mean taken
//      right away while the plane is in L1 (summed as GlobalAveragePool sums: 16 partial sums
//      over consecutive elements, then halved pairwise), planes split over the threads;
//   2. the gate from the C means: two matrix-vector products with the weights transposed at load
//      (vertical FMAs along the outputs, each output summed over k in order, as Conv's GemvWeights
//      does), + bias, each with its activation;
//   3. Y's planes scaled by their gate values. 2 and 3 are one job over the threads (from 2^14
//      elements of Y): each computes the small hidden vector whole, then its part of the gate and
//      scales those planes.
// The result is bit for bit the unfused graph's (Conv, GlobalAveragePool, two FusedConv, Mul) on
// the paths those take for these shapes; what it saves is the pool's pass over Y, four nodes'
// dispatch and their outputs. Compiled once per SIMD target (hwy/foreach_target.h);
// register_conv_se_kernels registers the best target's kernel.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/conv_se.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/depthwise.h"
#include "backends/cpu/kernels/epilogue.h"
#include "backends/cpu/kernels/nn_window.h"
#include "backends/cpu/kernels/scratch.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

// Outputs [0, rows) of a 1x1 conv on one position: W [rows, k] transposed into wt (k rows of `ld`
// >= rows floats, a multiple of the lanes, zero-padded).
std::vector<float> transpose_padded(const float* w, int64_t rows, int64_t k, int64_t ld) {
  std::vector<float> wt(static_cast<size_t>(k * ld), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < k; ++i) wt[static_cast<size_t>(i * ld + r)] = w[r * k + i];
  return wt;
}

int64_t lanes_padded(int64_t n) {
  const int64_t nl = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  return (n + nl - 1) / nl * nl;
}

// y[r] = act(bias[r] + sum_k wt[k * ld + r] * x[k]) for r in [r_begin, min(r_end, rows)) (r_begin,
// r_end multiples of the lanes, r_end <= ld): up to four vectors of outputs at a time in
// registers, each sum over k in order from zero.
void matvec_t(const float* wt, int64_t rows, int64_t ld, int64_t k, const float* x, const float* bias,
              const ops::ActivationSpec& act, float* y, int64_t r_begin, int64_t r_end) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r0 = r_begin; r0 < r_end; r0 += 4 * nl) {
    const int64_t nv = std::min<int64_t>(4, (r_end - r0) / nl);
    auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;
    if (nv == 4) {
      for (int64_t i = 0; i < k; ++i) {
        const auto xv = hn::Set(d, x[i]);
        const float* row = wt + i * ld + r0;
        a0 = hn::MulAdd(hn::LoadU(d, row), xv, a0);
        a1 = hn::MulAdd(hn::LoadU(d, row + nl), xv, a1);
        a2 = hn::MulAdd(hn::LoadU(d, row + 2 * nl), xv, a2);
        a3 = hn::MulAdd(hn::LoadU(d, row + 3 * nl), xv, a3);
      }
    } else {
      for (int64_t i = 0; i < k; ++i) {
        const auto xv = hn::Set(d, x[i]);
        const float* row = wt + i * ld + r0;
        a0 = hn::MulAdd(hn::LoadU(d, row), xv, a0);
        if (nv > 1) a1 = hn::MulAdd(hn::LoadU(d, row + nl), xv, a1);
        if (nv > 2) a2 = hn::MulAdd(hn::LoadU(d, row + 2 * nl), xv, a2);
      }
    }
    hn::StoreU(a0, d, y + r0);
    if (nv > 1) hn::StoreU(a1, d, y + r0 + nl);
    if (nv > 2) hn::StoreU(a2, d, y + r0 + 2 * nl);
    if (nv > 3) hn::StoreU(a3, d, y + r0 + 3 * nl);
  }
  const int64_t r1 = std::min(r_end, rows);
  if (r1 <= r_begin) return;
  if (bias)
    for (int64_t r = r_begin; r < r1; ++r) y[r] += bias[r];
  apply_epilogue(act, y + r_begin, r1 - r_begin);
}

// Lane 0 of v plus its other lanes as the pairwise halving of plane_mean adds them: lanes
// [0, n/2) + [n/2, n), then again, down to one (LowerHalf + UpperHalf, in registers).
template <class D, class V>
HWY_INLINE float halving_sum(D d, V v) {
  if constexpr (hn::MaxLanes(D()) == 1) {
    return hn::GetLane(v);
  } else {
    const hn::Half<D> dh;
    return halving_sum(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  }
}

// The mean of p[0, n) as GlobalAveragePool's CPU kernel sums it (nn_pool.cpp): 16 partial sums
// over consecutive elements, the tail into the first, then halved pairwise; under 16 elements,
// one chain. The same additions in the same order, in vectors (with the halving through a store
// and scalar adds it was ~3% of MobileNetV3-small).
float plane_mean(const float* p, int64_t n) {
  constexpr int64_t kAcc = 16;
  if (n < kAcc) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s += p[i];
    return n > 0 ? s / static_cast<float>(n) : 0.0f;
  }
  const hn::CappedTag<float, kAcc> d;
  constexpr int64_t kMaxVecs = kAcc / 4;  // at least 4 lanes per vector (x86, NEON, wasm)
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  int64_t nv = kAcc / nl;
  hn::Vec<decltype(d)> acc[kMaxVecs];
  for (int64_t v = 0; v < nv; ++v) acc[v] = hn::Zero(d);
  int64_t i = 0;
  for (; i + kAcc <= n; i += kAcc)
    for (int64_t v = 0; v < nv; ++v) acc[v] = hn::Add(acc[v], hn::LoadU(d, p + i + v * nl));
  if (i < n) {
    float t = hn::GetLane(acc[0]);
    for (; i < n; ++i) t += p[i];
    acc[0] = hn::IfThenElse(hn::FirstN(d, 1), hn::Set(d, t), acc[0]);
  }
  for (; nv > 1; nv /= 2)  // whole vectors: sums [j] + [j + 8], then [j] + [j + 4] while wider than one
    for (int64_t v = 0; v < nv / 2; ++v) acc[v] = hn::Add(acc[v], acc[v + nv / 2]);
  return halving_sum(d, acc[0]) / static_cast<float>(n);
}

// y[p] = plane_mean(x + p * size, size) for p in [0, planes): GlobalAveragePool's f32 kernel
// (nn_pool.cpp), the same sums in vectors of the best target (its own loop, built for the
// baseline ISA, was 0.8% of MobileNetV3-small: 576 planes of 49).
void plane_means_target(const float* x, int64_t planes, int64_t size, float* y) {
  for (int64_t p = 0; p < planes; ++p) y[p] = plane_mean(x + p * size, size);
}

// y[0, n) *= g.
void scale_plane(float* y, int64_t n, float g) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const auto gv = hn::Set(d, g);
  int64_t i = 0;
  for (; i + nl <= n; i += nl) hn::StoreU(hn::Mul(hn::LoadU(d, y + i), gv), d, y + i);
  for (; i < n; ++i) y[i] *= g;
}

// f(integral_constant<int, I>) for I = 0 .. N-1, unrolled at compile time.
template <int N, class F, int... I>
HWY_INLINE void unrolled(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
HWY_INLINE void unrolled(F&& f) {
  unrolled<N>(f, std::make_integer_sequence<int, N>{});
}

// An undilated KH x KW depthwise plane of stride S (1, or 2 in both dims) whose output rows fit one
// vector of D (MobileNetV3's and EfficientNet's 7x7 and 14x14 outputs), from its band prepared by
// depthwise_prepare_band (rows of `rs` floats; for S = 2 each is two phases of `wq`: even, then odd
// padded columns), into y (rows of ow_n). depthwise.h's row kernel loads the input once per
// multiply-add (each tap of each output row, and the weight broadcast); here each padded input
// row's KW shifted vectors are loaded once and feed the R output rows that read them, the KH * KW
// weights stay in registers: about 0.3 loads per multiply-add. Every output sums its taps in the
// row kernel's order (kh, then kw, from the bias), so the planes are the same bit for bit.
template <int KH, int KW, int R, int S, class D>
HWY_NOINLINE void depthwise_rows_reuse(D d, const float* band, int64_t rs, int64_t wq, const float* wk, float bias,
                                       int64_t oh_n, int64_t ow_n, float* y) {
  using V = hn::Vec<D>;
  V wv[KH * KW];
  unrolled<KH * KW>([&](auto tc) { wv[decltype(tc)::value] = hn::Set(d, wk[decltype(tc)::value]); });
  const int64_t last = (oh_n - 1) * S + KH - 1;  // the band's last padded row
  for (int64_t oh = 0; oh < oh_n; oh += R) {
    V acc[R];
    for (int r = 0; r < R; ++r) acc[r] = hn::Set(d, bias);
    // Padded row oh * S + i feeds output rows oh + r through kernel row kh = i - S * r; tap kw is
    // phase kw % S at kw / S. Rows past the band's last (a short last block) read its last row;
    // their outputs are dropped.
    unrolled<(R - 1) * S + KH>([&](auto ic) {
      constexpr int i = decltype(ic)::value;
      const float* row = band + std::min<int64_t>(oh * S + i, last) * rs;
      unrolled<KW>([&](auto kc) {
        constexpr int kw = decltype(kc)::value;
        const V x = hn::LoadU(d, row + (kw % S) * wq + kw / S);
        unrolled<R>([&](auto rc) {
          constexpr int r = decltype(rc)::value, kh = i - S * r;
          if constexpr (kh >= 0 && kh < KH) acc[r] = hn::MulAdd(wv[kh * KW + kw], x, acc[r]);
        });
      });
    });
    const int64_t rows = std::min<int64_t>(R, oh_n - oh);
    for (int64_t r = 0; r < rows; ++r) {
      float* at = y + (oh + r) * ow_n;
      if (ow_n == static_cast<int64_t>(hn::Lanes(d))) {
        hn::StoreU(acc[r], d, at);
        continue;
      }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
      hn::BlendedStore(acc[r], hn::FirstN(d, static_cast<size_t>(ow_n)), d, at);
#else
      alignas(64) float tmp[kDwSlack];
      hn::StoreU(acc[r], d, tmp);
      std::memcpy(at, tmp, static_cast<size_t>(ow_n) * sizeof(float));
#endif
    }
  }
}

// Whether depthwise_rows_reuse takes window w: 2-D, stride 1 or 2 (both dims), no dilation, 3x3
// or 5x5, output rows of at most one full vector.
bool depthwise_reuse_applies(const Window3& w) {
  const int64_t nl = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  return w.in[0] == 1 && w.k[0] == 1 && w.s[1] == w.s[2] && (w.s[1] == 1 || w.s[1] == 2) && w.d[1] == 1 && w.d[2] == 1 &&
         w.k[1] == w.k[2] && (w.k[1] == 3 || w.k[1] == 5) && w.out[2] <= nl && nl <= kDwSlack;
}

// One plane through depthwise_rows_reuse (depthwise_reuse_applies(w)), in vectors of 4, 8 or all
// lanes, the fewest that cover a row: 7 output rows at a time where they divide the plane (7x7 and
// 14x14: no idle row; 5x5 with 4 rows at a time was a third slower, its per-block setup and the
// short last block), else 8 (3x3) or 4 (5x5: its 25 weights and the sums fill the registers).
void depthwise_plane_reuse(const float* band, const DwGeom& g, const float* wk, float bias, const Window3& w, float* y) {
  const int64_t oh_n = w.out[1], ow_n = w.out[2], rs = g.row_stride(), wq = g.wq;
  auto with_stride = [&](auto d, auto sc) {
    constexpr int S = decltype(sc)::value;
    if (w.k[1] == 3 && oh_n % 7 == 0) depthwise_rows_reuse<3, 3, 7, S>(d, band, rs, wq, wk, bias, oh_n, ow_n, y);
    else if (w.k[1] == 3) depthwise_rows_reuse<3, 3, 8, S>(d, band, rs, wq, wk, bias, oh_n, ow_n, y);
    else if (oh_n % 7 == 0) depthwise_rows_reuse<5, 5, 7, S>(d, band, rs, wq, wk, bias, oh_n, ow_n, y);
    else depthwise_rows_reuse<5, 5, 4, S>(d, band, rs, wq, wk, bias, oh_n, ow_n, y);
  };
  auto run = [&](auto d) {
    if (w.s[1] == 1) with_stride(d, std::integral_constant<int, 1>{});
    else with_stride(d, std::integral_constant<int, 2>{});
  };
  if (ow_n <= 4) run(hn::CappedTag<float, 4>());
  else if (ow_n <= 8) run(hn::CappedTag<float, 8>());
  else run(hn::ScalableTag<float>());
}

class DepthwiseSEKernel final : public exec::Kernel {
 public:
  DepthwiseSEKernel(ops::ActivationSpec act, ops::ActivationSpec se_act, ops::ActivationSpec gate_act)
      : act_(act), se_act_(se_act), gate_act_(gate_act) {}

  // Transposes the squeeze-excitation weights once (constant W1 [R, C, 1, 1], W2 [C, R, 1, 1]).
  void prepare(const Tensor& w1, const Tensor& w2) {
    const int64_t r = w1.dim(0), c = w2.dim(0);
    w1t_ = transpose_padded(w1.data<float>(), r, c, lanes_padded(r));
    w2t_ = transpose_padded(w2.data<float>(), c, r, lanes_padded(c));
  }

  // Resolves the window once where the load-time X and depthwise W shapes are known (runs at
  // those shapes skip the attribute parsing).
  void presolve(const exec::KernelInit& init) {
    if (init.input_types.size() < 2) return;
    const ops::ValueType& xt = init.input_types[0];
    const ops::ValueType& wt = init.input_types[1];
    if (!xt.has_shape || !wt.has_shape || xt.shape.size() != 4 || wt.shape.size() != 4) return;
    window_ = presolve_window3(init.node, Ints{xt.shape[2], xt.shape[3]}, Ints{wt.shape[2], wt.shape[3]});
  }

  Status run(exec::KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& wd = *ctx.input(1);
    const Tensor& w1 = *ctx.input(2);
    const Tensor& w2 = *ctx.input(3);
    if (x.dtype() != DType::kF32 || x.rank() != 4 || wd.rank() != 4)
      return unsupported(ctx.place(), ": FusedDepthwiseSE runs f32 2-D convs only (X ", shape_str(x.shape()), ")");
    const int64_t n_batch = x.dim(0), c = x.dim(1), r = w1.dim(0);
    TSR_ASSIGN_OR_RETURN(Tensor * yt, ctx.alloc_output(0));
    TSR_ASSIGN_OR_RETURN(Window3 w,
                         resolve_window3(ctx, Ints{x.dim(2), x.dim(3)}, Ints{wd.dim(2), wd.dim(3)}, &window_));
    if (yt->numel() == 0) return ok_status();
    const int64_t in_size = w.in_size(), out_size = w.out_size(), taps = w.k_size();
    const float* px = x.data<float>();
    const float* pwd = wd.data<float>();
    const Tensor* bd = ctx.input(4);
    const float* pbd = bd && bd->numel() > 0 ? bd->data<float>() : nullptr;
    const Tensor* b1 = ctx.input(5);
    const Tensor* b2 = ctx.input(6);
    float* py = yt->mut_data<float>();
    // Weights from inputs (not constants at load): transposed for this run.
    std::vector<float> w1t_run, w2t_run;
    const int64_t ld1 = lanes_padded(r), ld2 = lanes_padded(c);
    const float* w1t = w1t_.data();
    const float* w2t = w2t_.data();
    if (static_cast<int64_t>(w1t_.size()) != c * ld1 || static_cast<int64_t>(w2t_.size()) != r * ld2) {
      w1t_run = transpose_padded(w1.data<float>(), r, c, ld1);
      w2t_run = transpose_padded(w2.data<float>(), c, r, ld2);
      w1t = w1t_run.data();
      w2t = w2t_run.data();
    }
    ThreadPool& pool = ctx.pool();
    const DwGeom geom = depthwise_geom(w);
    const bool reuse = depthwise_reuse_applies(w);
    TSR_ASSIGN_OR_RETURN(auto band,
                         SlotScratch<float>::make(ctx, static_cast<size_t>(depthwise_band_size(w, geom, 0, w.out[1]))));
    const int64_t slots = pool.num_threads();
    TSR_ASSIGN_OR_RETURN(auto vecs, Scratch<float>::make(ctx, static_cast<size_t>(n_batch * c + slots * ld1 + ld2)));
    float* means = vecs.data();
    float* hidden = means + n_batch * c;  // one per pool slot
    float* gate = hidden + slots * ld1;
    // 1. Planes and their means (the grain of Conv's depthwise path).
    const int64_t grain = std::max<int64_t>(1, kMinParallelConvMacs / 8 / std::max<int64_t>(1, taps * out_size));
    pool.parallel_for_slots(n_batch * c, grain, [&](int slot, int64_t p0, int64_t p1) {
      float* plane = band.slot(slot);
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t ch = p % c;
        float* yp = py + p * out_size;
        depthwise_prepare_band<float>(px + p * in_size, w, geom, 0, w.out[1], plane);
        const float bias = pbd ? pbd[ch] : 0.0f;
        if (reuse) depthwise_plane_reuse(plane, geom, pwd + ch * taps, bias, w, yp);
        else depthwise_prepared_rows<float>(plane, geom, pwd + ch * taps, bias, w, 0, w.out[1], yp);
        apply_epilogue(act_, yp, out_size);
        means[p] = plane_mean(yp, out_size);
      }
    });
    const float* pb1 = b1 && b1->numel() > 0 ? b1->data<float>() : nullptr;
    const float* pb2 = b2 && b2->numel() > 0 ? b2->data<float>() : nullptr;
    const int64_t nl = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
    const int64_t nvec = ld2 / nl;
    const bool split = pool.num_threads() > 1 && nvec >= 2 && c * out_size >= (int64_t{1} << 14);
    for (int64_t n = 0; n < n_batch; ++n) {
      // 2. and 3. in one job: each part computes the whole hidden vector (R outputs; C x R
      // multiply-adds, at most ~83K: MobileNetV3-small's 576 x 144), then its run of whole vectors
      // of the gate, then scales those channels' planes (mostly the ones its thread computed in
      // step 1). Two or three pooled jobs with their waits were one per step before (splitting
      // the hidden vector again from 2^15 multiply-adds, its own job, was 1-3% slower); the
      // gate's sums are the same (each output over k in order from zero).
      float* yn = py + n * c * out_size;
      const float* mn = means + n * c;
      auto part = [&](int slot, int64_t v0, int64_t v1) {
        float* h = hidden + slot * ld1;
        matvec_t(w1t, r, ld1, c, mn, pb1, se_act_, h, 0, ld1);
        matvec_t(w2t, c, ld2, r, h, pb2, gate_act_, gate, v0 * nl, v1 * nl);
        for (int64_t ch = v0 * nl; ch < std::min(v1 * nl, c); ++ch) scale_plane(yn + ch * out_size, out_size, gate[ch]);
      };
      if (split) {
        pool.parallel_for_slots(nvec, (nvec + pool.num_threads() - 1) / pool.num_threads(), part);
      } else {
        matvec_t(w1t, r, ld1, c, mn, pb1, se_act_, hidden, 0, ld1);
        matvec_t(w2t, c, ld2, r, hidden, pb2, gate_act_, gate, 0, ld2);
        for (int64_t ch = 0; ch < c; ++ch) scale_plane(yn + ch * out_size, out_size, gate[ch]);
      }
    }
    return ok_status();
  }

 private:
  ops::ActivationSpec act_, se_act_, gate_act_;
  std::vector<float> w1t_, w2t_;  // W1^T (C x ld1), W2^T (R x ld2); empty: weights from inputs
  PresolvedWindow window_;
};

Expected<std::unique_ptr<exec::Kernel>> create_depthwise_se(const exec::KernelInit& init) {
  TSR_ASSIGN_OR_RETURN(ops::ActivationSpec act, ops::activation_of(init.node, init.place));
  TSR_ASSIGN_OR_RETURN(ops::ActivationSpec se_act, ops::activation_of(init.node, init.place, "se_"));
  TSR_ASSIGN_OR_RETURN(ops::ActivationSpec gate_act, ops::activation_of(init.node, init.place, "gate_"));
  auto k = std::make_unique<DepthwiseSEKernel>(act, se_act,
                                               gate_act);
  k->presolve(init);
  const Tensor* w1 = init.constant_inputs.size() > 2 ? init.constant_inputs[2] : nullptr;
  const Tensor* w2 = init.constant_inputs.size() > 3 ? init.constant_inputs[3] : nullptr;
  if (w1 && w2 && w1->dtype() == DType::kF32 && w2->dtype() == DType::kF32 && w1->rank() == 4 && w2->rank() == 4 &&
      w2->dim(1) == w1->dim(0) && w1->dim(1) == w2->dim(0))
    k->prepare(*w1, *w2);
  return std::unique_ptr<exec::Kernel>(std::move(k));
}

}  // namespace

void register_conv_se_target(KernelRegistry& r) {
  TSR_IF_SELECTED("FusedDepthwiseSE") r.add("FusedDepthwiseSE", {DType::kF32}, &create_depthwise_se);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_conv_se_target);
HWY_EXPORT(plane_means_target);

void register_conv_se_kernels(KernelRegistry& r) { HWY_DYNAMIC_DISPATCH(register_conv_se_target)(r); }

void plane_means_f32(const float* x, int64_t planes, int64_t size, float* y) {
  HWY_DYNAMIC_DISPATCH(plane_means_target)(x, planes, size, y);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
