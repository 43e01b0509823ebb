// qgemm (qgemm.h): compiled once per SIMD target (hwy/foreach_target.h); qgemm_pack_b and qgemm
// call the best target this CPU supports (HWY_DYNAMIC_DISPATCH). Blocking after Goto & van de
// Geijn, "Anatomy of high-performance matrix multiplication" (TOMS 2008) / BLIS, as sgemm
// (gemm.cpp): B is packed once per weight into panels of kNR columns (qgemm_kernels-inl.h gives
// the layout and the micro-kernels), A per call into panels of up to kMR rows (with its row sums);
// a task is a block of A panels x a chunk of B panels, each tile computed over all of K in
// registers (K < 2^15: an i32 tile never spills to memory between K blocks) and written at once
// through the zero-point correction and the output stage.
//
// Zero points, with A as u8 (s8 A shifted by +128, its zero point too) and B as s8 (u8 B shifted
// by -128 when packed):
//   sum_k (a - za)(b - zb) = sum ab - zb * rowsum_a - za * colsum_b + K * za * zb
// The column terms (and bias_i32) form one i32 per column computed per call; the row term is
// skipped when every zb is 0 (symmetric weights). The sdot path sums (a - 128) * b and adds
// 128 * colsum_b to the column term. Intermediate i32 sums wrap (unsigned arithmetic) and the
// result is exact whenever it fits in i32, which qgemm.h guarantees.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/qgemm.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/qgemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernels/epilogue.h"
#include "backends/cpu/kernels/qgemm_kernels-inl.h"
#include "backends/cpu/kernels/requant-inl.h"
#include "backends/cpu/kernels/transpose_bytes-inl.h"

#if HWY_ARCH_ARM_A64 && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#endif

#ifndef TSR_QGEMM_CPP_ONCE_
#define TSR_QGEMM_CPP_ONCE_
#if defined(__GNUC__) && !defined(__clang__)
#define TSR_QGEMM_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define TSR_QGEMM_NO_CONTRACT
#endif
namespace tsr::cpu::qgemm_detail {
// qgemm_disable_dot_for_test: the VNNI / sdot paths off, the widening fallbacks on.
inline std::atomic<bool> g_no_dot{false};

inline int32_t load_q(const void* p, bool is_signed, int64_t i) {
  return is_signed ? static_cast<const int8_t*>(p)[i] : static_cast<const uint8_t*>(p)[i];
}
}  // namespace tsr::cpu::qgemm_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace {

using namespace qk;  // NOLINT: the micro-kernels of this target
using tb::transpose_bytes_impl;
using qgemm_detail::kAS8;
using qgemm_detail::kAU16;
using qgemm_detail::kAU8;
namespace hn = hwy::HWY_NAMESPACE;

