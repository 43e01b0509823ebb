// qgemm (qgemm.h): plain reference body. The layout of `data` is the row-major `plain` copy
// (target 1); the SIMD kernels replace it.
#include "backends/cpu/kernels/qgemm.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace tsr::cpu {

namespace {

int32_t load_q(const void* p, bool is_signed, int64_t i) {
  return is_signed ? static_cast<const int8_t*>(p)[i] : static_cast<const uint8_t*>(p)[i];
}

template <typename Q>
void store_q(void* out, int64_t at, float v, int32_t zp) {
  constexpr float lo = std::is_same_v<Q, uint8_t> ? 0.0f : -128.0f;
  constexpr float hi = std::is_same_v<Q, uint8_t> ? 255.0f : 127.0f;
  static_cast<Q*>(out)[at] = static_cast<Q>(std::clamp(std::nearbyint(v) + static_cast<float>(zp), lo, hi));
}

// Writes row i's accumulators (acc[0..n)) through the output stage.
void emit_row(const QgemmOutput& o, int64_t i, const int32_t* acc, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const int32_t s = acc[j] + (o.bias_i32 ? o.bias_i32[j] : 0);
    const int64_t at = i * o.row_stride + j * o.col_stride;
    if (o.kind == QgemmOutput::kInt32) {
      static_cast<int32_t*>(o.out)[at] = s;
      continue;
    }
    const float v = static_cast<float>(s) * o.scale[o.scale_per_col ? j : 0];
    if (o.kind == QgemmOutput::kFloat) static_cast<float*>(o.out)[at] = v + (o.bias_f32 ? o.bias_f32[j] : 0.0f);
    else if (o.out_signed) store_q<int8_t>(o.out, at, v, o.out_zp);
    else store_q<uint8_t>(o.out, at, v, o.out_zp);
  }
}

}  // namespace

QgemmPackedB qgemm_pack_b(int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb, bool trans_b,
                          const void* b_zp, int64_t zp_count) {
  QgemmPackedB p;
  p.k = k;
  p.n = n;
  p.target = 1;
  const int32_t shift = b_signed ? 0 : 128;
  p.plain.resize(static_cast<size_t>(k * n));
  p.col_sum.assign(static_cast<size_t>(n), 0);
  p.zp.assign(static_cast<size_t>(n), zp_count == 0 ? -shift : 0);
  for (int64_t j = 0; j < n; ++j) {
    if (zp_count > 0) p.zp[static_cast<size_t>(j)] = load_q(b_zp, b_signed, zp_count == 1 ? 0 : j) - shift;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int32_t v = load_q(b, b_signed, trans_b ? j * ldb + kk : kk * ldb + j) - shift;
      p.plain[static_cast<size_t>(kk * n + j)] = static_cast<int8_t>(v);
      p.col_sum[static_cast<size_t>(j)] += v;
    }
  }
  p.data = p.plain;
  return p;
}

void qgemm(int64_t m, const void* a, bool a_signed, int64_t lda, int32_t a_zp, const QgemmPackedB& b,
           const QgemmOutput& out, ThreadPool* pool) {
  const int64_t n = b.n, k = b.k;
  auto rows = [&](int64_t r0, int64_t r1) {
    std::vector<int32_t> acc(static_cast<size_t>(n));
    for (int64_t i = r0; i < r1; ++i) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t kk = 0; kk < k; ++kk) {
        const int32_t av = load_q(a, a_signed, i * lda + kk) - a_zp;
        const int8_t* brow = b.plain.data() + kk * n;
        for (int64_t j = 0; j < n; ++j) acc[static_cast<size_t>(j)] += av * (brow[j] - b.zp[static_cast<size_t>(j)]);
      }
      emit_row(out, i, acc.data(), n);
    }
  };
  if (pool && pool->num_threads() > 1 && m > 1) pool->parallel_for(m, 1, rows);
  else rows(0, m);
}

const char* qgemm_target() { return "scalar"; }

}  // namespace tsr::cpu
