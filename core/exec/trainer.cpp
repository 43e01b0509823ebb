#include "tessera/trainer.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/ir/graph.h"
#include "core/passes/training.h"
#include "core/passes/verify_model.h"

namespace tsr {
namespace {

const ir::Signature* find_signature(const ir::Model& m, std::string_view name) {
  for (const ir::Signature& s : m.signatures)
    if (s.name == name) return &s;
  return nullptr;
}

std::string signature_list(const ir::Model& m) {
  std::string names;
  for (const ir::Signature& s : m.signatures) names += str_cat(names.empty() ? "" : ", ", s.name);
  return names.empty() ? "none" : names;
}

ValueInfo value_info(const ir::TensorInfo& t) {
  ValueInfo v;
  v.name = t.name;
  v.dtype = t.dtype;
  v.has_shape = t.has_shape;
  v.shape = t.shape;
  v.dim_names = t.dim_names;
  v.dim_names.resize(v.shape.size());
  return v;
}

Expected<float> scalar_loss(const Tensor& loss) {
  if (loss.numel() != 1 || !dtype_is_float(loss.dtype()))
    return invalid_model("the loss output is ", dtype_name(loss.dtype()), shape_str(loss.shape()), ", expected a float scalar");
  return static_cast<float>(loss.scalar_f64());
}

}  // namespace

bool name_matches(std::string_view pattern, std::string_view name) {
  // Iterative wildcard match: on a mismatch, retry from the last '*' one character further.
  size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p, ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Expected<Model> prepare_training(const Model& inference, const TrainingSpec& spec) {
  if (inference.empty()) return invalid_argument("prepare_training: empty model");
  const ir::Model& m = inference.graph();
  passes::TrainingOptions o;
  o.loss = spec.loss;
  o.optimizer = spec.optimizer;
  o.lr = spec.learning_rate;
  o.momentum = spec.momentum;
  o.nesterov = spec.nesterov;
  o.weight_decay = spec.weight_decay;
  o.beta1 = spec.beta1;
  o.beta2 = spec.beta2;
  o.epsilon = spec.epsilon;
  if (!spec.trainable.empty() || !spec.frozen.empty()) {
    // The candidates: make_training_model's default set (floating-point constants of rank >= 1).
    const ir::Graph& g = m.main();
    std::vector<size_t> trainable_hits(spec.trainable.size()), frozen_hits(spec.frozen.size());
    for (const ir::TensorInfo& t : g.tensors) {
      if (!t.constant.defined() || !dtype_is_float(t.dtype) || t.constant.rank() < 1 || t.name.empty()) continue;
      bool take = spec.trainable.empty();
      for (size_t i = 0; i < spec.trainable.size(); ++i)
        if (name_matches(spec.trainable[i], t.name)) take = true, ++trainable_hits[i];
      for (size_t i = 0; i < spec.frozen.size(); ++i)
        if (name_matches(spec.frozen[i], t.name)) take = false, ++frozen_hits[i];
      if (take) o.trainable.push_back(t.name);
    }
    std::string unmatched;
    for (size_t i = 0; i < spec.trainable.size(); ++i)
      if (!trainable_hits[i]) unmatched += str_cat(unmatched.empty() ? "" : ", ", "trainable \"", spec.trainable[i], "\"");
    for (size_t i = 0; i < spec.frozen.size(); ++i)
      if (!frozen_hits[i]) unmatched += str_cat(unmatched.empty() ? "" : ", ", "frozen \"", spec.frozen[i], "\"");
    if (!unmatched.empty()) return invalid_argument("no floating-point weight matches ", unmatched);
    if (o.trainable.empty()) return invalid_argument("the patterns leave no weight to train");
  }
  TSR_ASSIGN_OR_RETURN(ir::Model training, passes::make_training_model(m, o));
  TSR_RETURN_IF_ERROR(passes::verify_model(training));
  return Model(std::make_shared<ir::Model>(std::move(training)));
}

Trainer::~Trainer() = default;

Expected<std::unique_ptr<Trainer>> Trainer::create(const Model& training_model, const SessionOptions& options) {
  if (training_model.empty()) return invalid_argument("Trainer: empty model");
  const ir::Model& m = training_model.graph();
  const ir::Signature* train = find_signature(m, "train_step");
  if (!train)
    return not_found("the model has no \"train_step\" signature (it has: ", signature_list(m),
                     "); make one with `tessera prepare-training` or tsr::prepare_training");
  std::unique_ptr<Trainer> t(new Trainer());
  const ir::Graph& g = m.graphs.at(static_cast<size_t>(train->graph));
  for (size_t k = 0; k < g.inputs.size(); ++k)
    if (train->bound_inputs.empty() || train->bound_inputs[k].empty())
      t->inputs_.push_back(value_info(g.tensors[static_cast<size_t>(g.inputs[k])]));
  if (t->inputs_.size() < 2) return invalid_model("signature \"train_step\" takes ", t->inputs_.size(), " inputs; expected the data inputs and the labels");
  t->labels_ = t->inputs_.back();
  t->inputs_.pop_back();
  // The weights: the variables the infer signature binds (optimizer state and counters are not).
  if (const ir::Signature* infer = find_signature(m, "infer"))
    for (const std::string& v : infer->bound_inputs)
      if (!v.empty()) t->weights_.push_back(v);
  for (const ir::Variable& v : m.variables) t->variables_.push_back(v.name);
  t->has_eval_ = find_signature(m, "eval_step") != nullptr;
  TSR_ASSIGN_OR_RETURN(t->session_, Session::create(training_model, options));
  if (!t->session_->variable("train.lr") || !t->session_->variable("train.step"))
    return invalid_model("the training model lacks the \"train.lr\" or \"train.step\" variable");
  return t;
}

Expected<EvalResult> Trainer::run_step(std::string_view signature, const std::vector<Tensor>& inputs, const Tensor& labels) {
  args_.assign(inputs.begin(), inputs.end());
  args_.push_back(labels);
  Status st = session_->run_signature(signature, args_, &outs_);
  args_.clear();  // holds no reference to the caller's tensors between calls
  TSR_RETURN_IF_ERROR(st);
  Expected<float> loss = scalar_loss(outs_.at(0));
  Tensor prediction = std::move(outs_.at(1));
  outs_.clear();
  if (!loss.ok()) return loss.status();
  return EvalResult{*loss, std::move(prediction)};
}

Expected<EvalResult> Trainer::step_with_prediction(const std::vector<Tensor>& inputs, const Tensor& labels) {
  return run_step("train_step", inputs, labels);
}

Expected<float> Trainer::step(const std::vector<Tensor>& inputs, const Tensor& labels) {
  TSR_ASSIGN_OR_RETURN(const EvalResult r, step_with_prediction(inputs, labels));
  return r.loss;
}

Expected<EvalResult> Trainer::eval(const std::vector<Tensor>& inputs, const Tensor& labels) {
  if (!has_eval_)
    return not_found("the model has no \"eval_step\" signature (it has: ", signature_list(session_->model().graph()),
                     "); models from `tessera prepare-training` have one");
  return run_step("eval_step", inputs, labels);
}

Expected<std::vector<Tensor>> Trainer::infer(const std::vector<Tensor>& inputs) {
  return session_->run_signature("infer", inputs);
}

float Trainer::learning_rate() const { return session_->variable("train.lr")->data<float>()[0]; }

Status Trainer::set_learning_rate(float lr) {
  if (!std::isfinite(lr) || lr < 0) return invalid_argument("learning rate ", lr, ": expected a finite value >= 0");
  return session_->set_variable("train.lr", Tensor::scalar(lr));
}

int64_t Trainer::step_count() const { return session_->variable("train.step")->data<int64_t>()[0]; }

Model Trainer::checkpoint() const { return Model(std::make_shared<ir::Model>(session_->snapshot())); }

Status Trainer::save_checkpoint(const std::string& path) const { return checkpoint().save(path); }

Status Trainer::load_checkpoint(const Model& checkpoint) {
  if (checkpoint.empty()) return invalid_argument("load_checkpoint: empty model");
  const ir::Model& c = checkpoint.graph();
  std::set<std::string> mine(variables_.begin(), variables_.end());
  std::string missing, extra;
  for (const std::string& v : variables_)
    if (std::none_of(c.variables.begin(), c.variables.end(), [&](const ir::Variable& x) { return x.name == v; }))
      missing += str_cat(missing.empty() ? "" : ", ", "\"", v, "\"");
  for (const ir::Variable& v : c.variables)
    if (!mine.count(v.name)) extra += str_cat(extra.empty() ? "" : ", ", "\"", v.name, "\"");
  if (!missing.empty() || !extra.empty())
    return invalid_argument("the checkpoint does not match this training model:", missing.empty() ? "" : " it lacks ", missing,
                            !missing.empty() && !extra.empty() ? ";" : "", extra.empty() ? "" : " it has unknown ", extra);
  // Check every variable before replacing any, so a mismatch loses nothing.
  for (const ir::Variable& v : c.variables) {
    const Tensor* cur = session_->variable(v.name);
    if (cur->dtype() != v.value.dtype() || cur->shape() != v.value.shape())
      return invalid_argument("checkpoint variable \"", v.name, "\" is ", dtype_name(v.value.dtype()), shape_str(v.value.shape()),
                              ", this model's is ", dtype_name(cur->dtype()), shape_str(cur->shape()));
  }
  for (const ir::Variable& v : c.variables) TSR_RETURN_IF_ERROR(session_->set_variable(v.name, v.value));
  return ok_status();
}

Expected<Model> Trainer::export_inference() const {
  TSR_ASSIGN_OR_RETURN(ir::Model m, passes::export_inference(session_->snapshot()));
  return Model(std::make_shared<ir::Model>(std::move(m)));
}

}  // namespace tsr
