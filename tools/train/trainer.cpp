#include "tools/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "tessera/session.h"
#include "tessera/trainer.h"
#include "core/io/tsr_io.h"
#include "core/passes/verify_model.h"
#include "tools/train/plot.h"

namespace tsr::train {
namespace {

using Clock = std::chrono::steady_clock;

bool has_signature(const ir::Model& m, const std::string& name) {
  return std::any_of(m.signatures.begin(), m.signatures.end(), [&](const ir::Signature& s) { return s.name == name; });
}

// The image input's per-sample shape as the model declares it: the first input of the infer
// graph without its batch dim.
Expected<Shape> sample_shape(const ir::Model& m, const Dataset& d) {
  const ir::Graph& g = m.main();
  if (g.inputs.empty()) return invalid_argument("the model has no inputs");
  const ir::TensorInfo& in = g.tensors[static_cast<size_t>(g.inputs[0])];
  const int64_t per_sample = d.images.numel() / std::max<int64_t>(d.images.dim(0), 1);
  if (in.dtype != DType::kF32) return invalid_argument("model input \"", in.name, "\" is ", dtype_name(in.dtype), ", the images are f32");
  if (!in.has_shape || in.shape.size() < 2) return Shape{d.images.shape().begin() + 1, d.images.shape().end()};
  Shape s(in.shape.begin() + 1, in.shape.end());
  int64_t known = 1, unknown = -1;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] >= 0) known *= s[k];
    else if (unknown < 0) unknown = static_cast<int64_t>(k);
    else return invalid_argument("model input \"", in.name, "\" ", shape_str(in.shape), " has several dynamic non-batch dims");
  }
  if (unknown >= 0 && known > 0 && per_sample % known == 0) s[static_cast<size_t>(unknown)] = per_sample / known;
  if (shape_numel(s) != per_sample)
    return invalid_argument("model input \"", in.name, "\" ", shape_str(in.shape), " cannot take images of ",
                            shape_str(Shape{d.images.shape().begin() + 1, d.images.shape().end()}));
  return s;
}

// Copies the samples idx[begin, end) into a batch [n, sample...] (images) and [n] (labels).
std::pair<Tensor, Tensor> gather_batch(const Dataset& d, const Shape& sample, const std::vector<int64_t>& idx,
                                       size_t begin, size_t end) {
  const auto n = static_cast<int64_t>(end - begin);
  const int64_t per = shape_numel(sample);
  Shape xs{n};
  xs.insert(xs.end(), sample.begin(), sample.end());
  Tensor x = Tensor::empty(DType::kF32, xs).value();
  Tensor y = Tensor::empty(DType::kI64, {n}).value();
  const float* src = d.images.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = idx[begin + static_cast<size_t>(i)];
    std::memcpy(x.mut_data<float>() + i * per, src + s * per, static_cast<size_t>(per) * sizeof(float));
    y.mut_data<int64_t>()[i] = d.labels.data<int64_t>()[s];
  }
  return {std::move(x), std::move(y)};
}

// Correct predictions (argmax of each row of logits [n, C]) and the summed cross entropy.
std::pair<int64_t, double> score(const Tensor& logits, const Tensor& labels) {
  const int64_t n = logits.dim(0), c = logits.numel() / std::max<int64_t>(n, 1);
  const float* p = logits.data<float>();
  int64_t correct = 0;
  double ce = 0;
  for (int64_t i = 0; i < n; ++i, p += c) {
    const int64_t best = std::max_element(p, p + c) - p;
    const int64_t label = labels.data<int64_t>()[i];
    correct += best == label;
    double sum = 0;
    for (int64_t k = 0; k < c; ++k) sum += std::exp(static_cast<double>(p[k]) - p[best]);
    ce += std::log(sum) - (static_cast<double>(p[label]) - p[best]);
  }
  return {correct, ce};
}

Status check_labels(const Dataset& d, int64_t classes, const char* split) {
  for (int64_t i = 0; i < d.labels.numel(); ++i) {
    const int64_t l = d.labels.data<int64_t>()[i];
    if (l < 0 || l >= classes)
      return invalid_argument(split, " label[", i, "] = ", l, " is outside the model's ", classes, " classes");
  }
  return ok_status();
}

