// Test-only generator for the CLI tests: writes a tiny .tsr model and .npy inputs into DIR.
//
// Model (graph "main"): inputs x: f32 [2, 3] and ids: i64 [N] (N dynamic, named), one constant
// w: f32 [2, 3]; outputs y = Identity(x), ids_out = Identity(ids), w_out = Identity(w).
// Inputs: x.npy (f32 [2,3] = 0.5 * [0..5]), ids.npy (i64 [4] = 7,8,9,10), x_badshape.npy
// (f32 [3,2]), x_i32.npy (i32 [2,3]).
// cf_model.tsr: inputs flag: bool [], v: f32 [3]; out = If(flag, then: Identity(v),
// else: Identity(w2)) with a constant w2 captured into the else branch (subgraph tree tests).
// grad_model.tsr (`tessera grad`): inputs x: f32 [2, 3], ids: i64 [N]; constants w: f32 [2, 3],
// b: f32 [3]; outputs loss = ReduceSum(x * w + b) (so d/dw = x, d/db = 2, d/dx = w) and
// count = Shape(ids). nograd_model.tsr: input x: f32 [3], loss = ReduceSum(Hardmax(Einsum(x)) * x)
// (two ops without gradient rules).
#include <cstdio>
#include <string>

#include "core/ops/graph_builder.h"
#include "core/io/npy.h"
#include "core/io/tsr_io.h"
#include "core/passes/verify_model.h"

using namespace tsr;

static int fail(const Status& s) {
  std::fprintf(stderr, "make_cli_test_model: %s\n", s.to_string().c_str());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_cli_test_model DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  ir::Model m;
  m.producer = "tessera cli tests";
  m.metadata["purpose"] = "cli test";
  m.signatures.push_back({"infer", 0, {}, {}});
  ir::Graph g;
  g.name = "main";
  auto add = [&](const std::string& name, DType dt, Shape shape) {
    ir::TensorInfo t;
    t.name = name;
    t.dtype = dt;
    t.has_shape = true;
    t.shape = std::move(shape);
    return g.add_tensor(std::move(t));
  };
  const int32_t x = add("x", DType::kF32, {2, 3});
  const int32_t ids = add("ids", DType::kI64, {-1});
  g.tensors[size_t(ids)].dim_names = {"N"};
  const int32_t w = add("w", DType::kF32, {2, 3});
  g.tensors[size_t(w)].constant = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const int32_t y = add("y", DType::kF32, {2, 3});
  const int32_t ids_out = add("ids_out", DType::kI64, {-1});
  const int32_t w_out = add("w_out", DType::kF32, {2, 3});
  auto identity = [&](int32_t in, int32_t out, const std::string& name) {
    ir::Node n;
    n.op = "Identity";
    n.name = name;
    n.inputs = {in};
    n.outputs = {out};
    g.nodes.push_back(std::move(n));
  };
  identity(x, y, "id_x");
  identity(ids, ids_out, "id_ids");
  identity(w, w_out, "id_w");
  g.inputs = {x, ids};
  g.outputs = {y, ids_out, w_out};
  m.graphs.push_back(std::move(g));

  Status s = passes::verify_model(m);
  if (!s.ok()) return fail(s);
  s = io::save_model_file(m, dir + "/model.tsr");
  if (!s.ok()) return fail(s);

  {
    ir::Model cf;
    cf.producer = "tessera cli tests";
    ops::GraphBuilder b(cf);
    auto flag = b.input("flag", DType::kBool, {});
    auto v = b.input("v", DType::kF32, {3});
    auto w2 = b.constant(Tensor::from<float>({3}, {-1, -2, -3}), "w2");
    auto out = b.cond(
        flag, [&](ops::GraphBuilder& t) { return std::vector<ops::Value>{t.op("Identity", {v})}; },
        [&](ops::GraphBuilder& e) { return std::vector<ops::Value>{e.op("Identity", {w2})}; });
    b.output(out[0], "out");
    if (!b.status().ok()) return fail(b.status());
    s = passes::verify_model(cf);
    if (!s.ok()) return fail(s);
    s = io::save_model_file(cf, dir + "/cf_model.tsr");
    if (!s.ok()) return fail(s);
  }

  {
    ir::Model gm;
    gm.producer = "tessera cli tests";
    ops::GraphBuilder b(gm);
    auto x = b.input("x", DType::kF32, {2, 3});
    auto ids = b.input("ids", DType::kI64, {-1});
    auto w = b.constant(Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6}), "w");
    auto bias = b.constant(Tensor::from<float>({3}, {0.5f, -0.5f, 1}), "b");
    auto y = b.op("Add", {b.op("Mul", {x, w}), bias});
    b.output(b.op("ReduceSum", {y}, {ir::Attribute::make_int("keepdims", 0)}), "loss");
    b.output(b.op("Shape", {ids}), "count");
    if (!b.status().ok()) return fail(b.status());
    s = io::save_model_file(gm, dir + "/grad_model.tsr");
    if (!s.ok()) return fail(s);
  }
  {
    ir::Model nm;
    ops::GraphBuilder b(nm);
    auto x = b.input("x", DType::kF32, {3});
    auto y = b.op("Hardmax", {b.op("Einsum", {x}, {ir::Attribute::make_string("equation", "i->i")})});
    b.output(b.op("ReduceSum", {b.op("Mul", {y, x})}, {ir::Attribute::make_int("keepdims", 0)}), "loss");
    if (!b.status().ok()) return fail(b.status());
    s = io::save_model_file(nm, dir + "/nograd_model.tsr");
    if (!s.ok()) return fail(s);
  }

  const struct {
    const char* file;
    Tensor t;
  } files[] = {
      {"x.npy", Tensor::from<float>({2, 3}, {0, 0.5f, 1, 1.5f, 2, 2.5f})},
      {"ids.npy", Tensor::from<int64_t>({4}, {7, 8, 9, 10})},
      {"x_badshape.npy", Tensor::from<float>({3, 2}, {0, 1, 2, 3, 4, 5})},
      {"x_i32.npy", Tensor::from<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5})},
  };
  for (const auto& f : files) {
    s = io::write_npy_file(f.t, dir + "/" + f.file);
    if (!s.ok()) return fail(s);
  }
  // Malformed files for the error tests.
  for (const char* bad : {"/bad.tsr", "/bad.npy"}) {
    std::FILE* fp = std::fopen((dir + bad).c_str(), "wb");
    if (!fp) return fail(not_found(dir, bad));
    std::fputs("this is not a model or a tensor, just some bytes\n", fp);
    std::fclose(fp);
  }
  return 0;
}
