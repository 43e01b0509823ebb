// Kernel templates shared by the elementwise families: binary (broadcasting) and unary drivers.
//
// An op is a small functor:
//   template <class T> static constexpr bool supports();   // storage dtypes it accepts
//   template <class C> C operator()(C a, C b) const;       // in the compute type (see broadcast.h)
// optionally `static constexpr bool kVecF32 = true;` plus
//   template <class D, class V> V vec(D d, V a, V b) const;  // Highway f32 version
// and optionally a constructor from `const ir::Node&` to read attributes. The drivers dispatch on
// the input dtype once per call (dispatch_dtype) and then run type-specialized loops: no virtual
// calls or std::function per element.
//
// Compiled once per SIMD target: a Highway "-inl" header (per-target include guard toggled by
// hwy/foreach_target.h), included by kernel files after <hwy/highway.h>; everything lives in
// tsr::cpu::HWY_NAMESPACE so each target's instantiations stay apart.
#include <type_traits>

#include "backends/cpu/kernels/broadcast.h"
#include "core/exec/kernel.h"

#if defined(TSR_CPU_ELEMENTWISE_IMPL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_ELEMENTWISE_IMPL_H_
#undef TSR_CPU_ELEMENTWISE_IMPL_H_
#else
#define TSR_CPU_ELEMENTWISE_IMPL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

template <typename Op>
Op make_op(const ir::Node& node) {
  if constexpr (std::is_constructible_v<Op, const ir::Node&>) return Op(node);
  else return Op{};
}

template <typename Op, typename = void>
struct HasVecF32 : std::false_type {};
template <typename Op>
struct HasVecF32<Op, std::void_t<decltype(Op::kVecF32)>> : std::bool_constant<Op::kVecF32> {};

// Output storage type of a binary op on T: T, or bool for predicates (Op::kBoolOut).
template <typename Op, typename = void>
struct BoolOut : std::false_type {};
template <typename Op>
struct BoolOut<Op, std::void_t<decltype(Op::kBoolOut)>> : std::bool_constant<Op::kBoolOut> {};

// One inner run of a binary op. sa/sb are 0 (repeat element 0) or 1 (contiguous). Not inlined:
// binary_apply reaches it from four places (contiguous or broadcast, inline or on the pool), and
// one call per run costs nothing next to the run, while four copies of its eight loops per op
// and dtype made elementwise.cpp the biggest object and the slowest compile of the library.
template <typename Op, typename T, typename TO>
HWY_NOINLINE void binary_run(const Op& op, TO* out, const T* a, int64_t sa, const T* b, int64_t sb, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float> && std::is_same_v<TO, float> && HasVecF32<Op>::value) {
    const hn::ScalableTag<float> d;
    const auto L = static_cast<int64_t>(hn::Lanes(d));
    if (sa && sb) {
      for (; i + L <= n; i += L) hn::StoreU(op.vec(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
    } else if (sb) {
      const auto va = hn::Set(d, a[0]);
      for (; i + L <= n; i += L) hn::StoreU(op.vec(d, va, hn::LoadU(d, b + i)), d, out + i);
    } else if (sa) {
      const auto vb = hn::Set(d, b[0]);
      for (; i + L <= n; i += L) hn::StoreU(op.vec(d, hn::LoadU(d, a + i), vb), d, out + i);
    }
  }
  if (sa && sb) {
    for (; i < n; ++i) out[i] = store_elem<TO>(op(load_elem(a[i]), load_elem(b[i])));
  } else if (sb) {
    const auto ca = load_elem(a[0]);
    for (; i < n; ++i) out[i] = store_elem<TO>(op(ca, load_elem(b[i])));
  } else if (sa) {
    const auto cb = load_elem(b[0]);
    for (; i < n; ++i) out[i] = store_elem<TO>(op(load_elem(a[i]), cb));
  } else {
    const auto v = store_elem<TO>(op(load_elem(a[0]), load_elem(b[0])));
    for (; i < n; ++i) out[i] = v;
  }
}

// out = op(a, b) with broadcasting; `out` already has the broadcast shape and dtype TO. `out`
// may alias `a` when `a` has the output's shape (used to fold variadic ops).
template <typename Op, typename T, typename TO>
Status binary_apply(const Op& op, const Tensor& a, const Tensor& b, Tensor& out, ThreadPool& pool) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  TO* po = out.mut_data<TO>();
  const bool a_full = a.shape() == out.shape(), b_full = b.shape() == out.shape();
  if ((a_full || a.numel() == 1) && (b_full || b.numel() == 1)) {
    // Same shapes or single-value operands: one contiguous run, no broadcast bookkeeping
    // (the common case, and what a small loop body pays per iteration).
    parallel_elements(pool, out.numel(), [&](int64_t s, int64_t e) {
      binary_run(op, po + s, pa + (a_full ? s : 0), a_full ? 1 : 0, pb + (b_full ? s : 0), b_full ? 1 : 0, e - s);
    });
    return ok_status();
  }
  TSR_ASSIGN_OR_RETURN(auto it, BroadcastIter<2>::make(out.shape(), {&a.shape(), &b.shape()}));
  parallel_broadcast(pool, it, [&](int64_t o, const std::array<int64_t, 2>& off,
                                   const std::array<int64_t, 2>& st, int64_t len) {
    binary_run(op, po + o, pa + off[0], st[0], pb + off[1], st[1], len);
  });
  return ok_status();
}

