#include "tools/cli/json_writer.h"

#include <cmath>
#include <cstdio>

namespace tsr::cli {

void JsonWriter::newline() {
  if (!pretty_) return;
  os_ << '\n';
  for (size_t i = 0; i < first_.size(); ++i) os_ << "  ";
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) os_ << ',';
    first_.back() = false;
    newline();
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  os_ << '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  os_ << '}';
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  os_ << '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  os_ << ']';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  write_escaped(os_, k);
  os_ << (pretty_ ? ": " : ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  write_escaped(os_, s);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t v) {
  before_value();
  os_ << v;
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t v) {
  before_value();
  os_ << v;
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    os_ << "null";
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  os_ << buf;
  return *this;
}

JsonWriter& JsonWriter::value(bool v) {
  before_value();
  os_ << (v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  os_ << "null";
  return *this;
}

JsonWriter& JsonWriter::value(const std::vector<int64_t>& v) {
  before_value();
  os_ << '[';
  for (size_t i = 0; i < v.size(); ++i) os_ << (i ? ", " : "") << v[i];
  os_ << ']';
  return *this;
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
static size_t utf8_len(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = 0;
  uint32_t cp = 0;
  if (b < 0x80) return 1;
  if ((b & 0xe0) == 0xc0) { n = 2; cp = b & 0x1f; }
  else if ((b & 0xf0) == 0xe0) { n = 3; cp = b & 0x0f; }
  else if ((b & 0xf8) == 0xf0) { n = 4; cp = b & 0x07; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3f);
  }
  // Reject overlong forms, surrogates and values past U+10FFFF.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

void JsonWriter::write_escaped(std::ostream& os, std::string_view s) {
  os << '"';
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '"': os << "\\\""; ++i; continue;
      case '\\': os << "\\\\"; ++i; continue;
      case '\n': os << "\\n"; ++i; continue;
      case '\r': os << "\\r"; ++i; continue;
      case '\t': os << "\\t"; ++i; continue;
      default: break;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      os << buf;
      ++i;
      continue;
    }
    const size_t n = utf8_len(s, i);
    if (n == 0) {
      os << "\\ufffd";
      ++i;
      continue;
    }
    os.write(s.data() + i, static_cast<std::streamsize>(n));
    i += n;
  }
  os << '"';
}

}  // namespace tsr::cli
