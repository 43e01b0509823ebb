#include "web/playground/examples.h"

namespace tsr::playground {
namespace {

#include "example_sources.inc"  // kSource_<file stem>: examples/script/*.py, examples/*.py

// Deterministic, varied weights for the layer stack: 0.1 * ((7 i) mod 11) - 0.5.
std::vector<float> pattern(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.1f * static_cast<float>((7 * i) % 11) - 0.5f;
  return v;
}

}  // namespace

const std::vector<Example>& examples() {
  // Default inputs: the seeds' X of examples/script/data and flag = 1 (the taken branch is W1).
  static const std::vector<Example> list = {
      {"seeds_model", "seeds: model(X, flag) with a tensor if", "model", kSource_model,
       {{"X", {2, 2}, {1, 2, 3, -4}}, {"flag", {}, {1}, true}}},
      {"while_loop", "tensor while loop: double_until(x, limit)", "double_until", kSource_while_loop,
       {{"x", {2, 2}, {0.5f, 1, 0.25f, 0.75f}}, {"limit", {}, {100}}}},
      {"layer_stack", "layer stack with for: stack(X, Ws, gains)", "stack", kSource_transformer_stack,
       {{"X", {2, 4}, {0.5f, -1, 0.25f, 2, -0.5f, 1, 1.5f, 0}},
        {"Ws", {3, 4, 4}, pattern(48)},
        {"gains", {3}, {1, 0.5f, 0.25f}}}},
      {"mlp", "MLP classifier (trained in the Train panel)", "mlp", kSource_mlp,
       {{"X", {4, 2}, {0, 0, 1, 0, 0, 1, -1, -1}}}},
      {"colour_classifier", "colour classifier (the Models panel's sample)", "classify", kSource_colour_classifier,
       {{"X", {1, 3, kSampleImageSide, kSampleImageSide}, std::vector<float>(3 * kSampleImageSide * kSampleImageSide, 0.5f)}}},
  };
  return list;
}

const Example* find_example(std::string_view name) {
  for (const Example& e : examples())
    if (e.name == name) return &e;
  return nullptr;
}

const Example& mlp_example() { return *find_example("mlp"); }

}  // namespace tsr::playground
