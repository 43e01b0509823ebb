#include "core/tensor/dtype.h"

#include <string>

namespace tsr {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32: case DType::kI32: case DType::kU32: return 4;
    case DType::kF64: case DType::kI64: case DType::kU64: return 8;
    case DType::kF16: case DType::kBF16: case DType::kI16: case DType::kU16: return 2;
    case DType::kI8: case DType::kU8: case DType::kBool: return 1;
    case DType::kString: return sizeof(std::string);
    default: return 0;
  }
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kI16: return "i16";
    case DType::kU16: return "u16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kU32: return "u32";
    case DType::kU64: return "u64";
    case DType::kBool: return "bool";
    case DType::kString: return "string";
    default: return "undefined";
  }
}

DType dtype_from_name(std::string_view n) {
  struct Alias { std::string_view name; DType t; };
  static constexpr Alias kAliases[] = {
      {"f32", DType::kF32},   {"float", DType::kF32},    {"float32", DType::kF32},
      {"f64", DType::kF64},   {"double", DType::kF64},   {"float64", DType::kF64},
      {"f16", DType::kF16},   {"float16", DType::kF16},  {"bf16", DType::kBF16},
      {"bfloat16", DType::kBF16}, {"i8", DType::kI8},    {"int8", DType::kI8},
      {"u8", DType::kU8},     {"uint8", DType::kU8},     {"i16", DType::kI16},
      {"int16", DType::kI16}, {"u16", DType::kU16},      {"uint16", DType::kU16},
      {"i32", DType::kI32},   {"int32", DType::kI32},    {"i64", DType::kI64},
      {"int64", DType::kI64}, {"u32", DType::kU32},      {"uint32", DType::kU32},
      {"u64", DType::kU64},   {"uint64", DType::kU64},   {"bool", DType::kBool},
      {"string", DType::kString},
  };
  for (const auto& a : kAliases)
    if (a.name == n) return a.t;
  return DType::kUndefined;
}

bool dtype_valid(int v) { return (v >= 1 && v <= 13) || v == 16; }

bool dtype_is_float(DType t) {
  return t == DType::kF32 || t == DType::kF64 || t == DType::kF16 || t == DType::kBF16;
}
bool dtype_is_integer(DType t) {
  switch (t) {
    case DType::kI8: case DType::kU8: case DType::kI16: case DType::kU16:
    case DType::kI32: case DType::kI64: case DType::kU32: case DType::kU64: return true;
    default: return false;
  }
}
bool dtype_is_signed(DType t) {
  return dtype_is_float(t) || t == DType::kI8 || t == DType::kI16 || t == DType::kI32 ||
         t == DType::kI64;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN / Inf
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to Inf
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000u) return sign;
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14 + (127 - 15 - e) + ...
    uint32_t half_m = m >> (shift);
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_m & 1u))) ++half_m;
    return sign | static_cast<uint16_t>(half_m);
  }
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return sign | static_cast<uint16_t>(h);
}

uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace tsr
