// CPU kernels: binary arithmetic, comparison/logic, Where, PRelu, Pow and variadic
// Max/Min/Sum/Mean. Broadcasting through BroadcastIter; f32 Add/Sub/Mul/Div/Max/Min vectorized.
// Compiled once per SIMD target (hwy/foreach_target.h); register_elementwise_kernels registers the
// kernels of the best target this CPU supports (see TSR_SIMD_DISPATCH in CMakeLists.txt).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/elementwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include "backends/cpu/kernels/elementwise_impl.h"
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/cpu_backend.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

struct AddOp : NumericOnly {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C a, C b) const { return wrap_add(a, b); }
  template <class D, class V> V vec(D, V a, V b) const { return hn::Add(a, b); }
};
struct SubOp : NumericOnly {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C a, C b) const { return wrap_sub(a, b); }
  template <class D, class V> V vec(D, V a, V b) const { return hn::Sub(a, b); }
};
struct MulOp : NumericOnly {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C a, C b) const { return wrap_mul(a, b); }
  template <class D, class V> V vec(D, V a, V b) const { return hn::Mul(a, b); }
};
// Integer division truncates toward zero (C, onnxruntime); zero divisors are rejected before the
// loop, and INT_MIN / -1 wraps instead of trapping.
struct DivOp : NumericOnly {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return wrap_sub(C(0), a);
      }
      return b == 0 ? C(0) : static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
  template <class D, class V> V vec(D, V a, V b) const { return hn::Div(a, b); }
};
struct MaxOp : NumericOnly {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C a, C b) const { return nan_max(a, b); }
  template <class D, class V> V vec(D d, V a, V b) const { return vec_nan_max(d, a, b); }
};
struct MinOp : NumericOnly {
  static constexpr bool kVecF32 = true;
  template <class C> C operator()(C a, C b) const { return nan_min(a, b); }
  template <class D, class V> V vec(D d, V a, V b) const { return vec_nan_min(d, a, b); }
};
// ONNX Mod: fmod=0 takes the sign of the divisor (Python %), fmod=1 the sign of the dividend.
struct ModOp : NumericOnly {
  bool fmod = false;
  ModOp() = default;
  explicit ModOp(const ir::Node& n) : fmod(n.attr_int("fmod") != 0) {}
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      C r = std::fmod(a, b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else {
      if (b == 0) return C(0);
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return C(0);
        C r = static_cast<C>(a % b);
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
        return r;
      } else {
        return static_cast<C>(a % b);
      }
    }
  }
};
struct BitShiftOp {
  bool left = true;
  BitShiftOp() = default;
  explicit BitShiftOp(const ir::Node& n) : left(n.attr_string("direction") == "LEFT") {}
  template <typename T> static constexpr bool supports() { return kIsInt<T> && std::is_unsigned_v<T>; }
  template <class C> C operator()(C a, C b) const {
    if (b >= sizeof(C) * 8) return C(0);
    return left ? static_cast<C>(static_cast<WrapUnsigned<C>>(a) << b) : static_cast<C>(a >> b);
  }
};
struct BitAndOp : IntOnly {
  template <class C> C operator()(C a, C b) const { return static_cast<C>(a & b); }
};
struct BitOrOp : IntOnly {
  template <class C> C operator()(C a, C b) const { return static_cast<C>(a | b); }
};
struct BitXorOp : IntOnly {
  template <class C> C operator()(C a, C b) const { return static_cast<C>(a ^ b); }
};
struct PReluOp : NumericOnly {
  template <class C> C operator()(C x, C slope) const {
    if constexpr (std::is_unsigned_v<C>) return x;
    else return x < 0 ? static_cast<C>(slope * x) : x;
  }
};

