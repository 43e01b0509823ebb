#include "core/frontend/script/source.h"

namespace tsr::frontend::script {

SourceFile::SourceFile(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::string SourceFile::line(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts_.size()) return "";
  const size_t b = line_starts_[static_cast<size_t>(line - 1)];
  size_t e = text_.find('\n', b);
  if (e == std::string::npos) e = text_.size();
  if (e > b && text_[e - 1] == '\r') --e;
  return text_.substr(b, e - b);
}

std::string SourceFile::where(Loc loc) const { return str_cat(name_, ":", loc.line, ":", loc.col); }

std::string SourceFile::diagnostic(Loc loc, const std::string& message, const char* severity) const {
  std::string out = str_cat(where(loc), ": ", severity, ": ", message);
  const std::string text = line(loc.line);
  if (text.empty()) return out;
  // The caret line keeps the source line's tabs so that it lines up in any tab width.
  std::string caret;
  for (int i = 0; i + 1 < loc.col && static_cast<size_t>(i) < text.size(); ++i) caret += text[static_cast<size_t>(i)] == '\t' ? '\t' : ' ';
  return str_cat(out, "\n    ", text, "\n    ", caret, "^");
}

Status script_error(const SourceFile& src, Loc loc, const std::string& message, StatusCode code) {
  return Status(code, src.diagnostic(loc, message));
}

}  // namespace tsr::frontend::script
