// What the C API's translation units share (core/c_api/tessera_c.cpp for models, sessions and
// values; tessera_c_train.cpp for trainers, which needs the passes and so stays out of the
// minimal runtimes): the handle structs and the registry of live handles.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/include/tessera/tessera_c.h"
#include "tessera/session.h"

struct tsr_error {
  int code;
  std::string message;
};

struct tsr_model {
  tsr::Model model;
};

struct tsr_session_options {
  tsr::SessionOptions options;
};

struct tsr_session {
  std::unique_ptr<tsr::Session> session;
};

struct tsr_value {
  tsr::Tensor tensor;
};

namespace tsr::c_api {

// Live handles by address and kind: how a freed (or never created) handle is told apart from a
// live one without dereferencing it. An address reused by a new handle of the same kind is
// indistinguishable, which is why the header calls this detection best-effort.
enum class Kind : uint8_t { kModel, kOptions, kSession, kValue, kTrainer, kTrainingSpec };

// Registers p (may be NULL) as a live handle of kind k.
void track_raw(const void* p, Kind k);
template <typename T>
T* track(T* p, Kind k) {
  track_raw(p, k);
  return p;
}
bool is_live(const void* p, Kind k);
// Removes p from the registry; false when it was not live (NULL, double free, wrong kind).
bool untrack(const void* p, Kind k);

void set_error(tsr_error** err, int code, std::string message);
void set_error(tsr_error** err, const Status& s);
// INVALID_ARGUMENT naming the function and argument when `p` is not a live handle of kind k.
bool check_handle(const void* p, Kind k, const char* where, tsr_error** err);
bool known_dtype(int d);

}  // namespace tsr::c_api
