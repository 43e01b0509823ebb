// Test helpers for the shape / data-movement op tests: build a one-node ir::Model, run
// passes::infer_types (load time) and a tsr::Session (run time).
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/ir/graph.h"
#include "core/ir/single_node.h"
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
  ir::Node node;
  node.op = op;
  node.name = "n0";
  node.attributes = std::move(attrs);
  node.outputs.assign(static_cast<size_t>(num_outputs), 0);
  std::vector<ir::NodeInput> inputs;
  for (const Arg& a : args) {
    ir::NodeInput in{a.omitted ? Tensor() : a.t, a.constant};
    if (a.dynamic) {
      Shape all_dynamic = a.t.shape();
      for (auto& d : all_dynamic) d = -1;
      in.declared = all_dynamic;
    }
    inputs.push_back(std::move(in));
  }
  ir::SingleNodeModel built = ir::single_node_model(node, inputs);
  auto model = std::make_shared<ir::Model>(std::move(built.model));
  const ir::Graph& g = model->main();
  Result r;
  r.load = passes::infer_types(*model);
  if (!r.load.ok()) return r;
  for (int32_t t : g.outputs) r.inferred.push_back(g.tensors[static_cast<size_t>(t)]);
  auto session = Session::create(model);
  if (!session.ok()) {
    r.load = session.status();
    return r;
  }
  auto outs = (*session)->run(built.feeds);
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
