// Shape ops chained in one graph (the Shape -> Gather -> Concat -> Reshape pattern of PP-OCR
// exports) and byte-size-generic data movement over many dtypes.
#include "tests/unit/ops_shape_test_util.h"

using namespace tsr;
using namespace tsr::shape_test;

namespace {

int32_t add(ir::Graph& g, const std::string& name, DType dt = DType::kUndefined, bool has_shape = false,
            Shape s = {}, Tensor c = {}) {
  ir::TensorInfo t;
  t.name = name;
  t.dtype = dt;
  t.has_shape = has_shape;
  t.shape = std::move(s);
  t.constant = std::move(c);
  return g.add_tensor(t);
}

ir::Node node(const std::string& op, std::vector<int32_t> ins, std::vector<int32_t> outs,
              std::vector<ir::Attribute> attrs = {}) {
  ir::Node n;
  n.op = op;
  n.name = op;
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  n.attributes = std::move(attrs);
  return n;
}

}  // namespace

TEST_CASE("Shape -> Gather -> Concat -> Reshape infers at load time and runs") {
  // x: f32[?, 8, ?, ?] (batch, channels, h, w); reshape to [batch, 8, h * w] computed from Shape.
  auto model = std::make_shared<ir::Model>();
  model->graphs.emplace_back();
  ir::Graph& g = model->graphs[0];
  const int32_t x = add(g, "x", DType::kF32, true, {-1, 8, -1, -1});
  const int32_t shp = add(g, "shape");
  const int32_t idx01 = add(g, "idx01", DType::kI64, true, {2}, i64v({0, 1}));
  const int32_t head = add(g, "head");
  const int32_t minus1 = add(g, "minus1", DType::kI64, true, {1}, i64v({-1}));
  const int32_t target = add(g, "target");
  const int32_t y = add(g, "y");
  g.inputs = {x};
  g.outputs = {y};
  g.nodes.push_back(node("Shape", {x}, {shp}));
  g.nodes.push_back(node("Gather", {shp, idx01}, {head}));
  g.nodes.push_back(node("Concat", {head, minus1}, {target}, {Attribute::make_int("axis", 0)}));
  g.nodes.push_back(node("Reshape", {x, target}, {y}));
  REQUIRE(passes::infer_types(*model).ok());
  CHECK(g.tensors[static_cast<size_t>(shp)].shape == Shape{4});
  CHECK(g.tensors[static_cast<size_t>(head)].shape == Shape{2});
  CHECK(g.tensors[static_cast<size_t>(target)].shape == Shape{3});
  CHECK(g.tensors[static_cast<size_t>(y)].dtype == DType::kF32);
  CHECK(g.tensors[static_cast<size_t>(y)].shape == Shape{-1, -1, -1});  // rank known, values not propagated

  auto s = Session::create(model);
  REQUIRE(s.ok());
  auto out = (*s)->run({f32({2, 8, 3, 5})});
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == Shape{2, 8, 15});
  CHECK((*out)[0].data<float>()[239] == 239.0f);
}

TEST_CASE("Data movement is generic over element sizes and strings") {
  // np.take(np.arange(6).reshape(2,3), [2, 0], axis=1) for 1-, 2-, 4- and 8-byte dtypes.
  auto check_gather = [](auto tag) {
    using T = decltype(tag);
    Tensor x = Tensor::from<T>({2, 3}, {T(0), T(1), T(2), T(3), T(4), T(5)});
    auto r = run_op("Gather", {Attribute::make_int("axis", 1)}, {in(x), in(i64v({2, 0}))});
    REQUIRE(r.ok());
    check_tensor<T>(r.outputs[0], {2, 2}, {T(2), T(0), T(5), T(3)});
    // np.concatenate([x, x[:, :1]], axis=1) through Slice + Concat
    r = run_op("Concat", {Attribute::make_int("axis", 1)}, {in(x), in(Tensor::from<T>({2, 1}, {T(7), T(8)}))});
    REQUIRE(r.ok());
    check_tensor<T>(r.outputs[0], {2, 4}, {T(0), T(1), T(2), T(7), T(3), T(4), T(5), T(8)});
  };
  check_gather(int8_t{});
  check_gather(uint16_t{});
  check_gather(int32_t{});
  check_gather(double{});
  check_gather(uint64_t{});

  // Half round-trips as bits through Pad edge mode.
  Tensor h = Tensor::from<Half>({2}, {Half{f32_to_f16(1.5f)}, Half{f32_to_f16(-2.0f)}});
  auto r = run_op("Pad", {Attribute::make_string("mode", "edge")}, {in(h), cst(i64v({1, 2}))});
  REQUIRE(r.ok());
  REQUIRE(r.outputs[0].numel() == 5);  // np.pad([1.5, -2], (1, 2), mode='edge')
  const Half* hp = r.outputs[0].data<Half>();
  CHECK(f16_to_f32(hp[0].bits) == 1.5f);
  CHECK(f16_to_f32(hp[1].bits) == 1.5f);
  CHECK(f16_to_f32(hp[4].bits) == -2.0f);

  auto st = Tensor::empty(DType::kString, {3});
  REQUIRE(st.ok());
  st->mut_data<std::string>()[0] = "alpha";
  st->mut_data<std::string>()[1] = "beta";
  st->mut_data<std::string>()[2] = "gamma";
  r = run_op("Gather", {}, {in(*st), in(i64v({-1, 0}))});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].data<std::string>()[0] == "gamma");
  CHECK(r.outputs[0].data<std::string>()[1] == "alpha");
  r = run_op("Slice", {}, {in(*st), cst(i64v({-1})), cst(i64v({-100})), cst(i64v({0})), cst(i64v({-2}))});
  REQUIRE(r.ok());
  REQUIRE(r.outputs[0].numel() == 2);  // ["alpha","beta","gamma"][::-2]
  CHECK(r.outputs[0].data<std::string>()[0] == "gamma");
  CHECK(r.outputs[0].data<std::string>()[1] == "alpha");
}

TEST_CASE("Large copies split across threads match the definition") {
  // Expand [1, 300] -> [257, 300] and Concat along axis 1 with a multi-threaded session.
  auto model = std::make_shared<ir::Model>();
  model->graphs.emplace_back();
  ir::Graph& g = model->graphs[0];
  const int32_t x = add(g, "x", DType::kF32, true, {1, 300});
  const int32_t shape = add(g, "shape", DType::kI64, true, {2}, i64v({257, 300}));
  const int32_t e = add(g, "e");
  const int32_t c = add(g, "c");
  g.inputs = {x};
  g.outputs = {c};
  g.nodes.push_back(node("Expand", {x, shape}, {e}));
  g.nodes.push_back(node("Concat", {e, e}, {c}, {Attribute::make_int("axis", 1)}));
  REQUIRE(passes::infer_types(*model).ok());
  CHECK(g.tensors[static_cast<size_t>(c)].shape == Shape{257, 600});
  SessionOptions opt;
  opt.num_threads = 4;
  auto s = Session::create(model, opt);
  REQUIRE(s.ok());
  auto out = (*s)->run({f32({1, 300})});
  REQUIRE(out.ok());
  const float* p = (*out)[0].data<float>();
  int bad = 0;
  for (int64_t i = 0; i < 257; ++i)
    for (int64_t j = 0; j < 600; ++j) bad += p[i * 600 + j] != static_cast<float>(j % 300);
  CHECK(bad == 0);
}
