// CPU kernels for linear (de)quantization (semantics: core/ops/families/quantize.cpp):
// QuantizeLinear / DequantizeLinear (f32 <-> u8/i8, per tensor or per axis, on plain f32 loops;
// the general path for the other dtypes) and DynamicQuantizeLinear (dynamic_quantize_u8,
// quantize.h, vectorized in dynamic_quantize.cpp). The quantized matmuls and convs are in qlinear.cpp and qconv.cpp.
#include "backends/cpu/kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

// Index into a per-axis parameter for flat element i of a tensor shaped like `x`.
struct AxisIndexer {
  int64_t inner = 1, len = 1;
  bool per_axis = false;
  int64_t operator()(int64_t i) const { return per_axis ? (i / inner) % len : 0; }
};

Expected<AxisIndexer> indexer(const KernelContext& ctx, const Tensor& x, const Tensor& scale) {
  AxisIndexer ix;
  if (scale.rank() == 0 || (scale.numel() == 1 && x.rank() == 0)) return ix;
  auto axis = normalize_axis(ctx.node().attr_int("axis"), x.rank());
  if (!axis.ok()) return axis.status().with_context(ctx.place());
  ix.per_axis = true;
  ix.len = x.dim(*axis);
  if (scale.numel() != ix.len)
    return ctx.error("input[1] (scale) has ", scale.numel(), " entries, but axis ", *axis, " has length ", ix.len);
  for (int64_t d = *axis + 1; d < x.rank(); ++d) ix.inner *= x.dim(d);
  return ix;
}

double saturate(DType t, double v) {
  const double lo = t == DType::kU8 ? 0 : -128, hi = t == DType::kU8 ? 255 : 127;
  return std::min(hi, std::max(lo, v));
}

// saturate(round_half_even(v) + zp) in f32, as the general path computes it in f64: the rounded
// quotient is an integer, and adding a zero point (|zp| <= 255) in f32 only rounds where the sum
// saturates anyway; NaN saturates to the low end (std::max keeps `lo`) like saturate().
template <typename Q>
inline Q quantize_one(float quot, float zp) {
  constexpr float lo = std::is_same_v<Q, uint8_t> ? 0.0f : -128.0f;
  constexpr float hi = std::is_same_v<Q, uint8_t> ? 255.0f : 127.0f;
  // std::min(hi, std::max(lo, v)) written as the compares vmaxps/vminps implement, so the loops
  // below vectorize (NaN gives lo either way).
  float v = std::nearbyint(quot) + zp;
  v = v > lo ? v : lo;
  v = v < hi ? v : hi;
  return static_cast<Q>(static_cast<int32_t>(v));
}

// One run sharing a parameter; restrict because Q is a char type, which could alias x.
// quantize_one's codes, computed so that the loop vectorizes into few instructions: the quotient
// is clamped first to [lo - zp, hi - zp] (integers, so clamping before rounding gives the same
// codes; NaN gives the low end as before), then rounded half to even by adding and subtracting
// 1.5 * 2^23 (exact for |q| < 2^22, here |q| <= 383), then the zero point added (exact). A CNN's
// input QuantizeLinear (150528 values) took 44 us with the libm-style rounding and clamps after.
template <typename Q>
void quantize_run(const float* __restrict x, int64_t n, float s, float z, Q* __restrict y) {
  constexpr float lo = std::is_same_v<Q, uint8_t> ? 0.0f : -128.0f;
  constexpr float hi = std::is_same_v<Q, uint8_t> ? 255.0f : 127.0f;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  if (!(z >= -256.0f && z <= 256.0f)) {  // a zero point the bounds above do not cover (not a code)
    for (int64_t i = 0; i < n; ++i) y[i] = quantize_one<Q>(x[i] / s, z);
    return;
  }
  const float qlo = lo - z, qhi = hi - z;
  for (int64_t i = 0; i < n; ++i) {
    float q = x[i] / s;
    q = q > qlo ? q : qlo;
    q = q < qhi ? q : qhi;
    const float r = (q + kMagic) - kMagic;
    y[i] = static_cast<Q>(static_cast<int32_t>(r + z));
  }
}

