// The wasm's C ABI for models, tensors and runs (contract: web_api.h; script mode: web_script.cpp).
#include "web/src/web_api.h"

#include <emscripten/emscripten.h>
#include <malloc.h>

#include <cstring>
#include <memory>
#include <sstream>

#include "core/ir/graph.h"
#include "core/passes/fix_dims.h"
#include "tessera/onnx.h"
#include "tessera/session.h"
#include "tools/onnx/onnx_import.h"

namespace tsr::web {
namespace {

int g_error_code = 0;
std::string g_error_message;

}  // namespace

// JSON string literal.
void json_str(std::ostream& os, std::string_view s) {
  os << '"';
  for (char c : s) {
    if (c == '"' || c == '\\') os << '\\' << c;
    else if (static_cast<unsigned char>(c) < 0x20) os << "\\u00" << "0123456789abcdef"[(c >> 4) & 15] << "0123456789abcdef"[c & 15];
    else os << c;
  }
  os << '"';
}

void json_values(std::ostream& os, const std::vector<ValueInfo>& values) {
  os << '[';
  for (size_t k = 0; k < values.size(); ++k) {
    const ValueInfo& t = values[k];
    os << (k ? "," : "") << "{\"name\":";
    json_str(os, t.name);
    os << ",\"dtype\":" << static_cast<int>(t.dtype) << ",\"kind\":" << static_cast<int>(t.kind) << ",\"shape\":";
    if (!t.has_shape) {
      os << "null";
    } else {
      os << '[';
      for (size_t d = 0; d < t.shape.size(); ++d) {
        os << (d ? "," : "");
        const bool named = d < t.dim_names.size() && !t.dim_names[d].empty();
        if (t.shape[d] >= 0) os << t.shape[d];
        else if (named) json_str(os, t.dim_names[d]);
        else json_str(os, str_cat("d", d));  // an unnamed dynamic dim
      }
      os << ']';
    }
    os << '}';
  }
  os << ']';
}

std::nullptr_t set_error(const Status& s) {
  g_error_code = static_cast<int>(s.code());
  g_error_message = s.message();
  return nullptr;
}

}  // namespace tsr::web

using tsr::web::Bytes;
using tsr::web::TensorList;
using tsr::web::WebModel;
using tsr::web::set_error;

