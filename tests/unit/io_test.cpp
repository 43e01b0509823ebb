// .tsr save/load: exact round trips, zero-copy 64-byte-aligned constants, every attribute kind.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/io/tsr_io.h"
#include "schema/tessera_generated.h"
#include "tests/malformed/corpus.h"

using namespace tsr;

namespace {

using corpus::info;
using corpus::node;

Tensor strings(const Shape& shape, const std::vector<std::string>& v) {
  Tensor t = Tensor::empty(DType::kString, shape).value();
  for (size_t i = 0; i < v.size(); ++i) t.mut_data<std::string>()[i] = v[i];
  return t;
}

Tensor f16(const Shape& shape, const std::vector<float>& v) {
  std::vector<Half> h;
  for (float f : v) h.push_back(Half{f32_to_f16(f)});
  return Tensor::from<Half>(shape, h);
}

// Every constant feeds an Identity, whose output is a graph output.
void add_constant(ir::Graph& g, const std::string& name, Tensor value) {
  ir::TensorInfo t = info(name, value.dtype(), value.shape());
  t.constant = value;
  const int32_t c = g.add_tensor(std::move(t));
  const int32_t o = g.add_tensor(info(name + "_out", value.dtype(), value.shape()));
  g.nodes.push_back(node("Identity", "id_" + name, {c}, {o}));
  g.outputs.push_back(o);
}

ir::Graph branch(const std::string& name) {
  ir::Graph g;
  g.name = name;
  const int32_t a = g.add_tensor(info("a", DType::kF32, {-1, 4}));
  const int32_t b = g.add_tensor(info("b", DType::kF32, {-1, 4}));
  g.nodes.push_back(node("Identity", name + "_pass", {a}, {b}));
  g.inputs = {a};
  g.outputs = {b};
  return g;
}

// Main graph: x (f32[batch, 4]) -> If(c; x) with two subgraph branches, x -> SequenceConstruct (a
// sequence value), plus constants of several dtypes, each passed through Identity; a variable
// bound and updated by the "step" signature.
ir::Model rich_model() {
  ir::Model m;
  m.producer = "io_test";
  ir::Graph g;
  g.name = "main";
  ir::TensorInfo x = info("x", DType::kF32, {-1, 4});
  x.dim_names = {"batch", ""};
  const int32_t xi = g.add_tensor(std::move(x));
  const int32_t ci = g.add_tensor(info("c", DType::kBool, {}));
  const int32_t ri = g.add_tensor(info("r", DType::kF32, {-1, 4}));
  ir::Node n = node("If", "choose", {ci, xi}, {ri});
  n.attributes.push_back(ir::Attribute::make_graph("then_branch", 1));
  n.attributes.push_back(ir::Attribute::make_graph("else_branch", 2));
  g.nodes.push_back(std::move(n));
  // A sequence value (kind kSequence): SequenceConstruct(x).
  ir::TensorInfo seq = info("seq", DType::kF32, {-1, 4});
  seq.kind = ValueKind::kSequence;
  const int32_t si = g.add_tensor(std::move(seq));
  g.nodes.push_back(node("SequenceConstruct", "pack", {xi}, {si}));
  g.inputs = {xi, ci};
  g.outputs = {ri, si};
  add_constant(g, "w_f32", Tensor::from<float>({2, 3}, {1.5f, -2, 3, 4, 5, 6.25f}));
  add_constant(g, "w_f16", f16({3}, {1, -0.5f, 65504}));
  add_constant(g, "w_i8", Tensor::from<int8_t>({4}, {-128, -1, 0, 127}));
  add_constant(g, "w_u8", Tensor::from<uint8_t>({2, 2}, {0, 1, 254, 255}));
  add_constant(g, "w_i32", Tensor::from<int32_t>({1}, {-123456789}));
  add_constant(g, "w_i64", Tensor::from<int64_t>({2}, {INT64_MIN, INT64_MAX}));
  add_constant(g, "w_bool", Tensor::from<bool>({3}, {true, false, true}));
  add_constant(g, "w_str", strings({3}, {"", "hello", "wörld"}));
  add_constant(g, "w_scalar", Tensor::scalar<float>(7));
  add_constant(g, "w_empty", Tensor::from<float>({0, 3}, {}));
  m.graphs.push_back(std::move(g));
  m.graphs.push_back(branch("then"));
  m.graphs.push_back(branch("else"));
  // "step" runs the then branch with its input bound to a variable and its output updating it.
  m.signatures = {{"infer", 0}, {"then_only", 1}, {"step", 1, {"state"}, {"state"}}};
  m.variables = {{"state", Tensor::from<float>({2, 4}, {1, 2, 3, 4, -1, -2, -3, -4})}};
  m.metadata = {{"author", "tessera"}, {"license", "MIT"}, {"empty", ""}};
  return m;
}

// An aligned copy of `bytes` whose lifetime the model's constants extend.
std::shared_ptr<uint8_t> aligned(const std::vector<uint8_t>& bytes) {
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64));
  std::memcpy(p, bytes.data(), bytes.size());
  return std::shared_ptr<uint8_t>(p, [](uint8_t* q) { std::free(q); });
}

