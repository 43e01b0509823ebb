// CPU kernels of the com.microsoft Gelu family (semantics: core/ops/families/transformer_act.cpp):
// Gelu, BiasGelu, FastGelu, QuickGelu, on the elementwise drivers (elementwise_impl.h): every
// float dtype, the bias broadcast along the last axis by the binary driver (contiguous runs of
// `hidden`), f32 on Highway vectors (the erf forms with gelu-inl.h's polynomial erf, as ONNX Gelu).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/transformer_act.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
#include "backends/cpu/kernels/elementwise_impl.h"
#include "backends/cpu/kernels/gelu-inl.h"

#include <cmath>

#include "backends/cpu/cpu_backend.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

// Op(a + b): a bias added before a unary op, as a binary op of the broadcasting driver.
template <class Op>
struct Biased : FloatOnly {
  static constexpr bool kVecF32 = HasVecF32<Op>::value;
  Op op;
  template <class C> C operator()(C a, C b) const { return op(a + b); }
  template <class D, class V> V vec(D d, V a, V b) const { return op.vec(d, hn::Add(a, b)); }
};

// QuickGelu: x sigmoid(alpha x). The sigmoid from e = exp(-|alpha x|) <= 1, which never
// overflows: sigmoid = 1 / (1 + e) for alpha x >= 0, e / (1 + e) below.
struct QuickGeluOp : FloatOnly {
  static constexpr bool kVecF32 = HWY_TARGET != HWY_SCALAR;
  float alpha;
  explicit QuickGeluOp(const ir::Node& n) : alpha(static_cast<float>(n.attr_float("alpha"))) {}
  template <class C> C operator()(C x) const {
    const C z = static_cast<C>(alpha) * x;
    const C e = std::exp(-std::fabs(z));
    return x * (z >= C(0) ? C(1) : e) / (C(1) + e);
  }
  template <class D, class V> V vec(D d, V x) const {
    const V z = hn::Mul(hn::Set(d, alpha), x);
    const V e = hn::Exp(d, hn::Neg(hn::Abs(z)));
    const V one = hn::Set(d, 1.0f);
    const V num = hn::IfThenElse(hn::Ge(z, hn::Zero(d)), one, e);
    return hn::Div(hn::Mul(x, num), hn::Add(one, e));
  }
};

template <DTypeMask kSel>
Status fast_gelu_kernel(exec::KernelContext& ctx) {
  if (ctx.input(1) != nullptr) return binary_kernel<Biased<GeluTanhOp>, kSel>(ctx);
  return unary_kernel<GeluTanhOp, kSel>(ctx);
}

}  // namespace

void register_transformer_act_target(KernelRegistry& r) {
  const std::vector<DType> flt = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
  TSR_IF_SELECTED("com.microsoft::Gelu") r.add_fn("com.microsoft::Gelu", flt, &unary_kernel<GeluErfOp, kSel>);
  TSR_IF_SELECTED("com.microsoft::BiasGelu") r.add_fn("com.microsoft::BiasGelu", flt, &binary_kernel<Biased<GeluErfOp>, kSel>);
  TSR_IF_SELECTED("com.microsoft::FastGelu") r.add_fn("com.microsoft::FastGelu", flt, &fast_gelu_kernel<kSel>);
  TSR_IF_SELECTED("com.microsoft::QuickGelu") r.add_fn("com.microsoft::QuickGelu", flt, &unary_kernel<QuickGeluOp, kSel>);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_transformer_act_target);

void register_transformer_act_kernels(KernelRegistry& r) { HWY_DYNAMIC_DISPATCH(register_transformer_act_target)(r); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
