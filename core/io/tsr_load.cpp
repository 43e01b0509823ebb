// Loading .tsr files from untrusted bytes (DESIGN.md §4, schema/README.md).
//
// Order of checks: size and identifier, the FlatBuffers Verifier (every offset, vector and
// string inside the buffer; bounded depth and table count), format version, then while
// converting to the IR every enum value, dim, buffer index and byte range (overflow-safe), and
// finally passes::verify_model (structure, ops, types). Constant data is wrapped in place.
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

#include "core/base/mapped_pages.h"
#include "core/io/tsr_io.h"
#include "core/passes/verify_model.h"
#include "schema/tessera_generated.h"

#if !defined(__EMSCRIPTEN__) && !defined(_WIN32)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define TSR_HAVE_MMAP 1
#endif

#include <cerrno>
#include <fstream>

namespace tsr::io {

namespace {

namespace fb = tsr::fb;
template <typename T> using FbVec = flatbuffers::Vector<T>;
using FbStrings = FbVec<flatbuffers::Offset<flatbuffers::String>>;

constexpr uint64_t kAlign = 64;
// Verifier limits: nesting is shallow in this schema (Model/Graph/Node/Attribute/TensorValue);
// the table bound keeps verification time linear in a sane model size.
constexpr flatbuffers::uoffset_t kMaxDepth = 16;
constexpr flatbuffers::uoffset_t kMaxTables = 1u << 26;

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// The Verifier only checks that a vector's length field is 4-byte aligned, so the elements of a
// vector of 8-byte scalars may be misaligned in a crafted file: copy them out with memcpy
// instead of typed loads (which would be undefined behaviour there).
template <typename T>
std::vector<T> copy_vec(const FbVec<T>* v) {
  std::vector<T> out;
  if (!v || v->size() == 0) return out;
  out.resize(v->size());
  std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

std::string tensor_place(size_t g, size_t t, const std::string& name) {
  return str_cat("graph[", g, "].tensor[", t, "] (\"", name, "\")");
}

struct Loader {
  const uint8_t* data;
  size_t size;
  std::shared_ptr<const void> owner;
  const fb::Model* root;
  uint64_t segment_offset;

  // Checks a shape read from the file. `constant`: dims must be concrete. Returns the element
  // count of the known dims (overflow- and allocation-bounded).
  Expected<int64_t> check_shape(const Shape& dims, DType dtype, bool constant, const std::string& place) const {
    int64_t numel = 1;
    const uint64_t esize = std::max<uint64_t>(1, dtype_size(dtype));
    for (size_t d = 0; d < dims.size(); ++d) {
      const int64_t v = dims[d];
      if (v < -1) return invalid_model(place, ": dim ", d, " is ", v, " (dims must be >= 0, or -1 for dynamic)");
      if (v == -1) {
        if (constant) return invalid_model(place, ": dim ", d, " is dynamic (-1) in a constant");
        continue;
      }
      if (v != 0 && static_cast<uint64_t>(numel) > max_tensor_bytes() / esize / static_cast<uint64_t>(v))
        return resource_error(place, ": shape with dim ", d, " = ", v, " exceeds the ", max_tensor_bytes() >> 20,
                              " MiB tensor size limit");
      numel *= v;
    }
    return numel;
  }

  Expected<DType> check_dtype(fb::DType d, const std::string& place) const {
    const int v = static_cast<int>(d);
    if (v != 0 && !dtype_valid(v)) return invalid_model(place, ": invalid dtype value ", v);
    return static_cast<DType>(v);
  }

  // The bytes of buffer `index`, checked against the file and the segment.
  Expected<const uint8_t*> buffer_bytes(int32_t index, uint64_t expect_size, bool exact, uint64_t* size_out,
                                        const std::string& place) const {
    const auto* bufs = root->buffers();
    const uint32_t nb = bufs ? bufs->size() : 0;
    if (index < 0 || static_cast<uint32_t>(index) >= nb)
      return invalid_model(place, ": buffer index ", index, " out of range [0, ", nb, ")");
    const fb::Buffer* b = bufs->Get(static_cast<flatbuffers::uoffset_t>(index));
    const uint64_t off = b->offset(), sz = b->size();
    const std::string desc = str_cat("buffer ", index, " [offset ", off, ", size ", sz, "]");
    if (off % kAlign != 0) return invalid_model(place, ": ", desc, " is not 64-byte aligned");
    // Overflow-safe: off + sz <= segment_size and segment_offset + off + sz <= file size.
    const uint64_t avail = size - segment_offset;  // segment_offset <= size checked in load()
    if (off > avail || sz > avail - off)
      return invalid_model(place, ": ", desc, " extends past the end of the file (", size, " bytes)");
    if (off > root->segment_size() || sz > root->segment_size() - off)
      return invalid_model(place, ": ", desc, " extends past the constant segment (", root->segment_size(), " bytes)");
    if (exact && sz != expect_size)
      return invalid_model(place, ": ", desc, " holds ", sz, " bytes, the tensor needs ", expect_size);
    *size_out = sz;
    return data + segment_offset + off;
  }

  // Builds a constant tensor from buffer `index` (zero-copy except strings).
  Expected<Tensor> constant(int32_t index, DType dtype, const Shape& shape, int64_t numel, const std::string& place) const {
    if (dtype == DType::kUndefined) return invalid_model(place, ": constant has no dtype");
    uint64_t sz = 0;
    if (dtype != DType::kString) {
      const uint64_t need = static_cast<uint64_t>(numel) * dtype_size(dtype);  // bounded by check_shape
      TSR_ASSIGN_OR_RETURN(const uint8_t* p, buffer_bytes(index, need, true, &sz, place));
      if (dtype == DType::kBool) {
        // Any byte other than 0/1 would be an invalid C++ bool for kernels reading it.
        for (uint64_t i = 0; i < sz; ++i)
          if (p[i] > 1) return invalid_model(place, ": bool constant element ", i, " has byte value ", int(p[i]), " (expected 0 or 1)");
      }
      return Tensor::wrap(dtype, shape, p, owner);
    }
    TSR_ASSIGN_OR_RETURN(const uint8_t* p, buffer_bytes(index, 0, false, &sz, place));
    return decode_strings(p, sz, shape, numel, place);
  }

  Expected<Tensor> decode_strings(const uint8_t* p, uint64_t sz, const Shape& shape, int64_t numel, const std::string& place) const {
    const auto n = static_cast<uint64_t>(numel);
    if (n > sz / 8) return invalid_model(place, ": string buffer of ", sz, " bytes is too small for ", n, " lengths");
    uint64_t remaining = sz - 8 * n;
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(DType::kString, shape));
    auto* out = t.mut_data<std::string>();
    const uint8_t* bytes = p + 8 * n;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t len = 0;
      for (int k = 0; k < 8; ++k) len |= static_cast<uint64_t>(p[8 * i + static_cast<uint64_t>(k)]) << (8 * k);
      if (len > remaining) return invalid_model(place, ": string element ", i, " of length ", len, " extends past its buffer");
      out[i].assign(reinterpret_cast<const char*>(bytes), static_cast<size_t>(len));
      bytes += len;
      remaining -= len;
    }
    if (remaining != 0) return invalid_model(place, ": string buffer has ", remaining, " trailing bytes");
    return t;
  }