// The packed-B layout this target reads (recorded in QgemmPackedB::target). All paths of one
// target read the same layout, so the runtime VNNI / dotprod choice never repacks.
constexpr int64_t kLayout = HWY_TARGET;
// Tiles per path: all row counts 1..kMR, so that small M (decode steps) computes no padding rows.
// They are small (0.3-0.9 KB each); the size-first kernel set (minimal runtimes) keeps them: one
// kMR-row tile with zero-padded A panels measured larger, not smaller (the driver dominates).
template <template <int> class K, int MR>
constexpr auto make_tiles() {
  return tile_table<K>(std::make_integer_sequence<int, MR>{});
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr auto kVnniTiles = make_tiles<VnniTile, kVnniMR>();
constexpr auto kVnniGatherTiles = gather_tile_table<VnniGatherTile>(std::make_integer_sequence<int, kVnniMR>{});
constexpr auto kVnniGatherQuantTiles =
    gather_quant_tile_table<VnniGatherQuantTile>(std::make_integer_sequence<int, kVnniMR>{});
constexpr auto kMaddTiles = make_tiles<Madd512Tile, kMaddMR>();
constexpr int64_t kMaxMR = kVnniMR;
bool has_vnni() {
#if HWY_TARGET == HWY_AVX3_DL
  return true;
#else
  // __builtin_cpu_init: the check may run before the libgcc constructor that fills the CPU model
  // (a static initializer that loads a model).
  static const bool v = (__builtin_cpu_init(), __builtin_cpu_supports("avx512vnni"));
  return v;
#endif
}
Path select_path() {
  if (!qgemm_detail::g_no_dot.load(std::memory_order_relaxed) && has_vnni())
    return {kAU8, kVnniMR, false, "AVX512-VNNI", kVnniTiles.data(), kVnniGatherTiles.data(),
            kVnniGatherQuantTiles.data()};
  return {kAU16, kMaddMR, false, "AVX512", kMaddTiles.data()};
}
#elif HWY_TARGET == HWY_AVX2
constexpr auto kMaddTiles = make_tiles<Madd256Tile, kMaddMR>();
constexpr int64_t kMaxMR = kMaddMR;
Path select_path() { return {kAU16, kMaddMR, false, "AVX2", kMaddTiles.data()}; }
#elif HWY_TARGET == HWY_NEON && HWY_ARCH_ARM_A64
constexpr auto kDotTiles = make_tiles<DotTile, kDotMR>();
constexpr auto kMlalTiles = make_tiles<MlalTile, kMlalMR>();
constexpr int64_t kMaxMR = kDotMR;
bool has_dotprod() {
#if defined(__ARM_FEATURE_DOTPROD)
  return true;
#elif defined(__linux__)
  static const bool v = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return v;
#else
  return false;
#endif
}
Path select_path() {
  if (!qgemm_detail::g_no_dot.load(std::memory_order_relaxed) && has_dotprod())
    return {kAS8, kDotMR, true, "NEON-dot", kDotTiles.data()};
  return {kAU16, kMlalMR, false, "NEON", kMlalTiles.data()};
}
#elif HWY_TARGET == HWY_WASM
constexpr auto kWasmTiles = make_tiles<WasmTile, kDotMR>();
constexpr int64_t kMaxMR = kDotMR;
Path select_path() { return {kAU16, kDotMR, false, "WASM", kWasmTiles.data()}; }
#else
constexpr auto kScalarTiles = make_tiles<ScalarTile, kScalarMR>();
constexpr int64_t kMaxMR = kScalarMR;
Path select_path() { return {kAU8, kScalarMR, false, "scalar", kScalarTiles.data()}; }
#endif

// Work below this many multiply-adds runs on the calling thread (a few microseconds at the
// int8 rates: waking a pool thread costs more).
constexpr int64_t kMinParallelMacs = int64_t{1} << 20;
// B bytes per task chunk: the chunk's panels stay in L2 while the A panels of a block pass.
constexpr int64_t kChunkBytes = int64_t{1} << 18;
// Rows of A per task block: the packed block (rows x K bytes) stays in L2 beside the B chunk.
constexpr int64_t kBlockRows = 96;

// Writes B's panels (this target's layout, qgemm_kernels-inl.h) from the row-major `plain` copy.
void pack_panels(const QgemmPackedB& b, int8_t* dst) {
  const int64_t k = b.k, n = b.n, kq = (k + 3) / 4, np = (n + kNR - 1) / kNR;
  std::fill(dst, dst + np * kq * kNR * 4, int8_t{0});
  for (int64_t kk = 0; kk < k; ++kk) {
    const int8_t* row = b.plain.data() + kk * n;
    const int64_t q = kk / 4, t = kk % 4;
    for (int64_t j = 0; j < n; ++j) dst[((j / kNR * kq + q) * kNR + j % kNR) * 4 + t] = row[j];
  }
}

// qgemm_pack_b_rows: B's panels straight from a row-major source (T u8 or s8), a k-quad (4 rows)
// at a time: each column's 4 values form one u32 lane (the panel layout, qgemm_kernels-inl.h), by
// two byte/word interleaves per 16 columns where the quad and the panel are whole; column sums on
// the way (a separate loop over the rows, which the compiler vectorizes), unless col_sum is null.
template <typename T>
void pack_rows_typed(const T* b, int64_t k, int64_t n, int64_t ldb, int8_t* dst, int32_t* col_sum) {
  constexpr int32_t kShift = std::is_signed_v<T> ? 0 : 128;
  const int64_t kq = (k + 3) / 4;
  if (col_sum) std::fill(col_sum, col_sum + n, 0);
  for (int64_t q = 0; q < kq; ++q) {
    const T* rows[4];
    for (int t = 0; t < 4; ++t) rows[t] = 4 * q + t < k ? b + (4 * q + t) * ldb : nullptr;
    const bool whole = rows[3] != nullptr;
    for (int t = 0; t < 4 && rows[t] && col_sum; ++t) {
      const T* __restrict r = rows[t];
      int32_t* __restrict cs = col_sum;
      for (int64_t j = 0; j < n; ++j) cs[j] += static_cast<int32_t>(r[j]) - kShift;
    }
    for (int64_t j0 = 0; j0 < n; j0 += kNR) {
      int8_t* panel = dst + ((j0 / kNR) * kq + q) * kNR * 4;
      const int64_t cols = std::min(kNR, n - j0);
      int64_t c = 0;
#if HWY_TARGET != HWY_SCALAR
      if (whole) {
        const hn::Full128<uint8_t> d8;
        const hn::Full128<uint16_t> d16;
        const auto flip = hn::Set(d8, static_cast<uint8_t>(kShift));  // u8 v - 128 as s8 bits: v ^ 0x80
        for (; c + 16 <= cols; c += 16) {
          const auto v0 = hn::Xor(hn::LoadU(d8, reinterpret_cast<const uint8_t*>(rows[0] + j0 + c)), flip);
          const auto v1 = hn::Xor(hn::LoadU(d8, reinterpret_cast<const uint8_t*>(rows[1] + j0 + c)), flip);
          const auto v2 = hn::Xor(hn::LoadU(d8, reinterpret_cast<const uint8_t*>(rows[2] + j0 + c)), flip);
          const auto v3 = hn::Xor(hn::LoadU(d8, reinterpret_cast<const uint8_t*>(rows[3] + j0 + c)), flip);
          const auto lo01 = hn::BitCast(d16, hn::InterleaveLower(d8, v0, v1));
          const auto hi01 = hn::BitCast(d16, hn::InterleaveUpper(d8, v0, v1));
          const auto lo23 = hn::BitCast(d16, hn::InterleaveLower(d8, v2, v3));
          const auto hi23 = hn::BitCast(d16, hn::InterleaveUpper(d8, v2, v3));
          auto* out = reinterpret_cast<uint8_t*>(panel + c * 4);
          hn::StoreU(hn::BitCast(d8, hn::InterleaveLower(d16, lo01, lo23)), d8, out);
          hn::StoreU(hn::BitCast(d8, hn::InterleaveUpper(d16, lo01, lo23)), d8, out + 16);
          hn::StoreU(hn::BitCast(d8, hn::InterleaveLower(d16, hi01, hi23)), d8, out + 32);
          hn::StoreU(hn::BitCast(d8, hn::InterleaveUpper(d16, hi01, hi23)), d8, out + 48);
        }
      }
#endif
      for (; c < cols; ++c)
        for (int t = 0; t < 4; ++t)
          panel[c * 4 + t] = static_cast<int8_t>(rows[t] ? static_cast<int32_t>(rows[t][j0 + c]) - kShift : 0);
      for (; c < kNR; ++c)
        for (int t = 0; t < 4; ++t) panel[c * 4 + t] = 0;
    }
  }
}

void qgemm_pack_b_rows_impl(int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb, int32_t b_zp,
                            QgemmPackedB* p, bool col_sums, ThreadPool* pool) {
  const int64_t kq = (k + 3) / 4, np = (n + kNR - 1) / kNR;
  p->k = k;
  p->n = n;
  p->plain.clear();
  p->data.resize(static_cast<size_t>(np * kq * kNR * 4));
  p->col_sum.resize(static_cast<size_t>(col_sums ? n : 0));
  p->zp.assign(static_cast<size_t>(n), b_zp - (b_signed ? 0 : 128));
  // Panels [p0, p1): columns [p0 * kNR, p1 * kNR) land in a contiguous run of the panels.
  auto pack = [&](int64_t p0, int64_t p1) {
    const int64_t j0 = p0 * kNR, cols = std::min(n, p1 * kNR) - j0;
    int8_t* dst = p->data.data() + p0 * kq * kNR * 4;
    int32_t* cs = col_sums ? p->col_sum.data() + j0 : nullptr;
    if (b_signed) pack_rows_typed(static_cast<const int8_t*>(b) + j0, k, cols, ldb, dst, cs);
    else pack_rows_typed(static_cast<const uint8_t*>(b) + j0, k, cols, ldb, dst, cs);
  };
  if (pool && pool->num_threads() > 1 && np > 1 && k * n >= (int64_t{1} << 16)) pool->parallel_for(np, 1, pack);
  else pack(0, np);
  p->target = kLayout;
}

void qgemm_pack_panels_impl(QgemmPackedB& b) {
  const int64_t kq = (b.k + 3) / 4, np = (b.n + kNR - 1) / kNR;
  b.data.assign(static_cast<size_t>(np * kq * kNR * 4), 0);
  pack_panels(b, b.data.data());
  b.target = kLayout;
}

// Packs rows [i0, i0 + rows) of A into one panel of `prows` rows (zero rows past `rows`) and,
// unless `rowsum` is null (every B zero point 0: the sums are not used), their u8 row sums. A
// quad (4 bytes of one row) moves as one u32; K's
// last partial quad is zero padded (B's padding is zero too, so its A values do not matter).
// Where A's rows are: plain (row i at a + i * lda), or gathered (qgemm_gather: row i is `nseg`
// runs of `seg` bytes, run s at a + off[i * nseg + s], or at `pad` where that offset is negative).
struct ARows {
  const uint8_t* a = nullptr;
  int64_t lda = 0;
  const int32_t* off = nullptr;  // null: plain
  int64_t seg = 0, nseg = 1;     // plain: one run of lda bytes
  const uint8_t* pad = nullptr;  // gathered: the run of negative offsets
  const uint8_t* run(int64_t i, int64_t s) const {
    if (!off) return a + i * lda;
    const int32_t o = off[i * nseg + s];
    return o < 0 ? pad : a + o;
  }
  // Byte kk of row i.
  const uint8_t* at(int64_t i, int64_t kk) const { return off ? run(i, kk / seg) + kk % seg : a + i * lda + kk; }
};

HWY_NOINLINE void pack_a_panel(const Path& path, const ARows& src_rows, bool a_signed, int64_t k, int64_t i0,
                               int64_t rows, int64_t prows, uint8_t* dst, int32_t* rowsum) {
  const int64_t kq = (k + 3) / 4, kfull = k / 4;
  const bool wide = path.a_enc == kAU16;
  if (prows > rows || kfull < kq) std::fill(dst, dst + kq * prows * 4 * (wide ? 2 : 1), uint8_t{0});
  const uint8_t flip = a_signed ? 0x80 : 0;  // s8 -> u8: a + 128 (two's complement: flip the top bit)
  // The stored bytes: u8 (flip) or, for sdot, u8 - 128 as s8 (flip ^ 0x80).
  const uint8_t out_flip = path.a_enc == kAS8 ? static_cast<uint8_t>(flip ^ 0x80) : flip;
  const int64_t seg = src_rows.off ? src_rows.seg : k;
  for (int64_t r = 0; r < rows && rowsum; ++r) {
    uint32_t sum = 0;
    for (int64_t s0 = 0, si = 0; s0 < k; s0 += seg, ++si) {
      const uint8_t* src = src_rows.run(i0 + r, si);
      for (int64_t kk = 0; kk < std::min(seg, k - s0); ++kk) sum += static_cast<uint8_t>(src[kk] ^ flip);
    }
    rowsum[r] = static_cast<int32_t>(sum);
  }
  for (int64_t r = rows; r < prows && rowsum; ++r) rowsum[r] = 0;
  uint16_t* dst16 = reinterpret_cast<uint16_t*>(dst);
  // Rows [r0, r1) x quads [q0, q1), one quad at a time.
  auto scalar_part = [&](int64_t r0, int64_t r1, int64_t q0, int64_t q1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t q = q0; q < q1; ++q)
        for (int64_t t = 0; t < 4 && 4 * q + t < k; ++t) {
          const int64_t at = (q * prows + r) * 4 + t;
          const uint8_t v = *src_rows.at(i0 + r, 4 * q + t);
          if (wide) dst16[at] = static_cast<uint8_t>(v ^ flip);
          else dst[at] = static_cast<uint8_t>(v ^ out_flip);
        }
  };
#if HWY_TARGET != HWY_SCALAR
  // 4 rows x 4 quads at a time: a 4 x 4 transpose of u32 (Highway interleaves), then each quad's 4
  // rows are one 16-byte store (or two, widened to u16).
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint32_t> d32;
  const hn::Full128<uint64_t> d64;
  const hn::Full128<uint16_t> d16;
  const auto vflip = hn::Set(d8, wide ? flip : out_flip);
  // Runs of a gathered A that are not whole 16-byte loads (a stem conv's kernel rows): byte by byte.
  const bool by_bytes = src_rows.off && seg % 16 != 0;
  const int64_t r4 = by_bytes ? 0 : rows / 4 * 4, q4 = kfull / 4 * 4;
  // 16 bytes of a row at a time, within one run (a gathered A's runs are multiples of 16 bytes):
  // the 4 rows' run pointers are looked up once per run.
  const int64_t run_quads = src_rows.off ? seg / 4 : q4;
  for (int64_t r = 0; r < r4; r += 4) {
    const uint8_t* p[4] = {};
    for (int64_t q = 0, si = 0, left = 0; q < q4; q += 4, left -= 4) {
      if (left == 0) {
        for (int64_t j = 0; j < 4; ++j) p[j] = src_rows.run(i0 + r + j, si);
        ++si;
        left = run_quads;
      }
      const auto v0 = hn::BitCast(d32, hn::Xor(hn::LoadU(d8, p[0]), vflip));
      const auto v1 = hn::BitCast(d32, hn::Xor(hn::LoadU(d8, p[1]), vflip));
      const auto v2 = hn::BitCast(d32, hn::Xor(hn::LoadU(d8, p[2]), vflip));
      const auto v3 = hn::BitCast(d32, hn::Xor(hn::LoadU(d8, p[3]), vflip));
      for (int64_t j = 0; j < 4; ++j) p[j] += 16;
      const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d32, v0, v1));
      const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d32, v2, v3));
      const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d32, v0, v1));
      const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d32, v2, v3));
      const hn::Vec<decltype(d8)> o[4] = {hn::BitCast(d8, hn::InterleaveLower(d64, t0, t1)),
                                          hn::BitCast(d8, hn::InterleaveUpper(d64, t0, t1)),
                                          hn::BitCast(d8, hn::InterleaveLower(d64, t2, t3)),
                                          hn::BitCast(d8, hn::InterleaveUpper(d64, t2, t3))};
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t at = ((q + j) * prows + r) * 4;
        if (wide) {
          const auto z = hn::Zero(d8);
          hn::StoreU(hn::BitCast(d16, hn::InterleaveLower(d8, o[j], z)), d16, dst16 + at);
          hn::StoreU(hn::BitCast(d16, hn::InterleaveUpper(d8, o[j], z)), d16, dst16 + at + 8);
        } else {
          hn::StoreU(o[j], d8, dst + at);
        }
      }
    }
    scalar_part(r, r + 4, q4, kq);
  }
  scalar_part(r4, rows, 0, kq);
