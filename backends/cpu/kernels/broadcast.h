// Shared helpers for N-ary elementwise CPU kernels: a broadcasting iterator, element load/store
// through a compute type, and the threaded driver.
//
// BroadcastIter<N> maps N input shapes onto one output shape with ONNX multidirectional
// (numpy) broadcasting. It collapses the problem first: output dims of size 1 are dropped and
// adjacent dims are merged whenever every input either spans both or broadcasts both, so
// same-shape inputs become one contiguous run, [M,N] + [N] becomes a 2-D walk whose inner run is
// contiguous for both sides, and [M,N] + [M,1] becomes a walk whose inner run reads a scalar
// from the second input. Kernels receive whole inner runs with a per-input stride of 0 (the
// same element repeated) or 1 (contiguous), so their loops specialize on those two cases and
// vectorize; there is no per-element index arithmetic.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

#include "core/base/function_ref.h"
#include "core/base/status.h"
#include "core/base/thread_pool.h"
#include "core/tensor/dtype.h"
#include "core/tensor/broadcast.h"
#include "core/tensor/tensor.h"

namespace tsr::cpu {

// Elements per parallel_for chunk: below this, threading costs more than it saves.
inline constexpr int64_t kElementwiseGrain = 1 << 16;

// The type arithmetic happens in: float for the 16-bit floats, the storage type otherwise.
template <typename T>
struct ComputeOf { using type = T; };
template <> struct ComputeOf<Half> { using type = float; };
template <> struct ComputeOf<BFloat16> { using type = float; };
template <typename T>
using Compute = typename ComputeOf<T>::type;

template <typename T>
inline constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsFloatLike = std::is_floating_point_v<T> || kIsHalfLike<T>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
inline Compute<T> load_elem(T v) {
  if constexpr (std::is_same_v<T, Half>) return f16_to_f32(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>) return bf16_to_f32(v.bits);
  else return v;
}

template <typename T, typename C>
inline T store_elem(C v) {
  if constexpr (std::is_same_v<T, Half>) return Half{f32_to_f16(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16{f32_to_bf16(static_cast<float>(v))};
  else return static_cast<T>(v);
}

template <size_t N>
class BroadcastIter {
 public:
  static constexpr int kMaxRank = 16;

  // A callback for each inner run: (out_offset, in_offsets, in_strides, len).
  using RunFn = FunctionRef<void(int64_t, const std::array<int64_t, N>&, const std::array<int64_t, N>&, int64_t)>;

  // `out` must be the broadcast of `ins` (the OpDef's inference guarantees it; a mismatch is
  // reported as an internal error rather than trusted). Not inlined: once per call, and kernels
  // instantiated per op and dtype would otherwise each carry a copy.
  [[gnu::noinline]] static Expected<BroadcastIter> make(const Shape& out, const std::array<const Shape*, N>& ins) {
    BroadcastIter it;
    const size_t r = out.size();
    // spans[k][d]: input k has the full extent of output dim d (else it broadcasts it).
    std::array<std::array<bool, 64>, N> spans{};
    if (r > 64) return unsupported("broadcast of rank ", r, " (limit 64)");
    for (size_t k = 0; k < N; ++k) {
      const Shape& s = *ins[k];
      if (s.size() > r) return internal_error("broadcast: input rank ", s.size(), " > output rank ", r);
      const size_t off = r - s.size();
      for (size_t d = 0; d < r; ++d) {
        const int64_t id = d < off ? 1 : s[d - off];
        if (id == out[d]) spans[k][d] = true;
        else if (id == 1) spans[k][d] = false;
        else return internal_error("broadcast: input shape ", shape_str(s), " does not broadcast to ", shape_str(out));
      }
    }
    it.numel_ = shape_numel(out);
    it.rank_ = 0;
    std::array<bool, N> prev{};
    for (size_t d = 0; d < r; ++d) {
      if (out[d] == 1) continue;
      bool same = it.rank_ > 0;
      for (size_t k = 0; k < N && same; ++k) same = spans[k][d] == prev[k];
      if (same) {
        it.dims_[it.rank_ - 1] *= out[d];
        continue;
      }
      if (it.rank_ == kMaxRank) return unsupported("broadcast pattern too irregular (more than ", kMaxRank, " dims)");
      it.dims_[it.rank_] = out[d];
      for (size_t k = 0; k < N; ++k) {
        prev[k] = spans[k][d];
        it.span_[k][it.rank_] = spans[k][d];
      }
      ++it.rank_;
    }
    if (it.rank_ == 0) {  // every dim is 1: one element
      it.rank_ = 1;
      it.dims_[0] = 1;
      for (size_t k = 0; k < N; ++k) it.span_[k][0] = true;
    }
    // Input k as a collapsed shape (1 where it broadcasts), read with the broadcast rule.
    for (size_t k = 0; k < N; ++k) {
      Shape collapsed(static_cast<size_t>(it.rank_));
      for (int d = 0; d < it.rank_; ++d) collapsed[d] = it.span_[k][d] ? it.dims_[d] : 1;
      const Shape st = broadcast_strides(collapsed, collapsed.size());
      for (int d = 0; d < it.rank_; ++d) it.strides_[k][d] = st[d];
    }
    return it;
  }

  int64_t numel() const { return numel_; }
  // True when every input has the output's shape (up to size-1 dims): one contiguous run.
  bool all_same() const {
    if (rank_ != 1) return false;
    for (size_t k = 0; k < N; ++k)
      if (!span_[k][0]) return false;
    return true;
  }

  // Calls f(out_offset, in_offsets, in_strides, len) for each maximal inner run of output
  // elements [begin, end); in_strides[k] is 0 or 1.
  template <typename F>
  void for_each_run(int64_t begin, int64_t end, F&& f) const {
    // An empty range (an empty output's whole range) walks nothing; below, a 0-sized dim would
    // be a divisor.
    if (begin >= end) return;
    std::array<int64_t, kMaxRank> idx{};
    int64_t rem = begin;
    for (int d = rank_ - 1; d >= 0; --d) {
      idx[d] = rem % dims_[d];
      rem /= dims_[d];
    }
    const int last = rank_ - 1;
    std::array<int64_t, N> inner{};
    for (size_t k = 0; k < N; ++k) inner[k] = strides_[k][last];
    int64_t pos = begin;
    while (pos < end) {
      std::array<int64_t, N> off{};
      for (size_t k = 0; k < N; ++k) {
        int64_t o = 0;
        for (int d = 0; d < rank_; ++d) o += idx[d] * strides_[k][d];
        off[k] = o;
      }
      const int64_t len = std::min(dims_[last] - idx[last], end - pos);
      f(pos, off, inner, len);
      pos += len;
      idx[last] += len;
      for (int d = last; d > 0 && idx[d] == dims_[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  }

  // for_each_run with the callback behind a FunctionRef: one out-of-line copy per N for the
  // elementwise kernels' many (op, dtype) instantiations (parallel_broadcast).
  [[gnu::noinline]] void for_each_run_ref(int64_t begin, int64_t end, RunFn f) const { for_each_run(begin, end, f); }

 private:
  int rank_ = 0;
  int64_t numel_ = 0;
  std::array<int64_t, kMaxRank> dims_{};
  std::array<std::array<bool, kMaxRank>, N> span_{};
  std::array<std::array<int64_t, kMaxRank>, N> strides_{};
};

// Runs f(begin, end) over [0, n), split across the pool when n is large. Both paths call f
// through one FunctionRef, so f's body is compiled once (not inline here and again for the pool):
// an indirect call per chunk is nothing next to a chunk, and elementwise kernels instantiate this
// for every op and dtype.
template <typename F>
void parallel_elements(ThreadPool& pool, int64_t n, F&& f) {
  const FunctionRef<void(int64_t, int64_t)> fn(f);
  if (n <= kElementwiseGrain || pool.num_threads() <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  pool.parallel_for(n, kElementwiseGrain, fn);
}

// Drives a broadcast walk over the pool: f(out_offset, in_offsets, in_strides, len) per run. The
// walk is compiled once per N (for_each_run_ref) and calls f through a FunctionRef, once per run.
template <size_t N, typename F>
void parallel_broadcast(ThreadPool& pool, const BroadcastIter<N>& it, F&& f) {
  const typename BroadcastIter<N>::RunFn run(f);
  parallel_elements(pool, it.numel(), [&](int64_t b, int64_t e) { it.for_each_run_ref(b, e, run); });
}

}  // namespace tsr::cpu
