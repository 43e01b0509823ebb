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

bool class_labels(const TrainingOptions& o) { return o.loss == "softmax_cross_entropy" || o.loss == "nll"; }

Status check_options(const TrainingOptions& o) {
  if (!class_labels(o) && o.loss != "mse")
    return invalid_argument("unknown loss \"", o.loss, "\" (expected softmax_cross_entropy, nll or mse)");
  if (o.optimizer != "sgd" && o.optimizer != "adam" && o.optimizer != "adamw")
    return invalid_argument("unknown optimizer \"", o.optimizer, "\" (expected sgd, adam or adamw)");
  if (o.nesterov && (o.optimizer != "sgd" || o.momentum <= 0))
    return invalid_argument("nesterov needs the sgd optimizer with momentum > 0");
  return ok_status();
}

// The BatchNormalization nodes of the main graph in training mode (an export of a model in
// train(): PyTorch's TrainingMode.TRAINING) and their running statistics (inputs 3 and 4).
struct BatchStatistics {
  std::vector<size_t> nodes;
  std::vector<int32_t> stats;  // mean, var of each node in turn: constants of the main graph
};

Expected<BatchStatistics> find_batch_statistics(const Graph& g) {
  BatchStatistics bs;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const ir::Node& n = g.nodes[k];
    if (n.op != "BatchNormalization" || n.attr_int("training_mode") == 0) continue;
    for (size_t j = 3; j < 5; ++j) {
      const int32_t t = j < n.inputs.size() ? n.inputs[j] : -1;
      if (t < 0 || !g.tensors[static_cast<size_t>(t)].constant.defined() ||
          !dtype_is_float(g.tensors[static_cast<size_t>(t)].dtype))
        return unsupported(ir::node_place(0, static_cast<int32_t>(k), n), ".input[", j,
                           "]: a BatchNormalization in training mode needs its running statistics as "
                           "floating-point constants (they become variables the train step updates)");
      bs.stats.push_back(t);
    }
    bs.nodes.push_back(k);
  }
  return bs;
}

// Step 1: the trainable constants of the main graph (o.trainable, or every floating-point one
// of rank >= 1 but the running statistics) become variables; returns their tensor ids.
Expected<std::vector<int32_t>> weights_to_variables(ir::Model& model, const TrainingOptions& o,
                                                   const BatchStatistics& bs) {
  std::vector<int32_t> weights;
  Graph& g = model.main();
  const std::set<int32_t> stats(bs.stats.begin(), bs.stats.end());
  if (o.trainable.empty()) {
    for (size_t t = 0; t < g.tensors.size(); ++t)
      if (g.tensors[t].constant.defined() && dtype_is_float(g.tensors[t].dtype) && g.tensors[t].constant.rank() >= 1 &&
          !stats.count(static_cast<int32_t>(t)))
        weights.push_back(static_cast<int32_t>(t));
  } else {
    for (const std::string& name : o.trainable) {
      const int32_t t = g.find_tensor(name);
      if (t < 0 || !g.tensors[static_cast<size_t>(t)].constant.defined() || !dtype_is_float(g.tensors[static_cast<size_t>(t)].dtype))
        return not_found("trainable \"", name, "\" is not a floating-point constant of the main graph");
      if (stats.count(t))
        return invalid_argument("trainable \"", name, "\" is a BatchNormalization running statistic: the train step ",
                                "updates it from the batches, it has no gradient");
      weights.push_back(t);
    }
  }
  if (weights.empty()) return invalid_argument("the model has no trainable floating-point weights");
  std::set<std::string> names;
  // The weights first (the optimizer pairs variables[i] with weight i), then the statistics.
  std::vector<int32_t> all = weights;
  all.insert(all.end(), bs.stats.begin(), bs.stats.end());
  for (int32_t t : all) {
    TensorInfo& info = g.tensors[static_cast<size_t>(t)];
    if (!names.insert(info.name).second || info.name.empty())
      return invalid_model("weight tensor ", t, " has an empty or duplicate name \"", info.name, "\"");
    model.variables.push_back({info.name, info.constant});
    info.constant = Tensor();
  }
  return weights;
}

