// DType: element types. Numbering follows ONNX TensorProto.DataType so that the importer, the
// .tsr schema and the ONNX conformance data agree without translation tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/base/selective.h"

namespace tsr {

enum class DType : uint8_t {
  kUndefined = 0,
  kF32 = 1,
  kU8 = 2,
  kI8 = 3,
  kU16 = 4,
  kI16 = 5,
  kI32 = 6,
  kI64 = 7,
  kString = 8,
  kBool = 9,
  kF16 = 10,
  kF64 = 11,
  kU32 = 12,
  kU64 = 13,
  kBF16 = 16,
};

// Size in bytes of one element; 0 for kUndefined. kString elements are std::string objects.
size_t dtype_size(DType t);
// Short name used in messages and the CLI: f32, f16, bf16, f64, i8, u8, i16, u16, i32, i64,
// u32, u64, bool, string; "undefined" otherwise.
std::string_view dtype_name(DType t);
// Parses a short name (as above) or an ONNX name ("float", "int64"); kUndefined if unknown.
DType dtype_from_name(std::string_view name);
// True for values 1..16 that name a DType above.
bool dtype_valid(int value);
bool dtype_is_float(DType t);    // f16, bf16, f32, f64
bool dtype_is_integer(DType t);  // signed and unsigned integers (not bool)
bool dtype_is_signed(DType t);   // floats and signed integers

// IEEE binary16 / bfloat16 <-> binary32 conversions (round to nearest even).
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
inline float bf16_to_f32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_bf16(float f);

// Storage types for the 16-bit floats (distinct from uint16_t so that templates can tell them
// apart). Arithmetic goes through float.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// Maps a C++ element type to its DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kF32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kF64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::kF16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBF16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kI8; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kU8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kI16; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kU16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kI32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kI64; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::kU32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kU64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };

constexpr DTypeMask dtype_bit(DType t) { return DTypeMask{1} << static_cast<unsigned>(t); }
constexpr bool dtype_in(DTypeMask mask, DType t) { return (mask & dtype_bit(t)) != 0; }

namespace dtype_detail {
template <DTypeMask kSelected, typename T, typename F>
bool call_if_selected(F& f) {
  if constexpr (dtype_in(kSelected, DTypeOf<T>::value)) {
    f(T{});
    return true;
  } else {
    return false;
  }
}
}  // namespace dtype_detail

// Calls f(T{}) with T the C++ type of `t` for the numeric dtypes and bool (not string,
// not undefined; f16/bf16 map to Half/BFloat16). Returns false if `t` is not one of those.
// kSelected (a selective build's dtypes for one op, core/base/selective.h) narrows the set: a
// dtype outside it returns false as if unknown, and f is not instantiated for it.
template <DTypeMask kSelected = kAllDTypes, typename F>
bool dispatch_dtype(DType t, F&& f) {
  using dtype_detail::call_if_selected;
  switch (t) {
    case DType::kF32: return call_if_selected<kSelected, float>(f);
    case DType::kF64: return call_if_selected<kSelected, double>(f);
    case DType::kF16: return call_if_selected<kSelected, Half>(f);
    case DType::kBF16: return call_if_selected<kSelected, BFloat16>(f);
    case DType::kI8: return call_if_selected<kSelected, int8_t>(f);
    case DType::kU8: return call_if_selected<kSelected, uint8_t>(f);
    case DType::kI16: return call_if_selected<kSelected, int16_t>(f);
    case DType::kU16: return call_if_selected<kSelected, uint16_t>(f);
    case DType::kI32: return call_if_selected<kSelected, int32_t>(f);
    case DType::kI64: return call_if_selected<kSelected, int64_t>(f);
    case DType::kU32: return call_if_selected<kSelected, uint32_t>(f);
    case DType::kU64: return call_if_selected<kSelected, uint64_t>(f);
    case DType::kBool: return call_if_selected<kSelected, bool>(f);
    default: return false;
  }
}

}  // namespace tsr
