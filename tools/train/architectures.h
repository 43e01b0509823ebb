// Built-in example architectures for `tessera train`: inference graphs whose weights are
// constants, initialized as PyTorch initializes nn.Conv2d / nn.Linear (weights and biases uniform
// in [-1/sqrt(fan_in), 1/sqrt(fan_in)], i.e. kaiming_uniform with a = sqrt(5)).
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace tsr::train {

// The names build_architecture accepts: "lenet", "mlp".
std::vector<std::string> architecture_names();

// Builds an inference model: input "image" f32 [N, 1, H, W] (N dynamic), output "logits"
// f32 [N, num_classes].
//  - "lenet": LeNet-5 (LeCun et al. 1998) with ReLU and max pooling: Conv 5x5 (6, pad 2) ->
//    ReLU -> MaxPool 2 -> Conv 5x5 (16) -> ReLU -> MaxPool 2 -> Flatten -> Gemm 120 -> ReLU ->
//    Gemm 84 -> ReLU -> Gemm num_classes. Needs H, W >= 12 (28 x 28 gives 16 x 5 x 5 features).
//  - "mlp": Flatten -> Gemm 256 -> ReLU -> Gemm num_classes.
// Weights are drawn from std::mt19937_64(seed). Errors: unknown name (listing the known ones),
// an image too small for the architecture.
Expected<ir::Model> build_architecture(const std::string& name, int64_t height, int64_t width, int64_t num_classes,
                                       uint64_t seed);

}  // namespace tsr::train
