#include "core/ops/graph_builder.h"

#include <algorithm>

#include "core/ops/op_def.h"

namespace tsr::ops {
using ir::Node; using ir::TensorInfo; using ir::node_place;

GraphBuilder::GraphBuilder(Model& model, std::string name) : model_(model), graph_(0) {
  if (model_.graphs.empty()) {
    model_.graphs.emplace_back();
    model_.graphs.back().name = std::move(name);
  }
}

GraphBuilder::GraphBuilder(Model& model, int32_t graph)
    : model_(model), graph_(graph), counter_(static_cast<int>(model.graphs.at(static_cast<size_t>(graph)).tensors.size())) {}

ops::ValueType GraphBuilder::type(Value v) const {
  if (!v.valid() || static_cast<size_t>(v.graph) >= model_.graphs.size()) return {};
  const Graph& g = model_.graphs[static_cast<size_t>(v.graph)];
  if (static_cast<size_t>(v.id) >= g.tensors.size()) return {};
  const TensorInfo& t = g.tensors[static_cast<size_t>(v.id)];
  return {t.dtype, t.has_shape, t.shape, t.kind};
}

const Tensor* GraphBuilder::known_value(Value v) const {
  if (!v.valid() || static_cast<size_t>(v.graph) >= model_.graphs.size()) return nullptr;
  const Graph& g = model_.graphs[static_cast<size_t>(v.graph)];
  if (static_cast<size_t>(v.id) >= g.tensors.size()) return nullptr;
  const Tensor& c = g.tensors[static_cast<size_t>(v.id)].constant;
  return c.defined() ? &c : nullptr;
}

GraphBuilder::GraphBuilder(Model& model, int32_t graph, GraphBuilder* parent)
    : model_(model), graph_(graph), parent_(parent) {}

void GraphBuilder::record(const Status& s) {
  GraphBuilder* r = root();
  if (!s.ok() && r->status_.ok()) r->status_ = s;
}

std::string GraphBuilder::fresh_name(const std::string& stem) {
  return str_cat(stem, "_g", graph_, "_", counter_++);
}

Value GraphBuilder::input(const std::string& name, DType dtype, const Shape& shape) {
  TensorInfo info;
  info.name = name;
  info.dtype = dtype;
  info.has_shape = true;
  info.shape = shape;
  const int32_t id = graph().add_tensor(std::move(info));
  graph().inputs.push_back(id);
  formal_inputs_.push_back(id);
  return {graph_, id};
}

Value GraphBuilder::constant(Tensor value, const std::string& name) {
  TensorInfo info;
  info.name = name.empty() ? fresh_name("const") : name;
  info.dtype = value.dtype();
  info.has_shape = true;
  info.shape = value.shape();
  info.constant = std::move(value);
  return {graph_, graph().add_tensor(std::move(info))};
}

int32_t GraphBuilder::resolve(Value v) {
  if (!v.valid()) return -1;
  if (v.graph == graph_) return v.id;
  if (!parent_) {
    record(invalid_argument("a value of graph ", v.graph, " was used in graph ", graph_, ", which does not enclose it"));
    return -1;
  }
  const int32_t pid = parent_->resolve(v);
  if (pid < 0) return -1;
  const auto key = std::make_pair(parent_->graph_, pid);
  auto it = captured_.find(key);
  if (it != captured_.end()) return it->second;
  TensorInfo info = parent_->graph().tensors[static_cast<size_t>(pid)];
  info.constant = Tensor();
  info.name = str_cat(info.name, "_captured");
  const int32_t id = graph().add_tensor(std::move(info));
  graph().inputs.push_back(id);
  captured_[key] = id;
  capture_sources_.push_back({parent_->graph_, pid});
  return id;
}

void GraphBuilder::output(Value v, const std::string& name) {
  const int32_t id = resolve(v);
  if (id < 0) return;
  if (!name.empty()) graph().tensors[static_cast<size_t>(id)].name = name;
  graph().outputs.push_back(id);
}

void GraphBuilder::infer_node(size_t n) {
  const Graph& g = graph();
  Node& node = graph().nodes[n];
  const std::string place = node_place(graph_, static_cast<int32_t>(n), node);
  const ops::OpDef* def = ops::OpRegistry::global().find(node.op);
  if (!def) return record(unsupported(place, ": unsupported op '", node.op, "'"));
  Status s = ops::check_node_against_def(*def, node, place);
  if (!s.ok()) return record(s);
  ops::fill_attribute_defaults(*def, node);
  std::vector<ops::ValueType> in(node.inputs.size());
  std::vector<const Tensor*> vals(node.inputs.size(), nullptr);
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    if (node.inputs[k] < 0) continue;
    const TensorInfo& t = g.tensors[static_cast<size_t>(node.inputs[k])];
    in[k] = {t.dtype, t.has_shape, t.shape, t.kind};
    if (t.constant.defined()) vals[k] = &t.constant;
  }
  ops::InferContext ctx(node, place, in, vals, false);
  ctx.set_model(&model_);
  s = def->infer(ctx);
  if (!s.ok()) return record(s);
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] < 0) continue;  // an omitted optional output
    TensorInfo& t = graph().tensors[static_cast<size_t>(node.outputs[k])];
    t.dtype = ctx.output(k).dtype;
    t.kind = ctx.output(k).kind == ValueKind::kSequence ? ValueKind::kSequence : ValueKind::kTensor;
    t.has_shape = ctx.output(k).has_shape;
    t.shape = ctx.output(k).shape;
  }
}

