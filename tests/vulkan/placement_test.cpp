// Placement (core/passes/placement) and the Plan's device path on the null device: which node
// goes where, the copy steps at device boundaries, the cost rule, control flow bodies placed
// recursively, device memory released after a run, and results equal to the CPU's.
#include <catch2/catch.hpp>

#include "backends/null/null_device.h"
#include "core/exec/plan.h"
#include "tessera/session.h"
#include "core/ir/topo.h"
#include "core/passes/infer_types.h"
#include "core/passes/placement.h"
#include "tests/unit/graph_test_util.h"

using namespace tsr;

namespace {

// Inputs pass their shape (f32 unless `dt` says otherwise); node outputs are left to inference.
int32_t add(ir::Graph& g, const std::string& name, Shape shape = {}, DType dt = DType::kUndefined) {
  if (!shape.empty() && dt == DType::kUndefined) dt = DType::kF32;
  ir::TensorInfo t;
  t.name = name;
  t.dtype = dt;
  t.has_shape = !shape.empty();
  t.shape = std::move(shape);
  return g.add_tensor(t);
}
using test::append_node;

// x[1,4,8,8] -> Relu (device) -> Shape (host: not a device op) -> Reshape(x', shape) (device,
// shape read on the host) -> Sigmoid (device) -> y; plus a tiny Add of two [2] inputs (host by
// the cost rule).
ir::Model chain_model() {
  ir::Model m;
  m.graphs.emplace_back();
  ir::Graph& g = m.main();
  g.name = "chain";
  const int32_t x = add(g, "x", {1, 4, 8, 8}), a = add(g, "a", {2}), b = add(g, "b", {2});
  g.inputs = {x, a, b};
  const int32_t r = add(g, "r"), s = add(g, "s"), rs = add(g, "rs"), y = add(g, "y"), ab = add(g, "ab");
  append_node(g, "Relu", {x}, {r});
  append_node(g, "Shape", {r}, {s});
  append_node(g, "Reshape", {r, s}, {rs});
  append_node(g, "Sigmoid", {rs}, {y});
  append_node(g, "Add", {a, b}, {ab});
  g.outputs = {y, ab};
  const Status st = passes::infer_types(m);
  INFO(st.to_string());
  REQUIRE(st.ok());
  return m;
}

passes::NodeSupport null_support(const exec::DeviceBackend& dev, const ir::Node& n, const std::vector<ops::ValueType>& t) {
  const exec::DeviceSupport s = dev.device_support(n, t);
  return {s.supported, s.host_inputs};
}

}  // namespace

TEST_CASE("placement puts supported nodes on the device and copies at the boundaries", "[null]") {
  ir::Model m = chain_model();
  null_device::NullDevice dev(nullptr, {"Relu", "Reshape", "Sigmoid", "Add"});
  auto order = ir::topological_order(m.main(), 0);
  REQUIRE(order.ok());
  const passes::Placement p = passes::place_graph(
      m, 0, *order, [&](const ir::Node& n, const std::vector<ops::ValueType>& t) { return null_support(dev, n, t); });
  using passes::Device;
  CHECK(p.node_device[0] == Device::kDevice);  // Relu
  CHECK(p.node_device[1] == Device::kHost);    // Shape: no device kernel
  CHECK(p.node_device[2] == Device::kDevice);  // Reshape: its shape input read on the host
  CHECK(p.host_inputs[2] == 0b10);
  CHECK(p.node_device[3] == Device::kDevice);  // Sigmoid
  CHECK(p.node_device[4] == Device::kHost);    // Add of 2 elements from host data: cost rule
  CHECK(p.device_nodes == 3);
  // upload x, download r (Shape reads it on the host), download y.
  CHECK(p.copies == 3);
  int uploads = 0, downloads = 0;
  for (const auto& st : p.steps) {
    uploads += st.kind == passes::PlacedStep::Kind::kUpload;
    downloads += st.kind == passes::PlacedStep::Kind::kDownload;
  }
  CHECK(uploads == 1);
  CHECK(downloads == 2);
}

