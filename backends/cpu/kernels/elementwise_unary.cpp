// CPU kernels: unary math, activations, Clip and ClipGrad, Gelu and GeluGrad. f32 Relu/LeakyRelu/Sigmoid/
// HardSigmoid/HardSwish/Tanh/Exp/Clip, tanh-approximate Gelu/GeluGrad (and Abs/Neg/Sqrt) run on
// Highway vectors (exact Gelu with a polynomial erf, gelu-inl.h); other dtypes/ops use scalar loops.
// Compiled once per SIMD target (hwy/foreach_target.h); register_elementwise_unary_kernels registers the
// kernels of the best target this CPU supports (see TSR_SIMD_DISPATCH in CMakeLists.txt).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/elementwise_unary.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
#include "backends/cpu/kernels/elementwise_impl.h"
#include "backends/cpu/kernels/gelu-inl.h"

#include <cmath>
#include <limits>
#include <numbers>

#include "backends/cpu/cpu_backend.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
// Highway's polynomial exp/tanh only pay off with real vectors; on the 1-lane HWY_SCALAR target
// (a build without SIMD flags) libm is faster.
constexpr bool kVecTranscendental = HWY_TARGET != HWY_SCALAR;

// hn::Exp returns 0 for NaN and is only accurate below ln(FLT_MAX); repair both ends so the
// vector path agrees with std::exp.
template <class D, class V>
V vec_exp(D d, V x) {
  V y = hn::Exp(d, x);
  y = hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.7228390f)), hn::Set(d, kInfF), y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

template <class C>
C cnan() { return std::numeric_limits<C>::quiet_NaN(); }

struct AbsOp : NumericOnly {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) return x;
    else if constexpr (std::is_integral_v<C>) return x < 0 ? wrap_sub(C(0), x) : x;
    else return std::fabs(x);
  }
  template <class D, class V> V vec(D, V x) const { return hn::Abs(x); }
};
struct NegOp : SignedNumeric {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C x) const { return wrap_sub(C(0), x); }
  template <class D, class V> V vec(D, V x) const { return hn::Neg(x); }
};
struct SignOp : NumericOnly {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x != x) return x;
    }
    return x > C(0) ? C(1) : (x < C(0) ? static_cast<C>(-1) : C(0));
  }
};
struct ReciprocalOp : FloatOnly {
  template <class C> C operator()(C x) const { return C(1) / x; }
};
struct SqrtOp : FloatOnly {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C x) const { return std::sqrt(x); }
  template <class D, class V> V vec(D, V x) const { return hn::Sqrt(x); }
};
struct ExpOp : FloatOnly {
  static constexpr bool kVecF32 = kVecTranscendental;
  template <class C> C operator()(C x) const { return std::exp(x); }
  template <class D, class V> V vec(D d, V x) const { return vec_exp(d, x); }
};

#define TSR_FLOAT_UNARY(Name, expr)                                  \
  struct Name : FloatOnly {                                          \
    template <class C> C operator()(C x) const { return expr; }      \
  };
TSR_FLOAT_UNARY(LogOp, std::log(x))
TSR_FLOAT_UNARY(CeilOp, std::ceil(x))
TSR_FLOAT_UNARY(FloorOp, std::floor(x))
TSR_FLOAT_UNARY(RoundOp, std::nearbyint(x))  // default FE_TONEAREST: halves to even
TSR_FLOAT_UNARY(ErfOp, std::erf(x))
TSR_FLOAT_UNARY(SinOp, std::sin(x))
TSR_FLOAT_UNARY(CosOp, std::cos(x))
TSR_FLOAT_UNARY(TanOp, std::tan(x))
TSR_FLOAT_UNARY(AsinOp, std::asin(x))
TSR_FLOAT_UNARY(AcosOp, std::acos(x))
TSR_FLOAT_UNARY(AtanOp, std::atan(x))
TSR_FLOAT_UNARY(SinhOp, std::sinh(x))
TSR_FLOAT_UNARY(CoshOp, std::cosh(x))
TSR_FLOAT_UNARY(AsinhOp, std::asinh(x))
TSR_FLOAT_UNARY(AcoshOp, std::acosh(x))
TSR_FLOAT_UNARY(AtanhOp, std::atanh(x))
TSR_FLOAT_UNARY(SoftsignOp, x / (C(1) + std::fabs(x)))
// ln(1 + e^x) without overflow for large x.
TSR_FLOAT_UNARY(SoftplusOp, x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
TSR_FLOAT_UNARY(MishOp, x * std::tanh(x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x))))
#undef TSR_FLOAT_UNARY