  Expected<Tensor> tensor_value(const fb::TensorValue* tv, const std::string& place) const {
    if (!tv) return invalid_model(place, ": tensor attribute without a value");
    TSR_ASSIGN_OR_RETURN(DType dtype, check_dtype(tv->dtype(), place));
    if (dtype == DType::kUndefined) return invalid_model(place, ": tensor value has no dtype");
    Shape shape = copy_vec(tv->shape());
    TSR_ASSIGN_OR_RETURN(int64_t numel, check_shape(shape, dtype, true, place));
    if (tv->buffer() != -1) return constant(tv->buffer(), dtype, shape, numel, place);
    // Inline value: copied, since the FlatBuffer gives no alignment beyond 8 bytes... or none.
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(dtype, shape));
    if (dtype == DType::kString) {
      const auto* s = tv->strings();
      if (!s || s->size() != static_cast<uint64_t>(numel))
        return invalid_model(place, ": inline string tensor has ", s ? s->size() : 0, " strings, shape needs ", numel);
      for (flatbuffers::uoffset_t i = 0; i < s->size(); ++i) t.mut_data<std::string>()[i] = s->Get(i)->str();
      return t;
    }
    const uint64_t need = static_cast<uint64_t>(numel) * dtype_size(dtype);
    const uint64_t have = tv->data() ? tv->data()->size() : 0;
    if (have != need) return invalid_model(place, ": inline tensor data has ", have, " bytes, shape needs ", need);
    if (need) std::memcpy(t.raw_mut(), tv->data()->data(), static_cast<size_t>(need));
    if (dtype == DType::kBool)
      for (uint64_t i = 0; i < need; ++i)
        if (t.data<uint8_t>()[i] > 1) return invalid_model(place, ": bool element ", i, " is not 0 or 1");
    return t;
  }

