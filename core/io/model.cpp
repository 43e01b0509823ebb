// tsr::Model (core/include/tessera/model.h): loading with format detection and the caller-facing
// inputs and outputs.
#include "tessera/model.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/io/onnx_importer.h"
#include "core/io/tsr_io.h"
#include "core/ir/graph.h"

namespace tsr {
namespace {

std::atomic<const io::OnnxImporter*> g_onnx_importer{nullptr};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Status no_importer(std::string_view name) {
  return unsupported(name, ": an ONNX model, and this program has no ONNX importer (convert it with `tessera convert`)");
}

ValueInfo value_info(const ir::Graph& g, int32_t id) {
  const ir::TensorInfo& t = g.tensors[static_cast<size_t>(id)];
  return ValueInfo{t.name, t.kind, t.dtype, t.has_shape, t.shape, t.dim_names};
}

// Keeps the file name in every message.
Status with_name(const Status& s, std::string_view name) {
  return s.message().find(name) == std::string::npos ? s.with_context(name) : s;
}

}  // namespace

namespace io {

void set_onnx_importer(const OnnxImporter* importer) { g_onnx_importer.store(importer); }
const OnnxImporter* onnx_importer() { return g_onnx_importer.load(); }

}  // namespace io

std::string ValueInfo::str() const {
  std::string dims = "[*]";
  if (has_shape) {
    dims = "[";
    for (size_t d = 0; d < shape.size(); ++d) {
      const bool named = d < dim_names.size() && !dim_names[d].empty();
      dims += str_cat(d ? ", " : "", shape[d] >= 0 ? std::to_string(shape[d]) : named ? dim_names[d] : "?");
    }
    dims += "]";
  }
  const std::string type = str_cat(dtype_name(dtype), dims);
  return str_cat(name, ": ", kind == ValueKind::kTensor ? type : str_cat(value_kind_name(kind), "(", type, ")"));
}

Model::Model(std::shared_ptr<const ir::Model> model) : model_(std::move(model)) {
  if (!model_ || model_->graphs.empty()) {
    model_ = nullptr;
    return;
  }
  // Session::run's inputs and outputs: graph 0's, minus those a signature on graph 0 binds to
  // variables or writes back to them.
  const ir::Graph& g = model_->main();
  const ir::Signature* bound = nullptr;
  for (const ir::Signature& sig : model_->signatures)
    if (sig.graph == 0 && (!sig.bound_inputs.empty() || !sig.updates.empty())) {
      bound = &sig;
      break;
    }
  auto io = std::make_shared<std::pair<std::vector<ValueInfo>, std::vector<ValueInfo>>>();
  for (size_t k = 0; k < g.inputs.size(); ++k)
    if (!bound || bound->bound_inputs.empty() || bound->bound_inputs[k].empty())
      io->first.push_back(value_info(g, g.inputs[k]));
  for (size_t k = 0; k < g.outputs.size(); ++k)
    if (!bound || bound->updates.empty() || bound->updates[k].empty())
      io->second.push_back(value_info(g, g.outputs[k]));
  io_ = std::move(io);
}

Expected<Model> Model::load(const std::string& path) {
  if (ends_with(path, ".onnx")) {
    const io::OnnxImporter* importer = io::onnx_importer();
    if (!importer) return no_importer(path);
    auto m = importer->from_file(path);
    if (!m.ok()) return with_name(m.status(), path);
    return Model(std::make_shared<const ir::Model>(std::move(m).value()));
  }
  auto m = io::load_model_file(path);
  if (!m.ok()) return with_name(m.status(), path);
  return Model(std::make_shared<const ir::Model>(std::move(m).value()));
}

Expected<Model> Model::load_bytes(const void* data, size_t size, std::string_view name) {
  if (!data && size) return invalid_argument(name, ": data is null");
  const auto* bytes = static_cast<const uint8_t*>(data);
  // .tsr files carry the FlatBuffers file identifier "TSR1" at bytes 4..7; anything else is
  // offered to the ONNX importer (whose error then says it is not a valid ONNX model either).
  if (size >= 8 && std::memcmp(bytes + 4, "TSR1", 4) == 0) {
    // A 64-byte aligned copy: constants are then used in place.
    std::shared_ptr<uint8_t> owned(static_cast<uint8_t*>(std::aligned_alloc(64, (size + 63) / 64 * 64)), std::free);
    if (!owned) return resource_error(name, ": out of memory for ", size, " bytes");
    std::memcpy(owned.get(), bytes, size);
    auto m = io::load_model_buffer(owned.get(), size, owned);
    if (!m.ok()) return with_name(m.status(), name);
    return Model(std::make_shared<const ir::Model>(std::move(m).value()));
  }
  const io::OnnxImporter* importer = io::onnx_importer();
  if (!importer) {
    if (size < 8) return invalid_model(name, ": ", size, " bytes is too short for a .tsr model");
    return no_importer(name);
  }
  auto m = importer->from_bytes(std::string(reinterpret_cast<const char*>(bytes), size), std::string(name));
  if (!m.ok()) return with_name(m.status(), name);
  return Model(std::make_shared<const ir::Model>(std::move(m).value()));
}

Expected<Model> Model::load_tsr_buffer(const void* data, size_t size, std::shared_ptr<const void> owner) {
  TSR_ASSIGN_OR_RETURN(ir::Model m, io::load_model_buffer(static_cast<const uint8_t*>(data), size, std::move(owner)));
  return Model(std::make_shared<const ir::Model>(std::move(m)));
}

const std::vector<ValueInfo>& Model::inputs() const {
  static const std::vector<ValueInfo> kNone;
  return io_ ? io_->first : kNone;
}

const std::vector<ValueInfo>& Model::outputs() const {
  static const std::vector<ValueInfo> kNone;
  return io_ ? io_->second : kNone;
}

std::vector<std::string> Model::signature_names() const {
  std::vector<std::string> names;
  if (model_)
    for (const ir::Signature& s : model_->signatures) names.push_back(s.name);
  return names;
}

Expected<std::vector<uint8_t>> Model::serialize() const {
  if (!model_) return invalid_argument("serialize: the model is empty");
  return io::serialize_model(*model_);
}

Status Model::save(const std::string& path) const {
  if (!model_) return invalid_argument(path, ": the model is empty");
  return io::save_model_file(*model_, path);
}

}  // namespace tsr
