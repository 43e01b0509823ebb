// ConvTranspose geometry, shared by its OpDef (inference) and kernels.
#pragma once

#include <vector>

#include "core/base/status.h"
#include "core/ir/graph.h"

namespace tsr::ops {

struct ConvTransposeGeometry {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
  std::vector<int64_t> out;  // output spatial dims, -1 where the input dim is dynamic
};

// Resolves a ConvTranspose node for input spatial dims `in` (-1 = dynamic) and the weight's
// kernel dims. Errors (kInvalidModel, without the node's place) name the attribute.
Expected<ConvTransposeGeometry> resolve_conv_transpose(const ir::Node& node, const std::vector<int64_t>& in,
                                                       const std::vector<int64_t>& kernel);

}  // namespace tsr::ops
