// CPU kernels: Cast and CastLike between every numeric dtype, f16, bf16 and bool.
//
// Semantics (ONNX leaves out-of-range float->int undefined; we pin numpy's x86-64 behaviour,
// which onnxruntime also shows there, so results are deterministic on every host):
// - float -> int truncates toward zero. NaN and values outside the intermediate range give the
//   "integer indefinite" value (the minimum of the intermediate): targets narrower than 64 bits
//   go through int32 (u32 through int64), then wrap; e.g. 300.0 -> i8 44, -1.0 -> u8 255.
// - int -> int wraps (two's complement); anything -> bool is (x != 0) (NaN -> true).
// - to f16/bf16 rounds to nearest even through f32.
// - number -> string formats as numpy's str() of a scalar of the source dtype (f16 and bf16:
//   the shortest digits that round-trip in 16 bits) (the onnx reference
//   is `x.astype(np.str_)`): shortest round-trip digits, positional for 1e-4 <= |x| < 1e16 with
//   at least one fractional digit ("1.0"), scientific otherwise ("1e-05", "1.5e+20"); "nan",
//   "inf", "-inf"; bool as "True"/"False".
// - string -> number parses plain and scientific notation (C locale strtod/strtof) and,
//   case-insensitively, "INF", "+INF", "-INF", "NaN" (the ONNX Cast spec); the float result then
//   converts as a float source would ("100.5" -> int 100). A string that is not a number is an
//   error.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

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

// v in scientific form "d.ddde[+-]XX" with `precision` digits after the point (correctly
// rounded), or with precision < 0 the fewest digits that read back to v in F. Uses printf
// rather than floating-point std::to_chars, which Emscripten's libc++ lacks.
template <typename F>
std::string sci(F v, int precision) {
  char buf[64];
  if (precision >= 0) {
    std::snprintf(buf, sizeof buf, "%.*e", precision, static_cast<double>(v));
    return buf;
  }
  const int max_p = std::is_same_v<F, float> ? 8 : 16;
  for (int p = 0; p <= max_p; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, static_cast<double>(v));
    const F back = std::is_same_v<F, float> ? static_cast<F>(std::strtof(buf, nullptr)) : static_cast<F>(std::strtod(buf, nullptr));
    if (back == v) break;
  }
  return buf;
}

// Formats a float or double as numpy's str() does (Dragon4 shortest repr). With precision >= 0
// the digits are v's rounded to 1 + precision significant digits instead of the shortest that
// round-trip in F (float_str_16 uses that for f16 / bf16).
template <typename F>
std::string float_str(F v, int precision = -1) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  std::string s = sci(v, precision);
  std::string out;
  if (s[0] == '-') {
    out = "-";
    s.erase(0, 1);
  }
  const size_t e_pos = s.find('e');
  const int exp10 = std::atoi(s.c_str() + e_pos + 1);
  std::string digits;
  for (size_t i = 0; i < e_pos; ++i)
    if (s[i] != '.') digits.push_back(s[i]);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  // numpy compares the magnitude in double precision (float32 1e-4 is below 1e-4: "1e-04").
  const double mag = std::fabs(static_cast<double>(v));
  if (mag >= 1e-4 && mag < 1e16) {
    // Positional: the decimal point sits after digit exp10 (counting from 0).
    if (exp10 < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp10 - 1), '0');
      out += digits;
    } else {
      const auto int_digits = static_cast<size_t>(exp10 + 1);
      if (digits.size() <= int_digits) {
        out += digits;
        out.append(int_digits - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_digits);
        out += '.';
        out += digits.substr(int_digits);
      }
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += exp10 < 0 ? "e-" : "e+";
  const int ae = exp10 < 0 ? -exp10 : exp10;
  if (ae < 10) out += '0';
  out += std::to_string(ae);
  return out;
}

// f16 / bf16 as numpy prints np.float16: the fewest significant digits that read back (through
// f32) to the same 16-bit value.
template <typename H>
std::string float_str_16(H h) {
  const float v = static_cast<float>(load_elem(h));
  if (!std::isfinite(v) || v == 0) return float_str<float>(v);
  for (int p = 0; p < 9; ++p) {
    const float back = std::strtof(sci(v, p).c_str(), nullptr);
    const uint16_t bits = std::is_same_v<H, Half> ? f32_to_f16(back) : f32_to_bf16(back);
    if (bits == h.bits) return float_str<float>(v, p);
  }
  return float_str<float>(v);
}

template <typename S>
std::string to_str(S s) {
  if constexpr (std::is_same_v<S, bool>) return s ? "True" : "False";
  else if constexpr (std::is_same_v<S, double>) return float_str<double>(s);
  else if constexpr (kIsHalfLike<S>) return float_str_16<S>(s);
  else if constexpr (kIsFloatLike<S>) return float_str<float>(s);
  else return std::to_string(s);
}

