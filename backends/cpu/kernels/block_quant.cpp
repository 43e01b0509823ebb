// CPU kernels for the block-quantized com.microsoft ops (semantics and layouts:
// core/ops/families/block_quant.cpp, core/ops/block_quant.h): MatMulNBits and
// GatherBlockQuantized.
//
// MatMulNBits computes Y[M, N] = A[M, K] @ W^T, W[n][k] = (code(n, k) - zero(n, b)) * scale(n, b),
// b = k / block, from the packed codes as stored (nothing is widened ahead of time):
//   * decode and short prompts, M <= 16 with 4 or 8-bit codes: a memory-bound GEMV (Highway).
//     Each block of codes is loaded once per group of up to 4 rows of A, its nibbles (or bytes)
//     are widened and converted in registers, (code - zero) multiplies the group's rows of A into
//     per-block partial sums, and the block's scale folds the partials into the accumulators (one
//     FMA per block and row of A, not per weight). Several rows of W are walked side by side for
//     independent FMA chains; rows are spread over the thread pool, and each group of A rows
//     walks the same 64 rows of W while their codes are in cache. Up to M = 16 this beats
//     dequantizing (at M = 5 to 16, K = 512, N = 2048: 1.5x to 4x; about even at M = 32).
//   * otherwise (2-bit codes, M > 16): W is dequantized one panel of rows at a time (about 1 MB of
//     f32, cache-sized) into per-thread scratch and multiplied with the shared packed SGEMM
//     (gemm.h); panels are spread over the thread pool.
// Both read A in a block-permuted order (permute_a) that matches how codes sit in a byte: inside
// each block, the codes in slot t of their byte (t = 0: the low bits) come first, then t = 1, ...,
// so a byte's codes are split with shifts, never interleaved back into k order. The permuted rows
// are padded with zeros to k_blocks * block: the padding codes of a last, partial block contribute
// nothing. The per-block parameters are unpacked to f32 once at load when scales and zero points
// are constants (every exported model), else on each run. Compared with dequantize-then-GEMM
// (onnxruntime's fp32 path) every product of dequantized values is the same; only the summation
// order differs (per-block partials).
//
// GatherBlockQuantized is a row gather plus a dequantization of the gathered rows (embedding
// tables): plain loops, threaded over the indices.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/block_quant.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/scratch.h"
#include "core/ops/block_quant.h"

#ifndef TSR_CPU_BLOCK_QUANT_WEIGHTS_
#define TSR_CPU_BLOCK_QUANT_WEIGHTS_
namespace tsr::cpu {
// The quantized W and its per-block parameters (f32, [N * k_blocks] each, row n's blocks
// contiguous). `codes` is [N, k_blocks, blob] u8, blob = block * bits / 8.
struct NBitsWeights {
  const uint8_t* codes = nullptr;
  const float* scale = nullptr;
  const float* zero = nullptr;
  int64_t n = 0, k = 0, k_blocks = 0, block = 0, bits = 4;
  int64_t blob() const { return block * bits / 8; }
  int64_t padded_k() const { return k_blocks * block; }
};
}  // namespace tsr::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

