// fuse_attention's operand tracing (opt_fuse_attention_views.cpp): how a MatMul operand of the
// attention pattern is reached from the tensor its Reshape / Transpose / scalar-scale chain starts
// from, as a strided view (strided_view.h), and the packed-QKV and KV-cache shapes around it.
// Private to core/passes (opt_fuse_attention.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/passes/optimize_internal.h"
#include "core/passes/strided_view.h"

namespace tsr::passes::opt::attention_views {

// The scalar value of a one-element f32 constant, if `id` is one.
std::optional<double> scalar_constant(const GraphIndex& ix, int32_t id);

const ir::TensorInfo& info(GraphIndex& ix, int32_t id);

// A Mul/Div of `node` by a scalar constant: the other (data) input and the factor it applies.
std::optional<std::pair<int32_t, double>> scalar_scale(const GraphIndex& ix, const ir::Node& n);

// The producer chain of an operand: operand <- op <- ... <- source, each step a Reshape,
// Transpose or scalar Mul/Div with static shapes. links[i] is the tensor after step i counting from
// the operand (links[0] = the operand); scales[i] the product of the factors between links[0] and
// links[i].
struct Chain {
  std::vector<int32_t> links, nodes;
  std::vector<double> scales;
};

Chain walk_back(GraphIndex& ix, int32_t operand);

// The view of links[0] (the operand) as seen from links[from] (the source), applying the chain
// forward, and the source's shape in the view's symbols. Null if a Reshape regroups dims no
// strided view can express.
struct SourceView {
  View view;
  Shape source;
};

std::optional<SourceView> view_from(GraphIndex& ix, const Chain& c, size_t from);

// Whether view `v` of a logical [batch..., len, d] operand (Kt: [batch..., d, len], transposed)
// reads its source as the 3-D attention form [B, len, H * d] does: element (b, h, l, x) at
// ((b * len + l) * H + h) * d + x. len (possibly a symbol) is the view's own.
bool matches_bsd(View v, bool transposed, int64_t b, int64_t h, int64_t d, int64_t& len);

// An operand's source in the 3-D form: the tensor (possibly still to be reshaped to [B, len, H*d])
// and the scale its chain applied.
struct Source {
  int32_t tensor = -1;
  double scale = 1.0;
  size_t depth = 0;      // chain steps replaced
  bool exact = false;    // already [B, len, H*d]
  int64_t len = 0;       // static len (for the Reshape) when not exact
};

// The farthest link of `c` whose view of the operand matches the 3-D form, preferring one already
// shaped [B, len, H*d] (no Reshape to insert).
std::optional<Source> bsd_source(GraphIndex& ix, const Chain& c, bool transposed, int64_t b, int64_t h, int64_t d);

// The head count a chain's view implies: the stride of the sequence dim over the head size.
std::optional<int64_t> implied_heads(GraphIndex& ix, const Chain& c, bool transposed, int64_t d);

// `t` = Slice(P, start, end) of P's last axis only (constants, step 1), P a static f32 tensor:
// P and the column the slice starts at. The end is checked through t's inferred shape.
struct Column {
  int32_t packed = -1;
  int64_t start = 0;
};

std::optional<Column> last_axis_slice(GraphIndex& ix, int32_t t);

// The KV cache pattern: `t` = Concat(past [B, H, P, d], new [B, H, L, d], axis 2), 4-D f32.
struct Cache {
  int32_t concat = -1, past = -1, fresh = -1;
};

std::optional<Cache> kv_concat(GraphIndex& ix, int32_t t);

}  // namespace tsr::passes::opt::attention_views
