// `tessera train` and `tessera export`.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "core/io/tsr_io.h"
#include "core/passes/training.h"
#include "tessera/trainer.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/model_loader.h"
#include "tools/train/architectures.h"
#include "tools/train/trainer.h"

namespace tsr::cli {
namespace {

// One progress line, redrawn in place on a terminal and printed every ~10% otherwise.
class ProgressBar {
 public:
  ProgressBar() : tty_(isatty(fileno(stderr)) != 0) {}
  void update(int epoch, int epochs, int64_t done, int64_t total, double loss, double acc, double sps) {
    const int tenth = static_cast<int>(done * 10 / std::max<int64_t>(total, 1));
    if (!tty_ && tenth == last_tenth_ && done != total) return;
    last_tenth_ = done == total ? -1 : tenth;
    const int width = 30, fill = static_cast<int>(done * width / std::max<int64_t>(total, 1));
    std::string bar(static_cast<size_t>(fill), '#');
    bar.resize(width, '.');
    std::fprintf(stderr, "%sepoch %d/%d [%s] %lld/%lld  loss %.4f  acc %.2f%%  %.0f samples/s%s", tty_ ? "\r" : "", epoch,
                 epochs, bar.c_str(), static_cast<long long>(done), static_cast<long long>(total), loss, 100 * acc, sps,
                 tty_ && done != total ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  bool tty_;
  int last_tenth_ = -1;
};

// The optimizer flags `train` and `prepare-training` share (TrainingSpec's fields).
void add_optimizer_options(CLI::App* sub, TrainingSpec& spec) {
  sub->add_option("--optimizer", spec.optimizer, "sgd, adam or adamw (default adam)")->check(CLI::IsMember({"sgd", "adam", "adamw"}));
  sub->add_option("--lr", spec.learning_rate, "Learning rate (default 1e-3)")->check(CLI::PositiveNumber);
  sub->add_option("--momentum", spec.momentum, "SGD momentum (default 0)")->check(CLI::Range(0.0, 1.0));
  sub->add_flag("--nesterov", spec.nesterov, "Nesterov momentum (sgd with --momentum > 0)");
  sub->add_option("--weight-decay", spec.weight_decay, "L2 (sgd) or decoupled (adamw) weight decay (default 0)")->check(CLI::Range(0.0, 1.0));
}

}  // namespace

int prepare_training_command(const PrepareTrainingOptions& o) {
  auto model = load_model(o.model);
  if (!model.ok()) return report_error(model.status());
  auto training = prepare_training(*model, o.spec);
  if (!training.ok()) return report_error(training.status());
  if (Status s = training->save(o.output); !s.ok()) return report_error(s);
  // The trainable weights are what the infer signature binds.
  size_t weights = 0;
  for (const ir::Signature& sig : training->graph().signatures)
    if (sig.name == "infer")
      for (const std::string& v : sig.bound_inputs) weights += !v.empty();
  std::printf("wrote %s (%zu trainable weights, %zu variables; signatures infer, train_step, eval_step)\n", o.output.c_str(),
              weights, training->graph().variables.size());
  return kExitOk;
}

int train_command(const TrainOptions& o) {
  if (o.model.empty() == o.arch.empty()) {
    std::cerr << "tessera: usage error: give either a MODEL file or --arch (" << "lenet, mlp" << ")\n";
    return kExitUsage;
  }
  auto train_set = train::load_idx_dataset(o.data, "train");
  if (!train_set.ok()) return report_error(train_set.status());
  auto test_set = train::load_idx_dataset(o.data, "t10k");
  if (!test_set.ok()) return report_error(test_set.status());
  Expected<ir::Model> model = ir::Model();
  if (o.arch.empty()) {
    auto loaded = load_model(o.model);
    if (!loaded.ok()) return report_error(loaded.status());
    model = loaded->graph();
  } else {
    model = train::build_architecture(o.arch, train_set->images.dim(2), train_set->images.dim(3),
                                  std::max<int64_t>(train_set->num_classes, test_set->num_classes), o.seed);
  }
  if (!model.ok()) return report_error(model.status());

  if (o.epochs == 0) {
    // Evaluation only: the model's accuracy on the test split (e.g. an exported model).
    auto ev = train::evaluate_classifier(*model, *test_set, o.threads, o.device);
    if (!ev.ok()) return report_error(ev.status());
    std::printf("test loss %.4f, test accuracy %.2f%% (%lld samples)\n", ev->first, 100 * ev->second,
                static_cast<long long>(test_set->labels.numel()));
    return kExitOk;
  }
  // A training model (tessera prepare-training, a checkpoint) brings its loss and optimizer.
  const bool prepared = std::any_of(model->signatures.begin(), model->signatures.end(),
                                    [](const ir::Signature& s) { return s.name == "train_step"; });
  train::TrainConfig cfg;
  cfg.training = o.spec;
  cfg.batch_size = o.batch_size;
  cfg.epochs = o.epochs;
  cfg.seed = o.seed;
  cfg.threads = o.threads;
  cfg.device = o.device;
  cfg.limit = o.limit;
  cfg.out_dir = o.out_dir;
  std::cerr << "training " << (o.arch.empty() ? o.model : "--arch " + o.arch) << " on " << o.data << ": "
            << (o.limit > 0 ? std::min<int64_t>(o.limit, train_set->labels.numel()) : train_set->labels.numel())
            << " training / " << test_set->labels.numel() << " test samples, batch " << o.batch_size << ", "
            << (prepared ? std::string("the model's optimizer") : o.spec.optimizer + " lr " + std::to_string(o.spec.learning_rate)) << ", "
            << o.threads << " thread(s), device " << o.device << "\n";
  ProgressBar bar;
  auto report = train::train_classifier(
      std::move(model).value(), *train_set, &*test_set, cfg,
      [&](int epoch, int64_t done, int64_t total, double loss, double acc, double sps) {
        bar.update(epoch, o.epochs, done, total, loss, acc, sps);
      });
  if (!report.ok()) return report_error(report.status());
  for (const auto& e : report->epochs)
    std::printf("epoch %d: train loss %.4f, train accuracy %.2f%%, test loss %.4f, test accuracy %.2f%%, %.2f s (%.0f samples/s)\n",
                e.epoch, e.train_loss, 100 * e.train_accuracy, e.test_loss, 100 * e.test_accuracy, e.seconds,
                e.samples_per_second);
  if (report->step_peak_bytes > 0)
    std::printf("peak tensor memory beyond the weights: train step %.2f MiB, forward pass %.2f MiB (batch %lld)\n",
                report->step_peak_bytes / 1048576.0, report->forward_peak_bytes / 1048576.0,
                static_cast<long long>(o.batch_size));
  if (!o.out_dir.empty())
    std::printf("wrote %s/checkpoint_epoch<N>.tsr, loss.csv, epochs.csv, loss.png\n", o.out_dir.c_str());
  return kExitOk;
}

int export_command(const ExportOptions& o) {
  auto checkpoint = io::load_model_file(o.checkpoint);
  if (!checkpoint.ok()) return report_error(checkpoint.status());
  auto model = passes::export_inference(*checkpoint, o.signature);
  if (!model.ok()) return report_error(model.status());
  model->producer = "tessera export";
  if (Status s = io::save_model_file(*model, o.output); !s.ok()) return report_error(s);
  std::printf("wrote %s (signature \"%s\", %zu nodes)\n", o.output.c_str(), o.signature.c_str(), model->main().nodes.size());
  return kExitOk;
}

Subcommand register_train(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* sub = app.add_subcommand("train", "Train an image classifier on an IDX dataset (default: Fashion-MNIST)");
  sub->add_option("model", o->model, "Inference model (.tsr/.onnx; first input images, first output logits), a training model from tessera prepare-training, or a checkpoint to resume (these bring their loss and optimizer)");
  sub->add_option("--arch", o->arch, "Built-in architecture instead of a model file: lenet, mlp");
  sub->add_option("--data", o->data, "Directory with {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (default " + o->data + ")");
  sub->add_option("--batch-size", o->batch_size, "Minibatch size (default 64)")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--epochs", o->epochs, "Passes over the training set (default 10); 0 = only evaluate MODEL on the test split")->check(CLI::Range(0, 100000));
  sub->add_option("--loss", o->spec.loss,
                  "softmax_cross_entropy (the model outputs logits; default) or nll (it outputs log-probabilities)")
      ->check(CLI::IsMember({"softmax_cross_entropy", "nll"}));
  add_optimizer_options(sub, o->spec);
  sub->add_option("--seed", o->seed, "Seed of the weight initialization (--arch) and the shuffling (default 0)");
  sub->add_option("--threads", o->threads, "Intra-op threads (default 1; 0 = all cores)")->check(CLI::Range(0, 1024));
  sub->add_option("--device", o->device,
                  "Where nodes run: cpu (default), cuda or vulkan (exit 8 when there is no such device), auto, null")
      ->check(CLI::IsMember({"cpu", "cuda", "vulkan", "auto", "null"}));
  sub->add_option("--limit", o->limit, "Train on the first N samples only (default: all)")->check(CLI::NonNegativeNumber);
  sub->add_option("-o,--out-dir", o->out_dir, "Write checkpoint_epoch<N>.tsr, loss.csv, epochs.csv and loss.png here");
  return {sub, [o] { return train_command(*o); }};
}

Subcommand register_prepare_training(CLI::App& app) {
  auto o = std::make_shared<PrepareTrainingOptions>();
  CLI::App* sub = app.add_subcommand(
      "prepare-training", "Turn an inference model into a training model (infer, train_step, eval_step) for tessera train and the training APIs");
  sub->add_option("model", o->model, "Inference model (.onnx/.tsr; its first output is the prediction)")->required();
  sub->add_option("-o,--output", o->output, "Output training model (.tsr)")->required();
  sub->add_option("--loss", o->spec.loss,
                  "softmax_cross_entropy (logits, i64 class labels; default), nll (log-probabilities) or mse (labels shaped like the prediction)")
      ->check(CLI::IsMember({"softmax_cross_entropy", "nll", "mse"}));
  add_optimizer_options(sub, o->spec);
  sub->add_option("--trainable", o->spec.trainable,
                  "Train only the weights matching this name pattern ('*', '?'; whole name; repeatable; default all)")
      ->allow_extra_args(false);
  sub->add_option("--frozen", o->spec.frozen, "Keep the weights matching this pattern fixed (after --trainable; repeatable)")
      ->allow_extra_args(false);
  return {sub, [o] { return prepare_training_command(*o); }};
}

Subcommand register_export(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand("export", "Write an inference-only .tsr from a training checkpoint (weights as constants)");
  sub->add_option("checkpoint", o->checkpoint, "Checkpoint (.tsr written by tessera train)")->required();
  sub->add_option("-o,--output", o->output, "Output .tsr file")->required();
  sub->add_option("--signature", o->signature, "Signature to export (default infer)");
  return {sub, [o] { return export_command(*o); }};
}

}  // namespace tsr::cli
