// fuse_attention's packed QKV from a Split (opt_fuse_attention_split.cpp): GPT-style exports cut
// one QKV projection into Q, K, V with Split(P, axis = last) where torch's nn.MultiheadAttention
// uses Slices. Private to core/passes.
#pragma once

#include <cstdint>
#include <optional>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

// `t` = output i of Split(P, axis = P's last) with P a static f32 tensor and every output's
// shape inferred static (P's, with the last dim cut to the output's width, the widths summing to
// P's): P and the column output i starts at (the widths of outputs 0 .. i-1). Else nullopt.
struct SplitColumn {
  int32_t packed = -1;
  int64_t start = 0;
};
std::optional<SplitColumn> split_column(GraphIndex& ix, int32_t t);

// After the fusion: a Split whose input an Attention with packed_qkv reads and some of whose
// outputs nothing reads any more (the packed node took Q from P in place) becomes one Slice per
// output still read (a GPT prefill's K and V, which also feed the present_key/value Transposes),
// so that the unread columns are not copied; a Split with no output read is left to dce. Edits
// g.nodes in place (the Slices read only P and constants, so the order stays topological).
// Returns the number of Splits replaced.
int64_t slice_split_leftovers(ir::Graph& g);

}  // namespace tsr::passes::opt