TEST_CASE("a plan with device steps matches the CPU and frees device memory after the run", "[null]") {
  auto model = std::make_shared<const ir::Model>(chain_model());
  setenv("TSR_NULL_DEVICE_OPS", "Relu,Reshape,Sigmoid,Add", 1);
  SessionOptions so;
  so.device = "null";
  auto dev = Session::create(model, so);
  unsetenv("TSR_NULL_DEVICE_OPS");
  REQUIRE(dev.ok());
  so.device = "cpu";
  auto cpu = Session::create(model, so);
  REQUIRE(cpu.ok());
  CHECK((*dev)->main_plan().device_nodes() == 3);
  CHECK((*dev)->main_plan().copies() == 3);
  Tensor x = Tensor::empty(DType::kF32, {1, 4, 8, 8}).value();
  for (int64_t i = 0; i < x.numel(); ++i) x.mut_data<float>()[i] = static_cast<float>(i % 17) - 8.0f;
  const std::vector<Tensor> in = {x, Tensor::from<float>({2}, {1, 2}), Tensor::from<float>({2}, {3, 4})};
  auto a = (*dev)->run(in);
  REQUIRE(a.ok());
  auto b = (*cpu)->run(in);
  REQUIRE(b.ok());
  REQUIRE(a->size() == 2);
  REQUIRE((*a)[0].shape() == (*b)[0].shape());
  for (int64_t i = 0; i < (*a)[0].numel(); ++i) CHECK((*a)[0].data<float>()[i] == (*b)[0].data<float>()[i]);
  CHECK((*a)[1].data<float>()[1] == 6.0f);
  auto* nd = static_cast<null_device::NullDevice*>((*dev)->device());
  CHECK(nd->live_bytes() == 0);  // no constants here: every device buffer was released
}

TEST_CASE("If bodies are placed recursively; the condition is read on the host", "[null]") {
  // main: c (bool input), x[4,8] -> If(c) { then: Relu(x) ; else: Sigmoid(x) } -> y
  ir::Model m;
  m.graphs.resize(3);
  ir::Graph& g = m.graphs[0];
  g.name = "main";
  const int32_t c = add(g, "c", {}, DType::kBool), x = add(g, "x", {4, 8}), y = add(g, "y");
  g.tensors[static_cast<size_t>(c)].has_shape = true;
  g.inputs = {c, x};
  for (int k = 1; k <= 2; ++k) {
    ir::Graph& b = m.graphs[static_cast<size_t>(k)];
    b.name = k == 1 ? "then" : "else";
    const int32_t bx = add(b, "bx", {4, 8}), by = add(b, "by");
    b.inputs = {bx};
    append_node(b, k == 1 ? "Relu" : "Sigmoid", {bx}, {by});
    b.outputs = {by};
  }
  append_node(g, "If", {c, x}, {y},
       {ir::Attribute::make_graph("then_branch", 1), ir::Attribute::make_graph("else_branch", 2)});
  g.outputs = {y};
  auto st = passes::infer_types(m);
  if (!st.ok()) FAIL(st.to_string());
  auto model = std::make_shared<const ir::Model>(std::move(m));
  SessionOptions so;
  so.device = "null";
  auto dev = Session::create(model, so);
  if (!dev.ok()) FAIL(dev.status().to_string());
  CHECK((*dev)->main_plan().device_nodes() == 0);  // the If itself runs on the host
  Tensor xv = Tensor::empty(DType::kF32, {4, 8}).value();
  for (int64_t i = 0; i < xv.numel(); ++i) xv.mut_data<float>()[i] = static_cast<float>(i) - 16.0f;
  for (bool cond : {true, false}) {
    auto out = (*dev)->run({Tensor::scalar<bool>(cond), xv});
    if (!out.ok()) FAIL(out.status().to_string());
    const float v = (*out)[0].data<float>()[15];  // x[15] = -1
    CHECK(v == Approx(cond ? 0.0 : 1.0 / (1.0 + std::exp(1.0))).margin(1e-6));
  }
}

TEST_CASE("a device that does not exist is a backend error; auto falls back to the CPU", "[null]") {
  auto model = std::make_shared<const ir::Model>(chain_model());
  SessionOptions so;
  so.device = "no-such-device";
  auto s = Session::create(model, so);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kNotFound);
  so.device = "cpu";
  auto c = Session::create(model, so);
  REQUIRE(c.ok());
  CHECK((*c)->device() == nullptr);
}
