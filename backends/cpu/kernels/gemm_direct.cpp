// sgemm_direct (gemm_direct.h). Compiled once per SIMD target (hwy/foreach_target.h);
// sgemm_direct calls the best target this CPU supports.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/gemm_direct.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/gemm_direct.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/unroll.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

// Grown, never shrunk: steady-state calls reuse the same scratch.
float* grow(std::vector<float>& buf, int64_t n) {
  if (buf.size() < static_cast<size_t>(n)) buf.resize(static_cast<size_t>(n));
  return buf.data();
}

#if HWY_TARGET == HWY_SCALAR

void direct_scalar(int64_t m, int64_t n, int64_t k, const float* at, const float* b, int64_t ldb, const float* bias,
                   const float* z, int64_t ldz, float* c, int64_t ldc) {
  for (int64_t i = 0; i < direct_chunks(m); ++i) {
    const int64_t r0 = direct_chunk_row(m, i), rows = direct_chunk_row(m, i + 1) - r0;
    for (int64_t r = 0; r < rows; ++r) {
      float* crow = c + (r0 + r) * ldc;
      const float bv = bias ? bias[r0 + r] : 0.0f;
      for (int64_t j = 0; j < n; ++j) crow[j] = bv + (z ? z[(r0 + r) * ldz + j] : 0.0f);
      for (int64_t p = 0; p < k; ++p) {
        const float av = at[r0 * k + p * rows + r];
        const float* brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
      }
    }
  }
}

#else

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// R rows x V vectors of C: c[r][v*nl ..] = sum_p at[p*R + r] * b[p*ldb + v*nl ..] + bias[r] + c + z,
// with c only where `add` (a later block of K) and bias and z only where given. The sum starts
// from 0 and the rest is added after it, as the packed SGEMM and its epilogue do: summing onto a
// large bias rounds every step at the bias's magnitude (M-LSD's last conv, offsets up to 100).
// `at` is the chunk's A transposed (K x R): each step broadcasts R consecutive floats.
template <size_t R, size_t V>
HWY_NOINLINE void direct_tile(const float* HWY_RESTRICT at, const float* HWY_RESTRICT b, int64_t ldb, int64_t k,
                              bool add, const float* bias, const float* z, int64_t ldz, float* c, int64_t ldc) {
  const DF d;
  const size_t nl = hn::Lanes(d);
  VF acc[R][V];
  unroll<R>([&](auto r) { unroll<V>([&](auto v) { acc[r][v] = hn::Zero(d); }); });
  for (int64_t p = 0; p < k; ++p) {
    VF bv[V];
    unroll<V>([&](auto v) { bv[v] = hn::LoadU(d, b + v * nl); });
    unroll<R>([&](auto r) {
      const VF av = hn::Set(d, at[r]);
      unroll<V>([&](auto v) { acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]); });
    });
    at += R;
    b += ldb;
  }
  unroll<R>([&](auto r) {
    unroll<V>([&](auto v) {
      VF o = acc[r][v];
      if (bias) o = hn::Add(o, hn::Set(d, bias[r]));
      if (add) o = hn::Add(o, hn::LoadU(d, c + r * ldc + v * nl));
      if (z) o = hn::Add(o, hn::LoadU(d, z + r * ldz + v * nl));
      hn::StoreU(o, d, c + r * ldc + v * nl);
    });
  });
}

using TileFn = void (*)(const float*, const float*, int64_t, int64_t, bool, const float*, const float*, int64_t,
                        float*, int64_t);

// K block: each block's sum is rounded on its own before it is added to C, as in the packed
// SGEMM (one chain of 576 multiply-adds rounded 1.4x worse on average than blocks of 256).
constexpr int64_t kKC = 256;

// The strip width: 4 vectors where there are 32 registers (AVX-512: 6 x 4 accumulators + 4 B
// vectors; the broadcasts are memory operands), else 2 (6 x 2 + 2 + 1 of 16). Wide strips with
// few rows keep few lines of one cache set in flight per row: C and B rows are often a
// power-of-two plane apart, and 24 rows x 1 vector ran at half the speed there.
constexpr size_t kWide = HWY_MAX_BYTES >= 64 ? 4 : 2;

template <size_t V, size_t... I>
constexpr std::array<TileFn, sizeof...(I)> make_tiles(std::index_sequence<I...>) {
  return {&direct_tile<I + 1, V>...};
}
// kTiles[v - 1][rows - 1]: rows x v vectors, v = 1 .. kWide (narrower strips take the columns
// left of the last whole strip in one pass).
template <size_t... V>
constexpr std::array<std::array<TileFn, kMaxDirectRows>, sizeof...(V)> make_tile_table(std::index_sequence<V...>) {
  return {make_tiles<V + 1>(std::make_index_sequence<kMaxDirectRows>{})...};
}
constexpr auto kTiles = make_tile_table(std::make_index_sequence<kWide>{});

#endif

}  // namespace

// C = A * B + bias + Z with A packed by sgemm_direct_pack_a (`at`: m x k).
void sgemm_direct_impl(int64_t m, int64_t n, int64_t k, const float* at, const float* b, int64_t ldb,
                       const float* bias, const float* z, int64_t ldz, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // no products: bias and Z only
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = (bias ? bias[i] : 0.0f) + (z ? z[i * ldz + j] : 0.0f);
    return;
  }
