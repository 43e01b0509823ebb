// CPU Conv kernel (ONNX opset 17). f32: 1x1/stride-1/unpadded convs are one GEMM on the input
// as is; depthwise convs (one input and one output channel per group, spatial rank <= 2) run a
// direct loop vectorized along the output width; everything else is im2col in blocks of output
// rows + the packed SGEMM (gemm.h), or, for 3x3 stride-1 convs with constant weights, Winograd
// F(4x4, 3x3) (winograd.h). f64 takes the im2col path with the reference GEMM, and so does i32
// for the quantized convs (conv_i32, conv.h). FusedConv is the same kernel: bias, its residual Z
// and its activation are one epilogue pass (epilogue.h) over each block of outputs right after
// the GEMM computes it.
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
#include "backends/cpu/kernels/epilogue.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/im2col.h"
#include "backends/cpu/kernels/nn_window.h"
#include "backends/cpu/kernels/winograd.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

template <typename T>
void gemm_any(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
              int64_t ldc, ThreadPool* pool) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(false, false, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc, pool);
  } else {
    gemm_reference<T>(false, false, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
  }
}

// Depthwise 2-D (or 1-D) conv of one plane: y[oh, ow] = bias + sum_kh,kw wk[kh, kw] *
// xpad[oh*s1 + kh*d1, ow*s2 + kw*d2], where xpad is the plane with its padding made explicit, so
// the inner loops carry no bounds checks. With a width stride s2 > 1 each padded row is also
// split into s2 phases (phase f holds columns f, f + s2, ...): tap column ow*s2 + off is then
// phase (off % s2) at index ow + off / s2, contiguous in ow, so every stride vectorizes.
constexpr int64_t kDwSlack = 64;  // >= lanes of any float vector

struct DwGeom {
  int64_t hp, wq, s2;  // padded rows, phase row length, width stride
  int64_t row_stride() const { return s2 * wq; }  // elements per padded row (all phases)
};

template <typename T>
DwGeom depthwise_prepare(const T* x, const Window3& w, std::vector<T>& phased) {
  const int64_t hp = std::max(w.in[1] + w.pb[1] + w.pe[1], (w.out[1] - 1) * w.s[1] + (w.k[1] - 1) * w.d[1] + 1);
  const int64_t wp = std::max(w.in[2] + w.pb[2] + w.pe[2], (w.out[2] - 1) * w.s[2] + (w.k[2] - 1) * w.d[2] + 1);
  const int64_t s2 = w.s[2];
  const int64_t wq = (wp + s2 - 1) / s2;
  // kDwSlack zeros past the end let the vector loop read a full vector for the last (partial)
  // chunk of the last row; the lanes past the row end are discarded.
  phased.assign(static_cast<size_t>(hp * s2 * wq + kDwSlack), T(0));
  for (int64_t ih = 0; ih < w.in[1]; ++ih) {
    T* dst = phased.data() + (ih + w.pb[1]) * s2 * wq;
    const T* src = x + ih * w.in[2];
    if (s2 == 1) {
      std::memcpy(dst + w.pb[2], src, static_cast<size_t>(w.in[2]) * sizeof(T));
      continue;
    }
    const int64_t pb2 = w.pb[2];
    if constexpr (std::is_same_v<T, float>) {
#if HWY_TARGET != HWY_SCALAR
      if (s2 == 2) {
        // The common stride 2: deinterleave with vector loads. Input column c lands in phase
        // (c + pb2) % 2 at index (c + pb2) / 2.
        const hn::ScalableTag<float> d;
        const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
        int64_t c = 0;
        for (; c + 2 * nl <= w.in[2]; c += 2 * nl) {
          hn::Vec<decltype(d)> even, odd;
          hn::LoadInterleaved2(d, src + c, even, odd);
          hn::StoreU(even, d, dst + ((c + pb2) % 2) * wq + (c + pb2) / 2);
          hn::StoreU(odd, d, dst + ((c + 1 + pb2) % 2) * wq + (c + 1 + pb2) / 2);
        }
        for (; c < w.in[2]; ++c) dst[((c + pb2) % 2) * wq + (c + pb2) / 2] = src[c];
        continue;
      }
#endif
    }
    // Phase f, index j holds padded column f + j*s2, i.e. input column f + j*s2 - pb2.
    for (int64_t f = 0; f < s2; ++f) {
      const int64_t j0 = pb2 > f ? (pb2 - f + s2 - 1) / s2 : 0;
      const int64_t j1 = std::min(wq, (w.in[2] + pb2 - f + s2 - 1) / s2);
      T* o = dst + f * wq;
      const T* in_f = src + f - pb2;
      for (int64_t j = j0; j < j1; ++j) o[j] = in_f[j * s2];
    }
  }
  return {hp, wq, s2};
}

