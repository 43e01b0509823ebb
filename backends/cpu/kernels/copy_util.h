// Shared helpers for the CPU data-movement kernels (shape, tensor_ops, indexing families).
//
// Data movement never looks at values, so kernels work on elements by byte size: every dtype
// maps to an unsigned integer of its size (u8/u16/u32/u64), except kString, which copies
// std::string objects.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/base/thread_pool.h"
#include "core/exec/kernel.h"
#include "core/tensor/tensor.h"

namespace tsr::cpu::copy {

// Calls f(T{}) with T = uint8_t/uint16_t/uint32_t/uint64_t by dtype_size, or std::string for
// kString. Returns false for kUndefined.
template <typename F>
bool dispatch_elem(DType t, F&& f) {
  if (t == DType::kString) {
    f(std::string{});
    return true;
  }
  switch (dtype_size(t)) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    default: return false;
  }
}

// Copies n elements; memcpy for trivially copyable T.
template <typename T>
inline void copy_n(const T* src, int64_t n, T* dst) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else {
    std::copy(src, src + n, dst);
  }
}

// Drops size-1 dims and merges neighbours that are contiguous in the source, so that later loops
// run over as few, as long rows as possible. dst is always contiguous row-major over `shape`.
void simplify_strided(Shape& shape, Ints& strides);

// dst[i0..ik] = src[offset + sum(i_d * strides[d])] for the row-major index over `shape`.
// Strides are in elements and may be 0 (broadcast) or negative (reversed). Used by Transpose,
// Expand, Tile, Slice, DepthToSpace, SpaceToDepth. Parallel over rows; 2-D tile blocking when
// the source's contiguous axis is not the destination's (transposes).
void strided_copy(const Tensor& src, int64_t offset, Shape shape, Ints strides, Tensor& dst,
                  ThreadPool& pool);

// Fills n elements of `dst` starting at element `at` with one value given as raw bytes (size
// dtype_size); strings are set to `str`.
void fill_elems(Tensor& dst, int64_t at, int64_t n, const void* value_bytes, const std::string& str = {});

// Reads index tensor element i (i32 or i64) as int64.
inline int64_t index_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kI32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

// Normalizes idx against [-dim, dim) or returns an error naming the node, the input and value.
inline Status normalize_index(const exec::KernelContext& ctx, int64_t& idx, int64_t dim, size_t input,
                              const char* input_name, int64_t flat_pos) {
  const int64_t v = idx;
  if (v < -dim || v >= dim)
    return ctx.error("input[", input, "] (", input_name, "): index ", v, " at position ", flat_pos,
                     " is out of range [", -dim, ", ", dim - 1, "]");
  idx = v < 0 ? v + dim : v;
  return ok_status();
}

// Product of dims in [b, e).
inline int64_t prod(const Shape& s, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e && i < s.size(); ++i) n *= s[i];
  return n;
}

}  // namespace tsr::cpu::copy