#else
  scalar_part(0, rows, 0, kq);
#endif
}

// The output stage: Epilogue, store_row, tile_rows, store_tile, activate_block.
#include "backends/cpu/kernels/qgemm_output-inl.h"  // NOLINT(build/include): per-target, see its header

// Requantized output written transposed (qgemm_impl's block_t) where panels are at least 16 columns
// wide; narrower ones (WASM, scalar) take store_tile's byte loop.
constexpr bool kBlockTranspose = HWY_TARGET != HWY_SCALAR && kNR >= 16;

// A's panels: `rows` rows each (the last fewer), balanced so that e.g. 16 rows run as 2 x 8 rather
// than 12 + 4.
struct APanels {
  int64_t rows, npm, panel_bytes;
};
APanels a_panels(const Path& path, int64_t m, int64_t k) {
  const int64_t npa = (m + path.mr - 1) / path.mr;
  const int64_t rows = (m + npa - 1) / npa;
  return {rows, (m + rows - 1) / rows, (k + 3) / 4 * rows * 4 * (path.a_enc == kAU16 ? 2 : 1)};
}

void qgemm_pack_a_impl(int64_t m, const void* a, bool a_signed, int64_t lda, int64_t k, QgemmPackedA* pa) {
  const Path path = select_path();
  pa->m = m;
  pa->k = k;
  pa->a_signed = a_signed;
  pa->target = kLayout;
  pa->enc = path.a_enc;
  pa->mr = path.mr;
  if (m <= 0) return;
  const APanels ap = a_panels(path, m, k);
  pa->data.assign(static_cast<size_t>(ap.npm * ap.panel_bytes), 0);
  pa->rowsum.assign(static_cast<size_t>(ap.npm * ap.rows), 0);
  for (int64_t p = 0; p < ap.npm; ++p) {
    const int64_t i0 = p * ap.rows, r = std::min(ap.rows, m - i0);
    pack_a_panel(path, ARows{static_cast<const uint8_t*>(a), lda}, a_signed, k, i0, r, r, pa->data.data() + p * ap.panel_bytes,
                 pa->rowsum.data() + p * ap.rows);
  }
}

