#include "web/playground/app.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "imgui.h"
#include "imgui_internal.h"  // ClearActiveID: an active InputText would write its old buffer back
#include "web/playground/widgets.h"

namespace tsr::playground {
namespace {

namespace sc = frontend::script;
App* g_app = nullptr;

}  // namespace

App::App(Platform platform) : platform_(platform) {
  load_example("seeds_model");
  g_app = this;
}

bool App::load_example(std::string_view name) {
  const Example* e = find_example(name);
  if (!e) return false;
  playground::load_example(script_, *e);
  release_editor_ = true;
  return true;
}

void App::set_editor_text(std::string text) {
  script_.text = std::move(text);
  release_editor_ = true;
}

bool App::set_mode(std::string_view mode) {
  for (sc::Mode m : {sc::Mode::kEager, sc::Mode::kTrace, sc::Mode::kConvert})
    if (mode == sc::mode_name(m)) {
      script_.mode = m;
      return true;
    }
  return false;
}

void App::open_file(const std::string& name, const uint8_t* data, size_t size) {
  open_model(models_, name, data, size);
  if (models_.session) (void)run_random(models_);
  select_tab_ = "Models";
}

std::string App::image_size_json() {
  select_tab_ = "Models";
  if (!models_.model && !open_sample_model(models_).ok()) return "null";
  auto size = model_image_size(models_);
  if (!size.ok()) {
    models_.error = size.status().message();
    return "null";
  }
  return "[" + std::to_string(size->channels) + "," + std::to_string(size->height) + "," + std::to_string(size->width) + "]";
}

void App::open_image(const std::string& name, const uint8_t* rgba, int width, int height) {
  (void)run_on_image(models_, name, rgba, width, height);
  select_tab_ = "Models";
}

void App::open_sample() {
  if (open_sample_model(models_).ok()) (void)run_random(models_);
  select_tab_ = "Models";
}

void App::frame(float width, float height) {
  clear_tracked();
  if (release_editor_) ImGui::ClearActiveID();
  release_editor_ = false;
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false)) run_script_state(script_);
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(width, height));
  ImGui::Begin("Tessera playground", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus |
                   ImGuiWindowFlags_NoSavedSettings);
  // The editor column takes 40% (at least 360 px, at most 820): at 1400x900 and 1920x1080 the
  // panels on the right keep room for a graph or the Train panel's plots side by side.
  const float left = std::clamp(width * 0.40f, 360.0f, 820.0f);
  ImGui::BeginChild("left", ImVec2(left, 0), false);
  draw_left(height);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("right", ImVec2(0, 0), false);
  draw_right();
  ImGui::EndChild();
  ImGui::End();
  ++frames_;
  if (frames_ == 1 && platform_.now_ms) first_frame_ms_ = platform_.now_ms();
}

