// The Models panel: a .tsr or .onnx file from the file picker or dropped on the page (natively:
// a path given on the command line or dropped on the window), loaded with the same verifying
// loader / ONNX importer as the CLI; shows inputs and outputs, the op histogram and the graph,
// and runs the model on random inputs with timing, on the CPU or on WebGPU (device.h's switch).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "tools/cli/json_writer.h"
#include "web/playground/device.h"
#include "web/playground/graph_view.h"
#include "web/playground/image_input.h"

namespace tsr::playground {

struct ModelsState {
  std::string name;                    // the file's name
  size_t bytes = 0;
  std::shared_ptr<ir::Model> model;    // null until a file loads
  std::unique_ptr<Session> session;
  std::string error;                   // the loader's path-addressed message
  std::vector<Tensor> inputs, outputs; // the last run's (outputs: of the device that ran it)
  double load_ms = 0, run_ms = 0;
  int runs = 0;
  uint64_t seed = 1;
  GraphViewState graph;
  std::vector<std::string> labels;     // class names for the top-k view (the sample's); else empty
  std::string image_name;              // the image the last run took as its first input; "" = random
  ImageSize image;                     // its size as the model took it
  bool sample_tip_off = false;         // hover_tip() state of the Sample model button
  DeviceSwitch device;                 // CPU or WebGPU; kept across models, its per-model part reset
};

// Loads `data` (.onnx by extension or by not starting with a .tsr header; else .tsr). Copies
// the bytes. Errors land in s.error; the previous model is dropped either way.
void open_model(ModelsState& s, const std::string& name, const uint8_t* data, size_t size);
// Runs the loaded model on random inputs (dynamic dims = 1): f32/f64 uniform in [-1, 1),
// integers and bools zero. On WebGPU (s.device.selected) the run is a request: outputs, run_ms
// and runs change on a later frame, when the page answers.
Status run_random(ModelsState& s);
// Runs the model again on the last run's inputs, on the selected device (random ones if none).
Status run_again(ModelsState& s);

// Loads the sample model: examples/colour_classifier.py converted in-page to a graph (f32
// [1, 3, 64, 64] -> softmax over red, green, blue), serialized and loaded like a dropped .tsr.
Status open_sample_model(ModelsState& s);
// The image size the loaded model's first input wants (errors: no model, not an image input).
Expected<ImageSize> model_image_size(const ModelsState& s);
// Runs the model with the image (RGBA8, width x height = model_image_size()) as its first input,
// any further inputs random. Errors land in s.error too.
Status run_on_image(ModelsState& s, const std::string& name, const uint8_t* rgba, int width, int height);

void draw_models(ModelsState& s);
// Opens the page's file picker (main.cpp; a no-op natively, where files are dropped or named).
void open_file_picker();
void write_models_json(cli::JsonWriter& w, const ModelsState& s);

}  // namespace tsr::playground
