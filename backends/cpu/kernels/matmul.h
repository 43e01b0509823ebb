// numpy.matmul on CPU tensors, shared by MatMul and the quantized matmuls (MatMulInteger,
// QLinearMatMul). f32 runs on the packed SGEMM (gemm.h); other types on the reference loop
// (integer products wrap as in C++ unsigned math).
#pragma once

#include <algorithm>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "core/base/thread_pool.h"
#include "core/tensor/broadcast.h"
#include "core/tensor/tensor.h"

namespace tsr::cpu {

namespace matmul_detail {

template <typename T>
inline void gemm_any(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
              const T* b, int64_t ldb, T beta, T* c, int64_t ldc, ThreadPool* pool) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
  } else {
    gemm_reference<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

}  // namespace matmul_detail

// alpha * op(a) @ op(b) into y, numpy.matmul batching (com.microsoft FusedMatMul with
// transBatchA = transBatchB = 0; MatMul is ta = tb = false, alpha = 1). op(X) is X with its last
// two axes swapped when the flag is set, read in place through sgemm's trans_a/trans_b (no copy).
// y is allocated with the inferred [batch..., M, N] shape, dtype T. Batch dims broadcast through
// strides (0 along a broadcast dim: the operand is read again, never expanded); 1-D operands are
// promoted as numpy does (a transpose flag on a 1-D operand is ignored, as onnxruntime does).
// Where B is shared by every batch (2-D, or size 1 in all batch dims) and A is untransposed and
// holds every batch, the batches fold into M: one [batch*M, K] x [K, N] product instead of
// `batch` small ones (a linear layer over [B, S, K] activations).
template <typename T>
void matmul_into(const Tensor& a, const Tensor& b, Tensor* y, ThreadPool& thread_pool, bool ta = false,
                 bool tb = false, T alpha = T(1)) {
  Shape sa = a.shape(), sb = b.shape();
  const bool b1 = sb.size() == 1;
  if (sa.size() == 1) {
    sa.insert(sa.begin(), 1);
    ta = false;
  }
  if (b1) {
    sb.push_back(1);
    tb = false;
  }
  // Stored matrices: A is [ra, ca], B is [rb, cb] (row strides ca, cb); op() swaps them.
  const int64_t ra = sa[sa.size() - 2], ca = sa.back(), rb = sb[sb.size() - 2], cb = sb.back();
  const int64_t m = ta ? ca : ra, k = ta ? ra : ca, n = tb ? rb : cb;
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const size_t brank = std::max(ba.size(), bb.size());
  Shape batch(brank, 1);
  for (size_t d = 0; d < brank; ++d) {
    const int64_t da = d + ba.size() >= brank ? ba[d + ba.size() - brank] : 1;
    const int64_t db = d + bb.size() >= brank ? bb[d + bb.size() - brank] : 1;
    batch[d] = std::max(da, db);
    if (da == 0 || db == 0) batch[d] = 0;
  }
  const int64_t nbatch = shape_numel(batch);
  if (y->numel() == 0) return;
  T* py = y->mut_data<T>();
  if (k == 0) {  // empty inner dim: zeros (sgemm would scale C by beta = 0, but say it plainly)
    std::fill(py, py + y->numel(), T(0));
    return;
  }
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  const int64_t lda = ca, ldb = b1 ? 1 : cb;
  ThreadPool* pool = &thread_pool;
  // One shared B (a linear layer): fold A's batch into M for a single large product.
  if (shape_numel(bb) == 1 && !ta && shape_numel(ba) == nbatch) {
    matmul_detail::gemm_any<T>(false, tb, nbatch * m, n, k, alpha, pa, lda, pb, ldb, T(0), py, n, pool);
    return;
  }
  const Ints sta = broadcast_strides(ba, brank), stb = broadcast_strides(bb, brank);
  auto offsets = [&](int64_t bi, int64_t* oa, int64_t* ob) {
    *oa = 0;
    *ob = 0;
    for (size_t d = brank; d-- > 0;) {
      const int64_t idx = bi % batch[d];
      bi /= batch[d];
      *oa += idx * sta[d];
      *ob += idx * stb[d];
    }
  };
  auto run_range = [&](int64_t b0, int64_t b1e, ThreadPool* inner) {
    for (int64_t bi = b0; bi < b1e; ++bi) {
      int64_t oa = 0, ob = 0;
      offsets(bi, &oa, &ob);
      matmul_detail::gemm_any<T>(ta, tb, m, n, k, alpha, pa + oa * ra * ca, lda, pb + ob * rb * cb, ldb, T(0),
                                 py + bi * m * n, n, inner);
    }
  };
  // Many small products (attention heads): parallel over the batch, each product inline.
  if (pool->num_threads() > 1 && nbatch >= pool->num_threads() && m * n * k < (1 << 21)) {
    pool->parallel_for(nbatch, 1, [&](int64_t b0, int64_t b1e) { run_range(b0, b1e, nullptr); });
  } else {
    run_range(0, nbatch, pool);
  }
}

}  // namespace tsr::cpu
