// Strided views for fuse_attention: strided_view.h.
#include "core/passes/strided_view.h"

#include <iterator>
#include <optional>

namespace tsr::passes::opt {

namespace {

// Dynamic dims (a sequence or cache length) stand for distinct primes above every static dim the
// pass accepts (< 2^20), so that sizes and strides stay integers whose equality is the symbolic
// one: a product of primes factors uniquely, and the checks only compare, multiply and divide
// exactly. Each view computation draws fresh primes for its source's dynamic dims; what it
// compares is derived from the same draw.
constexpr int64_t kSymbols[] = {1048583, 1048589, 1048601, 1048609, 1048613, 1048627, 1048633, 1048661,
                                1048681, 1048703, 1048709, 1048717, 1048721, 1048759, 1048783, 1048793};

}  // namespace

// Drops size-1 atoms and merges runs that are contiguous (outer stride = inner extent).
Atoms normalized(const Atoms& in) {
  Atoms out;
  for (const Atom& a : in) {
    if (a.size == 1) continue;
    if (!out.empty() && out.back().stride == a.stride * a.size) {
      out.back() = {out.back().size * a.size, a.stride};
      continue;
    }
    out.push_back(a);
  }
  return out;
}




// `s` with each dynamic dim replaced by a fresh symbol; null for a static dim past the limit or
// more dynamic dims than symbols.
std::optional<Shape> symbolized(const Shape& s) {
  static thread_local size_t next = 0;
  Shape out = s;
  size_t used = 0;
  for (int64_t& d : out) {
    if (d >= kMaxStaticDim) return std::nullopt;
    if (d < 0) {
      if (++used > 4) return std::nullopt;
      d = kSymbols[next++ % std::size(kSymbols)];
    }
  }
  return out;
}

// Null when a stride would overflow (more than two symbols multiplied).
std::optional<View> contiguous(const Shape& s) {
  View v(s.size());
  int64_t stride = 1;
  for (size_t d = s.size(); d-- > 0;) {
    v[d] = {{s[d], stride}};
    if (s[d] <= 0 || stride > (int64_t{1} << 62) / s[d]) return std::nullopt;
    stride *= s[d];
  }
  return v;
}

int64_t numel_of(const View& v) {
  int64_t n = 1;
  for (const Atoms& d : v)
    for (const Atom& a : d) n *= a.size;
  return n;
}

// A Reshape's output shape in the symbols of its input view: static dims as they are, one
// dynamic dim as what the element count leaves for it.
std::optional<Shape> resolved_target(const View& in, const Shape& to) {
  Shape out = to;
  int64_t known = 1, unknown = -1;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] < 0) {
      if (unknown >= 0) return std::nullopt;
      unknown = static_cast<int64_t>(d);
    } else {
      if (out[d] == 0 || out[d] >= kMaxStaticDim) return std::nullopt;
      known *= out[d];
    }
  }
  if (unknown >= 0) {
    const int64_t n = numel_of(in);
    if (n % known != 0) return std::nullopt;
    out[size_t(unknown)] = n / known;
  }
  return out;
}

// The view after Reshape to `to`: the atoms in flat order, split where the new dims need it.
std::optional<View> reshaped(const View& v, const Shape& to) {
  Atoms flat;
  for (const Atoms& d : v)
    for (const Atom& a : normalized(d)) flat.push_back(a);
  for (int64_t n : to)
    if (n <= 0) return std::nullopt;
  View out(to.size());
  size_t k = 0;
  for (size_t d = 0; d < to.size(); ++d) {
    int64_t rem = to[d];
    while (rem > 1) {
      if (k >= flat.size()) return std::nullopt;
      Atom& a = flat[k];
      if (rem % a.size == 0) {
        out[d].push_back(a);
        rem /= a.size;
        ++k;
      } else if (a.size % rem == 0) {
        out[d].push_back({rem, a.stride * (a.size / rem)});
        a.size /= rem;
        rem = 1;
      } else {
        return std::nullopt;
      }
    }
  }
  return k == flat.size() ? std::optional<View>(std::move(out)) : std::nullopt;
}

}  // namespace tsr::passes::opt
