// Steady-state heap allocations of a training step (issue 28: "the per-step allocation count is 0
// in steady state, as it is for inference"). A LeNet-5 (tools/train/architectures) becomes a
// training model (softmax cross entropy, Adam, as `tessera train` makes it); a tsr::Trainer takes
// --warmup steps on one batch and then --steps more, at each thread count, through each of
// Trainer::step, step_with_prediction (what `tessera train` calls) and eval, and counts every heap
// allocation made during the counted calls (the pattern of tests/models/alloc_test.cpp):
//   - operator new (all forms), on any thread, through tools/cli/heap_counter.cpp's replacements;
//   - the tensor allocator's system allocations (tensor_memory_stats().system_allocations).
// Passes only when both counts are 0. With --trace, prints a backtrace of each counted operator new.
//
// --model TRAIN.tsr takes a training model from `tessera prepare-training` instead (its first
// input's dims after the batch must be static; labels are class indices below 10).
//
// Usage: tessera_train_step_alloc_test [--model TRAIN.tsr] [--threads 1,2] [--warmup 2] [--steps 3]
//                                      [--batch 16] [--trace]
// Exit 0 pass, 1 fail, 2 usage.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/trainer.h"
#include "tools/cli/heap_counter.h"
#include "tools/train/architectures.h"

using namespace tsr;

int main(int argc, char** argv) {
  std::string threads_arg = "1,2", model_path;
  int warmup = 2, steps = 3;
  int64_t batch = 16;
  bool trace = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--threads" && has_value) threads_arg = argv[++i];
    else if (a == "--warmup" && has_value) warmup = std::atoi(argv[++i]);
    else if (a == "--steps" && has_value) steps = std::atoi(argv[++i]);
    else if (a == "--batch" && has_value) batch = std::atoll(argv[++i]);
    else if (a == "--trace") trace = true;
    else if (a == "--model" && has_value) model_path = argv[++i];
    else return std::fprintf(stderr, "unknown argument %s\n", a.c_str()), 2;
  }
  if (steps < 1 || warmup < 0 || batch < 1) return std::fprintf(stderr, "bad --steps, --warmup or --batch\n"), 2;

  Expected<Model> training = Model();
  if (model_path.empty()) {
    auto lenet = train::build_architecture("lenet", 28, 28, 10, 1);
    if (!lenet.ok()) return std::fprintf(stderr, "%s\n", lenet.status().to_string().c_str()), 1;
    training = prepare_training(Model(std::make_shared<ir::Model>(std::move(lenet).value())), TrainingSpec{});
  } else {
    training = Model::load(model_path);
  }
  if (!training.ok()) return std::fprintf(stderr, "%s\n", training.status().to_string().c_str()), 1;

  Shape image_shape{batch, 1, 28, 28};
  if (!model_path.empty()) {
    auto probe = Trainer::create(*training);
    if (!probe.ok()) return std::fprintf(stderr, "%s\n", probe.status().to_string().c_str()), 1;
    image_shape = (*probe)->inputs().at(0).shape;
    image_shape[0] = batch;
  }
  const char* model_name = model_path.empty() ? "LeNet-5" : model_path.c_str();
  auto empty_images = Tensor::empty(DType::kF32, image_shape);
  if (!empty_images.ok()) return std::fprintf(stderr, "%s\n", empty_images.status().to_string().c_str()), 1;
  Tensor images = std::move(empty_images).value();
  Tensor labels = Tensor::empty(DType::kI64, {batch}).value();
  std::mt19937 rng(3);
  for (int64_t i = 0; i < images.numel(); ++i) images.mut_data<float>()[i] = static_cast<float>(rng() % 256) / 255.0f;
  for (int64_t i = 0; i < batch; ++i) labels.mut_data<int64_t>()[i] = static_cast<int64_t>(rng() % 10);
  const std::vector<Tensor> inputs{images};

  bool pass = true;
  std::istringstream thread_list(threads_arg);
  for (std::string item; std::getline(thread_list, item, ',');) {
    const int threads = std::atoi(item.c_str());
    SessionOptions so;
    so.num_threads = threads;
    auto trainer = Trainer::create(*training, so);
    if (!trainer.ok()) return std::fprintf(stderr, "%s\n", trainer.status().to_string().c_str()), 1;
    Trainer& t = **trainer;
    const char* calls[] = {"step", "step_with_prediction", "eval"};
    for (const char* call : calls) {
      const std::string name = call;
      // One call; the result (a loss, a prediction) is dropped before the next, as a loop would.
      auto once = [&]() -> Status {
        if (name == "step") return t.step(inputs, labels).status();
        if (name == "eval") return t.eval(inputs, labels).status();
        return t.step_with_prediction(inputs, labels).status();
      };
      for (int r = 0; r < warmup; ++r)
        if (Status st = once(); !st.ok()) return std::fprintf(stderr, "warm-up: %s\n", st.to_string().c_str()), 1;
      Status status = ok_status();
      const size_t system_before = tensor_memory_stats().system_allocations;
      const size_t news_before = tsr::cli::heap_allocations();
      tsr::cli::print_allocation_backtraces(trace);
      for (int r = 0; r < steps && status.ok(); ++r) status = once();
      tsr::cli::print_allocation_backtraces(false);
      const size_t news = tsr::cli::heap_allocations() - news_before;
      const size_t system = tensor_memory_stats().system_allocations - system_before;
      if (!status.ok()) return std::fprintf(stderr, "%s: %s\n", call, status.to_string().c_str()), 1;
      const bool ok = news == 0 && system == 0;
      std::printf("%s batch %lld, Trainer::%s, %d thread(s): %zu operator new and %zu tensor buffers from the "
                  "system allocator in %d call(s) after %d warm-up: %s\n",
                  model_name, static_cast<long long>(batch), call, threads, news, system, steps, warmup, ok ? "PASS" : "FAIL");
      pass = pass && ok;
    }
  }
  return pass ? 0 : 1;
}
