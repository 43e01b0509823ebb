// The C API's training half (tessera_c.h "Training"): tsr_training_spec, tsr_prepare_training and
// tsr_trainer over tsr::Trainer. A file of its own because the trainer needs the passes
// (autodiff, optimizers), which the minimal runtimes (mobile/selective) leave out: they compile
// only tessera_c.cpp.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "core/c_api/c_api_internal.h"
#include "tessera/trainer.h"

struct tsr_training_spec {
  tsr::TrainingSpec spec;
};

struct tsr_trainer {
  std::unique_ptr<tsr::Trainer> trainer;
};

namespace {

using namespace tsr::c_api;

int fail(tsr_error** err, const tsr::Status& s) {
  set_error(err, s);
  return static_cast<int>(s.code());
}

int fail(tsr_error** err, int code, std::string message) {
  set_error(err, code, std::move(message));
  return code;
}

// The step/eval arguments as tensors: n_inputs live values (the trainer's count), then the labels.
int gather(const tsr_trainer* t, const tsr_value* const* inputs, size_t n_inputs, const tsr_value* labels,
           const char* fn, std::vector<tsr::Tensor>& in, tsr_error** err) {
  if (!check_handle(t, Kind::kTrainer, tsr::str_cat(fn, ": trainer").c_str(), err)) return TSR_ERR_INVALID_ARGUMENT;
  const std::vector<tsr::ValueInfo>& info = t->trainer->inputs();
  if (n_inputs != info.size())
    return fail(err, TSR_ERR_INVALID_ARGUMENT, tsr::str_cat(fn, ": ", n_inputs, " inputs given, the model takes ", info.size(), " (and the labels)"));
  if (n_inputs && !inputs) return fail(err, TSR_ERR_INVALID_ARGUMENT, tsr::str_cat(fn, ": inputs is NULL"));
  for (size_t i = 0; i < n_inputs; ++i) {
    const std::string where = tsr::str_cat(fn, ": input[", i, "] (\"", info[i].name, "\")");
    if (!check_handle(inputs[i], Kind::kValue, where.c_str(), err)) return TSR_ERR_INVALID_ARGUMENT;
    in.push_back(inputs[i]->tensor);
  }
  const std::string where = tsr::str_cat(fn, ": labels (\"", t->trainer->labels().name, "\")");
  if (!check_handle(labels, Kind::kValue, where.c_str(), err)) return TSR_ERR_INVALID_ARGUMENT;
  return 0;
}

// A model's .tsr bytes in a malloc'ed buffer (freed by tsr_buffer_free).
int to_buffer(tsr::Expected<tsr::Model> model, uint8_t** data, size_t* size, const char* fn, tsr_error** err) {
  if (!data || !size) return fail(err, TSR_ERR_INVALID_ARGUMENT, tsr::str_cat(fn, ": ", data ? "size" : "data", " is NULL"));
  *data = nullptr;
  *size = 0;
  if (!model.ok()) return fail(err, model.status());
  auto bytes = model->serialize();
  if (!bytes.ok()) return fail(err, bytes.status());
  auto* out = static_cast<uint8_t*>(std::malloc(std::max<size_t>(bytes->size(), 1)));
  if (!out) return fail(err, TSR_ERR_RESOURCE, tsr::str_cat(fn, ": out of memory (", bytes->size(), " bytes)"));
  std::memcpy(out, bytes->data(), bytes->size());
  *data = out;
  *size = bytes->size();
  return 0;
}

int load_into(tsr_trainer* t, tsr::Expected<tsr::Model> checkpoint, tsr_error** err) {
  if (!checkpoint.ok()) return fail(err, checkpoint.status());
  const tsr::Status s = t->trainer->load_checkpoint(*checkpoint);
  return s.ok() ? 0 : fail(err, s);
}

}  // namespace