// `pre`: A prepacked (qgemm_pack_a), used when it matches this call's target, path and shape.
// `off` (not null): A gathered as qgemm_gather describes, lda the run length, k / lda runs per row,
// negative offsets naming `pad`.
void qgemm_impl(int64_t m, const void* a, bool a_signed, int64_t lda, int32_t a_zp, const QgemmPackedB& b,
                const QgemmOutput& out, ThreadPool* pool, const QgemmPackedA* pre, const int32_t* off,
                const void* pad) {
  const int64_t n = b.n, k = b.k;
  if (m <= 0 || n <= 0) return;
  const Path path = select_path();
  const int64_t kq = (k + 3) / 4, np = (n + kNR - 1) / kNR;
  // B in this target's layout: as packed, or repacked here when another target packed it (the
  // dispatch changed since, as tests and bench/gemm do): never read a layout this code did not write.
  const int8_t* pb = b.data.data();
  std::vector<int8_t> repacked;
  if (b.target != kLayout) {
    repacked.resize(static_cast<size_t>(np * kq * kNR * 4));
    pack_panels(b, repacked.data());
    pb = repacked.data();
  }

  // Per-column terms: bias_i32 - za * colsum + K * za * zb (+ 128 * colsum for the a - 128 sums).
  const int64_t za = a_zp + (a_signed ? 128 : 0);
  thread_local std::vector<int32_t> colfix_buf;
  colfix_buf.resize(static_cast<size_t>(n));
  bool any_zb = false;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t zb = b.zp[static_cast<size_t>(j)], cs = b.col_sum[static_cast<size_t>(j)];
    int64_t f = (out.bias_i32 && !out.per_row ? out.bias_i32[j] : 0) - za * cs + k * za * zb + (path.minus128 ? 128 * cs : 0);
    colfix_buf[static_cast<size_t>(j)] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(f)));
    any_zb = any_zb || zb != 0;
  }
  const Epilogue epi{colfix_buf.data(), any_zb ? b.zp.data() : nullptr, &out};

  const APanels ap = a_panels(path, m, k);
  const int64_t rows = ap.rows, npm = ap.npm, panel_bytes = ap.panel_bytes;
  const bool prepacked = pre && pre->target == kLayout && pre->enc == path.a_enc && pre->mr == path.mr &&
                         pre->m == m && pre->k == k && pre->a_signed == a_signed;
  // A gathered u8 A whose row sums are not needed (every zb 0) is read in place by the path's
  // gather tiles where it has them (VNNI): no packing at all.
  const bool in_place = off && !a_signed && !any_zb && path.gather_tiles;
  // In place with a requantized output written row by row: the tiles requantize their
  // accumulators themselves (no i32 tile in memory).
  const GatherQuantTileFn* fused =
      in_place && path.gather_quant_tiles && out.kind == QgemmOutput::kQuant && out.col_stride == 1 && !out.per_row
          ? path.gather_quant_tiles + (out.out_signed ? path.mr : 0)
          : nullptr;
  thread_local std::vector<uint8_t> abuf;
  thread_local std::vector<int32_t> rowsum_buf;
  if (!prepacked) {
    if (!in_place && abuf.size() < static_cast<size_t>(npm * panel_bytes)) abuf.resize(static_cast<size_t>(npm * panel_bytes));
    rowsum_buf.resize(static_cast<size_t>(npm * rows));
  }
  uint8_t* pa = prepacked ? const_cast<uint8_t*>(pre->data.data()) : abuf.data();
  int32_t* rowsum = prepacked ? const_cast<int32_t*>(pre->rowsum.data()) : rowsum_buf.data();
  const bool threaded = pool && pool->num_threads() > 1 && m * n * k >= kMinParallelMacs;
  const ARows src_rows{static_cast<const uint8_t*>(a), lda, off, lda, off ? k / lda : 1,
                       static_cast<const uint8_t*>(pad)};
  auto pack_a = [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1 && !prepacked && !in_place; ++p) {
      const int64_t i0 = p * rows, r = std::min(rows, m - i0);
      pack_a_panel(path, src_rows, a_signed, k, i0, r, r, pa + p * panel_bytes, any_zb ? rowsum + p * rows : nullptr);
    }
  };

  // Tasks: blocks of A panels x chunks of B panels. With few rows (one block) N is cut finer so
  // that every thread gets several chunks.
  const int64_t mb = std::max<int64_t>(1, kBlockRows / rows);
  const int64_t tm = (npm + mb - 1) / mb;
  int64_t nb = std::clamp<int64_t>(kChunkBytes / std::max<int64_t>(1, kq * kNR * 4), 1, np);
  if (threaded) {
    const int64_t want = 4 * pool->num_threads();
    while (nb > 1 && tm * ((np + nb - 1) / nb) < want) nb = (nb + 1) / 2;
  }
  const int64_t tn = (np + nb - 1) / nb;
  // With all of N in one chunk (few columns: convs' output channels) each A block is used by one
  // task only: that task packs it, so the packed block is in L2 when the tiles read it (packing
  // all of A first sent a 3136 x 576 conv's 1.8 MB through L3). Else A is packed up front.
  const bool pack_in_task = tn == 1 && !prepacked;
  if (!pack_in_task && !prepacked) {
    if (threaded && npm >= 4 && m * k >= (int64_t{1} << 16)) pool->parallel_for(npm, 1, pack_a);
    else pack_a(0, npm);
  }
  const TileFn* tiles = path.tiles;
  // Requantized NCHW output from pixel-major rows: a block's tiles of one B panel are collected
  // as bytes and leave transposed, each channel's pixels of the block as one run.
  const bool block_t = kBlockTranspose && out.kind == QgemmOutput::kQuant && out.col_stride != 1 && out.row_stride == 1;
  static_assert(kBlockRows >= kMaxMR, "a block holds whole A panels");
  const ops::ActivationSpec* act = out.kind == QgemmOutput::kFloat && out.col_stride == 1 && out.act &&
                                           (out.act->kind != ops::FusedActivation::kNone || out.act->has_post())
                                       ? out.act
                                       : nullptr;
  auto task = [&](int64_t t0, int64_t t1) {
    HWY_ALIGN int32_t tile[kMaxMR * kNR];
    HWY_ALIGN uint8_t blk[kBlockRows * kNR];  // block_t: the block's bytes, row-major
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bm = t / tn, bn = t % tn;
      const int64_t pm0 = bm * mb, pm1 = std::min(npm, pm0 + mb);
      const int64_t pn0 = bn * nb, pn1 = std::min(np, pn0 + nb);
      if (pack_in_task) pack_a(pm0, pm1);
      for (int64_t pn = pn0; pn < pn1; ++pn) {
        const int8_t* bp = pb + pn * kq * kNR * 4;
        const int64_t j0 = pn * kNR, cols = std::min(kNR, n - j0);
        for (int64_t pm = pm0; pm < pm1; ++pm) {
          const int64_t i0 = pm * rows, r = std::min(rows, m - i0);
          if (fused) {
            const GatherQuant gq{epi.colfix + j0, out.scale_per_col ? out.scale + j0 : nullptr, out.scale[0],
                                 out.out_zp, cols, static_cast<uint8_t*>(out.out) + i0 * out.row_stride + j0,
                                 out.row_stride};
            fused[r - 1](src_rows.nseg, lda / 4, src_rows.a, src_rows.pad, off + i0 * src_rows.nseg, bp, gq);
            continue;
          }
          if (in_place)
            path.gather_tiles[r - 1](src_rows.nseg, lda / 4, src_rows.a, src_rows.pad, off + i0 * src_rows.nseg, bp,
                                     tile);
          else tiles[r - 1](kq, pa + pm * panel_bytes, bp, tile);
          if (block_t)
            tile_rows(epi, tile, rowsum + pm * rows, i0, r, j0, cols,
                      reinterpret_cast<char*>(blk + (pm - pm0) * rows * kNR), kNR);
          else
            store_tile(epi, tile, rowsum + pm * rows, i0, r, j0, cols);
        }
        if (block_t) {
          const int64_t b0 = pm0 * rows, b1 = std::min(m, pm1 * rows);
          transpose_bytes_impl(blk, b1 - b0, cols, kNR, static_cast<uint8_t*>(out.out) + b0 + j0 * out.col_stride,
                               out.col_stride);
        }
      }
      if (act) {
        // The task's f32 outputs (at most kBlockRows rows x the chunk's columns, ~kChunkBytes: in
        // L2) through the activation, rows long enough that its per-call setup does not count (per
        // panel, 32 columns, it cost a quarter more than a separate pass).
        const int64_t b0 = pm0 * rows, b1 = std::min(m, pm1 * rows), c0 = pn0 * kNR, c1 = std::min(n, pn1 * kNR);
        activate_block(*act, static_cast<float*>(out.out) + b0 * out.row_stride + c0, b1 - b0, c1 - c0, out.row_stride);
      }
    }
  };
  if (threaded && tm * tn > 1) pool->parallel_for(tm * tn, 1, task);
  else task(0, tm * tn);
}