extern "C" {

EMSCRIPTEN_KEEPALIVE int tsrw_last_error_code() { return tsr::web::g_error_code; }
EMSCRIPTEN_KEEPALIVE const char* tsrw_last_error_message() { return tsr::web::g_error_message.c_str(); }
// Bytes of the wasm heap in use by malloc (dlmalloc's uordblks): the leak check of the tests.
EMSCRIPTEN_KEEPALIVE size_t tsrw_heap_in_use() { return static_cast<size_t>(mallinfo().uordblks); }

// Loads a .tsr or .onnx model from `size` bytes and prepares a CPU session with `threads`
// intra-op threads and the library's default options (graph optimization and limits, as every
// front door has them). `name` prefixes error messages (e.g. the file name).
// External data (an .onnx model only): `ext_count` files, file k named ext_names[k] (the location
// the model's tensors give) with ext_sizes[k] bytes at ext_data[k] (onnx_import::ImportOptions).
// Free dimensions: the model's named dynamic dims dim_names[k] fixed to dim_sizes[k] before the
// session plans the graph (passes::fix_dims; kNotFound for a name no input has, kInvalidArgument
// for a size the graph contradicts).
EMSCRIPTEN_KEEPALIVE WebModel* tsrw_model_load(const uint8_t* data, size_t size, const char* name, int threads,
                                               const char* const* ext_names, const uint8_t* const* ext_data,
                                               const size_t* ext_sizes, int ext_count, const char* const* dim_names,
                                               const double* dim_sizes, int dim_count) {
  tsr::enable_onnx_import();
  const bool is_tsr = size >= 8 && std::memcmp(data + 4, "TSR1", 4) == 0;
  tsr::Expected<tsr::Model> model = tsr::Model();
  if (ext_count > 0) {
    if (is_tsr) return set_error(tsr::invalid_argument(name, ": external data is for .onnx models; this is a .tsr model"));
    tsr::onnx_import::ImportOptions io;
    for (int k = 0; k < ext_count; ++k)
      io.external_data[ext_names[k]] = std::string_view(reinterpret_cast<const char*>(ext_data[k]), ext_sizes[k]);
    auto m = tsr::onnx_import::import_onnx_bytes(std::string(reinterpret_cast<const char*>(data), size), name, io);
    if (!m.ok()) return set_error(m.status());
    model = tsr::Model(std::make_shared<const tsr::ir::Model>(std::move(m).value()));
  } else {
    model = tsr::Model::load_bytes(data, size, name);
  }
  if (!model.ok()) return set_error(model.status());
  if (dim_count > 0) {
    std::vector<std::pair<std::string, int64_t>> dims;
    for (int k = 0; k < dim_count; ++k) dims.emplace_back(dim_names[k], static_cast<int64_t>(dim_sizes[k]));
    auto fixed = std::make_shared<tsr::ir::Model>(model->graph());  // constants share their storage
    tsr::Status st = tsr::passes::fix_dims(*fixed, dims);
    if (!st.ok()) return set_error(st.with_context(name));
    model = tsr::Model(std::shared_ptr<const tsr::ir::Model>(std::move(fixed)));
  }
  tsr::SessionOptions opts;
  // In tessera.wasm (no pthreads) the ThreadPool runs everything on the calling thread; in
  // tessera-threads.wasm it starts threads - 1 pthreads here, on Workers the JS API has loaded
  // before this call (one that is not loaded yet would need the event loop to start).
  opts.num_threads = threads < 1 ? 1 : threads;
  auto session = tsr::Session::create(*model, opts);
  if (!session.ok()) return set_error(session.status().with_context(name));
  return new WebModel{std::move(session).value()};
}

EMSCRIPTEN_KEEPALIVE void tsrw_model_free(WebModel* m) { delete m; }

// {"inputs":[{name,dtype,kind,shape}],"outputs":[...]} of the main graph: dtype a DType value,
// kind a ValueKind value, shape null (unknown rank) or dims (numbers, or strings for dynamic dims).
EMSCRIPTEN_KEEPALIVE Bytes* tsrw_model_info(WebModel* m) {
  std::ostringstream os;
  os << "{\"inputs\":";
  tsr::web::json_values(os, m->session->inputs());
  os << ",\"outputs\":";
  tsr::web::json_values(os, m->session->outputs());
  os << '}';
  const std::string s = os.str();
  return new Bytes{std::vector<uint8_t>(s.begin(), s.end())};
}

// The model as .tsr bytes (after an ONNX import: the converted model).
EMSCRIPTEN_KEEPALIVE Bytes* tsrw_model_save(WebModel* m) {
  auto bytes = m->session->model().serialize();
  if (!bytes.ok()) return set_error(bytes.status());
  return new Bytes{std::move(bytes).value()};
}

// Per-node profiling of the model's runs (as `tessera run --profile`): top < 0 turns it on (runs
// from then on are timed per node; returns an empty report), top >= 0 returns the report of the
// `top` nodes by total time since then ("" when it is off).
EMSCRIPTEN_KEEPALIVE Bytes* tsrw_model_profile(WebModel* m, int top) {
  if (top < 0) {
    m->session->enable_profiling();
    return new Bytes{};
  }
  const std::string r = m->session->profile_report(static_cast<size_t>(top));
  return new Bytes{std::vector<uint8_t>(r.begin(), r.end())};
}

EMSCRIPTEN_KEEPALIVE TensorList* tsrw_list_new() { return new TensorList; }
EMSCRIPTEN_KEEPALIVE void tsrw_list_free(TensorList* l) { delete l; }

// Appends a copy of a tensor: `dtype` a DType value, `rank` dims, `nbytes` bytes of data.
// Returns 0, or -1 (kInvalidArgument: negative dims, size mismatch; kUnsupported: string dtype,
// which goes through tsrw_list_add_strings).
EMSCRIPTEN_KEEPALIVE int tsrw_list_add(TensorList* l, const char* name, int dtype, const double* dims, int rank,
                                       const uint8_t* data, size_t nbytes) {
  const std::string where = tsr::str_cat("input \"", name, "\"");
  const auto dt = static_cast<tsr::DType>(dtype);
  if (dt == tsr::DType::kString || tsr::dtype_size(dt) == 0) {
    set_error(tsr::unsupported(where, ": dtype ", tsr::dtype_name(dt), " cannot be passed from JS"));
    return -1;
  }
  tsr::Shape shape;
  for (int d = 0; d < rank; ++d) shape.push_back(static_cast<int64_t>(dims[d]));
  auto t = tsr::Tensor::empty(dt, shape);
  if (!t.ok()) {
    set_error(t.status().with_context(where));
    return -1;
  }
  if (t->nbytes() != nbytes) {
    set_error(tsr::invalid_argument(where, ": shape ", tsr::shape_str(shape), " of ", tsr::dtype_name(dt), " needs ",
                                    t->nbytes(), " bytes of data, got ", nbytes));
    return -1;
  }
  if (nbytes) std::memcpy(t->raw_mut(), data, nbytes);
  l->names.emplace_back(name);
  l->tensors.push_back(std::move(t).value());
  return 0;
}

EMSCRIPTEN_KEEPALIVE int tsrw_list_size(TensorList* l) { return static_cast<int>(l->tensors.size()); }
EMSCRIPTEN_KEEPALIVE const char* tsrw_list_name(TensorList* l, int i) { return l->names[static_cast<size_t>(i)].c_str(); }
// DType value of tensor i; for a sequence or an empty optional -(ValueKind value).
EMSCRIPTEN_KEEPALIVE int tsrw_list_dtype(TensorList* l, int i) {
  const tsr::Tensor& t = l->tensors[static_cast<size_t>(i)];
  if (t.kind() != tsr::ValueKind::kTensor) return -static_cast<int>(t.kind());
  return static_cast<int>(t.dtype());
}
EMSCRIPTEN_KEEPALIVE int tsrw_list_rank(TensorList* l, int i) { return static_cast<int>(l->tensors[static_cast<size_t>(i)].rank()); }
EMSCRIPTEN_KEEPALIVE double tsrw_list_dims(TensorList* l, int i, int d) {
  return static_cast<double>(l->tensors[static_cast<size_t>(i)].dim(d));
}
// Element type of entry i when it is a sequence or an optional (a DType value; 0 = unknown).
EMSCRIPTEN_KEEPALIVE int tsrw_list_elem_dtype(TensorList* l, int i) {
  return static_cast<int>(l->tensors[static_cast<size_t>(i)].dtype());
}
// The elements of sequence entry i as a new list (unnamed entries; caller frees it).
EMSCRIPTEN_KEEPALIVE TensorList* tsrw_list_sequence(TensorList* l, int i) {
  const auto& elems = l->tensors[static_cast<size_t>(i)].elements();
  return new TensorList{std::vector<std::string>(elems.size()), elems};
}
// Element k of string tensor i: its bytes (UTF-8, may hold NULs) and their count.
EMSCRIPTEN_KEEPALIVE const char* tsrw_list_string(TensorList* l, int i, double k) {
  return l->tensors[static_cast<size_t>(i)].data<std::string>()[static_cast<size_t>(k)].data();
}
EMSCRIPTEN_KEEPALIVE size_t tsrw_list_string_size(TensorList* l, int i, double k) {
  return l->tensors[static_cast<size_t>(i)].data<std::string>()[static_cast<size_t>(k)].size();
}
// Appends a string tensor of `rank` dims whose elements are the `count` byte strings
// `data[k]` of `sizes[k]` bytes. Returns 0, or -1 (kInvalidArgument: count does not match dims).
EMSCRIPTEN_KEEPALIVE int tsrw_list_add_strings(TensorList* l, const char* name, const double* dims, int rank,
                                               const char* const* data, const size_t* sizes, size_t count) {
  const std::string where = tsr::str_cat("input \"", name, "\"");
  tsr::Shape shape;
  for (int d = 0; d < rank; ++d) shape.push_back(static_cast<int64_t>(dims[d]));
  auto t = tsr::Tensor::empty(tsr::DType::kString, shape);
  if (!t.ok()) {
    set_error(t.status().with_context(where));
    return -1;
  }
  if (static_cast<size_t>(t->numel()) != count) {
    set_error(tsr::invalid_argument(where, ": shape ", tsr::shape_str(shape), " needs ", t->numel(),
                                    " strings, got ", count));
    return -1;
  }
  auto* dst = t->mut_data<std::string>();
  for (size_t k = 0; k < count; ++k) dst[k].assign(data[k], sizes[k]);
  l->names.emplace_back(name);
  l->tensors.push_back(std::move(t).value());
  return 0;
}
// Appends entry i of `from` (e.g. a run's output list) to `l` under `name`, by handle: the
// tensor's storage is shared, not copied (model.generate() passes present.* outputs on as the next
// step's past_key_values.* this way). `from` may be freed afterwards.
EMSCRIPTEN_KEEPALIVE void tsrw_list_add_from(TensorList* l, const char* name, TensorList* from, int i) {
  l->names.emplace_back(name);
  l->tensors.push_back(from->tensors[static_cast<size_t>(i)]);
}

EMSCRIPTEN_KEEPALIVE const void* tsrw_list_data(TensorList* l, int i) { return l->tensors[static_cast<size_t>(i)].raw(); }
EMSCRIPTEN_KEEPALIVE size_t tsrw_list_nbytes(TensorList* l, int i) { return l->tensors[static_cast<size_t>(i)].nbytes(); }

// Runs the main graph with the named inputs (any order; each graph input exactly once).
// Returns the outputs named as the graph's outputs, or null: kNotFound for an unknown input name,
// kInvalidArgument for a missing/duplicate input or a wrong dtype/shape (the executor's message).
// With `count` > 0 only the outputs names[0..count) are kept, in that order (the others are
// released here, never copied out); kInvalidArgument for a name that is not an output (listing them).
EMSCRIPTEN_KEEPALIVE TensorList* tsrw_run(WebModel* m, TensorList* in, const char* const* names, int count) {
  const auto& outs = m->session->outputs();
  std::vector<size_t> picked;
  for (int j = 0; j < count; ++j) {
    size_t k = 0;
    while (k < outs.size() && outs[k].name != names[j]) ++k;
    if (k == outs.size()) {
      std::string all;
      for (const auto& o : outs) all += tsr::str_cat(all.empty() ? "" : ", ", "\"", o.name, "\"");
      return set_error(tsr::invalid_argument("outputs[", j, "] \"", names[j], "\": the model has no output of that name (outputs: ", all, ")"));
    }
    picked.push_back(k);
  }
  tsr::NamedTensors inputs;
  inputs.reserve(in->names.size());
  for (size_t j = 0; j < in->names.size(); ++j) inputs.emplace_back(in->names[j], in->tensors[j]);
  auto out = m->session->run(inputs);
  if (!out.ok()) return set_error(out.status());
  auto* list = new TensorList;
  if (count > 0) {
    for (size_t k : picked) {
      list->names.push_back((*out)[k].first);
      list->tensors.push_back((*out)[k].second);
    }
    return list;
  }
  for (auto& [name, value] : *out) {
    list->names.push_back(std::move(name));
    list->tensors.push_back(std::move(value));
  }
  return list;
}

EMSCRIPTEN_KEEPALIVE const uint8_t* tsrw_bytes_data(Bytes* b) { return b->data.data(); }
EMSCRIPTEN_KEEPALIVE size_t tsrw_bytes_size(Bytes* b) { return b->data.size(); }
EMSCRIPTEN_KEEPALIVE void tsrw_bytes_free(Bytes* b) { delete b; }

}  // extern "C"
