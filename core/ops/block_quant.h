// Block-quantized weight geometry, a declared shared header: the com.microsoft MatMulNBits and
// GatherBlockQuantized OpDefs (core/ops/families/block_quant.cpp) and the CPU kernels for them
// (backends/cpu/kernels/block_quant.cpp) read the attributes through it, so that both agree on the
// checks and on the packed layouts.
//
// Layouts (onnxruntime docs/ContribOperators.md, com.microsoft.MatMulNBits and
// com.microsoft.GatherBlockQuantized):
//   * codes of `bits` bits (2, 4, 8) are packed into bytes low bits first: with 4 bits, element 2j
//     is the low nibble of byte j and element 2j+1 its high nibble;
//   * MatMulNBits: B is u8 [N, k_blocks, blob] with k_blocks = ceil(K / block_size) and
//     blob = block_size * bits / 8, i.e. row n of the logical [N, K] weight (column n of the
//     K x N matrix A is multiplied with) is quantized in blocks of block_size along K, the last
//     block padded (the padding codes are never read as weights); scales are [N, k_blocks]
//     (or flat [N * k_blocks]); zero_points either u8 packed per row like B, [N, ceil(k_blocks *
//     bits / 8)] (or flat), or unpacked in A's dtype, [N, k_blocks]. Absent: 2^(bits-1).
//     dequantized w[n][k] = (code - zero_point) * scale of the block of k.
//   * GatherBlockQuantized with u8 data: the last axis is packed (8 / bits codes per byte) and is the
//     quantize axis; zero_points are packed along it the same way; absent: 2^(bits-1).
#pragma once

#include <cstdint>

#include "core/base/status.h"
#include "core/ir/graph.h"

namespace tsr::ops {

inline bool block_size_valid(int64_t b) { return b >= 16 && (b & (b - 1)) == 0; }

// Geometry of a MatMulNBits node (attributes K, N, bits, block_size, accuracy_level,
// weight_prepacked). Errors (kInvalidModel, message without a place): K or N < 1, bits not 2, 4
// or 8 (kUnsupported for 3, 5, 6, 7), block_size not a power of two >= 16, accuracy_level outside
// [0, 4], weight_prepacked != 0 (an EP-specific layout; kUnsupported).
struct NBitsGeometry {
  int64_t k = 0, n = 0, bits = 4, block = 32;
  int64_t k_blocks = 0;      // ceil(K / block)
  int64_t blob = 0;          // bytes per block: block * bits / 8
  int64_t zp_row_bytes = 0;  // bytes of one row of packed zero points: ceil(k_blocks * bits / 8)
  // The zero point when the input is absent: 2^(bits-1).
  int64_t default_zero_point() const { return int64_t{1} << (bits - 1); }
};

inline Expected<NBitsGeometry> nbits_geometry(const ir::Node& node) {
  NBitsGeometry g;
  g.k = node.attr_int("K");
  g.n = node.attr_int("N");
  g.bits = node.attr_int("bits", 4);
  g.block = node.attr_int("block_size");
  if (g.k < 1 || g.n < 1) return invalid_model("attributes K (", g.k, ") and N (", g.n, ") must be at least 1");
  if (g.bits < 2 || g.bits > 8) return invalid_model("attribute bits is ", g.bits, ", expected 2..8");
  if (g.bits != 2 && g.bits != 4 && g.bits != 8)
    return unsupported("attribute bits is ", g.bits, ": Tessera supports 2, 4 and 8 (as onnxruntime's CPU kernel)");
  if (!block_size_valid(g.block))
    return invalid_model("attribute block_size is ", g.block, ", expected a power of two >= 16");
  const int64_t level = node.attr_int("accuracy_level", 0);
  if (level < 0 || level > 4) return invalid_model("attribute accuracy_level is ", level, ", expected 0..4");
  if (node.attr_int("weight_prepacked", 0) != 0)
    return unsupported("attribute weight_prepacked is ", node.attr_int("weight_prepacked", 0),
                       ": B in an execution-provider-specific prepacked layout is not supported");
  g.k_blocks = (g.k + g.block - 1) / g.block;
  g.blob = g.block * g.bits / 8;
  g.zp_row_bytes = (g.k_blocks * g.bits + 7) / 8;
  return g;
}

// Geometry of a GatherBlockQuantized node with u8 data of rank `rank` (attributes bits,
// block_size, gather_axis, quantize_axis; negative axes count from the back). onnxruntime's rules
// for u8 data: gather_axis 0, quantize_axis the last (packed) axis, so rank >= 2. Errors
// (kInvalidModel, no place): any of these broken, bits outside 2..8; kUnsupported: bits 3, 5, 6, 7.
struct GatherBQGeometry {
  int64_t bits = 4, block = 128;
  int64_t per_byte() const { return 8 / bits; }
  int64_t default_zero_point() const { return int64_t{1} << (bits - 1); }
};

inline Expected<GatherBQGeometry> gather_bq_geometry(const ir::Node& node, int64_t rank) {
  GatherBQGeometry g;
  g.bits = node.attr_int("bits", 4);
  g.block = node.attr_int("block_size", 128);
  if (g.bits < 2 || g.bits > 8) return invalid_model("attribute bits is ", g.bits, ", expected 2..8");
  if (g.bits != 2 && g.bits != 4 && g.bits != 8)
    return unsupported("attribute bits is ", g.bits, ": u8 data holds 2, 4 or 8-bit codes");
  if (!block_size_valid(g.block))
    return invalid_model("attribute block_size is ", g.block, ", expected a power of two >= 16");
  if (rank < 2) return invalid_model("data has rank ", rank, ", expected at least 2 (u8 data: gather axis 0, packed last axis)");
  int64_t ga = node.attr_int("gather_axis", 0), qa = node.attr_int("quantize_axis", 1);
  if (ga < -rank || ga >= rank) return invalid_model("attribute gather_axis ", ga, " is out of range for rank ", rank);
  if (qa < -rank || qa >= rank) return invalid_model("attribute quantize_axis ", qa, " is out of range for rank ", rank);
  if (ga < 0) ga += rank;
  if (qa < 0) qa += rank;
  if (ga != 0) return invalid_model("attribute gather_axis is ", ga, "; with u8 data it must be 0");
  if (qa != rank - 1)
    return invalid_model("attribute quantize_axis is ", qa, "; with u8 data it must be the last axis (", rank - 1, ")");
  return g;
}

}  // namespace tsr::ops
