// Tests for the transformer passes (core/passes/opt_fold_matmul.cpp: fold_matmul_transpose;
// opt_transformer_patterns.cpp: gelu, layer_norm) and the com.microsoft::FusedMatMul kernel.
//
// Each pass case builds the pattern (and its orderings), checks what the optimizer made of it
// (ops and attributes) and that the outputs equal the unoptimized graph's (optimize_and_compare);
// near-misses must come out unrewritten. FusedMatMul runs against a plain triple loop over every
// transA/transB pair and batch-broadcast shape. The same graphs, and FusedMatMul as onnxruntime
// writes it, are checked against onnxruntime-node by tests/transformers/gen_fused_matmul.py and
// gen_transformer_patterns.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/passes/optimize.h"
#include "tests/unit/optimize_test_util.h"

using namespace tsr;
using namespace tsr::opt_test;

namespace {

int32_t scalar(Builder& b, float v) { return b.constant(Tensor::scalar<float>(v)); }

ir::Attribute perm(std::vector<int64_t> p) { return ir::Attribute::make_ints("perm", std::move(p)); }

const ir::Node* find_op(const ir::Model& m, const std::string& op) {
  for (const ir::Node& n : m.main().nodes)
    if (n.op == op) return &n;
  return nullptr;
}

passes::OptimizeOptions no_elementwise() {
  passes::OptimizeOptions o;
  o.fuse_elementwise = false;
  return o;
}

}  // namespace

TEST_CASE("fold_matmul_transpose: MatMul(Q, Transpose(K)) / sqrt(d) -> FusedMatMul(transB, alpha)", "[optimize]") {
  for (int scale = 0; scale < 3; ++scale) {
    INFO("scale form " << scale);
    Builder b;
    const int32_t q = b.input({2, 3, 5, 8}), k = b.input({2, 3, 6, 8});
    const int32_t kt = b.node("Transpose", {k}, {perm({0, 1, 3, 2})});
    const int32_t s = b.node("MatMul", {q, kt});
    int32_t y = s;
    if (scale == 0) y = b.node("Div", {s, scalar(b, std::sqrt(8.f))});
    if (scale == 1) y = b.node("Mul", {scalar(b, 0.25f), s});
    b.output(b.node("Softmax", {y}, {ir::Attribute::make_int("axis", -1)}));
    const ir::Model opt = optimize_and_compare(b);
    CHECK(ops_of(opt) == std::vector<std::string>{"com.microsoft::FusedMatMul", "Softmax"});
    const ir::Node* f = find_op(opt, "com.microsoft::FusedMatMul");
    REQUIRE(f);
    CHECK(f->attr_int("transA") == 0);
    CHECK(f->attr_int("transB") == 1);
    const double want = scale == 0 ? 1 / std::sqrt(8.0) : scale == 1 ? 0.25 : 1.0;
    CHECK(std::fabs(f->attr_float("alpha") - want) < 1e-6);
  }
}

TEST_CASE("fold_matmul_transpose: Transpose on A, scalar Mul/Div on the inputs, rank 2 default perm", "[optimize]") {
  Builder b;
  const int32_t a = b.input({2, 9, 5}), w = b.input({6, 9}), c = b.input({4, 9});
  const int32_t at = b.node("Transpose", {b.node("Div", {a, scalar(b, 2.f)})}, {perm({0, 2, 1})});
  const int32_t wt = b.node("Transpose", {w});  // rank 2, no perm: a swap
  const int32_t y1 = b.node("MatMul", {b.node("Mul", {at, scalar(b, 3.f)}), b.node("Transpose", {c}, {perm({1, 0})})});
  b.output(y1);
  b.output(b.node("MatMul", {b.input({3, 9}), wt}));
  const ir::Model opt = optimize_and_compare(b, 1, no_elementwise());
  CHECK(ops_of(opt) == std::vector<std::string>{"com.microsoft::FusedMatMul", "com.microsoft::FusedMatMul"});
  const ir::Node& f = opt.main().nodes[0];
  CHECK(f.attr_int("transA") == 1);
  CHECK(f.attr_int("transB") == 1);
  CHECK(std::fabs(f.attr_float("alpha") - 1.5) < 1e-9);
  CHECK(opt.main().nodes[1].attr_int("transA") == 0);
  CHECK(opt.main().nodes[1].attr_int("transB") == 1);
}

