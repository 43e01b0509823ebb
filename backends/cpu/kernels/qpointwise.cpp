// qpointwise (qpointwise.h): compiled once per SIMD target (hwy/foreach_target.h); only the
// AVX-512 targets have a kernel (VNNI, checked at run time), the others report "not run".
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/qpointwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/qpointwise.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/kernels/requant-inl.h"

#ifndef TSR_CPU_QPOINTWISE_SHARED_
#define TSR_CPU_QPOINTWISE_SHARED_
namespace tsr::cpu::qpw_detail {
// Output channels per tile: 12 rows x 2 vectors of 16 pixels = 24 accumulators, with the two
// activation vectors and a broadcast weight quad, in AVX-512's 32 registers (qgemm's VNNI tile
// shape).
constexpr int64_t kRows = 12;
// Pixels per activation panel: qgemm_pack_b_rows' panel width on the AVX-512 targets.
[[maybe_unused]] constexpr int64_t kCols = 32;
extern std::atomic<bool> g_off;  // qpointwise_disable_for_test
}  // namespace tsr::cpu::qpw_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using qpw_detail::kCols;
using qpw_detail::kRows;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define TSR_QPW_VNNI_ATTR __attribute__((target(HWY_TARGET_STR ",avx512vnni")))
// The tile's loops over its rows unrolled, so that the 24 accumulators stay in registers.
#if defined(__clang__)
#define TSR_QPW_UNROLL _Pragma("unroll")
#else
#define TSR_QPW_UNROLL _Pragma("GCC unroll 16")
#endif

bool has_vnni() {
  static const bool v = (__builtin_cpu_init(), __builtin_cpu_supports("avx512vnni"));
  return v && !qpw_detail::g_off.load(std::memory_order_relaxed);
}

// One tile: weight panel `pa` (kq quads x kRows rows x 4 bytes) times activation panel `pb` (kq
// quads x kCols pixels x 4 bytes, stored as x ^ 0x80: flipped back here to the u8 codes, s8 ones
// then reading as x + 128, which `init` accounts for), `rows` output channels and `cols` pixels
// requantized into their rows of `y` (row i at y + i * pixels). R (4, 8 or kRows, >= rows): the
// panel rows multiplied; a last panel of 4 or 8 channels (16 = 12 + 4 output channels: MobileNetV2's
// first projection) skips the zero rows past them.
template <int R, typename Q>
TSR_QPW_VNNI_ATTR void tile(const int8_t* pa, const int8_t* pb, int64_t kq, int64_t rows, int64_t cols,
                            const int32_t* init, const float* scale, const Requant<Q, hn::Full512<float>>& rq,
                            Q* y, int64_t pixels) {
  static_assert(R <= kRows);
  // The sums start at init (wrapping i32 adds in any order: the same sums), which the output stage
  // then does not add (one instruction per 16 outputs, a tenth of a small-K tile's work).
  __m512i acc[R][2];
  TSR_QPW_UNROLL for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_set1_epi32(r < rows ? init[r] : 0);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t q = 0; q < kq; ++q) {
    const __m512i b0 = _mm512_xor_si512(_mm512_loadu_si512(pb + q * kCols * 4), flip);
    const __m512i b1 = _mm512_xor_si512(_mm512_loadu_si512(pb + q * kCols * 4 + 64), flip);
    const int8_t* wq = pa + q * kRows * 4;
    TSR_QPW_UNROLL for (int r = 0; r < R; ++r) {
      int32_t quad;
      std::memcpy(&quad, wq + r * 4, 4);
      const __m512i w = _mm512_set1_epi32(quad);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], b0, w);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], b1, w);
    }
  }
  TSR_QPW_UNROLL for (int r = 0; r < R; ++r) {
    if (r >= rows) break;
    const __m512 vs = _mm512_set1_ps(scale[r]);
    TSR_QPW_UNROLL for (int h = 0; h < 2; ++h) {
      if (16 * h >= cols) break;
      const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][h]), vs);
      const __m512i bits = rq.wide_codes(hn::Vec512<float>{v}).raw;
      Q* out = y + r * pixels + 16 * h;
      const int64_t n = cols - 16 * h;
      if (n >= 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(bits));
      else _mm512_mask_cvtepi32_storeu_epi8(out, static_cast<__mmask16>((1u << n) - 1), bits);
    }
  }
}

