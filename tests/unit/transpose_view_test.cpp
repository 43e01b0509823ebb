// Transpose that only moves axes of size 1 (backends/cpu/kernels/shape.cpp): the kernel returns a
// view of its input, as Reshape does. The planned runs (one buffer for both values) must keep
// the input intact where an in-place elementwise op writes over the transposed value while the
// input is still read, and real transposes (size > 1 axes reordered) still copy.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "core/ir/graph.h"
#include "core/passes/infer_types.h"
#include "tessera/session.h"
#include "tests/unit/graph_test_util.h"

using namespace tsr;
using namespace tsr::test;

namespace {

// y = Relu(Transpose(x, perm)) (written over the transposed value where the plan allows) and
// z = Transpose(x, [1, 0, 2]) + x-derived Sigmoid, with x: f32 [1, S, D].
std::shared_ptr<ir::Model> make_model(int64_t s, int64_t d, std::vector<int64_t> perm) {
  auto model = std::make_shared<ir::Model>();
  model->graphs.emplace_back();
  ir::Graph& g = model->main();
  g.name = "transpose_view";
  const int32_t x = add_input(g, "x", DType::kF32, {1, s, d});
  const int32_t t = add_node(g, "Transpose", {x}, {ir::Attribute::make_ints("perm", perm)});
  const int32_t y = add_node(g, "Relu", {t});
  const int32_t sig = add_node(g, "Sigmoid", {x});  // reads x after the Relu over its view
  g.outputs = {y, sig};
  REQUIRE(passes::infer_types(*model).ok());
  return model;
}

}  // namespace

TEST_CASE("Transpose moving only size-1 axes is a view, and planned runs keep its input intact") {
  struct Case {
    int64_t s, d;
    std::vector<int64_t> perm;
  };
  // [1, S, D] -> [S, 1, D] (a view), -> [D, 1, S] and [1, D, S] (copies), S = 1: every perm a view.
  const std::vector<Case> cases = {{7, 5, {1, 0, 2}}, {7, 5, {2, 0, 1}}, {6, 3, {0, 2, 1}}, {1, 9, {2, 1, 0}}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-2, 2);
  for (const Case& c : cases) {
    for (auto level : {OptimizationLevel::kNone, OptimizationLevel::kAll}) {
      SessionOptions opt;
      opt.optimization = level;
      auto session = Session::create(make_model(c.s, c.d, c.perm), opt);
      REQUIRE(session.ok());
      for (int run = 0; run < 3; ++run) {  // the first run records the plan, the later ones use it
        std::vector<float> xv(static_cast<size_t>(c.s * c.d));
        for (float& v : xv) v = u(rng);
        const Tensor x = Tensor::from<float>({1, c.s, c.d}, xv);
        auto out = (*session)->run({x});
        REQUIRE(out.ok());
        const Shape in_shape = {1, c.s, c.d};
        Shape want_shape;
        for (int64_t p : c.perm) want_shape.push_back(in_shape[static_cast<size_t>(p)]);
        INFO("perm " << c.perm[0] << c.perm[1] << c.perm[2] << " run " << run);
        REQUIRE((*out)[0].shape() == want_shape);
        // Element (i0, i1, i2) of the output is x at the permuted index.
        for (int64_t i0 = 0; i0 < want_shape[0]; ++i0)
          for (int64_t i1 = 0; i1 < want_shape[1]; ++i1)
            for (int64_t i2 = 0; i2 < want_shape[2]; ++i2) {
              int64_t idx[3];
              idx[c.perm[0]] = i0;
              idx[c.perm[1]] = i1;
              idx[c.perm[2]] = i2;
              const float xval = xv[static_cast<size_t>(idx[1] * c.d + idx[2])];
              const float got = (*out)[0].data<float>()[(i0 * want_shape[1] + i1) * want_shape[2] + i2];
              REQUIRE(got == std::max(xval, 0.0f));
            }
        for (size_t i = 0; i < xv.size(); ++i)
          REQUIRE(std::abs((*out)[1].data<float>()[i] - 1.0f / (1.0f + std::exp(-xv[i]))) <= 1e-6f);
      }
    }
  }
}
