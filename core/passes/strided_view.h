// Strided views of a contiguous tensor for fuse_attention (opt_fuse_attention.cpp): which
// source element each element of a Reshape/Transpose chain reads, so that the pass proves a
// layout instead of guessing it. Dynamic dims are carried as distinct large primes (symbols), so
// sizes and strides stay integers whose equality is the symbolic one.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor/tensor.h"

namespace tsr::passes::opt {

// One run of elements of a view: `size` steps of `stride` elements of the source.
struct Atom {
  int64_t size, stride;
  bool operator==(const Atom&) const = default;
};
using Atoms = std::vector<Atom>;
// A strided view of a contiguous source: each dim a list of atoms, outermost first.
using View = std::vector<Atoms>;

// Every static dim the views accept is below this; symbols (dynamic dims) are primes above it.
inline constexpr int64_t kMaxStaticDim = int64_t{1} << 20;
inline bool is_symbolic(int64_t v) { return v >= kMaxStaticDim; }

// Drops size-1 atoms and merges runs that are contiguous (outer stride = inner extent).
Atoms normalized(const Atoms& in);
// `s` with each dynamic dim replaced by a fresh symbol; null for a static dim past the limit or
// more dynamic dims than symbols.
std::optional<Shape> symbolized(const Shape& s);
// The contiguous view of shape `s`; null when a stride would overflow.
std::optional<View> contiguous(const Shape& s);
// Elements of a view.
int64_t numel_of(const View& v);
// A Reshape target with its -1/0 entries resolved against the view; null if it does not fit.
std::optional<Shape> resolved_target(const View& in, const Shape& to);
// The view after a Reshape to `to`; null where the reshape splits an atom unevenly.
std::optional<View> reshaped(const View& v, const Shape& to);

}  // namespace tsr::passes::opt
