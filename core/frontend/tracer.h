// Tracer: the Emitter that runs each op eagerly AND records it into a static graph (tracing,
// DESIGN.md §8: torch.jit.trace / tf.function).
//
//   ir::Model model;
//   frontend::Tracer t(model);
//   Value x = t.input("X", Tensor::from<float>({1, 2}, {1, 2}));
//   Value flag = t.input("flag", Tensor::scalar(1.0f));
//   Value y = t.decide(t.emit("Greater", {flag, t.constant(Tensor::scalar(0.0f))}), "model.py:3:5")
//                 ? t.emit("MatMul", {x, w1}) : t.emit("MatMul", {x, w2});
//   t.output(t.emit("Relu", {y}), "Y");
//   // model: Greater (computed, unused), MatMul(X, w1), Relu -> Y; no If, no MatMul(X, w2);
//   // t.warnings() has one entry naming model.py:3:5.
//
// Only what runs is recorded: a host-level decision (if/while in the caller's code) read from a
// tensor with decide() fixes the branch taken into the graph. decide() warns when the condition
// depends on a graph input (a condition computed from constants alone is the same every run, so
// tracing it is exact and silent).
//
// Values are the eager emitter's (eager() can read them, make them require grad, ...); each one
// maps to a tensor of the recorded graph. Every value must come from this tracer (input,
// constant, emit). The graph's Values follow the GraphBuilder rules; the model must outlive the
// tracer. Errors (eager or recording) are kept in status() and tracing goes on.
// Thread safety: none (one thread at a time), as for the EagerEmitter and the GraphBuilder.
#pragma once

#include <string>
#include <vector>

#include "core/frontend/eager_emitter.h"
#include "core/ops/graph_builder.h"

namespace tsr::frontend {

class Tracer final : public ops::Emitter {
 public:
  // Records into model.graphs[0] (created if the model has none), named `name`.
  explicit Tracer(ir::Model& model, std::string name = "main");

  // A graph input whose traced value is `value` (its dtype and shape become the input's).
  ops::Value input(const std::string& name, Tensor value);
  // Marks `v` as a graph output.
  void output(ops::Value v, const std::string& name = "");
  const Tensor& tensor(ops::Value v) const { return eager_.tensor(v); }

  // A host-level decision read from `cond` (one element; nonzero = true): returns its value. If
  // `cond` depends on a graph input, records the warning
  //   "<where>: tracing fixed this branch: the condition depends on a tensor value; the traced
  //    graph ignores the other branch"
  // where `where` names the source location ("file:line:col"). A cond with more than one
  // element is an error (recorded; returns false).
  bool decide(ops::Value cond, const std::string& where);
  const std::vector<std::string>& warnings() const { return warnings_; }

  // ---- ops::Emitter ----
  std::vector<ops::Value> emit_n(std::string_view op, const std::vector<ops::Value>& inputs, size_t num_outputs,
                                 std::vector<ir::Attribute> attrs = {}) override;
  ops::Value constant(Tensor value) override;
  ops::ValueType type(ops::Value v) const override { return eager_.type(v); }
  const Tensor* known_value(ops::Value v) const override { return eager_.known_value(v); }
  // The first error of either the eager run or the recording.
  const Status& status() const override;

  EagerEmitter& eager() { return eager_; }
  ops::GraphBuilder& builder() { return builder_; }
  // The recorded graph tensor of `v` (invalid if v is not a traced value).
  ops::Value graph_value(ops::Value v) const;

 private:
  void bind(ops::Value eager_value, ops::Value graph_value, bool dynamic);
  ops::Value graph_input(ops::Value v);

  EagerEmitter eager_;
  ops::GraphBuilder builder_;
  std::vector<ops::Value> graph_of_;  // by eager slot id
  std::vector<char> dynamic_;         // by eager slot id: depends on a graph input
  std::vector<std::string> warnings_;
  Status status_;                     // the tracer's own errors (foreign values, bad decide)
};

}  // namespace tsr::frontend
