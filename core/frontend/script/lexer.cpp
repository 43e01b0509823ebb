#include "core/frontend/script/lexer.h"

#include <cerrno>
#include <cstdlib>

namespace tsr::frontend::script {
namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Longest operators first so that "**" wins over "*".
constexpr const char* kOps[] = {"**=", "//=", ">>=", "<<=", "->", "**", "//", "==", "!=", "<=", ">=", "+=", "-=",
                                "*=",  "/=",  "%=",  "@=",  "&=", "|=", "^=", "<<", ">>", ":=", "+",  "-",  "*",
                                "/",   "%",   "@",   "<",   ">",  "=",  "(",  ")",  "[",  "]",  "{",  "}",  ",",
                                ":",   ".",   ";",   "&",   "|",  "^",  "~"};

}  // namespace

Expected<std::vector<Token>> tokenize(const SourceFile& src) {
  const std::string& s = src.text();
  std::vector<Token> out;
  std::vector<int> indents = {0};
  int depth = 0;  // bracket nesting: newlines and indentation are ignored inside
  size_t i = 0;
  int line = 1;
  size_t line_start = 0;
  bool at_line_start = true;
  auto loc_at = [&](size_t p) { return Loc{line, static_cast<int>(p - line_start) + 1}; };
  auto push = [&](Tok k, std::string text, Loc loc) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.loc = loc;
    out.push_back(std::move(t));
  };

  while (i <= s.size()) {
    if (at_line_start && depth == 0) {
      // Measure the indentation; blank and comment-only lines do not count.
      int col = 0;
      size_t p = i;
      while (p < s.size() && (s[p] == ' ' || s[p] == '\t' || s[p] == '\f')) {
        col = s[p] == '\t' ? (col / 8 + 1) * 8 : s[p] == ' ' ? col + 1 : 0;
        ++p;
      }
      if (p >= s.size()) {
        i = p;
        break;
      }
      if (s[p] == '#' || s[p] == '\n' || s[p] == '\r') {
        while (p < s.size() && s[p] != '\n') ++p;
        if (p < s.size()) {
          ++p;
          ++line;
          line_start = p;
        }
        i = p;
        continue;
      }
      at_line_start = false;
      const Loc loc = loc_at(p);
      if (col > indents.back()) {
        indents.push_back(col);
        push(Tok::kIndent, "", loc);
      } else {
        while (col < indents.back()) {
          indents.pop_back();
          push(Tok::kDedent, "", loc);
        }
        if (col != indents.back())
          return script_error(src, loc, "unindent does not match any outer indentation level");
      }
      i = p;
    }
    if (i >= s.size()) break;
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '\\' && i + 1 < s.size() && (s[i + 1] == '\n' || (s[i + 1] == '\r' && i + 2 < s.size() && s[i + 2] == '\n'))) {
      i = s.find('\n', i) + 1;
      ++line;
      line_start = i;
      continue;
    }
    if (c == '\n') {
      if (depth == 0 && !out.empty() && out.back().kind != Tok::kNewline) push(Tok::kNewline, "", loc_at(i));
      ++i;
      ++line;
      line_start = i;
      at_line_start = true;
      continue;
    }
    const Loc loc = loc_at(i);
    if (is_name_start(c)) {
      size_t e = i;
      while (e < s.size() && (is_name_start(s[e]) || is_digit(s[e]))) ++e;
      push(Tok::kName, s.substr(i, e - i), loc);
      i = e;
      continue;
    }
    if (is_digit(c) || (c == '.' && i + 1 < s.size() && is_digit(s[i + 1]))) {
      size_t e = i;
      bool is_float = false;
      while (e < s.size() && (is_digit(s[e]) || s[e] == '_')) ++e;
      if (e < s.size() && s[e] == '.') {
        is_float = true;
        ++e;
        while (e < s.size() && is_digit(s[e])) ++e;
      }
      if (e < s.size() && (s[e] == 'e' || s[e] == 'E')) {
        size_t p = e + 1;
        if (p < s.size() && (s[p] == '+' || s[p] == '-')) ++p;
        if (p < s.size() && is_digit(s[p])) {
          is_float = true;
          e = p;
          while (e < s.size() && is_digit(s[e])) ++e;
        }
      }
      if (e < s.size() && (is_name_start(s[e])))
        return script_error(src, loc_at(e), str_cat("invalid number literal '", s.substr(i, e - i + 1), "'"));
      std::string text;
      for (size_t k = i; k < e; ++k)
        if (s[k] != '_') text += s[k];
      Token t;
      t.loc = loc;
      t.text = text;
      errno = 0;
      if (is_float) {
        t.kind = Tok::kFloat;
        t.f = std::strtod(text.c_str(), nullptr);
      } else {
        t.kind = Tok::kInt;
        t.i = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE) return script_error(src, loc, str_cat("integer literal ", text, " does not fit in 64 bits"));
      }
      out.push_back(std::move(t));
      i = e;
      continue;
    }
    if (c == '"' || c == '\'') {
      if (s.compare(i, 3, std::string(3, c)) == 0)
        return script_error(src, loc, "triple-quoted strings are not supported", StatusCode::kUnsupported);
      std::string value;
      size_t p = i + 1;
      for (;;) {
        if (p >= s.size() || s[p] == '\n') return script_error(src, loc, "unterminated string literal");
        if (s[p] == c) break;
        if (s[p] == '\\' && p + 1 < s.size()) {
          const char e = s[p + 1];
          value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
          p += 2;
          continue;
        }
        value += s[p++];
      }
      push(Tok::kString, std::move(value), loc);
      i = p + 1;
      continue;
    }
    bool matched = false;
    for (const char* op : kOps) {
      const std::string_view o(op);
      if (s.compare(i, o.size(), o) == 0) {
        if (o == "(" || o == "[" || o == "{") ++depth;
        if ((o == ")" || o == "]" || o == "}") && depth > 0) --depth;
        push(Tok::kOp, std::string(o), loc);
        i += o.size();
        matched = true;
        break;
      }
    }
    if (!matched) {
      const unsigned char u = static_cast<unsigned char>(c);
      return script_error(src, loc,
                          u >= 0x20 && u < 0x7f ? str_cat("unexpected character '", c, "'")
                                                : str_cat("unexpected byte 0x", "0123456789abcdef"[u >> 4], "0123456789abcdef"[u & 15]));
    }
  }
  const Loc end{line, static_cast<int>(i - line_start) + 1};
  if (!out.empty() && out.back().kind != Tok::kNewline) push(Tok::kNewline, "", end);
  while (indents.size() > 1) {
    indents.pop_back();
    push(Tok::kDedent, "", end);
  }
  push(Tok::kEnd, "", end);
  return out;
}

}  // namespace tsr::frontend::script
