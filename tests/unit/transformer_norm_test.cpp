// Load-time and run-time errors of the transformer normalizations and the com.microsoft Gelu
// family (core/ops/families/transformer_norm.cpp, transformer_act.cpp), where onnxruntime
// rejects the model too, and empty inputs. Values are checked against onnxruntime by
// tests/transformers/gen_norms.py; gradients by transformer_norm_grad_test.cpp.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/ir/single_node.h"
#include "core/passes/infer_types.h"

using namespace tsr;
using ir::Attribute;

namespace {

// One node with `outputs` (a negative entry: omitted) over `inputs` (undefined: omitted), all
// graph inputs; inference runs at construction.
struct Node1 {
  ir::Model model;
  std::vector<Tensor> feeds;
  Status infer;
  Node1(const std::string& op, const std::vector<Tensor>& inputs, std::vector<Attribute> attrs = {},
        std::vector<int32_t> outputs = {0}) {
    ir::Node n;
    n.op = op;
    n.name = "n0";
    n.attributes = std::move(attrs);
    n.outputs = std::move(outputs);
    std::vector<ir::NodeInput> in;
    for (const Tensor& t : inputs) in.push_back({t, false});
    ir::SingleNodeModel built = ir::single_node_model(n, in);
    model = std::move(built.model);
    feeds = std::move(built.feeds);
    infer = passes::infer_types(model);
  }
  Status run() const {
    auto s = Session::create(std::make_shared<ir::Model>(model), SessionOptions{});
    if (!s.ok()) return s.status();
    auto r = (*s)->run(feeds);
    return r.ok() ? ok_status() : r.status();
  }
};

Tensor f32(const Shape& s) { return Tensor::from<float>(s, std::vector<float>(static_cast<size_t>(shape_numel(s)), 0.5f)); }
Tensor i32(const Shape& s, std::vector<int32_t> v) { return Tensor::from<int32_t>(s, std::move(v)); }

// The status is an error whose message contains `what`.
void require_error(const Status& st, const std::string& what) {
  INFO(st.to_string());
  REQUIRE(!st.ok());
  CHECK(st.message().find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("SkipLayerNormalization: bad gamma / skip shapes and the simplified mean output are load-time errors") {
  const char* skip_ln = "com.microsoft::SkipLayerNormalization";
  require_error(Node1(skip_ln, {f32({2, 3, 37}), f32({2, 3, 37}), f32({36})}).infer, "gamma");
  require_error(Node1(skip_ln, {f32({2, 3, 37}), f32({2, 4, 37}), f32({37})}).infer, "skip");
  require_error(Node1(skip_ln, {f32({2, 3, 37}), f32({3, 3, 37}), f32({37})}).infer, "skip");
  require_error(Node1(skip_ln, {f32({37}), f32({37}), f32({37})}).infer, "rank 1");
  require_error(Node1(skip_ln, {f32({2, 3, 37}), f32({2, 3, 37}), f32({37}), Tensor(), f32({1, 37})}).infer, "bias");
  // A broadcast skip [seq, hidden] or [1, seq, hidden] is fine.
  CHECK(Node1(skip_ln, {f32({2, 3, 37}), f32({3, 37}), f32({37})}).infer.ok());
  CHECK(Node1(skip_ln, {f32({2, 3, 37}), f32({1, 3, 37}), f32({37})}).infer.ok());
  require_error(Node1("com.microsoft::SkipSimplifiedLayerNormalization", {f32({2, 3, 8}), f32({2, 3, 8}), f32({8})}, {},
                      {0, 1})
                    .infer,
                "mean");
}

TEST_CASE("RMSNormalization: a scale that does not broadcast and a bad axis are load-time errors") {
  require_error(Node1("RMSNormalization", {f32({2, 3, 5}), f32({4})}).infer, "(Scale)");
  require_error(Node1("RMSNormalization", {f32({2, 3, 5}), f32({5})}, {Attribute::make_int("axis", 3)}).infer, "axis");
  require_error(Node1("SimplifiedLayerNormalization", {f32({2, 5}), f32({5})}, {Attribute::make_int("stash_type", 7)}).infer,
                "stash_type");
}

TEST_CASE("BiasGelu / FastGelu: a bias that is not [hidden] is a load-time error (onnxruntime: 1-D only)") {
  require_error(Node1("com.microsoft::BiasGelu", {f32({2, 3, 5}), f32({3, 5})}).infer, "bias");
  require_error(Node1("com.microsoft::FastGelu", {f32({2, 3, 5}), f32({4})}).infer, "bias");
  CHECK(Node1("com.microsoft::FastGelu", {f32({2, 3, 5})}).infer.ok());
}

TEST_CASE("EmbedLayerNormalization: attributes and tables at load time, ids at run time") {
  const char* op = "com.microsoft::EmbedLayerNormalization";
  const Tensor ids = i32({1, 3}, {0, 2, 5});
  // input_ids, segment_ids, word, position, segment, gamma, beta
  const std::vector<Tensor> ok_in = {ids, Tensor(), f32({6, 4}), f32({3, 4}), Tensor(), f32({4}), f32({4})};
  const Node1 good(op, ok_in, {}, {0, 1});
  REQUIRE(good.infer.ok());
  CHECK(good.run().ok());
  require_error(Node1(op, ok_in, {Attribute::make_int("mask_index_type", 2)}, {0, 1}).infer, "mask_index_type");
  require_error(Node1(op, {ids, Tensor(), f32({6, 4}), f32({3, 4}), Tensor(), f32({4})}, {}, {0, 1}).infer, "beta");
  require_error(Node1(op, {ids, Tensor(), f32({6, 4}), f32({3, 5}), Tensor(), f32({4}), f32({4})}, {}, {0, 1}).infer,
                "hidden");
  require_error(Node1(op, {ids, i32({1, 3}, {0, 1, 0}), f32({6, 4}), f32({3, 4}), Tensor(), f32({4}), f32({4})}, {},
                      {0, 1})
                    .infer,
                "together");
  // onnxruntime: "input index out of range".
  require_error(Node1(op, {i32({1, 3}, {0, 6, 1}), Tensor(), f32({6, 4}), f32({3, 4}), Tensor(), f32({4}), f32({4})}, {},
                      {0, 1})
                    .run(),
                "input_ids 6 is out of range");
  // Sequence longer than the position table.
  require_error(Node1(op, {i32({1, 4}, {0, 1, 2, 3}), Tensor(), f32({6, 4}), f32({3, 4}), Tensor(), f32({4}), f32({4})},
                      {}, {0, 1})
                    .run(),
                "position id 3 is out of range");
}

TEST_CASE("Transformer norms and Gelu forms run on empty inputs") {
  CHECK(Node1("com.microsoft::SkipLayerNormalization", {f32({0, 3, 8}), f32({0, 3, 8}), f32({8})}).run().ok());
  CHECK(Node1("com.microsoft::SkipSimplifiedLayerNormalization", {f32({2, 0, 8}), f32({2, 0, 8}), f32({8})}).run().ok());
  CHECK(Node1("RMSNormalization", {f32({0, 5}), f32({5})}).run().ok());
  CHECK(Node1("com.microsoft::BiasGelu", {f32({0, 5}), f32({5})}).run().ok());
}