TEST_CASE("fold_matmul_transpose: K as Transpose(k, [0, 2, 3, 1]) -> Transpose [0, 2, 1, 3] + transB", "[optimize]") {
  Builder b;
  const int32_t q = b.input({2, 3, 5, 4}), k = b.input({2, 6, 3, 4});
  b.output(b.node("MatMul", {q, b.node("Transpose", {k}, {perm({0, 2, 3, 1})})}));
  const ir::Model opt = optimize_and_compare(b);
  REQUIRE(ops_of(opt) == std::vector<std::string>{"Transpose", "com.microsoft::FusedMatMul"});
  CHECK(opt.main().nodes[0].attr_ints("perm") == Ints{0, 2, 1, 3});
  CHECK(opt.main().nodes[1].attr_int("transB") == 1);
  CHECK(opt.main().tensors[size_t(opt.main().nodes[0].outputs[0])].shape == Shape{2, 3, 6, 4});
}

TEST_CASE("fold_matmul_transpose: near-misses stay MatMul", "[optimize]") {
  SECTION("a heads Transpose that keeps the last axis is not a last-two swap") {
    Builder b;
    const int32_t q = b.input({2, 3, 5, 4}), k = b.input({2, 4, 3, 6});
    b.output(b.node("MatMul", {q, b.node("Transpose", {k}, {perm({0, 2, 1, 3})})}));
    const ir::Model opt = optimize_and_compare(b);
    CHECK(ops_of(opt) == std::vector<std::string>{"Transpose", "MatMul"});
  }
  SECTION("a Transpose with a second reader") {
    Builder b;
    const int32_t kt = b.node("Transpose", {b.input({2, 6, 4})}, {perm({0, 2, 1})});
    b.output(b.node("MatMul", {b.input({2, 5, 4}), kt}));
    b.output(b.node("Relu", {kt}));
    const ir::Model opt = optimize_and_compare(b, 1, no_elementwise());
    CHECK(ops_of(opt) == std::vector<std::string>{"Transpose", "MatMul", "Relu"});
  }
  SECTION("a per-column Mul, a Div of a constant by the product, a 1-D operand") {
    Builder b;
    const int32_t p = b.node("MatMul", {b.input({2, 5, 4}), b.input({4, 6})});
    b.output(b.node("Mul", {p, b.constant(b.random({6}))}));
    const int32_t p2 = b.node("MatMul", {b.input({2, 5, 4}), b.input({4, 6})});
    b.output(b.node("Div", {scalar(b, 2.f), p2}));
    const int32_t kt = b.node("Transpose", {b.input({4, 5})}, {perm({1, 0})});
    b.output(b.node("MatMul", {kt, b.input({4})}));
    const ir::Model opt = optimize_and_compare(b, 1, no_elementwise());
    CHECK(ops_of(opt) == std::vector<std::string>{"MatMul", "Mul", "MatMul", "Div", "Transpose", "MatMul"});
  }
  SECTION("disabled by name") {
    Builder b;
    b.output(b.node("MatMul", {b.input({5, 4}), b.node("Transpose", {b.input({6, 4})}, {perm({1, 0})})}));
    passes::OptimizeOptions o;
    REQUIRE(passes::disable_pass(o, "fold_matmul_transpose").ok());
    const ir::Model opt = optimize_and_compare(b, 1, o);
    CHECK(ops_of(opt) == std::vector<std::string>{"Transpose", "MatMul"});
  }
}