// The train_step graph being built: (inputs..., labels, weights..., lr, step) -> (loss,
// prediction, updates...).
struct TrainStep {
  ir::Model& model;
  const TrainingOptions& o;
  const std::vector<int32_t>& weights;  // their tensor ids in the main graph
  const BatchStatistics& bs;
  size_t num_inputs;                    // the main graph's inputs before the weights
  GraphBuilder& b;
  ir::Signature sig;
  std::vector<Value> w;      // the weights' inputs
  std::vector<Value> grads;  // parallel to w
  Value lr, step;
  // The optimizer's outputs and the variables they update, parallel.
  std::vector<Value> updated;
  std::vector<std::string> update_vars;
  std::vector<Value> stats_out;  // parallel to bs.stats: their values after this step's batch

  // A zero-initialized variable NAME<suffix> per weight, bound to a new input each.
  std::vector<Value> state(const std::string& suffix) {
    std::vector<Value> s;
    for (size_t i = 0; i < w.size(); ++i) {
      const std::string name = str_cat(model.variables[i].name, suffix);
      model.variables.push_back({name, zeros_of(model.variables[i].value)});
      s.push_back(input_like(b, model.graphs[0].tensors[static_cast<size_t>(weights[i])], name));
      sig.bound_inputs.push_back(name);
    }
    return s;
  }
};

// The inputs a loss graph shares (the inference graph's inputs, the labels, the weights bound to
// their variables), the inference graph inlined and the loss. Used by train_step and eval_step.
struct LossGraph {
  std::vector<Value> w;  // the weights' inputs
  Value pred, loss;
  // The main graph's outputs after the first, inlined (train_step: the running statistics' new
  // values last).
  std::vector<Value> rest;
};

// `bound`: the main graph's inputs bound to variables (the weights, then any running statistics),
// of which the first `num_weights` are weights.
Expected<LossGraph> add_loss(ir::Model& model, const TrainingOptions& o, const std::vector<int32_t>& bound,
                             size_t num_weights, size_t num_inputs, GraphBuilder& b, ir::Signature& sig) {
  LossGraph lg;
  std::vector<Value> args;
  for (size_t k = 0; k < num_inputs; ++k) {
    const TensorInfo t = model.graphs[0].tensors[static_cast<size_t>(model.graphs[0].inputs[k])];
    args.push_back(input_like(b, t, t.name));
    sig.bound_inputs.push_back("");
  }
  const TensorInfo pred_info = model.graphs[0].tensors[static_cast<size_t>(model.graphs[0].outputs[0])];
  Value labels;
  if (class_labels(o)) {
    const int64_t n = pred_info.has_shape && !pred_info.shape.empty() ? pred_info.shape[0] : -1;
    labels = b.input("labels", DType::kI64, {n});
  } else {
    labels = input_like(b, pred_info, "labels");
  }
  sig.bound_inputs.push_back("");
  for (size_t i = 0; i < bound.size(); ++i) {
    const TensorInfo info = model.graphs[0].tensors[static_cast<size_t>(bound[i])];
    args.push_back(input_like(b, info, info.name));
    if (i < num_weights) lg.w.push_back(args.back());
    sig.bound_inputs.push_back(info.name);
  }
  TSR_ASSIGN_OR_RETURN(const std::vector<Value> outs, inline_graph(b, 0, args));
  lg.pred = outs[0];
  lg.rest.assign(outs.begin() + 1, outs.end());
  if (class_labels(o)) {
    lg.loss = b.op(o.loss == "nll" ? "NegativeLogLikelihoodLoss" : "SoftmaxCrossEntropyLoss", {lg.pred, labels},
                   {Attribute::make_string("reduction", "mean")}, "loss");
  } else {
    const Value d = b.op("Sub", {lg.pred, labels});
    lg.loss = b.op("ReduceMean", {b.op("Mul", {d, d})}, {Attribute::make_int("keepdims", 0)}, "loss");
  }
  TSR_RETURN_IF_ERROR(b.status());
  b.output(lg.loss, "loss");
  b.output(lg.pred);
  sig.updates = {"", ""};
  return lg;
}

