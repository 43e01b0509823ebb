// One-node models for the op tests: an op, its inputs (each a graph input) and attributes, run
// through a Session (ops_nn_test.cpp, qconv_test.cpp).
#pragma once

#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/ir/single_node.h"
#include "core/passes/infer_types.h"

namespace tsr::test {

struct OpCase {
  std::string op = {};
  std::vector<Tensor> inputs = {};  // undefined Tensor = omitted optional input
  std::vector<ir::Attribute> attrs = {};
  int num_outputs = 1;
  std::vector<int> omit_outputs = {};  // output slots given as -1
};

// Every defined input is a graph input (declared with `declared`'s shapes when given).
inline ir::Model make_model(const OpCase& c, const std::vector<Shape>* declared = nullptr) {
  ir::Node node;
  node.op = c.op;
  node.name = "n0";
  node.attributes = c.attrs;
  node.outputs.assign(static_cast<size_t>(c.num_outputs), 0);
  for (int k : c.omit_outputs) node.outputs[static_cast<size_t>(k)] = -1;
  std::vector<ir::NodeInput> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    ir::NodeInput in{c.inputs[i]};
    if (declared) in.declared = (*declared)[i];
    inputs.push_back(std::move(in));
  }
  return ir::single_node_model(node, inputs).model;
}

inline Expected<std::vector<Tensor>> run_case(const OpCase& c, int threads = 1) {
  ir::Model model = make_model(c);
  TSR_RETURN_IF_ERROR(passes::infer_types(model));
  SessionOptions opt;
  opt.num_threads = threads;
  TSR_ASSIGN_OR_RETURN(auto session, Session::create(std::make_shared<const ir::Model>(std::move(model)), opt));
  std::vector<Tensor> feeds;
  for (const Tensor& t : c.inputs)
    if (t.defined()) feeds.push_back(t);
  return session->run(feeds);
}

// Runs `node` as a one-node model whose inputs flagged constant are the model's constants (as in a
// loaded model: the kernels pack them once) at `threads` threads; its outputs.
inline Expected<std::vector<Tensor>> run_node(const ir::Node& node, const std::vector<ir::NodeInput>& inputs,
                                              int threads = 1) {
  ir::SingleNodeModel smn = ir::single_node_model(node, inputs);
  TSR_RETURN_IF_ERROR(passes::infer_types(smn.model));
  SessionOptions opt;
  opt.num_threads = threads;
  TSR_ASSIGN_OR_RETURN(auto session, Session::create(std::make_shared<const ir::Model>(std::move(smn.model)), opt));
  return session->run(smn.feeds);
}

}  // namespace tsr::test
