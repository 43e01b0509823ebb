#include "web/playground/train_panel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/frontend/script/script.h"
#include "imgui.h"
#include "web/playground/examples.h"
#include "web/playground/widgets.h"

namespace tsr::playground {
namespace {

constexpr float kExtent = 1.6f;  // the plot shows [-kExtent, kExtent]^2

Tensor grid_points() {
  std::vector<float> v;
  v.reserve(2 * kGrid * kGrid);
  for (int r = 0; r < kGrid; ++r)
    for (int c = 0; c < kGrid; ++c) {
      v.push_back(-kExtent + 2 * kExtent * (static_cast<float>(c) + 0.5f) / kGrid);
      v.push_back(kExtent - 2 * kExtent * (static_cast<float>(r) + 0.5f) / kGrid);  // row 0 at the top
    }
  return Tensor::from<float>({kGrid * kGrid, 2}, v);
}

Status refresh_views(TrainState& s) {
  TSR_ASSIGN_OR_RETURN(auto grid, s.trainer->infer({grid_points()}));
  const Tensor& logits = grid.at(0);
  s.boundary.resize(static_cast<size_t>(kGrid * kGrid));
  for (int64_t i = 0; i < kGrid * kGrid; ++i)  // softmax of two logits: P(1) = sigmoid(l1 - l0)
    s.boundary[static_cast<size_t>(i)] = 1.0 / (1.0 + std::exp(logits.scalar_f64(2 * i) - logits.scalar_f64(2 * i + 1)));
  TSR_ASSIGN_OR_RETURN(auto probe, s.trainer->infer({Tensor::from<float>({8, 2}, probe_points())}));
  s.probe_logits.clear();
  for (int64_t i = 0; i < probe.at(0).numel(); ++i) s.probe_logits.push_back(static_cast<float>(probe[0].scalar_f64(i)));
  return ok_status();
}

}  // namespace

const std::vector<float>& probe_points() {
  static const std::vector<float> p = {0, 0, 0.5f, 0, 1, 0, 0, 1, -1.2f, 0.3f, 0.3f, -0.7f, 0.9f, 0.9f, -0.4f, -0.2f};
  return p;
}

Status train_reset(TrainState& s) {
  s.trainer.reset();
  s.step = 0;
  s.losses.clear();
  s.boundary.clear();
  s.probe_logits.clear();
  s.error.clear();
  s.running = false;
  s.pending = 0;
  Status st = [&]() -> Status {
    TSR_ASSIGN_OR_RETURN(s.data, make_toy_data(toy_dataset_names().at(static_cast<size_t>(s.dataset)), s.points, s.noise, 7));
    // The MLP example converted with a dynamic batch axis, so one graph serves data and grid.
    namespace sc = frontend::script;
    const Example& e = mlp_example();
    sc::ScriptOptions so;
    so.entry = e.entry;
    so.mode = sc::Mode::kConvert;
    so.inputs.emplace_back("X", Tensor::from<float>({s.data.n, 2}, s.data.x));
    so.dynamic_axes["X"] = {0};
    TSR_ASSIGN_OR_RETURN(auto converted, sc::run_script("mlp.py", e.source, so));
    TrainingSpec spec;  // every weight trained
    spec.loss = "softmax_cross_entropy";
    spec.optimizer = "adam";
    spec.learning_rate = s.lr;
    TSR_ASSIGN_OR_RETURN(const Model training, prepare_training(Model(converted.model), spec));
    TSR_ASSIGN_OR_RETURN(s.trainer, Trainer::create(training));
    return refresh_views(s);
  }();
  if (!st.ok()) s.error = st.message();
  return st;
}

Status train_steps(TrainState& s, int steps) {
  if (!s.trainer) TSR_RETURN_IF_ERROR(train_reset(s));
  const Tensor x = Tensor::from<float>({s.data.n, 2}, s.data.x);
  const Tensor y = Tensor::from<int64_t>({s.data.n}, s.data.y);
  Status st = [&]() -> Status {
    for (int k = 0; k < steps; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      TSR_ASSIGN_OR_RETURN(const float loss, s.trainer->step({x}, y));
      s.step_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!std::isfinite(loss)) return invalid_argument("step ", s.step + 1, ": the loss is ", loss, " (lower the learning rate)");
      s.losses.push_back(loss);
      ++s.step;
    }
    return refresh_views(s);
  }();
  if (!st.ok()) {
    s.error = st.message();
    s.running = false;
    s.pending = 0;
  }
  return st;
}

Expected<std::vector<uint8_t>> train_export(const TrainState& s) {
  if (!s.trainer) return invalid_argument("nothing trained yet");
  TSR_ASSIGN_OR_RETURN(const Model inference, s.trainer->export_inference());
  return inference.serialize();
}

namespace {

// The loss per step, 0 at the bottom, the largest loss at the top; labelled with the first and
// last loss. Before two steps there is no line to draw: the frame says so.
void draw_loss_curve(TrainState& s, ImVec2 size) {
  ImGui::BeginGroup();
  const int n = static_cast<int>(s.losses.size());
  const float top = n == 0 ? 1.0f : *std::max_element(s.losses.begin(), s.losses.end());
  char overlay[96];
  if (n < 2) std::snprintf(overlay, sizeof overlay, "loss: Train to draw the curve");
  else std::snprintf(overlay, sizeof overlay, "loss %.3f -> %.3f over %d steps", static_cast<double>(s.losses.front()),
                     static_cast<double>(s.losses.back()), n);
  ImGui::PushStyleColor(ImGuiCol_PlotLines, IM_COL32(255, 190, 60, 255));
  ImGui::PlotLines("##loss", s.losses.data(), n, 0, overlay, 0.0f, top * 1.05f, ImVec2(size.x, size.y - ImGui::GetTextLineHeightWithSpacing()));
  ImGui::PopStyleColor();
  track("loss");
  s.plotted = n >= 2 ? n : 0;
  ImGui::TextDisabled("step 0 .. %d, loss 0 .. %.3f", n, static_cast<double>(top * 1.05f));
  ImGui::EndGroup();
}

}  // namespace

