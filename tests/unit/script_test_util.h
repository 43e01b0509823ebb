// Helpers shared by the script tests: the examples' text, running a script, reading results,
// and model.py's reference values.
#pragma once

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tessera/session.h"
#include "core/frontend/script/script.h"

namespace tsr::scripttest {

using frontend::script::Mode;
using frontend::script::ScriptOptions;
using frontend::script::ScriptResult;

inline std::string example(const std::string& name) {
  std::ifstream f(std::string(TSR_SOURCE_DIR) + "/examples/script/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline ScriptResult run(const std::string& file, Mode mode, const std::string& entry,
                        std::vector<std::pair<std::string, Tensor>> inputs, bool unroll = true) {
  ScriptOptions o;
  o.entry = entry;
  o.mode = mode;
  o.inputs = std::move(inputs);
  o.unroll = unroll;
  std::ostringstream sink;
  o.out = &sink;
  auto r = frontend::script::run_script(file, example(file), o);
  INFO((r.ok() ? std::string() : r.status().message()));
  REQUIRE(r.ok());
  return std::move(r).value();
}

inline size_t count_op(const ir::Model& m, const std::string& op) {
  size_t n = 0;
  for (const ir::Graph& g : m.graphs)
    for (const ir::Node& node : g.nodes) n += node.op == op;
  return n;
}

inline std::vector<float> values(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<float>(t.scalar_f64(i)));
  return v;
}

inline std::vector<float> run_model(const ir::Model& m, const std::vector<Tensor>& in) {
  auto s = Session::create(std::make_shared<ir::Model>(m));
  REQUIRE(s.ok());
  auto out = (*s)->run(in);
  REQUIRE(out.ok());
  return values((*out)[0]);
}

inline const Tensor kX = Tensor::from<float>({2, 2}, {1, 2, 3, -4});
inline const Tensor kPos = Tensor::scalar<float>(1.0f);
inline const Tensor kNeg = Tensor::scalar<float>(-1.0f);
// numpy: relu(X @ W1 + b) and relu(X @ W2 + b) with model.py's constants
//   /usr/bin/python3 -c "import numpy as np; X=np.array([[1,2],[3,-4.]]); W1=np.array([[1,2,0],[0,1,-1.]]);
//   W2=np.array([[-1,0,1],[2,-2,.5]]); b=np.array([.5,-1,.25]); print(np.maximum(X@W1+b,0), np.maximum(X@W2+b,0))"
inline const std::vector<float> kThen = {1.5f, 3, 0, 3.5f, 1, 4.25f};
inline const std::vector<float> kElse = {3.5f, 0, 2.25f, 0, 7, 1.25f};

}  // namespace tsr::scripttest
