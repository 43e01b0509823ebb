#include "tests/fuzz/fuzz_util.h"

#include <string>

namespace tsr::fuzz {

uint64_t hash(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

namespace {

uint64_t splitmix64(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

Expected<Tensor> small_input(const ir::TensorInfo& info, uint64_t* seed) {
  Shape shape = info.shape;
  int64_t n = 1;
  for (int64_t& d : shape) {
    if (d < 0) d = 2;
    if (d > kMaxInputElements || (n *= d) > kMaxInputElements)
      return invalid_argument("input ", info.name, " is too large to feed");
  }
  const DType dtype = info.dtype == DType::kUndefined ? DType::kF32 : info.dtype;
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, shape));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix64(seed);
    const double f = static_cast<double>(r >> 11) / 9007199254740992.0 * 4.0 - 2.0;
    const int64_t k = static_cast<int64_t>(r % 5) - 1;
    switch (dtype) {
      case DType::kString: t.mut_data<std::string>()[i] = std::string(1, static_cast<char>('a' + r % 4)); break;
      case DType::kBool: t.mut_data<bool>()[i] = (r & 1) != 0; break;
      case DType::kF32: t.mut_data<float>()[i] = static_cast<float>(f); break;
      case DType::kF64: t.mut_data<double>()[i] = f; break;
      case DType::kI64: t.mut_data<int64_t>()[i] = k; break;
      case DType::kI32: t.mut_data<int32_t>()[i] = static_cast<int32_t>(k); break;
      case DType::kI16: t.mut_data<int16_t>()[i] = static_cast<int16_t>(k); break;
      case DType::kI8: t.mut_data<int8_t>()[i] = static_cast<int8_t>(k); break;
      case DType::kU8: t.mut_data<uint8_t>()[i] = static_cast<uint8_t>(r % 4); break;
      case DType::kU16: t.mut_data<uint16_t>()[i] = static_cast<uint16_t>(r % 4); break;
      case DType::kU32: t.mut_data<uint32_t>()[i] = static_cast<uint32_t>(r % 4); break;
      case DType::kU64: t.mut_data<uint64_t>()[i] = r % 4; break;
      default: break;  // f16/bf16: zeros are valid values
    }
  }
  return t;
}

}  // namespace tsr::fuzz
