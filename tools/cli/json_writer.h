// A minimal streaming JSON writer for the CLI's machine-readable output (write-only).
//
// Strings are escaped per RFC 8259; bytes that are not valid UTF-8 (names in untrusted models)
// become U+FFFD so the output always parses. Non-finite numbers are written as null.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tsr::cli {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& os, bool pretty = true) : os_(os), pretty_(pretty) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // Inside an object: the next value's key.
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(uint64_t v);
  JsonWriter& value(double v);
  JsonWriter& value(bool v);
  JsonWriter& null();
  JsonWriter& value(const std::vector<int64_t>& v);
  // Finishes the document with a newline.
  void finish() { os_ << '\n'; }

  static void write_escaped(std::ostream& os, std::string_view s);

 private:
  void before_value();
  void newline();

  std::ostream& os_;
  bool pretty_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace tsr::cli
