// The Gradients panel: the converted graph of the editor's script, differentiated by the
// autodiff pass (passes::gradient_model: a scalar-summed output with respect to chosen float
// inputs), run on the inputs panel's values; shows each gradient and the gradient graph (If
// gradients are Ifs over branch VJPs, Loop gradients reverse Loops; open them in the view).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tools/cli/json_writer.h"
#include "web/playground/editor_panel.h"
#include "web/playground/graph_view.h"

namespace tsr::playground {

struct GradientsState {
  int loss = 0;                       // index into the converted graph's outputs
  std::vector<std::string> wrt;       // chosen input names (empty = every float input)
  std::shared_ptr<ir::Model> model;   // the gradient model
  std::vector<std::string> names;     // "<wrt>_grad"
  std::vector<Tensor> grads;
  std::string error;
  GraphViewState view;
};

// Builds and runs the gradient model of s.converted with the script's inputs.
Status compute_gradients(GradientsState& g, const ScriptState& s);
void draw_gradients(GradientsState& g, ScriptState& s);
void write_gradients_json(cli::JsonWriter& w, const GradientsState& g);

}  // namespace tsr::playground