template <typename Q>
void run(const QPointwiseWeights& w, const QgemmPackedB& act, int32_t zpu, const QPointwiseOut& out,
         ThreadPool* pool) {
  const int64_t kq = (w.k + 3) / 4, np = (out.pixels + kCols - 1) / kCols, nm = (w.m + kRows - 1) / kRows;
  const Requant<Q, hn::Full512<float>> rq(hn::Full512<float>(), out.y_zp);
  // Blocks of 4 activation panels (128 pixels) per task, each against every weight panel of the
  // task's chunk: the block's activations stay in L1/L2 while the weights stream. Maps of few blocks
  // (MobileNetV2's 7x7 and 14x14: one or two) also split the weight panels (output channels) into
  // chunks, so that every thread gets work.
  constexpr int64_t kPanelsPerTask = 4;
  const int64_t blocks = (np + kPanelsPerTask - 1) / kPanelsPerTask;
  const bool threaded = pool && pool->num_threads() > 1 && w.m * w.k * out.pixels >= (int64_t{1} << 18);
  const int64_t want = threaded ? 4 * int64_t{pool->num_threads()} : 1;
  const int64_t chunks = std::clamp<int64_t>((want + blocks - 1) / blocks, 1, nm);
  auto body = [&](int64_t t0, int64_t t1) {
    int32_t init[kRows];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / chunks, c = t % chunks;
      for (int64_t pm = c * nm / chunks; pm < (c + 1) * nm / chunks; ++pm) {
        const int64_t i0 = pm * kRows, rows = std::min(kRows, w.m - i0);
        // bias - zpu * sum(w), wrapping as the i32 sums do.
        for (int64_t r = 0; r < rows; ++r)
          init[r] = static_cast<int32_t>((out.bias ? static_cast<uint32_t>(out.bias[i0 + r]) : 0u) -
                                         static_cast<uint32_t>(zpu) * static_cast<uint32_t>(w.wsum[size_t(i0 + r)]));
        // The panel's rows multiplied: rows rounded up to 4 (the tile's instances).
        const auto tile_r = rows > 8 ? &tile<kRows, Q> : rows > 4 ? &tile<8, Q> : &tile<4, Q>;
        for (int64_t pn = b * kPanelsPerTask; pn < std::min(np, (b + 1) * kPanelsPerTask); ++pn)
          tile_r(w.data.data() + pm * kq * kRows * 4, act.data.data() + pn * kq * kCols * 4, kq, rows,
                 std::min(kCols, out.pixels - pn * kCols), init, out.scale + i0, rq,
                 static_cast<Q*>(out.y) + i0 * out.pixels + pn * kCols, out.pixels);
      }
    }
  };
  const int64_t tasks = blocks * chunks;
  if (threaded && tasks > 1) pool->parallel_for(tasks, 1, body);
  else body(0, tasks);
}
#endif

bool qpointwise_available_impl() {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return has_vnni();
#else
  return false;
#endif
}

bool qpointwise_impl(const QPointwiseWeights& w, const QgemmPackedB& act, int32_t x_zp, bool x_signed,
                     const QPointwiseOut& out, ThreadPool* pool) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // act's layout is this target's (panels of kCols pixels) only if this target packed it.
  if (!has_vnni() || act.target != HWY_TARGET || act.k != w.k || act.n != out.pixels) return false;
  const int32_t zpu = x_zp + (x_signed ? 128 : 0);  // the zero point of the u8 codes read
  if (out.y_signed) run<int8_t>(w, act, zpu, out, pool);
  else run<uint8_t>(w, act, zpu, out, pool);
  return true;
#else
  (void)w, (void)act, (void)x_zp, (void)x_signed, (void)out, (void)pool;
  return false;
#endif
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(qpointwise_impl);
HWY_EXPORT(qpointwise_available_impl);

std::atomic<bool> qpw_detail::g_off{false};

QPointwiseWeights qpointwise_pack(const int8_t* w, int64_t m, int64_t k) {
  using qpw_detail::kRows;
  QPointwiseWeights p;
  p.m = m;
  p.k = k;
  const int64_t kq = (k + 3) / 4, nm = (m + kRows - 1) / kRows;
  p.data.assign(static_cast<size_t>(nm * kq * kRows * 4), 0);
  p.wsum.assign(static_cast<size_t>(m), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) {
      const int8_t v = w[i * k + kk];
      p.data[static_cast<size_t>(((i / kRows) * kq + kk / 4) * kRows * 4 + (i % kRows) * 4 + kk % 4)] = v;
      p.wsum[static_cast<size_t>(i)] += v;
    }
  return p;
}

bool qpointwise(const QPointwiseWeights& w, const QgemmPackedB& act, int32_t x_zp, bool x_signed,
                const QPointwiseOut& out, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(qpointwise_impl)(w, act, x_zp, x_signed, out, pool);
}

bool qpointwise_available() { return HWY_DYNAMIC_DISPATCH(qpointwise_available_impl)(); }

void qpointwise_disable_for_test(bool disable) { qpw_detail::g_off.store(disable); }

}  // namespace tsr::cpu
#endif  // HWY_ONCE