TEST_CASE("FusedMatMul: alpha * op(A) @ op(B) over trans and batch-broadcast combinations", "[optimize]") {
  // Stored (untransposed) shapes of op(A) [.., M, K] and op(B) [.., K, N].
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 5, 7}, {7, 6}},       {{2, 3, 5, 8}, {2, 3, 8, 4}}, {{2, 3, 5, 8}, {1, 3, 8, 4}},
      {{5, 8}, {3, 8, 4}},       {{3, 1, 5, 8}, {1, 2, 8, 4}}, {{1, 4, 3}, {2, 3, 9}},
      {{2, 40, 70}, {70, 33}}};
  for (const auto& [sa, sb] : shapes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (int threads : {1, 3}) {
          INFO("A " << shape_str(sa) << " B " << shape_str(sb) << " ta " << ta << " tb " << tb << " threads " << threads);
          const auto swapped = [](Shape s, bool t) {
            if (t) std::swap(s[s.size() - 1], s[s.size() - 2]);
            return s;
          };
          Builder b;
          const int32_t a = b.input(swapped(sa, ta)), bb = b.input(swapped(sb, tb));
          const float alpha = ta == tb ? 1.f : -0.375f;
          b.output(b.node("com.microsoft::FusedMatMul", {a, bb},
                          {ir::Attribute::make_float("alpha", alpha), ir::Attribute::make_int("transA", ta),
                           ir::Attribute::make_int("transB", tb)}));
          REQUIRE(passes::verify_model(b.model).ok());
          const std::vector<Tensor> got = run(b.model, b.feeds, threads);
          // Reference: broadcast batch index by index, a triple loop per matrix.
          const size_t br = std::max(sa.size(), sb.size()) - 2;
          Shape batch(br, 1);
          for (size_t d = 0; d < br; ++d) {
            const int64_t da = d + sa.size() - 2 >= br ? sa[d + sa.size() - 2 - br] : 1;
            const int64_t db = d + sb.size() - 2 >= br ? sb[d + sb.size() - 2 - br] : 1;
            batch[d] = std::max(da, db);
          }
          const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
          Shape want_shape = batch;
          want_shape.push_back(m);
          want_shape.push_back(n);
          REQUIRE(got[0].shape() == want_shape);
          const Tensor& ta_t = b.feeds[0];
          const Tensor& tb_t = b.feeds[1];
          const int64_t nb = shape_numel(batch);
          double max_err = 0;
          for (int64_t bi = 0; bi < nb; ++bi) {
            // Batch offsets (in matrices) of A and B for batch index bi.
            int64_t oa = 0, ob = 0, rem = bi, mula = 1, mulb = 1;
            for (size_t d = br; d-- > 0;) {
              const int64_t idx = rem % batch[d];
              rem /= batch[d];
              const int64_t ia = int64_t(d) - int64_t(br) + int64_t(sa.size()) - 2;
              const int64_t ib = int64_t(d) - int64_t(br) + int64_t(sb.size()) - 2;
              if (ia >= 0) {
                oa += (sa[size_t(ia)] == 1 ? 0 : idx) * mula;
                mula *= sa[size_t(ia)];
              }
              if (ib >= 0) {
                ob += (sb[size_t(ib)] == 1 ? 0 : idx) * mulb;
                mulb *= sb[size_t(ib)];
              }
            }
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double acc = 0;
                for (int64_t p = 0; p < k; ++p) {
                  const double av = ta_t.scalar_f64(oa * m * k + (ta ? p * m + i : i * k + p));
                  const double bv = tb_t.scalar_f64(ob * k * n + (tb ? j * k + p : p * n + j));
                  acc += av * bv;
                }
                const double g = got[0].scalar_f64((bi * m + i) * n + j);
                max_err = std::max(max_err, std::fabs(g - alpha * acc));
              }
          }
          CHECK(max_err < 1e-4);
        }
}