std::vector<Value> GraphBuilder::op_n(const std::string& op, const std::vector<Value>& inputs, size_t num_outputs,
                                      std::vector<Attribute> attrs, const std::string& name) {
  return op_n(op, inputs, std::vector<bool>(num_outputs, true), std::move(attrs), name);
}

std::vector<Value> GraphBuilder::op_n(const std::string& op, const std::vector<Value>& inputs,
                                      const std::vector<bool>& present, std::vector<Attribute> attrs,
                                      const std::string& name) {
  const size_t num_outputs = present.size();
  Node node;
  node.op = op;
  node.name = name.empty() ? fresh_name(op) : name;
  for (const Value& v : inputs) node.inputs.push_back(resolve(v));
  node.attributes = std::move(attrs);
  std::vector<Value> outs;
  for (size_t k = 0; k < num_outputs; ++k) {
    if (!present[k]) {
      node.outputs.push_back(-1);
      outs.emplace_back();
      continue;
    }
    TensorInfo info;
    info.name = num_outputs == 1 ? node.name : str_cat(node.name, ":", k);
    const int32_t id = graph().add_tensor(std::move(info));
    node.outputs.push_back(id);
    outs.push_back({graph_, id});
  }
  graph().nodes.push_back(std::move(node));
  infer_node(graph().nodes.size() - 1);
  return outs;
}

Value GraphBuilder::op(const std::string& op, const std::vector<Value>& inputs, std::vector<Attribute> attrs,
                       const std::string& name) {
  return op_n(op, inputs, 1, std::move(attrs), name)[0];
}

std::vector<Value> GraphBuilder::unify_captures(std::vector<GraphBuilder*> children) {
  std::vector<Value> order;
  for (GraphBuilder* c : children)
    for (const Value& v : c->capture_sources_)
      if (std::none_of(order.begin(), order.end(), [&](const Value& o) { return o.id == v.id; })) order.push_back(v);
  for (GraphBuilder* c : children) {
    std::vector<int32_t> inputs = c->formal_inputs_;
    for (const Value& v : order) {
      const auto key = std::make_pair(v.graph, v.id);
      auto it = c->captured_.find(key);
      int32_t id;
      if (it != c->captured_.end()) {
        id = it->second;
      } else {  // this child does not use it: an unused input keeps the signatures equal
        TensorInfo info = c->parent_->graph().tensors[static_cast<size_t>(v.id)];
        info.constant = Tensor();
        info.name = str_cat(info.name, "_captured");
        id = c->graph().add_tensor(std::move(info));
      }
      inputs.push_back(id);
    }
    c->graph().inputs = std::move(inputs);
  }
  return order;
}

