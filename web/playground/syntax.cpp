#include "web/playground/syntax.h"

#include "core/frontend/script/lexer.h"
#include "imgui.h"

namespace tsr::playground {
namespace {

namespace sc = frontend::script;

ImU32 kind_color(SyntaxKind k) {
  switch (k) {
    case SyntaxKind::kKeyword: return IM_COL32(198, 120, 221, 255);
    case SyntaxKind::kCall: return IM_COL32(97, 175, 239, 255);
    case SyntaxKind::kName: return IM_COL32(220, 223, 228, 255);
    case SyntaxKind::kNumber: return IM_COL32(209, 154, 102, 255);
    case SyntaxKind::kString: return IM_COL32(152, 195, 121, 255);
    case SyntaxKind::kOperator: return IM_COL32(86, 182, 194, 255);
    case SyntaxKind::kComment: return IM_COL32(127, 132, 142, 255);
  }
  return IM_COL32_WHITE;
}

// Comments in text[from, to) (a gap between two tokens), one span per line.
void gap_comments(const std::string& text, size_t from, size_t to, int& line, std::vector<SyntaxSpan>& out) {
  for (size_t p = from; p < to; ++p) {
    if (text[p] == '\n') {
      ++line;
    } else if (text[p] == '#') {
      size_t e = text.find('\n', p);
      if (e == std::string::npos || e > to) e = to;
      out.push_back({p, e, line, SyntaxKind::kComment});
      p = e - 1;
    }
  }
}

}  // namespace

const char* syntax_kind_name(SyntaxKind k) {
  switch (k) {
    case SyntaxKind::kKeyword: return "keyword";
    case SyntaxKind::kCall: return "call";
    case SyntaxKind::kName: return "name";
    case SyntaxKind::kNumber: return "number";
    case SyntaxKind::kString: return "string";
    case SyntaxKind::kOperator: return "operator";
    case SyntaxKind::kComment: return "comment";
  }
  return "?";
}

std::vector<SyntaxSpan> syntax_spans(const std::string& text) {
  std::vector<SyntaxSpan> out;
  const sc::SourceFile src("editor", text);
  auto tokens = sc::tokenize(src);
  if (!tokens.ok()) return out;
  const std::vector<sc::Token>& t = *tokens;
  size_t pos = 0;
  int line = 1;
  for (size_t k = 0; k < t.size(); ++k) {
    if (t[k].end <= t[k].begin) continue;  // NEWLINE, INDENT, DEDENT, END: no text of their own
    gap_comments(text, pos, t[k].begin, line, out);
    SyntaxKind kind = SyntaxKind::kOperator;
    switch (t[k].kind) {
      case sc::Tok::kName:
        kind = sc::is_keyword(t[k].text) ? SyntaxKind::kKeyword
               : k + 1 < t.size() && t[k + 1].kind == sc::Tok::kOp && t[k + 1].text == "(" ? SyntaxKind::kCall
                                                                                           : SyntaxKind::kName;
        break;
      case sc::Tok::kInt:
      case sc::Tok::kFloat: kind = SyntaxKind::kNumber; break;
      case sc::Tok::kString: kind = SyntaxKind::kString; break;
      default: break;
    }
    out.push_back({t[k].begin, t[k].end, t[k].loc.line, kind});
    line = t[k].loc.line;
    pos = t[k].end;
  }
  gap_comments(text, pos, text.size(), line, out);
  return out;
}

void draw_syntax_overlay(ImDrawList* dl, ImVec2 origin, ImVec2 clip_min, ImVec2 clip_max, const std::string& text,
                         const std::vector<SyntaxSpan>& spans) {
  const float lh = ImGui::GetTextLineHeight();
  dl->PushClipRect(clip_min, clip_max, true);
  // Each span's glyphs drawn again, in colour, exactly over the editor's own: the editor keeps
  // its cursor, selection and scrolling.
  size_t line_start = 0;
  int line = 1;
  for (const SyntaxSpan& s : spans) {
    while (line < s.line) {
      const size_t nl = text.find('\n', line_start);
      if (nl == std::string::npos) break;
      line_start = nl + 1;
      ++line;
    }
    const float x = origin.x + ImGui::CalcTextSize(text.data() + line_start, text.data() + s.begin).x;
    const float y = origin.y + lh * static_cast<float>(s.line - 1);
    dl->AddText(ImVec2(x, y), kind_color(s.kind), text.data() + s.begin, text.data() + s.end);
  }
  dl->PopClipRect();
}

}  // namespace tsr::playground
