// The C API (core/include/tessera/tessera_c.h) over the C++ API (tsr::Model, tsr::Session). Every entry point converts
// Status into a tsr_error and never lets a C++ exception escape (the core does not throw;
// allocation failure of std containers would terminate, as everywhere in Tessera).
#include "core/include/tessera/tessera_c.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/c_api/c_api_internal.h"

namespace tsr::c_api {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<const void*, Kind> live;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: handles may be freed during exit
  return *r;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kModel: return "tsr_model";
    case Kind::kOptions: return "tsr_session_options";
    case Kind::kSession: return "tsr_session";
    case Kind::kValue: return "tsr_value";
    case Kind::kTrainer: return "tsr_trainer";
    case Kind::kTrainingSpec: return "tsr_training_spec";
  }
  return "handle";
}

}  // namespace

void track_raw(const void* p, Kind k) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().live[p] = k;
}

bool is_live(const void* p, Kind k) {
  if (!p) return false;
  std::lock_guard<std::mutex> lock(registry().mu);
  auto it = registry().live.find(p);
  return it != registry().live.end() && it->second == k;
}

bool untrack(const void* p, Kind k) {
  if (!p) return false;
  std::lock_guard<std::mutex> lock(registry().mu);
  auto it = registry().live.find(p);
  if (it == registry().live.end() || it->second != k) return false;
  registry().live.erase(it);
  return true;
}

void set_error(tsr_error** err, int code, std::string message) {
  if (!err) return;
  *err = new (std::nothrow) tsr_error{code, std::move(message)};
}

void set_error(tsr_error** err, const tsr::Status& s) { set_error(err, static_cast<int>(s.code()), s.message()); }

bool check_handle(const void* p, Kind k, const char* where, tsr_error** err) {
  if (is_live(p, k)) return true;
  set_error(err, TSR_ERR_INVALID_ARGUMENT,
            tsr::str_cat(where, ": ", kind_name(k), p ? " is not a live handle (already freed?)" : " is NULL"));
  return false;
}

bool known_dtype(int d) {
  switch (d) {
    case TSR_F32: case TSR_U8: case TSR_I8: case TSR_I32: case TSR_I64: case TSR_BOOL: case TSR_F16: case TSR_F64:
      return true;
    default:
      return false;
  }
}

}  // namespace tsr::c_api

namespace {

using namespace tsr::c_api;

tsr_model* load(tsr::Expected<tsr::Model> m, tsr_error** err) {
  if (!m.ok()) {
    set_error(err, m.status());
    return nullptr;
  }
  auto* h = new (std::nothrow) tsr_model{std::move(m).value()};
  if (!h) set_error(err, TSR_ERR_RESOURCE, "tsr_model_load: out of memory");
  return track(h, Kind::kModel);
}

}  // namespace