TEST_CASE("FusedMatMul: transBatchA/B are refused at run time, mismatched inner dims at load", "[optimize]") {
  Builder b;
  b.output(b.node("com.microsoft::FusedMatMul", {b.input({2, 3, 4}), b.input({2, 5, 4})},
                  {ir::Attribute::make_int("transB", 0)}));
  CHECK_FALSE(passes::verify_model(b.model).ok());
  Builder c;
  c.output(c.node("com.microsoft::FusedMatMul", {c.input({2, 3, 4}), c.input({2, 4, 5})},
                  {ir::Attribute::make_int("transBatchA", 1)}));
  REQUIRE(passes::verify_model(c.model).ok());
  SessionOptions opt;
  opt.optimization = OptimizationLevel::kNone;
  auto session = Session::create(std::make_shared<const ir::Model>(c.model), opt);
  if (session.ok()) CHECK_FALSE((*session)->run(c.feeds).ok());
}

namespace {

// 0.5 x (1 + erf(x / sqrt 2)) on x in one of three groupings; div: "/ sqrt 2" as Div (else Mul).
int32_t erf_gelu(Builder& b, int32_t x, int grouping, bool div, float half = 0.5f) {
  const int32_t d = div ? b.node("Div", {x, scalar(b, std::sqrt(2.f))}) : b.node("Mul", {scalar(b, std::sqrt(0.5f)), x});
  const int32_t s = b.node("Add", {b.node("Erf", {d}), scalar(b, 1.f)});
  if (grouping == 0) return b.node("Mul", {b.node("Mul", {x, s}), scalar(b, half)});
  if (grouping == 1) return b.node("Mul", {b.node("Mul", {scalar(b, half), x}), s});
  return b.node("Mul", {x, b.node("Mul", {s, scalar(b, half)})});
}

}  // namespace

TEST_CASE("gelu: the Erf form in every grouping and the tanh form -> Gelu", "[optimize]") {
  for (int grouping = 0; grouping < 3; ++grouping)
    for (bool div : {true, false}) {
      INFO("grouping " << grouping << " div " << div);
      Builder b;
      const int32_t x = b.input({3, 37});
      b.output(erf_gelu(b, x, grouping, div));
      const ir::Model opt = optimize_and_compare(b);
      CHECK(ops_of(opt) == std::vector<std::string>{"Gelu"});
      CHECK(opt.main().nodes[0].attr_string("approximate") == "none");
    }
  Builder b;
  const int32_t x = b.input({3, 37});
  const int32_t cube = b.node("Mul", {scalar(b, 0.044715f), b.node("Pow", {x, scalar(b, 3.f)})});
  const int32_t arg = b.node("Mul", {b.node("Add", {x, cube}), scalar(b, std::sqrt(2.f / 3.14159265f))});
  const int32_t s = b.node("Add", {scalar(b, 1.f), b.node("Tanh", {arg})});
  b.output(b.node("Mul", {b.node("Mul", {x, scalar(b, 0.5f)}), s}));
  const ir::Model opt = optimize_and_compare(b);
  CHECK(ops_of(opt) == std::vector<std::string>{"Gelu"});
  CHECK(opt.main().nodes[0].attr_string("approximate") == "tanh");
}

TEST_CASE("gelu: an exact Gelu after a Gemm fuses into FusedGemm, through matmul_add's Reshape", "[optimize]") {
  // Odd sizes: N = 37 leaves a masked tail of the epilogue's vectors; rank 3 runs as
  // Reshape -> Gemm -> Reshape with the Gelu moved ahead of the second Reshape. From 17 rows the
  // Gemm runs on its packed weights (linalg.cpp), 123 rows split by rows at two threads.
  for (const Shape& xs : {Shape{5, 19}, Shape{2, 7, 19}, Shape{40, 19}, Shape{3, 41, 19}})
    for (int threads : {1, 2}) {
      INFO("x " << shape_str(xs) << ", " << threads << " thread(s)");
      Builder b;
      const int32_t mm = b.node("MatMul", {b.input(xs), b.constant(b.random({19, 37}))});
      b.output(erf_gelu(b, b.node("Add", {mm, b.constant(b.random({37}))}), 0, true));
      const ir::Model opt = optimize_and_compare(b, threads);
      CHECK(ops_of(opt) == (xs.size() == 2 ? std::vector<std::string>{"FusedGemm"}
                                           : std::vector<std::string>{"Reshape", "FusedGemm", "Reshape"}));
      const ir::Node* f = find_op(opt, "FusedGemm");
      REQUIRE(f != nullptr);
      CHECK(f->attr_string("activation") == "Gelu");
    }
  // An exact one whose Reshape input is also an output stays a Gelu node.
  Builder r;
  const int32_t mr = r.node("MatMul", {r.input({2, 3, 6}), r.constant(r.random({6, 9}))});
  const int32_t y = r.node("Add", {mr, r.constant(r.random({9}))});
  r.output(y);
  r.output(erf_gelu(r, y, 0, true));
  CHECK(find_op(optimize_and_compare(r), "FusedGemm") == nullptr);
}

