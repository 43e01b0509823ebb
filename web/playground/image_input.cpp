#include "web/playground/image_input.h"

#include <algorithm>
#include <numeric>

#include "imgui.h"
#include "web/playground/widgets.h"

namespace tsr::playground {
namespace {

constexpr int kTopK = 5;

std::string label_of(const std::vector<std::string>& labels, int64_t i) {
  return i >= 0 && static_cast<size_t>(i) < labels.size() ? labels[static_cast<size_t>(i)] : "class " + std::to_string(i);
}

}  // namespace

Expected<ImageSize> image_size(const ir::TensorInfo& input, int fallback) {
  if (input.kind != ValueKind::kTensor || input.dtype != DType::kF32 || !input.has_shape || input.shape.size() != 4)
    return invalid_argument("input \"", input.name, "\" is not an image: it needs f32 [N, C, H, W], it has ",
                            dtype_name(input.dtype), " ", input.has_shape ? shape_str(input.shape) : std::string("[*]"));
  const Shape& s = input.shape;
  if (s[1] != 1 && s[1] != 3)
    return invalid_argument("input \"", input.name, "\" has ", s[1], " channels; an image gives 1 (grey) or 3 (RGB)");
  ImageSize size;
  size.channels = static_cast<int>(s[1]);
  size.height = s[2] > 0 ? static_cast<int>(s[2]) : fallback;
  size.width = s[3] > 0 ? static_cast<int>(s[3]) : fallback;
  return size;
}

Tensor image_tensor(const uint8_t* rgba, const ImageSize& size) {
  const int64_t plane = static_cast<int64_t>(size.height) * size.width;
  std::vector<float> v(static_cast<size_t>(plane * size.channels));
  for (int64_t p = 0; p < plane; ++p) {
    const uint8_t* px = rgba + 4 * p;
    if (size.channels == 1) {
      v[static_cast<size_t>(p)] = (static_cast<float>(px[0]) + px[1] + px[2]) / (3.0f * 255.0f);
    } else {
      for (int c = 0; c < 3; ++c) v[static_cast<size_t>(c * plane + p)] = static_cast<float>(px[c]) / 255.0f;
    }
  }
  return Tensor::from<float>({1, size.channels, size.height, size.width}, v);
}

std::vector<std::pair<int64_t, double>> top_k(const Tensor& t, int k) {
  const std::vector<double> v = tensor_values(t);
  std::vector<int64_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  const size_t n = std::min(idx.size(), static_cast<size_t>(std::max(k, 0)));
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(),
                    [&](int64_t a, int64_t b) { return v[static_cast<size_t>(a)] > v[static_cast<size_t>(b)]; });
  std::vector<std::pair<int64_t, double>> out;
  for (size_t i = 0; i < n; ++i) out.emplace_back(idx[i], v[static_cast<size_t>(idx[i])]);
  return out;
}

bool is_class_vector(const Tensor& t) {
  if (t.kind() != ValueKind::kTensor) return false;
  const Shape& s = t.shape();
  return (s.size() == 1 && s[0] > 1) || (s.size() == 2 && s[0] == 1 && s[1] > 1);
}

void draw_image_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& outputs,
                        const std::vector<std::string>& labels) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor& t = outputs[k];
    ImGui::PushID(static_cast<int>(k));
    ImGui::Text("%s  %s", k < names.size() ? names[k].c_str() : "?", tensor_summary(t).c_str());
    const Shape& s = t.shape();
    if (is_class_vector(t)) {
      const auto best = top_k(t, kTopK);
      const double top = best.empty() ? 1.0 : std::max(std::abs(best[0].second), 1e-12);
      for (const auto& [i, value] : best) {
        ImGui::ProgressBar(static_cast<float>(std::clamp(value / top, 0.0, 1.0)), ImVec2(200, 0), "");
        ImGui::SameLine();
        ImGui::Text("%-10s %.4f", label_of(labels, i).c_str(), value);
      }
      track("top-k");
    } else if (t.kind() == ValueKind::kTensor && (s.size() == 2 || s.size() == 4) && t.numel() > 0) {
      // 2-D as is; 4-D NCHW: the first image's first channel.
      const int rows = static_cast<int>(s[s.size() - 2]), cols = static_cast<int>(s.back());
      std::vector<double> v = tensor_values(t);
      v.resize(static_cast<size_t>(rows) * static_cast<size_t>(cols));
      const float cell = std::clamp(320.0f / static_cast<float>(std::max(rows, cols)), 1.0f, 40.0f);
      draw_heatmap(v, rows, cols, ImVec2(cell * static_cast<float>(cols), cell * static_cast<float>(rows)));
      track("heatmap");
    }
    ImGui::PopID();
  }
}

void write_top_k_json(cli::JsonWriter& w, const Tensor& t, const std::vector<std::string>& labels) {
  w.begin_array();
  if (is_class_vector(t))
    for (const auto& [i, value] : top_k(t, kTopK))
      w.begin_object().key("index").value(i).key("label").value(label_of(labels, i)).key("value").value(value).end_object();
  w.end_array();
}

}  // namespace tsr::playground