extern "C" {

int tsr_c_api_version(void) { return TSR_C_API_VERSION; }

tsr_model* tsr_model_load_file(const char* path, tsr_error** err) {
  if (!path) {
    set_error(err, TSR_ERR_INVALID_ARGUMENT, "tsr_model_load_file: path is NULL");
    return nullptr;
  }
  return load(tsr::Model::load(path), err);
}

tsr_model* tsr_model_load_memory(const void* data, size_t size, tsr_error** err) {
  if (!data || size == 0) {
    set_error(err, TSR_ERR_INVALID_ARGUMENT,
              data ? "tsr_model_load_memory: size is 0" : "tsr_model_load_memory: data is NULL");
    return nullptr;
  }
  // The caller keeps the bytes alive (header contract), so the owner is empty.
  return load(tsr::Model::load_tsr_buffer(data, size, nullptr), err);
}

void tsr_model_free(tsr_model* model) {
  if (untrack(model, Kind::kModel)) delete model;
}

tsr_session_options* tsr_session_options_create(void) {
  return track(new (std::nothrow) tsr_session_options{}, Kind::kOptions);
}

void tsr_session_options_set_threads(tsr_session_options* o, int threads) {
  if (is_live(o, Kind::kOptions)) o->options.num_threads = threads;
}

void tsr_session_options_set_device(tsr_session_options* o, const char* device) {
  if (is_live(o, Kind::kOptions)) o->options.device = device ? device : "cpu";
}

void tsr_session_options_set_optimization(tsr_session_options* o, int level) {
  if (!is_live(o, Kind::kOptions)) return;
  if (level == TSR_OPTIMIZE_NONE) o->options.optimization = tsr::OptimizationLevel::kNone;
  if (level == TSR_OPTIMIZE_ALL) o->options.optimization = tsr::OptimizationLevel::kAll;
}

void tsr_session_options_set_fast_math(tsr_session_options* o, int mode) {
  if (!is_live(o, Kind::kOptions)) return;
  if (mode == TSR_FAST_MATH_NONE) o->options.fast_math = tsr::FastMath::kNone;
  if (mode == TSR_FAST_MATH_BF16) o->options.fast_math = tsr::FastMath::kBf16;
}

int tsr_fast_math_supported(int mode) {
  if (mode == TSR_FAST_MATH_NONE) return 1;
  return mode == TSR_FAST_MATH_BF16 && tsr::fast_math_supported(tsr::FastMath::kBf16) ? 1 : 0;
}

void tsr_session_options_set_max_memory(tsr_session_options* o, uint64_t bytes) {
  if (is_live(o, Kind::kOptions)) o->options.max_memory_bytes = bytes;
}

void tsr_session_options_free(tsr_session_options* o) {
  if (untrack(o, Kind::kOptions)) delete o;
}

tsr_session* tsr_session_create(const tsr_model* model, const tsr_session_options* options, tsr_error** err) {
  if (!check_handle(model, Kind::kModel, "tsr_session_create: model", err)) return nullptr;
  if (options && !check_handle(options, Kind::kOptions, "tsr_session_create: options", err)) return nullptr;
  auto s = tsr::Session::create(model->model, options ? options->options : tsr::SessionOptions{});
  if (!s.ok()) {
    set_error(err, s.status());
    return nullptr;
  }
  auto h = std::unique_ptr<tsr_session>(new (std::nothrow) tsr_session{});
  if (!h) {
    set_error(err, TSR_ERR_RESOURCE, "tsr_session_create: out of memory");
    return nullptr;
  }
  h->session = std::move(s).value();
  return track(h.release(), Kind::kSession);
}

void tsr_session_free(tsr_session* session) {
  if (untrack(session, Kind::kSession)) delete session;
}

size_t tsr_session_input_count(const tsr_session* s) {
  return is_live(s, Kind::kSession) ? s->session->inputs().size() : 0;
}

size_t tsr_session_output_count(const tsr_session* s) {
  return is_live(s, Kind::kSession) ? s->session->outputs().size() : 0;
}

const char* tsr_session_input_name(const tsr_session* s, size_t i) {
  if (!is_live(s, Kind::kSession) || i >= s->session->inputs().size()) return nullptr;
  return s->session->inputs()[i].name.c_str();
}

const char* tsr_session_output_name(const tsr_session* s, size_t i) {
  if (!is_live(s, Kind::kSession) || i >= s->session->outputs().size()) return nullptr;
  return s->session->outputs()[i].name.c_str();
}

int tsr_session_run(tsr_session* s, const tsr_value* const* inputs, size_t n_inputs, tsr_value** outputs,
                    size_t n_outputs, tsr_error** err) {
  auto fail = [&](int code, std::string msg) {
    set_error(err, code, std::move(msg));
    return code;
  };
  if (outputs)
    for (size_t i = 0; i < n_outputs; ++i) outputs[i] = nullptr;
  if (!check_handle(s, Kind::kSession, "tsr_session_run: session", err)) return TSR_ERR_INVALID_ARGUMENT;
  const std::vector<tsr::ValueInfo>& input_info = s->session->inputs();
  const std::vector<tsr::ValueInfo>& output_info = s->session->outputs();
  if (n_inputs != input_info.size())
    return fail(TSR_ERR_INVALID_ARGUMENT,
                tsr::str_cat("tsr_session_run: ", n_inputs, " inputs given, the model takes ", input_info.size()));
  if (n_outputs != output_info.size())
    return fail(TSR_ERR_INVALID_ARGUMENT, tsr::str_cat("tsr_session_run: room for ", n_outputs,
                                                      " outputs given, the model returns ", output_info.size()));
  if (n_inputs && !inputs) return fail(TSR_ERR_INVALID_ARGUMENT, "tsr_session_run: inputs is NULL");
  if (n_outputs && !outputs) return fail(TSR_ERR_INVALID_ARGUMENT, "tsr_session_run: outputs is NULL");
  std::vector<tsr::Tensor> in;
  in.reserve(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) {
    std::string where = tsr::str_cat("tsr_session_run: input[", i, "] (\"", input_info[i].name, "\")");
    if (!check_handle(inputs[i], Kind::kValue, where.c_str(), err)) return TSR_ERR_INVALID_ARGUMENT;
    in.push_back(inputs[i]->tensor);
  }
  auto r = s->session->run(in);
  if (!r.ok()) {
    set_error(err, r.status());
    return static_cast<int>(r.status().code());
  }
  std::vector<tsr::Tensor> outs = std::move(r).value();
  if (outs.size() != n_outputs)
    return fail(TSR_ERR_INTERNAL, tsr::str_cat("tsr_session_run: the session returned ", outs.size(),
                                               " outputs, expected ", n_outputs));
  for (size_t i = 0; i < n_outputs; ++i) {
    if (outs[i].kind() != tsr::ValueKind::kTensor || !known_dtype(static_cast<int>(outs[i].dtype()))) {
      for (size_t j = 0; j < i; ++j) tsr_value_free(outputs[j]), outputs[j] = nullptr;
      return fail(TSR_ERR_UNSUPPORTED,
                  tsr::str_cat("tsr_session_run: output[", i, "] (\"", output_info[i].name, "\") is a ",
                               outs[i].kind() != tsr::ValueKind::kTensor ? tsr::value_kind_name(outs[i].kind())
                                                                         : tsr::dtype_name(outs[i].dtype()),
                               ", which the C API cannot return"));
    }
    outputs[i] = track(new (std::nothrow) tsr_value{std::move(outs[i])}, Kind::kValue);
    if (!outputs[i]) {
      for (size_t j = 0; j < i; ++j) tsr_value_free(outputs[j]), outputs[j] = nullptr;
      return fail(TSR_ERR_RESOURCE, "tsr_session_run: out of memory");
    }
  }
  return 0;
}

tsr_value* tsr_value_create_tensor(tsr_dtype dtype, const int64_t* shape, size_t rank, const void* data,
                                   size_t bytes, tsr_error** err) {
  const char* where = "tsr_value_create_tensor";
  // A C caller may pass any int as the enum; reading a C++ enum object outside its values is
  // undefined, so the code is taken from the object's bytes.
  int code = 0;
  static_assert(sizeof(code) == sizeof(dtype), "tsr_dtype is int-sized");
  std::memcpy(&code, &dtype, sizeof code);
  if (!known_dtype(code)) {
    set_error(err, TSR_ERR_INVALID_ARGUMENT, tsr::str_cat(where, ": unknown dtype ", code));
    return nullptr;
  }
  if (rank && !shape) {
    set_error(err, TSR_ERR_INVALID_ARGUMENT, tsr::str_cat(where, ": shape is NULL with rank ", rank));
    return nullptr;
  }
  tsr::Shape dims(shape, shape + rank);
  const size_t elem = tsr::dtype_size(static_cast<tsr::DType>(dtype));
  // Overflow-checked element count: the shape comes from the caller.
  uint64_t count = 1;
  for (size_t k = 0; k < rank; ++k) {
    if (dims[k] < 0) {
      set_error(err, TSR_ERR_INVALID_ARGUMENT, tsr::str_cat(where, ": shape[", k, "] = ", dims[k], " is negative"));
      return nullptr;
    }
    if (dims[k] && count > tsr::max_tensor_bytes() / static_cast<uint64_t>(dims[k])) {
      set_error(err, TSR_ERR_RESOURCE, tsr::str_cat(where, ": shape ", tsr::shape_str(dims), " is too large"));
      return nullptr;
    }
    count *= static_cast<uint64_t>(dims[k]);
  }
  if (count * elem != bytes) {
    set_error(err, TSR_ERR_INVALID_ARGUMENT,
              tsr::str_cat(where, ": ", bytes, " bytes given, shape ", tsr::shape_str(dims), " of ",
                           tsr::dtype_name(static_cast<tsr::DType>(dtype)), " needs ", count * elem));
    return nullptr;
  }
  if (bytes && !data) {
    set_error(err, TSR_ERR_INVALID_ARGUMENT, tsr::str_cat(where, ": data is NULL"));
    return nullptr;
  }
  auto t = tsr::Tensor::empty(static_cast<tsr::DType>(dtype), dims);
  if (!t.ok()) {
    set_error(err, t.status());
    return nullptr;
  }
  tsr::Tensor tensor = std::move(t).value();
  if (bytes) std::memcpy(tensor.raw_mut(), data, bytes);
  auto* v = new (std::nothrow) tsr_value{std::move(tensor)};
  if (!v) set_error(err, TSR_ERR_RESOURCE, tsr::str_cat(where, ": out of memory"));
  return track(v, Kind::kValue);
}

tsr_dtype tsr_value_dtype(const tsr_value* v) {
  return is_live(v, Kind::kValue) ? static_cast<tsr_dtype>(v->tensor.dtype()) : static_cast<tsr_dtype>(0);
}

size_t tsr_value_rank(const tsr_value* v) { return is_live(v, Kind::kValue) ? v->tensor.shape().size() : 0; }

const int64_t* tsr_value_shape(const tsr_value* v) {
  if (!is_live(v, Kind::kValue) || v->tensor.shape().empty()) return nullptr;
  return v->tensor.shape().data();
}

const void* tsr_value_data(const tsr_value* v) {
  if (!is_live(v, Kind::kValue) || v->tensor.nbytes() == 0) return nullptr;
  return v->tensor.raw();
}

size_t tsr_value_size(const tsr_value* v) { return is_live(v, Kind::kValue) ? v->tensor.nbytes() : 0; }

void tsr_value_free(tsr_value* v) {
  if (untrack(v, Kind::kValue)) delete v;
}

int tsr_error_code(const tsr_error* e) { return e ? e->code : TSR_ERR_INVALID_ARGUMENT; }

const char* tsr_error_message(const tsr_error* e) { return e ? e->message.c_str() : ""; }

void tsr_error_free(tsr_error* e) { delete e; }

}  // extern "C"