// Output row(s) for a fixed window; KH/KW > 0 are compile-time window sizes (so the weight
// broadcasts stay in registers), 0 = use w.k.
template <typename T, int KH, int KW>
void depthwise_rows(const T* phased, const DwGeom& g, const T* wk, T bias, const Window3& w, T* y) {
  const int64_t kh_n = KH > 0 ? KH : w.k[1], kw_n = KW > 0 ? KW : w.k[2], ow_n = w.out[2];
  const int64_t rs = g.row_stride();
  // Offset of tap kw inside a padded row's phases.
  int64_t tap[64];
  const bool small = kw_n <= 64;
  if (small)
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const int64_t off = kw * w.d[2];
      tap[kw] = (off % g.s2) * g.wq + off / g.s2;
    }
  for (int64_t oh = 0; oh < w.out[1]; ++oh) {
    T* yrow = y + oh * ow_n;
    const T* base = phased + oh * w.s[1] * rs;
    int64_t ow = 0;
    if constexpr (std::is_same_v<T, float>) {
#if HWY_TARGET != HWY_SCALAR
      if (small) {
        const hn::ScalableTag<float> d;
        const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
        // Two chunks per pass share each weight broadcast. The second chunk may be partial:
        // loads may run past the row into the next one or the slack; extra lanes are dropped.
        for (; ow + nl < ow_n && nl <= kDwSlack; ow += 2 * nl) {
          auto acc0 = hn::Set(d, bias), acc1 = acc0;
          for (int64_t kh = 0; kh < kh_n; ++kh) {
            const float* row = base + kh * w.d[1] * rs + ow;
            const float* wr = wk + kh * kw_n;
            for (int64_t kw = 0; kw < kw_n; ++kw) {
              const auto wv = hn::Set(d, wr[kw]);
              acc0 = hn::MulAdd(wv, hn::LoadU(d, row + tap[kw]), acc0);
              acc1 = hn::MulAdd(wv, hn::LoadU(d, row + tap[kw] + nl), acc1);
            }
          }
          hn::StoreU(acc0, d, yrow + ow);
          if (ow + 2 * nl <= ow_n) {
            hn::StoreU(acc1, d, yrow + ow + nl);
          } else {
            alignas(64) float tmp[kDwSlack];
            hn::StoreU(acc1, d, tmp);
            std::memcpy(yrow + ow + nl, tmp, static_cast<size_t>(ow_n - ow - nl) * sizeof(float));
          }
        }
        // The last chunk, partial or not (same overrun rule).
        for (; ow < ow_n && nl <= kDwSlack; ow += nl) {
          auto acc = hn::Set(d, bias);
          for (int64_t kh = 0; kh < kh_n; ++kh) {
            const float* row = base + kh * w.d[1] * rs + ow;
            const float* wr = wk + kh * kw_n;
            for (int64_t kw = 0; kw < kw_n; ++kw) acc = hn::MulAdd(hn::Set(d, wr[kw]), hn::LoadU(d, row + tap[kw]), acc);
          }
          if (ow + nl <= ow_n) {
            hn::StoreU(acc, d, yrow + ow);
          } else {
            alignas(64) float tmp[kDwSlack];
            hn::StoreU(acc, d, tmp);
            std::memcpy(yrow + ow, tmp, static_cast<size_t>(ow_n - ow) * sizeof(float));
          }
        }
      }
#endif
    }
    for (; ow < ow_n; ++ow) {
      T acc = bias;
      for (int64_t kh = 0; kh < kh_n; ++kh) {
        const T* row = base + kh * w.d[1] * rs;
        const T* wr = wk + kh * kw_n;
        for (int64_t kw = 0; kw < kw_n; ++kw) {
          const int64_t off = kw * w.d[2];
          acc += wr[kw] * row[(small ? tap[kw] : (off % g.s2) * g.wq + off / g.s2) + ow];
        }
      }
      yrow[ow] = acc;
    }
  }
}

template <typename T>
void depthwise_plane(const T* x, const T* wk, T bias, const Window3& w, T* y, std::vector<T>& phased) {
  const DwGeom g = depthwise_prepare<T>(x, w, phased);
  if (w.k[1] == 3 && w.k[2] == 3) depthwise_rows<T, 3, 3>(phased.data(), g, wk, bias, w, y);
  else if (w.k[1] == 5 && w.k[2] == 5) depthwise_rows<T, 5, 5>(phased.data(), g, wk, bias, w, y);
  else depthwise_rows<T, 0, 0>(phased.data(), g, wk, bias, w, y);
}

