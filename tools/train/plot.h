// A line plot written as PNG (for `tessera train`'s loss curve). The pixels are drawn here; PNG
// encoding is stb_image_write and the labels use stb_easy_font's glyph quads (Debian libstb-dev).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tsr::train {

struct Series {
  std::string name;                // legend text
  std::array<uint8_t, 3> rgb{};    // line color
  std::vector<double> x, y;        // same length; non-finite points are skipped
};

// Draws every series on shared axes (ranges from the data, y from its min to max) in a
// width x height RGB image with a title, axis labels and tick values, and writes it as PNG.
// Errors: kInvalidArgument for mismatched x/y lengths or a size below 200 x 150; kNotFound when
// the file cannot be written.
Status write_line_plot_png(const std::string& path, const std::vector<Series>& series, const std::string& title,
                           const std::string& x_label, const std::string& y_label, int width = 800, int height = 500);

}  // namespace tsr::train