  Expected<ir::TensorInfo> tensor_info(const fb::TensorInfo* ti, size_t g, size_t t) const {
    ir::TensorInfo info;
    info.name = str(ti->name());
    const std::string place = tensor_place(g, t, info.name);
    TSR_ASSIGN_OR_RETURN(info.dtype, check_dtype(ti->dtype(), place));
    info.has_shape = ti->has_shape();
    if (ti->kind() != fb::ValueKind::Tensor && ti->kind() != fb::ValueKind::Sequence)
      return invalid_model(place, ": value kind ", static_cast<int>(ti->kind()), " is not tensor (0) or sequence (1)");
    info.kind = ti->kind() == fb::ValueKind::Sequence ? ValueKind::kSequence : ValueKind::kTensor;
    const bool is_const = ti->buffer() != -1;
    if (is_const && info.kind != ValueKind::kTensor) return invalid_model(place, ": a sequence cannot be a constant");
    if (!info.has_shape && ti->shape() && ti->shape()->size() != 0)
      return invalid_model(place, ": has_shape is false but ", ti->shape()->size(), " dims are given");
    if (is_const && !info.has_shape) return invalid_model(place, ": constant without a shape");
    info.shape = copy_vec(ti->shape());
    TSR_ASSIGN_OR_RETURN(int64_t numel, check_shape(info.shape, info.dtype, is_const, place));
    if (const auto* dn = ti->dim_names()) {
      if (dn->size() != info.shape.size())
        return invalid_model(place, ": ", dn->size(), " dim names for ", info.shape.size(), " dims");
      for (flatbuffers::uoffset_t d = 0; d < dn->size(); ++d) info.dim_names.push_back(dn->Get(d)->str());
    }
    if (is_const) {
      TSR_ASSIGN_OR_RETURN(info.constant, constant(ti->buffer(), info.dtype, info.shape, numel, place));
    }
    return info;
  }

  Expected<ir::Attribute> attribute(const fb::Attribute* fa, const std::string& node_place, size_t k) const {
    ir::Attribute a;
    a.name = str(fa->name());
    const std::string place = str_cat(node_place, ".attribute[", k, "] ('", a.name, "')");
    const int kind = static_cast<int>(fa->kind());
    if (kind < 1 || kind > 9) return invalid_model(place, ": invalid attribute kind ", kind);
    a.kind = static_cast<ir::AttrKind>(kind);
    switch (a.kind) {
      case ir::AttrKind::kInt:
      case ir::AttrKind::kGraph: a.i = fa->i(); break;
      case ir::AttrKind::kFloat: a.f = fa->f(); break;
      case ir::AttrKind::kString: a.s = str(fa->s()); break;
      case ir::AttrKind::kInts:
        a.ints = copy_vec(fa->ints());
        break;
      case ir::AttrKind::kFloats:
        a.floats = copy_vec(fa->floats());
        break;
      case ir::AttrKind::kStrings:
        if (fa->strings())
          for (flatbuffers::uoffset_t i = 0; i < fa->strings()->size(); ++i) a.strings.push_back(fa->strings()->Get(i)->str());
        break;
      case ir::AttrKind::kTensor: {
        TSR_ASSIGN_OR_RETURN(a.t, tensor_value(fa->t(), place));
        break;
      }
      case ir::AttrKind::kGraphs:
        if (fa->graphs()) a.ints.assign(fa->graphs()->begin(), fa->graphs()->end());
        break;
    }
    return a;
  }

  Expected<ir::Graph> graph(const fb::Graph* fg, size_t gi) const {
    ir::Graph g;
    g.name = str(fg->name());
    if (const auto* ts = fg->tensors()) {
      g.tensors.reserve(ts->size());
      for (flatbuffers::uoffset_t t = 0; t < ts->size(); ++t) {
        TSR_ASSIGN_OR_RETURN(ir::TensorInfo info, tensor_info(ts->Get(t), gi, t));
        g.tensors.push_back(std::move(info));
      }
    }
    if (const auto* ns = fg->nodes()) {
      g.nodes.reserve(ns->size());
      for (flatbuffers::uoffset_t n = 0; n < ns->size(); ++n) {
        const fb::Node* fn = ns->Get(n);
        ir::Node node;
        node.op = str(fn->op());
        node.name = str(fn->name());
        node.version = fn->version();
        if (fn->inputs()) node.inputs.assign(fn->inputs()->begin(), fn->inputs()->end());
        if (fn->outputs()) node.outputs.assign(fn->outputs()->begin(), fn->outputs()->end());
        const std::string place = ir::node_place(static_cast<int32_t>(gi), static_cast<int32_t>(n), node);
        if (const auto* as = fn->attributes()) {
          node.attributes.reserve(as->size());
          for (flatbuffers::uoffset_t k = 0; k < as->size(); ++k) {
            TSR_ASSIGN_OR_RETURN(ir::Attribute a, attribute(as->Get(k), place, k));
            node.attributes.push_back(std::move(a));
          }
        }
        g.nodes.push_back(std::move(node));
      }
    }
    if (fg->inputs()) g.inputs.assign(fg->inputs()->begin(), fg->inputs()->end());
    if (fg->outputs()) g.outputs.assign(fg->outputs()->begin(), fg->outputs()->end());
    return g;
  }
};