// Conv of x by wt (+ bias) into yt (allocated with the inferred shape), the node's window.
// `packed` (f32 only, may be null): the weights of each group pre-packed by sgemm_pack_a.
// `z` (FusedConv's residual input, may be null): added before the activation; yt's shape.
// `act`: the FusedConv activation (kNone for Conv), applied block by block.
// `wino` (f32 only, may be null): the weights transformed for Winograd, used where the window allows.
template <typename T>
Status conv_into(exec::KernelContext& ctx, const Tensor& x, const Tensor& wt, const Tensor* bias, Tensor* yt,
                 const std::vector<SgemmPackedA>* packed = nullptr, const ops::ActivationSpec& act = {},
                 const Tensor* z = nullptr, const WinogradWeights* wino = nullptr) {
  const int64_t group = ctx.node().attr_int("group", 1);
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> kernel(wt.shape().begin() + 2, wt.shape().end());
  TSR_ASSIGN_OR_RETURN(Window3 w, resolve_window3(ctx, in, kernel, false));
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
    if (wino && wino->m == m && wino->c == c && group == 1 && winograd_window_applies(w)) {
      winograd_conv(*wino, px, n_batch, w, pb, pz, act, py, pool);
      return ok_status();
    }
  }

  const int64_t macs = n_batch * m * kg * out_size;
  if (cg == 1 && mg == 1 && w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1) {
    // A depthwise multiply-add costs several GEMM ones (memory bound, no reuse): a lower bar.
    const int64_t grain = std::max<int64_t>(1, kMinParallelConvMacs / 8 / std::max<int64_t>(1, kg * out_size));
    pool.parallel_for(n_batch * m, grain, [&](int64_t p0, int64_t p1) {
      thread_local std::vector<T> phased;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t ch = p % m;
        T* yp = py + p * out_size;
        depthwise_plane<T>(px + p * in_size, pw + ch * w.k_size(), pb ? pb[ch] : T(0), w, yp, phased);
        if (pz)
          for (int64_t i = 0; i < out_size; ++i) yp[i] += pz[p * out_size + i];
        apply_epilogue(act, yp, out_size);
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
  const bool pointwise = w.k_size() == 1 && w.s == std::array<int64_t, 3>{1, 1, 1} &&
                         w.pb == std::array<int64_t, 3>{0, 0, 0} && w.pe == std::array<int64_t, 3>{0, 0, 0};
  const int64_t ow = w.out[2], rows = w.out[0] * w.out[1];
  int64_t block = 0, per_image = 0;  // block: columns (pointwise) or output rows (im2col)
  if (pointwise) {
    block = std::min(out_size, std::max<int64_t>(512, (int64_t{1} << 16) / std::max<int64_t>(1, mg)));
    per_image = (out_size + block - 1) / block;
  } else {
    block = std::max<int64_t>((512 + ow - 1) / ow, (int64_t{1} << 18) / std::max<int64_t>(1, kg * ow));
    block = std::clamp<int64_t>(block, 1, rows);
    per_image = (rows + block - 1) / block;
  }
  const int threads = macs < kMinParallelConvMacs ? 1 : pool.num_threads();
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
  const int64_t nblocks = n_batch * group * per_image;
  auto run_block = [&](int64_t bi, ThreadPool* inner) {
    const int64_t n = bi / (group * per_image), g = bi / per_image % group, j = bi % per_image;
    int64_t c0 = 0, ncols = 0;  // output positions [c0, c0 + ncols)
    const T* src = nullptr;
    int64_t ldb = 0;
    if (pointwise) {
      c0 = j * block;
      ncols = std::min(block, out_size - c0);
      src = px + (n * c + g * cg) * in_size + c0;
      ldb = in_size;
    } else {
      const int64_t r0 = j * block, r1 = std::min(rows, r0 + block);
      c0 = r0 * ow;
      ncols = (r1 - r0) * ow;
      // Per-thread scratch, grown and reused across calls (im2col writes every element it uses).
      thread_local std::vector<T> col;
      if (col.size() < static_cast<size_t>(kg * ncols)) col.resize(static_cast<size_t>(kg * ncols));
      T* pc = col.data();
      const T* xg = px + (n * c + g * cg) * in_size;
      if (inner && kg > 1) inner->parallel_for(kg, 8, [&](int64_t k0, int64_t k1) { im2col<T>(xg, w, r0, r1, k0, k1, pc); });
      else im2col<T>(xg, w, r0, r1, 0, kg, pc);
      src = pc;
      ldb = ncols;
    }
    T* yg = py + (n * m + g * mg) * out_size + c0;
    gemm_group(g, ncols, src, ldb, T(0), yg, out_size, inner);
    apply_epilogue_rows(act, yg, mg, ncols, out_size, pb ? pb + g * mg : nullptr,
                        pz ? pz + (n * m + g * mg) * out_size + c0 : nullptr, out_size);
  };
  // With enough blocks each thread takes whole blocks (single-threaded GEMMs, no barrier per
  // block); otherwise (few, narrow blocks) all threads share each block's im2col and GEMM.
  if (threads > 1 && nblocks >= 2 * int64_t{threads}) {
    pool.parallel_for(nblocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t bi = b0; bi < b1; ++bi) run_block(bi, nullptr);
    });
  } else {
    for (int64_t bi = 0; bi < nblocks; ++bi) run_block(bi, threads > 1 ? &pool : nullptr);
  }
  return ok_status();
}

