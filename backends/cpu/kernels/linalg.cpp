// CPU kernels for MatMul and Gemm. f32 runs on the shared packed SGEMM (gemm.h); f64 and the
// integer types use the plain reference loop (integer products wrap as in C++ unsigned math).
#include <algorithm>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/gemm.h"

namespace tsr::cpu {

namespace {

template <typename T>
void gemm_any(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
              const T* b, int64_t ldb, T beta, T* c, int64_t ldc, ThreadPool* pool) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
  } else {
    gemm_reference<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

// Element strides of `s` right-aligned into `rank` dims, 0 where s broadcasts (dim 1 or absent).
std::vector<int64_t> broadcast_strides(const Shape& s, size_t rank) {
  std::vector<int64_t> st(rank, 0);
  int64_t acc = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    const size_t src = s.size() - 1 - d, dst = rank - 1 - d;
    st[dst] = s[src] == 1 ? 0 : acc;
    acc *= s[src];
  }
  return st;
}

template <typename T>
Status matmul_typed(exec::KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  Shape sa = a.shape(), sb = b.shape();
  const bool b1 = sb.size() == 1;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
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
  if (y->numel() == 0) return ok_status();
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* py = y->mut_data<T>();
  const int64_t ldb = b1 ? 1 : n;
  int64_t b_batch = 1;
  for (int64_t d : bb) b_batch *= d;
  ThreadPool* pool = &ctx.pool();
  // One shared B (a linear layer): fold A's batch into M for a single large product.
  if (b_batch == 1 && shape_numel(ba) == nbatch) {
    gemm_any<T>(false, false, nbatch * m, n, k, T(1), pa, k, pb, ldb, T(0), py, n, pool);
    return ok_status();
  }
  const std::vector<int64_t> sta = broadcast_strides(ba, brank), stb = broadcast_strides(bb, brank);
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
      gemm_any<T>(false, false, m, n, k, T(1), pa + oa * m * k, k, pb + ob * k * n, ldb, T(0),
                  py + bi * m * n, n, inner);
    }
  };
  // Many small products (attention heads): parallel over the batch, each product inline.
  if (pool->num_threads() > 1 && nbatch >= pool->num_threads() && m * n * k < (1 << 21)) {
    pool->parallel_for(nbatch, 1, [&](int64_t b0, int64_t b1e) { run_range(b0, b1e, nullptr); });
  } else {
    run_range(0, nbatch, pool);
  }
  return ok_status();
}

Status matmul_kernel(exec::KernelContext& ctx) {
  switch (ctx.input(0)->dtype()) {
    case DType::kF32: return matmul_typed<float>(ctx);
    case DType::kF64: return matmul_typed<double>(ctx);
    case DType::kI32: return matmul_typed<int32_t>(ctx);
    case DType::kI64: return matmul_typed<int64_t>(ctx);
    case DType::kU32: return matmul_typed<uint32_t>(ctx);
    case DType::kU64: return matmul_typed<uint64_t>(ctx);
    default: return unsupported(ctx.place(), ": MatMul has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
  }
}

template <typename T>
Status gemm_typed(exec::KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  const Tensor* c = ctx.input(2);
  const ir::Node& node = ctx.node();
  const bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  const T alpha = static_cast<T>(node.attr_float("alpha", 1.0));
  T beta = static_cast<T>(node.attr_float("beta", 1.0));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const int64_t m = y->dim(0), n = y->dim(1);
  const int64_t k = a.dim(ta ? 0 : 1);
  T* py = y->mut_data<T>();
  if (y->numel() == 0) return ok_status();
  if (c == nullptr || c->numel() == 0) {
    beta = T(0);
  } else if (beta != T(0)) {
    // Broadcast C into Y; the product then accumulates with beta.
    const Shape& cs = c->shape();
    const int64_t cm = cs.size() == 2 ? cs[0] : 1;
    const int64_t cn = cs.empty() ? 1 : cs.back();
    const T* pc = c->data<T>();
    for (int64_t i = 0; i < m; ++i) {
      const T* crow = pc + (cm == 1 ? 0 : i) * cn;
      T* yrow = py + i * n;
      if (cn == 1) std::fill(yrow, yrow + n, crow[0]);
      else std::copy(crow, crow + n, yrow);
    }
  }
  gemm_any<T>(ta, tb, m, n, k, alpha, a.data<T>(), a.dim(1), b.data<T>(), b.dim(1), beta, py, n, &ctx.pool());
  return ok_status();
}

Status gemm_kernel(exec::KernelContext& ctx) {
  switch (ctx.input(0)->dtype()) {
    case DType::kF32: return gemm_typed<float>(ctx);
    case DType::kF64: return gemm_typed<double>(ctx);
    case DType::kI32: return gemm_typed<int32_t>(ctx);
    case DType::kI64: return gemm_typed<int64_t>(ctx);
    case DType::kU32: return gemm_typed<uint32_t>(ctx);
    case DType::kU64: return gemm_typed<uint64_t>(ctx);
    default: return unsupported(ctx.place(), ": Gemm has no cpu kernel for ", dtype_name(ctx.input(0)->dtype()));
  }
}

}  // namespace

void register_linalg_kernels(KernelRegistry& r) {
  const std::vector<DType> types = {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kU32, DType::kU64};
  r.add_fn("MatMul", types, matmul_kernel);
  r.add_fn("Gemm", types, gemm_kernel);
}

}  // namespace tsr::cpu