// The error of a kernel whose dtype dispatch has no instantiation for `dt`. In a selective build
// whose op list left `dt` out (kSel, core/base/selective.h) the model needs a dtype this runtime
// was not built for: unsupported, naming the node. Otherwise inference should have rejected it.
template <DTypeMask kSel>
Status dtype_error(const exec::KernelContext& ctx, DType dt) {
  if (kSel != kAllDTypes && !dtype_in(kSel, dt))
    return unsupported(ctx.place(), ": ", ctx.node().op, " on ", dtype_name(dt),
                       " is not in this build's op selection (tessera ops --used)");
  return ctx.error("no cpu kernel for input dtype ", dtype_name(dt));
}

// The kernel for a binary op: both inputs share dtype T (checked by inference), output is T or
// bool. kSel: the dtypes compiled in (a selective build's, core/base/selective.h).
template <typename Op, DTypeMask kSel = kAllDTypes>
Status binary_kernel(exec::KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const Op op = make_op<Op>(ctx.node());
  // The error is formatted only on failure: doing it per call costs as much as a small kernel.
  Status st = ok_status();
  bool dispatched = false;
  dispatch_dtype<kSel>(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Op::template supports<T>()) {
      using TO = std::conditional_t<BoolOut<Op>::value, bool, T>;
      dispatched = true;
      st = binary_apply<Op, T, TO>(op, a, b, *out, ctx.pool());
    }
  });
  if (!dispatched) return dtype_error<kSel>(ctx, a.dtype());
  return st;
}

// One contiguous run of a unary op (not inlined, as binary_run: reached inline and on the pool).
template <typename Op, typename T, typename TO>
HWY_NOINLINE void unary_run(const Op& op, TO* out, const T* x, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float> && std::is_same_v<TO, float> && HasVecF32<Op>::value) {
    const hn::ScalableTag<float> d;
    const auto L = static_cast<int64_t>(hn::Lanes(d));
    for (; i + L <= n; i += L) hn::StoreU(op.vec(d, hn::LoadU(d, x + i)), d, out + i);
  }
  for (; i < n; ++i) out[i] = store_elem<TO>(op(load_elem(x[i])));
}

template <typename Op, typename T, typename TO>
void unary_apply(const Op& op, const Tensor& x, Tensor& out, ThreadPool& pool) {
  const T* px = x.data<T>();
  TO* po = out.mut_data<TO>();
  parallel_elements(pool, x.numel(), [&](int64_t b, int64_t e) { unary_run(op, po + b, px + b, e - b); });
}

template <typename Op, DTypeMask kSel = kAllDTypes>
Status unary_kernel(exec::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  const Op op = make_op<Op>(ctx.node());
  bool dispatched = false;
  dispatch_dtype<kSel>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Op::template supports<T>()) {
      using TO = std::conditional_t<BoolOut<Op>::value, bool, T>;
      unary_apply<Op, T, TO>(op, x, *out, ctx.pool());
      dispatched = true;
    }
  });
  if (!dispatched) return dtype_error<kSel>(ctx, x.dtype());
  return ok_status();
}

// Dtype-support predicates used by the op functors.
struct NumericOnly {
  template <typename T> static constexpr bool supports() { return !std::is_same_v<T, bool>; }
};
struct FloatOnly {
  template <typename T> static constexpr bool supports() { return kIsFloatLike<T>; }
};
struct SignedNumeric {
  template <typename T> static constexpr bool supports() {
    return kIsFloatLike<T> || (kIsInt<T> && std::is_signed_v<T>);
  }
};
struct IntOnly {
  template <typename T> static constexpr bool supports() { return kIsInt<T>; }
};
struct BoolOnly {
  template <typename T> static constexpr bool supports() { return std::is_same_v<T, bool>; }
};

// Two's-complement wrapping arithmetic for integers (signed overflow is UB in C++; ONNX and
// numpy wrap). Small types are promoted so that the unsigned product cannot overflow `int`.
template <typename C>
using WrapUnsigned = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
template <typename C> inline C wrap_add(C a, C b) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(WrapUnsigned<C>(a) + WrapUnsigned<C>(b));
  else return a + b;
}
template <typename C> inline C wrap_sub(C a, C b) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(WrapUnsigned<C>(a) - WrapUnsigned<C>(b));
  else return a - b;
}
template <typename C> inline C wrap_mul(C a, C b) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(WrapUnsigned<C>(a) * WrapUnsigned<C>(b));
  else return a * b;
}

// numpy-style NaN-propagating max/min (np.maximum / np.minimum).
template <typename C> inline C nan_max(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? b : a;
}
template <typename C> inline C nan_min(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return b < a ? b : a;
}
// Vector versions: hardware max/min return one operand for NaN inputs; repair to NaN.
template <class D, class V> inline V vec_nan_max(D, V a, V b) {
  return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, hn::Max(a, b)));
}
template <class D, class V> inline V vec_nan_min(D, V a, V b) {
  return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, hn::Min(a, b)));
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // TSR_CPU_ELEMENTWISE_IMPL_H_
