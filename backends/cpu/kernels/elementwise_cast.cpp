// CPU kernels: Cast and CastLike between every numeric dtype, f16, bf16 and bool.
//
// Semantics (ONNX leaves out-of-range float->int undefined; we pin numpy's x86-64 behaviour,
// which onnxruntime also shows there, so results are deterministic on every host):
// - float -> int truncates toward zero. NaN and values outside the intermediate range give the
//   "integer indefinite" value (the minimum of the intermediate): targets narrower than 64 bits
//   go through int32 (u32 through int64), then wrap; e.g. 300.0 -> i8 44, -1.0 -> u8 255.
// - int -> int wraps (two's complement); anything -> bool is (x != 0) (NaN -> true).
// - to f16/bf16 rounds to nearest even through f32.
#include <cmath>
#include <limits>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/broadcast.h"
#include "core/exec/kernel.h"

namespace tsr::cpu {

namespace {

// x86 cvtt semantics: truncation, or I's minimum for NaN / out of range.
template <typename I>
I trunc_to(double v) {
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = -lo;  // 2^(bits-1), exclusive
  // (lo - 1, lo) also truncates to lo, which equals the indefinite value.
  if (!(v >= lo && v < hi)) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

template <typename D, typename S>
inline D cast_elem(S s) {
  if constexpr (std::is_same_v<D, S>) {
    return s;
  } else if constexpr (std::is_same_v<D, bool>) {
    return load_elem(s) != 0;
  } else if constexpr (std::is_same_v<S, bool>) {
    return store_elem<D>(static_cast<Compute<D>>(s ? 1 : 0));
  } else if constexpr (kIsFloatLike<D>) {
    if constexpr (std::is_same_v<D, double>) return static_cast<double>(load_elem(s));
    else return store_elem<D>(static_cast<float>(load_elem(s)));
  } else if constexpr (kIsFloatLike<S>) {
    const double v = static_cast<double>(load_elem(s));
    if constexpr (sizeof(D) == 8 && std::is_signed_v<D>) {
      return trunc_to<int64_t>(v);
    } else if constexpr (sizeof(D) == 8) {
      if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return static_cast<uint64_t>(v);
      return static_cast<D>(trunc_to<int64_t>(v));
    } else if constexpr (std::is_same_v<D, uint32_t>) {
      return static_cast<D>(trunc_to<int64_t>(v));
    } else {
      return static_cast<D>(trunc_to<int32_t>(v));
    }
  } else {
    return static_cast<D>(s);  // integer -> integer: modular (C++20)
  }
}

template <typename D, typename S>
void cast_loop(const Tensor& in, Tensor& out, ThreadPool& pool) {
  const S* src = in.data<S>();
  D* dst = out.mut_data<D>();
  parallel_elements(pool, in.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = cast_elem<D, S>(src[i]);
  });
}

Status cast_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const DType to = ctx.output_type(0).dtype;
  if (in.dtype() == to) {
    ctx.set_output(0, in);  // same dtype: a view, no copy
    return ok_status();
  }
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  bool done = false;
  dispatch_dtype(in.dtype(), [&](auto stag) {
    using S = decltype(stag);
    dispatch_dtype(to, [&](auto dtag) {
      using D = decltype(dtag);
      cast_loop<D, S>(in, *out, ctx.pool());
      done = true;
    });
  });
  if (!done) return ctx.error("Cast from ", dtype_name(in.dtype()), " to ", dtype_name(to), " is not supported");
  return ok_status();
}

}  // namespace

void register_elementwise_cast_kernels(KernelRegistry& r) {
  r.add_fn("Cast", {}, &cast_kernel);
  r.add_fn("CastLike", {}, &cast_kernel);
}

}  // namespace tsr::cpu
