// tessera QLinearLookup (semantics: core/ops/families/quantize.cpp): Y[i] = table[byte of X[i]],
// what quantize_lookup makes of an elementwise function between DequantizeLinear and
// QuantizeLinear (core/passes/opt_quantize_lookup.cpp). Eight codes per 64-bit load and store,
// one table read each from a stack copy of the table (L1).
#include <cstdint>
#include <cstring>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

void lookup_bytes(const uint8_t* x, int64_t n, const uint8_t* table, uint8_t* y) {
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
  lookup_bytes(x.data<uint8_t>(), x.numel(),
               table->data<uint8_t>(), y->mut_data<uint8_t>());
  return ok_status();
}

}  // namespace

void register_qlookup_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("QLinearLookup") r.add_fn("QLinearLookup", {DType::kU8, DType::kI8}, qlinear_lookup);
}

}  // namespace tsr::cpu
