#include "core/passes/training.h"

#include <algorithm>
#include <set>

#include "core/ops/grad.h"
#include "core/passes/autodiff_internal.h"
#include "core/passes/infer_types.h"

namespace tsr::passes {

using ir::Attribute;
using ir::Graph;
using ir::TensorInfo;
using ops::GraphBuilder;

namespace {

Value input_like(GraphBuilder& b, const TensorInfo& t, const std::string& name) {
  const Value v = b.input(name, t.dtype, t.shape);
  TensorInfo& info = b.graph().tensors[static_cast<size_t>(v.id)];
  info.has_shape = t.has_shape;
  info.dim_names = t.dim_names;
  return v;
}

Tensor zeros_of(const Tensor& like) { return Tensor::zeros(like.dtype(), like.shape()).value(); }

}  // namespace

Expected<ir::Model> make_training_model(ir::Model model, const TrainingOptions& o) {
  const bool class_labels = o.loss == "softmax_cross_entropy" || o.loss == "nll";
  if (!class_labels && o.loss != "mse")
    return invalid_argument("unknown loss \"", o.loss, "\" (expected softmax_cross_entropy, nll or mse)");
  if (o.optimizer != "sgd" && o.optimizer != "adam" && o.optimizer != "adamw")
    return invalid_argument("unknown optimizer \"", o.optimizer, "\" (expected sgd, adam or adamw)");
  if (o.nesterov && (o.optimizer != "sgd" || o.momentum <= 0))
    return invalid_argument("nesterov needs the sgd optimizer with momentum > 0");
  if (!model.variables.empty()) return invalid_argument("the model already has variables (a training model?)");
  TSR_RETURN_IF_ERROR(infer_types(model));
  if (model.main().outputs.empty()) return invalid_argument("the main graph has no outputs");

  // 1. Trainable constants become variables, bound to new inputs of the inference graph.
  std::vector<int32_t> weights;
  {
    Graph& g = model.main();
    if (o.trainable.empty()) {
      for (size_t t = 0; t < g.tensors.size(); ++t)
        if (g.tensors[t].constant.defined() && dtype_is_float(g.tensors[t].dtype) && g.tensors[t].constant.rank() >= 1)
          weights.push_back(static_cast<int32_t>(t));
    } else {
      for (const std::string& name : o.trainable) {
        const int32_t t = g.find_tensor(name);
        if (t < 0 || !g.tensors[static_cast<size_t>(t)].constant.defined() || !dtype_is_float(g.tensors[static_cast<size_t>(t)].dtype))
          return not_found("trainable \"", name, "\" is not a floating-point constant of the main graph");
        weights.push_back(t);
      }
    }
    if (weights.empty()) return invalid_argument("the model has no trainable floating-point weights");
    std::set<std::string> names;
    for (int32_t t : weights) {
      TensorInfo& info = g.tensors[static_cast<size_t>(t)];
      if (!names.insert(info.name).second || info.name.empty())
        return invalid_model("weight tensor ", t, " has an empty or duplicate name \"", info.name, "\"");
      model.variables.push_back({info.name, info.constant});
      info.constant = Tensor();
    }
  }
  const size_t num_inputs = model.main().inputs.size();
  ir::Signature infer{"infer", 0, std::vector<std::string>(num_inputs), {}};
  for (int32_t t : weights) {
    model.main().inputs.push_back(t);
    infer.bound_inputs.push_back(model.main().tensors[static_cast<size_t>(t)].name);
  }

  // 2. train_step: (inputs..., labels, weights..., lr, step) -> (loss, prediction, updates...).
  model.graphs.emplace_back();
  const auto tg = static_cast<int32_t>(model.graphs.size() - 1);
  model.graphs.back().name = "train_step";
  GraphBuilder b(model, tg);
  ir::Signature train{"train_step", tg, {}, {}};
  std::vector<Value> args;
  for (size_t k = 0; k < num_inputs; ++k) {
    const TensorInfo t = model.graphs[0].tensors[static_cast<size_t>(model.graphs[0].inputs[k])];
    args.push_back(input_like(b, t, t.name));
    train.bound_inputs.push_back("");
  }
  const TensorInfo pred_info = model.graphs[0].tensors[static_cast<size_t>(model.graphs[0].outputs[0])];
  Value labels;
  if (class_labels) {
    const int64_t n = pred_info.has_shape && !pred_info.shape.empty() ? pred_info.shape[0] : -1;
    labels = b.input("labels", DType::kI64, {n});
  } else {
    labels = input_like(b, pred_info, "labels");
  }
  train.bound_inputs.push_back("");
  std::vector<Value> w;
  for (int32_t t : weights) {
    const TensorInfo info = model.graphs[0].tensors[static_cast<size_t>(t)];
    w.push_back(input_like(b, info, info.name));
    args.push_back(w.back());
    train.bound_inputs.push_back(info.name);
  }
  const Value lr = b.input("train.lr", DType::kF32, {});
  const Value step = b.input("train.step", DType::kI64, {});
  train.bound_inputs.push_back("train.lr");
  train.bound_inputs.push_back("train.step");
  model.variables.push_back({"train.lr", Tensor::scalar(static_cast<float>(o.lr))});
  model.variables.push_back({"train.step", Tensor::scalar<int64_t>(0)});

  TSR_ASSIGN_OR_RETURN(const std::vector<Value> outs, inline_graph(b, 0, args));
  const Value pred = outs[0];
  Value loss;
  if (class_labels) {
    loss = b.op(o.loss == "nll" ? "NegativeLogLikelihoodLoss" : "SoftmaxCrossEntropyLoss", {pred, labels},
                {Attribute::make_string("reduction", "mean")}, "loss");
  } else {
    const Value d = b.op("Sub", {pred, labels});
    loss = b.op("ReduceMean", {b.op("Mul", {d, d})}, {Attribute::make_int("keepdims", 0)}, "loss");
  }
  TSR_RETURN_IF_ERROR(b.status());
  std::vector<int32_t> wrt;
  for (const Value& v : w) wrt.push_back(v.id);
  TSR_ASSIGN_OR_RETURN(std::vector<Value> grads, backward(b, {{loss.id, ops::fill_like(b, loss, 1.0)}}, wrt));
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].valid()) grads[i] = ops::zeros_like(b, w[i]);

  // 3. The optimizer update.
  b.output(loss, "loss");
  b.output(pred);
  train.updates = {"", ""};
  const size_t n = w.size();
  const Value next_step = b.op("Add", {step, ops::scalar(b, DType::kI64, 1)});
  std::vector<Value> updated;  // parallel to `update_vars`
  std::vector<std::string> update_vars;
  auto state = [&](const std::string& suffix) {
    std::vector<Value> s;
    for (size_t i = 0; i < n; ++i) {
      const std::string name = str_cat(model.variables[i].name, suffix);
      model.variables.push_back({name, zeros_of(model.variables[i].value)});
      s.push_back(input_like(b, model.graphs[0].tensors[static_cast<size_t>(weights[i])], name));
      train.bound_inputs.push_back(name);
    }
    return s;
  };
  if (o.optimizer == "sgd" && o.momentum == 0) {
    for (size_t i = 0; i < n; ++i) {
      const DType dt = b.type(w[i]).dtype;
      Value g = grads[i];
      if (o.weight_decay != 0) g = b.op("Add", {g, b.op("Mul", {w[i], ops::scalar(b, dt, o.weight_decay)})});
      updated.push_back(b.op("Sub", {w[i], b.op("Mul", {g, ops::cast(b, lr, dt)})}));
      update_vars.push_back(model.variables[i].name);
    }
  } else if (o.optimizer == "sgd") {
    const std::vector<Value> v = state(".velocity");
    std::vector<Value> in = {lr, step};
    in.insert(in.end(), w.begin(), w.end());
    in.insert(in.end(), grads.begin(), grads.end());
    in.insert(in.end(), v.begin(), v.end());
    updated = b.op_n("Momentum", in, 2 * n,
                     {Attribute::make_float("alpha", o.momentum), Attribute::make_float("beta", 1.0),
                      Attribute::make_string("mode", o.nesterov ? "nesterov" : "standard"),
                      Attribute::make_float("norm_coefficient", o.weight_decay)});
    for (size_t i = 0; i < n; ++i) update_vars.push_back(model.variables[i].name);
    for (size_t i = 0; i < n; ++i) update_vars.push_back(str_cat(model.variables[i].name, ".velocity"));
  } else {
    const std::vector<Value> m = state(".m");
    const std::vector<Value> v = state(".v");
    std::vector<Value> in = {lr, next_step};
    in.insert(in.end(), w.begin(), w.end());
    in.insert(in.end(), grads.begin(), grads.end());
    in.insert(in.end(), m.begin(), m.end());
    in.insert(in.end(), v.begin(), v.end());
    updated = b.op_n("AdamW", in, 3 * n,
                     {Attribute::make_float("beta1", o.beta1), Attribute::make_float("beta2", o.beta2),
                      Attribute::make_float("epsilon", o.epsilon),
                      Attribute::make_float("weight_decay", o.optimizer == "adamw" ? o.weight_decay : 0.0)});
    for (const char* suffix : {"", ".m", ".v"})
      for (size_t i = 0; i < n; ++i) update_vars.push_back(str_cat(model.variables[i].name, suffix));
  }
  if (o.optimizer == "adam" && o.weight_decay != 0)
    return invalid_argument("adam takes no weight decay here; use adamw (decoupled) or sgd (L2)");
  for (size_t i = 0; i < updated.size(); ++i) {
    b.output(updated[i]);
    train.updates.push_back(update_vars[i]);
  }
  b.output(next_step);
  train.updates.push_back("train.step");
  TSR_RETURN_IF_ERROR(b.status());
  model.signatures = {infer, train};
  prune_unused_graphs(model);
  return model;
}