// kR rows of W (from row n) against kM rows of permuted A (row stride kp), into y[mm * ldy + n + r].
// Per block: the codes of each row are widened in registers, (code - zero) multiplies A into
// per-block partials, then the block's scale folds the partials into the accumulators. Requires
// blob % Lanes(d) == 0. kBits 4 or 8.
template <int kBits, int kM, int kR, class D>
HWY_INLINE void gemv_tile(D d, const NBitsWeights& w, const float* ap, int64_t kp, int64_t n, float* y, int64_t ldy) {
  using V = hn::Vec<D>;
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint8_t, decltype(di)> du8;
  constexpr int kPer = 8 / kBits;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t blob = w.blob(), kb = w.k_blocks;
  const auto mask = hn::Set(di, (1 << kBits) - 1);
  const uint8_t* rows[kR];
  const float* sc[kR];
  const float* zp[kR];
  V acc[kR][kM];
  for (int r = 0; r < kR; ++r) {
    rows[r] = w.codes + (n + r) * kb * blob;
    sc[r] = w.scale + (n + r) * kb;
    zp[r] = w.zero + (n + r) * kb;
    for (int mm = 0; mm < kM; ++mm) acc[r][mm] = hn::Zero(d);
  }
  for (int64_t b = 0; b < kb; ++b) {
    V part[kR][kM];
    V zv[kR];
    for (int r = 0; r < kR; ++r) {
      zv[r] = hn::Set(d, zp[r][b]);
      for (int mm = 0; mm < kM; ++mm) part[r][mm] = hn::Zero(d);
    }
    const float* ab = ap + b * w.block;
    for (int64_t c = 0; c < blob; c += lanes) {
      V av[kPer][kM];
      for (int t = 0; t < kPer; ++t)
        for (int mm = 0; mm < kM; ++mm) av[t][mm] = hn::LoadU(d, ab + mm * kp + t * blob + c);
      for (int r = 0; r < kR; ++r) {
        const auto q = hn::PromoteTo(di, hn::LoadU(du8, rows[r] + b * blob + c));
        for (int t = 0; t < kPer; ++t) {
          const auto code = kBits == 8 ? q : hn::And(hn::ShiftRightSame(q, t * kBits), mask);
          const V v = hn::Sub(hn::ConvertTo(d, code), zv[r]);
          for (int mm = 0; mm < kM; ++mm) part[r][mm] = hn::MulAdd(v, av[t][mm], part[r][mm]);
        }
      }
    }
    for (int r = 0; r < kR; ++r) {
      const V sv = hn::Set(d, sc[r][b]);
      for (int mm = 0; mm < kM; ++mm) acc[r][mm] = hn::MulAdd(part[r][mm], sv, acc[r][mm]);
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int mm = 0; mm < kM; ++mm) y[mm * ldy + n + r] = hn::GetLane(hn::SumOfLanes(d, acc[r][mm]));
}

// Rows [n0, n1) of W, kR at a time, then one at a time.
template <int kBits, int kM, int kR, class D>
void gemv_rows(D d, const NBitsWeights& w, const float* ap, int64_t n0, int64_t n1, float* y, int64_t ldy) {
  const int64_t kp = w.padded_k();
  int64_t n = n0;
  for (; n + kR <= n1; n += kR) gemv_tile<kBits, kM, kR>(d, w, ap, kp, n, y, ldy);
  for (; n < n1; ++n) gemv_tile<kBits, kM, 1>(d, w, ap, kp, n, y, ldy);
}

// kR by kM: about as many live vectors (accumulators, partials, A) as AVX2's 16 registers hold.
template <int kBits, class D>
void gemv_m(D d, const NBitsWeights& w, int64_t m, const float* ap, int64_t n0, int64_t n1, float* y, int64_t ldy) {
  switch (m) {
    case 1: gemv_rows<kBits, 1, 4>(d, w, ap, n0, n1, y, ldy); break;
    case 2: gemv_rows<kBits, 2, 2>(d, w, ap, n0, n1, y, ldy); break;
    case 3: gemv_rows<kBits, 3, 1>(d, w, ap, n0, n1, y, ldy); break;
    default: gemv_rows<kBits, 4, 1>(d, w, ap, n0, n1, y, ldy); break;
  }
}

// Dequantizes rows [n0, n1) of W in the permuted order into out (row stride ldo). kBits 2, 4, 8.
template <int kBits>
void dequant_rows(const NBitsWeights& w, int64_t n0, int64_t n1, float* out, int64_t ldo) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(di)> du8;
  constexpr int kPer = 8 / kBits;
  constexpr int kMask = (1 << kBits) - 1;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t blob = w.blob(), kb = w.k_blocks;
  const auto mask = hn::Set(di, kMask);
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t b = 0; b < kb; ++b) {
      const float s = w.scale[n * kb + b], z = w.zero[n * kb + b];
      const auto sv = hn::Set(d, s), zv = hn::Set(d, z);
      const uint8_t* p = w.codes + (n * kb + b) * blob;
      float* o = out + (n - n0) * ldo + b * w.block;
      int64_t c = 0;
      for (; c + lanes <= blob; c += lanes) {
        const auto q = hn::PromoteTo(di, hn::LoadU(du8, p + c));
        for (int t = 0; t < kPer; ++t) {
          const auto code = kBits == 8 ? q : hn::And(hn::ShiftRightSame(q, t * kBits), mask);
          hn::StoreU(hn::Mul(hn::Sub(hn::ConvertTo(d, code), zv), sv), d, o + t * blob + c);
        }
      }
      // Blobs narrower than a vector (2-bit codes in small blocks): the same arithmetic.
      for (; c < blob; ++c)
        for (int t = 0; t < kPer; ++t) o[t * blob + c] = (static_cast<float>((p[c] >> (t * kBits)) & kMask) - z) * s;
    }
  }
}

}  // namespace

