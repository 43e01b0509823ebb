// The Train panel: the MLP example (examples/mlp.py) converted to a graph, turned into a
// training model by the public tsr::prepare_training (forward + autodiff backward + Adam in one
// static graph) and trained by a tsr::Trainer (weights live in its Session) on 2-D toy data a few
// steps per frame, with the loss curve, the decision boundary, and Export of the trained
// inference model as a .tsr (Trainer::export_inference), which `tessera run` runs natively.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/trainer.h"
#include "tools/cli/json_writer.h"
#include "web/playground/toy_data.h"

namespace tsr::playground {

struct TrainState {
  int dataset = 0;           // index into toy_dataset_names()
  int points = 256;
  float noise = 0.05f;
  float lr = 0.03f;
  int steps_per_frame = 4;
  bool running = false;      // train every frame
  int pending = 0;           // steps still queued by "Train 200"
  ToyData data;
  std::unique_ptr<Trainer> trainer;  // over the training model (weights as variables)
  int64_t step = 0;
  std::vector<float> losses;
  std::vector<double> boundary;      // P(class 1) on a kGrid x kGrid grid over the plot
  std::vector<float> probe_logits;   // the infer graph's logits on probe_points()
  std::string error;
  double step_ms = 0;                // the last train_step's time
  float fps = 0;                     // frames per second while training (ImGui's average)
  int exports = 0;
  int plotted = 0;                   // loss values the last frame's loss curve drew
  size_t export_bytes = 0;
};

constexpr int kGrid = 48;
// The fixed probe inputs (f32 [8, 2]) whose logits state() reports, to check exports against.
const std::vector<float>& probe_points();

// (Re)builds data, model and session from the panel's settings. Errors land in s.error too.
Status train_reset(TrainState& s);
// Runs `steps` Trainer::step calls on the whole data set, then refreshes boundary and probes.
Status train_steps(TrainState& s, int steps);
// The trained inference model as .tsr bytes.
Expected<std::vector<uint8_t>> train_export(const TrainState& s);

// Draws the panel; `save` receives Export's bytes (a browser download, or a file natively).
void draw_train(TrainState& s, void (*save)(const std::string& name, const std::vector<uint8_t>& bytes));
void write_train_json(cli::JsonWriter& w, const TrainState& s);

}  // namespace tsr::playground
