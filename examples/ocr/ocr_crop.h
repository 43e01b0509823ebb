// Line crops for tessera-ocr --page: the pixels of a detected text box, straightened.
//
// crop_quad follows PaddleOCR's get_rotate_crop_image: the crop is
// max(|tl-tr|, |bl-br|) x max(|tl-bl|, |tr-br|) pixels (truncated), each output pixel (x, y) is
// sampled at the perspective map of the crop rectangle onto the quad (the corners (0,0), (w,0),
// (w,h), (0,h) go to tl, tr, br, bl), bilinear, with the border replicated (cv2.warpPerspective
// with BORDER_REPLICATE; PaddleOCR uses bicubic there, bilinear is what this example writes); a
// crop at least 1.5 times taller than wide is turned 90 degrees counter-clockwise (np.rot90), since
// vertical boxes hold text written along them.
//
// Errors: kInvalidArgument for a degenerate quad (a side under 1 pixel, or three corners in line).
#pragma once

#include "core/base/status.h"
#include "examples/ocr/ocr_geometry.h"
#include "examples/ocr/ocr_image.h"

namespace tsr::ocr {

Expected<Image> crop_quad(const Image& page, const Quad& quad);

// `img` turned by 180 degrees (for lines the classifier finds upside down).
Image rotate180(const Image& img);

}  // namespace tsr::ocr