void nbits_gemv_impl(const NBitsWeights& w, int64_t m, const float* a_perm, int64_t n0, int64_t n1, float* y,
                     int64_t ldy) {
  const hn::ScalableTag<float> d;
  if (w.bits == 8) {
    gemv_m<8>(d, w, m, a_perm, n0, n1, y, ldy);
  } else if (w.blob() % static_cast<int64_t>(hn::Lanes(d)) == 0) {
    gemv_m<4>(d, w, m, a_perm, n0, n1, y, ldy);
  } else {  // 16-code blocks (8 bytes) with 16-lane vectors
    gemv_m<4>(hn::CappedTag<float, 8>(), w, m, a_perm, n0, n1, y, ldy);
  }
}

void nbits_dequant_impl(const NBitsWeights& w, int64_t n0, int64_t n1, float* out, int64_t ldo) {
  if (w.bits == 2) dequant_rows<2>(w, n0, n1, out, ldo);
  else if (w.bits == 4) dequant_rows<4>(w, n0, n1, out, ldo);
  else dequant_rows<8>(w, n0, n1, out, ldo);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();


#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(nbits_gemv_impl);
HWY_EXPORT(nbits_dequant_impl);

namespace {

float f32_of(float v) { return v; }
float f32_of(Half v) { return f16_to_f32(v.bits); }
float float_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kF16 ? f16_to_f32(t.data<Half>()[i].bits) : t.data<float>()[i];
}

// Rows [0, m) of A (T = float or Half, row stride K) into `out` (m * padded_k floats) in the
// block-permuted order (file comment), zeros past K.
template <typename T>
void permute_a(const NBitsWeights& w, int64_t m, const T* a, float* out) {
  const int64_t per = 8 / w.bits, blob = w.blob(), kp = w.padded_k();
  for (int64_t r = 0; r < m; ++r) {
    const T* src = a + r * w.k;
    float* dst = out + r * kp;
    for (int64_t b = 0; b < w.k_blocks; ++b)
      for (int64_t i = 0; i < w.block; ++i) {
        const int64_t k = b * w.block + i;
        dst[b * w.block + (i % per) * blob + i / per] = k < w.k ? f32_of(src[k]) : 0.0f;
      }
  }
}

// The most rows of A that take the GEMV path (file comment).
constexpr int64_t kGemvMaxRows = 16;

// y (m x w.n, row stride ldy) = A @ W^T for A permuted by permute_a.
Status nbits_matmul(exec::KernelContext& ctx, const NBitsWeights& w, int64_t m, const float* a_perm, float* y,
                    int64_t ldy) {
  ThreadPool& pool = ctx.pool();
  if (m <= kGemvMaxRows && w.bits != 2) {
    // Chunks of at least 64 rows of W (16 KB of 4-bit codes at K = 512): below that a thread
    // hand-off costs more than the rows. Inside a chunk, 64 rows of W at a time meet every group
    // of 4 rows of A, so the codes come from memory once.
    constexpr int64_t kRowsInCache = 64;
    const int64_t kp = w.padded_k();
    pool.parallel_for(w.n, kRowsInCache, [&](int64_t n0, int64_t n1) {
      for (int64_t c0 = n0; c0 < n1; c0 += kRowsInCache)
        for (int64_t r0 = 0; r0 < m; r0 += 4)
          HWY_DYNAMIC_DISPATCH(nbits_gemv_impl)(w, std::min<int64_t>(4, m - r0), a_perm + r0 * kp, c0,
                                                std::min(n1, c0 + kRowsInCache), y + r0 * ldy, ldy);
    });
    return ok_status();
  }
  // Panels of about 1 MB of f32 (16 to 512 rows of W, a multiple of 16).
  const int64_t kp = w.padded_k();
  const int64_t rows = std::min(w.n, std::clamp<int64_t>((int64_t{1} << 18) / kp / 16 * 16, 16, 512));
  const int64_t panels = (w.n + rows - 1) / rows;
  // Fewer panels than threads: one after the other, each product threaded by sgemm itself.
  const bool over_panels = panels >= pool.num_threads();
  TSR_ASSIGN_OR_RETURN(SlotScratch<float> buf, SlotScratch<float>::make(ctx, static_cast<size_t>(rows * kp), over_panels));
  auto run = [&](int slot, int64_t p0, int64_t p1) {
    float* panel = buf.slot(slot);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n0 = p * rows, cnt = std::min(rows, w.n - n0);
      HWY_DYNAMIC_DISPATCH(nbits_dequant_impl)(w, n0, n0 + cnt, panel, kp);
      sgemm(false, true, m, cnt, kp, 1.0f, a_perm, kp, panel, kp, 0.0f, y + n0, ldy, over_panels ? nullptr : &pool);
    }
  };
  if (over_panels) pool.parallel_for_slots(panels, 1, run);
  else run(0, 0, panels);
  return ok_status();
}