Status write_curves(const std::string& dir, const std::vector<std::pair<double, double>>& steps,
                    const std::vector<EpochStats>& epochs) {
  std::vector<double> sx, sy, ex, ey;
  // A moving average over 1% of the steps keeps the step-loss curve readable.
  const size_t win = std::max<size_t>(1, steps.size() / 100);
  double acc = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    acc += steps[i].second;
    if (i >= win) acc -= steps[i - win].second;
    sx.push_back(steps[i].first);
    sy.push_back(acc / static_cast<double>(std::min(i + 1, win)));
  }
  for (const EpochStats& e : epochs) {
    ex.push_back(e.epoch);
    ey.push_back(e.test_loss);
  }
  std::vector<Series> series{{"train loss (moving mean)", {31, 119, 180}, sx, sy}};
  if (!ey.empty() && std::isfinite(ey.back())) series.push_back({"test loss", {214, 39, 40}, ex, ey});
  return write_line_plot_png(dir + "/loss.png", series, "Training loss", "epoch", "cross entropy");
}

// The model's classes (its output [N, C], else the dataset's) cover every label of both splits.
Status check_model_labels(const ir::Model& model, const Dataset& train_set, const Dataset* test_set) {
  const ir::Graph& g = model.main();
  const ir::TensorInfo& out = g.tensors[static_cast<size_t>(g.outputs.at(0))];
  const int64_t classes = out.has_shape && out.shape.size() == 2 && out.shape[1] > 0 ? out.shape[1] : train_set.num_classes;
  TSR_RETURN_IF_ERROR(check_labels(train_set, classes, "training"));
  if (test_set) TSR_RETURN_IF_ERROR(check_labels(*test_set, classes, "test"));
  return ok_status();
}

