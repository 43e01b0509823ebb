// CPU kernels of the quantized matmuls on the shared int8 GEMM (qgemm.h) (semantics:
// core/ops/families/quantize.cpp): MatMulInteger, QLinearMatMul, com.microsoft
// DynamicQuantizeMatMul / MatMulIntegerToFloat. The convolutions are in qconv.cpp.
//
// The matmuls flatten A of any rank to M rows against a 2-D B packed once when it is a constant
// (with its zero point), else packed per call (per batch for a batched B of A's batch dims); the
// output stage writes i32 (MatMulInteger), f32 (the contrib ops) or requantized u8/i8
// (QLinearMatMul, scale a_scale * b_scale[j] / y_scale in f32 in that order, as onnxruntime).
// What the fast path does not cover (a per-row A zero point or scale, broadcast batch dims) runs
// the reference: the zero points subtracted into i32 copies, then the shared numpy.matmul
// (matmul.h).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/matmul.h"
#include "backends/cpu/kernels/qgemm.h"
#include "backends/cpu/kernels/qlinear_common.h"
#include "backends/cpu/kernels/quantize.h"
#include "core/base/mapped_pages.h"
#include "core/ops/fused_activation.h"

namespace tsr::cpu {

namespace {

using namespace qlinear;

// ---- The reference path ----

// Matrix geometry of a matmul operand: rows and columns of its last two dims (1-D A is one
// row, 1-D B one column, as numpy promotes them).
void matrix_dims(const Tensor& t, bool is_a, int64_t* rows, int64_t* cols) {
  if (t.rank() == 1) {
    *rows = is_a ? 1 : t.dim(0);
    *cols = is_a ? t.dim(0) : 1;
  } else {
    *rows = t.dim(t.rank() - 2);
    *cols = t.dim(t.rank() - 1);
  }
}

// (A - a_zp) @ (B - b_zp) into i32 `acc` (shaped like the output). A's zero point is per
// row, B's per column.
Status integer_matmul(KernelContext& ctx, size_t ia, size_t iazp, size_t ib, size_t ibzp, Tensor* acc) {
  const Tensor& a = *ctx.input(ia);
  const Tensor& b = *ctx.input(ib);
  int64_t m = 0, ka = 0, kb = 0, n = 0;
  matrix_dims(a, true, &m, &ka);
  matrix_dims(b, false, &kb, &n);
  TSR_ASSIGN_OR_RETURN(QParamIndex ax, qparam_index(ctx, ctx.input(iazp), iazp, ka, m, "row of A"));
  TSR_ASSIGN_OR_RETURN(QParamIndex bx, qparam_index(ctx, ctx.input(ibzp), ibzp, 1, n, "column of B"));
  TSR_ASSIGN_OR_RETURN(Tensor a32, centered_any(a, ctx.input(iazp), ax));
  TSR_ASSIGN_OR_RETURN(Tensor b32, centered_any(b, ctx.input(ibzp), bx));
  matmul_into<int32_t>(a32, b32, acc, ctx.pool());
  return ok_status();
}

Status matmul_integer(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  return integer_matmul(ctx, 0, 2, 1, 3, y);
}

// Requantization: in f32, acc * (a_scale * b_scale / y_scale) (requantize).
Status qlinear_matmul(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  TSR_ASSIGN_OR_RETURN(Tensor acc, Tensor::empty(DType::kI32, y->shape()));
  TSR_RETURN_IF_ERROR(integer_matmul(ctx, 0, 2, 3, 5, &acc));
  int64_t m = 0, k = 0, kb = 0, n = 0;
  matrix_dims(*ctx.input(0), true, &m, &k);
  matrix_dims(*ctx.input(3), false, &kb, &n);
  // Output element o sits in row (o / n) % m and column o % n.
  TSR_ASSIGN_OR_RETURN(QParamIndex as, qparam_index(ctx, ctx.input(1), 1, n, m, "row of A"));
  TSR_ASSIGN_OR_RETURN(QParamIndex bs, qparam_index(ctx, ctx.input(4), 4, 1, n, "column of B"));
  const float* pas = ctx.input(1)->data<float>();
  const float* pbs = ctx.input(4)->data<float>();
  const int32_t* pa = acc.data<int32_t>();
  return requantize(ctx, y, [&](int64_t o) { return pa[o]; }, [&](int64_t o) { return pas[as(o)] * pbs[bs(o)]; });
}

// ---- On qgemm ----

enum class QOp { kMatMulInteger, kQLinearMatMul, kDynamicQuantizeMatMul, kMatMulIntegerToFloat };

// Input positions of each matmul op (-1: the op has no such input).
struct QMatMulIo {
  int a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, bias;
};
constexpr QMatMulIo io_of(QOp op) {
  switch (op) {
    case QOp::kMatMulInteger: return {0, -1, 2, 1, -1, 3, -1, -1, -1};
    case QOp::kQLinearMatMul: return {0, 1, 2, 3, 4, 5, 6, 7, -1};
    case QOp::kDynamicQuantizeMatMul: return {0, -1, -1, 1, 2, 3, -1, -1, 4};
    case QOp::kMatMulIntegerToFloat: return {0, 2, 4, 1, 3, 5, -1, -1, 6};
  }
  return {};
}

const Tensor* input_at(const KernelContext& ctx, int i) { return i < 0 ? nullptr : ctx.input(size_t(i)); }

// B's packing for qgemm: B (K x N row-major at `b`), its zero point (0, 1 or N entries).
QgemmPackedB pack_b(int64_t k, int64_t n, const Tensor& b, const void* data, const Tensor* zp) {
  const int64_t count = zp ? (zp->numel() == 1 ? 1 : n) : 0;
  return qgemm_pack_b(k, n, data, b.dtype() == DType::kI8, n, false, zp ? zp->raw() : nullptr, count);
}

class QMatMulKernel final : public exec::Kernel {
 public:
  QMatMulKernel(QOp op, std::optional<QgemmPackedB> packed, ops::ActivationSpec act)
      : op_(op), io_(io_of(op)), packed_(std::move(packed)), act_(act) {}

