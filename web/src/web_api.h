// The C ABI that web/js/tessera.mjs binds (exported from the wasm, see web/CMakeLists.txt).
//
// Handles are opaque pointers owned by the caller (JS), freed by the matching *_free call.
// Functions that can fail return null (or -1) and leave the error in tsrw_last_error_code()
// (a tsr::StatusCode value) and tsrw_last_error_message() (the path-addressed message, as the
// CLI prints it); a successful call leaves the last error as it was. Bytes and strings passed in
// are copied; pointers handed out stay valid until the owning handle is freed.
// Not thread-safe: the JS API serializes all calls on one module instance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/tensor/tensor.h"
#include "tessera/model.h"
#include "tessera/session.h"

namespace tsr::web {

// Named tensors: run inputs/outputs and script arguments/results.
struct TensorList {
  std::vector<std::string> names;
  std::vector<Tensor> tensors;
};

// A loaded model: its prepared CPU session (session->model(): the model as loaded).
struct WebModel {
  std::unique_ptr<Session> session;
};

// An owned byte buffer handed to JS (.tsr bytes, strings).
struct Bytes {
  std::vector<uint8_t> data;
};

// Records `s` as the last error; returns nullptr for the callers' convenience.
std::nullptr_t set_error(const Status& s);

// Writes `s` as a JSON string literal.
void json_str(std::ostream& os, std::string_view s);
// Writes [{name,dtype,kind,shape}]: dtype a DType value, kind a ValueKind value, shape null
// (unknown rank) or dims (numbers, or strings for dynamic dims: the dim's name, else "d<index>").
void json_values(std::ostream& os, const std::vector<ValueInfo>& values);

}  // namespace tsr::web
