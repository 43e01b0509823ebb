#include "web/playground/widgets.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/tensor/dtype.h"

namespace tsr::playground {
namespace {

std::map<std::string, ImVec4, std::less<>>& registry() {
  static std::map<std::string, ImVec4, std::less<>> rects;
  return rects;
}

}  // namespace

void track(std::string_view label) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  registry()[std::string(label)] = ImVec4(a.x, a.y, b.x - a.x, b.y - a.y);
}

void clear_tracked() { registry().clear(); }

bool tracked_rect(std::string_view label, float out[4]) {
  auto it = registry().find(label);
  if (it == registry().end()) return false;
  out[0] = it->second.x, out[1] = it->second.y, out[2] = it->second.z, out[3] = it->second.w;
  return true;
}

std::vector<double> tensor_values(const Tensor& t) {
  std::vector<double> v;
  if (t.kind() != ValueKind::kTensor || !t.defined() || t.dtype() == DType::kString) return v;
  v.reserve(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.scalar_f64(i));
  return v;
}

std::string tensor_summary(const Tensor& t) {
  if (t.kind() != ValueKind::kTensor) return std::string(value_kind_name(t.kind()));
  return std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape());
}

std::string tensor_text(const Tensor& t, size_t max_values) {
  const std::vector<double> v = tensor_values(t);
  std::string s;
  char buf[32];
  for (size_t i = 0; i < v.size() && i < max_values; ++i) {
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", v[i]);
    s += buf;
  }
  if (v.size() > max_values) s += ", ...";
  return s;
}

ImU32 diverging_color(double t, int alpha) {
  t = std::clamp(std::isfinite(t) ? t : 0.5, 0.0, 1.0);
  // Blue (0.23, 0.30, 0.75) -> white -> red (0.71, 0.02, 0.15), linear in each half.
  const float lo[3] = {0.23f, 0.30f, 0.75f}, mid[3] = {0.95f, 0.95f, 0.95f}, hi[3] = {0.71f, 0.02f, 0.15f};
  const float* a = t < 0.5 ? lo : mid;
  const float* b = t < 0.5 ? mid : hi;
  const float u = static_cast<float>(t < 0.5 ? t * 2 : t * 2 - 1);
  return ImGui::GetColorU32(ImVec4(a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u, a[2] + (b[2] - a[2]) * u,
                                   static_cast<float>(alpha) / 255.0f));
}

void hover_tip(const char* text, bool clicked, bool& suppressed) {
  if (clicked) suppressed = true;
  if (!ImGui::IsItemHovered()) suppressed = false;
  else if (!suppressed) ImGui::SetTooltip("%s", text);
}

ImVec2 draw_heatmap(const std::vector<double>& v, int rows, int cols, ImVec2 size) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##heatmap", size);
  if (rows <= 0 || cols <= 0 || v.size() < static_cast<size_t>(rows) * static_cast<size_t>(cols)) return p;
  double lo = INFINITY, hi = -INFINITY;
  for (double x : v)
    if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  if (!(hi > lo)) hi = lo + 1;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float cw = size.x / static_cast<float>(cols), ch = size.y / static_cast<float>(rows);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const double x = v[static_cast<size_t>(r) * static_cast<size_t>(cols) + static_cast<size_t>(c)];
      const ImVec2 a(p.x + cw * static_cast<float>(c), p.y + ch * static_cast<float>(r));
      dl->AddRectFilled(a, ImVec2(a.x + cw, a.y + ch), diverging_color((x - lo) / (hi - lo)));
    }
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int c = std::clamp(static_cast<int>((m.x - p.x) / cw), 0, cols - 1);
    const int r = std::clamp(static_cast<int>((m.y - p.y) / ch), 0, rows - 1);
    ImGui::SetTooltip("[%d, %d] = %.6g  (range %.4g .. %.4g)", r, c,
                      v[static_cast<size_t>(r) * static_cast<size_t>(cols) + static_cast<size_t>(c)], lo, hi);
  }
  return p;
}

void write_tensor_json(cli::JsonWriter& w, std::string_view name, const Tensor& t) {
  w.begin_object().key("name").value(name);
  w.key("dtype").value(t.kind() == ValueKind::kTensor ? dtype_name(t.dtype()) : value_kind_name(t.kind()));
  w.key("shape").value(std::vector<int64_t>(t.shape().begin(), t.shape().end()));
  w.key("values").begin_array();
  for (double x : tensor_values(t)) w.value(x);
  w.end_array().end_object();
}

}  // namespace tsr::playground
