// The training loop behind `tessera train`: minibatch training of an image classifier on an IDX
// dataset with a model's `train_step` signature (tsr::prepare_training), evaluation with its
// `infer` signature, per-epoch checkpoints, and the loss curve as CSV and PNG.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "tessera/trainer.h"
#include "tools/train/idx.h"

namespace tsr::train {

// Checkpoint metadata key: the number of epochs trained so far. A resumed run numbers its epochs
// after it and replays that many shuffles (same seed and limit: the batches of an uninterrupted run).
inline constexpr const char* kEpochsDoneKey = "tessera.train.epochs_done";

// The shuffle of `tessera train`'s epochs, written out so that other programs can repeat it
// (bench/train/shuffle.py does, for PyTorch): a Fisher-Yates pass over `order` that draws from
// std::mt19937_64 (the C++ standard's 64-bit Mersenne Twister, seeded with TrainConfig::seed):
//   for i = n-1 down to 1: j = rng() % (i + 1); swap(order[i], order[j])
// (std::shuffle's algorithm is left to the standard library, so its order differs between them).
// Each epoch shuffles the previous epoch's order again with the same generator.
void shuffle_order(std::vector<int64_t>& order, std::mt19937_64& rng);

struct TrainConfig {
  TrainingSpec training;  // loss, optimizer, learning rate, ... (tsr::prepare_training)
  int64_t batch_size = 64;
  int epochs = 1;
  uint64_t seed = 0;     // shuffling order
  int threads = 1;       // intra-op threads (<= 0: all cores)
  std::string device = "cpu";  // SessionOptions::device: cpu, cuda, vulkan, auto, null
  int64_t limit = 0;     // train on the first `limit` samples only (0 = all)
  std::string out_dir;   // "" = write nothing; else checkpoint_epoch<N>.tsr, loss.csv, epochs.csv, loss.png
};

struct EpochStats {
  int epoch = 0;                 // 1-based
  double train_loss = 0;         // mean of the step losses
  double train_accuracy = 0;     // fraction of training samples classified right while training
  double test_loss = NAN;        // mean cross entropy on the test split (NaN without one)
  double test_accuracy = NAN;
  double seconds = 0;            // wall time of the epoch's training steps (evaluation excluded)
  double samples_per_second = 0;
};

struct TrainReport {
  std::vector<EpochStats> epochs;
  // Peak tensor bytes allocated during one call beyond what was live before it (weights and
  // optimizer state excluded), on the first batch: the infer forward pass alone and a whole
  // train_step (forward, backward, update). 0 when no step ran.
  size_t forward_peak_bytes = 0;
  size_t step_peak_bytes = 0;
  ir::Model checkpoint;  // the model with the trained variables (io::save_model_file-able)
};

// Called after every step: epoch (1-based), samples done in this epoch, samples per epoch, the
// running mean loss and accuracy of the epoch, samples per second so far.
using ProgressFn = std::function<void(int epoch, int64_t done, int64_t total, double loss, double accuracy, double sps)>;

// Trains `model`: either an inference model (graphs[0] maps images f32 [N, ...] to logits
// [N, C]; it is turned into a training model with config.training) or a checkpoint that already
// has a `train_step` signature (training resumes with its variables and optimizer state; then
// config.training is ignored). Images are fed reshaped to the model's declared input rank
// (e.g. [N, 784] for a flat MLP input). Errors: those of make_training_model, a model input that
// cannot take the dataset's images, labels outside [0, C), a non-finite loss (naming the step),
// files that cannot be written.
Expected<TrainReport> train_classifier(ir::Model model, const Dataset& train_set, const Dataset* test_set,
                                       const TrainConfig& config, const ProgressFn& progress = nullptr);

// Accuracy and mean cross entropy of a model's `infer` signature (or main graph) on a dataset,
// batched by 1000. Returns {loss, accuracy}.
Expected<std::pair<double, double>> evaluate_classifier(const ir::Model& model, const Dataset& data, int threads = 1,
                                                        const std::string& device = "cpu");

}  // namespace tsr::train
