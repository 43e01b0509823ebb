// Image input for the Models panel: an image (decoded and resized by the page: RGBA8, the size
// image_size() asks for) becomes the model's first input, and the outputs are shown as a top-k
// list (a classifier's [K] or [1, K]) or a heatmap (2-D, or the first map of a 4-D NCHW output).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/tensor/tensor.h"
#include "tools/cli/json_writer.h"

namespace tsr::playground {

struct ImageSize {
  int channels = 3, height = 0, width = 0;
};

// The image size `input` wants: an f32 [N, C, H, W] tensor with C of 1 or 3; a dynamic H or W
// is taken as `fallback`. Errors name the input and say what it has instead.
Expected<ImageSize> image_size(const ir::TensorInfo& input, int fallback = 64);

// RGBA8 pixels (row-major, height x width, 4 bytes each) as f32 [1, C, H, W] in 0..1: RGB for
// C = 3, the mean of R, G and B for C = 1; alpha is dropped. `rgba` holds 4 * height * width bytes.
Tensor image_tensor(const uint8_t* rgba, const ImageSize& size);

// The k largest values of `t` (any numeric dtype) with their flat indices, largest first.
std::vector<std::pair<int64_t, double>> top_k(const Tensor& t, int k);

// True when `t` looks like a classifier's output: [K] or [1, K] with K > 1.
bool is_class_vector(const Tensor& t);

// The outputs drawn as the image view: per output a top-k list (with `labels` if the model has
// them) or a heatmap; other shapes as their summary line.
void draw_image_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& outputs,
                        const std::vector<std::string>& labels);

// [{"index":..., "label":..., "value":...}, ...]: the top 5 of `t`.
void write_top_k_json(cli::JsonWriter& w, const Tensor& t, const std::vector<std::string>& labels);

}  // namespace tsr::playground
