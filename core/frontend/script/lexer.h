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
};

// The whole file's tokens, ending with NEWLINE (if the last line had content), the DEDENTs that
// close open blocks, and kEnd. Errors (bad character, unterminated string, inconsistent dedent)
// are diagnostics with the location.
Expected<std::vector<Token>> tokenize(const SourceFile& src);

}  // namespace tsr::frontend::script
