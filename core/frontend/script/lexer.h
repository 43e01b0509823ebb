// Tokenizer of the script language, following Python's: NEWLINE ends a logical line, INDENT and
// DEDENT bracket blocks (an indentation stack, tabs to multiples of 8), lines join implicitly
// inside (), [] and {} and explicitly after a backslash, '#' starts a comment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/frontend/script/source.h"

namespace tsr::frontend::script {

enum class Tok : uint8_t { kName, kInt, kFloat, kString, kOp, kNewline, kIndent, kDedent, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // names, operators; the decoded value of strings
  int64_t i = 0;     // kInt
  double f = 0;      // kFloat
  Loc loc;
  // The token's bytes in the source text, [begin, end) (0, 0 for NEWLINE/INDENT/DEDENT/END);
  // editors colour by them (the playground), the parser does not need them.
  size_t begin = 0, end = 0;
};

// The whole file's tokens, ending with NEWLINE (if the last line had content), the DEDENTs that
// close open blocks, and kEnd. Errors (bad character, unterminated string, inconsistent dedent)
// are diagnostics with the location.
Expected<std::vector<Token>> tokenize(const SourceFile& src);

// True for the words the language reserves: its own keywords and Python's keywords outside the
// subset (which the parser rejects with a diagnostic naming the construct).
bool is_keyword(const std::string& word);

}  // namespace tsr::frontend::script