// A checkpoint records the epochs behind it (kEpochsDoneKey); 0 for a model without.
Expected<int> epochs_done(const ir::Model& model) {
  auto it = model.metadata.find(kEpochsDoneKey);
  if (it == model.metadata.end()) return 0;
  char* end = nullptr;
  const long v = std::strtol(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0' || v < 0 || v > 1000000)
    return invalid_argument("checkpoint metadata ", kEpochsDoneKey, " = \"", it->second, "\" is not an epoch count");
  return static_cast<int>(v);
}

// The extra memory a call needs: its peak minus what was live before it.
template <typename Call>
Expected<size_t> transient_peak(const Call& call) {
  const size_t before = tensor_memory_stats().live_bytes;
  reset_tensor_memory_peak();
  TSR_RETURN_IF_ERROR(call());
  return tensor_memory_stats().peak_bytes - before;
}

// One training run over a tsr::Trainer (the class behind the C, Java and JS APIs too, so every
// front door computes the same weights): the epochs, their statistics and the files of
// config.out_dir (loss.csv per step; per epoch a checkpoint, epochs.csv and loss.png).
class TrainRun {
 public:
  TrainRun(Trainer& trainer, const Dataset& train_set, const Dataset* test_set, const TrainConfig& config,
           const ProgressFn& progress, Shape sample)
      : trainer_(trainer), train_set_(train_set), test_set_(test_set), config_(config), progress_(progress),
        sample_(std::move(sample)),
        total_(config.limit > 0 ? std::min(config.limit, train_set.labels.numel()) : train_set.labels.numel()),
        order_(static_cast<size_t>(total_)), rng_(config.seed) {
    std::iota(order_.begin(), order_.end(), 0);
  }

  // Trains `model` (the session's; a checkpoint resumes after the epochs it records).
  Expected<TrainReport> run(const ir::Model& model) {
    if (!config_.out_dir.empty()) {
      steps_csv_.open(config_.out_dir + "/loss.csv");
      if (!steps_csv_) return not_found(config_.out_dir, "/loss.csv: cannot write");
      steps_csv_ << "epoch,step,samples,loss,batch_accuracy\n";
    }
    if (total_ > 0 && config_.epochs > 0) {
      // Named, not a structured binding: clang 14 cannot capture those in a lambda.
      const auto batch = gather_batch(train_set_, sample_, order_, 0,
                                      std::min(order_.size(), static_cast<size_t>(config_.batch_size)));
      const Tensor& x = batch.first;
      TSR_ASSIGN_OR_RETURN(report_.forward_peak_bytes,
                           transient_peak([&]() { return trainer_.infer({x}).status(); }));
    }
    TSR_ASSIGN_OR_RETURN(const int start_epoch, epochs_done(model));
    // Resuming replays the shuffles of the epochs behind the checkpoint so that, with the same
    // --seed and --limit, the resumed run sees the batches an uninterrupted run would.
    for (int e = 0; e < start_epoch; ++e) shuffle_order(order_, rng_);
    for (int epoch = start_epoch + 1; epoch <= start_epoch + config_.epochs; ++epoch) {
      TSR_ASSIGN_OR_RETURN(EpochStats st, train_epoch(epoch));
      TSR_RETURN_IF_ERROR(end_epoch(st));
    }
    if (config_.epochs == 0) report_.checkpoint = trainer_.checkpoint().graph();
    return std::move(report_);
  }

 private:
  // One pass over the shuffled samples, a train_step per batch.
  Expected<EpochStats> train_epoch(int epoch) {
    shuffle_order(order_, rng_);
    const auto t0 = Clock::now();
    double loss_sum = 0;
    int64_t correct = 0, done = 0;
    for (size_t b = 0; b < order_.size(); b += static_cast<size_t>(config_.batch_size)) {
      const size_t e = std::min(order_.size(), b + static_cast<size_t>(config_.batch_size));
      const auto batch = gather_batch(train_set_, sample_, order_, b, e);
      const Tensor &x = batch.first, &y = batch.second;
      double loss = 0;
      Tensor logits;
      auto run_step = [&]() -> Status {
        TSR_ASSIGN_OR_RETURN(EvalResult r, trainer_.step_with_prediction({x}, y));
        loss = r.loss;
        logits = std::move(r.prediction);
        return ok_status();
      };
      if (step_ == 0) {
        TSR_ASSIGN_OR_RETURN(report_.step_peak_bytes, transient_peak(run_step));
      } else {
        TSR_RETURN_IF_ERROR(run_step());
      }
      if (!std::isfinite(loss)) return invalid_argument("epoch ", epoch, " step ", step_, ": the loss is ", loss, " (lower the learning rate?)");
      const auto n = static_cast<int64_t>(e - b);
      correct += score(logits, y).first;
      loss_sum += loss * static_cast<double>(n);
      done += n;
      ++step_;
      const double frac = epoch - 1 + static_cast<double>(done) / static_cast<double>(total_);
      step_losses_.emplace_back(frac, loss);
      if (steps_csv_) steps_csv_ << epoch << ',' << step_ << ',' << done << ',' << loss << ',' << static_cast<double>(score(logits, y).first) / static_cast<double>(n) << '\n';
      const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      if (progress_) progress_(epoch, done, total_, loss_sum / static_cast<double>(done), static_cast<double>(correct) / static_cast<double>(done), static_cast<double>(done) / std::max(secs, 1e-9));
    }
    EpochStats st;
    st.epoch = epoch;
    st.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    st.train_loss = loss_sum / static_cast<double>(std::max<int64_t>(done, 1));
    st.train_accuracy = static_cast<double>(correct) / static_cast<double>(std::max<int64_t>(done, 1));
    st.samples_per_second = static_cast<double>(done) / std::max(st.seconds, 1e-9);
    return st;
  }

  // The epoch's checkpoint, its test scores and its files.
  Status end_epoch(EpochStats st) {
    report_.checkpoint = trainer_.checkpoint().graph();
    report_.checkpoint.metadata[kEpochsDoneKey] = std::to_string(st.epoch);
    if (test_set_) {
      TSR_ASSIGN_OR_RETURN(const auto ev, evaluate_classifier(report_.checkpoint, *test_set_, config_.threads, config_.device));
      st.test_loss = ev.first;
      st.test_accuracy = ev.second;
    }
    report_.epochs.push_back(st);
    if (config_.out_dir.empty()) return ok_status();
    TSR_RETURN_IF_ERROR(io::save_model_file(report_.checkpoint, str_cat(config_.out_dir, "/checkpoint_epoch", st.epoch, ".tsr")));
    std::ofstream ecsv(config_.out_dir + "/epochs.csv");
    ecsv << "epoch,train_loss,train_accuracy,test_loss,test_accuracy,seconds,samples_per_second\n";
    for (const EpochStats& s : report_.epochs)
      ecsv << s.epoch << ',' << s.train_loss << ',' << s.train_accuracy << ',' << s.test_loss << ',' << s.test_accuracy
           << ',' << s.seconds << ',' << s.samples_per_second << '\n';
    return write_curves(config_.out_dir, step_losses_, report_.epochs);
  }

  Trainer& trainer_;
  const Dataset& train_set_;
  const Dataset* test_set_;
  const TrainConfig& config_;
  const ProgressFn& progress_;
  const Shape sample_;
  const int64_t total_;  // samples per epoch (config.limit)
  std::vector<int64_t> order_;
  std::mt19937_64 rng_;
  std::vector<std::pair<double, double>> step_losses_;  // (fractional epoch, loss)
  std::ofstream steps_csv_;
  TrainReport report_;
  int64_t step_ = 0;
};

}  // namespace

