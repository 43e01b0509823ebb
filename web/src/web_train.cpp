// The wasm's C ABI for training: a tsr::Trainer (tessera/trainer.h) over a training model, made
// from a training model or checkpoint's bytes, or prepared from an inference model's bytes with
// tsr::prepare_training. Conventions as web_api.h: handles owned by JS, failures return null (or
// -1) with the error in tsrw_last_error_code/message. web/js/trainer.mjs binds these.
#include <emscripten/emscripten.h>

#include <memory>
#include <sstream>

#include "core/ir/graph.h"
#include "tessera/onnx.h"
#include "tessera/trainer.h"
#include "web/src/web_api.h"

namespace tsr::web {
namespace {

struct WebTrainer {
  std::unique_ptr<Trainer> trainer;
  std::vector<std::string> infer_outputs;  // names of the "infer" signature's outputs
};

Expected<Model> load_model(const uint8_t* data, size_t size, const char* name) {
  enable_onnx_import();  // Model::load_bytes takes .onnx bytes too then
  return Model::load_bytes(data, size, name);
}

WebTrainer* make_trainer(const Model& training, const char* name, int threads) {
  SessionOptions opts;
  // As tsrw_model_load: tessera-threads.wasm starts threads - 1 pthreads here.
  opts.num_threads = threads < 1 ? 1 : threads;
  auto trainer = Trainer::create(training, opts);
  if (!trainer.ok()) return set_error(trainer.status().with_context(name));
  auto* t = new WebTrainer{std::move(trainer).value(), {}};
  const ir::Model& m = training.graph();
  for (const ir::Signature& s : m.signatures) {
    if (s.name != "infer") continue;
    const ir::Graph& g = m.graphs.at(static_cast<size_t>(s.graph));
    for (size_t k = 0; k < g.outputs.size(); ++k)
      if (s.updates.empty() || s.updates[k].empty()) t->infer_outputs.push_back(g.tensors[static_cast<size_t>(g.outputs[k])].name);
  }
  return t;
}

void json_names(std::ostream& os, const std::vector<std::string>& names) {
  os << '[';
  for (size_t k = 0; k < names.size(); ++k) {
    os << (k ? "," : "");
    json_str(os, names[k]);
  }
  os << ']';
}

// The list's tensors split into the data inputs and the labels (its last entry).
bool split_batch(TensorList* l, std::vector<Tensor>& inputs, Tensor& labels) {
  if (l->tensors.empty()) {
    set_error(invalid_argument("no labels given"));
    return false;
  }
  inputs.assign(l->tensors.begin(), l->tensors.end() - 1);
  labels = l->tensors.back();
  return true;
}

}  // namespace
}  // namespace tsr::web

using tsr::web::Bytes;
using tsr::web::TensorList;
using tsr::web::WebTrainer;
using tsr::web::set_error;