struct IsNaNOp : FloatOnly {
  static constexpr bool kBoolOut = true;
  template <class C> bool operator()(C x) const { return x != x; }
};
struct IsInfOp : FloatOnly {
  static constexpr bool kBoolOut = true;
  bool neg, pos;
  explicit IsInfOp(const ir::Node& n)
      : neg(n.attr_int("detect_negative") != 0), pos(n.attr_int("detect_positive") != 0) {}
  template <class C> bool operator()(C x) const {
    return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg));
  }
};
struct BitNotOp : IntOnly {
  template <class C> C operator()(C x) const { return static_cast<C>(~x); }
};
struct NotOp : BoolOnly {
  bool operator()(bool x) const { return !x; }
};

struct ReluOp : SignedNumeric {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C x) const { return x < C(0) ? C(0) : x; }  // NaN passes through
  template <class D, class V> V vec(D d, V x) const {
    const V z = hn::Zero(d);
    return hn::IfThenElse(hn::Lt(x, z), z, x);
  }
};
struct LeakyReluOp : FloatOnly {
  static constexpr bool kVecF32 = true;
  double alpha;
  explicit LeakyReluOp(const ir::Node& n) : alpha(n.attr_float("alpha")) {}
  template <class C> C operator()(C x) const { return x < C(0) ? static_cast<C>(alpha) * x : x; }
  template <class D, class V> V vec(D d, V x) const {
    return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(x, hn::Set(d, static_cast<float>(alpha))), x);
  }
};
struct SigmoidOp : FloatOnly {
  static constexpr bool kVecF32 = kVecTranscendental;
  template <class C> C operator()(C x) const {
    // Evaluate through e^-|x| so that neither branch overflows.
    const C e = std::exp(-std::fabs(x));
    return x >= C(0) ? C(1) / (C(1) + e) : e / (C(1) + e);
  }
  template <class D, class V> V vec(D d, V x) const {
    const V one = hn::Set(d, 1.0f);
    const V e = vec_exp(d, hn::Neg(hn::Abs(x)));
    const V r = hn::Div(one, hn::Add(one, e));
    return hn::IfThenElse(hn::Ge(x, hn::Zero(d)), r, hn::Mul(e, r));
  }
};
struct TanhOp : FloatOnly {
  static constexpr bool kVecF32 = kVecTranscendental;
  template <class C> C operator()(C x) const { return std::tanh(x); }
  template <class D, class V> V vec(D d, V x) const { return hn::IfThenElse(hn::IsNaN(x), x, hn::Tanh(d, x)); }
};
struct HardSigmoidOp : FloatOnly {
  static constexpr bool kVecF32 = true;
  double alpha, beta;
  explicit HardSigmoidOp(const ir::Node& n) : alpha(n.attr_float("alpha")), beta(n.attr_float("beta")) {}
  template <class C> C operator()(C x) const {
    const C v = static_cast<C>(alpha) * x + static_cast<C>(beta);
    return v != v ? v : (v < C(0) ? C(0) : (v > C(1) ? C(1) : v));
  }
  template <class D, class V> V vec(D d, V x) const {
    const V v = hn::MulAdd(hn::Set(d, static_cast<float>(alpha)), x, hn::Set(d, static_cast<float>(beta)));
    const V c = hn::Min(hn::Max(v, hn::Zero(d)), hn::Set(d, 1.0f));
    return hn::IfThenElse(hn::IsNaN(v), v, c);
  }
};
struct HardSwishOp : FloatOnly {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C x) const {
    const C v = x / C(6) + C(0.5);
    return v != v ? v : x * (v < C(0) ? C(0) : (v > C(1) ? C(1) : v));
  }
  template <class D, class V> V vec(D d, V x) const {
    const V v = hn::MulAdd(x, hn::Set(d, 1.0f / 6.0f), hn::Set(d, 0.5f));
    const V c = hn::Min(hn::Max(v, hn::Zero(d)), hn::Set(d, 1.0f));
    return hn::IfThenElse(hn::IsNaN(v), v, hn::Mul(x, c));
  }
};
struct EluOp : FloatOnly {
  double alpha;
  explicit EluOp(const ir::Node& n) : alpha(n.attr_float("alpha")) {}
  template <class C> C operator()(C x) const { return x < C(0) ? static_cast<C>(alpha) * std::expm1(x) : x; }
};
struct SeluOp : FloatOnly {
  // Defaults from the ONNX spec (the SELU paper's constants rounded to float).
  double alpha, gamma;
  explicit SeluOp(const ir::Node& n)
      : alpha(n.attr_float("alpha")), gamma(n.attr_float("gamma")) {}
  template <class C> C operator()(C x) const {
    return static_cast<C>(gamma) * (x <= C(0) ? static_cast<C>(alpha) * std::expm1(x) : x);
  }
};
struct CeluOp : FloatOnly {
  double alpha;
  explicit CeluOp(const ir::Node& n) : alpha(n.attr_float("alpha")) {}
  template <class C> C operator()(C x) const {
    const C a = static_cast<C>(alpha);
    return x > C(0) ? x : a * std::expm1(x / a);
  }
};
struct ThresholdedReluOp : FloatOnly {
  double alpha;
  explicit ThresholdedReluOp(const ir::Node& n) : alpha(n.attr_float("alpha")) {}
  template <class C> C operator()(C x) const { return x > static_cast<C>(alpha) ? x : C(0); }
};
// Shrink (ONNX opset 9): x < -lambd ? x + bias : x > lambd ? x - bias : 0. Integer inputs
// compute in double and convert back (the onnx reference's float result cast to the input type).
struct ShrinkOp : NumericOnly {
  double lambd, bias;
  explicit ShrinkOp(const ir::Node& n) : lambd(n.attr_float("lambd")), bias(n.attr_float("bias")) {}
  template <class C> C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      const C l = static_cast<C>(lambd), b = static_cast<C>(bias);
      return x < -l ? x + b : (x > l ? x - b : C(0));
    } else {
      const auto v = static_cast<double>(x);
      return static_cast<C>(v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0));
    }
  }
};