std::string printable(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    const char c = static_cast<char>(p[i]);
    if (p[i] >= 32 && p[i] < 127) s += c;
    else s += str_cat("\\x", "0123456789abcdef"[p[i] >> 4], "0123456789abcdef"[p[i] & 15]);
  }
  return s;
}

Expected<ir::Model> decode(const uint8_t* data, size_t size, std::shared_ptr<const void> owner) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  return unsupported(".tsr files are little-endian; this host is not");
#endif
  if (size == 0) return invalid_model("empty file (0 bytes)");
  if (size < 8) return invalid_model("truncated file: ", size, " bytes, shorter than a FlatBuffer header (8 bytes)");
  if (!fb::ModelBufferHasIdentifier(data))
    return invalid_model("not a .tsr file: identifier '", printable(data + 4, 4), "' at byte 4, expected 'TSR1'");
  // A FlatBuffer is < 2 GiB and starts the file; the constant segment may make the file larger.
  const size_t fb_len = std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  flatbuffers::Verifier verifier(data, fb_len, kMaxDepth, kMaxTables);
  if (!fb::VerifyModelBuffer(verifier))
    return invalid_model("the FlatBuffer of this ", size, "-byte file is malformed or truncated (FlatBuffers verifier failed)");
  const fb::Model* root = fb::GetModel(data);
  if (root->version() != ir::Model::kFormatVersion) {
    if (root->version() > ir::Model::kFormatVersion)
      return unsupported("format version ", root->version(), " is newer than this build reads (", ir::Model::kFormatVersion, ")");
    return invalid_model("invalid format version ", root->version(), " (this build reads ", ir::Model::kFormatVersion, ")");
  }
  const uint64_t seg = root->segment_offset();
  if (seg % kAlign != 0) return invalid_model("segment_offset ", seg, " is not a multiple of 64");
  if (seg > size) return invalid_model("segment_offset ", seg, " is past the end of the file (", size, " bytes)");
  if (seg == 0 && root->buffers() && root->buffers()->size() > 0)
    return invalid_model("the model has ", root->buffers()->size(), " buffers but no constant segment (segment_offset 0)");

  Loader L{data, size, std::move(owner), root, seg};
  ir::Model m;
  m.version = root->version();
  m.producer = str(root->producer());
  if (const auto* gs = root->graphs()) {
    m.graphs.reserve(gs->size());
    for (flatbuffers::uoffset_t g = 0; g < gs->size(); ++g) {
      TSR_ASSIGN_OR_RETURN(ir::Graph graph, L.graph(gs->Get(g), g));
      m.graphs.push_back(std::move(graph));
    }
  }
  // Checked after the per-tensor checks, which name the tensor whose data a truncation cut.
  if (root->segment_size() > size - seg)
    return invalid_model("constant segment [offset ", seg, ", size ", root->segment_size(),
                         "] extends past the end of the file (", size, " bytes)");
  if (const auto* ss = root->signatures()) {
    for (flatbuffers::uoffset_t s = 0; s < ss->size(); ++s) {
      const fb::Signature* fs = ss->Get(s);
      ir::Signature sig{str(fs->name()), fs->graph(), {}, {}};
      if (const auto* bi = fs->bound_inputs())
        for (flatbuffers::uoffset_t k = 0; k < bi->size(); ++k) sig.bound_inputs.push_back(str(bi->Get(k)));
      if (const auto* up = fs->updates())
        for (flatbuffers::uoffset_t k = 0; k < up->size(); ++k) sig.updates.push_back(str(up->Get(k)));
      m.signatures.push_back(std::move(sig));
    }
  }
  if (const auto* vs = root->variables()) {
    for (flatbuffers::uoffset_t v = 0; v < vs->size(); ++v) {
      const std::string place = str_cat("variable[", v, "]");
      TSR_ASSIGN_OR_RETURN(Tensor value, L.tensor_value(vs->Get(v)->value(), place));
      m.variables.push_back({str(vs->Get(v)->name()), std::move(value)});
    }
  }
  if (const auto* md = root->metadata()) {
    for (flatbuffers::uoffset_t k = 0; k < md->size(); ++k) {
      std::string key = str(md->Get(k)->key());
      if (m.metadata.count(key)) return invalid_model("metadata[", k, "]: duplicate key '", key, "'");
      m.metadata.emplace(std::move(key), str(md->Get(k)->value()));
    }
  }
  return m;
}

