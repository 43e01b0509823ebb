// Syntax colouring for the playground's editor, driven by the script language's own tokenizer
// (core/frontend/script/lexer.h: its tokens carry their byte spans), so the colours follow the
// language exactly and there is no second lexer to keep in step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "imgui.h"

namespace tsr::playground {

enum class SyntaxKind : uint8_t { kKeyword, kCall, kName, kNumber, kString, kOperator, kComment };

// "keyword", "call", "name", "number", "string", "operator", "comment".
const char* syntax_kind_name(SyntaxKind k);

// A coloured byte span [begin, end) of the text, on one line (line is 1-based).
struct SyntaxSpan {
  size_t begin = 0, end = 0;
  int line = 0;
  SyntaxKind kind = SyntaxKind::kName;
};

// The spans of `text` in order: keywords, names called (a '(' follows), other names, numbers,
// strings and operators from tokenize(); comments are the '#'-to-end-of-line runs in the gaps
// between tokens (a '#' outside a token is always a comment). While the text does not tokenize
// (an unterminated string mid-edit) there are no spans and the editor shows it uncoloured.
std::vector<SyntaxSpan> syntax_spans(const std::string& text);

// Draws each span's text again, in its kind's colour, into `dl` (the editor's own draw list, so
// it lands over the editor's glyphs and under popups), the text's first line starting at
// `origin`, clipped to [clip_min, clip_max].
void draw_syntax_overlay(ImDrawList* dl, ImVec2 origin, ImVec2 clip_min, ImVec2 clip_max, const std::string& text,
                         const std::vector<SyntaxSpan>& spans);

}  // namespace tsr::playground
