// Small ImGui helpers shared by the playground's panels: the widget-rectangle registry behind
// window.tesseraPlayground.rect(), tensor formatting, a 2-D heatmap, tensors as JSON.
// Everything here runs on the UI thread (the only thread the playground has).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/tensor/tensor.h"
#include "imgui.h"
#include "tools/cli/json_writer.h"

namespace tsr::playground {

// Records the last submitted item's rectangle (screen pixels) under `label` for this frame.
// Labels are the visible ones ("Run", "eager", ...), so tests address what a person sees.
void track(std::string_view label);
// Forgets last frame's rectangles (called at the start of each frame).
void clear_tracked();
// The rectangle of `label` as of the last frame: x, y, width, height. False if not drawn.
bool tracked_rect(std::string_view label, float out[4]);

// The last item's tooltip, hidden from a click on it (`clicked`) until the pointer leaves it:
// after a click the pointer rests on the button, and the tooltip would cover what it changed.
// `suppressed` is the caller's per-button state.
void hover_tip(const char* text, bool clicked, bool& suppressed);

// The tensor's elements as doubles (any numeric or bool dtype; empty for others).
std::vector<double> tensor_values(const Tensor& t);
// "f32 [2, 3]" and the first `max_values` elements as text ("1, 2.5, ...").
std::string tensor_summary(const Tensor& t);
std::string tensor_text(const Tensor& t, size_t max_values);

// A rows x cols heatmap of `v` (row-major) filling `size`, blue (lo) - white - red (hi).
// Hovering a cell shows its index and value. Returns the top-left corner it drew at.
ImVec2 draw_heatmap(const std::vector<double>& v, int rows, int cols, ImVec2 size);
// The diverging colour map used by the heatmaps; t in [0, 1].
ImU32 diverging_color(double t, int alpha = 255);

// {"name":..., "dtype":..., "shape":[...], "values":[...]} (values: all of them, as doubles).
void write_tensor_json(cli::JsonWriter& w, std::string_view name, const Tensor& t);

}  // namespace tsr::playground