  Status run(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(size_t(io_.a));
    const Tensor& b = *ctx.input(size_t(io_.b));
    const Tensor* a_zp = input_at(ctx, io_.a_zp);
    const Tensor* a_scale = input_at(ctx, io_.a_scale);
    const Tensor* b_zp = input_at(ctx, io_.b_zp);
    const Tensor* b_scale = input_at(ctx, io_.b_scale);
    int64_t m = 0, k = 0, kb = 0, n = 0;
    matrix_dims(a, true, &m, &k);
    matrix_dims(b, false, &kb, &n);
    if (k != kb) return ctx.error("inner dims differ: A ", shape_str(a.shape()), ", B ", shape_str(b.shape()));
    // B batched like A (same rank, same leading dims): one product per batch.
    bool batched_ok = b.rank() <= 2;
    if (b.rank() > 2 && a.rank() == b.rank()) {
      batched_ok = true;
      for (int64_t d = 0; d + 2 < a.rank(); ++d) batched_ok = batched_ok && a.dim(d) == b.dim(d);
    }
    const bool fast = batched_ok && qparam_count(a_zp, 1) >= 0 && qparam_count(a_scale, 1) >= 0 &&
                      qparam_count(b_zp, n) >= 0 && qparam_count(b_scale, n) >= 0 && k < (int64_t{1} << 15);
    if (!fast) {
      if (op_ == QOp::kMatMulInteger) return matmul_integer(ctx);
      if (op_ == QOp::kQLinearMatMul) return qlinear_matmul(ctx);
      return unsupported(ctx.place(), ": quantization parameters must be scalars or [N] (per column of B), and B 2-D or batched like A");
    }
    TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
    if (y->numel() == 0) return ok_status();
    const int64_t rows = y->numel() / n;  // every row of every batch of A
    const int64_t batches = b.rank() > 2 ? b.numel() / std::max<int64_t>(1, k * n) : 1;

    // A: as is, or quantized now (DynamicQuantizeMatMul: exactly DynamicQuantizeLinear's result).
    const void* pa = a.raw();
    bool a_signed = a.dtype() == DType::kI8;
    int32_t a_zero = a_zp ? q_scalar(*a_zp) : 0;
    float a_s = a_scale ? a_scale->data<float>()[0] : 1.0f;
    if (op_ == QOp::kDynamicQuantizeMatMul) {
      TSR_ASSIGN_OR_RETURN(void* qa, ctx.scratch(size_t(a.numel())));
      const DynamicQuantParams q = dynamic_quantize_u8(a.data<float>(), a.numel(), static_cast<uint8_t*>(qa), &ctx.pool());
      pa = qa;
      a_signed = false;
      a_zero = q.zero_point;
      a_s = q.scale;
    }

    QgemmOutput out;
    out.row_stride = n;
    float* scale = nullptr;  // from the run's scratch arena: a steady-state run allocates nothing
    int64_t ns = 0;
    if (op_ != QOp::kMatMulInteger) {
      // onnxruntime's rounding: a_scale * b_scale[j] (/ y_scale), in f32, in that order.
      ns = b_scale->numel();
      TSR_ASSIGN_OR_RETURN(void* mem, ctx.scratch(size_t(ns) * sizeof(float)));
      scale = static_cast<float*>(mem);
      const float* bs = b_scale->data<float>();
      for (int64_t j = 0; j < ns; ++j) scale[j] = a_s * bs[j];
      out.scale = scale;
      out.scale_per_col = ns > 1;
    }
    if (op_ == QOp::kMatMulInteger) {
      out.kind = QgemmOutput::kInt32;
    } else if (op_ == QOp::kQLinearMatMul) {
      const Tensor& ys = *ctx.input(size_t(io_.y_scale));
      const Tensor& yz = *ctx.input(size_t(io_.y_zp));
      if (ys.numel() != 1 || yz.numel() != 1) return ctx.error("y_scale and y_zero_point must be scalars");
      const float y_s = ys.data<float>()[0];
      for (int64_t j = 0; j < ns; ++j) scale[j] = scale[j] / y_s;
      out.kind = QgemmOutput::kQuant;
      out.out_signed = y->dtype() == DType::kI8;
      out.out_zp = q_scalar(yz);
    } else {
      out.kind = QgemmOutput::kFloat;
      const Tensor* bias = input_at(ctx, io_.bias);
      if (bias && (bias->rank() != 1 || bias->numel() != n))
        return ctx.error("input[", io_.bias, "] (bias): shape ", shape_str(bias->shape()), ", expected [", n, "]");
      out.bias_f32 = bias ? bias->data<float>() : nullptr;
      out.act = &act_;
    }

    const size_t out_bytes = dtype_size(y->dtype());
    const int64_t a_elem = 1;  // u8/s8
    const int64_t rows_per_batch = rows / batches;
    for (int64_t bt = 0; bt < batches; ++bt) {
      std::optional<QgemmPackedB> local;
      if (!packed_ || batches > 1 || packed_->k != k || packed_->n != n)
        local = pack_b(k, n, b, static_cast<const char*>(b.raw()) + bt * k * n, b_zp);
      const QgemmPackedB& pb = local ? *local : *packed_;
      out.out = static_cast<char*>(y->raw_mut()) + size_t(bt * rows_per_batch * n) * out_bytes;
      qgemm(rows_per_batch, static_cast<const char*>(pa) + bt * rows_per_batch * k * a_elem, a_signed, k, a_zero, pb,
            out, &ctx.pool());
    }
    return ok_status();
  }

