// tessera QLinearLookup (semantics: core/ops/families/quantize.cpp): Y[i] = table[byte of X[i]],
// what quantize_lookup makes of an elementwise function between DequantizeLinear and
// QuantizeLinear (core/passes/opt_quantize_lookup.cpp).
// x86-64 with AVX-512 VBMI (Ice Lake and later, Zen 4): 64 codes per step, two vpermi2b (each a
// 128-entry lookup in two registers) and a blend on the code's top bit. Highway 1.0.3 has no
// 256-entry byte lookup and the build leaves its AVX3_DL target out (CMakeLists.txt), so this is
// intrinsics in a function compiled for VBMI, chosen at run time by the CPU's (and OS's) support.
// x86-64 with AVX2 only: 32 codes per step, one vpshufb per 16-entry row of the table: row k
// gives table[16k + (c & 15)] where (c ^ 16k) < 16, i.e. c's high nibble is k, since adding 0x70
// with saturation sets bit 7 (vpshufb's "write 0") exactly on the other bytes; the 16 rows are ORed.
// Elsewhere: eight codes per 64-bit load and store, one read each of a stack copy of the table.
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__EMSCRIPTEN__)
#include <immintrin.h>
#define TSR_QLOOKUP_X86 1
#endif

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/qlookup.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

#ifdef TSR_QLOOKUP_X86
#define TSR_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))
// y[0..64) = table[c] for the 64 codes in c (masked by m), the table in t0..t3.
TSR_VBMI inline void lookup64(const uint8_t* x, uint8_t* y, __mmask64 m, const __m512i* t) {
  const __m512i c = _mm512_maskz_loadu_epi8(m, x);
  const __m512i lo = _mm512_permutex2var_epi8(t[0], c, t[1]);  // table[c & 127]
  const __m512i hi = _mm512_permutex2var_epi8(t[2], c, t[3]);  // table[128 + (c & 127)]
  _mm512_mask_storeu_epi8(y, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(c), lo, hi));
}

TSR_VBMI void lookup_bytes_vbmi(const uint8_t* x, int64_t n, const uint8_t* table, uint8_t* y) {
  const __m512i t[4] = {_mm512_loadu_si512(table), _mm512_loadu_si512(table + 64), _mm512_loadu_si512(table + 128),
                        _mm512_loadu_si512(table + 192)};
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) lookup64(x + i, y + i, ~__mmask64{0}, t);
  if (i < n) lookup64(x + i, y + i, ~uint64_t{0} >> (64 - (n - i)), t);
}

bool has_vbmi() {
  static const bool yes = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  return yes;
}

#define TSR_AVX2 __attribute__((target("avx2")))
// table[c] for the 32 codes in c, the table's rows in t (each row in both 128-bit lanes).
TSR_AVX2 inline __m256i lookup32(__m256i c, const __m256i* t) {
  const __m256i bias = _mm256_set1_epi8(0x70);
  __m256i r = _mm256_setzero_si256();
  for (int k = 0; k < 16; ++k) {
    const __m256i idx = _mm256_adds_epu8(_mm256_xor_si256(c, _mm256_set1_epi8(static_cast<char>(16 * k))), bias);
    r = _mm256_or_si256(r, _mm256_shuffle_epi8(t[k], idx));
  }
  return r;
}

TSR_AVX2 void lookup_bytes_avx2(const uint8_t* x, int64_t n, const uint8_t* table, uint8_t* y) {
  __m256i t[16];
  for (int k = 0; k < 16; ++k)
    t[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), lookup32(c, t));
  }
  if (i < n) {
    alignas(32) uint8_t buf[32] = {};
    std::memcpy(buf, x + i, size_t(n - i));
    _mm256_store_si256(reinterpret_cast<__m256i*>(buf), lookup32(_mm256_load_si256(reinterpret_cast<const __m256i*>(buf)), t));
    std::memcpy(y + i, buf, size_t(n - i));
  }
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

void lookup_bytes_portable(const uint8_t* x, int64_t n, const uint8_t* table, uint8_t* y) {
  uint8_t t[256];
  std::memcpy(t, table, 256);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, x + i, 8);
    uint64_t o = 0;
    for (int k = 0; k < 8; ++k) o |= uint64_t{t[(w >> (8 * k)) & 0xff]} << (8 * k);
    std::memcpy(y + i, &o, 8);
  }
  for (; i < n; ++i) y[i] = t[x[i]];
}

// Y = QLinearLookup(X, table): X u8/s8, table [256] u8/s8 (the op's inference checks dtypes and
// the table's shape; checked again here for a model built by hand).
Status qlinear_lookup(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor* table = ctx.input(1);
  if (!table || table->numel() != 256 || dtype_size(table->dtype()) != 1)
    return ctx.error("input[1] (table) must be a [256] u8/s8 tensor");
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  qlookup_bytes(x.data<uint8_t>(), x.numel(),
               table->data<uint8_t>(), y->mut_data<uint8_t>());
  return ok_status();
}

}  // namespace

void qlookup_bytes(const uint8_t* x, int64_t n, const uint8_t* table, uint8_t* y, int max_level) {
#ifdef TSR_QLOOKUP_X86
  if (max_level >= 2 && has_vbmi()) return lookup_bytes_vbmi(x, n, table, y);
  if (max_level >= 1 && has_avx2()) return lookup_bytes_avx2(x, n, table, y);
#endif
  (void)max_level;
  lookup_bytes_portable(x, n, table, y);
}

void register_qlookup_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("QLinearLookup") r.add_fn("QLinearLookup", {DType::kU8, DType::kI8}, qlinear_lookup);
}

}  // namespace tsr::cpu
