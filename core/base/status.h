// Status and Expected<T>: the error model of Tessera's core (DESIGN.md §10).
//
// Contract: every fallible function in core/ and backends/ returns Status or Expected<T>; no
// exceptions cross module boundaries (the WASM build compiles with exceptions off). Both types
// are [[nodiscard]]. Messages name the place of the error, e.g.
//   graph[0].node[12] (Conv "conv_3").input[1]: dtype i64, expected f32
// Codes are grouped so that tools can map them to documented exit codes (see tools/cli).
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tsr {

// One numbering for every front door: a code's value is the `tessera` CLI's exit code, the C
// API's TSR_ERR_* value (tessera_c.h) and, by name, tessera-web's TesseraError.code (2 is the
// CLI's own usage error; 1 is never used, so a crash or an uncaught failure is not mistaken for
// a Tessera error).
enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidModel = 3,     // the model file or graph is malformed (load / verify time)
  kInvalidArgument = 4,  // a caller-supplied value is wrong (input shape, dtype, option)
  kUnsupported = 5,      // valid request that this build cannot execute (op, dtype, attribute)
  kNotFound = 6,         // a named file, input, signature or entry point does not exist
  kResource = 7,         // allocation or a configured limit was exceeded
  kBackend = 8,          // a device/backend failure (driver error, kernel launch)
  kInternal = 9,         // a broken invariant inside Tessera: a bug
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>", for printing.
  std::string to_string() const;
  // Returns a copy whose message is prefixed with `context + ": "` (used to add the place).
  Status with_context(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status ok_status() { return Status(); }

// Concatenates any streamable values into a string: str_cat("node[", i, "]").
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <typename... Args>
Status invalid_model(const Args&... a) { return Status(StatusCode::kInvalidModel, str_cat(a...)); }
template <typename... Args>
Status invalid_argument(const Args&... a) { return Status(StatusCode::kInvalidArgument, str_cat(a...)); }
template <typename... Args>
Status unsupported(const Args&... a) { return Status(StatusCode::kUnsupported, str_cat(a...)); }
template <typename... Args>
Status not_found(const Args&... a) { return Status(StatusCode::kNotFound, str_cat(a...)); }
template <typename... Args>
Status resource_error(const Args&... a) { return Status(StatusCode::kResource, str_cat(a...)); }
template <typename... Args>
Status backend_error(const Args&... a) { return Status(StatusCode::kBackend, str_cat(a...)); }
template <typename... Args>
Status internal_error(const Args&... a) { return Status(StatusCode::kInternal, str_cat(a...)); }

// Expected<T>: a value or a non-ok Status. Constructing one from an OK Status is a bug in the
// caller (there is no value to return): it becomes a kInternal error saying so, never an Expected
// that is neither a value nor an error (ExecuTorch's Result does the same).
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Expected(Status status)  // NOLINT(google-explicit-constructor)
      : v_(status.ok() ? Status(StatusCode::kInternal, "Expected<T> constructed from an OK status (no value)")
                       : std::move(status)) {}

  bool ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(v_);
  }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace tsr

#define TSR_CONCAT_INNER_(a, b) a##b
#define TSR_CONCAT_(a, b) TSR_CONCAT_INNER_(a, b)

#define TSR_RETURN_IF_ERROR(expr)                 \
  do {                                            \
    ::tsr::Status tsr_status_ = (expr);           \
    if (!tsr_status_.ok()) return tsr_status_;    \
  } while (0)

#define TSR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

// TSR_ASSIGN_OR_RETURN(auto x, make_x()); returns the error Status from the enclosing function.
// It expands to several statements: inside an unbraced if/for, wrap it in braces.
#define TSR_ASSIGN_OR_RETURN(lhs, expr) \
  TSR_ASSIGN_OR_RETURN_IMPL_(TSR_CONCAT_(tsr_expected_, __LINE__), lhs, expr)
