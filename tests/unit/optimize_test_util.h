// Test helpers for the graph optimization tests (optimize_test.cpp, fused_elementwise_test.cpp):
// build a small f32 graph, run it in a Session, and compare a model's outputs before and after
// passes::optimize.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/passes/optimize.h"
#include "core/passes/verify_model.h"

namespace tsr::opt_test {

struct Builder {
  ir::Model model;
  std::vector<Tensor> feeds;
  std::mt19937 rng{42};

  Builder() { model.graphs.emplace_back(); }
  ir::Graph& g() { return model.main(); }

  Tensor random(const Shape& s, double lo = -1, double hi = 1) {
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (auto& x : v) x = static_cast<float>(u(rng));
    return Tensor::from<float>(s, v);
  }
  int32_t input(const Shape& s) {
    ir::TensorInfo info{"x" + std::to_string(g().inputs.size()), ValueKind::kTensor, DType::kF32, true, s};
    const int32_t id = g().add_tensor(info);
    g().inputs.push_back(id);
    feeds.push_back(random(s));
    return id;
  }
  int32_t constant(Tensor t) {
    ir::TensorInfo info{"c" + std::to_string(g().tensors.size()), ValueKind::kTensor, t.dtype(), true, t.shape()};
    info.constant = std::move(t);
    return g().add_tensor(info);
  }
  int32_t node(const std::string& op, std::vector<int32_t> inputs, std::vector<ir::Attribute> attrs = {}) {
    ir::TensorInfo info{"t" + std::to_string(g().tensors.size())};
    const int32_t out = g().add_tensor(info);
    g().nodes.push_back({op, 0, "n" + std::to_string(g().nodes.size()), std::move(inputs), {out}, std::move(attrs)});
    return out;
  }
  void output(int32_t id) { g().outputs.push_back(id); }
};

// Runs `m` as given (the tests compare a graph before and after the passes they call).
inline std::vector<Tensor> run(const ir::Model& m, const std::vector<Tensor>& feeds, int threads = 1) {
  SessionOptions opt;
  opt.optimization = OptimizationLevel::kNone;
  opt.num_threads = threads;
  auto session = Session::create(std::make_shared<const ir::Model>(m), opt);
  REQUIRE(session.ok());
  auto out = (*session)->run(feeds);
  if (!out.ok()) FAIL(out.status().message());
  return std::move(out).value();
}

inline void check_equal(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    REQUIRE(got[k].shape() == want[k].shape());
    double max_err = 0;
    for (int64_t i = 0; i < got[k].numel(); ++i) {
      const double a = got[k].scalar_f64(i), b = want[k].scalar_f64(i);
      max_err = std::max(max_err, std::fabs(a - b) / (1 + std::fabs(b)));
    }
    INFO("output " << k);
    CHECK(max_err <= tol);
  }
}

// Verifies, optimizes and checks outputs equal before/after; returns the optimized model.
inline ir::Model optimize_and_compare(Builder& b, int threads = 1, const passes::OptimizeOptions& options = {}) {
  REQUIRE(passes::verify_model(b.model).ok());
  const std::vector<Tensor> before = run(b.model, b.feeds, threads);
  ir::Model opt = b.model;
  auto report = passes::optimize(opt, options);
  if (!report.ok()) FAIL(report.status().message());
  CHECK(report->nodes_before == static_cast<int64_t>(b.model.main().nodes.size()));
  CHECK(report->nodes_after == static_cast<int64_t>(opt.main().nodes.size()));
  check_equal(run(opt, b.feeds, threads), before);
  return opt;
}

inline std::vector<std::string> ops_of(const ir::Model& m) {
  std::vector<std::string> ops;
  for (const ir::Node& n : m.main().nodes) ops.push_back(n.op);
  return ops;
}

}  // namespace tsr::opt_test
