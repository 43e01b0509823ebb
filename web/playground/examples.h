// The editor's examples menu: scripts with their entry function and default inputs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/tensor/tensor.h"

namespace tsr::playground {

// An entry parameter's value in the inputs panel: f32 data of `shape`, edited in place.
// A flag is a scalar shown as a checkbox: checked = 1, unchecked = -1.
struct InputSpec {
  std::string name;
  Shape shape;
  std::vector<float> values;
  bool is_flag = false;

  Tensor tensor() const { return Tensor::from<float>(shape, values); }
};

struct Example {
  std::string name;   // loadExample()'s key: seeds_model, while_loop, layer_stack, mlp, colour_classifier
  std::string title;  // the menu's text
  std::string entry;  // the function Run calls
  const char* source;
  std::vector<InputSpec> inputs;
};

const std::vector<Example>& examples();
const Example* find_example(std::string_view name);  // null if unknown

// The colour classifier's image side: the Models panel's sample takes f32 [1, 3, 64, 64].
inline constexpr int kSampleImageSide = 64;

// The MLP example's source and entry (the Train panel trains it).
const Example& mlp_example();

}  // namespace tsr::playground
