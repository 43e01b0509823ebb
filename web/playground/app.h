// The playground application: its panels' state, one ImGui frame, and the state/hooks that
// window.tesseraPlayground exposes to tests (app.cpp's extern "C" tsrp_* functions).
// Single-threaded: everything runs on the UI thread (the browser's main thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "web/playground/editor_panel.h"
#include "web/playground/gradients_panel.h"
#include "web/playground/graph_view.h"
#include "web/playground/models_panel.h"
#include "web/playground/train_panel.h"

namespace tsr::playground {

// Platform services main.cpp provides (browser or native).
struct Platform {
  // Export: a browser download, or a file in the working directory natively.
  void (*save)(const std::string& name, const std::vector<uint8_t>& bytes) = nullptr;
  // Share: puts "mode" and "code" into the URL fragment (no-op natively).
  void (*share)(const std::string& mode, const std::string& text) = nullptr;
  // Milliseconds since the page started loading (performance.now()), or since start natively.
  double (*now_ms)() = nullptr;
};

class App {
 public:
  explicit App(Platform platform);

  // Draws one frame's UI into a window of `width` x `height` pixels.
  void frame(float width, float height);

  std::string state_json() const;
  bool load_example(std::string_view name);
  void set_editor_text(std::string text);
  bool set_mode(std::string_view mode);
  void open_file(const std::string& name, const uint8_t* data, size_t size);
  // The image size the Models panel's model takes ("[C, H, W]"), loading the sample model when
  // none is loaded; "null" (and the reason in the panel) when it takes no image.
  std::string image_size_json();
  // An image for the Models panel's model: RGBA8, width x height as image_size_json() said.
  void open_image(const std::string& name, const uint8_t* rgba, int width, int height);
  void open_sample();

 private:
  void draw_left(float height);
  void draw_right();

  Platform platform_;
  ScriptState script_;
  GraphViewState traced_view_, converted_view_;
  GradientsState gradients_;
  TrainState train_;
  ModelsState models_;
  std::string tab_ = "Outputs";
  std::string select_tab_;         // a tab to select on the next frame (after a file drop)
  bool release_editor_ = false;    // the text was replaced from outside: drop the editor's focus
  int64_t frames_ = 0;
  double first_frame_ms_ = 0;      // now_ms() when the first frame was drawn
};

}  // namespace tsr::playground