const char* qgemm_target_impl() { return select_path().name; }
bool qgemm_gather_in_place_impl() { return select_path().gather_tiles != nullptr; }

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(qgemm_impl);
HWY_EXPORT(qgemm_pack_a_impl);
HWY_EXPORT(qgemm_pack_panels_impl);
HWY_EXPORT(qgemm_pack_b_rows_impl);
HWY_EXPORT(qgemm_target_impl);
HWY_EXPORT(qgemm_gather_in_place_impl);
HWY_EXPORT(transpose_bytes_impl);

QgemmPackedB qgemm_pack_b(int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb, bool trans_b,
                          const void* b_zp, int64_t zp_count) {
  using qgemm_detail::load_q;
  QgemmPackedB p;
  p.k = k;
  p.n = n;
  const int32_t shift = b_signed ? 0 : 128;
  p.plain.resize(static_cast<size_t>(k * n));
  p.col_sum.assign(static_cast<size_t>(n), 0);
  p.zp.assign(static_cast<size_t>(n), zp_count == 0 ? -shift : 0);
  for (int64_t j = 0; j < n; ++j)
    if (zp_count > 0) p.zp[static_cast<size_t>(j)] = load_q(b_zp, b_signed, zp_count == 1 ? 0 : j) - shift;
  // Row by row (the row-major case reads B in order; B^T, the rarer case, strides).
  for (int64_t kk = 0; kk < k; ++kk) {
    int8_t* dst = p.plain.data() + kk * n;
    for (int64_t j = 0; j < n; ++j) {
      const int32_t v = load_q(b, b_signed, trans_b ? j * ldb + kk : kk * ldb + j) - shift;
      dst[j] = static_cast<int8_t>(v);
      p.col_sum[static_cast<size_t>(j)] += v;
    }
  }
  HWY_DYNAMIC_DISPATCH(qgemm_pack_panels_impl)(p);
  return p;
}

