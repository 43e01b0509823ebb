// Shared by the device tests: a one-node model from an op case, run on a device and on the CPU.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/plan.h"
#include "core/ir/single_node.h"
#include "tessera/session.h"
#include "core/passes/infer_types.h"

namespace tsr::test {

struct CaseInput {
  Tensor value;           // undefined = omitted optional input
  bool constant = false;  // a graph constant (weights, shapes) instead of a graph input
};

struct OpCase {
  std::string op;
  std::vector<CaseInput> inputs;
  std::vector<ir::Attribute> attrs = {};
  int num_outputs = 1;
  std::string then = {};  // optional unary op applied to output 0 (a view feeding a kernel)
};

inline std::string describe(const OpCase& c) {
  std::string s = c.op + "(";
  for (const auto& in : c.inputs)
    s += in.value.defined() ? str_cat(in.constant ? "const " : "", shape_str(in.value.shape()), " ") : std::string("- ");
  return s + ")";
}

// The case's node via ir::single_node_model; with `then`, output 0 feeds that op, whose output
// replaces it as the first graph output. Appends the graph inputs' values to *feeds.
inline ir::Model make_case_model(const OpCase& c, std::vector<Tensor>* feeds) {
  ir::Node node;
  node.op = c.op;
  node.name = "n0";
  node.attributes = c.attrs;
  node.outputs.assign(static_cast<size_t>(c.num_outputs), 0);
  std::vector<ir::NodeInput> inputs;
  for (const CaseInput& in : c.inputs) inputs.push_back({in.value, in.constant});
  ir::SingleNodeModel built = ir::single_node_model(node, inputs);
  feeds->insert(feeds->end(), built.feeds.begin(), built.feeds.end());
  ir::Graph& g = built.model.main();
  if (!c.then.empty()) {
    ir::Node next;
    next.op = c.then;
    next.name = "n1";
    next.inputs = {g.nodes[0].outputs[0]};
    ir::TensorInfo info;
    info.name = "then";
    next.outputs = {g.add_tensor(info)};
    g.outputs[0] = next.outputs[0];
    g.nodes.push_back(next);
  }
  return std::move(built.model);
}

struct CompareResult {
  size_t device_nodes = 0;
  size_t copies = 0;          // the device plan's upload and download steps
  double max_error = 0;       // max over elements of |d - c| / (1e-4 + 1e-4 |c|)
  double tolerance_used = 1;  // max_error must not exceed this
};

inline Expected<CompareResult> compare_with_cpu(const OpCase& c, const std::string& device) {
  std::vector<Tensor> feeds;
  ir::Model m = make_case_model(c, &feeds);
  TSR_RETURN_IF_ERROR(passes::infer_types(m));
  auto model = std::make_shared<const ir::Model>(std::move(m));
  SessionOptions so;
  so.device = device;
  TSR_ASSIGN_OR_RETURN(auto dev, Session::create(model, so));
  so.device = "cpu";
  so.optimization = OptimizationLevel::kNone;  // the same graph node for node (a device runs it as loaded)
  TSR_ASSIGN_OR_RETURN(auto cpu, Session::create(model, so));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> a, dev->run(feeds));
  // A second run reuses the plan, its uploaded constants and the freed device memory.
  TSR_ASSIGN_OR_RETURN(a, dev->run(feeds));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> b, cpu->run(feeds));
  CompareResult r;
  r.device_nodes = dev->main_plan().device_nodes();
  r.copies = dev->main_plan().copies();
  if (a.size() != b.size()) return internal_error("output count ", a.size(), " vs ", b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape() || a[i].dtype() != b[i].dtype())
      return internal_error("output ", i, ": ", shape_str(a[i].shape()), " vs cpu ", shape_str(b[i].shape()));
    for (int64_t k = 0; k < a[i].numel(); ++k) {
      const bool f = a[i].dtype() == DType::kF32;  // bool outputs (comparisons) compare exactly
      const double u = f ? a[i].data<float>()[k] : a[i].scalar_f64(k), v = f ? b[i].data<float>()[k] : b[i].scalar_f64(k);
      const double e = std::isnan(u) != std::isnan(v) ? INFINITY : (std::isnan(u) ? 0 : std::fabs(u - v) / (1e-4 + 1e-4 * std::fabs(v)));
      if (e > r.max_error) r.max_error = e;
    }
  }
  return r;
}

}  // namespace tsr::test