TEST_CASE("gelu: a tanh Gelu after a Gemm fuses into FusedGemm as GeluTanh", "[optimize]") {
  // GPT-2's MLP: nn.GELU(approximate="tanh"), as a Gelu with approximate="tanh" (opset 20, or
  // the gelu pass's rewrite of the Pow/Tanh export) or as com.microsoft::FastGelu. The epilogue
  // computes the Gelu kernel's vector formula (f32_math-inl.h vec_gelu_tanh): the outputs are the
  // unfused graph's bit for bit except in the last numel % lanes elements, which the Gelu kernel
  // (elementwise_impl.h) computes with std::tanh and the epilogue as one masked vector (~1 ulp).
  // N = 37: a masked tail in every row; 40 rows: the packed weights.
  for (int form = 0; form < 2; ++form)
    for (const Shape& xs : {Shape{5, 19}, Shape{2, 7, 19}, Shape{40, 19}, Shape{3, 41, 19}})
      for (int threads : {1, 2}) {
        INFO("form " << form << ", x " << shape_str(xs) << ", " << threads << " thread(s)");
        Builder b;
        const int32_t mm = b.node("MatMul", {b.input(xs), b.constant(b.random({19, 37}))});
        const int32_t y = b.node("Add", {mm, b.constant(b.random({37}))});
        if (form == 0)
          b.output(b.node("Gelu", {y}, {ir::Attribute::make_string("approximate", "tanh")}));
        else
          b.output(b.node("com.microsoft::FastGelu", {y}));
        REQUIRE(passes::verify_model(b.model).ok());  // infers the tensors' dtypes and shapes
        const ir::Model opt = b.model;
        ir::Model fused = opt;
        passes::OptimizeOptions unfused_options;
        unfused_options.fuse_activation = false;
        ir::Model unfused = opt;
        REQUIRE(passes::optimize(unfused, unfused_options).ok());
        REQUIRE(passes::optimize(fused).ok());
        CHECK(ops_of(fused) == (xs.size() == 2 ? std::vector<std::string>{"FusedGemm"}
                                               : std::vector<std::string>{"Reshape", "FusedGemm", "Reshape"}));
        const ir::Node* f = find_op(fused, "FusedGemm");
        REQUIRE(f != nullptr);
        CHECK(f->attr_string("activation") == "GeluTanh");
        check_equal(run(fused, b.feeds, threads), run(unfused, b.feeds, threads), 1e-7);
        optimize_and_compare(b, threads);  // and within 1e-5 of the graph as written
      }
}

TEST_CASE("gelu: near-misses are left alone", "[optimize]") {
  SECTION("0.5 off by 1e-4") {
    Builder b;
    b.output(erf_gelu(b, b.input({2, 9}), 1, true, 0.50005f));
    CHECK(find_op(optimize_and_compare(b, 1, no_elementwise()), "Gelu") == nullptr);
  }
  SECTION("the Erf read by a second node") {
    Builder b;
    const int32_t x = b.input({2, 9});
    const int32_t y = erf_gelu(b, x, 0, true);
    b.output(y);
    int32_t erf = -1;
    for (const ir::Node& n : b.g().nodes)
      if (n.op == "Erf") erf = n.outputs[0];
    b.output(erf);
    CHECK(find_op(optimize_and_compare(b, 1, no_elementwise()), "Gelu") == nullptr);
  }
  SECTION("the erf of another tensor") {
    Builder b;
    const int32_t x = b.input({2, 9}), z = b.input({2, 9});
    const int32_t s = b.node("Add", {b.node("Erf", {b.node("Div", {z, scalar(b, std::sqrt(2.f))})}), scalar(b, 1.f)});
    b.output(b.node("Mul", {b.node("Mul", {x, scalar(b, 0.5f)}), s}));
    CHECK(find_op(optimize_and_compare(b, 1, no_elementwise()), "Gelu") == nullptr);
  }
}

