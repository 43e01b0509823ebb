// GraphBuilder: builds static graphs, including If/Loop subgraphs, from C++ callables.
//
//   ir::Model model;
//   ops::GraphBuilder b(model);                        // builds model.graphs[0]
//   auto x = b.input("X", DType::kF32, {4, 1});
//   auto flag = b.input("flag", DType::kF32, {});
//   auto y = b.cond(b.op("Greater", {flag, b.constant(Tensor::scalar(0.0f))}),
//                   [&](GraphBuilder& t) { return std::vector{t.op("MatMul", {w1, x})}; },
//                   [&](GraphBuilder& e) { return std::vector{e.op("MatMul", {w2, x})}; });
//   b.output(b.op("Relu", {b.op("Add", {y[0], bias})}), "Y");
//
// A Value names a tensor of one particular graph. Using a Value of an enclosing graph inside a
// branch or loop body captures it: the builder adds an explicit subgraph input (and, through
// every level in between, a node input), following the capture convention of
// core/ops/families/control_flow.cpp. Values are only valid while their builder lives.
// Each op's types are inferred as it is added (so loop bodies see their inputs' types); the
// first error (unknown op, type mismatch) is kept in status() and building continues.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ops/emitter.h"

namespace tsr::ops {

using ir::Attribute;
using ir::Graph;
using ir::Model;

// The Emitter that records: for the GraphBuilder, Value::graph is an index into Model::graphs and
// Value::id a tensor id in that graph.
class GraphBuilder final : public Emitter {
 public:
  using BodyFn = std::function<std::vector<Value>(GraphBuilder&)>;
  using LoopBodyFn = std::function<std::vector<Value>(GraphBuilder&, Value, const std::vector<Value>&)>;

  // Builds into model.graphs[0], creating it if the model has no graph.
  explicit GraphBuilder(Model& model, std::string name = "main");
  // Appends to the existing graph model.graphs[graph] (whose tensors must carry their types, as
  // after passes::infer_types); its tensors are Values {graph, id}. Nothing is captured from
  // other graphs.
  GraphBuilder(Model& model, int32_t graph);

  int32_t graph_index() const { return graph_; }
  // The first error met while building (ok if none). Check it before using the model.
  const Status& status() const override { return root()->status_; }
  Graph& graph() { return model_.graphs[static_cast<size_t>(graph_)]; }
  Model& model() { return model_; }

  // A graph input; shape dims may be -1 (dynamic).
  Value input(const std::string& name, DType dtype, const Shape& shape);
  Value constant(Tensor value) override { return constant(std::move(value), ""); }
  Value constant(Tensor value, const std::string& name);
  // Marks `v` as a graph output (captured first if it belongs to an enclosing graph).
  void output(Value v, const std::string& name = "");

  // Appends a node with `num_outputs` outputs. Omitted optional inputs: Value{} (invalid).
  std::vector<Value> op_n(const std::string& op, const std::vector<Value>& inputs, size_t num_outputs,
                          std::vector<Attribute> attrs = {}, const std::string& name = "");
  // op_n where output k exists only when present[k] (num_outputs = present.size()); an absent
  // optional output gets id -1 in the node and comes back as Value{}. Copying a node whose middle
  // outputs are omitted needs it: an op may reject a requested output (SkipSimplified's mean).
  std::vector<Value> op_n(const std::string& op, const std::vector<Value>& inputs, const std::vector<bool>& present,
                          std::vector<Attribute> attrs = {}, const std::string& name = "");
  Value op(const std::string& op, const std::vector<Value>& inputs, std::vector<Attribute> attrs = {},
           const std::string& name = "");

  // Emitter: op_n with a generated node name; type() reads the graph's TensorInfo.
  std::vector<Value> emit_n(std::string_view op, const std::vector<Value>& inputs, size_t num_outputs,
                            std::vector<Attribute> attrs = {}) override {
    return op_n(std::string(op), inputs, num_outputs, std::move(attrs));
  }
  ops::ValueType type(Value v) const override;
  const Tensor* known_value(Value v) const override;

  // tf.cond: an If node whose branches are built by the callables; both must return the same
  // number of values. Returns the If outputs.
  std::vector<Value> cond(Value pred, const BodyFn& then_fn, const BodyFn& else_fn);
  // tf.while_loop: a Loop node without trip count. cond_fn(b, vars) returns a bool scalar Value;
  // body_fn(b, iter, vars) returns the next vars. Returns the final vars.
  std::vector<Value> while_loop(const std::function<Value(GraphBuilder&, const std::vector<Value>&)>& cond_fn,
                                const LoopBodyFn& body_fn, const std::vector<Value>& loop_vars);
  // fori_loop: a Loop node with trip count n (an int64 scalar Value); body_fn(b, i, vars).
  std::vector<Value> fori_loop(Value n, const LoopBodyFn& body_fn, const std::vector<Value>& loop_vars);

 private:
  GraphBuilder(Model& model, int32_t graph, GraphBuilder* parent);
  // Maps a Value into this graph, capturing it through enclosing builders when needed.
  int32_t resolve(Value v);
  std::string fresh_name(const std::string& stem);
  GraphBuilder* root() { return parent_ ? parent_->root() : this; }
  const GraphBuilder* root() const { return parent_ ? parent_->root() : this; }
  void record(const Status& s);
  // Runs the op's inference on node `n` of this graph and fills its output types.
  void infer_node(size_t n);
  // Gives every child graph of an If the same capture inputs, in one order; returns it.
  static std::vector<Value> unify_captures(std::vector<GraphBuilder*> children);
  // Builds a Loop node; `n` may be invalid (no trip count).
  std::vector<Value> loop(Value n, const std::function<Value(GraphBuilder&, const std::vector<Value>&)>* cond_fn,
                          const LoopBodyFn& body_fn, const std::vector<Value>& loop_vars);

  Model& model_;
  int32_t graph_;
  GraphBuilder* parent_ = nullptr;
  std::map<std::pair<int32_t, int32_t>, int32_t> captured_;  // (outer graph, id) -> local id
  std::vector<Value> capture_sources_;  // outer values, in capture order (values in parent_'s terms)
  std::vector<int32_t> formal_inputs_;  // inputs added by input()/the loop frame, before captures
  int counter_ = 0;
  Status status_;
};

}  // namespace tsr::ops