#if HWY_TARGET == HWY_SCALAR
  direct_scalar(m, n, k, at, b, ldb, bias, z, ldz, c, ldc);
#else
  const DF d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const int64_t chunks = direct_chunks(m);
  const int64_t sw = static_cast<int64_t>(kWide) * nl;  // strip width
  // Columns [j0, j1) in place, in strips of `width` columns through `tiles`.
  auto run = [&](const TileFn* tiles, int64_t j0, int64_t j1, int64_t width) {
    for (int64_t j = j0; j < j1; j += width)
      for (int64_t p0 = 0; p0 < k; p0 += kKC) {
        const int64_t kc = std::min(kKC, k - p0);
        const bool first = p0 == 0, last = p0 + kc == k;
        for (int64_t i = 0; i < chunks; ++i) {
          const int64_t r0 = direct_chunk_row(m, i), rows = direct_chunk_row(m, i + 1) - r0;
          tiles[rows - 1](at + r0 * k + p0 * rows, b + p0 * ldb + j, ldb, kc, !first,
                          first && bias ? bias + r0 : nullptr, last && z ? z + r0 * ldz + j : nullptr, ldz,
                          c + r0 * ldc + j, ldc);
        }
      }
  };
  const int64_t full = n / sw * sw, whole = n / nl * nl, rest = n - whole;
  run(kTiles[kWide - 1].data(), 0, full, sw);
  if (whole > full) run(kTiles[static_cast<size_t>((whole - full) / nl - 1)].data(), full, whole, whole - full);
  if (rest == 0) return;
  // The last columns (fewer than a vector) on a zero-padded copy of B's; the results land in
  // `out` (rows x tail_w) and are copied into C with Z.
  const int64_t tail_w = nl;
  thread_local std::vector<float> tail_buf;
  float* buf = grow(tail_buf, (k + kMaxDirectRows) * tail_w);
  float* out = buf + k * tail_w;
  for (int64_t p = 0; p < k; ++p) {
    std::memcpy(buf + p * tail_w, b + p * ldb + whole, static_cast<size_t>(rest) * sizeof(float));
    std::fill(buf + p * tail_w + rest, buf + (p + 1) * tail_w, 0.0f);
  }
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t r0 = direct_chunk_row(m, i), rows = direct_chunk_row(m, i + 1) - r0;
    for (int64_t p0 = 0; p0 < k; p0 += kKC)
      kTiles[0][static_cast<size_t>(rows - 1)](at + r0 * k + p0 * rows, buf + p0 * tail_w, tail_w,
                                               std::min(kKC, k - p0), p0 > 0, p0 == 0 && bias ? bias + r0 : nullptr,
                                               nullptr, 0, out, tail_w);
    for (int64_t r = 0; r < rows; ++r) {
      float* crow = c + (r0 + r) * ldc + whole;
      const float* orow = out + r * tail_w;
      if (z) {
        const float* zrow = z + (r0 + r) * ldz + whole;
        for (int64_t q = 0; q < rest; ++q) crow[q] = orow[q] + zrow[q];
      } else {
        std::memcpy(crow, orow, static_cast<size_t>(rest) * sizeof(float));
      }
    }
  }
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

// gemm_direct.cpp is globbed as a kernel "family" by CMake; it registers no ops (nn.cpp's Conv
// calls it).
void register_gemm_direct_kernels(KernelRegistry&) {}

HWY_EXPORT(sgemm_direct_impl);

SgemmDirectA sgemm_direct_pack_a(int64_t m, int64_t k, const float* a, int64_t lda) {
  SgemmDirectA pa;
  pa.m = m;
  pa.k = k;
  pa.data.resize(static_cast<size_t>(std::max<int64_t>(0, m * k)));
  sgemm_direct_pack_a_into(m, k, a, lda, pa.data.data());
  return pa;
}

void sgemm_direct_pack_a_into(int64_t m, int64_t k, const float* a, int64_t lda, float* out) {
  if (m <= 0) return;
  for (int64_t i = 0; i < direct_chunks(m); ++i) {
    const int64_t r0 = direct_chunk_row(m, i), rows = direct_chunk_row(m, i + 1) - r0;
    float* dst = out + r0 * k;
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = a + (r0 + r) * lda;
      for (int64_t p = 0; p < k; ++p) dst[p * rows + r] = src[p];
    }
  }
}

void sgemm_direct(const SgemmDirectA& a, int64_t n, const float* b, int64_t ldb, const float* bias, const float* z,
                  int64_t ldz, float* c, int64_t ldc) {
  HWY_DYNAMIC_DISPATCH(sgemm_direct_impl)(a.m, n, a.k, a.data.data(), b, ldb, bias, z, ldz, c, ldc);
}

void sgemm_direct(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                  const float* bias, const float* z, int64_t ldz, float* c, int64_t ldc) {
  thread_local std::vector<float> packed;
  if (packed.size() < static_cast<size_t>(m * k)) packed.resize(static_cast<size_t>(m * k));
  sgemm_direct_pack_a_into(m, k, a, lda, packed.data());
  HWY_DYNAMIC_DISPATCH(sgemm_direct_impl)(m, n, k, packed.data(), b, ldb, bias, z, ldz, c, ldc);
}

bool sgemm_direct_preferred(int64_t m) { static const bool off = getenv("TSR_NODIRECT"); return !off && m <= kMaxDirectM; }  // TEMP

}  // namespace tsr::cpu
#endif  // HWY_ONCE