template <typename T>
Status conv_typed(exec::KernelContext& ctx, const std::vector<SgemmPackedA>* packed, const ops::ActivationSpec& act,
                  const WinogradWeights* wino) {
  TSR_ASSIGN_OR_RETURN(Tensor * yt, ctx.alloc_output(0));
  return conv_into<T>(ctx, *ctx.input(0), *ctx.input(1), ctx.input(2), yt, packed, act, ctx.input(3), wino);
}

// The dtypes Conv and FusedConv are compiled for: f32 and f64, or a selective build's subset
// (core/base/selective.h).
constexpr DTypeMask kConvDTypes = selected_dtypes("Conv") | selected_dtypes("FusedConv");

// Conv and FusedConv (`act_` from the node's activation attributes, parsed once). With constant
// f32 weights, each group's weight matrix is packed once at kernel creation (`packed_`), and 3x3
// group-1 weights are also transformed for Winograd (`wino_`, used for stride-1 windows).
class ConvKernel final : public exec::Kernel {
 public:
  ConvKernel(std::vector<SgemmPackedA> packed, ops::ActivationSpec act, WinogradWeights wino = {})
      : packed_(std::move(packed)), act_(act), wino_(std::move(wino)) {}
  Status run(exec::KernelContext& ctx) override {
    switch (ctx.input(0)->dtype()) {
      case DType::kF32:
        return conv_typed<float>(ctx, packed_.empty() ? nullptr : &packed_, act_, wino_.packed.empty() ? nullptr : &wino_);
      case DType::kF64:
        if constexpr (dtype_in(kConvDTypes, DType::kF64)) return conv_typed<double>(ctx, nullptr, act_, nullptr);
        break;
      default: break;
    }
    return unsupported(ctx.place(), ": Conv has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
  }

 private:
  std::vector<SgemmPackedA> packed_;
  ops::ActivationSpec act_;
  WinogradWeights wino_;
};

Expected<std::unique_ptr<exec::Kernel>> create_conv(const exec::KernelInit& init) {
  TSR_ASSIGN_OR_RETURN(ops::ActivationSpec act, ops::activation_of(init.node, init.place));
  const Tensor* wt = init.constant_inputs.size() > 1 ? init.constant_inputs[1] : nullptr;
  const int64_t group = init.node.attr_int("group", 1);
  if (wt && wt->dtype() == DType::kF32 && wt->rank() >= 3 && group >= 1 && wt->dim(0) % group == 0 &&
      !(wt->dim(1) == 1 && wt->dim(0) == group)) {  // depthwise convs take the direct loop
    const int64_t mg = wt->dim(0) / group;
    const int64_t kg = wt->numel() / std::max<int64_t>(1, wt->dim(0));
    if (mg > 2 && kg > 0) {
      std::vector<SgemmPackedA> packed;
      for (int64_t g = 0; g < group; ++g)
        packed.push_back(sgemm_pack_a(false, mg, kg, wt->data<float>() + g * mg * kg, kg));
      WinogradWeights wino;
      if (wt->rank() == 4 && winograd_weights_apply(wt->dim(0), wt->dim(1), wt->dim(2), wt->dim(3), group))
        wino = winograd_prepare(wt->data<float>(), wt->dim(0), wt->dim(1));
      return std::unique_ptr<exec::Kernel>(new ConvKernel(std::move(packed), act, std::move(wino)));
    }
  }
  return std::unique_ptr<exec::Kernel>(new ConvKernel({}, act));
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
