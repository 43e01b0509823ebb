// The image path of tessera-ocr: decode a PNG/JPEG (or any format stb_image reads), resize it, and
// turn it into the inputs of the PP-OCR models.
//
// Images are 8-bit RGB, interleaved, row-major (Image). Grey and RGBA images become RGB (alpha is
// dropped, as cv2.imread does); 16-bit images are reduced to 8 bits.
//
// Resizing (resize_image) is bilinear with half-pixel centres, through the runtime's own Resize
// op: exactly cv2.INTER_LINEAR without antialiasing, rounded back to 8 bits as cv2 does for uint8
// images (PaddleOCR resizes uint8 images with cv2).
//
// Line inputs (recognizer and 180-degree classifier) follow PaddleOCR's resize_norm_img for a
// batch of one image: height 48; the line is resized to (min(ceil(48 * w/h), width), 48), scaled
// as (x/255 - 0.5)/0.5 into [-1, 1], laid out NCHW and zero-padded on the right to `width`.
// The recognizer's width is int(48 * max(320/48, w/h)) (at most kOcrMaxWidth); the classifier's
// is fixed at 192. Channels are in BGR order, because PaddleOCR reads images with OpenCV and
// feeds them unconverted, which is what the models were trained on.
//
// Errors (never an abort, whatever the bytes): kInvalidArgument naming `name` for data that does
// not decode or an image with more than max_pixels pixels (bounds memory; kOcrMaxPixels for the
// line functions).
// Thread safety: the functions keep no state; each call may run on its own thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/tensor/tensor.h"

namespace tsr::ocr {

constexpr int kOcrHeight = 48;
constexpr int kOcrMinWidth = 320;
// Bounds the model input width (and so memory) for absurdly wide images: 48 x 16384 x 3 floats.
constexpr int kOcrMaxWidth = 16384;
// Bounds the decoded image (and so memory): 2^22 pixels (4096 x 1024, 2048 x 2048) for a line.
constexpr int64_t kOcrMaxPixels = int64_t{1} << 22;
// A page may be a phone photo: 2^25 pixels (33.5 M; 12 MP is 4032 x 3024).
constexpr int64_t kOcrMaxPagePixels = int64_t{1} << 25;

// An 8-bit RGB image: pixel (x, y) channel c is rgb[(y * width + x) * 3 + c].
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;
};

// Decodes the encoded image `data` (`size` bytes); `name` is used in error messages.
Expected<Image> decode_image(const unsigned char* data, size_t size, const std::string& name,
                             int64_t max_pixels = kOcrMaxPixels);

// Reads the file `path` and decodes it. kNotFound when it cannot be read.
Expected<Image> load_image_file(const std::string& path, int64_t max_pixels = kOcrMaxPixels);

// `img` resized to out_w x out_h (both >= 1) with bilinear interpolation (see above).
Expected<Image> resize_image(const Image& img, int out_w, int out_h);

// The recognizer's input width for a line image: int(48 * max(320/48, w/h)), at most kOcrMaxWidth.
int rec_input_width(const Image& line);

// The normalized, padded NCHW f32 tensor [1, 3, 48, width] of a line image (see above).
Expected<Tensor> line_input(const Image& line, int width);

// decode_image + line_input(rec_input_width): the recognizer's input for an encoded line image.
Expected<Tensor> preprocess_image(const unsigned char* data, size_t size, const std::string& name);

// Reads the file `path` and preprocesses it. kNotFound when it cannot be read.
Expected<Tensor> preprocess_image_file(const std::string& path);

}  // namespace tsr::ocr
