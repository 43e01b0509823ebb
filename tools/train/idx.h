// IDX files (the MNIST / Fashion-MNIST container; LeCun et al., "THE MNIST DATABASE of handwritten
// digits", file-format section): a big-endian header {0, 0, type, ndims, dims[ndims] as u32}
// followed by the elements, row-major. Files may be gzip-compressed (read through zlib).
#pragma once

#include <string>

#include "core/tensor/tensor.h"

namespace tsr::train {

// Reads an IDX file (plain or .gz). Element types: 0x08 ubyte -> u8, 0x09 byte -> i8,
// 0x0B short -> i16, 0x0C int -> i32, 0x0D float -> f32, 0x0E double -> f64 (converted from
// big-endian). The tensor's shape is the header's dims.
// Errors: kNotFound (no file), kInvalidArgument (bad magic, type, rank > 8, a header or data size
// that does not match the file: "<path>: ..."), kResource (larger than max_tensor_bytes()).
Expected<Tensor> read_idx(const std::string& path);

// One split of an image-classification dataset in IDX form.
struct Dataset {
  Tensor images;  // f32 [N, 1, H, W], pixel / 255 (values in [0, 1])
  Tensor labels;  // i64 [N], class indices
  int64_t num_classes = 0;  // max label + 1
};

// Loads "<dir>/<split>-images-idx3-ubyte[.gz]" and "<dir>/<split>-labels-idx1-ubyte[.gz]"
// (split = "train" or "t10k", the MNIST naming). Errors: missing files (naming both candidate
// paths), images that are not u8 [N, H, W], labels that are not u8 [N], or counts that differ.
Expected<Dataset> load_idx_dataset(const std::string& dir, const std::string& split);

}  // namespace tsr::train