extern "C" {

tsr_training_spec* tsr_training_spec_create(void) {
  return track(new (std::nothrow) tsr_training_spec{}, Kind::kTrainingSpec);
}

void tsr_training_spec_set_loss(tsr_training_spec* s, const char* loss) {
  if (is_live(s, Kind::kTrainingSpec)) s->spec.loss = loss ? loss : "";
}

void tsr_training_spec_set_optimizer(tsr_training_spec* s, const char* optimizer) {
  if (is_live(s, Kind::kTrainingSpec)) s->spec.optimizer = optimizer ? optimizer : "";
}

void tsr_training_spec_set_learning_rate(tsr_training_spec* s, double lr) {
  if (is_live(s, Kind::kTrainingSpec)) s->spec.learning_rate = lr;
}

void tsr_training_spec_set_momentum(tsr_training_spec* s, double momentum, int nesterov) {
  if (!is_live(s, Kind::kTrainingSpec)) return;
  s->spec.momentum = momentum;
  s->spec.nesterov = nesterov != 0;
}

void tsr_training_spec_set_weight_decay(tsr_training_spec* s, double weight_decay) {
  if (is_live(s, Kind::kTrainingSpec)) s->spec.weight_decay = weight_decay;
}

void tsr_training_spec_add_trainable(tsr_training_spec* s, const char* pattern) {
  if (is_live(s, Kind::kTrainingSpec) && pattern) s->spec.trainable.emplace_back(pattern);
}

void tsr_training_spec_add_frozen(tsr_training_spec* s, const char* pattern) {
  if (is_live(s, Kind::kTrainingSpec) && pattern) s->spec.frozen.emplace_back(pattern);
}

void tsr_training_spec_free(tsr_training_spec* s) {
  if (untrack(s, Kind::kTrainingSpec)) delete s;
}

tsr_model* tsr_prepare_training(const tsr_model* inference, const tsr_training_spec* spec, tsr_error** err) {
  if (!check_handle(inference, Kind::kModel, "tsr_prepare_training: inference", err)) return nullptr;
  if (spec && !check_handle(spec, Kind::kTrainingSpec, "tsr_prepare_training: spec", err)) return nullptr;
  auto m = tsr::prepare_training(inference->model, spec ? spec->spec : tsr::TrainingSpec{});
  if (!m.ok()) {
    set_error(err, m.status());
    return nullptr;
  }
  auto* h = new (std::nothrow) tsr_model{std::move(m).value()};
  if (!h) set_error(err, TSR_ERR_RESOURCE, "tsr_prepare_training: out of memory");
  return track(h, Kind::kModel);
}

tsr_trainer* tsr_trainer_create(const tsr_model* model, const tsr_session_options* options, tsr_error** err) {
  if (!check_handle(model, Kind::kModel, "tsr_trainer_create: training_model", err)) return nullptr;
  if (options && !check_handle(options, Kind::kOptions, "tsr_trainer_create: options", err)) return nullptr;
  auto t = tsr::Trainer::create(model->model, options ? options->options : tsr::SessionOptions{});
  if (!t.ok()) {
    set_error(err, t.status());
    return nullptr;
  }
  auto* h = new (std::nothrow) tsr_trainer{std::move(t).value()};
  if (!h) set_error(err, TSR_ERR_RESOURCE, "tsr_trainer_create: out of memory");
  return track(h, Kind::kTrainer);
}

void tsr_trainer_free(tsr_trainer* t) {
  if (untrack(t, Kind::kTrainer)) delete t;
}

size_t tsr_trainer_input_count(const tsr_trainer* t) {
  return is_live(t, Kind::kTrainer) ? t->trainer->inputs().size() : 0;
}

const char* tsr_trainer_input_name(const tsr_trainer* t, size_t i) {
  if (!is_live(t, Kind::kTrainer) || i >= t->trainer->inputs().size()) return nullptr;
  return t->trainer->inputs()[i].name.c_str();
}

int tsr_trainer_step(tsr_trainer* t, const tsr_value* const* inputs, size_t n_inputs, const tsr_value* labels,
                     float* loss, tsr_error** err) {
  std::vector<tsr::Tensor> in;
  if (int rc = gather(t, inputs, n_inputs, labels, "tsr_trainer_step", in, err)) return rc;
  auto r = t->trainer->step(in, labels->tensor);
  if (!r.ok()) return fail(err, r.status());
  if (loss) *loss = *r;
  return 0;
}

int tsr_trainer_eval(tsr_trainer* t, const tsr_value* const* inputs, size_t n_inputs, const tsr_value* labels,
                     float* loss, tsr_value** prediction, tsr_error** err) {
  if (prediction) *prediction = nullptr;
  std::vector<tsr::Tensor> in;
  if (int rc = gather(t, inputs, n_inputs, labels, "tsr_trainer_eval", in, err)) return rc;
  auto r = t->trainer->eval(in, labels->tensor);
  if (!r.ok()) return fail(err, r.status());
  if (prediction) {
    if (r->prediction.kind() != tsr::ValueKind::kTensor || !known_dtype(static_cast<int>(r->prediction.dtype())))
      return fail(err, TSR_ERR_UNSUPPORTED, "tsr_trainer_eval: the prediction is not a tensor the C API can return");
    *prediction = track(new (std::nothrow) tsr_value{std::move(r->prediction)}, Kind::kValue);
    if (!*prediction) return fail(err, TSR_ERR_RESOURCE, "tsr_trainer_eval: out of memory");
  }
  if (loss) *loss = r->loss;
  return 0;
}

float tsr_trainer_learning_rate(const tsr_trainer* t) {
  return is_live(t, Kind::kTrainer) ? t->trainer->learning_rate() : 0.0f;
}

int64_t tsr_trainer_step_count(const tsr_trainer* t) {
  return is_live(t, Kind::kTrainer) ? t->trainer->step_count() : 0;
}

int tsr_trainer_set_learning_rate(tsr_trainer* t, float lr, tsr_error** err) {
  if (!check_handle(t, Kind::kTrainer, "tsr_trainer_set_learning_rate: trainer", err)) return TSR_ERR_INVALID_ARGUMENT;
  const tsr::Status s = t->trainer->set_learning_rate(lr);
  return s.ok() ? 0 : fail(err, s);
}

int tsr_trainer_save_checkpoint(const tsr_trainer* t, const char* path, tsr_error** err) {
  if (!check_handle(t, Kind::kTrainer, "tsr_trainer_save_checkpoint: trainer", err)) return TSR_ERR_INVALID_ARGUMENT;
  if (!path) return fail(err, TSR_ERR_INVALID_ARGUMENT, "tsr_trainer_save_checkpoint: path is NULL");
  const tsr::Status s = t->trainer->save_checkpoint(path);
  return s.ok() ? 0 : fail(err, s);
}

int tsr_trainer_load_checkpoint(tsr_trainer* t, const char* path, tsr_error** err) {
  if (!check_handle(t, Kind::kTrainer, "tsr_trainer_load_checkpoint: trainer", err)) return TSR_ERR_INVALID_ARGUMENT;
  if (!path) return fail(err, TSR_ERR_INVALID_ARGUMENT, "tsr_trainer_load_checkpoint: path is NULL");
  return load_into(t, tsr::Model::load(path), err);
}

int tsr_trainer_load_checkpoint_memory(tsr_trainer* t, const void* data, size_t size, tsr_error** err) {
  if (!check_handle(t, Kind::kTrainer, "tsr_trainer_load_checkpoint_memory: trainer", err)) return TSR_ERR_INVALID_ARGUMENT;
  if (!data || size == 0)
    return fail(err, TSR_ERR_INVALID_ARGUMENT,
                data ? "tsr_trainer_load_checkpoint_memory: size is 0" : "tsr_trainer_load_checkpoint_memory: data is NULL");
  return load_into(t, tsr::Model::load_bytes(data, size, "checkpoint"), err);
}

int tsr_trainer_export_inference(const tsr_trainer* t, const char* path, tsr_error** err) {
  if (!check_handle(t, Kind::kTrainer, "tsr_trainer_export_inference: trainer", err)) return TSR_ERR_INVALID_ARGUMENT;
  if (!path) return fail(err, TSR_ERR_INVALID_ARGUMENT, "tsr_trainer_export_inference: path is NULL");
  auto m = t->trainer->export_inference();
  if (!m.ok()) return fail(err, m.status());
  const tsr::Status s = m->save(path);
  return s.ok() ? 0 : fail(err, s);
}

int tsr_trainer_checkpoint_to_buffer(const tsr_trainer* t, uint8_t** data, size_t* size, tsr_error** err) {
  const char* fn = "tsr_trainer_checkpoint_to_buffer";
  if (data) *data = nullptr;
  if (size) *size = 0;
  if (!check_handle(t, Kind::kTrainer, "tsr_trainer_checkpoint_to_buffer: trainer", err)) return TSR_ERR_INVALID_ARGUMENT;
  return to_buffer(t->trainer->checkpoint(), data, size, fn, err);
}

int tsr_trainer_export_inference_to_buffer(const tsr_trainer* t, uint8_t** data, size_t* size, tsr_error** err) {
  const char* fn = "tsr_trainer_export_inference_to_buffer";
  if (data) *data = nullptr;
  if (size) *size = 0;
  if (!check_handle(t, Kind::kTrainer, "tsr_trainer_export_inference_to_buffer: trainer", err)) return TSR_ERR_INVALID_ARGUMENT;
  return to_buffer(t->trainer->export_inference(), data, size, fn, err);
}

void tsr_buffer_free(void* data) { std::free(data); }

}  // extern "C"