// Parses `s` fully (surrounding whitespace allowed) as a number; false if it is not one.
template <typename F>
bool parse_float(const std::string& s, F* out) {
  const char* b = s.c_str();
  char* end = nullptr;
  if constexpr (std::is_same_v<F, float>) *out = std::strtof(b, &end);
  else *out = std::strtod(b, &end);
  if (end == b) return false;
  while (*end == ' ' || *end == '\t' || *end == '\n') ++end;
  return *end == '\0';
}

// A selective build without a kernel for this pair of dtypes (core/base/selective.h).
Status not_selected(const exec::KernelContext& ctx, DType from, DType to) {
  return unsupported(ctx.place(), ": Cast from ", dtype_name(from), " to ", dtype_name(to),
                     " is not in this build's op selection (tessera ops --used)");
}

template <DTypeMask kSel>
Status cast_from_string(exec::KernelContext& ctx, const Tensor& in, Tensor& out) {
  const auto* src = in.data<std::string>();
  const int64_t n = in.numel();
  Status st = ok_status();
  const bool handled = dispatch_dtype<kSel>(out.dtype(), [&](auto dtag) {
    using D = decltype(dtag);
    D* dst = out.mut_data<D>();
    for (int64_t i = 0; i < n && st.ok(); ++i) {
      if constexpr (std::is_same_v<D, std::string>) {
        dst[i] = src[i];
      } else if constexpr (std::is_same_v<D, float> || kIsHalfLike<D>) {
        float v = 0;
        if (!parse_float(src[i], &v)) st = ctx.error("element ", i, " (\"", src[i].substr(0, 40), "\") is not a number");
        else dst[i] = cast_elem<D, float>(v);
      } else if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool> && sizeof(D) == 8) {
        // 64-bit integers parse exactly when the string is an integer literal.
        const char* b = src[i].c_str();
        char* end = nullptr;
        errno = 0;
        const D iv = std::is_signed_v<D> ? static_cast<D>(std::strtoll(b, &end, 10))
                                         : static_cast<D>(std::strtoull(b, &end, 10));
        if (end != b && *end == '\0' && errno == 0) {
          dst[i] = iv;
          continue;
        }
        double v = 0;
        if (!parse_float(src[i], &v)) st = ctx.error("element ", i, " (\"", src[i].substr(0, 40), "\") is not a number");
        else dst[i] = cast_elem<D, double>(v);
      } else {
        double v = 0;
        if (!parse_float(src[i], &v)) st = ctx.error("element ", i, " (\"", src[i].substr(0, 40), "\") is not a number");
        else dst[i] = cast_elem<D, double>(v);
      }
    }
  });
  if (!handled) {
    if (kSel != kAllDTypes) return not_selected(ctx, DType::kString, out.dtype());
    return ctx.error("Cast from string to ", dtype_name(out.dtype()), " is not supported");
  }
  return st;
}

// Cast/CastLike's kernel. kSel: the dtypes compiled in (source and target; a selective build's,
// core/base/selective.h).
template <DTypeMask kSel>
Status cast_kernel(exec::KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const DType to = ctx.output_type(0).dtype;
  if (in.dtype() == to) {
    ctx.set_output(0, in);  // same dtype: a view, no copy
    return ok_status();
  }
  TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
  if (in.dtype() == DType::kString) {
    if constexpr (dtype_in(kSel, DType::kString)) return cast_from_string<kSel>(ctx, in, *out);
    else return not_selected(ctx, in.dtype(), to);
  }
  bool done = false;
  dispatch_dtype<kSel>(in.dtype(), [&](auto stag) {
    using S = decltype(stag);
    if constexpr (std::is_same_v<S, std::string>) {
      return;
    } else if (to == DType::kString) {
      if constexpr (dtype_in(kSel, DType::kString)) {
        const S* src = in.data<S>();
        auto* dst = out->mut_data<std::string>();
        for (int64_t i = 0; i < in.numel(); ++i) dst[i] = to_str<S>(src[i]);
        done = true;
      }
    } else {
      dispatch_dtype<kSel>(to, [&](auto dtag) {
        using D = decltype(dtag);
        if constexpr (!std::is_same_v<D, std::string>) {
          cast_loop<D, S>(in, *out, ctx.pool());
          done = true;
        }
      });
    }
  });
  if (!done) {
    if (kSel != kAllDTypes) return not_selected(ctx, in.dtype(), to);
    return ctx.error("Cast from ", dtype_name(in.dtype()), " to ", dtype_name(to), " is not supported");
  }
  return ok_status();
}

}  // namespace

void register_elementwise_cast_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("Cast") r.add_fn("Cast", {}, &cast_kernel<kSel>);
  TSR_IF_SELECTED("CastLike") r.add_fn("CastLike", {}, &cast_kernel<kSel>);
}

}  // namespace tsr::cpu
