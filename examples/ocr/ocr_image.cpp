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

Expected<Image> decode_image(const unsigned char* data, size_t size, const std::string& name, int64_t max_pixels) {
  if (size > static_cast<size_t>(INT32_MAX)) return invalid_argument(name, ": the file is larger than 2 GiB");
  const int len = static_cast<int>(size);
  int w = 0, h = 0, c = 0;
  // The header first, so an image too large to hold is refused before stb allocates for it.
  if (!stbi_info_from_memory(data, len, &w, &h, &c))
    return invalid_argument(name, ": cannot decode the image (", stbi_failure_reason(), ")");
  if (w <= 0 || h <= 0) return invalid_argument(name, ": empty image");
  if (static_cast<int64_t>(w) * h > max_pixels)
    return invalid_argument(name, ": the image is ", w, " x ", h, " pixels, more than the limit of ", max_pixels);
  std::unique_ptr<unsigned char, void (*)(void*)> rgb(stbi_load_from_memory(data, len, &w, &h, &c, 3), stbi_image_free);
  if (!rgb) return invalid_argument(name, ": cannot decode the image (", stbi_failure_reason(), ")");
  Image img;
  img.width = w;
  img.height = h;
  img.rgb.assign(rgb.get(), rgb.get() + static_cast<size_t>(w) * h * 3);
  return img;
}

Expected<Image> load_image_file(const std::string& path, int64_t max_pixels) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path, ": cannot open the image");
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return not_found(path, ": cannot read the image");
  return decode_image(bytes.data(), bytes.size(), path, max_pixels);
}

Expected<Image> resize_image(const Image& img, int out_w, int out_h) {
  if (img.width <= 0 || img.height <= 0 || out_w <= 0 || out_h <= 0 ||
      img.rgb.size() != static_cast<size_t>(img.width) * img.height * 3)
    return invalid_argument("resize_image: a ", img.width, " x ", img.height, " image to ", out_w, " x ", out_h);
  if (out_w == img.width && out_h == img.height) return img;
  // [h, w, 3] in f32, resized on the first two axes by the runtime's Resize (bilinear,
  // half_pixel: the source coordinate (dst + 0.5) * in/out - 0.5 clamped at the edges, exactly
  // cv2.INTER_LINEAR without antialiasing, for any ratio).
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(DType::kF32, {img.height, img.width, 3}));
  std::copy(img.rgb.begin(), img.rgb.end(), t.mut_data<float>());
  eager::Context ctx;
  auto resize = [&](const eager::Tensor& x, int64_t h) {
    return eager::op("Resize", {x, eager::Tensor(), eager::Tensor(), eager::tensor<int64_t>({3}, {h, out_w, 3}, ctx)},
                     {ir::Attribute::make_string("mode", "linear"),
                      ir::Attribute::make_string("coordinate_transformation_mode", "half_pixel")});
  };
  // Bilinear is separable: the width first and then the height gives the same values as one
  // 2-D resize while the intermediate stays at most h x out_w (one call would resize the height
  // first, and a 1-pixel-high, very wide line would grow 48-fold before shrinking).
  const eager::Tensor resized = resize(resize(eager::Tensor::from(std::move(t), false, ctx), img.height), out_h);
  if (!resized.ok()) return ctx.status().with_context("resize_image");
  const float* src = resized.data().data<float>();
  Image out;
  out.width = out_w;
  out.height = out_h;
  out.rgb.resize(static_cast<size_t>(out_w) * out_h * 3);
  // cv2.resize on a uint8 image rounds and saturates to uint8.
  std::transform(src, src + out.rgb.size(), out.rgb.begin(),
                 [](float v) { return static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f)); });
  return out;
}

int rec_input_width(const Image& line) {
  const double ratio = static_cast<double>(line.width) / line.height;
  return static_cast<int>(
      std::min<double>(kOcrMaxWidth, std::floor(kOcrHeight * std::max(double(kOcrMinWidth) / kOcrHeight, ratio))));
}

Expected<Tensor> line_input(const Image& line, int width) {
  if (line.width <= 0 || line.height <= 0 || width <= 0 || width > kOcrMaxWidth)
    return invalid_argument("line_input: a ", line.width, " x ", line.height, " line at width ", width);
  const double ratio = static_cast<double>(line.width) / line.height;
  const int resized_w = static_cast<int>(std::max(1.0, std::min(std::ceil(kOcrHeight * ratio), double(width))));
  TSR_ASSIGN_OR_RETURN(Image resized, resize_image(line, resized_w, kOcrHeight));
  TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::zeros(DType::kF32, {1, 3, kOcrHeight, width}));
  float* dst = out.mut_data<float>();
  const size_t plane = static_cast<size_t>(kOcrHeight) * width;
  for (int y = 0; y < kOcrHeight; ++y)
    for (int xx = 0; xx < resized_w; ++xx) {
      const uint8_t* px = &resized.rgb[(static_cast<size_t>(y) * resized_w + xx) * 3];
      for (int ch = 0; ch < 3; ++ch)  // BGR: plane 0 gets blue (px[2])
        dst[ch * plane + static_cast<size_t>(y) * width + xx] = (px[2 - ch] / 255.0f - 0.5f) / 0.5f;
    }
  return out;
}

Expected<Tensor> preprocess_image(const unsigned char* data, size_t size, const std::string& name) {
  TSR_ASSIGN_OR_RETURN(Image img, decode_image(data, size, name));
  auto x = line_input(img, rec_input_width(img));
  if (!x.ok()) return x.status().with_context(name);
  return x;
}

Expected<Tensor> preprocess_image_file(const std::string& path) {
  TSR_ASSIGN_OR_RETURN(Image img, load_image_file(path));
  auto x = line_input(img, rec_input_width(img));
  if (!x.ok()) return x.status().with_context(path);
  return x;
}

}  // namespace tsr::ocr