void shuffle_order(std::vector<int64_t>& order, std::mt19937_64& rng) {
  for (size_t i = order.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(rng() % static_cast<uint64_t>(i));  // j in [0, i - 1]
    std::swap(order[i - 1], order[j]);
  }
}

Expected<std::pair<double, double>> evaluate_classifier(const ir::Model& model, const Dataset& data, int threads,
                                                        const std::string& device) {
  TSR_ASSIGN_OR_RETURN(const Shape sample, sample_shape(model, data));
  SessionOptions so;
  so.num_threads = threads;
  so.device = device;
  TSR_ASSIGN_OR_RETURN(auto session, Session::create(std::make_shared<ir::Model>(model), so));
  const bool infer = has_signature(model, "infer");
  std::vector<int64_t> idx(static_cast<size_t>(data.labels.numel()));
  std::iota(idx.begin(), idx.end(), 0);
  int64_t correct = 0;
  double ce = 0;
  for (size_t b = 0; b < idx.size(); b += 1000) {
    auto [x, y] = gather_batch(data, sample, idx, b, std::min(idx.size(), b + 1000));
    TSR_ASSIGN_OR_RETURN(auto out, infer ? session->run_signature("infer", {x}) : session->run({x}));
    const auto [c, l] = score(out[0], y);
    correct += c;
    ce += l;
  }
  const auto n = static_cast<double>(std::max<size_t>(idx.size(), 1));
  return std::make_pair(ce / n, static_cast<double>(correct) / n);
}

Expected<TrainReport> train_classifier(ir::Model model, const Dataset& train_set, const Dataset* test_set,
                                       const TrainConfig& config, const ProgressFn& progress) {
  if (config.batch_size < 1) return invalid_argument("batch size ", config.batch_size, " (expected >= 1)");
  if (config.epochs < 0) return invalid_argument("epochs ", config.epochs, " (expected >= 0)");
  if (!has_signature(model, "train_step")) {
    TSR_ASSIGN_OR_RETURN(const Model prepared,
                         prepare_training(Model(std::make_shared<ir::Model>(std::move(model))), config.training));
    model = prepared.graph();
  }
  TSR_RETURN_IF_ERROR(passes::verify_model(model));
  TSR_ASSIGN_OR_RETURN(Shape sample, sample_shape(model, train_set));
  TSR_RETURN_IF_ERROR(check_model_labels(model, train_set, test_set));
  if (!config.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(config.out_dir, ec);
    if (ec) return not_found(config.out_dir, ": cannot create the directory (", ec.message(), ")");
  }
  SessionOptions so;
  so.num_threads = config.threads;
  so.device = config.device;
  TSR_ASSIGN_OR_RETURN(auto trainer, Trainer::create(std::make_shared<ir::Model>(model), so));
  return TrainRun(*trainer, train_set, test_set, config, progress, std::move(sample)).run(model);
}

}  // namespace tsr::train
