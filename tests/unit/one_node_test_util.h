// A one-node model for the op tests (ir::single_node_model): every defined input a graph input,
// or a constant where `constants[i]`; an undefined Tensor marks an omitted optional input; one
// output. Runs inference at construction, then the CPU session on demand.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/ir/single_node.h"
#include "core/passes/infer_types.h"

namespace tsr::test {

struct OneNode {
  ir::Model model;
  std::vector<Tensor> feeds;
  Status infer_status;

  // `declared[i]`, when given, is graph input i's declared shape (-1 = dynamic dim).
  OneNode(const std::string& op, const std::vector<Tensor>& inputs, std::vector<ir::Attribute> attrs = {},
          std::vector<bool> constants = {}, std::vector<Shape> declared = {}) {
    ir::Node node;
    node.op = op;
    node.name = "n0";
    node.attributes = std::move(attrs);
    node.outputs = {0};
    std::vector<ir::NodeInput> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      in.push_back({inputs[i], i < constants.size() && constants[i]});
      if (i < declared.size()) in.back().declared = declared[i];
    }
    ir::SingleNodeModel built = ir::single_node_model(node, in);
    model = std::move(built.model);
    feeds = std::move(built.feeds);
    infer_status = passes::infer_types(model);
  }

  const ir::TensorInfo& out_info() const { return model.main().tensors[static_cast<size_t>(model.main().outputs[0])]; }

  Expected<Tensor> run(int threads = 1) const {
    if (!infer_status.ok()) return infer_status;
    SessionOptions opt;
    opt.num_threads = threads;
    TSR_ASSIGN_OR_RETURN(auto s, Session::create(std::make_shared<ir::Model>(model), opt));
    TSR_ASSIGN_OR_RETURN(auto outs, s->run(feeds));
    return outs.at(0);
  }
};

// The node's output; inference and the run must succeed (REQUIRE, with their messages).
inline Tensor run_ok(const std::string& op, const std::vector<Tensor>& inputs, std::vector<ir::Attribute> attrs = {},
                     std::vector<bool> constants = {}) {
  OneNode m(op, inputs, std::move(attrs), std::move(constants));
  INFO(op << " inference: " << m.infer_status.to_string());
  REQUIRE(m.infer_status.ok());
  auto r = m.run();
  INFO(op << " run: " << r.status().to_string());
  REQUIRE(r.ok());
  return *r;
}

}  // namespace tsr::test
