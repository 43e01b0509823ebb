// Helpers shared by the eager and tracer tests: a program written once against ops::Emitter is
// run eagerly and as a graph (GraphBuilder -> Session), so the two can be compared.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/frontend/eager_emitter.h"
#include "core/passes/verify_model.h"
#include "core/ops/graph_builder.h"

namespace tsr::eagertest {

// A program: given its inputs as Values of `e`, emits its outputs.
using Program = std::function<std::vector<ops::Value>(ops::Emitter& e, const std::vector<ops::Value>& inputs)>;

inline std::string input_name(size_t k) { return "in" + std::to_string(k); }

// The program recorded into a model with inputs in0, in1, ... (typed like `feeds`) and outputs
// out0, out1, ...
inline ir::Model build_model(const Program& p, const std::vector<Tensor>& feeds) {
  ir::Model m;
  ops::GraphBuilder b(m);
  std::vector<ops::Value> ins;
  for (size_t k = 0; k < feeds.size(); ++k) ins.push_back(b.input(input_name(k), feeds[k].dtype(), feeds[k].shape()));
  const std::vector<ops::Value> outs = p(b, ins);
  for (size_t k = 0; k < outs.size(); ++k) b.output(outs[k], "out" + std::to_string(k));
  INFO(b.status().to_string());
  REQUIRE(b.status().ok());
  return m;
}

inline std::vector<Tensor> run_model(ir::Model m, const std::vector<Tensor>& feeds) {
  const Status v = passes::verify_model(m);
  INFO(v.to_string());
  REQUIRE(v.ok());
  // The graph as built: eager and graph execution are compared bit for bit, node for node.
  SessionOptions options;
  options.optimization = OptimizationLevel::kNone;
  auto s = Session::create(std::make_shared<ir::Model>(std::move(m)), options);
  INFO(s.status().to_string());
  REQUIRE(s.ok());
  auto out = (*s)->run(feeds);
  INFO(out.status().to_string());
  REQUIRE(out.ok());
  return *out;
}

// The program run eagerly; returns the output tensors.
inline std::vector<Tensor> run_eager(const Program& p, const std::vector<Tensor>& feeds) {
  frontend::EagerEmitter e;
  std::vector<ops::Value> ins;
  for (const Tensor& t : feeds) ins.push_back(e.wrap(t));
  const std::vector<ops::Value> outs = p(e, ins);
  INFO(e.status().to_string());
  REQUIRE(e.status().ok());
  std::vector<Tensor> result;
  for (const ops::Value& v : outs) result.push_back(e.tensor(v));
  return result;
}

// max |a - b| over the elements (infinity when dtypes or shapes differ).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return INFINITY;
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::fabs(a.scalar_f64(i) - b.scalar_f64(i)));
  return m;
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.scalar_f64(i));
  return v;
}

}  // namespace tsr::eagertest