// The per-block scales and zero points of a MatMulNBits node as f32, [N * k_blocks] each: zero
// points from packed u8 (per row, low bits first), from A's float dtype, or 2^(bits-1). The
// shapes were checked by inference.
void unpack_params(const ops::NBitsGeometry& g, const Tensor& scales, const Tensor* zp, float* scale, float* zero) {
  const int64_t nb = g.n * g.k_blocks;
  for (int64_t i = 0; i < nb; ++i) scale[i] = float_at(scales, i);
  if (!zp) {
    std::fill(zero, zero + nb, static_cast<float>(g.default_zero_point()));
  } else if (zp->dtype() == DType::kU8) {
    const uint8_t* p = zp->data<uint8_t>();
    const int64_t per = 8 / g.bits, mask = (int64_t{1} << g.bits) - 1;
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t b = 0; b < g.k_blocks; ++b)
        zero[n * g.k_blocks + b] = static_cast<float>((p[n * g.zp_row_bytes + b / per] >> ((b % per) * g.bits)) & mask);
  } else {
    for (int64_t i = 0; i < nb; ++i) zero[i] = float_at(*zp, i);
  }
}

class MatMulNBitsKernel final : public exec::Kernel {
 public:
  // `params`: scales then zero points (unpack_params), or empty to unpack them on every run.
  MatMulNBitsKernel(ops::NBitsGeometry g, std::vector<float> params) : g_(g), params_(std::move(params)) {}

  Status run(exec::KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const int64_t nb = g_.n * g_.k_blocks;
    const float* params = params_.data();
    if (params_.empty()) {
      TSR_ASSIGN_OR_RETURN(Scratch<float> fresh, Scratch<float>::make(ctx, static_cast<size_t>(2 * nb)));
      unpack_params(g_, *ctx.input(2), ctx.input(3), fresh.data(), fresh.data() + nb);
      params = fresh.data();
    }
    const NBitsWeights w{ctx.input(1)->data<uint8_t>(), params, params + nb, g_.n, g_.k, g_.k_blocks, g_.block, g_.bits};
    TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
    const int64_t m = a.numel() / g_.k;
    if (m == 0) return ok_status();
    const bool f16 = a.dtype() == DType::kF16;
    TSR_ASSIGN_OR_RETURN(Scratch<float> ap, Scratch<float>::make(ctx, static_cast<size_t>(m * w.padded_k())));
    if (f16) permute_a(w, m, a.data<Half>(), ap.data());
    else permute_a(w, m, a.data<float>(), ap.data());
    Scratch<float> y16;  // f16 Y: the f32 result before rounding
    if (f16) {
      TSR_ASSIGN_OR_RETURN(y16, Scratch<float>::make(ctx, static_cast<size_t>(m * g_.n)));
    }
    float* y32 = f16 ? y16.data() : y->mut_data<float>();
    TSR_RETURN_IF_ERROR(nbits_matmul(ctx, w, m, ap.data(), y32, g_.n));
    const Tensor* bias = ctx.input(5);
    if (bias)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < g_.n; ++j) y32[r * g_.n + j] += float_at(*bias, j);
    if (f16)
      for (int64_t i = 0; i < m * g_.n; ++i) y->mut_data<Half>()[i].bits = f32_to_f16(y32[i]);
    return ok_status();
  }

 private:
  ops::NBitsGeometry g_;
  std::vector<float> params_;
};