struct EqualOp {
  static constexpr bool kBoolOut = true;
  template <typename T> static constexpr bool supports() { return true; }
  template <class C> bool operator()(C a, C b) const { return a == b; }
};
struct GreaterOp : NumericOnly {
  static constexpr bool kBoolOut = true;
  template <class C> bool operator()(C a, C b) const { return a > b; }
};
struct LessOp : NumericOnly {
  static constexpr bool kBoolOut = true;
  template <class C> bool operator()(C a, C b) const { return a < b; }
};
struct GreaterEqOp : NumericOnly {
  static constexpr bool kBoolOut = true;
  template <class C> bool operator()(C a, C b) const { return a >= b; }
};
struct LessEqOp : NumericOnly {
  static constexpr bool kBoolOut = true;
  template <class C> bool operator()(C a, C b) const { return a <= b; }
};
struct AndOp : BoolOnly {
  static constexpr bool kBoolOut = true;
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp : BoolOnly {
  static constexpr bool kBoolOut = true;
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp : BoolOnly {
  static constexpr bool kBoolOut = true;
  bool operator()(bool a, bool b) const { return a != b; }
};

// Integer Div/Mod by zero is undefined in ONNX and traps on x86: report it instead.
template <typename Op, DTypeMask kSel>
Status int_division_kernel(exec::KernelContext& ctx) {
  const Tensor& b = *ctx.input(1);
  bool has_zero = false;
  dispatch_dtype<kSel>(b.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsInt<T>) {
      const T* p = b.data<T>();
      for (int64_t i = 0; i < b.numel(); ++i) has_zero |= p[i] == 0;
    }
  });
  if (has_zero) return ctx.error("integer ", ctx.node().op, " by zero (input[1] contains 0)");
  return binary_kernel<Op, kSel>(ctx);
}

// Pow: the exponent may have another dtype. Float bases compute in their compute type; integer
// bases with integer exponents use exact repeated squaring (wrapping), with float exponents
// std::pow in double truncated back (as onnxruntime).
template <typename T, typename E>
void pow_typed(const Tensor& x, const Tensor& y, Tensor& out, ThreadPool& pool, const BroadcastIter<2>& it) {
  const T* px = x.data<T>();
  const E* py = y.data<E>();
  T* po = out.mut_data<T>();
  parallel_broadcast(pool, it, [&](int64_t o, const std::array<int64_t, 2>& off, const std::array<int64_t, 2>& st,
                                   int64_t len) {
    for (int64_t i = 0; i < len; ++i) {
      const auto base = load_elem(px[off[0] + i * st[0]]);
      const auto ex = load_elem(py[off[1] + i * st[1]]);
      if constexpr (kIsFloatLike<T>) {
        using C = Compute<T>;
        po[o + i] = store_elem<T>(std::pow(base, static_cast<C>(ex)));
      } else if constexpr (kIsInt<E>) {
        // Exact integer power; negative exponents give 1/base^n truncated (0 unless |base| = 1).
        T r = 1;
        if constexpr (std::is_signed_v<E>) {
          if (ex < 0) {
            po[o + i] = base == 1 ? T(1) : base == -1 ? ((ex % 2) ? T(-1) : T(1)) : T(0);
            continue;
          }
        }
        T b = base;
        for (uint64_t e = static_cast<uint64_t>(ex); e; e >>= 1) {
          if (e & 1) r = wrap_mul(r, b);
          b = wrap_mul(b, b);
        }
        po[o + i] = r;
      } else {
        const double v = std::pow(static_cast<double>(base), static_cast<double>(ex));
        po[o + i] = std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<T>(static_cast<int64_t>(v)) : T(0);
      }
    }
  });
}

template <DTypeMask kSel>
Status pow_kernel(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& y = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  TSR_ASSIGN_OR_RETURN(auto it, BroadcastIter<2>::make(out->shape(), {&x.shape(), &y.shape()}));
  bool done = false;
  auto with_base = [&](auto btag) {
    using T = decltype(btag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || kIsHalfLike<T> ||
                  std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      dispatch_dtype<kSel>(y.dtype(), [&](auto etag) {
        using E = decltype(etag);
        if constexpr (!std::is_same_v<E, bool>) {
          if constexpr (std::is_same_v<T, float> && std::is_same_v<E, float>) {
            // x^2 is common (variance, L2): use a plain multiply.
            if (y.numel() == 1 && y.data<float>()[0] == 2.0f) {
              done = binary_apply<MulOp, float, float>(MulOp{}, x, x, *out, ctx.pool()).ok();
              return;
            }
          }
          pow_typed<T, E>(x, y, *out, ctx.pool(), it);
          done = true;
        }
      });
    }
  };
  dispatch_dtype<kSel>(x.dtype(), with_base);
  if (!done) {
    if (kSel != kAllDTypes) return dtype_error<kSel>(ctx, dtype_in(kSel, x.dtype()) ? y.dtype() : x.dtype());
    return ctx.error("no cpu kernel for Pow with dtypes ", dtype_name(x.dtype()), ", ", dtype_name(y.dtype()));
  }
  return ok_status();
}

