// Training models: an inference graph turned into a `train_step` signature (forward, backward,
// optimizer update in one static graph) whose weights and optimizer state are model variables
// kept in the Session between steps (DESIGN.md §7); and the way back to an inference model.
//
// A training model has
//   graphs[0]  "infer":      (inputs...)                 -> (prediction, other outputs...)
//   graphs[k]  "train_step": (inputs..., labels)         -> (loss, prediction)
//   graphs[j]  "eval_step":  (inputs..., labels)         -> (loss, prediction), no update
// and variables: every trainable weight (bound to inputs of all three graphs, updated by train_step),
// the running mean and variance of each BatchNormalization the model has in training mode (as
// exported from a PyTorch module in train(): train_step normalizes with the batch's statistics
// and updates these by ONNX's momentum rule, with the batch's biased variance; infer and eval_step
// normalize with them in inference mode, as torch's eval() does), the optimizer state ("<weight>.m"/"<weight>.v" for AdamW, "<weight>.velocity" for momentum),
// "train.lr" (f32 scalar learning rate, changeable between steps with Session::set_variable) and
// "train.step" (i64 scalar, updates done so far).
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace tsr::passes {

struct TrainingOptions {
  // "softmax_cross_entropy": labels are class indices (i64 [N]), the prediction is logits
  // [N, C] (ONNX SoftmaxCrossEntropyLoss, mean reduction); "mse": labels have the prediction's
  // shape and dtype, loss = mean((prediction - labels)^2); "nll": class indices as above, the
  // prediction is log-probabilities [N, C] (a model ending in LogSoftmax; ONNX
  // NegativeLogLikelihoodLoss, mean reduction).
  std::string loss = "softmax_cross_entropy";
  // "sgd" (optionally with momentum / nesterov, as torch.optim.SGD without dampening), "adam",
  // "adamw" (torch.optim.Adam / AdamW update rules).
  std::string optimizer = "adam";
  double lr = 1e-3;
  double momentum = 0.0;  // sgd
  bool nesterov = false;  // sgd, needs momentum > 0
  double weight_decay = 0.0;  // sgd: L2 added to the gradient; adamw: decoupled
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;  // adam, adamw
  // Names of the constants of graphs[0] to train; empty = every floating-point constant with
  // more than one element or a name (all weights and biases).
  std::vector<std::string> trainable;
};

// Builds a training model from an inference model (graphs[0]'s first output is the
// prediction). Errors: unknown loss/optimizer names, a trainable name that is not a
// floating-point constant, ops without gradient rules (all listed at once).
Expected<ir::Model> make_training_model(ir::Model model, const TrainingOptions& options);

// The inference model of a checkpoint: the graph of `signature` with every bound variable
// inlined as a constant, without variables or other signatures, and with unused subgraphs
// dropped. Errors: no such signature; a signature whose graph is not graphs[0].
Expected<ir::Model> export_inference(const ir::Model& checkpoint, const std::string& signature = "infer");

}  // namespace tsr::passes