// Elements per task of a per-tensor (De)QuantizeLinear split over the pool (a CNN's input: 150528
// for 224 x 224 RGB, which ran on one thread while the other waited).
constexpr int64_t kQuantizeChunk = int64_t{1} << 15;

// Runs fn(i0, i1) over [0, n) in kQuantizeChunk pieces on `pool` where that is worth it, else inline.
// The chunks are as many as kQuantizeChunk asks, rounded up to a multiple of the threads, of
// equal size (multiples of 64 values): 150528 values at 2 threads make 6 chunks of 25088, where 5
// of 32768 left one thread 3 of them.
template <typename Fn>
void over_chunks(int64_t n, ThreadPool& pool, const Fn& fn) {
  const int64_t threads = pool.num_threads();
  int64_t chunks = (n + kQuantizeChunk - 1) / kQuantizeChunk;
  if (threads < 2 || chunks < 2) return fn(int64_t{0}, n);
  chunks = (chunks + threads - 1) / threads * threads;
  const int64_t size = ((n + chunks - 1) / chunks + 63) / 64 * 64;
  chunks = (n + size - 1) / size;
  pool.parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) { fn(c0 * size, std::min(n, c1 * size)); });
}

// The f32 QuantizeLinear: x / scale[k] in f32 over runs of `inner` elements sharing one parameter
// (per tensor: one run, split over the pool).
template <typename Q>
void quantize_f32_as(const float* x, int64_t n, const float* scale, const Tensor* zp, const AxisIndexer& ix, Q* y,
                     ThreadPool& pool) {
  if (!ix.per_axis) {
    const float z = zp ? static_cast<float>(zp->data<Q>()[0]) : 0.0f;
    return over_chunks(n, pool, [&](int64_t i0, int64_t i1) { quantize_run(x + i0, i1 - i0, scale[0], z, y + i0); });
  }
  const int64_t run = ix.inner;
  for (int64_t i0 = 0, r = 0; i0 < n; i0 += run, ++r) {
    const int64_t k = ix.per_axis ? r % ix.len : 0;
    const float z = zp ? static_cast<float>(zp->data<Q>()[k]) : 0.0f;
    quantize_run(x + i0, std::min(n, i0 + run) - i0, scale[k], z, y + i0);
  }
}

void quantize_f32(const float* x, int64_t n, const float* scale, const Tensor* zp, const AxisIndexer& ix, Tensor* y,
                  ThreadPool& pool) {
  if (y->dtype() == DType::kU8) quantize_f32_as<uint8_t>(x, n, scale, zp, ix, y->mut_data<uint8_t>(), pool);
  else quantize_f32_as<int8_t>(x, n, scale, zp, ix, y->mut_data<int8_t>(), pool);
}

template <typename Q>
void dequantize_run(const Q* __restrict x, int64_t n, float s, int32_t z, float* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - z) * s;
}

// The f32 DequantizeLinear of u8/i8: (x - zp) is exact in f32 and the product rounds once, as the
// general path's f64 product (exact: 9 bits x 24 bits) rounded to f32.
template <typename Q>
void dequantize_f32(const Tensor& x, const float* scale, const Tensor* zp, const AxisIndexer& ix, float* y,
                    ThreadPool& pool) {
  const int64_t n = x.numel();
  const Q* px = x.data<Q>();
  if (!ix.per_axis) {
    const int32_t z = zp ? static_cast<int32_t>(zp->data<Q>()[0]) : 0;
    return over_chunks(n, pool, [&](int64_t i0, int64_t i1) { dequantize_run(px + i0, i1 - i0, scale[0], z, y + i0); });
  }
  const int64_t run = ix.inner;
  for (int64_t i0 = 0, r = 0; i0 < n; i0 += run, ++r) {
    const int64_t k = ix.per_axis ? r % ix.len : 0;
    const float s = scale[k];
    const int32_t z = zp ? static_cast<int32_t>(zp->data<Q>()[k]) : 0;
    dequantize_run(px + i0, std::min(n, i0 + run) - i0, s, z, y + i0);
  }
}

