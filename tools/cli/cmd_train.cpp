// `tessera train` and `tessera export`.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "core/io/tsr_io.h"
#include "core/passes/training.h"
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

}  // namespace

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
  train::TrainConfig cfg;
  cfg.training.loss = o.loss;
  cfg.training.optimizer = o.optimizer;
  cfg.training.lr = o.lr;
  cfg.training.momentum = o.momentum;
  cfg.training.nesterov = o.nesterov;
  cfg.training.weight_decay = o.weight_decay;
  cfg.batch_size = o.batch_size;
  cfg.epochs = o.epochs;
  cfg.seed = o.seed;
  cfg.threads = o.threads;
  cfg.device = o.device;
  cfg.limit = o.limit;
  cfg.out_dir = o.out_dir;
  std::cerr << "training " << (o.arch.empty() ? o.model : "--arch " + o.arch) << " on " << o.data << ": "
            << (o.limit > 0 ? std::min<int64_t>(o.limit, train_set->labels.numel()) : train_set->labels.numel())
            << " training / " << test_set->labels.numel() << " test samples, batch " << o.batch_size << ", " << o.optimizer
            << " lr " << o.lr << ", " << o.threads << " thread(s), device " << o.device << "\n";
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

}  // namespace tsr::cli
