// The image path of tessera-ocr: decode a PNG/JPEG (or any format stb_image reads) and turn it
// into PP-OCRv4's recognition input.
//
// Preprocessing follows PaddleOCR's tools/infer/predict_rec.py (resize_norm_img) for a batch of
// one image: imgH = 48; imgW = int(48 * max(320/48, w/h)) (at most kOcrMaxWidth); the image is
// resized to (min(ceil(48 * w/h), imgW), 48) with bilinear interpolation (the runtime's own Resize
// op, half_pixel, which equals cv2.INTER_LINEAR), rounded to 8 bits as cv2 does for uint8 images,
// scaled as (x/255 - 0.5)/0.5 into [-1, 1], laid out NCHW and zero-padded on the right to imgW.
// Channels are in BGR order, because PaddleOCR reads images with OpenCV and feeds them
// unconverted, which is what the model was trained on. Grey and RGBA images become RGB (alpha is
// dropped, as cv2.imread does); 16-bit images are reduced to 8 bits.
//
// Errors (never an abort, whatever the bytes): kInvalidArgument naming `name` for data that does
// not decode or an image with more than kOcrMaxPixels pixels (bounds memory).
// Thread safety: the functions keep no state; each call may run on its own thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/status.h"
#include "core/tensor/tensor.h"

namespace tsr::ocr {

constexpr int kOcrHeight = 48;
constexpr int kOcrMinWidth = 320;
// Bounds the model input width (and so memory) for absurdly wide images: 48 x 16384 x 3 floats.
constexpr int kOcrMaxWidth = 16384;
// Bounds the decoded image (and so memory): 2^22 pixels (4096 x 1024), far above a text line.
constexpr int64_t kOcrMaxPixels = int64_t{1} << 22;

// The normalized, padded NCHW f32 tensor [1, 3, 48, imgW] for the encoded image `data`
// (`size` bytes); `name` is used in error messages.
Expected<Tensor> preprocess_image(const unsigned char* data, size_t size, const std::string& name);

// Reads the file `path` and preprocesses it. kNotFound when it cannot be read.
Expected<Tensor> preprocess_image_file(const std::string& path);

}  // namespace tsr::ocr
