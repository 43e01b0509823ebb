// DType: element types. Numbering follows ONNX TensorProto.DataType so that the importer, the
// .tsr schema and the ONNX conformance data agree without translation tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

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

// Calls f(T{}) with T the C++ type of `t` for the numeric dtypes and bool (not string,
// not undefined; f16/bf16 map to Half/BFloat16). Returns false if `t` is not one of those.
template <typename F>
bool dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kF32: f(float{}); return true;
    case DType::kF64: f(double{}); return true;
    case DType::kF16: f(Half{}); return true;
    case DType::kBF16: f(BFloat16{}); return true;
    case DType::kI8: f(int8_t{}); return true;
    case DType::kU8: f(uint8_t{}); return true;
    case DType::kI16: f(int16_t{}); return true;
    case DType::kU16: f(uint16_t{}); return true;
    case DType::kI32: f(int32_t{}); return true;
    case DType::kI64: f(int64_t{}); return true;
    case DType::kU32: f(uint32_t{}); return true;
    case DType::kU64: f(uint64_t{}); return true;
    case DType::kBool: f(bool{}); return true;
    default: return false;
  }
}

}  // namespace tsr
