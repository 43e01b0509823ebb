// The malformed-model corpus: each case is a .tsr byte string that must fail to load with a given
// StatusCode and message (or, for random bit flips, load or fail cleanly without crashing).
// tests/malformed/make_corpus.cpp writes them to tests/malformed/<name>.tsr plus expected.txt;
// tests/unit/malformed_test.cpp loads the committed files and checks they match this source.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/io/tsr_io.h"
#include "schema/tessera_generated.h"

namespace tsr::corpus {

struct Case {
  std::string name;                   // file stem
  std::vector<uint8_t> bytes;
  std::string code;                   // StatusCode enumerator name ("kInvalidModel"); "kOk" = loads and verifies
  std::vector<std::string> substrings;  // all must occur in the message
};

inline ir::TensorInfo info(std::string name, DType dt, Shape shape) {
  ir::TensorInfo t;
  t.name = std::move(name);
  t.dtype = dt;
  t.has_shape = true;
  t.shape = std::move(shape);
  return t;
}

inline ir::Node node(std::string op, std::string name, std::vector<int32_t> in, std::vector<int32_t> out) {
  ir::Node n;
  n.op = std::move(op);
  n.name = std::move(name);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// A valid model: x (input), w (constant f32[2, 3]) -> Identity -> y, z.
inline ir::Model base_model() {
  ir::Model m;
  m.producer = "tessera malformed corpus";
  ir::Graph g;
  g.name = "main";
  const int32_t x = g.add_tensor(info("x", DType::kF32, {2, 3}));
  ir::TensorInfo w = info("w", DType::kF32, {2, 3});
  w.constant = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const int32_t wi = g.add_tensor(std::move(w));
  const int32_t y = g.add_tensor(info("y", DType::kF32, {2, 3}));
  const int32_t z = g.add_tensor(info("z", DType::kF32, {2, 3}));
  g.nodes.push_back(node("Identity", "id0", {x}, {y}));
  g.nodes.push_back(node("Identity", "id1", {wi}, {z}));
  g.inputs = {x};
  g.outputs = {y, z};
  m.graphs.push_back(std::move(g));
  m.signatures.push_back({"infer", 0, {}, {}});
  return m;
}

// A subgraph with one bool input passed through Identity (a valid If branch).
inline ir::Graph branch(std::string name) {
  ir::Graph g;
  g.name = std::move(name);
  const int32_t a = g.add_tensor(info("a", DType::kBool, {}));
  const int32_t b = g.add_tensor(info("b", DType::kBool, {}));
  g.nodes.push_back(node("Identity", "pass", {a}, {b}));
  g.inputs = {a};
  g.outputs = {b};
  return g;
}

// Model: main graph If(c; c) with then/else branches = graphs 1 and 2.
inline ir::Model if_model() {
  ir::Model m;
  ir::Graph g;
  g.name = "main";
  const int32_t c = g.add_tensor(info("c", DType::kBool, {}));
  const int32_t r = g.add_tensor(info("r", DType::kBool, {}));
  ir::Node n = node("If", "if0", {c, c}, {r});
  n.attributes.push_back(ir::Attribute::make_graph("then_branch", 1));
  n.attributes.push_back(ir::Attribute::make_graph("else_branch", 2));
  g.nodes.push_back(std::move(n));
  g.inputs = {c};
  g.outputs = {r};
  m.graphs.push_back(std::move(g));
  m.graphs.push_back(branch("then"));
  m.graphs.push_back(branch("else"));
  return m;
}

inline std::vector<uint8_t> ser(const ir::Model& m) {
  auto r = io::serialize_model(m);
  return r.ok() ? std::move(r).value() : std::vector<uint8_t>{};
}

// Hand-built FlatBuffers for what serialize_model cannot produce: a model with tensor "w" of
// `w_shape` whose buffer is `w_buffer`, the buffers given, and the knobs below.
struct Raw {
  std::vector<std::pair<uint64_t, uint64_t>> buffers = {{0, 24}};
  int32_t w_buffer = 0;
  std::vector<int64_t> w_shape = {2, 3};
  int attr_kind = -1;  // >= 0: add an attribute of this raw kind to the node
  std::vector<std::pair<std::string, std::string>> metadata;
  int64_t segment_offset = -1;  // -1: aligned end of the FlatBuffer
  uint64_t segment_bytes = 64;
  uint64_t segment_size = 64;
};

inline std::vector<uint8_t> raw(const Raw& r) {
  namespace fb = tsr::fb;
  uint64_t seg = 64;
  for (int pass = 0; pass < 2; ++pass) {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<fb::TensorInfo>> tensors;
    const std::vector<int64_t> s23 = {2, 3};
    tensors.push_back(fb::CreateTensorInfoDirect(b, "w", fb::DType::F32, true, &r.w_shape, nullptr, r.w_buffer));
    tensors.push_back(fb::CreateTensorInfoDirect(b, "z", fb::DType::F32, true, &s23));
    std::vector<flatbuffers::Offset<fb::Attribute>> attrs;
    if (r.attr_kind >= 0) attrs.push_back(fb::CreateAttributeDirect(b, "alpha", static_cast<fb::AttrKind>(r.attr_kind), 1));
    const std::vector<int32_t> in = {0}, out = {1};
    std::vector<flatbuffers::Offset<fb::Node>> nodes = {
        fb::CreateNodeDirect(b, "Identity", nullptr, 0, "id", &in, &out, &attrs)};
    auto graph = fb::CreateGraphDirect(b, "main", &tensors, &nodes, nullptr, &out);
    std::vector<flatbuffers::Offset<fb::Graph>> graphs = {graph};
    std::vector<flatbuffers::Offset<fb::Buffer>> bufs;
    for (auto [o, s] : r.buffers) bufs.push_back(fb::CreateBuffer(b, o, s));
    std::vector<flatbuffers::Offset<fb::KeyValue>> meta;
    for (const auto& [k, v] : r.metadata) meta.push_back(fb::CreateKeyValueDirect(b, k.c_str(), v.c_str()));
    const uint64_t so = r.segment_offset >= 0 ? static_cast<uint64_t>(r.segment_offset) : seg;
    b.Finish(fb::CreateModelDirect(b, ir::Model::kFormatVersion, "raw", &graphs, &bufs, nullptr, &meta, so,
                                   r.segment_size),
             fb::ModelIdentifier());
    if (pass == 0) {
      seg = (b.GetSize() + 63) / 64 * 64;
      continue;
    }
    std::vector<uint8_t> file(seg + r.segment_bytes, 0);
    std::memcpy(file.data(), b.GetBufferPointer(), b.GetSize());
    return file;
  }
  return {};
}

inline std::vector<uint8_t> bit_flips(std::vector<uint8_t> bytes, uint32_t seed, int flips) {
  std::mt19937 rng(seed);  // mt19937's output sequence is fixed by the standard
  for (int i = 0; i < flips && !bytes.empty(); ++i) {
    const uint32_t r = static_cast<uint32_t>(rng());
    bytes[r % bytes.size()] ^= static_cast<uint8_t>(1u << ((r >> 24) % 8));
  }
  return bytes;
}

// The file offset of the constant segment of a file written by serialize_model.
inline uint64_t segment_offset(const std::vector<uint8_t>& bytes) {
  return tsr::fb::GetModel(bytes.data())->segment_offset();
}

inline std::vector<Case> all_cases() {
  std::vector<Case> c;
  const std::vector<uint8_t> base = ser(base_model());
  auto cut = [&](size_t n) { return std::vector<uint8_t>(base.begin(), base.begin() + static_cast<long>(n)); };
  auto with = [&](auto edit) {
    ir::Model m = base_model();
    edit(m);
    return ser(m);
  };
  auto with_if = [&](auto edit) {
    ir::Model m = if_model();
    edit(m);
    return ser(m);
  };
  const char* kInvalid = "kInvalidModel";

  c.push_back({"empty", {}, kInvalid, {"empty file (0 bytes)"}});
  c.push_back({"truncated_4", cut(4), kInvalid, {"truncated file: 4 bytes"}});
  c.push_back({"truncated_32", cut(32), kInvalid, {"FlatBuffers verifier failed"}});
  c.push_back({"truncated_half", cut(segment_offset(base) / 2), kInvalid, {"FlatBuffers verifier failed"}});
  c.push_back({"truncated_segment", cut(segment_offset(base) + 8), kInvalid,
               {"graph[0].tensor[1] (\"w\"): buffer 0 [offset 0, size 24] extends past the end of the file"}});
  {
    auto b = base;
    std::memcpy(b.data() + 4, "ONNX", 4);
    c.push_back({"wrong_identifier", b, kInvalid, {"not a .tsr file: identifier 'ONNX'"}});
  }
  c.push_back({"version_newer", with([](ir::Model& m) { m.version = 2; }), "kUnsupported", {"format version 2 is newer"}});
  c.push_back({"version_zero", with([](ir::Model& m) { m.version = 0; }), kInvalid, {"invalid format version 0"}});
  c.push_back({"node_input_out_of_range", with([](ir::Model& m) { m.main().nodes[0].inputs[0] = 99; }), kInvalid,
               {"graph[0].node[0] (Identity \"id0\").input[0]: tensor id 99 out of range [0, 4)"}});
  c.push_back({"node_output_out_of_range", with([](ir::Model& m) { m.main().nodes[1].outputs[0] = -7; }), kInvalid,
               {"graph[0].node[1] (Identity \"id1\").output[0]: tensor id -7 out of range"}});
  c.push_back({"graph_input_out_of_range", with([](ir::Model& m) { m.main().inputs[0] = 4; }), kInvalid,
               {"graph[0].input[0]: tensor id 4 out of range [0, 4)"}});
  c.push_back({"graph_output_out_of_range", with([](ir::Model& m) { m.main().outputs[1] = 1000; }), kInvalid,
               {"graph[0].output[1]: tensor id 1000 out of range"}});
  {
    Raw r;
    r.w_buffer = 5;
    c.push_back({"buffer_index_out_of_range", raw(r), kInvalid, {"graph[0].tensor[0] (\"w\"): buffer index 5 out of range [0, 1)"}});
  }
  {
    Raw r;
    r.buffers = {{4096, 24}};
    r.segment_size = 8192;
    c.push_back({"buffer_past_end_of_file", raw(r), kInvalid, {"buffer 0 [offset 4096, size 24] extends past the end of the file"}});
  }
  {
    Raw r;
    r.buffers = {{0, 0xffffffffffffffc0ull}};
    c.push_back({"buffer_size_overflow", raw(r), kInvalid, {"extends past the end of the file"}});
  }
  {
    Raw r;
    r.segment_size = 16;
    c.push_back({"buffer_past_segment", raw(r), kInvalid, {"extends past the constant segment (16 bytes)"}});
  }
  {
    Raw r;
    r.buffers = {{0, 20}};
    c.push_back({"buffer_size_mismatch", raw(r), kInvalid, {"buffer 0 [offset 0, size 20] holds 20 bytes, the tensor needs 24"}});
  }
  {
    Raw r;
    r.buffers = {{8, 24}};
    c.push_back({"buffer_misaligned", raw(r), kInvalid, {"is not 64-byte aligned"}});
  }
  {
    Raw r;
    r.segment_offset = 100;
    c.push_back({"segment_offset_misaligned", raw(r), kInvalid, {"segment_offset 100 is not a multiple of 64"}});
  }
  {
    Raw r;
    r.segment_offset = 1 << 20;
    c.push_back({"segment_offset_past_end", raw(r), kInvalid, {"segment_offset 1048576 is past the end of the file"}});
  }
  {
    Raw r;
    r.w_shape = {2, -1};
    c.push_back({"constant_dynamic_dim", raw(r), kInvalid, {"dim 1 is dynamic (-1) in a constant"}});
  }
  {
    Raw r;
    r.w_shape = {1ll << 40, 1ll << 40};
    c.push_back({"constant_huge_dims", raw(r), "kResource", {"graph[0].tensor[0] (\"w\"): shape with dim 0 = 1099511627776", "tensor size limit"}});
  }
  {
    Raw r;
    r.attr_kind = 42;
    c.push_back({"attribute_kind_invalid", raw(r), kInvalid, {"graph[0].node[0] (Identity \"id\").attribute[0] ('alpha'): invalid attribute kind 42"}});
  }
  {
    Raw r;
    r.metadata = {{"k", "1"}, {"k", "2"}};
    c.push_back({"metadata_duplicate_key", raw(r), kInvalid, {"metadata[1]: duplicate key 'k'"}});
  }
  c.push_back({"graph_attr_out_of_range", with_if([](ir::Model& m) { m.main().nodes[0].attributes[1].i = 7; }), kInvalid,
               {"graph[0].node[0] (If \"if0\").attribute 'else_branch': graph index 7 out of range [0, 3)"}});
  c.push_back({"graph_self_reference", with_if([](ir::Model& m) {
                 ir::Graph& g = m.graphs[1];
                 const int32_t r = g.add_tensor(info("r", DType::kBool, {}));
                 ir::Node n = node("If", "inner", {0, 0}, {r});
                 n.attributes.push_back(ir::Attribute::make_graph("then_branch", 1));
                 n.attributes.push_back(ir::Attribute::make_graph("else_branch", 2));
                 g.nodes.push_back(std::move(n));
               }),
               kInvalid, {"graph[1].node[1] (If \"inner\").attribute 'then_branch': references its own graph[1]"}});
  c.push_back({"graph_recursion", with_if([](ir::Model& m) {
                 ir::Graph& g = m.graphs[2];
                 const int32_t r = g.add_tensor(info("r", DType::kBool, {}));
                 ir::Node n = node("If", "back", {0, 0}, {r});
                 n.attributes.push_back(ir::Attribute::make_graph("then_branch", 1));
                 n.attributes.push_back(ir::Attribute::make_graph("else_branch", 0));
                 g.nodes.push_back(std::move(n));
               }),
               kInvalid, {"recursive subgraph reference (graph[0] -> graph[2] -> graph[0])"}});
  c.push_back({"cycle", with([](ir::Model& m) {
                 ir::Graph& g = m.main();
                 const int32_t a = g.add_tensor(info("a", DType::kF32, {2, 3}));
                 const int32_t b = g.add_tensor(info("b", DType::kF32, {2, 3}));
                 g.nodes.push_back(node("Identity", "ping", {b}, {a}));
                 g.nodes.push_back(node("Identity", "pong", {a}, {b}));
               }),
               kInvalid, {"graph[0].node[2] (Identity \"ping\"): the graph has a cycle through this node"}});
  c.push_back({"tensor_produced_twice", with([](ir::Model& m) { m.main().nodes[1].outputs[0] = 2; }), kInvalid,
               {"graph[0].node[1] (Identity \"id1\").output[0]: tensor \"y\" is already produced by graph[0].node[0]"}});
  c.push_back({"output_is_constant", with([](ir::Model& m) { m.main().nodes[1].outputs[0] = 1; }), kInvalid,
               {"tensor \"w\" is already produced by a graph input or constant"}});
  c.push_back({"input_never_produced", with([](ir::Model& m) {
                 ir::Graph& g = m.main();
                 g.inputs.clear();
               }),
               kInvalid, {"graph[0].node[0] (Identity \"id0\").input[0]: tensor \"x\" is not produced by any node"}});
  c.push_back({"dtype_mismatch", with([](ir::Model& m) { m.main().tensors[2].dtype = DType::kI64; }), kInvalid,
               {"graph[0].node[0] (Identity \"id0\").output[0]: declared dtype i64, inferred f32"}});
  c.push_back({"rank_mismatch", with([](ir::Model& m) { m.main().tensors[3].shape = {6}; }), kInvalid,
               {"graph[0].node[1] (Identity \"id1\").output[0]: declared f32[6], inferred f32[2, 3] (rank mismatch)"}});
  c.push_back({"dim_mismatch", with([](ir::Model& m) { m.main().tensors[3].shape = {2, 4}; }), kInvalid,
               {"declared f32[2, 4], inferred f32[2, 3]"}});
  c.push_back({"negative_dim", with([](ir::Model& m) { m.main().tensors[0].shape = {2, -5}; }), kInvalid,
               {"graph[0].tensor[0] (\"x\"): dim 1 is -5"}});
  c.push_back({"huge_dims", with([](ir::Model& m) { m.main().tensors[0].shape = {1ll << 40, 1ll << 40, 8}; }), "kResource",
               {"graph[0].tensor[0] (\"x\"): shape with dim 0 = 1099511627776 exceeds the"}});
  c.push_back({"shape_without_rank", with([](ir::Model& m) {
                 m.main().tensors[0].has_shape = false;
               }),
               kInvalid, {"graph[0].tensor[0] (\"x\"): has_shape is false but 2 dims are given"}});
  c.push_back({"dim_names_count", with([](ir::Model& m) { m.main().tensors[0].dim_names = {"batch"}; }), kInvalid,
               {"graph[0].tensor[0] (\"x\"): 1 dim names for 2 dims"}});
  c.push_back({"invalid_dtype", with([](ir::Model& m) { m.main().tensors[2].dtype = static_cast<DType>(99); }), kInvalid,
               {"graph[0].tensor[2] (\"y\"): invalid dtype value 99"}});
  c.push_back({"attribute_wrong_type", with_if([](ir::Model& m) { m.main().nodes[0].attributes[0] = ir::Attribute::make_int("then_branch", 1); }),
               kInvalid, {"graph[0].node[0] (If \"if0\"): attribute 'then_branch' has type int, expected graph"}});
  c.push_back({"attribute_missing_required", with_if([](ir::Model& m) { m.main().nodes[0].attributes.pop_back(); }),
               kInvalid, {"graph[0].node[0] (If \"if0\"): missing required attribute 'else_branch'"}});
  c.push_back({"attribute_unknown", with([](ir::Model& m) { m.main().nodes[0].attributes.push_back(ir::Attribute::make_float("alpha", 0.5)); }),
               kInvalid, {"graph[0].node[0] (Identity \"id0\"): unknown attribute 'alpha'"}});
  c.push_back({"unknown_ops", with([](ir::Model& m) {
                 ir::Graph& g = m.main();
                 g.nodes[0].op = "FooOp";
                 g.nodes[1].op = "BarOp";
                 const int32_t q = g.add_tensor(info("q", DType::kF32, {2, 3}));
                 g.nodes.push_back(node("FooOp", "again", {3}, {q}));
               }),
               "kUnsupported", {"2 unsupported ops:", "BarOp (1x, first at graph[0].node[1] (BarOp \"id1\"))",
                               "FooOp (2x, first at graph[0].node[0] (FooOp \"id0\"))"}});
  c.push_back({"no_graphs", with([](ir::Model& m) { m.graphs.clear(); m.signatures.clear(); }), kInvalid, {"the model has no graphs"}});
  c.push_back({"signature_missing_graph", with([](ir::Model& m) { m.signatures.push_back({"train_step", 3, {}, {}}); }), kInvalid,
               {"signature[1] (\"train_step\"): graph index 3 out of range [0, 1)"}});
  // Variables and signatures that bind them (training checkpoints).
  c.push_back({"variable_duplicate_name", with([](ir::Model& m) {
                 m.variables = {{"v", Tensor::scalar(1.0f)}, {"v", Tensor::scalar(2.0f)}};
               }),
               kInvalid, {"variable[1]: duplicate name \"v\""}});
  c.push_back({"signature_bound_inputs_count", with([](ir::Model& m) { m.signatures[0].bound_inputs = {"", ""}; }),
               kInvalid, {"signature[0] (\"infer\"): 2 bound_inputs for 1 graph inputs"}});
  c.push_back({"signature_bound_to_missing_variable", with([](ir::Model& m) { m.signatures[0].bound_inputs = {"nope"}; }),
               kInvalid, {"signature[0] (\"infer\").bound_inputs[0]: no variable \"nope\""}});
  c.push_back({"signature_bound_variable_wrong_shape", with([](ir::Model& m) {
                 m.variables = {{"x", Tensor::from<float>({3}, {1, 2, 3})}};
                 m.signatures[0].bound_inputs = {"x"};
               }),
               kInvalid, {"bound_inputs[0]: variable \"x\" is f32[3], the graph input \"x\" is declared f32[2, 3]"}});
  c.push_back({"signature_updates_missing_variable", with([](ir::Model& m) { m.signatures[0].updates = {"", "gone"}; }),
               kInvalid, {"signature[0] (\"infer\").updates[1]: no variable \"gone\""}});
  {
    ir::Model m = base_model();
    ir::TensorInfo t = info("mask", DType::kBool, {4});
    t.constant = Tensor::from<bool>({4}, {true, false, true, true});
    m.main().add_tensor(std::move(t));
    auto b = ser(m);
    // The bool constant is the second buffer: offset 64 in the segment (the first holds 24 bytes).
    b[segment_offset(b) + 64 + 2] = 2;
    c.push_back({"bool_constant_bad_byte", b, kInvalid, {"graph[0].tensor[4] (\"mask\"): bool constant element 2 has byte value 2"}});
  }
  {
    ir::Model m = base_model();
    ir::TensorInfo t = info("words", DType::kString, {2});
    auto v = Tensor::empty(DType::kString, {2});
    t.constant = std::move(v).value();
    t.constant.mut_data<std::string>()[0] = "ab";
    t.constant.mut_data<std::string>()[1] = "cde";
    m.main().add_tensor(std::move(t));
    auto b = ser(m);
    b[segment_offset(b) + 64 + 8] = 0xff;  // length of element 1: 3 -> 255
    c.push_back({"string_constant_bad_length", b, kInvalid, {"graph[0].tensor[4] (\"words\"): string element 1 of length 255 extends past its buffer"}});
  }
  // Random bit flips of the base model: each outcome is pinned, an exact error or a load that
  // passes verification ("kOk": malformed_test.cpp then also prepares a Session on it). A change
  // in the loader that alters an outcome shows here; the malformed test runs under ASan/UBSan too.
  struct Flip {
    uint32_t seed;
    const char* code;
    std::vector<std::string> substrings;
  };
  const std::vector<Flip> flips = {
      {1, kInvalid, {"the FlatBuffer of this 768-byte file is malformed or truncated (FlatBuffers verifier failed)"}},
      {2, kInvalid, {"the FlatBuffer of this 768-byte file is malformed or truncated (FlatBuffers verifier failed)"}},
      {3, "kOk", {}},
      {4, kInvalid, {"graph[0].tensor[1] (\"w\"): buffer 0 [offset 0, size 18014398509482008] extends past the end of the file (768 bytes)"}},
      {5, kInvalid, {"graph[0].tensor[0] (\"x\"): has_shape is false but 2 dims are given"}},
      {6, "kOk", {}},
  };
  for (const Flip& f : flips)
    c.push_back({str_cat("bitflip_seed", f.seed), bit_flips(base, f.seed, static_cast<int>(f.seed % 3) + 1), f.code, f.substrings});
  return c;
}

}  // namespace tsr::corpus