void App::draw_left(float height) {
  ImGui::TextUnformatted("Tessera playground");
  ImGui::SameLine();
  if (ImGui::SmallButton("Share")) platform_.share(sc::mode_name(script_.mode), script_.text);
  track("Share");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Put the editor text and mode into the URL (#mode=...&code=...)");
  draw_toolbar(script_);
  draw_editor(script_, std::floor(height * 0.52f));
  if (ImGui::CollapsingHeader("Inputs", ImGuiTreeNodeFlags_DefaultOpen)) draw_inputs(script_);
  // The Output log takes the rest of the column (the left child scrolls if inputs are tall).
  if (ImGui::CollapsingHeader("Output log", ImGuiTreeNodeFlags_DefaultOpen))
    draw_output_log(script_, std::max(110.0f, ImGui::GetContentRegionAvail().y - ImGui::GetFrameHeightWithSpacing()));
}

void App::draw_right() {
  if (!ImGui::BeginTabBar("panels")) return;
  for (const char* name : {"Outputs", "Graph", "Gradients", "Train", "Models"}) {
    const bool select = select_tab_ == name;
    const bool open = ImGui::BeginTabItem(name, nullptr, select ? ImGuiTabItemFlags_SetSelected : 0);
    track(name);
    if (!open) continue;
    tab_ = name;
    ImGui::BeginChild("panel", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
    if (tab_ == "Outputs") {
      draw_outputs(script_);
    } else if (tab_ == "Graph") {
      // trace and convert of the same script and inputs side by side: the lost branch shows.
      if (!script_.traced.ran) ImGui::TextDisabled("Run the script to see its traced and converted graphs");
      if (ImGui::BeginTable("graphs", 2, ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV)) {
        const std::pair<const ScriptRun*, GraphViewState*> views[2] = {{&script_.traced, &traced_view_}, {&script_.converted, &converted_view_}};
        for (const auto& [run, view] : views) {
          ImGui::TableNextColumn();
          if (!run->ran) continue;
          ImGui::Text("%s", sc::mode_name(run->mode));
          if (run->model) draw_model_graph(sc::mode_name(run->mode), *run->model, *view);
          for (const Diagnostic& d : run->diagnostics) {
            ImGui::PushStyleColor(ImGuiCol_Text, d.error ? ImVec4(1, 0.4f, 0.35f, 1) : ImVec4(1, 0.8f, 0.3f, 1));
            ImGui::TextWrapped("%d:%d: %s", d.line, d.col, d.message.c_str());
            ImGui::PopStyleColor();
          }
        }
        ImGui::EndTable();
      }
    } else if (tab_ == "Gradients") {
      draw_gradients(gradients_, script_);
    } else if (tab_ == "Train") {
      draw_train(train_, platform_.save);
    } else if (tab_ == "Models") {
      draw_models(models_);
    }
    ImGui::EndChild();
    ImGui::EndTabItem();
  }
  select_tab_.clear();
  ImGui::EndTabBar();
  // Training continues while another tab is shown.
  if (tab_ != "Train" && (train_.running || train_.pending > 0)) (void)train_steps(train_, train_.steps_per_frame);
}

std::string App::state_json() const {
  std::ostringstream os;
  cli::JsonWriter w(os, false);
  w.begin_object();
  w.key("frame").value(frames_).key("first_frame_ms").value(first_frame_ms_).key("tab").value(tab_);
  w.key("fps").value(static_cast<double>(ImGui::GetIO().Framerate));
  write_script_json(w, script_);
  w.key("gradients");
  write_gradients_json(w, gradients_);
  w.key("train");
  write_train_json(w, train_);
  w.key("models");
  write_models_json(w, models_);
  w.end_object();
  return os.str();
}

}  // namespace tsr::playground

// ---- window.tesseraPlayground's entry points (index.html wraps them) -------------------------
extern "C" {

// JSON of App::state_json(); valid until the next call.
const char* tsrp_state() {
  static std::string s;
  s = tsr::playground::g_app ? tsr::playground::g_app->state_json() : "null";
  return s.c_str();
}

// "[x, y, width, height]" of the widget labelled `label` in last frame (canvas pixels), or "null".
const char* tsrp_rect(const char* label) {
  static std::string s;
  float r[4];
  if (!tsr::playground::tracked_rect(label, r)) return "null";
  std::ostringstream os;
  os << '[' << r[0] << ',' << r[1] << ',' << r[2] << ',' << r[3] << ']';
  s = os.str();
  return s.c_str();
}

int tsrp_load_example(const char* name) { return tsr::playground::g_app && tsr::playground::g_app->load_example(name) ? 1 : 0; }
void tsrp_set_editor_text(const char* text) {
  if (tsr::playground::g_app) tsr::playground::g_app->set_editor_text(text);
}
int tsrp_set_mode(const char* mode) { return tsr::playground::g_app && tsr::playground::g_app->set_mode(mode) ? 1 : 0; }
// Takes a copy of `data`; the caller frees it.
void tsrp_open_file(const char* name, const uint8_t* data, int size) {
  if (tsr::playground::g_app && size >= 0) tsr::playground::g_app->open_file(name, data, static_cast<size_t>(size));
}

// "[C, H, W]" of the image the Models panel's model takes (loading the sample if none), or "null".
const char* tsrp_image_size() {
  static std::string s;
  s = tsr::playground::g_app ? tsr::playground::g_app->image_size_json() : "null";
  return s.c_str();
}
// RGBA8 pixels, width x height; the caller frees them.
void tsrp_open_image(const char* name, const uint8_t* rgba, int width, int height) {
  if (tsr::playground::g_app && width > 0 && height > 0) tsr::playground::g_app->open_image(name, rgba, width, height);
}
void tsrp_open_sample() {
  if (tsr::playground::g_app) tsr::playground::g_app->open_sample();
}

}  // extern "C"