void check_same_tensor(const Tensor& a, const Tensor& b) {
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.shape() == b.shape());
  if (a.dtype() == DType::kString) {
    for (int64_t i = 0; i < a.numel(); ++i) CHECK(a.data<std::string>()[i] == b.data<std::string>()[i]);
  } else if (a.nbytes()) {
    CHECK(std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
  }
}

// CHECKs x.*m == y.*m for each member m.
template <typename T, typename... M>
void check_members(const T& x, const T& y, M T::*... members) {
  auto same = [&](auto m) { CHECK(x.*m == y.*m); };
  (same(members), ...);
}

void check_same_attribute(const ir::Attribute& x, const ir::Attribute& y) {
  using A = ir::Attribute;
  INFO("attribute " << x.name);
  check_members(x, y, &A::name, &A::kind, &A::i, &A::f, &A::s, &A::ints, &A::floats, &A::strings);
  REQUIRE(x.t.defined() == y.t.defined());
  if (x.t.defined()) check_same_tensor(x.t, y.t);
}

void check_same_tensor_info(const ir::TensorInfo& x, const ir::TensorInfo& y) {
  using T = ir::TensorInfo;
  INFO("tensor " << x.name);
  check_members(x, y, &T::name, &T::kind, &T::dtype, &T::has_shape, &T::shape, &T::dim_names);
  REQUIRE(x.constant.defined() == y.constant.defined());
  if (x.constant.defined()) check_same_tensor(x.constant, y.constant);
}

void check_same_node(const ir::Node& x, const ir::Node& y) {
  using N = ir::Node;
  INFO("node " << x.name);
  check_members(x, y, &N::op, &N::name, &N::version, &N::inputs, &N::outputs);
  REQUIRE(x.attributes.size() == y.attributes.size());
  for (size_t k = 0; k < x.attributes.size(); ++k) check_same_attribute(x.attributes[k], y.attributes[k]);
}

// Every field of ir::Model (core/ir/graph.h), recursively.
void check_same_model(const ir::Model& a, const ir::Model& b) {
  check_members(a, b, &ir::Model::version, &ir::Model::producer, &ir::Model::metadata);
  REQUIRE(a.signatures.size() == b.signatures.size());
  for (size_t s = 0; s < a.signatures.size(); ++s) {
    using S = ir::Signature;
    INFO("signature " << a.signatures[s].name);
    check_members(a.signatures[s], b.signatures[s], &S::name, &S::graph, &S::bound_inputs, &S::updates);
  }
  REQUIRE(a.variables.size() == b.variables.size());
  for (size_t v = 0; v < a.variables.size(); ++v) {
    INFO("variable " << a.variables[v].name);
    CHECK(a.variables[v].name == b.variables[v].name);
    check_same_tensor(a.variables[v].value, b.variables[v].value);
  }
  REQUIRE(a.graphs.size() == b.graphs.size());
  for (size_t g = 0; g < a.graphs.size(); ++g) {
    const auto& ga = a.graphs[g];
    const auto& gb = b.graphs[g];
    INFO("graph " << ga.name);
    check_members(ga, gb, &ir::Graph::name, &ir::Graph::inputs, &ir::Graph::outputs);
    REQUIRE(ga.tensors.size() == gb.tensors.size());
    for (size_t t = 0; t < ga.tensors.size(); ++t) check_same_tensor_info(ga.tensors[t], gb.tensors[t]);
    REQUIRE(ga.nodes.size() == gb.nodes.size());
    for (size_t n = 0; n < ga.nodes.size(); ++n) check_same_node(ga.nodes[n], gb.nodes[n]);
  }
}

struct Saved {
  std::vector<uint8_t> bytes;
  std::shared_ptr<uint8_t> mem;  // an aligned copy of bytes
};

