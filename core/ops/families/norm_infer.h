// Type inference shared by the layer-norm-shaped ops: LayerNormalization (nn_norm.cpp) and the
// RMS norms RMSNormalization / SimplifiedLayerNormalization (transformer_norm.cpp).
#pragma once

#include "core/ops/op_def.h"

namespace tsr::ops {

// X (float), Scale and the optional B (X's dtype, broadcasting unidirectionally to the normalized
// shape X.shape[axis:]) -> Y (X's type) and statistics outputs (stash_type dtype, X's shape with
// the normalized dims set to 1). Errors: a bad axis, stash_type or Scale/B shape. Defined in nn_norm.cpp.
Status infer_layer_norm(InferContext& ctx);

}  // namespace tsr::ops
