// tsr::Trainer: on-device training through the public API (docs/training.md "Training API").
//
//   auto infer = tsr::Model::load("classifier.tsr");
//   tsr::TrainingSpec spec;                       // softmax cross entropy, Adam, lr 1e-3
//   spec.trainable = {"head.*"};                  // fine-tune the head only
//   auto train = tsr::prepare_training(*infer, spec);            // Expected<Model>: a training model
//   auto trainer = tsr::Trainer::create(*train, options);        // Expected<unique_ptr<Trainer>>
//   auto loss = (*trainer)->step({images}, labels);              // Expected<float>
//   (*trainer)->save_checkpoint("ckpt.tsr");                     // resumable: weights + optimizer state
//   (*trainer)->export_inference().value().save("tuned.tsr");   // what `tessera run` runs
//
// A training model (core/passes/training.h, schema/README.md "Training models") has the signatures
//   "infer":      (inputs...)         -> (prediction, other outputs...)
//   "train_step": (inputs..., labels) -> (loss, prediction)   and updates weights + optimizer state
//   "eval_step":  (inputs..., labels) -> (loss, prediction)   no update
// sharing the trainable weights as variables; "train.lr" (f32 scalar) and "train.step" (i64
// scalar, updates done) are variables too. `tessera prepare-training` and `tessera train` write
// such models; a checkpoint is the same model with the variables' current values.
//
// Labels: class indices i64 [N] for the losses "softmax_cross_entropy" and "nll"; the
// prediction's dtype and shape for "mse".
//
// Determinism: with num_threads = 1 the same model, inputs and step sequence give bit-identical
// weights through every front door (CLI, C API, JNI, tessera-web): all of them run this class.
//
// Thread safety: as Session (one thread at a time per Trainer).
// Errors (Status codes as Session's): kInvalidArgument for bad inputs or labels (naming them), a
// non-finite learning rate, or a checkpoint whose variables do not match; kNotFound when the model
// lacks a signature (naming the ones it has); those of Session::create.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/tensor/tensor.h"
#include "tessera/model.h"
#include "tessera/session.h"

namespace tsr {

// How prepare_training turns an inference model into a training model.
struct TrainingSpec {
  // "softmax_cross_entropy" (logits [N, C], i64 labels [N], mean), "nll" (log-probabilities),
  // "mse" (labels shaped like the prediction).
  std::string loss = "softmax_cross_entropy";
  // "sgd" (momentum, nesterov, L2 weight decay as torch.optim.SGD), "adam", "adamw" (decoupled).
  std::string optimizer = "adam";
  double learning_rate = 1e-3;
  double momentum = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  // Name patterns of the weights to train ('*' any run of characters, '?' one character;
  // whole-name match). Empty = every floating-point weight (constant of rank >= 1).
  std::vector<std::string> trainable;
  // Name patterns of weights to keep fixed, applied after `trainable`.
  std::vector<std::string> frozen;
};

// A training model from an inference model (its main graph's first output is the prediction).
// Errors: kInvalidArgument for an unknown loss/optimizer, a pattern that matches no weight (each
// such pattern named), no weight left to train, a model that already has variables;
// kUnsupported listing every op without a gradient rule.
Expected<Model> prepare_training(const Model& inference, const TrainingSpec& spec);

// '*' / '?' glob match of a whole name (the patterns of TrainingSpec).
bool name_matches(std::string_view pattern, std::string_view name);

// The result of Trainer::eval.
struct EvalResult {
  float loss = 0;
  Tensor prediction;  // the model's first output, e.g. logits [N, C]
};

class Trainer {
 public:
  // A Session over a training model (one with a "train_step" signature; a checkpoint resumes with
  // its weights and optimizer state). options as Session's (threads, device).
  static Expected<std::unique_ptr<Trainer>> create(const Model& training_model, const SessionOptions& options = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // The data inputs (train_step's caller-supplied inputs before the labels) and the labels.
  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const ValueInfo& labels() const { return labels_; }
  // Names of the trainable weights, in the model's order.
  const std::vector<std::string>& weights() const { return weights_; }

  // One optimizer step on a batch: forward, loss, backward, update. Returns the batch's loss
  // (before the update; NaN or infinite as computed: the caller decides, as with PyTorch).
  // Errors: inputs/labels count, dtype or shape (named); nothing is updated then.
  // Steady state (same batch shape as the step before, one warm-up step): no heap allocation,
  // neither operator new nor the tensor allocator's system allocations (tests/train/step_alloc_test.cpp).
  Expected<float> step(const std::vector<Tensor>& inputs, const Tensor& labels);
  // step() that also returns the model's first output on the batch (computed before the update,
  // as eval's): what `tessera train` scores its running accuracy with.
  Expected<EvalResult> step_with_prediction(const std::vector<Tensor>& inputs, const Tensor& labels);
  // The loss and prediction on a batch with the current weights; nothing is updated.
  Expected<EvalResult> eval(const std::vector<Tensor>& inputs, const Tensor& labels);
  // The "infer" signature with the current weights: the model's outputs.
  Expected<std::vector<Tensor>> infer(const std::vector<Tensor>& inputs);

  float learning_rate() const;
  // kInvalidArgument for a non-finite or negative rate. Takes effect at the next step.
  Status set_learning_rate(float lr);
  // Optimizer steps done so far (the "train.step" variable; resumes with a checkpoint).
  int64_t step_count() const;

  // The training model with the current weights and optimizer state: resuming from it continues
  // bit-identically (same inputs, one thread).
  Model checkpoint() const;
  Status save_checkpoint(const std::string& path) const;
  // Loads the variables of a checkpoint of the same training model (each variable of this
  // trainer must be there with the same dtype and shape; extra ones are an error too, naming them).
  Status load_checkpoint(const Model& checkpoint);
  // The inference model ("infer" with the current weights as constants, no variables), as
  // `tessera export` writes it.
  Expected<Model> export_inference() const;

 private:
  Trainer() = default;
  std::unique_ptr<Session> session_;
  std::vector<ValueInfo> inputs_;
  ValueInfo labels_;
  std::vector<std::string> weights_;
  std::vector<std::string> variables_;
  bool has_eval_ = false;
  // Scratch of step/eval, kept so that a steady-state step allocates nothing: the signature's
  // arguments (inputs, then labels) and its outputs.
  std::vector<Tensor> args_, outs_;

  Expected<EvalResult> run_step(std::string_view signature, const std::vector<Tensor>& inputs, const Tensor& labels);
};

}  // namespace tsr