// Saves `m`, reads it back with `read` (io::load_model_buffer or io::decode_model_buffer): every
// field must match, and saving what was read must give the same bytes.
Saved check_round_trip(const ir::Model& m,
                       Expected<ir::Model> (*read)(const uint8_t*, size_t, std::shared_ptr<const void>)) {
  auto bytes = io::serialize_model(m);
  REQUIRE(bytes.ok());
  Saved saved{*bytes, aligned(*bytes)};
  auto back = read(saved.mem.get(), saved.bytes.size(), saved.mem);
  INFO(back.status().to_string());
  REQUIRE(back.ok());
  check_same_model(m, *back);
  auto again = io::serialize_model(*back);
  REQUIRE(again.ok());
  CHECK(*again == saved.bytes);
  return saved;
}

std::string temp_path(const char* stem) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + stem + "_" + std::to_string(reinterpret_cast<uintptr_t>(&temp_path)) + ".tsr";
}

}  // namespace

TEST_CASE("tsr io: save -> load -> save is byte-identical and keeps every field", "[io]") {
  check_round_trip(rich_model(), io::load_model_buffer);
}

TEST_CASE("tsr io: file layout: identifier, aligned segment, each buffer 64-byte aligned", "[io]") {
  auto bytes = io::serialize_model(rich_model());
  REQUIRE(bytes.ok());
  REQUIRE(bytes->size() > 8);
  CHECK(std::string(reinterpret_cast<const char*>(bytes->data()) + 4, 4) == "TSR1");
  const fb::Model* root = fb::GetModel(bytes->data());
  CHECK(root->version() == ir::Model::kFormatVersion);
  CHECK(root->segment_offset() % 64 == 0);
  CHECK(root->segment_offset() + root->segment_size() == bytes->size());
  REQUIRE(root->buffers() != nullptr);
  CHECK(root->buffers()->size() == 11);  // one per constant, then the variable's
  for (const fb::Buffer* b : *root->buffers()) CHECK(b->offset() % 64 == 0);
  // The string constant {"", "hello", "wörld"}: 3 little-endian u64 lengths then the bytes.
  const fb::Buffer* sb = root->buffers()->Get(7);
  const uint8_t* p = bytes->data() + root->segment_offset() + sb->offset();
  CHECK(sb->size() == 3 * 8 + 0 + 5 + 6);
  CHECK(p[0] == 0);
  CHECK(p[8] == 5);
  CHECK(p[16] == 6);  // "wörld" is 6 bytes of UTF-8
  CHECK(std::string(reinterpret_cast<const char*>(p + 24), 11) == "hellow\xc3\xb6rld");
}

TEST_CASE("tsr io: constants are used in place, zero-copy and 64-byte aligned", "[io]") {
  auto bytes = io::serialize_model(rich_model());
  REQUIRE(bytes.ok());
  const fb::Model* root = fb::GetModel(bytes->data());
  auto mem = aligned(*bytes);
  auto loaded = io::load_model_buffer(mem.get(), bytes->size(), mem);
  REQUIRE(loaded.ok());
  const ir::Graph& g = loaded->main();
  const int32_t w = g.find_tensor("w_f32");
  REQUIRE(w >= 0);
  const Tensor& c = g.tensors[static_cast<size_t>(w)].constant;
  CHECK(c.read_only());
  CHECK(c.raw() == mem.get() + root->segment_offset() + root->buffers()->Get(0)->offset());
  CHECK(c.data<float>()[5] == 6.25f);
  // The memory stays alive through the tensors alone.
  const uint8_t* base = mem.get();
  mem.reset();
  ir::Model moved = std::move(loaded).value();
  const Tensor& c2 = moved.main().tensors[static_cast<size_t>(w)].constant;
  CHECK(static_cast<const uint8_t*>(c2.raw()) >= base);
  CHECK(c2.data<float>()[0] == 1.5f);

  SECTION("from a mapped file") {
    const std::string path = temp_path("io_test_zero_copy");
    REQUIRE(io::save_model_file(rich_model(), path).ok());
    auto f = io::load_model_file(path);
    std::remove(path.c_str());  // the mapping outlives the name
    INFO(f.status().to_string());
    REQUIRE(f.ok());
    const ir::Graph& fg = f->main();
    const Tensor& a = fg.tensors[static_cast<size_t>(fg.find_tensor("w_f32"))].constant;
    const Tensor& b = fg.tensors[static_cast<size_t>(fg.find_tensor("w_i64"))].constant;
    CHECK(reinterpret_cast<uintptr_t>(a.raw()) % 64 == 0);
    CHECK(reinterpret_cast<uintptr_t>(b.raw()) % 64 == 0);
    // Both point into one mapping, at their buffers' distance apart.
    CHECK(static_cast<const uint8_t*>(b.raw()) - static_cast<const uint8_t*>(a.raw()) ==
          static_cast<ptrdiff_t>(root->buffers()->Get(5)->offset() - root->buffers()->Get(0)->offset()));
    CHECK(b.data<int64_t>()[0] == INT64_MIN);
    CHECK(b.data<int64_t>()[1] == INT64_MAX);
    const Tensor& h = fg.tensors[static_cast<size_t>(fg.find_tensor("w_f16"))].constant;
    CHECK(f16_to_f32(h.data<Half>()[2].bits) == 65504.0f);
  }
}

