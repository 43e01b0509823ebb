// CPU kernels for Einsum, Det and EyeLike (semantics: core/ops/families/matrix.cpp).
// Einsum is a reference kernel: it walks every combination of labels (output labels outermost)
// and accumulates products in double / int64.
#include <cmath>
#include <map>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/ops/einsum.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

template <typename Acc>
Status einsum_typed(KernelContext& ctx, const std::vector<std::string>& in, const std::string& out, Tensor& y) {
  // All labels: output ones first, then the summed ones.
  std::string labels = out;
  for (const auto& t : in)
    for (char c : t)
      if (labels.find(c) == std::string::npos) labels += c;
  std::map<char, int64_t> size;
  for (size_t k = 0; k < in.size(); ++k)
    for (size_t d = 0; d < in[k].size(); ++d) {
      const int64_t v = ctx.input(k)->dim(static_cast<int64_t>(d));
      auto it = size.find(in[k][d]);
      if (it == size.end() || it->second == 1) size[in[k][d]] = v;
      else if (v != 1 && v != it->second) return ctx.error("einsum label sizes ", it->second, " and ", v, " differ");
    }
  const size_t nl = labels.size(), nin = in.size();
  std::vector<int64_t> dims(nl);
  for (size_t l = 0; l < nl; ++l) dims[l] = size[labels[l]];
  // strides[k][l]: how far operand k moves when label l advances (0 for broadcast size-1 dims).
  std::vector<std::vector<int64_t>> strides(nin, std::vector<int64_t>(nl, 0));
  for (size_t k = 0; k < nin; ++k) {
    const auto st = shape_strides(ctx.input(k)->shape());
    for (size_t d = 0; d < in[k].size(); ++d) {
      const size_t l = labels.find(in[k][d]);
      if (ctx.input(k)->dim(static_cast<int64_t>(d)) != 1 || dims[l] == 1) strides[k][l] += st[d];
    }
  }
  int64_t out_count = 1, sum_count = 1;
  for (size_t l = 0; l < nl; ++l) (l < out.size() ? out_count : sum_count) *= dims[l];
  // Offset of every operand for a mixed-radix index over labels [lo, hi).
  auto offsets = [&](int64_t linear, size_t lo, size_t hi, std::vector<int64_t>& off) {
    for (size_t l = hi; l-- > lo;) {
      const int64_t i = linear % dims[l];
      linear /= dims[l];
      for (size_t k = 0; k < nin; ++k) off[k] += i * strides[k][l];
    }
  };
  std::vector<int64_t> base(nin), off(nin);
  for (int64_t o = 0; o < out_count; ++o) {
    std::fill(base.begin(), base.end(), 0);
    offsets(o, 0, out.size(), base);
    Acc acc = 0;
    for (int64_t s = 0; s < sum_count; ++s) {
      off = base;
      offsets(s, out.size(), nl, off);
      Acc prod = 1;
      for (size_t k = 0; k < nin; ++k) prod *= static_cast<Acc>(ctx.input(k)->scalar_f64(off[k]));
      acc += prod;
    }
    dispatch_dtype(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_arithmetic_v<T>) y.mut_data<T>()[o] = static_cast<T>(acc);
    });
  }
  return ok_status();
}

Status einsum(KernelContext& ctx) {
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) ranks.push_back(ctx.input(i)->rank());
  std::vector<std::string> in;
  std::string out;
  Status s = ops::einsum_labels(ctx.node().attr_string("equation"), ranks, &in, &out);
  if (!s.ok()) return s.with_context(ctx.place());
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  if (dtype_is_float(y->dtype())) return einsum_typed<double>(ctx, in, out, *y);
  return einsum_typed<int64_t>(ctx, in, out, *y);
}

Status det(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const int64_t n = x.dim(x.rank() - 1);
  std::vector<double> a(static_cast<size_t>(n * n));
  for (int64_t b = 0; b < y->numel(); ++b) {
    for (int64_t i = 0; i < n * n; ++i) a[static_cast<size_t>(i)] = x.scalar_f64(b * n * n + i);
    double d = 1;
    for (int64_t c = 0; c < n && d != 0; ++c) {  // LU with partial pivoting
      int64_t p = c;
      for (int64_t r = c + 1; r < n; ++r)
        if (std::fabs(a[static_cast<size_t>(r * n + c)]) > std::fabs(a[static_cast<size_t>(p * n + c)])) p = r;
      if (a[static_cast<size_t>(p * n + c)] == 0) { d = 0; break; }
      if (p != c) {
        for (int64_t k = 0; k < n; ++k) std::swap(a[static_cast<size_t>(p * n + k)], a[static_cast<size_t>(c * n + k)]);
        d = -d;
      }
      const double piv = a[static_cast<size_t>(c * n + c)];
      d *= piv;
      for (int64_t r = c + 1; r < n; ++r) {
        const double f = a[static_cast<size_t>(r * n + c)] / piv;
        for (int64_t k = c; k < n; ++k) a[static_cast<size_t>(r * n + k)] -= f * a[static_cast<size_t>(c * n + k)];
      }
    }
    if (y->dtype() == DType::kF32) y->mut_data<float>()[b] = static_cast<float>(d);
    else if (y->dtype() == DType::kF64) y->mut_data<double>()[b] = d;
    else y->mut_data<Half>()[b].bits = f32_to_f16(static_cast<float>(d));
  }
  return ok_status();
}

Status eye_like(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const int64_t rows = y->dim(0), cols = y->dim(1), k = ctx.node().attr_int("k");
  bool ok = dispatch_dtype(y->dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = y->mut_data<T>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const bool one = j - i == k;
        if constexpr (std::is_same_v<T, Half>) p[i * cols + j].bits = one ? 0x3c00 : 0;
        else if constexpr (std::is_same_v<T, BFloat16>) p[i * cols + j].bits = one ? 0x3f80 : 0;
        else p[i * cols + j] = static_cast<T>(one ? 1 : 0);
      }
  });
  if (!ok) return unsupported(ctx.place(), ": EyeLike of ", dtype_name(y->dtype()));
  return ok_status();
}

}  // namespace

void register_matrix_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("Einsum") r.add_fn("Einsum", {DType::kF32, DType::kF64, DType::kF16, DType::kI32, DType::kI64, DType::kU32, DType::kU64}, einsum);
  TSR_IF_SELECTED("Det") r.add_fn("Det", {DType::kF32, DType::kF64, DType::kF16}, det);
  TSR_IF_SELECTED("EyeLike") r.add_fn("EyeLike", {}, eye_like);
}

}  // namespace tsr::cpu
