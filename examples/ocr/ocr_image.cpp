#include "examples/ocr/ocr_image.h"

#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "core/include/tessera/eager.h"

namespace tsr::ocr {

Expected<Tensor> preprocess_image(const unsigned char* data, size_t size, const std::string& name) {
  if (size > static_cast<size_t>(INT32_MAX)) return invalid_argument(name, ": the file is larger than 2 GiB");
  const int len = static_cast<int>(size);
  int w = 0, h = 0, c = 0;
  // The header first, so an image too large to hold is refused before stb allocates for it.
  if (!stbi_info_from_memory(data, len, &w, &h, &c))
    return invalid_argument(name, ": cannot decode the image (", stbi_failure_reason(), ")");
  if (w <= 0 || h <= 0) return invalid_argument(name, ": empty image");
  if (static_cast<int64_t>(w) * h > kOcrMaxPixels)
    return invalid_argument(name, ": the image is ", w, " x ", h, " pixels, more than the limit of ", kOcrMaxPixels);
  std::unique_ptr<unsigned char, void (*)(void*)> rgb(stbi_load_from_memory(data, len, &w, &h, &c, 3), stbi_image_free);
  if (!rgb) return invalid_argument(name, ": cannot decode the image (", stbi_failure_reason(), ")");

  const double ratio = static_cast<double>(w) / h;
  const int img_w = static_cast<int>(
      std::min<double>(kOcrMaxWidth, std::floor(kOcrHeight * std::max(double(kOcrMinWidth) / kOcrHeight, ratio))));
  const int resized_w = static_cast<int>(std::max(1.0, std::min(std::ceil(kOcrHeight * ratio), double(img_w))));

  // [h, w, 3] in f32, resized on the first two axes by the runtime's Resize (bilinear,
  // half_pixel: the source coordinate (dst + 0.5) * in/out - 0.5 clamped at the edges, exactly
  // cv2.INTER_LINEAR without antialiasing, for any ratio).
  TSR_ASSIGN_OR_RETURN(Tensor img, Tensor::zeros(DType::kF32, {h, w, 3}));
  std::copy_n(rgb.get(), static_cast<size_t>(w) * h * 3, img.mut_data<float>());
  rgb.reset();
  eager::Context ctx;
  auto resize = [&](const eager::Tensor& t, int64_t out_h) {
    return eager::op("Resize", {t, eager::Tensor(), eager::Tensor(), eager::tensor<int64_t>({3}, {out_h, resized_w, 3}, ctx)},
                     {ir::Attribute::make_string("mode", "linear"),
                      ir::Attribute::make_string("coordinate_transformation_mode", "half_pixel")});
  };
  // Bilinear is separable: the width first and then the height gives the same values as one
  // 2-D resize while the intermediate stays at most h x 16384 (one call would resize the height
  // first, and a 1-pixel-high, very wide image would grow 48-fold before shrinking).
  const eager::Tensor resized = resize(resize(eager::Tensor::from(std::move(img), false, ctx), h), kOcrHeight);
  if (!resized.ok()) return ctx.status().with_context(name + ": resize");
  const float* src = resized.data().data<float>();

  TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::zeros(DType::kF32, {1, 3, kOcrHeight, img_w}));
  float* dst = out.mut_data<float>();
  const size_t plane = static_cast<size_t>(kOcrHeight) * img_w;
  for (int y = 0; y < kOcrHeight; ++y)
    for (int xx = 0; xx < resized_w; ++xx) {
      const float* px = &src[(static_cast<size_t>(y) * resized_w + xx) * 3];
      for (int ch = 0; ch < 3; ++ch) {  // BGR: plane 0 gets blue (px[2])
        // cv2.resize on a uint8 image rounds and saturates to uint8.
        const float v = std::clamp(std::nearbyint(px[2 - ch]), 0.0f, 255.0f);
        dst[ch * plane + static_cast<size_t>(y) * img_w + xx] = (v / 255.0f - 0.5f) / 0.5f;
      }
    }
  return out;
}

Expected<Tensor> preprocess_image_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path, ": cannot open the image");
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return not_found(path, ": cannot read the image");
  return preprocess_image(bytes.data(), bytes.size(), path);
}

}  // namespace tsr::ocr