// f32 Where over a run: cond and the output contiguous, x and y each contiguous or a broadcast
// scalar (kXs / kYs: stride 0), as autodiff's masked gradients (Relu's dY where Y > 0) are.
// Highway vectors: the compiler leaves the bool-indexed select scalar.
template <bool kXs, bool kYs>
void where_f32_run(const bool* c, const float* x, const float* y, float* o, int64_t len) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  const auto* c8 = reinterpret_cast<const uint8_t*>(c);
  int64_t i = 0;
  for (; i + L <= len; i += L) {
    const auto m = hn::RebindMask(d, hn::Ne(hn::PromoteTo(du, hn::LoadU(d8, c8 + i)), hn::Zero(du)));
    const auto vx = kXs ? hn::Set(d, x[0]) : hn::LoadU(d, x + i);
    const auto vy = kYs ? hn::Set(d, y[0]) : hn::LoadU(d, y + i);
    hn::StoreU(hn::IfThenElse(m, vx, vy), d, o + i);
  }
  for (; i < len; ++i) o[i] = c[i] ? x[kXs ? 0 : i] : y[kYs ? 0 : i];
}

// Where: three-way broadcast, cond is bool.
template <DTypeMask kSel>
Status where_kernel(exec::KernelContext& ctx) {
  const Tensor& c = *ctx.input(0);
  const Tensor& x = *ctx.input(1);
  const Tensor& y = *ctx.input(2);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  TSR_ASSIGN_OR_RETURN(auto it, BroadcastIter<3>::make(out->shape(), {&c.shape(), &x.shape(), &y.shape()}));
  bool done = false;
  dispatch_dtype<kSel>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* pc = c.data<bool>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = out->mut_data<T>();
    parallel_broadcast(ctx.pool(), it, [&](int64_t o, const std::array<int64_t, 3>& off,
                                           const std::array<int64_t, 3>& st, int64_t len) {
      const bool* cc = pc + off[0];
      const T* xx = px + off[1];
      const T* yy = py + off[2];
      // Compile-time strides for the common runs (all contiguous; one value a broadcast scalar,
      // as in the masked gradients autodiff emits) so that the select vectorizes.
      const auto run = [&](auto s0, auto s1, auto s2) {
        for (int64_t i = 0; i < len; ++i) po[o + i] = cc[i * s0] ? xx[i * s1] : yy[i * s2];
      };
      using One = std::integral_constant<int64_t, 1>;
      using Zero = std::integral_constant<int64_t, 0>;
      if constexpr (std::is_same_v<T, float>) {
        if (st[0] == 1 && (st[1] == 1 || st[1] == 0) && (st[2] == 1 || st[2] == 0)) {
          if (st[1] == 1 && st[2] == 1) where_f32_run<false, false>(cc, xx, yy, po + o, len);
          else if (st[1] == 1) where_f32_run<false, true>(cc, xx, yy, po + o, len);
          else if (st[2] == 1) where_f32_run<true, false>(cc, xx, yy, po + o, len);
          else where_f32_run<true, true>(cc, xx, yy, po + o, len);
          return;
        }
      }
      if (st[0] == 1 && st[1] == 1 && st[2] == 1) run(One{}, One{}, One{});
      else if (st[0] == 1 && st[1] == 0 && st[2] == 1) run(One{}, Zero{}, One{});
      else if (st[0] == 1 && st[1] == 1 && st[2] == 0) run(One{}, One{}, Zero{});
      else run(st[0], st[1], st[2]);
    });
    done = true;
  });
  if (!done) {
    if (kSel != kAllDTypes) return dtype_error<kSel>(ctx, x.dtype());
    return ctx.error("no cpu kernel for Where on ", dtype_name(x.dtype()));
  }
  return ok_status();
}

// Max/Min/Sum/Mean over 1..N inputs: the first pair writes the output, later inputs fold into it
// in place (the output already has the full broadcast shape, so aliasing is element-aligned).
template <typename Op, bool kMean, DTypeMask kSel>
Status variadic_kernel(exec::KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const Tensor& a = *ctx.input(0);
  const size_t n = ctx.num_inputs();
  // Built only on failure: formatting the message on every call costs more than small kernels.
  Status st = ok_status();
  bool dispatched = false;
  dispatch_dtype<kSel>(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Op::template supports<T>()) {
      dispatched = true;
      const Op op{};
      if (n == 1) {
        // Broadcast a single input to the output shape: max(a, a) == a for every value.
        st = binary_apply<MaxOp, T, T>(MaxOp{}, a, a, *out, ctx.pool());
      } else {
        st = binary_apply<Op, T, T>(op, a, *ctx.input(1), *out, ctx.pool());
        for (size_t k = 2; k < n && st.ok(); ++k) st = binary_apply<Op, T, T>(op, *out, *ctx.input(k), *out, ctx.pool());
      }
      if (kMean && st.ok()) {
        T* p = out->mut_data<T>();
        const auto div = static_cast<Compute<T>>(n);
        for (int64_t i = 0; i < out->numel(); ++i) p[i] = store_elem<T>(load_elem(p[i]) / div);
      }
    }
  });
  if (!dispatched) return dtype_error<kSel>(ctx, a.dtype());
  return st;
}

}  // namespace