// Step 2: train_step's inputs, the inference graph inlined, the loss and the weights' gradients.
Status add_loss_and_gradients(TrainStep& ts) {
  ir::Model& model = ts.model;
  GraphBuilder& b = ts.b;
  std::vector<int32_t> bound = ts.weights;
  bound.insert(bound.end(), ts.bs.stats.begin(), ts.bs.stats.end());
  TSR_ASSIGN_OR_RETURN(LossGraph lg, add_loss(model, ts.o, bound, ts.weights.size(), ts.num_inputs, b, ts.sig));
  ts.w = std::move(lg.w);
  // The running statistics' new values (the main graph's last outputs while train_step is built).
  ts.stats_out.assign(lg.rest.end() - static_cast<std::ptrdiff_t>(ts.bs.stats.size()), lg.rest.end());
  ts.lr = b.input("train.lr", DType::kF32, {});
  ts.step = b.input("train.step", DType::kI64, {});
  ts.sig.bound_inputs.push_back("train.lr");
  ts.sig.bound_inputs.push_back("train.step");
  model.variables.push_back({"train.lr", Tensor::scalar(static_cast<float>(ts.o.lr))});
  model.variables.push_back({"train.step", Tensor::scalar<int64_t>(0)});
  std::vector<int32_t> wrt;
  for (const Value& v : ts.w) wrt.push_back(v.id);
  TSR_ASSIGN_OR_RETURN(ts.grads, backward(b, {{lg.loss.id, ops::fill_like(b, lg.loss, 1.0)}}, wrt));
  for (size_t i = 0; i < ts.grads.size(); ++i)
    if (!ts.grads[i].valid()) ts.grads[i] = ops::zeros_like(b, ts.w[i]);
  return ok_status();
}

// Plain SGD, with L2 weight decay: w - lr * (g + decay * w).
void sgd_update(TrainStep& ts) {
  GraphBuilder& b = ts.b;
  for (size_t i = 0; i < ts.w.size(); ++i) {
    const DType dt = b.type(ts.w[i]).dtype;
    Value g = ts.grads[i];
    if (ts.o.weight_decay != 0) g = b.op("Add", {g, b.op("Mul", {ts.w[i], ops::scalar(b, dt, ts.o.weight_decay)})});
    ts.updated.push_back(b.op("Sub", {ts.w[i], b.op("Mul", {g, ops::cast(b, ts.lr, dt)})}));
    ts.update_vars.push_back(ts.model.variables[i].name);
  }
}

// SGD with momentum (ONNX Momentum): weights and velocities.
void momentum_update(TrainStep& ts) {
  const size_t n = ts.w.size();
  const std::vector<Value> v = ts.state(".velocity");
  std::vector<Value> in = {ts.lr, ts.step};
  in.insert(in.end(), ts.w.begin(), ts.w.end());
  in.insert(in.end(), ts.grads.begin(), ts.grads.end());
  in.insert(in.end(), v.begin(), v.end());
  ts.updated = ts.b.op_n("Momentum", in, 2 * n,
                         {Attribute::make_float("alpha", ts.o.momentum), Attribute::make_float("beta", 1.0),
                          Attribute::make_string("mode", ts.o.nesterov ? "nesterov" : "standard"),
                          Attribute::make_float("norm_coefficient", ts.o.weight_decay)});
  for (size_t i = 0; i < n; ++i) ts.update_vars.push_back(ts.model.variables[i].name);
  for (size_t i = 0; i < n; ++i) ts.update_vars.push_back(str_cat(ts.model.variables[i].name, ".velocity"));
}

// Adam / AdamW (AdamW op; decoupled weight decay for adamw only): weights, m and v.
void adam_update(TrainStep& ts, const Value& next_step) {
  const size_t n = ts.w.size();
  const std::vector<Value> m = ts.state(".m");
  const std::vector<Value> v = ts.state(".v");
  std::vector<Value> in = {ts.lr, next_step};
  in.insert(in.end(), ts.w.begin(), ts.w.end());
  in.insert(in.end(), ts.grads.begin(), ts.grads.end());
  in.insert(in.end(), m.begin(), m.end());
  in.insert(in.end(), v.begin(), v.end());
  ts.updated = ts.b.op_n("AdamW", in, 3 * n,
                         {Attribute::make_float("beta1", ts.o.beta1), Attribute::make_float("beta2", ts.o.beta2),
                          Attribute::make_float("epsilon", ts.o.epsilon),
                          Attribute::make_float("weight_decay", ts.o.optimizer == "adamw" ? ts.o.weight_decay : 0.0)});
  for (const char* suffix : {"", ".m", ".v"})
    for (size_t i = 0; i < n; ++i) ts.update_vars.push_back(str_cat(ts.model.variables[i].name, suffix));
}

