// ConvTranspose geometry, shared by its OpDef (inference) and kernels.
#pragma once

#include <vector>

#include "core/base/status.h"
#include "core/ir/graph.h"

namespace tsr::ops {

struct ConvTransposeGeometry {
  Ints kernel, strides, dilations, pad_begin, pad_end;
  Ints out;  // output spatial dims, -1 where the input dim is dynamic
};

// Resolves a ConvTranspose node for input spatial dims `in` (-1 = dynamic) and the weight's
// kernel dims. Errors (kInvalidModel, without the node's place) name the attribute.
Expected<ConvTransposeGeometry> resolve_conv_transpose(const ir::Node& node, const Ints& in, const Ints& kernel);

}  // namespace tsr::ops