void draw_train(TrainState& s, void (*save)(const std::string&, const std::vector<uint8_t>&)) {
  if (!s.trainer && s.error.empty()) (void)train_reset(s);
  bool reset = false;
  ImGui::SetNextItemWidth(140);
  if (ImGui::BeginCombo("data", toy_dataset_names()[static_cast<size_t>(s.dataset)].c_str())) {
    for (size_t k = 0; k < toy_dataset_names().size(); ++k) {
      if (ImGui::Selectable(toy_dataset_names()[k].c_str(), static_cast<int>(k) == s.dataset)) s.dataset = static_cast<int>(k), reset = true;
      track(toy_dataset_names()[k]);
    }
    ImGui::EndCombo();
  }
  track("data");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(100);
  if (ImGui::SliderFloat("noise", &s.noise, 0, 0.5f, "%.2f")) reset = true;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(100);
  if (ImGui::SliderFloat("lr", &s.lr, 0.001f, 0.2f, "%.3f", ImGuiSliderFlags_Logarithmic)) reset = true;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(80);
  ImGui::SliderInt("steps/frame", &s.steps_per_frame, 1, 20);
  if (ImGui::Button(s.running ? "Pause" : "Train")) s.running = !s.running;
  track(s.running ? "Pause" : "Train");
  ImGui::SameLine();
  if (ImGui::Button("Train 200")) s.pending += 200;
  track("Train 200");
  ImGui::SameLine();
  if (ImGui::Button("Reset")) reset = true;
  track("Reset");
  ImGui::SameLine();
  if (ImGui::Button("Export .tsr")) {
    auto bytes = train_export(s);
    if (bytes.ok()) {
      ++s.exports;
      s.export_bytes = bytes->size();
      save("playground_mlp.tsr", *bytes);
    } else {
      s.error = bytes.status().message();
    }
  }
  track("Export .tsr");
  if (reset) (void)train_reset(s);
  if (s.running || s.pending > 0) {
    const int k = s.pending > 0 ? std::min(s.pending, s.steps_per_frame) : s.steps_per_frame;
    s.pending = std::max(0, s.pending - k);
    (void)train_steps(s, k);
    s.fps = ImGui::GetIO().Framerate;
  }
  if (!s.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "%s", s.error.c_str());
  ImGui::Text("step %lld   loss %.4f   train_step %.2f ms   %.0f frames/s", static_cast<long long>(s.step),
              s.losses.empty() ? 0.0 : static_cast<double>(s.losses.back()), s.step_ms, static_cast<double>(ImGui::GetIO().Framerate));
  // The loss curve and the decision boundary side by side, as large as the panel allows.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float side = std::clamp(std::min(avail.x * 0.5f, avail.y - 8), 160.0f, 640.0f);
  draw_loss_curve(s, ImVec2(std::max(160.0f, avail.x - side - ImGui::GetStyle().ItemSpacing.x), side));
  ImGui::SameLine();
  // Decision boundary: P(class 1) as a faint heatmap, the points on top.
  if (s.boundary.size() == static_cast<size_t>(kGrid * kGrid)) {
    const ImVec2 p = draw_heatmap(s.boundary, kGrid, kGrid, ImVec2(side, side));
    track("boundary");
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (int64_t i = 0; i < s.data.n; ++i) {
      const float x = s.data.x[static_cast<size_t>(2 * i)], y = s.data.x[static_cast<size_t>(2 * i + 1)];
      const ImVec2 c(p.x + (x + kExtent) / (2 * kExtent) * side, p.y + (kExtent - y) / (2 * kExtent) * side);
      dl->AddCircleFilled(c, 3.5f, s.data.y[static_cast<size_t>(i)] ? IM_COL32(255, 150, 40, 255) : IM_COL32(40, 220, 255, 255));
      dl->AddCircle(c, 3.5f, IM_COL32(0, 0, 0, 255));
    }
  }
}

void write_train_json(cli::JsonWriter& w, const TrainState& s) {
  w.begin_object();
  w.key("dataset").value(toy_dataset_names()[static_cast<size_t>(s.dataset)]);
  w.key("points").value(s.points).key("step").value(s.step).key("running").value(s.running).key("pending").value(s.pending);
  w.key("loss");
  if (s.losses.empty()) w.null();
  else w.value(static_cast<double>(s.losses.back()));
  w.key("first_loss");
  if (s.losses.empty()) w.null();
  else w.value(static_cast<double>(s.losses.front()));
  w.key("step_ms").value(s.step_ms).key("fps").value(static_cast<double>(s.fps)).key("error").value(s.error);
  w.key("loss_points").value(static_cast<int64_t>(s.losses.size())).key("plotted").value(s.plotted);
  w.key("exports").value(s.exports).key("export_bytes").value(static_cast<int64_t>(s.export_bytes));
  w.key("probe_inputs").begin_array();
  for (float v : probe_points()) w.value(static_cast<double>(v));
  w.end_array().key("probe_logits").begin_array();
  for (float v : s.probe_logits) w.value(static_cast<double>(v));
  w.end_array().end_object();
}

}  // namespace tsr::playground