Expected<ir::Model> export_inference(const ir::Model& checkpoint, const std::string& signature) {
  const ir::Signature* sig = nullptr;
  std::string names;
  for (const auto& s : checkpoint.signatures) {
    if (s.name == signature) sig = &s;
    names += str_cat(names.empty() ? "" : ", ", s.name);
  }
  if (!sig) return not_found("no signature \"", signature, "\" (the model has: ", names.empty() ? "none" : names, ")");
  if (sig->graph != 0)
    return unsupported("signature \"", signature, "\" runs graph ", sig->graph, "; export needs it to be graphs[0]");
  ir::Model m = checkpoint;
  Graph& g = m.main();
  std::vector<int32_t> inputs;
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const std::string& bound = sig->bound_inputs.empty() ? std::string() : sig->bound_inputs[k];
    if (bound.empty()) {
      inputs.push_back(g.inputs[k]);
      continue;
    }
    auto it = std::find_if(m.variables.begin(), m.variables.end(), [&](const ir::Variable& v) { return v.name == bound; });
    if (it == m.variables.end()) return invalid_model("signature \"", signature, "\": no variable \"", bound, "\"");
    TensorInfo& info = g.tensors[static_cast<size_t>(g.inputs[k])];
    info.constant = it->value;
    info.dtype = it->value.dtype();
    info.has_shape = true;
    info.shape = it->value.shape();
    info.dim_names.clear();
  }
  g.inputs = std::move(inputs);
  m.signatures.clear();
  m.variables.clear();
  prune_unused_graphs(m);
  return m;
}

}  // namespace tsr::passes