template <DTypeMask kSel>
Status gelu_kernel(exec::KernelContext& ctx) {
  if (ctx.node().attr_string("approximate") == "tanh") return unary_kernel<GeluTanhOp, kSel>(ctx);
  return unary_kernel<GeluErfOp, kSel>(ctx);
}

// GeluGrad(dY, X) (binary, same shapes): dY * Gelu'(X). Exact: Phi(x) + x phi(x).
struct GeluGradErfOp : FloatOnly {
  template <class C> C operator()(C dy, C x) const {
    const C cdf = C(0.5) * (C(1) + std::erf(x * static_cast<C>(std::numbers::sqrt2 / 2)));
    const C pdf = std::exp(C(-0.5) * x * x) * static_cast<C>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    return dy * (cdf + x * pdf);
  }
};
// Tanh form: 0.5 (1 + t) + 0.5 x (1 - t^2) u'(x), t = tanh(u), u' = kGeluK (1 + 3 kGeluC x^2).
struct GeluGradTanhOp : FloatOnly {
  static constexpr bool kVecF32 = kVecTranscendental;
  template <class C> C operator()(C dy, C x) const {
    const C t = std::tanh(gelu_u(x));
    const C du = static_cast<C>(kGeluK) * (C(1) + static_cast<C>(3 * kGeluC) * x * x);
    return dy * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * du);
  }
  template <class D, class V> V vec(D d, V dy, V x) const {
    const V half = hn::Set(d, 0.5f), one = hn::Set(d, 1.0f);
    const V t = hn::Tanh(d, vec_gelu_u(d, x));
    const V du = hn::Mul(hn::Set(d, static_cast<float>(kGeluK)),
                         hn::MulAdd(hn::Set(d, static_cast<float>(3 * kGeluC)), hn::Mul(x, x), one));
    const V left = hn::Mul(half, hn::Add(one, t));
    const V right = hn::Mul(hn::Mul(half, x), hn::Mul(hn::NegMulAdd(t, t, one), du));
    const V r = hn::Mul(dy, hn::Add(left, right));
    return hn::IfThenElse(hn::IsNaN(x), x, r);
  }
};
template <DTypeMask kSel>
Status gelu_grad_kernel(exec::KernelContext& ctx) {
  if (ctx.node().attr_string("approximate") == "tanh") return binary_kernel<GeluGradTanhOp, kSel>(ctx);
  return binary_kernel<GeluGradErfOp, kSel>(ctx);
}