extern "C" {

// A trainer over a training model or a checkpoint (.tsr bytes with a "train_step" signature, as
// `tessera train` and Trainer::checkpoint write them): resumes with its weights and optimizer
// state. `name` prefixes error messages; `threads` as tsrw_model_load. kNotFound for an
// inference model (no "train_step": use tsrw_trainer_prepare).
EMSCRIPTEN_KEEPALIVE WebTrainer* tsrw_trainer_load(const uint8_t* data, size_t size, const char* name, int threads) {
  auto model = tsr::web::load_model(data, size, name);
  if (!model.ok()) return set_error(model.status());
  return tsr::web::make_trainer(*model, name, threads);
}

// A trainer over tsr::prepare_training(inference model, spec): the model's .tsr or .onnx bytes;
// spec as tsr::TrainingSpec (loss and optimizer names, learning rate, SGD momentum/nesterov, weight
// decay, Adam betas/epsilon, `n_trainable` trainable and `n_frozen` frozen name patterns).
// Errors: prepare_training's (kInvalidArgument for an unknown loss/optimizer or a pattern that
// matches no weight, kUnsupported for ops without a gradient), prefixed with `name`.
EMSCRIPTEN_KEEPALIVE WebTrainer* tsrw_trainer_prepare(const uint8_t* data, size_t size, const char* name, int threads,
                                                      const char* loss, const char* optimizer, double lr,
                                                      double momentum, int nesterov, double weight_decay, double beta1,
                                                      double beta2, double epsilon, const char* const* trainable,
                                                      int n_trainable, const char* const* frozen, int n_frozen) {
  auto model = tsr::web::load_model(data, size, name);
  if (!model.ok()) return set_error(model.status());
  tsr::TrainingSpec spec;
  spec.loss = loss;
  spec.optimizer = optimizer;
  spec.learning_rate = lr;
  spec.momentum = momentum;
  spec.nesterov = nesterov != 0;
  spec.weight_decay = weight_decay;
  spec.beta1 = beta1;
  spec.beta2 = beta2;
  spec.epsilon = epsilon;
  spec.trainable.assign(trainable, trainable + n_trainable);
  spec.frozen.assign(frozen, frozen + n_frozen);
  auto training = tsr::prepare_training(*model, spec);
  if (!training.ok()) return set_error(training.status().with_context(name));
  return tsr::web::make_trainer(*training, name, threads);
}

EMSCRIPTEN_KEEPALIVE void tsrw_trainer_free(WebTrainer* t) { delete t; }

// {"inputs":[{name,dtype,kind,shape}],"labels":[{the labels}],"weights":[names],"outputs":[the
// infer signature's output names]}; values as tsrw_model_info's (web_api.h json_values).
EMSCRIPTEN_KEEPALIVE Bytes* tsrw_trainer_info(WebTrainer* t) {
  std::ostringstream os;
  os << "{\"inputs\":";
  tsr::web::json_values(os, t->trainer->inputs());
  os << ",\"labels\":";
  tsr::web::json_values(os, {t->trainer->labels()});
  os << ",\"weights\":";
  tsr::web::json_names(os, t->trainer->weights());
  os << ",\"outputs\":";
  tsr::web::json_names(os, t->infer_outputs);
  os << '}';
  const std::string s = os.str();
  return new Bytes{std::vector<uint8_t>(s.begin(), s.end())};
}

// One optimizer step on `batch`: the data inputs in the trainer's order, then the labels (names
// are not used). Stores the batch's loss in *loss and returns 0, or -1 (Trainer::step's errors;
// nothing is updated then).
EMSCRIPTEN_KEEPALIVE int tsrw_trainer_step(WebTrainer* t, TensorList* batch, double* loss) {
  std::vector<tsr::Tensor> inputs;
  tsr::Tensor labels;
  if (!tsr::web::split_batch(batch, inputs, labels)) return -1;
  auto l = t->trainer->step(inputs, labels);
  if (!l.ok()) {
    set_error(l.status());
    return -1;
  }
  *loss = static_cast<double>(*l);
  return 0;
}

// Loss and prediction on `batch` (as tsrw_trainer_step) without an update: a list of "loss" (f32
// scalar) and "prediction" (the model's first output), or null (Trainer::eval's errors).
EMSCRIPTEN_KEEPALIVE TensorList* tsrw_trainer_eval(WebTrainer* t, TensorList* batch) {
  std::vector<tsr::Tensor> inputs;
  tsr::Tensor labels;
  if (!tsr::web::split_batch(batch, inputs, labels)) return nullptr;
  auto r = t->trainer->eval(inputs, labels);
  if (!r.ok()) return set_error(r.status());
  return new TensorList{{"loss", "prediction"}, {tsr::Tensor::scalar(r->loss), std::move(r->prediction)}};
}

// The "infer" signature with the current weights on `inputs` (in the trainer's input order): its
// outputs named as tsrw_trainer_info's "outputs", or null.
EMSCRIPTEN_KEEPALIVE TensorList* tsrw_trainer_infer(WebTrainer* t, TensorList* inputs) {
  auto out = t->trainer->infer(inputs->tensors);
  if (!out.ok()) return set_error(out.status());
  auto* list = new TensorList;
  for (size_t k = 0; k < out->size(); ++k) {
    list->names.push_back(k < t->infer_outputs.size() ? t->infer_outputs[k] : tsr::str_cat("output_", k));
    list->tensors.push_back(std::move((*out)[k]));
  }
  return list;
}

EMSCRIPTEN_KEEPALIVE double tsrw_trainer_lr(WebTrainer* t) { return static_cast<double>(t->trainer->learning_rate()); }

// 0, or -1 (kInvalidArgument: not finite or negative). Takes effect at the next step.
EMSCRIPTEN_KEEPALIVE int tsrw_trainer_set_lr(WebTrainer* t, double lr) {
  const tsr::Status st = t->trainer->set_learning_rate(static_cast<float>(lr));
  if (!st.ok()) {
    set_error(st);
    return -1;
  }
  return 0;
}

// Optimizer steps done (a double: exact up to 2^53).
EMSCRIPTEN_KEEPALIVE double tsrw_trainer_step_count(WebTrainer* t) { return static_cast<double>(t->trainer->step_count()); }

// The checkpoint (training model with the current weights and optimizer state) as .tsr bytes.
EMSCRIPTEN_KEEPALIVE Bytes* tsrw_trainer_checkpoint(WebTrainer* t) {
  auto bytes = t->trainer->checkpoint().serialize();
  if (!bytes.ok()) return set_error(bytes.status());
  return new Bytes{std::move(bytes).value()};
}

// Loads a checkpoint of the same training model from .tsr bytes. 0, or -1 (a malformed file;
// kInvalidArgument for variables that do not match, naming them; nothing changes then).
EMSCRIPTEN_KEEPALIVE int tsrw_trainer_load_checkpoint(WebTrainer* t, const uint8_t* data, size_t size, const char* name) {
  auto model = tsr::Model::load_bytes(data, size, name);
  tsr::Status st = model.ok() ? t->trainer->load_checkpoint(*model).with_context(name) : model.status();
  if (!st.ok()) {
    set_error(st);
    return -1;
  }
  return 0;
}

// The inference model with the current weights as .tsr bytes (what `tessera export` writes).
EMSCRIPTEN_KEEPALIVE Bytes* tsrw_trainer_export(WebTrainer* t) {
  auto model = t->trainer->export_inference();
  if (!model.ok()) return set_error(model.status());
  auto bytes = model->serialize();
  if (!bytes.ok()) return set_error(bytes.status());
  return new Bytes{std::move(bytes).value()};
}

}  // extern "C"
