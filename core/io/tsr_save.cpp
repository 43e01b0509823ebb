// Writing .tsr files: FlatBuffer root, zero padding to 64, then the constant segment.
// The layout and encodings are specified in schema/README.md.
#include <cstring>
#include <fstream>
#include <limits>

#include "core/io/tsr_io.h"
#include "schema/tessera_generated.h"

namespace tsr::io {

namespace {

namespace fb = tsr::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr uint64_t kAlign = 64;
uint64_t align_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// Collects constant tensors in buffer order and assigns each a 64-byte-aligned range.
class Segment {
 public:
  struct Entry {
    const Tensor* tensor;
    uint64_t offset;
    uint64_t size;
  };

  Expected<int32_t> add(const Tensor& t) {
    uint64_t bytes = 0;
    if (t.dtype() == DType::kString) {
      // [numel x u64 byte lengths][concatenated UTF-8 bytes], see schema/README.md.
      const auto* s = t.data<std::string>();
      bytes = 8 * static_cast<uint64_t>(t.numel());
      for (int64_t i = 0; i < t.numel(); ++i) bytes += s[i].size();
    } else {
      bytes = t.nbytes();
    }
    if (entries_.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      return resource_error("too many constant buffers");
    const uint64_t off = align_up(size_);
    entries_.push_back({&t, off, bytes});
    size_ = off + bytes;
    return static_cast<int32_t>(entries_.size() - 1);
  }
  const std::vector<Entry>& entries() const { return entries_; }
  // Total segment size, padded to 64 so that concatenated files stay aligned.
  uint64_t size() const { return align_up(size_); }

 private:
  std::vector<Entry> entries_;
  uint64_t size_ = 0;
};

Offset<flatbuffers::Vector<int32_t>> ids(FlatBufferBuilder& b, const std::vector<int32_t>& v) {
  return b.CreateVector(v);
}

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> strs(FlatBufferBuilder& b,
                                                            const std::vector<std::string>& v) {
  std::vector<Offset<flatbuffers::String>> o;
  o.reserve(v.size());
  for (const auto& s : v) o.push_back(b.CreateString(s));
  return b.CreateVector(o);
}

Expected<Offset<fb::Attribute>> write_attr(FlatBufferBuilder& b, Segment& seg, const ir::Attribute& a,
                                           const std::string& place) {
  const auto name = b.CreateString(a.name);
  Offset<flatbuffers::String> s;
  Offset<flatbuffers::Vector<int64_t>> ints;
  Offset<flatbuffers::Vector<double>> floats;
  Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> strings;
  Offset<fb::TensorValue> t;
  Offset<flatbuffers::Vector<int32_t>> graphs;
  switch (a.kind) {
    case ir::AttrKind::kString: s = b.CreateString(a.s); break;
    case ir::AttrKind::kInts: ints = b.CreateVector(a.ints); break;
    case ir::AttrKind::kFloats: floats = b.CreateVector(a.floats); break;
    case ir::AttrKind::kStrings: strings = strs(b, a.strings); break;
    case ir::AttrKind::kTensor: {
      if (!a.t.defined()) return invalid_argument(place, ": attribute '", a.name, "' holds an undefined tensor");
      TSR_ASSIGN_OR_RETURN(int32_t buf, seg.add(a.t));
      const auto shape = b.CreateVector(a.t.shape().data(), a.t.shape().size());
      t = fb::CreateTensorValue(b, static_cast<fb::DType>(a.t.dtype()), shape, buf);
      break;
    }
    case ir::AttrKind::kGraphs: {
      std::vector<int32_t> g;
      for (int64_t v : a.ints) {
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
          return invalid_argument(place, ": attribute '", a.name, "': graph index ", v, " does not fit in int32");
        g.push_back(static_cast<int32_t>(v));
      }
      graphs = b.CreateVector(g);
      break;
    }
    default: break;
  }
  // Only the field of the attribute's kind is written, so that equal IR gives equal bytes.
  const int64_t i = a.kind == ir::AttrKind::kInt || a.kind == ir::AttrKind::kGraph ? a.i : 0;
  const double f = a.kind == ir::AttrKind::kFloat ? a.f : 0.0;
  return fb::CreateAttribute(b, name, static_cast<fb::AttrKind>(a.kind), i, f, s, ints, floats, strings, t, graphs);
}

Expected<Offset<fb::Graph>> write_graph(FlatBufferBuilder& b, Segment& seg, const ir::Graph& g, size_t gi) {
  std::vector<Offset<fb::TensorInfo>> tensors;
  tensors.reserve(g.tensors.size());
  for (const auto& info : g.tensors) {
    const auto name = b.CreateString(info.name);
    const auto shape = b.CreateVector(info.shape.data(), info.shape.size());
    Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> dim_names;
    if (!info.dim_names.empty()) dim_names = strs(b, info.dim_names);
    int32_t buf = -1;
    if (info.constant.defined()) {
      TSR_ASSIGN_OR_RETURN(buf, seg.add(info.constant));
    }
    tensors.push_back(fb::CreateTensorInfo(b, name, static_cast<fb::DType>(info.dtype), info.has_shape,
                                           shape, dim_names, buf,
                                           info.kind == ValueKind::kSequence ? fb::ValueKind::Sequence
                                                                             : fb::ValueKind::Tensor));
  }
  std::vector<Offset<fb::Node>> nodes;
  nodes.reserve(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const ir::Node& node = g.nodes[n];
    const std::string place = ir::node_place(static_cast<int32_t>(gi), static_cast<int32_t>(n), node);
    std::vector<Offset<fb::Attribute>> attrs;
    attrs.reserve(node.attributes.size());
    for (const auto& a : node.attributes) {
      TSR_ASSIGN_OR_RETURN(auto off, write_attr(b, seg, a, place));
      attrs.push_back(off);
    }
    const auto op = b.CreateString(node.op);
    const auto name = b.CreateString(node.name);
    const auto in = ids(b, node.inputs);
    const auto out = ids(b, node.outputs);
    const auto av = b.CreateVector(attrs);
    nodes.push_back(fb::CreateNode(b, op, /*domain=*/0, node.version, name, in, out, av));
  }
  const auto name = b.CreateString(g.name);
  const auto tv = b.CreateVector(tensors);
  const auto nv = b.CreateVector(nodes);
  const auto in = ids(b, g.inputs);
  const auto out = ids(b, g.outputs);
  return fb::CreateGraph(b, name, tv, nv, in, out);
}

// Builds the FlatBuffer with `segment_offset` written as given; fills `seg`.
Status build(const ir::Model& m, uint64_t segment_offset, FlatBufferBuilder& b, Segment& seg) {
  std::vector<Offset<fb::Graph>> graphs;
  graphs.reserve(m.graphs.size());
  for (size_t gi = 0; gi < m.graphs.size(); ++gi) {
    TSR_ASSIGN_OR_RETURN(auto off, write_graph(b, seg, m.graphs[gi], gi));
    graphs.push_back(off);
  }
  // Variables add their values to the segment, so they come before the buffer table.
  std::vector<Offset<fb::Variable>> vars;
  for (const auto& v : m.variables) {
    if (!v.value.defined()) return invalid_argument("variable \"", v.name, "\" has no value");
    TSR_ASSIGN_OR_RETURN(int32_t buf, seg.add(v.value));
    const auto name = b.CreateString(v.name);
    const auto shape = b.CreateVector(v.value.shape().data(), v.value.shape().size());
    vars.push_back(fb::CreateVariable(b, name, fb::CreateTensorValue(b, static_cast<fb::DType>(v.value.dtype()), shape, buf)));
  }
  std::vector<Offset<fb::Buffer>> buffers;
  buffers.reserve(seg.entries().size());
  for (const auto& e : seg.entries()) buffers.push_back(fb::CreateBuffer(b, e.offset, e.size));
  std::vector<Offset<fb::Signature>> sigs;
  for (const auto& s : m.signatures) {
    const auto name = b.CreateString(s.name);
    Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> bound, updates;
    if (!s.bound_inputs.empty()) bound = strs(b, s.bound_inputs);
    if (!s.updates.empty()) updates = strs(b, s.updates);
    sigs.push_back(fb::CreateSignature(b, name, s.graph, bound, updates));
  }
  std::vector<Offset<fb::KeyValue>> meta;
  for (const auto& [k, v] : m.metadata) {
    const auto ko = b.CreateString(k);
    const auto vo = b.CreateString(v);
    meta.push_back(fb::CreateKeyValue(b, ko, vo));
  }
  const auto producer = b.CreateString(m.producer);
  const auto gv = b.CreateVector(graphs);
  const auto bv = b.CreateVector(buffers);
  const auto sv = b.CreateVector(sigs);
  const auto mv = b.CreateVector(meta);
  Offset<flatbuffers::Vector<Offset<fb::Variable>>> vv;
  if (!vars.empty()) vv = b.CreateVector(vars);
  b.Finish(fb::CreateModel(b, m.version, producer, gv, bv, sv, mv, segment_offset, seg.size(), vv),
           fb::ModelIdentifier());
  return ok_status();
}

void write_string_tensor(const Tensor& t, uint8_t* dst) {
  const auto* s = t.data<std::string>();
  const auto n = static_cast<size_t>(t.numel());
  uint8_t* bytes = dst + 8 * n;
  for (size_t i = 0; i < n; ++i) {
    uint64_t len = s[i].size();
    for (int k = 0; k < 8; ++k) dst[8 * i + static_cast<size_t>(k)] = static_cast<uint8_t>(len >> (8 * k));
    if (len) std::memcpy(bytes, s[i].data(), s[i].size());
    bytes += len;
  }
}

}  // namespace

Expected<std::vector<uint8_t>> serialize_model(const ir::Model& model) {
  static_assert(sizeof(uint64_t) == 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  return unsupported("writing .tsr files needs a little-endian host");
#endif
  // Two passes: the FlatBuffer's size does not depend on segment_offset's value (always present,
  // never the default 0), so the first pass measures and the second writes the real offset.
  uint64_t segment_offset = 0;
  for (int pass = 0; pass < 2; ++pass) {
    FlatBufferBuilder b(1024);
    Segment seg;
    TSR_RETURN_IF_ERROR(build(model, pass == 0 ? kAlign : segment_offset, b, seg));
    if (pass == 0) {
      segment_offset = align_up(b.GetSize());
      continue;
    }
    if (align_up(b.GetSize()) != segment_offset) return internal_error("serialize_model: FlatBuffer size changed between passes");
    const uint64_t total = segment_offset + seg.size();
    if (total > std::numeric_limits<size_t>::max()) return resource_error("model of ", total, " bytes does not fit in memory");
    std::vector<uint8_t> out(static_cast<size_t>(total), 0);
    std::memcpy(out.data(), b.GetBufferPointer(), b.GetSize());
    for (const auto& e : seg.entries()) {
      uint8_t* dst = out.data() + segment_offset + e.offset;
      if (e.tensor->dtype() == DType::kString) write_string_tensor(*e.tensor, dst);
      else if (e.size) std::memcpy(dst, e.tensor->raw(), e.size);
    }
    return out;
  }
  return internal_error("unreachable");
}

Status save_model_file(const ir::Model& model, const std::string& path) {
  TSR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, serialize_model(model));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return not_found("cannot open '", path, "' for writing");
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return resource_error("writing '", path, "' failed (", bytes.size(), " bytes)");
  return ok_status();
}

}  // namespace tsr::io