// Clip with optional scalar min/max inputs (absent: the dtype's range). NaN in X stays NaN.
template <typename T>
struct ClipOp {
  using C = Compute<T>;
  static constexpr bool kVecF32 = true;
  C lo, hi;
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x != x) return x;
    }
    return x < lo ? lo : (x > hi ? hi : x);
  }
  template <class D, class V> V vec(D d, V x) const {
    const V c = hn::Min(hn::Max(x, hn::Set(d, lo)), hn::Set(d, hi));
    return hn::IfThenElse(hn::IsNaN(x), x, c);
  }
};

template <DTypeMask kSel>
Status clip_kernel(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  // Built only on failure: formatting the message on every call costs more than small kernels.
  Status st = ok_status();
  bool dispatched = false;
  dispatch_dtype<kSel>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      dispatched = true;
      using C = Compute<T>;
      ClipOp<T> op{std::numeric_limits<C>::lowest(), std::numeric_limits<C>::max()};
      if constexpr (std::is_floating_point_v<C>) {
        op.lo = -std::numeric_limits<C>::infinity();
        op.hi = std::numeric_limits<C>::infinity();
      }
      for (size_t i = 1; i < 3; ++i) {
        const Tensor* b = ctx.input(i);
        if (!b) continue;
        if (b->numel() != 1) {
          st = ctx.error("input[", i, "] must be a scalar, got shape ", shape_str(b->shape()));
          return;
        }
        (i == 1 ? op.lo : op.hi) = load_elem(b->data<T>()[0]);
      }
      unary_apply<ClipOp<T>, T, T>(op, x, *out, ctx.pool());
      st = ok_status();
    }
  });
  if (!dispatched) return dtype_error<kSel>(ctx, x.dtype());
  return st;
}

// ClipGrad(dY, X, min, max): dY where min <= X <= max (or X is NaN), else 0.
template <typename T>
struct ClipGradOp {
  using C = Compute<T>;
  static constexpr bool kVecF32 = true;
  C lo, hi;
  C operator()(C dy, C x) const { return x < lo || x > hi ? C(0) : dy; }
  template <class D, class V> V vec(D d, V dy, V x) const {
    return hn::IfThenZeroElse(hn::Or(hn::Lt(x, hn::Set(d, lo)), hn::Gt(x, hn::Set(d, hi))), dy);
  }
};