TEST_CASE("tsr io: an unaligned buffer is copied once, then loads", "[io]") {
  auto bytes = io::serialize_model(rich_model());
  REQUIRE(bytes.ok());
  std::vector<uint8_t> shifted(bytes->size() + 1);
  std::memcpy(shifted.data() + 1, bytes->data(), bytes->size());
  const uint8_t* p = shifted.data() + 1;
  REQUIRE(reinterpret_cast<uintptr_t>(p) % 64 != 0);
  auto loaded = io::load_model_buffer(p, bytes->size(), nullptr);
  REQUIRE(loaded.ok());
  const Tensor& c = loaded->main().tensors[static_cast<size_t>(loaded->main().find_tensor("w_u8"))].constant;
  CHECK(reinterpret_cast<uintptr_t>(c.raw()) % 64 == 0);
  CHECK(c.data<uint8_t>()[3] == 255);
}

TEST_CASE("tsr io: attributes of every kind round-trip (decode without op checks)", "[io]") {
  ir::Model m;
  ir::Graph g;
  const int32_t a = g.add_tensor(info("a", DType::kF32, {1}));
  const int32_t b = g.add_tensor(info("b", DType::kUndefined, {}));
  g.tensors[1].has_shape = false;
  ir::Node n = node("AttrCarrier", "carrier", {a, -1}, {b});
  n.version = 13;
  n.attributes.push_back(ir::Attribute::make_int("i", -9000000000ll));
  n.attributes.push_back(ir::Attribute::make_float("f", 0.1));
  n.attributes.push_back(ir::Attribute::make_string("s", std::string("nul\0inside", 10)));
  n.attributes.push_back(ir::Attribute::make_ints("is", {1, -2, INT64_MAX}));
  n.attributes.push_back(ir::Attribute::make_floats("fs", {-0.0, 1e300, 2.5}));
  n.attributes.push_back(ir::Attribute::make_strings("ss", {"x", "", "zz"}));
  n.attributes.push_back(ir::Attribute::make_tensor("t", Tensor::from<int32_t>({2, 2}, {1, 2, 3, 4})));
  n.attributes.push_back(ir::Attribute::make_tensor("ts", strings({2}, {"ab", "c"})));
  n.attributes.push_back(ir::Attribute::make_graph("g", 1));
  ir::Attribute gs;
  gs.name = "gs";
  gs.kind = ir::AttrKind::kGraphs;
  gs.ints = {1, 2};
  n.attributes.push_back(gs);
  g.nodes.push_back(std::move(n));
  g.inputs = {a};
  g.outputs = {b};
  m.graphs.push_back(std::move(g));
  m.graphs.push_back(branch("one"));
  m.graphs.push_back(branch("two"));

  const Saved saved = check_round_trip(m, io::decode_model_buffer);
  // The full load refuses the unknown op, naming it.
  auto loaded = io::load_model_buffer(saved.mem.get(), saved.bytes.size(), saved.mem);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().code() == StatusCode::kUnsupported);
  CHECK(loaded.status().message().find("AttrCarrier (1x, first at graph[0].node[0] (AttrCarrier \"carrier\"))") != std::string::npos);
}

TEST_CASE("tsr io: a missing file is kNotFound, an unwritable path fails cleanly", "[io]") {
  auto r = io::load_model_file("/nonexistent/dir/model.tsr");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotFound);
  CHECK(r.status().message().find("/nonexistent/dir/model.tsr") != std::string::npos);
  CHECK_FALSE(io::save_model_file(rich_model(), "/nonexistent/dir/model.tsr").ok());
}

TEST_CASE("tsr io: a model with no constants has an empty segment", "[io]") {
  ir::Model m;
  m.graphs.push_back(branch("only"));
  const Saved saved = check_round_trip(m, io::load_model_buffer);
  const fb::Model* root = fb::GetModel(saved.bytes.data());
  CHECK(root->segment_size() == 0);
  CHECK(saved.bytes.size() == root->segment_offset());
}
