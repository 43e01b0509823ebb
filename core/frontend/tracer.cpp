#include "core/frontend/tracer.h"

namespace tsr::frontend {

using ops::Value;

Tracer::Tracer(ir::Model& model, std::string name) : builder_(model, std::move(name)) {}

const Status& Tracer::status() const {
  if (!eager_.status().ok()) return eager_.status();
  if (!builder_.status().ok()) return builder_.status();
  return status_;
}

void Tracer::bind(Value eager_value, Value graph_value, bool dynamic) {
  const size_t id = static_cast<size_t>(eager_value.id);
  if (graph_of_.size() <= id) {
    graph_of_.resize(id + 1);
    dynamic_.resize(id + 1, 0);
  }
  graph_of_[id] = graph_value;
  dynamic_[id] = dynamic ? 1 : 0;
}

Value Tracer::graph_value(Value v) const {
  if (!eager_.owns(v) || static_cast<size_t>(v.id) >= graph_of_.size()) return {};
  return graph_of_[static_cast<size_t>(v.id)];
}

Value Tracer::graph_input(Value v) {
  const Value g = graph_value(v);
  if (!g.valid() && status_.ok()) status_ = invalid_argument("trace: a value that this tracer did not produce was used");
  return g;
}

Value Tracer::input(const std::string& name, Tensor value) {
  const Value g = builder_.input(name, value.dtype(), value.shape());
  const Value v = eager_.wrap(std::move(value));
  bind(v, g, true);
  return v;
}

Value Tracer::constant(Tensor value) {
  const Value g = builder_.constant(value);
  const Value v = eager_.constant(std::move(value));
  bind(v, g, false);
  return v;
}

void Tracer::output(Value v, const std::string& name) {
  const Value g = graph_input(v);
  if (g.valid()) builder_.output(g, name);
}

std::vector<Value> Tracer::emit_n(std::string_view op, const std::vector<Value>& inputs, size_t num_outputs,
                                  std::vector<ir::Attribute> attrs) {
  std::vector<Value> graph_inputs(inputs.size());
  bool dynamic = false;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].valid()) continue;  // an omitted optional input
    graph_inputs[k] = graph_input(inputs[k]);
    if (graph_inputs[k].valid()) dynamic |= dynamic_[static_cast<size_t>(inputs[k].id)] != 0;
  }
  std::vector<Value> outs = eager_.emit_n(op, inputs, num_outputs, attrs);
  const std::vector<Value> graph_outs = builder_.emit_n(op, graph_inputs, num_outputs, std::move(attrs));
  for (size_t k = 0; k < num_outputs; ++k) bind(outs[k], graph_outs[k], dynamic);
  return outs;
}

bool Tracer::decide(Value cond, const std::string& where) {
  const Tensor& t = eager_.tensor(cond);
  if (!t.defined() || t.kind() != ValueKind::kTensor || t.numel() != 1) {
    if (status_.ok())
      status_ = invalid_argument(where, ": a branch condition must be one element, got ",
                                 t.defined() ? shape_str(t.shape()) : std::string("no value"));
    return false;
  }
  const bool truth = t.scalar_f64(0) != 0.0;
  const Value g = graph_value(cond);
  if (g.valid() && dynamic_[static_cast<size_t>(cond.id)])
    warnings_.push_back(str_cat(where, ": tracing fixed this branch (the condition was ", truth ? "true" : "false",
                                "): the condition depends on a tensor value; the traced graph ignores the other branch"));
  return truth;
}

}  // namespace tsr::frontend
