// The Models panel: a .tsr or .onnx file from the file picker or dropped on the page (natively:
// a path given on the command line or dropped on the window), loaded with the same verifying
// loader / ONNX importer as the CLI; shows inputs and outputs, the op histogram and the graph,
// and runs the model on random inputs with timing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "tools/cli/json_writer.h"
#include "web/playground/graph_view.h"

namespace tsr::playground {

struct ModelsState {
  std::string name;                    // the file's name
  size_t bytes = 0;
  std::shared_ptr<ir::Model> model;    // null until a file loads
  std::unique_ptr<Session> session;
  std::string error;                   // the loader's path-addressed message
  std::vector<Tensor> inputs, outputs; // the last random run
  double load_ms = 0, run_ms = 0;
  int runs = 0;
  uint64_t seed = 1;
  GraphViewState graph;
};

// Loads `data` (.onnx by extension or by not starting with a .tsr header; else .tsr). Copies
// the bytes. Errors land in s.error; the previous model is dropped either way.
void open_model(ModelsState& s, const std::string& name, const uint8_t* data, size_t size);
// Runs the loaded model on random inputs (dynamic dims = 1): f32/f64 uniform in [-1, 1),
// integers and bools zero.
Status run_random(ModelsState& s);

void draw_models(ModelsState& s);
// Opens the page's file picker (main.cpp; a no-op natively, where files are dropped or named).
void open_file_picker();
void write_models_json(cli::JsonWriter& w, const ModelsState& s);

}  // namespace tsr::playground
