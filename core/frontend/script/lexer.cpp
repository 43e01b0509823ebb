#include "core/frontend/script/lexer.h"

#include <cerrno>
#include <cstdlib>
#include <set>

namespace tsr::frontend::script {
namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Longest operators first so that "**" wins over "*".
constexpr const char* kOps[] = {"**=", "//=", ">>=", "<<=", "->", "**", "//", "==", "!=", "<=", ">=", "+=", "-=",
                                "*=",  "/=",  "%=",  "@=",  "&=", "|=", "^=", "<<", ">>", ":=", "+",  "-",  "*",
                                "/",   "%",   "@",   "<",   ">",  "=",  "(",  ")",  "[",  "]",  "{",  "}",  ",",
                                ":",   ".",   ";",   "&",   "|",  "^",  "~"};

// The tokenizer's state: the position in the text, the line, the indentation stack and the
// bracket depth. Each method consumes one kind of token.
class Lexer {
 public:
  explicit Lexer(const SourceFile& src) : src_(src), s_(src.text()) {}

  Expected<std::vector<Token>> run() {
    while (i_ <= s_.size()) {
      if (at_line_start_ && depth_ == 0) {
        TSR_ASSIGN_OR_RETURN(const LineStart ls, line_start());
        if (ls == LineStart::kEnd) break;
        if (ls == LineStart::kBlank) continue;
      }
      if (i_ >= s_.size()) break;
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
        ++i_;
        continue;
      }
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        continue;
      }
      if (c == '\\' && i_ + 1 < s_.size() &&
          (s_[i_ + 1] == '\n' || (s_[i_ + 1] == '\r' && i_ + 2 < s_.size() && s_[i_ + 2] == '\n'))) {
        i_ = s_.find('\n', i_) + 1;
        new_line(i_);
        continue;
      }
      if (c == '\n') {
        if (depth_ == 0 && !out_.empty() && out_.back().kind != Tok::kNewline) push(Tok::kNewline, "", loc_at(i_));
        ++i_;
        new_line(i_);
        // Inside brackets a newline only continues the expression: no indentation to read, and
        // the closing bracket must not leave a stale line start (which would swallow the newline
        // that ends the statement).
        at_line_start_ = depth_ == 0;
        continue;
      }
      const size_t start = i_;  // each branch below pushes one token and moves i_ past it
      if (is_name_start(c)) {
        name();
      } else if (is_digit(c) || (c == '.' && i_ + 1 < s_.size() && is_digit(s_[i_ + 1]))) {
        TSR_RETURN_IF_ERROR(number());
      } else if (c == '"' || c == '\'') {
        TSR_RETURN_IF_ERROR(string_literal());
      } else {
        TSR_RETURN_IF_ERROR(op());
      }
      out_.back().begin = start;
      out_.back().end = i_;
    }
    const Loc end{line_, static_cast<int>(i_ - line_start_) + 1};
    if (!out_.empty() && out_.back().kind != Tok::kNewline) push(Tok::kNewline, "", end);
    while (indents_.size() > 1) {
      indents_.pop_back();
      push(Tok::kDedent, "", end);
    }
    push(Tok::kEnd, "", end);
    return std::move(out_);
  }

 private:
  enum class LineStart { kEnd, kBlank, kCode };

  Loc loc_at(size_t p) const { return Loc{line_, static_cast<int>(p - line_start_) + 1}; }
  void new_line(size_t start) {
    ++line_;
    line_start_ = start;
  }
  void push(Tok k, std::string text, Loc loc) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.loc = loc;
    out_.push_back(std::move(t));
  }

  // At the start of a line outside brackets: measures the indentation (blank and comment-only
  // lines do not count, kBlank skips them) and emits Indent/Dedent tokens.
  Expected<LineStart> line_start() {
    int col = 0;
    size_t p = i_;
    while (p < s_.size() && (s_[p] == ' ' || s_[p] == '\t' || s_[p] == '\f')) {
      col = s_[p] == '\t' ? (col / 8 + 1) * 8 : s_[p] == ' ' ? col + 1 : 0;
      ++p;
    }
    if (p >= s_.size()) {
      i_ = p;
      return LineStart::kEnd;
    }
    if (s_[p] == '#' || s_[p] == '\n' || s_[p] == '\r') {
      while (p < s_.size() && s_[p] != '\n') ++p;
      if (p < s_.size()) {
        ++p;
        new_line(p);
      }
      i_ = p;
      return LineStart::kBlank;
    }
    at_line_start_ = false;
    const Loc loc = loc_at(p);
    if (col > indents_.back()) {
      indents_.push_back(col);
      push(Tok::kIndent, "", loc);
    } else {
      while (col < indents_.back()) {
        indents_.pop_back();
        push(Tok::kDedent, "", loc);
      }
      if (col != indents_.back()) return script_error(src_, loc, "unindent does not match any outer indentation level");
    }
    i_ = p;
    return LineStart::kCode;
  }

  void name() {
    size_t e = i_;
    while (e < s_.size() && (is_name_start(s_[e]) || is_digit(s_[e]))) ++e;
    push(Tok::kName, s_.substr(i_, e - i_), loc_at(i_));
    i_ = e;
  }

  // An int (decimal, `_` separators) or a float (fraction and/or exponent).
  Status number() {
    const Loc loc = loc_at(i_);
    size_t e = i_;
    bool is_float = false;
    while (e < s_.size() && (is_digit(s_[e]) || s_[e] == '_')) ++e;
    if (e < s_.size() && s_[e] == '.') {
      is_float = true;
      ++e;
      while (e < s_.size() && is_digit(s_[e])) ++e;
    }
    if (e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
      size_t p = e + 1;
      if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
      if (p < s_.size() && is_digit(s_[p])) {
        is_float = true;
        e = p;
        while (e < s_.size() && is_digit(s_[e])) ++e;
      }
    }
    if (e < s_.size() && (is_name_start(s_[e])))
      return script_error(src_, loc_at(e), str_cat("invalid number literal '", s_.substr(i_, e - i_ + 1), "'"));
    std::string text;
    for (size_t k = i_; k < e; ++k)
      if (s_[k] != '_') text += s_[k];
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
      if (errno == ERANGE) return script_error(src_, loc, str_cat("integer literal ", text, " does not fit in 64 bits"));
    }
    out_.push_back(std::move(t));
    i_ = e;
    return ok_status();
  }

  // A single-line string in ' or " with the escapes \n, \t and \<char>.
  Status string_literal() {
    const Loc loc = loc_at(i_);
    const char c = s_[i_];
    if (s_.compare(i_, 3, std::string(3, c)) == 0)
      return script_error(src_, loc, "triple-quoted strings are not supported", StatusCode::kUnsupported);
    std::string value;
    size_t p = i_ + 1;
    for (;;) {
      if (p >= s_.size() || s_[p] == '\n') return script_error(src_, loc, "unterminated string literal");
      if (s_[p] == c) break;
      if (s_[p] == '\\' && p + 1 < s_.size()) {
        const char e = s_[p + 1];
        value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        p += 2;
        continue;
      }
      value += s_[p++];
    }
    push(Tok::kString, std::move(value), loc);
    i_ = p + 1;
    return ok_status();
  }

  // An operator or a bracket (which changes the depth); anything else is an error.
  Status op() {
    const Loc loc = loc_at(i_);
    for (const char* op : kOps) {
      const std::string_view o(op);
      if (s_.compare(i_, o.size(), o) == 0) {
        if (o == "(" || o == "[" || o == "{") ++depth_;
        if ((o == ")" || o == "]" || o == "}") && depth_ > 0) --depth_;
        push(Tok::kOp, std::string(o), loc);
        i_ += o.size();
        return ok_status();
      }
    }
    const char c = s_[i_];
    const unsigned char u = static_cast<unsigned char>(c);
    return script_error(src_, loc,
                        u >= 0x20 && u < 0x7f ? str_cat("unexpected character '", c, "'")
                                              : str_cat("unexpected byte 0x", "0123456789abcdef"[u >> 4], "0123456789abcdef"[u & 15]));
  }

  const SourceFile& src_;
  const std::string& s_;
  std::vector<Token> out_;
  std::vector<int> indents_ = {0};
  int depth_ = 0;  // bracket nesting: newlines and indentation are ignored inside
  size_t i_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  bool at_line_start_ = true;
};

}  // namespace

Expected<std::vector<Token>> tokenize(const SourceFile& src) { return Lexer(src).run(); }

bool is_keyword(const std::string& w) {
  static const std::set<std::string> k = {"def",   "return", "if",    "elif",  "else",     "while",  "for",   "in",
                                          "pass",  "and",    "or",    "not",   "True",     "False",  "None",  "class",
                                          "lambda", "with",  "try",   "except", "finally", "raise",  "import", "from",
                                          "global", "nonlocal", "yield", "async", "await", "del",    "assert", "break",
                                          "continue", "is"};
  return k.count(w) != 0;
}

}  // namespace tsr::frontend::script