void qgemm_pack_b_rows(int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb, int32_t b_zp,
                       QgemmPackedB* p, bool col_sums, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(qgemm_pack_b_rows_impl)(k, n, b, b_signed, ldb, b_zp, p, col_sums, pool);
}

void qgemm(int64_t m, const void* a, bool a_signed, int64_t lda, int32_t a_zp, const QgemmPackedB& b,
           const QgemmOutput& out, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(qgemm_impl)(m, a, a_signed, lda, a_zp, b, out, pool, nullptr, nullptr, nullptr);
}

void qgemm_gather(int64_t m, const void* a, const int32_t* off, int64_t seg, bool a_signed, int32_t a_zp,
                  const QgemmPackedB& b, const QgemmOutput& out, ThreadPool* pool, const void* pad) {
  HWY_DYNAMIC_DISPATCH(qgemm_impl)(m, a, a_signed, seg, a_zp, b, out, pool, nullptr, off, pad);
}

QgemmPackedA qgemm_pack_a(int64_t m, const void* a, bool a_signed, int64_t lda, int64_t k) {
  QgemmPackedA pa;
  HWY_DYNAMIC_DISPATCH(qgemm_pack_a_impl)(m, a, a_signed, lda, k, &pa);
  return pa;
}

void qgemm_packed(const QgemmPackedA& pa, const void* a, int64_t lda, int32_t a_zp, const QgemmPackedB& b,
                  const QgemmOutput& out, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(qgemm_impl)(pa.m, a, pa.a_signed, lda, a_zp, b, out, pool, &pa, nullptr, nullptr);
}

const char* qgemm_target() { return HWY_DYNAMIC_DISPATCH(qgemm_target_impl)(); }

bool qgemm_gather_in_place() { return HWY_DYNAMIC_DISPATCH(qgemm_gather_in_place_impl)(); }

void transpose_bytes(const uint8_t* src, int64_t rows, int64_t cols, int64_t src_stride, uint8_t* dst,
                     int64_t dst_stride) {
  HWY_DYNAMIC_DISPATCH(transpose_bytes_impl)(src, rows, cols, src_stride, dst, dst_stride);
}

void qgemm_disable_dot_for_test(bool disable) { qgemm_detail::g_no_dot.store(disable); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