void register_elementwise_target(KernelRegistry& r) {
  const auto& num = all_numeric_dtypes();
  std::vector<DType> ints = {DType::kI8, DType::kU8, DType::kI16, DType::kU16,
                             DType::kI32, DType::kI64, DType::kU32, DType::kU64};
  std::vector<DType> num_bool = num;
  num_bool.push_back(DType::kBool);
  TSR_IF_SELECTED("Add") r.add_fn("Add", num, &binary_kernel<AddOp, kSel>);
  TSR_IF_SELECTED("Sub") r.add_fn("Sub", num, &binary_kernel<SubOp, kSel>);
  TSR_IF_SELECTED("Mul") r.add_fn("Mul", num, &binary_kernel<MulOp, kSel>);
  TSR_IF_SELECTED("Div") r.add_fn("Div", num, [](exec::KernelContext& ctx) -> Status {
    if (dtype_is_integer(ctx.input(0)->dtype())) return int_division_kernel<DivOp, kSel>(ctx);
    return binary_kernel<DivOp, kSel>(ctx);
  });
  TSR_IF_SELECTED("Mod") r.add_fn("Mod", num, [](exec::KernelContext& ctx) -> Status {
    if (dtype_is_integer(ctx.input(0)->dtype())) return int_division_kernel<ModOp, kSel>(ctx);
    return binary_kernel<ModOp, kSel>(ctx);
  });
  TSR_IF_SELECTED("BitShift") r.add_fn("BitShift", {DType::kU8, DType::kU16, DType::kU32, DType::kU64}, &binary_kernel<BitShiftOp, kSel>);
  TSR_IF_SELECTED("BitwiseAnd") r.add_fn("BitwiseAnd", ints, &binary_kernel<BitAndOp, kSel>);
  TSR_IF_SELECTED("BitwiseOr") r.add_fn("BitwiseOr", ints, &binary_kernel<BitOrOp, kSel>);
  TSR_IF_SELECTED("BitwiseXor") r.add_fn("BitwiseXor", ints, &binary_kernel<BitXorOp, kSel>);
  TSR_IF_SELECTED("PRelu") r.add_fn("PRelu", num, &binary_kernel<PReluOp, kSel>);
  TSR_IF_SELECTED("Equal") r.add_fn("Equal", num_bool, &binary_kernel<EqualOp, kSel>);
  TSR_IF_SELECTED("Greater") r.add_fn("Greater", num, &binary_kernel<GreaterOp, kSel>);
  TSR_IF_SELECTED("Less") r.add_fn("Less", num, &binary_kernel<LessOp, kSel>);
  TSR_IF_SELECTED("GreaterOrEqual") r.add_fn("GreaterOrEqual", num, &binary_kernel<GreaterEqOp, kSel>);
  TSR_IF_SELECTED("LessOrEqual") r.add_fn("LessOrEqual", num, &binary_kernel<LessEqOp, kSel>);
  TSR_IF_SELECTED("And") r.add_fn("And", {DType::kBool}, &binary_kernel<AndOp, kSel>);
  TSR_IF_SELECTED("Or") r.add_fn("Or", {DType::kBool}, &binary_kernel<OrOp, kSel>);
  TSR_IF_SELECTED("Xor") r.add_fn("Xor", {DType::kBool}, &binary_kernel<XorOp, kSel>);
  TSR_IF_SELECTED("Pow") r.add_fn("Pow", {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64}, &pow_kernel<kSel>);
  TSR_IF_SELECTED("Where") r.add_fn("Where", {DType::kBool}, &where_kernel<kSel>);
  TSR_IF_SELECTED("Max") r.add_fn("Max", num, &variadic_kernel<MaxOp, false, kSel>);
  TSR_IF_SELECTED("Min") r.add_fn("Min", num, &variadic_kernel<MinOp, false, kSel>);
  TSR_IF_SELECTED("Sum") r.add_fn("Sum", num, &variadic_kernel<AddOp, false, kSel>);
  TSR_IF_SELECTED("Mean") r.add_fn("Mean", num, &variadic_kernel<AddOp, true, kSel>);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_elementwise_target);

void register_elementwise_kernels(KernelRegistry& r) { HWY_DYNAMIC_DISPATCH(register_elementwise_target)(r); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
