// Finite-difference cases for Dropout's gradient rule (core/ops/grads/random.cpp). A finite
// difference is meaningful in inference mode (identity), with ratio 0, and with a `seed` (the
// kernel then restarts its generator every run, so each run drops the same elements). A separate
// test checks that an unseeded training-mode Dropout's backward reuses the forward's mask.
#include "tests/unit/grad_check.h"

#include <catch2/catch.hpp>

#include <memory>

#include "tessera/session.h"
#include "core/ops/graph_builder.h"
#include "core/passes/autodiff.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {
Tensor ratio(double r) { return Tensor::from<double>({}, {r}); }
Tensor flag(bool b) { return Tensor::from<bool>({}, {b}); }
}  // namespace

TSR_GRAD_CASES(random) {
  const Attribute seed = Attribute::make_int("seed", 7);
  return {
      {"Dropout", "inference (no training_mode)", {x(uniform({2, 3}, 1)), cst(ratio(0.4))}},
      {"Dropout", "training_mode constant false", {x(uniform({2, 3}, 2)), cst(ratio(0.4)), cst(flag(false))}, {}, 2},
      {"Dropout", "training, ratio 0, mask output", {x(uniform({2, 3}, 3)), cst(ratio(0.0)), cst(flag(true))}, {}, 2},
      {"Dropout", "training, seeded, ratio 0.4, no mask output (the pass adds it)",
       {x(uniform({4, 5}, 4)), cst(ratio(0.4)), cst(flag(true))}, {seed}},
      {"Dropout", "training, seeded, default ratio", {x(uniform({4, 5}, 5)), omitted(), cst(flag(true))}, {seed}, 2},
      {"Dropout", "training flag and ratio as graph inputs (dynamic)",
       {x(uniform({4, 5}, 6)), fixed(ratio(0.25)), fixed(flag(true))}, {seed}},
      {"Dropout", "training flag graph input, false", {x(uniform({4, 5}, 7)), fixed(ratio(0.25)), fixed(flag(false))}, {seed}},
  };
}

TEST_CASE("Dropout's backward drops the elements its forward dropped (unseeded, no mask output)", "[grad]") {
  ir::Model m;
  ops::GraphBuilder b(m);
  const ops::Value in = b.input("x", DType::kF32, {64});
  const ops::Value y = b.op("Dropout", {in, b.constant(Tensor::from<float>({}, {0.5f})), b.constant(flag(true))});
  b.output(b.op("ReduceSum", {y}, {Attribute::make_int("keepdims", 0)}), "loss");
  b.output(y, "y");
  REQUIRE(b.status().ok());
  auto gm = passes::gradient_model(std::move(m), {"loss", {"x"}});
  INFO(gm.status().to_string());
  REQUIRE(gm.ok());
  auto s = Session::create(std::make_shared<ir::Model>(std::move(gm).value()));
  REQUIRE(s.ok());
  std::vector<float> xv(64);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = 1.0f + static_cast<float>(i);
  const Tensor xt = Tensor::from<float>({64}, xv);
  for (int run = 0; run < 3; ++run) {  // a fresh mask every run
    auto out = (*s)->run({xt});
    REQUIRE(out.ok());
    const Tensor& yv = (*out)[1];
    const Tensor& dx = (*out)[2];
    int kept = 0;
    for (int64_t i = 0; i < 64; ++i) {
      // Y = X * mask * 2 and dX = mask * 2: the same elements are kept in both.
      CHECK(dx.data<float>()[i] * xv[static_cast<size_t>(i)] == yv.data<float>()[i]);
      kept += dx.data<float>()[i] != 0;
    }
    CHECK(kept > 0);
    CHECK(kept < 64);
  }
}
