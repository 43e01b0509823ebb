// Script source text and diagnostics in the compiler style every editor understands:
//
//   model.py:3:8: error: unknown name 'W3'
//       y = X @ W3
//               ^
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace tsr::frontend::script {

// A 1-based position in a source file (col counts bytes; tabs count as one).
struct Loc {
  int line = 0;
  int col = 0;
};

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // Line `line` (1-based) without its newline; "" when out of range.
  std::string line(int line) const;
  // "file:line:col"
  std::string where(Loc loc) const;
  // "file:line:col: <severity>: message\n<source line>\n<caret under col>".
  std::string diagnostic(Loc loc, const std::string& message, const char* severity = "error") const;

 private:
  std::string name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

// A Status whose message is the diagnostic for `loc` (code kInvalidArgument unless given).
Status script_error(const SourceFile& src, Loc loc, const std::string& message,
                    StatusCode code = StatusCode::kInvalidArgument);

}  // namespace tsr::frontend::script