 private:
  QOp op_;
  QMatMulIo io_;
  std::optional<QgemmPackedB> packed_;  // constant 2-D B with its constant zero point
  ops::ActivationSpec act_;             // the f32 contrib ops' fused activation (fuse_activation)
};

template <QOp kOp>
Expected<std::unique_ptr<exec::Kernel>> create_qmatmul(const exec::KernelInit& init) {
  constexpr QMatMulIo io = io_of(kOp);
  TSR_ASSIGN_OR_RETURN(const ops::ActivationSpec act, ops::activation_of(init.node, init.place));
  auto constant = [&](int i) -> const Tensor* {
    return i >= 0 && size_t(i) < init.constant_inputs.size() ? init.constant_inputs[size_t(i)] : nullptr;
  };
  const bool has_zp = io.b_zp >= 0 && size_t(io.b_zp) < init.node.inputs.size() && init.node.inputs[size_t(io.b_zp)] >= 0;
  const Tensor* b = constant(io.b);
  const Tensor* zp = constant(io.b_zp);
  std::optional<QgemmPackedB> packed;
  if (b && (b->dtype() == DType::kU8 || b->dtype() == DType::kI8) && b->rank() >= 1 && b->rank() <= 2 &&
      (!has_zp || zp)) {
    int64_t k = 0, n = 0;
    matrix_dims(*b, false, &k, &n);
    if (qparam_count(zp, n) >= 0 && (!zp || zp->dtype() == b->dtype()) && k < (int64_t{1} << 15))
      packed = pack_b(k, n, *b, b->raw(), zp);
  }
  // Runs read the packed copy: the .tsr mapping's pages of the raw weights need not stay resident.
  if (packed) release_mapped_pages(b->raw(), b->nbytes());
  return std::unique_ptr<exec::Kernel>(new QMatMulKernel(kOp, std::move(packed), act));
}

}  // namespace

void register_qlinear_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("MatMulInteger") r.add("MatMulInteger", {DType::kU8, DType::kI8}, &create_qmatmul<QOp::kMatMulInteger>);
  TSR_IF_SELECTED("QLinearMatMul") r.add("QLinearMatMul", {DType::kU8, DType::kI8}, &create_qmatmul<QOp::kQLinearMatMul>);
  TSR_IF_SELECTED("com.microsoft::DynamicQuantizeMatMul")
  r.add("com.microsoft::DynamicQuantizeMatMul", {DType::kF32}, &create_qmatmul<QOp::kDynamicQuantizeMatMul>);
  TSR_IF_SELECTED("com.microsoft::MatMulIntegerToFloat")
  r.add("com.microsoft::MatMulIntegerToFloat", {DType::kU8, DType::kI8}, &create_qmatmul<QOp::kMatMulIntegerToFloat>);
}

}  // namespace tsr::cpu