Expected<ir::Model> load(const uint8_t* data, size_t size, std::shared_ptr<const void> owner) {
  TSR_ASSIGN_OR_RETURN(ir::Model m, decode(data, size, std::move(owner)));
  TSR_RETURN_IF_ERROR(passes::verify_model(m));
  return m;
}

struct AlignedBytes {
  uint8_t* p = nullptr;
  ~AlignedBytes() { std::free(p); }
};

Expected<std::shared_ptr<AlignedBytes>> aligned_copy_storage(size_t size) {
  auto buf = std::make_shared<AlignedBytes>();
  buf->p = static_cast<uint8_t*>(std::aligned_alloc(kAlign, (size + kAlign - 1) / kAlign * kAlign));
  if (!buf->p) return resource_error("out of memory reading ", size, " bytes");
  return buf;
}

// Runs `fn` on 64-byte-aligned bytes: `data` itself, or an aligned copy that `fn`'s result owns.
template <typename Fn>
Expected<ir::Model> with_aligned(const uint8_t* data, size_t size, std::shared_ptr<const void> owner, Fn fn) {
  if (size != 0 && reinterpret_cast<uintptr_t>(data) % kAlign != 0) {
    // Constants must be 64-byte aligned to be used in place: copy once into aligned storage.
    TSR_ASSIGN_OR_RETURN(auto buf, aligned_copy_storage(size));
    std::memcpy(buf->p, data, size);
    const uint8_t* p = buf->p;
    return fn(p, size, std::move(buf));
  }
  return fn(data, size, std::move(owner));
}

}  // namespace

Expected<ir::Model> load_model_buffer(const uint8_t* data, size_t size, std::shared_ptr<const void> owner) {
  return with_aligned(data, size, std::move(owner), load);
}

Expected<ir::Model> decode_model_buffer(const uint8_t* data, size_t size, std::shared_ptr<const void> owner) {
  return with_aligned(data, size, std::move(owner), decode);
}

Expected<ir::Model> load_model_file(const std::string& path) {
#ifdef TSR_HAVE_MMAP
  struct Mapping {
    void* p = nullptr;
    size_t n = 0;
    ~Mapping() {
      if (!p) return;
      unregister_file_mapping(p);
      munmap(p, n);
    }
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return not_found("cannot open '", path, "': no such file");
    return not_found("cannot open '", path, "': ", std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalid_argument("'", path, "' is not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return invalid_model(path, ": empty file (0 bytes)");
  }
  if (size > std::numeric_limits<size_t>::max()) {
    ::close(fd);
    return resource_error(path, ": ", size, " bytes do not fit in the address space");
  }
  auto map = std::make_shared<Mapping>();
  map->p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map->p == MAP_FAILED) {
    map->p = nullptr;
    return resource_error("cannot map '", path, "' (", size, " bytes): ", std::strerror(errno));
  }
  map->n = static_cast<size_t>(size);
  // Kernels that pack constants may drop the pages they read (core/base/mapped_pages.h).
  register_file_mapping(map->p, map->n);
  const auto* data = static_cast<const uint8_t*>(map->p);
  const size_t n = map->n;  // read before `map` is moved into the call
  auto r = load(data, n, std::move(map));
#else
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return not_found("cannot open '", path, "'");
  const auto end = f.tellg();
  if (end < 0) return invalid_argument("cannot read '", path, "'");
  const auto size = static_cast<size_t>(end);
  if (size == 0) return invalid_model(path, ": empty file (0 bytes)");
  TSR_ASSIGN_OR_RETURN(auto buf, aligned_copy_storage(size));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(buf->p), static_cast<std::streamsize>(size));
  if (!f) return invalid_argument("reading '", path, "' failed");
  const uint8_t* data = buf->p;
  auto r = load(data, size, std::move(buf));
#endif
  if (!r.ok()) return r.status().with_context(path);
  return r;
}

}  // namespace tsr::io