template <DTypeMask kSel>
Status clip_grad_kernel(exec::KernelContext& ctx) {
  const Tensor& dy = *ctx.input(0);
  const Tensor& x = *ctx.input(1);
  if (dy.shape() != x.shape()) return ctx.error("dY ", shape_str(dy.shape()), " and X ", shape_str(x.shape()), " differ");
  for (size_t i = 2; i < 4; ++i)
    if (ctx.input(i)->numel() != 1)
      return ctx.error("input[", i, "] must be a scalar, got shape ", shape_str(ctx.input(i)->shape()));
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  Status st = ok_status();
  bool dispatched = false;
  dispatch_dtype<kSel>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (FloatOnly::supports<T>()) {
      dispatched = true;
      const ClipGradOp<T> op{load_elem(ctx.input(2)->data<T>()[0]), load_elem(ctx.input(3)->data<T>()[0])};
      st = binary_apply<ClipGradOp<T>, T, T>(op, dy, x, *out, ctx.pool());
    }
  });
  if (!dispatched) return dtype_error<kSel>(ctx, x.dtype());
  return st;
}

}  // namespace

void register_elementwise_unary_target(KernelRegistry& r) {
  const auto& num = all_numeric_dtypes();
  const std::vector<DType> flt = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
  const std::vector<DType> sgn = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                  DType::kI8,  DType::kI16, DType::kI32, DType::kI64};
  const std::vector<DType> ints = {DType::kI8, DType::kU8, DType::kI16, DType::kU16,
                                   DType::kI32, DType::kI64, DType::kU32, DType::kU64};
  TSR_IF_SELECTED("Abs") r.add_fn("Abs", num, &unary_kernel<AbsOp, kSel>);
  TSR_IF_SELECTED("Neg") r.add_fn("Neg", sgn, &unary_kernel<NegOp, kSel>);
  TSR_IF_SELECTED("Sign") r.add_fn("Sign", num, &unary_kernel<SignOp, kSel>);
  TSR_IF_SELECTED("Reciprocal") r.add_fn("Reciprocal", flt, &unary_kernel<ReciprocalOp, kSel>);
  TSR_IF_SELECTED("Sqrt") r.add_fn("Sqrt", flt, &unary_kernel<SqrtOp, kSel>);
  TSR_IF_SELECTED("Exp") r.add_fn("Exp", flt, &unary_kernel<ExpOp, kSel>);
  TSR_IF_SELECTED("Log") r.add_fn("Log", flt, &unary_kernel<LogOp, kSel>);
  TSR_IF_SELECTED("Ceil") r.add_fn("Ceil", flt, &unary_kernel<CeilOp, kSel>);
  TSR_IF_SELECTED("Floor") r.add_fn("Floor", flt, &unary_kernel<FloorOp, kSel>);
  TSR_IF_SELECTED("Round") r.add_fn("Round", flt, &unary_kernel<RoundOp, kSel>);
  TSR_IF_SELECTED("Erf") r.add_fn("Erf", flt, &unary_kernel<ErfOp, kSel>);
  TSR_IF_SELECTED("Sin") r.add_fn("Sin", flt, &unary_kernel<SinOp, kSel>);
  TSR_IF_SELECTED("Cos") r.add_fn("Cos", flt, &unary_kernel<CosOp, kSel>);
  TSR_IF_SELECTED("Tan") r.add_fn("Tan", flt, &unary_kernel<TanOp, kSel>);
  TSR_IF_SELECTED("Asin") r.add_fn("Asin", flt, &unary_kernel<AsinOp, kSel>);
  TSR_IF_SELECTED("Acos") r.add_fn("Acos", flt, &unary_kernel<AcosOp, kSel>);
  TSR_IF_SELECTED("Atan") r.add_fn("Atan", flt, &unary_kernel<AtanOp, kSel>);
  TSR_IF_SELECTED("Sinh") r.add_fn("Sinh", flt, &unary_kernel<SinhOp, kSel>);
  TSR_IF_SELECTED("Cosh") r.add_fn("Cosh", flt, &unary_kernel<CoshOp, kSel>);
  TSR_IF_SELECTED("Asinh") r.add_fn("Asinh", flt, &unary_kernel<AsinhOp, kSel>);
  TSR_IF_SELECTED("Acosh") r.add_fn("Acosh", flt, &unary_kernel<AcoshOp, kSel>);
  TSR_IF_SELECTED("Atanh") r.add_fn("Atanh", flt, &unary_kernel<AtanhOp, kSel>);
  TSR_IF_SELECTED("IsNaN") r.add_fn("IsNaN", flt, &unary_kernel<IsNaNOp, kSel>);
  TSR_IF_SELECTED("IsInf") r.add_fn("IsInf", flt, &unary_kernel<IsInfOp, kSel>);
  TSR_IF_SELECTED("BitwiseNot") r.add_fn("BitwiseNot", ints, &unary_kernel<BitNotOp, kSel>);
  TSR_IF_SELECTED("Not") r.add_fn("Not", {DType::kBool}, &unary_kernel<NotOp, kSel>);
  TSR_IF_SELECTED("Relu") r.add_fn("Relu", sgn, &unary_kernel<ReluOp, kSel>);
  TSR_IF_SELECTED("LeakyRelu") r.add_fn("LeakyRelu", flt, &unary_kernel<LeakyReluOp, kSel>);
  TSR_IF_SELECTED("Sigmoid") r.add_fn("Sigmoid", flt, &unary_kernel<SigmoidOp, kSel>);
  TSR_IF_SELECTED("HardSigmoid") r.add_fn("HardSigmoid", flt, &unary_kernel<HardSigmoidOp, kSel>);
  TSR_IF_SELECTED("HardSwish") r.add_fn("HardSwish", flt, &unary_kernel<HardSwishOp, kSel>);
  TSR_IF_SELECTED("Tanh") r.add_fn("Tanh", flt, &unary_kernel<TanhOp, kSel>);
  TSR_IF_SELECTED("Elu") r.add_fn("Elu", flt, &unary_kernel<EluOp, kSel>);
  TSR_IF_SELECTED("Selu") r.add_fn("Selu", flt, &unary_kernel<SeluOp, kSel>);
  TSR_IF_SELECTED("Celu") r.add_fn("Celu", flt, &unary_kernel<CeluOp, kSel>);
  TSR_IF_SELECTED("Softplus") r.add_fn("Softplus", flt, &unary_kernel<SoftplusOp, kSel>);
  TSR_IF_SELECTED("Softsign") r.add_fn("Softsign", flt, &unary_kernel<SoftsignOp, kSel>);
  TSR_IF_SELECTED("ThresholdedRelu") r.add_fn("ThresholdedRelu", flt, &unary_kernel<ThresholdedReluOp, kSel>);
  TSR_IF_SELECTED("Mish") r.add_fn("Mish", flt, &unary_kernel<MishOp, kSel>);
  TSR_IF_SELECTED("Shrink") r.add_fn("Shrink", num, &unary_kernel<ShrinkOp, kSel>);
  TSR_IF_SELECTED("Clip") r.add_fn("Clip", num, &clip_kernel<kSel>);
  TSR_IF_SELECTED("Gelu") r.add_fn("Gelu", flt, &gelu_kernel<kSel>);
  TSR_IF_SELECTED("GeluGrad") r.add_fn("GeluGrad", flt, &gelu_grad_kernel<kSel>);
  TSR_IF_SELECTED("ClipGrad") r.add_fn("ClipGrad", flt, &clip_grad_kernel<kSel>);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_elementwise_unary_target);

void register_elementwise_unary_kernels(KernelRegistry& r) { HWY_DYNAMIC_DISPATCH(register_elementwise_unary_target)(r); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