namespace {

// LayerNorm spelled out over the last axis of x; eps, the Pow exponent and the axis as given.
int32_t decomposed_ln(Builder& b, int32_t x, int64_t hidden, bool beta, int64_t axis = -1, float pw = 2.f) {
  const auto mean = [&](int32_t v) {
    return b.node("ReduceMean", {v}, {ir::Attribute::make_ints("axes", {axis}), ir::Attribute::make_int("keepdims", 1)});
  };
  const int32_t d = b.node("Sub", {x, mean(x)});
  const int32_t var = mean(b.node("Pow", {d, scalar(b, pw)}));
  const int32_t nx = b.node("Div", {d, b.node("Sqrt", {b.node("Add", {var, scalar(b, 1e-5f)})})});
  const int32_t g = b.node("Mul", {nx, b.constant(b.random({hidden}))});
  return beta ? b.node("Add", {b.constant(b.random({hidden})), g}) : g;
}

}  // namespace

TEST_CASE("layer_norm: ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul[/Add] -> LayerNormalization", "[optimize]") {
  for (bool beta : {true, false}) {
    INFO("beta " << beta);
    Builder b;
    const int32_t x = b.input({2, 5, 48});
    b.output(decomposed_ln(b, x, 48, beta));
    const ir::Model opt = optimize_and_compare(b);
    CHECK(ops_of(opt) == std::vector<std::string>{"LayerNormalization"});
    CHECK(opt.main().nodes[0].inputs.size() == (beta ? 3u : 2u));
    CHECK(std::fabs(opt.main().nodes[0].attr_float("epsilon") - 1e-5) < 1e-9);
  }
  SECTION("near-misses: another axis, Pow 3") {
    for (int miss = 0; miss < 2; ++miss) {
      Builder b;
      const int32_t x = b.input({2, 5, 48});
      b.output(miss == 0 ? decomposed_ln(b, x, 48, true, 1) : decomposed_ln(b, x, 48, true, -1, 3.f));
      CHECK(find_op(optimize_and_compare(b, 1, no_elementwise()), "LayerNormalization") == nullptr);
    }
  }
}

TEST_CASE("LayerNormalization: the row kernel against its definition, with Mean and InvStdDev", "[optimize]") {
  for (int threads : {1, 2}) {
    Builder b;
    const int32_t x = b.input({3, 4, 50});
    const int32_t g = b.constant(b.random({4, 50})), beta = b.constant(b.random({50}));
    ir::TensorInfo mi{"mean"}, ii{"inv"};
    const int32_t y = b.g().add_tensor(ir::TensorInfo{"y"});
    const int32_t mean = b.g().add_tensor(mi), inv = b.g().add_tensor(ii);
    b.g().nodes.push_back({"LayerNormalization", 0, "ln", {x, g, beta}, {y, mean, inv},
                           {ir::Attribute::make_int("axis", 1), ir::Attribute::make_float("epsilon", 1e-3)}});
    b.output(y);
    b.output(mean);
    b.output(inv);
    REQUIRE(passes::verify_model(b.model).ok());
    const std::vector<Tensor> got = run(b.model, b.feeds, threads);
    const Tensor& xt = b.feeds[0];
    const Tensor& gt = b.g().tensors[size_t(g)].constant;
    const Tensor& bt = b.g().tensors[size_t(beta)].constant;
    for (int64_t r = 0; r < 3; ++r) {
      double mu = 0, var = 0;
      for (int64_t i = 0; i < 200; ++i) mu += xt.scalar_f64(r * 200 + i) / 200;
      for (int64_t i = 0; i < 200; ++i) var += std::pow(xt.scalar_f64(r * 200 + i) - mu, 2) / 200;
      const double is = 1 / std::sqrt(var + 1e-3);
      CHECK(std::fabs(got[1].scalar_f64(r) - mu) < 1e-5);
      CHECK(std::fabs(got[2].scalar_f64(r) - is) < 1e-4 * is);
      for (int64_t i = 0; i < 200; ++i) {
        const double want = (xt.scalar_f64(r * 200 + i) - mu) * is * gt.scalar_f64(i) + bt.scalar_f64(i % 50);
        CHECK(std::fabs(got[0].scalar_f64(r * 200 + i) - want) < 1e-4);
      }
    }
  }
}

