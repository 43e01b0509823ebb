// The wasm's C ABI for the script front end (core/frontend/script): eager, trace, convert.
#include <emscripten/emscripten.h>

#include <memory>

#include "core/frontend/script/script.h"
#include "tessera/model.h"
#include "web/src/web_api.h"

namespace {

struct ScriptResult {
  tsr::web::TensorList outputs;
  tsr::web::Bytes warnings;  // "\n"-joined diagnostics
  tsr::web::Bytes graph;     // .tsr bytes (trace/convert), empty in eager mode
  bool has_graph = false;
};

}  // namespace

extern "C" {

// Runs `source` (named `file` in diagnostics) from function `entry` in `mode` (0 eager, 1 trace,
// 2 convert) with the named arguments `args`. Null on error: the diagnostic ("file:line:col:
// error: ...") with the script language's codes (kInvalidArgument, kUnsupported, kNotFound).
EMSCRIPTEN_KEEPALIVE ScriptResult* tsrw_script(const char* file, const char* source, const char* entry, int mode,
                                              tsr::web::TensorList* args) {
  namespace sc = tsr::frontend::script;
  sc::ScriptOptions so;
  so.entry = entry;
  if (mode == 0) so.mode = sc::Mode::kEager;
  else if (mode == 1) so.mode = sc::Mode::kTrace;
  else if (mode == 2) so.mode = sc::Mode::kConvert;
  else return tsr::web::set_error(tsr::invalid_argument("mode must be eager, trace or convert"));
  for (size_t k = 0; k < args->names.size(); ++k) so.inputs.emplace_back(args->names[k], args->tensors[k]);
  auto r = sc::run_script(file, source, so);
  if (!r.ok()) return tsr::web::set_error(r.status());
  auto res = std::make_unique<ScriptResult>();
  res->outputs.names = r->output_names;
  res->outputs.tensors = std::move(r->outputs);
  std::string w;
  for (const std::string& line : r->warnings) w += (w.empty() ? "" : "\n") + line;
  res->warnings.data.assign(w.begin(), w.end());
  if (r->model) {
    auto bytes = tsr::Model(r->model).serialize();
    if (!bytes.ok()) return tsr::web::set_error(bytes.status());
    res->graph.data = std::move(bytes).value();
    res->has_graph = true;
  }
  return res.release();
}

// Views owned by the result (freed with it).
EMSCRIPTEN_KEEPALIVE tsr::web::TensorList* tsrw_script_outputs(ScriptResult* r) { return &r->outputs; }
EMSCRIPTEN_KEEPALIVE tsr::web::Bytes* tsrw_script_warnings(ScriptResult* r) { return &r->warnings; }
EMSCRIPTEN_KEEPALIVE tsr::web::Bytes* tsrw_script_graph(ScriptResult* r) { return r->has_graph ? &r->graph : nullptr; }
EMSCRIPTEN_KEEPALIVE void tsrw_script_free(ScriptResult* r) { delete r; }

}  // extern "C"