std::vector<Value> GraphBuilder::cond(Value pred, const BodyFn& then_fn, const BodyFn& else_fn) {
  const int32_t pred_id = resolve(pred);
  auto make_branch = [&](const BodyFn& fn, const char* name) {
    model_.graphs.emplace_back();
    const auto gi = static_cast<int32_t>(model_.graphs.size() - 1);
    model_.graphs.back().name = fresh_name(name);
    auto child = std::make_unique<GraphBuilder>(GraphBuilder(model_, gi, this));
    for (Value v : fn(*child)) child->output(v);
    return child;
  };
  auto then_b = make_branch(then_fn, "then");
  auto else_b = make_branch(else_fn, "else");
  const std::vector<Value> captures = unify_captures({then_b.get(), else_b.get()});
  std::vector<Value> inputs = {Value{graph_, pred_id}};
  inputs.insert(inputs.end(), captures.begin(), captures.end());
  const size_t n_out = then_b->graph().outputs.size();
  if (else_b->graph().outputs.size() != n_out)
    record(invalid_argument("cond: then_fn returned ", n_out, " values, else_fn ", else_b->graph().outputs.size()));
  return op_n("If", inputs, n_out,
              {Attribute::make_graph("then_branch", then_b->graph_), Attribute::make_graph("else_branch", else_b->graph_)});
}

std::vector<Value> GraphBuilder::loop(Value n, const std::function<Value(GraphBuilder&, const std::vector<Value>&)>* cond_fn,
                                      const LoopBodyFn& body_fn, const std::vector<Value>& loop_vars) {
  Value cond_init;
  if (cond_fn) cond_init = (*cond_fn)(*this, loop_vars);
  model_.graphs.emplace_back();
  const auto gi = static_cast<int32_t>(model_.graphs.size() - 1);
  model_.graphs.back().name = fresh_name("body");
  GraphBuilder body(model_, gi, this);
  const Value iter = body.input("iter", DType::kI64, {});
  const Value cond_in = body.input("cond", DType::kBool, {});
  std::vector<Value> vars;
  for (const Value& v : loop_vars) {
    const TensorInfo& src = graph().tensors[static_cast<size_t>(resolve(v))];
    // Loop-carried values may change shape between iterations: same rank, dynamic dims.
    Shape dyn(src.shape.size(), -1);
    vars.push_back(body.input(str_cat(src.name, "_in"), src.dtype, dyn));
    if (!src.has_shape) body.graph().tensors.back().has_shape = false;
  }
  const std::vector<Value> next = body_fn(body, iter, vars);
  if (next.size() != loop_vars.size())
    record(invalid_argument("loop body returned ", next.size(), " values for ", loop_vars.size(), " loop variables"));
  body.output(cond_fn ? (*cond_fn)(body, next) : cond_in);
  for (const Value& v : next) body.output(v);
  const std::vector<Value> captures = unify_captures({&body});
  std::vector<Value> inputs = {n, cond_init};
  inputs.insert(inputs.end(), loop_vars.begin(), loop_vars.end());
  inputs.insert(inputs.end(), captures.begin(), captures.end());
  return op_n("Loop", inputs, loop_vars.size(),
              {Attribute::make_graph("body", gi),
               Attribute::make_int("num_captures", static_cast<int64_t>(captures.size()))});
}

std::vector<Value> GraphBuilder::while_loop(const std::function<Value(GraphBuilder&, const std::vector<Value>&)>& cond_fn,
                                            const LoopBodyFn& body_fn, const std::vector<Value>& loop_vars) {
  return loop(Value{}, &cond_fn, body_fn, loop_vars);
}

std::vector<Value> GraphBuilder::fori_loop(Value n, const LoopBodyFn& body_fn, const std::vector<Value>& loop_vars) {
  return loop(n, nullptr, body_fn, loop_vars);
}

}  // namespace tsr::ops
