// ir::verify_structure / passes::verify_model on models built in memory.
#include <catch2/catch.hpp>

#include <functional>

#include "core/ir/verify.h"
#include "core/ops/graph_builder.h"
#include "core/passes/verify_model.h"
#include "tests/malformed/corpus.h"

using namespace tsr;
using corpus::info;
using corpus::node;

namespace {

std::string message_of(const Status& s) { return s.ok() ? std::string("ok") : s.message(); }

bool contains(const Status& s, const std::string& needle) {
  return !s.ok() && s.message().find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("verify: valid models pass and get their types inferred", "[verify]") {
  ir::Model m = corpus::base_model();
  // Leave y's type to inference: Identity of x (f32[2, 3]).
  m.main().tensors[2].dtype = DType::kUndefined;
  m.main().tensors[2].has_shape = false;
  m.main().tensors[2].shape.clear();
  REQUIRE(passes::verify_model(m).ok());
  CHECK(m.main().tensors[2].dtype == DType::kF32);
  CHECK(m.main().tensors[2].shape == Shape{2, 3});
  ir::Model c = corpus::if_model();
  INFO(message_of(passes::verify_model(c)));
  CHECK(passes::verify_model(c).ok());
}

TEST_CASE("verify: structural errors name their place", "[verify]") {
  SECTION("no graphs") {
    ir::Model m;
    CHECK(contains(ir::verify_structure(m), "the model has no graphs"));
  }
  SECTION("signature graph out of range, duplicate signature") {
    ir::Model m = corpus::base_model();
    m.signatures.push_back({"eval", -1, {}, {}});
    CHECK(contains(ir::verify_structure(m), "signature[1] (\"eval\"): graph index -1 out of range [0, 1)"));
    m.signatures.back().graph = 0;
    m.signatures.back().name = "infer";
    CHECK(contains(ir::verify_structure(m), "signature[1]: duplicate signature name \"infer\""));
  }
  SECTION("constant inconsistent with its TensorInfo") {
    ir::Model m = corpus::base_model();
    m.main().tensors[1].dtype = DType::kF64;
    CHECK(contains(ir::verify_structure(m), "graph[0].tensor[1] (\"w\"): declared dtype f64, but the constant is f32"));
    m = corpus::base_model();
    m.main().tensors[1].shape = {3, 2};
    CHECK(contains(ir::verify_structure(m), "graph[0].tensor[1] (\"w\"): declared shape [3, 2], but the constant has shape [2, 3]"));
  }
  SECTION("dims") {
    ir::Model m = corpus::base_model();
    m.main().tensors[3].shape = {2, -2};
    CHECK(contains(ir::verify_structure(m), "graph[0].tensor[3] (\"z\"): dim 1 is -2"));
    m.main().tensors[3].shape = {INT64_MAX, INT64_MAX};
    const Status s = ir::verify_structure(m);
    CHECK(s.code() == StatusCode::kResource);
    CHECK(contains(s, "graph[0].tensor[3] (\"z\"): shape with dim 0"));
    m.main().tensors[3].shape = {-1, 0, 7};  // dynamic and zero dims are fine
    CHECK(ir::verify_structure(m).ok());
  }
  SECTION("kGraphs indices are checked like kGraph") {
    ir::Model m = corpus::if_model();
    ir::Attribute gs;
    gs.name = "branches";
    gs.kind = ir::AttrKind::kGraphs;
    gs.ints = {1, 3};
    m.main().nodes[0].attributes.push_back(gs);
    CHECK(contains(ir::verify_structure(m), "graph[0].node[0] (If \"if0\").attribute 'branches': graph index 3 out of range [0, 3)"));
  }
  SECTION("indirect recursion through three graphs") {
    ir::Model m = corpus::if_model();
    for (int k = 0; k < 2; ++k) m.graphs.push_back(corpus::branch("extra"));  // graphs 3, 4
    // 1 -> 3 -> 4 -> 1
    const std::pair<size_t, int64_t> edges[] = {{1, 3}, {3, 4}, {4, 1}};
    for (auto [from, to] : edges) {
      ir::Graph& g = m.graphs[from];
      const int32_t r = g.add_tensor(info("r", DType::kBool, {}));
      ir::Node n = node("If", "rec", {0, 0}, {r});
      n.attributes.push_back(ir::Attribute::make_graph("then_branch", to));
      n.attributes.push_back(ir::Attribute::make_graph("else_branch", 2));
      g.nodes.push_back(std::move(n));
    }
    const Status s = ir::verify_structure(m);
    CHECK(s.code() == StatusCode::kInvalidModel);
    CHECK(contains(s, "recursive subgraph reference (graph[1] -> graph[3] -> graph[4] -> graph[1])"));
  }
  SECTION("a long chain of subgraph references is not recursion (and does not overflow the stack)") {
    ir::Model m;
    const int kGraphs = 20000;
    for (int k = 0; k < kGraphs; ++k) {
      ir::Graph g = corpus::branch(str_cat("g", k));
      if (k + 1 < kGraphs) {
        ir::Attribute gs;
        gs.name = "next";
        gs.kind = ir::AttrKind::kGraphs;
        gs.ints = {k + 1};
        g.nodes[0].attributes.push_back(gs);
      }
      m.graphs.push_back(std::move(g));
    }
    CHECK(ir::verify_structure(m).ok());
    // Closing the chain makes it recursive.
    ir::Attribute back = ir::Attribute::make_graph("back", 0);
    m.graphs.back().nodes[0].attributes.push_back(back);
    CHECK(contains(ir::verify_structure(m), "recursive subgraph reference (graph[0] -> graph[1] -> "));
  }
}

TEST_CASE("verify: verify_model lists unsupported ops before type errors", "[verify]") {
  ir::Model m = corpus::base_model();
  m.main().nodes[0].op = "NoSuchOp";
  m.main().tensors[3].dtype = DType::kI8;  // would be a type error in Identity
  const Status s = passes::verify_model(m);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK(contains(s, "1 unsupported op:\n  NoSuchOp (1x, first at graph[0].node[0] (NoSuchOp \"id0\"))"));
}

namespace {
// A fori_loop of 3 iterations over x: f32[2, 3] whose body applies `step`; afterwards every
// type the builder gave the body (inputs, intermediates, outputs) is erased, as a TorchScript
// export leaves a Loop body, and the Loop's output type too.
ir::Model rankless_loop(const std::function<ops::Value(ops::GraphBuilder&, ops::Value)>& step) {
  ir::Model m;
  ops::GraphBuilder b(m);
  ops::Value x = b.input("x", DType::kF32, {2, 3});
  auto out = b.fori_loop(b.constant(Tensor::scalar<int64_t>(3), "n"),
                         [&](ops::GraphBuilder& g, ops::Value, const std::vector<ops::Value>& v) {
                           return std::vector<ops::Value>{step(g, v[0])};
                         },
                         {x});
  b.output(out[0]);
  REQUIRE(b.status().ok());
  for (size_t gi = 0; gi < m.graphs.size(); ++gi)
    for (auto& t : m.graphs[gi].tensors)
      if (!t.constant.defined() && !(gi == 0 && t.name == "x")) {
        t.has_shape = false;
        t.shape.clear();
        t.dim_names.clear();
      }
  return m;
}
}  // namespace

TEST_CASE("verify: a Loop body that keeps a carried value's rank gets that rank inferred") {
  // x -> MatMul(x, W[3, 3]) keeps rank 2: the carried input, the MatMul and the Loop output get
  // rank 2 (dims dynamic: shapes may change between iterations), which gradient rules need.
  ir::Model m = rankless_loop([](ops::GraphBuilder& g, ops::Value v) {
    return g.op("MatMul", {v, g.constant(Tensor::from<float>({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}))});
  });
  REQUIRE(passes::verify_model(m).ok());
  const ir::Graph& body = m.graphs[1];
  const ir::TensorInfo& carried = body.tensors[static_cast<size_t>(body.inputs[2])];
  CHECK(carried.has_shape);
  CHECK(carried.shape.size() == 2);
  const ir::TensorInfo& loop_out = m.main().tensors[static_cast<size_t>(m.main().outputs[0])];
  REQUIRE(loop_out.has_shape);
  CHECK(loop_out.shape.size() == 2);
}

TEST_CASE("verify: a Loop body that changes a carried value's rank keeps it unknown, without error") {
  // x -> ReduceSum(x, keepdims=0) over all axes: rank 2 becomes rank 0, so the speculation fails
  // and the body is inferred as declared.
  ir::Model m = rankless_loop([](ops::GraphBuilder& g, ops::Value v) {
    return g.op("ReduceSum", {v}, {ir::Attribute::make_int("keepdims", 0)});
  });
  auto st = passes::verify_model(m);
  INFO(st.to_string());
  REQUIRE(st.ok());
  const ir::Graph& body = m.graphs[1];
  CHECK_FALSE(body.tensors[static_cast<size_t>(body.inputs[2])].has_shape);
}