Status quantize_linear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  const Tensor* zp = ctx.input(2);
  TSR_ASSIGN_OR_RETURN(AxisIndexer ix, indexer(ctx, x, scale));
  if (zp && zp->numel() != scale.numel()) return ctx.error("input[2] (zero_point) must have as many entries as input[1] (scale)");
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const DType t = y->dtype();
  if (x.dtype() == DType::kF32 && scale.dtype() == DType::kF32) {
    quantize_f32(x.data<float>(), x.numel(), scale.data<float>(), zp, ix, y, ctx.pool());
    return ok_status();
  }
  // The division rounds in f32 for float x (as the onnx reference's np.divide; i32 x divides in f64):
  // a double quotient can land on the other side of a .5 tie than the f32 one.
  const bool f64 = x.dtype() == DType::kF64 || x.dtype() == DType::kI32;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = ix(i);
    const double quot = f64 ? x.scalar_f64(i) / scale.scalar_f64(k)
                            : static_cast<double>(static_cast<float>(x.scalar_f64(i)) / static_cast<float>(scale.scalar_f64(k)));
    const double q = saturate(t, std::nearbyint(quot) + (zp ? zp->scalar_f64(k) : 0.0));
    if (t == DType::kU8) y->mut_data<uint8_t>()[i] = static_cast<uint8_t>(q);
    else y->mut_data<int8_t>()[i] = static_cast<int8_t>(q);
  }
  return ok_status();
}

Status dequantize_linear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  const Tensor* zp = ctx.input(2);
  TSR_ASSIGN_OR_RETURN(AxisIndexer ix, indexer(ctx, x, scale));
  if (zp && zp->numel() != scale.numel()) return ctx.error("input[2] (zero_point) must have as many entries as input[1] (scale)");
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  if (x.dtype() != DType::kI32 && scale.dtype() == DType::kF32 && y->dtype() == DType::kF32) {
    if (x.dtype() == DType::kU8) dequantize_f32<uint8_t>(x, scale.data<float>(), zp, ix, y->mut_data<float>(), ctx.pool());
    else dequantize_f32<int8_t>(x, scale.data<float>(), zp, ix, y->mut_data<float>(), ctx.pool());
    return ok_status();
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = ix(i);
    const double v = (x.scalar_f64(i) - (zp ? zp->scalar_f64(k) : 0.0)) * scale.scalar_f64(k);
    if (y->dtype() == DType::kF32) y->mut_data<float>()[i] = static_cast<float>(v);
    else if (y->dtype() == DType::kF16) y->mut_data<Half>()[i].bits = f32_to_f16(static_cast<float>(v));
    else y->mut_data<BFloat16>()[i].bits = f32_to_bf16(static_cast<float>(v));
  }
  return ok_status();
}

Status dynamic_quantize_linear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const DynamicQuantParams q = dynamic_quantize_u8(x.data<float>(), x.numel(), y->mut_data<uint8_t>(), &ctx.pool());
  if (ctx.num_outputs() > 1) ctx.set_output(1, Tensor::scalar<float>(q.scale));
  if (ctx.num_outputs() > 2) ctx.set_output(2, Tensor::scalar<uint8_t>(q.zero_point));
  return ok_status();
}

}  // namespace

void register_quantize_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("QuantizeLinear") r.add_fn("QuantizeLinear", {DType::kF32, DType::kF16, DType::kBF16, DType::kI32}, quantize_linear);
  TSR_IF_SELECTED("DequantizeLinear") r.add_fn("DequantizeLinear", {DType::kU8, DType::kI8, DType::kI32}, dequantize_linear);
  TSR_IF_SELECTED("DynamicQuantizeLinear") r.add_fn("DynamicQuantizeLinear", {DType::kF32}, dynamic_quantize_linear);
}

}  // namespace tsr::cpu