namespace {

// LayerNormalization over the last axis of `x` with [hidden] gamma and beta.
int32_t layer_norm(Builder& b, int32_t x, int64_t hidden, int64_t axis = -1) {
  return b.node("LayerNormalization", {x, b.constant(b.random({hidden})), b.constant(b.random({hidden}))},
                {ir::Attribute::make_int("axis", axis), ir::Attribute::make_float("epsilon", 1e-6)});
}

}  // namespace

TEST_CASE("skip_layer_norm: LayerNormalization(Add(a, b)) -> SkipLayerNormalization, the sum kept where read", "[optimize]") {
  SECTION("post-LN (BERT): the sum feeds the norm only") {
    Builder b;
    const int32_t a = b.input({2, 5, 48}), r = b.input({2, 5, 48});
    b.output(layer_norm(b, b.node("Add", {a, r}), 48));
    const ir::Model opt = optimize_and_compare(b);
    REQUIRE(ops_of(opt) == std::vector<std::string>{"com.microsoft::SkipLayerNormalization"});
    CHECK(opt.main().nodes[0].outputs.size() == 1);
    CHECK(std::fabs(opt.main().nodes[0].attr_float("epsilon") - 1e-6) < 1e-12);
  }
  SECTION("pre-LN (GPT, ViT, Whisper): the residual stream reads the sum too") {
    Builder b;
    const int32_t a = b.input({7, 48}), r = b.input({7, 48});
    const int32_t s = b.node("Add", {a, r});
    const int32_t y = layer_norm(b, s, 48);
    b.output(b.node("Add", {s, b.node("Relu", {y})}));
    const ir::Model opt = optimize_and_compare(b, 1, no_elementwise());
    REQUIRE(ops_of(opt) == std::vector<std::string>{"com.microsoft::SkipLayerNormalization", "Relu", "Add"});
    REQUIRE(opt.main().nodes[0].outputs.size() == 4);
    CHECK(opt.main().nodes[0].outputs[3] == s);
  }
  SECTION("near-misses: a broadcast Add, another axis, used statistics") {
    for (int miss = 0; miss < 3; ++miss) {
      INFO("miss " << miss);
      Builder b;
      const int32_t a = b.input({2, 5, 48});
      const int32_t r = b.input(miss == 0 ? Shape{1, 5, 48} : Shape{2, 5, 48});
      const int32_t s = b.node("Add", {a, r});
      if (miss == 1) {
        b.output(b.node("LayerNormalization", {s, b.constant(b.random({5, 48})), b.constant(b.random({5, 48}))},
                        {ir::Attribute::make_int("axis", 1)}));
      } else if (miss == 2) {
        const int32_t y = b.g().add_tensor(ir::TensorInfo{"y"}), mean = b.g().add_tensor(ir::TensorInfo{"mean"});
        b.g().nodes.push_back({"LayerNormalization", 0, "ln", {s, b.constant(b.random({48}))}, {y, mean}, {}});
        b.output(y);
        b.output(mean);
      } else {
        b.output(layer_norm(b, s, 48));
      }
      const ir::Model opt = optimize_and_compare(b, 1, no_elementwise());
      CHECK(find_op(opt, "com.microsoft::SkipLayerNormalization") == nullptr);
    }
  }
}
