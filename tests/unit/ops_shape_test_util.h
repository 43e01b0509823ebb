// Test helpers for the shape / data-movement op tests: build a one-node ir::Model, run
// passes::infer_types (load time) and a tsr::Session (run time).
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/passes/infer_types.h"

namespace tsr::shape_test {

// One node input: a graph input fed at run time, a constant (visible to load-time inference) or
// omitted. `dynamic` declares a graph input with all dims -1 (shape only known at run time).
struct Arg {
  Tensor t;
  bool constant = false;
  bool omitted = false;
  bool dynamic = false;
};
inline Arg in(Tensor t) { return {std::move(t), false, false, false}; }
inline Arg dyn(Tensor t) { return {std::move(t), false, false, true}; }
inline Arg cst(Tensor t) { return {std::move(t), true, false, false}; }
inline Arg none() { return {Tensor(), false, true, false}; }

struct Result {
  Status load;  // infer_types + Session::create
  Status run;
  std::vector<Tensor> outputs;
  std::vector<ir::TensorInfo> inferred;  // the node outputs' TensorInfos after infer_types
  bool ok() const { return load.ok() && run.ok(); }
  std::string error() const { return load.ok() ? run.message() : load.message(); }
};

inline Result run_op(const std::string& op, std::vector<ir::Attribute> attrs, const std::vector<Arg>& args,
                     int num_outputs = 1) {
  auto model = std::make_shared<ir::Model>();
  model->graphs.emplace_back();
  ir::Graph& g = model->graphs[0];
  g.name = "main";
  ir::Node node;
  node.op = op;
  node.name = "n0";
  node.attributes = std::move(attrs);
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < args.size(); ++i) {
    const Arg& a = args[i];
    if (a.omitted) {
      node.inputs.push_back(-1);
      continue;
    }
    ir::TensorInfo info;
    info.name = "in" + std::to_string(i);
    info.dtype = a.t.dtype();
    info.has_shape = true;
    info.shape = a.t.shape();
    if (a.dynamic)
      for (auto& d : info.shape) d = -1;
    if (a.constant) info.constant = a.t;
    const int32_t id = g.add_tensor(info);
    if (!a.constant) {
      g.inputs.push_back(id);
      feeds.push_back(a.t);
    }
    node.inputs.push_back(id);
  }
  for (int k = 0; k < num_outputs; ++k) {
    ir::TensorInfo info;
    info.name = "out" + std::to_string(k);
    const int32_t id = g.add_tensor(info);
    node.outputs.push_back(id);
    g.outputs.push_back(id);
  }
  g.nodes.push_back(node);
  Result r;
  r.load = passes::infer_types(*model);
  if (!r.load.ok()) return r;
  for (int32_t t : g.outputs) r.inferred.push_back(g.tensors[static_cast<size_t>(t)]);
  auto session = Session::create(model);
  if (!session.ok()) {
    r.load = session.status();
    return r;
  }
  auto outs = (*session)->run(feeds);
  if (!outs.ok()) {
    r.run = outs.status();
    return r;
  }
  r.outputs = std::move(outs).value();
  return r;
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

// Checks dtype, shape and values (exact) of a tensor.
template <typename T>
void check_tensor(const Tensor& t, const Shape& shape, const std::vector<T>& expect) {
  REQUIRE(t.defined());
  CHECK(t.dtype() == DTypeOf<T>::value);
  REQUIRE(t.shape() == shape);
  CHECK(values_of<T>(t) == expect);
}

inline std::vector<float> iota_f(int64_t n, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return v;
}

inline Tensor f32(const Shape& s, std::vector<float> v = {}) {
  if (v.empty()) v = iota_f(shape_numel(s));
  return Tensor::from<float>(s, v);
}
inline Tensor i64(const Shape& s, std::vector<int64_t> v) { return Tensor::from<int64_t>(s, v); }
inline Tensor i64v(const std::vector<int64_t>& v) { return i64({static_cast<int64_t>(v.size())}, v); }

using ir::Attribute;

}  // namespace tsr::shape_test