// Step 3: the optimizer update and the step count, as outputs updating their variables.
Status add_update(TrainStep& ts) {
  GraphBuilder& b = ts.b;
  const Value next_step = b.op("Add", {ts.step, ops::scalar(b, DType::kI64, 1)});
  if (ts.o.optimizer == "sgd" && ts.o.momentum == 0) {
    sgd_update(ts);
  } else if (ts.o.optimizer == "sgd") {
    momentum_update(ts);
  } else {
    adam_update(ts, next_step);
  }
  if (ts.o.optimizer == "adam" && ts.o.weight_decay != 0)
    return invalid_argument("adam takes no weight decay here; use adamw (decoupled) or sgd (L2)");
  for (size_t i = 0; i < ts.bs.stats.size(); ++i) {
    ts.updated.push_back(ts.stats_out[i]);
    ts.update_vars.push_back(ts.model.main().tensors[static_cast<size_t>(ts.bs.stats[i])].name);
  }
  for (size_t i = 0; i < ts.updated.size(); ++i) {
    b.output(ts.updated[i]);
    ts.sig.updates.push_back(ts.update_vars[i]);
  }
  b.output(next_step);
  ts.sig.updates.push_back("train.step");
  return b.status();
}

}  // namespace

Expected<ir::Model> make_training_model(ir::Model model, const TrainingOptions& o) {
  TSR_RETURN_IF_ERROR(check_options(o));
  if (!model.variables.empty()) return invalid_argument("the model already has variables (a training model?)");
  TSR_RETURN_IF_ERROR(infer_types(model));
  if (model.main().outputs.empty()) return invalid_argument("the main graph has no outputs");

  // 1. Trainable constants become variables, bound to new inputs of the inference graph, and so
  // do the running statistics of BatchNormalizations in training mode.
  TSR_ASSIGN_OR_RETURN(const BatchStatistics bs, find_batch_statistics(model.main()));
  TSR_ASSIGN_OR_RETURN(const std::vector<int32_t> weights, weights_to_variables(model, o, bs));
  std::vector<int32_t> bound = weights;
  bound.insert(bound.end(), bs.stats.begin(), bs.stats.end());
  const size_t num_inputs = model.main().inputs.size();
  ir::Signature infer{"infer", 0, std::vector<std::string>(num_inputs), {}};
  for (int32_t t : bound) {
    model.main().inputs.push_back(t);
    infer.bound_inputs.push_back(model.main().tensors[static_cast<size_t>(t)].name);
  }
  // While train_step inlines the main graph, its training-mode BatchNormalizations give their
  // running statistics' new values (outputs 1 and 2) as extra main-graph outputs.
  const size_t num_outputs = model.main().outputs.size();
  for (size_t i = 0; i < bs.nodes.size(); ++i) {
    Graph& g = model.main();
    g.nodes[bs.nodes[i]].outputs.resize(3, -1);
    for (size_t j = 1; j < 3; ++j) {
      int32_t& out = g.nodes[bs.nodes[i]].outputs[j];
      if (out < 0) {
        TensorInfo info = g.tensors[static_cast<size_t>(bs.stats[2 * i + j - 1])];
        info.name = str_cat(info.name, ".next");
        out = g.add_tensor(std::move(info));
      }
      g.outputs.push_back(out);
    }
  }

  // 2. train_step: (inputs..., labels, weights..., lr, step) -> (loss, prediction, updates...).
  model.graphs.emplace_back();
  const auto tg = static_cast<int32_t>(model.graphs.size() - 1);
  model.graphs.back().name = "train_step";
  GraphBuilder b(model, tg);
  TrainStep ts{model, o, weights, bs, num_inputs, b, ir::Signature{"train_step", tg, {}, {}}, {}, {}, {}, {}, {}, {}, {}};
  TSR_RETURN_IF_ERROR(add_loss_and_gradients(ts));
  // 3. The optimizer update, and the running statistics' update.
  TSR_RETURN_IF_ERROR(add_update(ts));
  // The main graph (infer) and eval_step normalize with the running statistics, as
  // torch.nn.Module.eval() does; an exported inference model is then an ordinary one.
  model.main().outputs.resize(num_outputs);
  for (size_t k : bs.nodes) {
    ir::Node& n = model.main().nodes[k];
    n.outputs.resize(1);
    for (Attribute& a : n.attributes)
      if (a.name == "training_mode") a.i = 0;
  }
  // 4. eval_step: (inputs..., labels) -> (loss, prediction) with the weights, no update.
  model.graphs.emplace_back();
  const auto eg = static_cast<int32_t>(model.graphs.size() - 1);
  model.graphs.back().name = "eval_step";
  GraphBuilder eb(model, eg);
  ir::Signature eval{"eval_step", eg, {}, {}};
  TSR_RETURN_IF_ERROR(add_loss(model, o, bound, weights.size(), num_inputs, eb, eval).status());
  model.signatures = {infer, ts.sig, eval};
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