Expected<std::unique_ptr<exec::Kernel>> create_matmul_nbits(const exec::KernelInit& init) {
  auto geo = ops::nbits_geometry(init.node);
  if (!geo.ok()) return geo.status().with_context(init.place);
  const ops::NBitsGeometry& g = *geo;
  const auto constant = [&](size_t i) { return i < init.constant_inputs.size() ? init.constant_inputs[i] : nullptr; };
  const auto present = [&](size_t i) { return i < init.node.inputs.size() && init.node.inputs[i] >= 0; };
  const Tensor* scales = constant(2);
  const Tensor* zp = constant(3);
  const int64_t nb = g.n * g.k_blocks;
  // Constant parameters (the usual case) are unpacked here, once; inference has checked their
  // shapes against the attributes.
  std::vector<float> params;
  const bool zp_ok = !present(3) || (zp && zp->numel() == (zp->dtype() == DType::kU8 ? g.n * g.zp_row_bytes : nb));
  if (scales && scales->numel() == nb && zp_ok) {
    params.resize(static_cast<size_t>(2 * nb));
    unpack_params(g, *scales, present(3) ? zp : nullptr, params.data(), params.data() + nb);
  }
  return std::unique_ptr<exec::Kernel>(new MatMulNBitsKernel(g, std::move(params)));
}

// output[i, ...] = dequantized data[indices[i], ...] (zeros for an out-of-range index).
template <typename T>
Status gather_bq_typed(exec::KernelContext& ctx, const ops::GatherBQGeometry& g, Tensor* y) {
  const Tensor& data = *ctx.input(0);
  const Tensor& idx = *ctx.input(1);
  const Tensor& scales = *ctx.input(2);
  const Tensor* zp = ctx.input(3);
  const int64_t d0 = data.dim(0), packed = data.dim(data.rank() - 1), per = g.per_byte();
  const int64_t len = packed * per, blocks = (len + g.block - 1) / g.block, zrow = (blocks + per - 1) / per;
  int64_t rows = 1;  // rows of `len` values per index: the middle dims
  for (int64_t d = 1; d + 1 < data.rank(); ++d) rows *= data.dim(d);
  const int64_t mask = (int64_t{1} << g.bits) - 1, slice = rows * len;
  const uint8_t* pd = data.data<uint8_t>();
  const uint8_t* pz = zp ? zp->data<uint8_t>() : nullptr;
  T* out = y->mut_data<T>();
  const auto index = [&](int64_t i) {
    return idx.dtype() == DType::kI32 ? int64_t{idx.data<int32_t>()[i]} : idx.data<int64_t>()[i];
  };
  const auto store = [](float v) {
    if constexpr (std::is_same_v<T, Half>) return Half{f32_to_f16(v)};
    else return v;
  };
  ctx.pool().parallel_for(idx.numel(), std::max<int64_t>(1, 16384 / std::max<int64_t>(1, slice)), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      int64_t v = index(i);
      T* o = out + i * slice;
      if (v < -d0 || v >= d0) {
        std::fill(o, o + slice, store(0.0f));
        continue;
      }
      if (v < 0) v += d0;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t row = v * rows + r;
        const uint8_t* p = pd + row * packed;
        for (int64_t b = 0; b < blocks; ++b) {
          const float s = float_at(scales, row * blocks + b);
          const auto z = pz ? (pz[row * zrow + b / per] >> ((b % per) * g.bits)) & mask : g.default_zero_point();
          for (int64_t j = b * g.block, e = std::min(len, j + g.block); j < e; ++j) {
            const int64_t code = (p[j / per] >> ((j % per) * g.bits)) & mask;
            o[r * len + j] = store(static_cast<float>(code - z) * s);
          }
        }
      }
    }
  });
  return ok_status();
}

Status gather_block_quantized(exec::KernelContext& ctx) {
  auto geo = ops::gather_bq_geometry(ctx.node(), ctx.input(0)->rank());
  if (!geo.ok()) return geo.status().with_context(ctx.place());
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  if (y->dtype() == DType::kF16) return gather_bq_typed<Half>(ctx, *geo, y);
  return gather_bq_typed<float>(ctx, *geo, y);
}

}  // namespace

void register_block_quant_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("com.microsoft::MatMulNBits") r.add("com.microsoft::MatMulNBits", {DType::kF32, DType::kF16}, &create_matmul_nbits);
  TSR_IF_SELECTED("com.microsoft::GatherBlockQuantized")
      r.add_fn("com.microsoft::GatherBlockQuantized", {DType::kU8}, gather_block_quantized);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
