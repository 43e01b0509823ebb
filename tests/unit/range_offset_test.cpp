// Tests for the Range rewrite of the fold_constants step (core/passes/opt_range_offset.cpp) and the
// re-inference rounds after it (optimize.cpp): a decode step's position ids, Range(past, past + 1),
// get a static length, and every shape query downstream folds, also those that only become static
// after an earlier Reshape's target folded.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/exec/optimized_model.h"
#include "tests/unit/optimize_test_util.h"

using namespace tsr;
using namespace tsr::opt_test;

namespace {

int64_t count_op(const ir::Model& m, const std::string& op) {
  const std::vector<std::string> ops = ops_of(m);
  return std::count(ops.begin(), ops.end(), op);
}

int32_t i64_scalar(Builder& b, int64_t v) { return b.constant(Tensor::scalar<int64_t>(v)); }

// past [1, P?, 4] (P dynamic, 5 in the feeds); pos = Range(Cast(P), Cast(P + c), d) as PyTorch's
// decode export writes it, Unsqueezed to [1, n]; y = table[pos] + x, then two Reshapes to the
// shape Shape() reports, the second one's input known only once the first one's target folded.
Builder build(int64_t c, int64_t d, bool same_base = true) {
  Builder b;
  const int32_t x = b.input({1, 1, 4});
  const int32_t past = b.input({1, 5, 4});
  b.g().tensors[size_t(past)].shape[1] = -1;
  const int32_t plen = b.node("Gather", {b.node("Shape", {past}), i64_scalar(b, 1)}, {ir::Attribute::make_int("axis", 0)});
  const int32_t other = b.node("Gather", {b.node("Shape", {past}), i64_scalar(b, 0)}, {ir::Attribute::make_int("axis", 0)});
  const auto cast = [&](int32_t t) { return b.node("Cast", {t}, {ir::Attribute::make_int("to", 7)}); };
  const int32_t limit = cast(b.node("Add", {same_base ? plen : other, i64_scalar(b, c)}));
  const int32_t pos = b.node("Range", {cast(plen), limit, i64_scalar(b, d)});
  const int32_t ids = b.node("Unsqueeze", {pos, b.constant(Tensor::from<int64_t>({1}, {0}))});
  const int32_t emb = b.node("Gather", {b.constant(b.random({16, 4})), ids}, {ir::Attribute::make_int("axis", 0)});
  const int32_t y = b.node("Add", {emb, x});
  const int32_t r1 = b.node("Reshape", {y, b.node("Shape", {y})});
  const int32_t z = b.node("Relu", {r1});
  b.output(b.node("Reshape", {z, b.node("Shape", {z})}));
  return b;
}

// The optimizer as the CLI runs it: constants folded by the CPU kernels.
const passes::OptimizeOptions kFolding = [] {
  passes::OptimizeOptions o;
  o.evaluate = evaluate_node;
  return o;
}();

}  // namespace

TEST_CASE("fold_constants: Range(P, P + 1) of a dynamic P gets a static length", "[optimize]") {
  Builder b = build(1, 1);
  const ir::Model opt = optimize_and_compare(b, 1, kFolding);
  CHECK(count_op(opt, "Range") == 0);
  CHECK(count_op(opt, "Shape") == 1);  // the Gather of P's Shape feeding the Add of the offsets
  const ir::TensorInfo& out = opt.main().tensors[size_t(opt.main().outputs[0])];
  CHECK(out.has_shape);
  CHECK(out.shape == Shape{1, 1, 4});
}

TEST_CASE("fold_constants: Range(P, P + c, d) lengths ceil(c / d), stepping down too", "[optimize]") {
  for (const auto& [c, d] : std::vector<std::pair<int64_t, int64_t>>{{3, 2}, {4, 2}, {-3, -1}, {-5, -2}}) {
    INFO("c " << c << " d " << d);
    // The step goes back from P = 5 (the feed's length): positions stay in the 16-row table.
    Builder b = build(c, d);
    const ir::Model opt = optimize_and_compare(b, 1, kFolding);
    CHECK(count_op(opt, "Range") == 0);
    const int64_t n = (c + d + (d > 0 ? -1 : 1)) / d;
    CHECK(opt.main().tensors[size_t(opt.main().outputs[0])].shape == Shape{1, n, 4});
  }
}

TEST_CASE("fold_constants: a Range whose limit is not its start plus a constant stays", "[optimize]") {
  Builder b = build(1, 1, false);  // limit from P's batch dim, not from P
  const ir::Model opt = optimize_and_compare(b, 1, kFolding);
  CHECK(count_op(opt, "Range") == 1);
}
