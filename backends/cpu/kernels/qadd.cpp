// com.microsoft::QLinearAdd on the codes (semantics: core/ops/families/quantize.cpp), what
// quantize_fusion makes of a QDQ residual Add (QuantizeLinear(Add(DequantizeLinear(a),
// DequantizeLinear(b)))). Compiled once per SIMD target (hwy/foreach_target.h).
//
// Rounding: onnxruntime's x86 kernel (MLAS's AVX2 QLinearAdd, what onnxruntime-node runs on the
// machines we compare on), in f32:
//   rA = sa / sc, rB = sb / sc, fixed = float(zc) - (rA * float(za) + rB * float(zb))
//   C = saturate(round_half_even(fma(float(A), rA, fma(float(B), rB, fixed))))
// and where one input has a single element (say B), fixed += float(B[0]) * rB (a product and a
// sum, each rounded) and C = saturate(round_half_even(fma(float(A), rA, fixed))). This is not the
// unfused f32 graph's (((A - za) * sa + (B - zb) * sb) / sc): the two land one code apart on about
// one element in 10^5 (a value near a rounding tie); the fused kernel follows onnxruntime's. FMA
// targets (AVX2, AVX-512, NEON) compute the fmas exactly; targets without one (SSE4, wasm
// SIMD128) round the product and the sum separately (Highway's MulAdd), as onnxruntime's own
// SSE2 kernel does (its NEON kernel is fixed-point: onnxruntime is not one formula either).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/qadd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/kernels/requant-inl.h"

#ifndef TSR_CPU_QADD_PARAMS_
#define TSR_CPU_QADD_PARAMS_
namespace tsr::cpu {
// The per-call constants of the formula above.
struct QAddParams {
  float ra = 1.0f, rb = 1.0f;  // sa / sc, sb / sc
  float fixed = 0.0f;          // float(zc) - (ra * za + rb * zb) [+ the single-element input's term]
};
}  // namespace tsr::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// c[i] for i < n: a and b both n long (b null: a single-element B folded into p.fixed).
template <typename Q>
void qadd_row(const Q* a, const Q* b, int64_t n, const QAddParams& p, Q* c) {
  const hn::CappedTag<float, 16> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<Q, decltype(df)> dq;
  const Requant<Q, decltype(df)> out(df, 0);  // fixed holds zc
  const auto ra = hn::Set(df, p.ra), rb = hn::Set(df, p.rb), fixed = hn::Set(df, p.fixed);
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto codes = [&](const Q* pa, const Q* pb) {
    auto t = fixed;
    if (pb) t = hn::MulAdd(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(dq, pb))), rb, t);
    return hn::MulAdd(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(dq, pa))), ra, t);
  };
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) out.store(codes(a + i, b ? b + i : nullptr), c + i);
  if (i < n) {  // the tail through whole vectors in local buffers: the same formula
    Q ta[16] = {}, tb[16] = {}, tc[16];
    const auto rest = static_cast<size_t>(n - i);
    std::memcpy(ta, a + i, rest);
    if (b) std::memcpy(tb, b + i, rest);
    out.store(codes(ta, b ? tb : nullptr), tc);
    std::memcpy(c + i, tc, rest);
  }
}

void qadd_u8_impl(const uint8_t* a, const uint8_t* b, int64_t n, const QAddParams& p, uint8_t* c) {
  qadd_row(a, b, n, p, c);
}
void qadd_s8_impl(const int8_t* a, const int8_t* b, int64_t n, const QAddParams& p, int8_t* c) {
  qadd_row(a, b, n, p, c);
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {
namespace {

HWY_EXPORT(qadd_u8_impl);
HWY_EXPORT(qadd_s8_impl);

using exec::KernelContext;

// A per-tensor parameter: input i as float (1 for an absent scale, 0 for an absent zero point).
Expected<float> qparam(KernelContext& ctx, size_t i, float absent) {
  const Tensor* t = ctx.input(i);
  if (!t) return absent;
  if (t->numel() != 1) return ctx.error("input[", i, "]: ", t->numel(), " elements, expected one (per-tensor)");
  return static_cast<float>(t->scalar_f64(0));
}

// C = QLinearAdd(A, sa, za, B, sb, zb, sc, zc): A and B of one shape, or one of them a single
// element; u8 or s8 throughout (the op's inference checks the dtypes).
Status qlinear_add(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor* b = ctx.input(3);
  if (!b) return ctx.error("input[3] (B) is required");
  TSR_ASSIGN_OR_RETURN(const float sa, qparam(ctx, 1, 1.0f));
  TSR_ASSIGN_OR_RETURN(const float za, qparam(ctx, 2, 0.0f));
  TSR_ASSIGN_OR_RETURN(const float sb, qparam(ctx, 4, 1.0f));
  TSR_ASSIGN_OR_RETURN(const float zb, qparam(ctx, 5, 0.0f));
  TSR_ASSIGN_OR_RETURN(const float sc, qparam(ctx, 6, 1.0f));
  TSR_ASSIGN_OR_RETURN(const float zc, qparam(ctx, 7, 0.0f));
  const bool same = a.shape() == b->shape();
  if (!same && a.numel() != 1 && b->numel() != 1)
    return ctx.error("A ", shape_str(a.shape()), " and B ", shape_str(b->shape()),
                     ": only inputs of one shape or a single-element input are supported");
  TSR_ASSIGN_OR_RETURN(Tensor* c, ctx.alloc_output(0));
  QAddParams p;
  p.ra = sa / sc;
  p.rb = sb / sc;
  const float pa = p.ra * za, pb = p.rb * zb;
  p.fixed = zc - (pa + pb);
  // The long operand is x (with ratio rx); a single-element other one folds into fixed.
  const bool a_single = a.numel() == 1;  // onnxruntime's choice when both are (its LengthA == 1)
  const bool b_single = !a_single && !same;
  const Tensor& x = a_single ? *b : a;
  const Tensor* y = a_single || b_single ? nullptr : b;
  if (a_single || b_single) {
    const Tensor& s = a_single ? a : *b;
    const float term = static_cast<float>(s.scalar_f64(0)) * (a_single ? p.ra : p.rb);
    p.fixed = p.fixed + term;
    if (a_single) std::swap(p.ra, p.rb);
  }
  const int64_t n = x.numel();
  // Pieces of kPiece elements (a multiple of every vector width: the same values as one pass)
  // over the pool for large tensors (a residual add is otherwise a serial step between convs).
  constexpr int64_t kPiece = int64_t{1} << 14;
  const int64_t pieces = (n + kPiece - 1) / kPiece;
  auto body = [&](int64_t q0, int64_t q1) {
    const int64_t i0 = q0 * kPiece, len = std::min(n, q1 * kPiece) - i0;
    if (x.dtype() == DType::kU8)
      HWY_DYNAMIC_DISPATCH(qadd_u8_impl)(x.data<uint8_t>() + i0, y ? y->data<uint8_t>() + i0 : nullptr, len, p,
                                         c->mut_data<uint8_t>() + i0);
    else
      HWY_DYNAMIC_DISPATCH(qadd_s8_impl)(x.data<int8_t>() + i0, y ? y->data<int8_t>() + i0 : nullptr, len, p,
                                         c->mut_data<int8_t>() + i0);
  };
  if (pieces > 1 && ctx.pool().num_threads() > 1) ctx.pool().parallel_for(pieces, 1, body);
  else body(0, pieces);
  return ok_status();
}

}  // namespace

void register_qadd_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("com.microsoft::QLinearAdd") r.add_fn("com.microsoft::QLinearAdd", {DType::kU8, DType::kI8}, qlinear_add);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
