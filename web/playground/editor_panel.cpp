#include "web/playground/editor_panel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "core/frontend/script/script.h"
#include "imgui.h"
#include "imgui_internal.h"  // the editor's child window and input state (syntax colours)
#include "imgui_stdlib.h"
#include "web/playground/graph_view.h"
#include "web/playground/widgets.h"

namespace tsr::playground {
namespace {

namespace sc = frontend::script;
constexpr const char* kFileName = "playground.py";
const ImVec4 kErrorColor(1.0f, 0.40f, 0.35f, 1), kWarnColor(1.0f, 0.80f, 0.30f, 1);

int count_lines(const std::string& s) { return 1 + static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::string line_of(const std::string& s, int line) {
  size_t pos = 0;
  for (int k = 1; k < line && pos != std::string::npos; ++k) {
    pos = s.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos) return {};
  return s.substr(pos, s.find('\n', pos) - pos);
}

}  // namespace

Diagnostic parse_diagnostic(const std::string& text, bool error) {
  Diagnostic d;
  d.error = error;
  d.text = text;
  const std::string first = text.substr(0, text.find('\n'));
  d.message = first;
  // "<file>:<line>:<col>: <kind>: <message>"; the file name may itself hold ':' in theory, so
  // look for the pattern after the known file name first, then anywhere.
  size_t start = first.rfind(kFileName, 0) == 0 ? std::char_traits<char>::length(kFileName) : first.find(':');
  if (start == std::string::npos || start >= first.size() || first[start] != ':') return d;
  int line = 0, col = 0, used = 0;
  if (std::sscanf(first.c_str() + start, ":%d:%d: %n", &line, &col, &used) >= 2 && used > 0) {
    d.line = line, d.col = col;
    std::string rest = first.substr(start + static_cast<size_t>(used));
    for (const char* kind : {"error: ", "warning: "})
      if (rest.rfind(kind, 0) == 0) rest = rest.substr(std::char_traits<char>::length(kind));
    d.message = rest;
  }
  return d;
}

void load_example(ScriptState& s, const Example& e) {
  s.text = e.source;
  s.entry = e.entry;
  s.example = e.name;
  s.inputs = e.inputs;
  s.last = s.traced = s.converted = ScriptRun{};
}

ScriptRun run_once(const ScriptState& s, sc::Mode mode) {
  ScriptRun r;
  r.ran = true;
  r.mode = mode;
  sc::ScriptOptions so;
  so.entry = s.entry;
  so.mode = mode;
  for (const InputSpec& in : s.inputs) so.inputs.emplace_back(in.name, in.tensor());
  std::ostringstream printed;  // print() lands in the Output log, not on the console
  so.out = &printed;
  const auto t0 = std::chrono::steady_clock::now();
  auto res = sc::run_script(kFileName, s.text, so);
  r.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.printed = printed.str();  // also what printed before an error
  if (!res.ok()) {
    r.diagnostics.push_back(parse_diagnostic(res.status().message(), true));
    return r;
  }
  r.ok = true;
  r.output_names = res->output_names;
  r.outputs = std::move(res->outputs);
  r.model = res->model;
  for (const std::string& w : res->warnings) r.diagnostics.push_back(parse_diagnostic(w, false));
  return r;
}

void run_script_state(ScriptState& s) {
  s.last = run_once(s, s.mode);
  s.traced = s.mode == sc::Mode::kTrace ? s.last : run_once(s, sc::Mode::kTrace);
  s.converted = s.mode == sc::Mode::kConvert ? s.last : run_once(s, sc::Mode::kConvert);
  ++s.runs;
  // The selected mode's print() text only: the extra trace/convert runs for the Graph panel
  // would print the same lines again. Runs that printed nothing add nothing.
  if (!s.last.printed.empty())
    s.log += "-- run " + std::to_string(s.runs) + " (" + sc::mode_name(s.mode) + (s.last.ok ? "" : ", error") + ") --\n" + s.last.printed;
  if (s.log.size() > kLogLimit) s.log.erase(0, s.log.find('\n', s.log.size() - kLogLimit) + 1);
  s.log_scroll = true;
}

void draw_toolbar(ScriptState& s) {
  if (ImGui::Button("Examples")) ImGui::OpenPopup("examples_menu");
  track("Examples");
  if (ImGui::BeginPopup("examples_menu")) {
    for (const Example& e : examples()) {
      if (ImGui::MenuItem(e.title.c_str(), nullptr, s.example == e.name)) load_example(s, e);
      track(e.name);
    }
    ImGui::EndPopup();
  }
  ImGui::SameLine();
  ImGui::TextDisabled("|");
  for (sc::Mode m : {sc::Mode::kEager, sc::Mode::kTrace, sc::Mode::kConvert}) {
    ImGui::SameLine();
    if (ImGui::RadioButton(sc::mode_name(m), s.mode == m)) s.mode = m;
    track(sc::mode_name(m));
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::InputText("entry", &s.entry);
  track("entry");
  ImGui::SameLine();
  const bool run = ImGui::Button("Run");
  if (run) run_script_state(s);
  track("Run");
  hover_tip("Run the entry function (Ctrl+Enter)", run, s.run_tip_off);
}

void draw_editor(ScriptState& s, float height) {
  const std::vector<Diagnostic>& diags = s.last.diagnostics;
  ImGui::BeginChild("editor_scroll", ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  const float lh = ImGui::GetTextLineHeight();
  const int lines = count_lines(s.text);
  const float gutter = ImGui::CalcTextSize("0000").x + 8;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float pad_y = ImGui::GetStyle().FramePadding.y, pad_x = ImGui::GetStyle().FramePadding.x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The gutter: line numbers, red/yellow where a diagnostic points.
  for (int k = 1; k <= lines; ++k) {
    ImU32 color = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    for (const Diagnostic& d : diags)
      if (d.line == k) color = ImGui::GetColorU32(d.error ? kErrorColor : kWarnColor);
    char num[16];
    std::snprintf(num, sizeof num, "%4d", k);
    dl->AddText(ImVec2(origin.x, origin.y + pad_y + lh * static_cast<float>(k - 1)), color, num);
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x + gutter, origin.y));
  // What fits between the text's left edge and the child's visible right edge (scroll-independent).
  s.text_view_width = ImGui::GetCurrentWindow()->InnerClipRect.Max.x - (origin.x + ImGui::GetScrollX() + gutter + pad_x);
  s.char_width = ImGui::CalcTextSize("M").x;
  // Tall enough for every line, so that the child window (and the gutter with it) scrolls.
  const float h = std::max(height - 8, lh * static_cast<float>(lines + 2) + pad_y * 2);
  ImGui::InputTextMultiline("##editor", &s.text, ImVec2(std::max(ImGui::GetContentRegionAvail().x, 600.0f), h),
                            ImGuiInputTextFlags_AllowTabInput);
  track("editor");
  if (s.coloured_text != s.text) {
    s.coloured_text = s.text;
    s.spans = syntax_spans(s.text);
  }
  // The InputTextMultiline is a child window of its own, drawn over this one: colour into its
  // draw list (BeginChildEx names it "<parent>/<label>_<id>"), from where it drew the text.
  char child_name[512];
  std::snprintf(child_name, sizeof child_name, "%s/##editor_%08X", ImGui::GetCurrentWindow()->Name, ImGui::GetItemID());
  if (ImGuiWindow* child = ImGui::FindWindowByName(child_name)) {
    // InputTextMultiline draws from the child's start (no window padding) + FramePadding.
    ImVec2 origin(child->DC.CursorStartPos.x + ImGui::GetStyle().FramePadding.x, child->DC.CursorStartPos.y + ImGui::GetStyle().FramePadding.y);
    if (const ImGuiInputTextState* st = ImGui::GetInputTextState(ImGui::GetItemID())) origin.x -= st->ScrollX;
    draw_syntax_overlay(child->DrawList, origin, child->InnerClipRect.Min, child->InnerClipRect.Max, s.text, s.spans);
  }
  // Underline each diagnostic's column.
  const ImVec2 ed = ImGui::GetItemRectMin();
  for (const Diagnostic& d : diags) {
    if (d.line < 1 || d.line > lines) continue;
    const std::string prefix = line_of(s.text, d.line).substr(0, static_cast<size_t>(std::max(d.col - 1, 0)));
    const float x = ed.x + pad_x + ImGui::CalcTextSize(prefix.c_str()).x;
    const float y = ed.y + pad_y + lh * static_cast<float>(d.line);
    dl->AddLine(ImVec2(x, y), ImVec2(x + ImGui::CalcTextSize("^").x * 2, y), ImGui::GetColorU32(d.error ? kErrorColor : kWarnColor), 2);
  }
  ImGui::EndChild();
  for (const Diagnostic& d : diags) {
    ImGui::PushStyleColor(ImGuiCol_Text, d.error ? kErrorColor : kWarnColor);
    ImGui::TextWrapped("%d:%d: %s: %s", d.line, d.col, d.error ? "error" : "warning", d.message.c_str());
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", d.text.c_str());
  }
}

void draw_inputs(ScriptState& s) {
  if (ImGui::Button("Random")) {
    std::mt19937 rng(s.random_seed++);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (InputSpec& in : s.inputs)
      if (!in.is_flag)
        for (float& v : in.values) v = normal(rng);
  }
  track("Random");
  for (InputSpec& in : s.inputs) {
    ImGui::PushID(in.name.c_str());
    if (in.is_flag) {
      bool on = in.values.at(0) > 0;
      if (ImGui::Checkbox(in.name.c_str(), &on)) in.values[0] = on ? 1.0f : -1.0f;
      track(in.name);
      ImGui::SameLine();
      ImGui::TextDisabled("(%s = %g)", in.name.c_str(), in.values[0]);
    } else {
      ImGui::Text("%s  f32 %s", in.name.c_str(), shape_str(in.shape).c_str());
      track(in.name);
      // Small tensors are edited as a grid (rows = last dimension); bigger ones via Random.
      const int cols = in.shape.empty() ? 1 : static_cast<int>(in.shape.back());
      if (in.values.size() <= 64 && cols > 0) {
        for (size_t i = 0; i < in.values.size(); ++i) {
          ImGui::PushID(static_cast<int>(i));
          if (i % static_cast<size_t>(cols) != 0) ImGui::SameLine();
          ImGui::SetNextItemWidth(60);
          ImGui::DragFloat("##v", &in.values[i], 0.05f, 0, 0, "%.3g");
          ImGui::PopID();
        }
      } else {
        ImGui::TextDisabled("%zu values (Random fills them)", in.values.size());
      }
    }
    ImGui::PopID();
  }
}

void draw_outputs(const ScriptState& s) {
  const ScriptRun& r = s.last;
  if (!r.ran) {
    ImGui::TextDisabled("Run (Ctrl+Enter) to see outputs");
    return;
  }
  ImGui::Text("%s: %s in %.2f ms", sc::mode_name(r.mode), r.ok ? "ok" : "error", r.millis);
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    const Tensor& t = r.outputs[k];
    ImGui::PushID(static_cast<int>(k));
    ImGui::Separator();
    ImGui::Text("%s  %s", r.output_names[k].c_str(), tensor_summary(t).c_str());
    ImGui::TextWrapped("%s", tensor_text(t, 64).c_str());
    if (t.kind() == ValueKind::kTensor && t.shape().size() == 2 && t.numel() > 0) {
      const int rows = static_cast<int>(t.shape()[0]), cols = static_cast<int>(t.shape()[1]);
      const float cell = std::clamp(220.0f / static_cast<float>(std::max(rows, cols)), 4.0f, 40.0f);
      draw_heatmap(tensor_values(t), rows, cols, ImVec2(cell * static_cast<float>(cols), cell * static_cast<float>(rows)));
    }
    ImGui::PopID();
  }
}

void draw_output_log(ScriptState& s, float height) {
  if (ImGui::SmallButton("Clear")) s.log.clear();
  track("Clear log");
  ImGui::SameLine();
  ImGui::TextDisabled("print() output of each Run");
  ImGui::BeginChild("output_log", ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  if (s.log.empty()) ImGui::TextDisabled("(nothing printed yet)");
  else ImGui::TextUnformatted(s.log.data(), s.log.data() + s.log.size());
  if (s.log_scroll) ImGui::SetScrollHereY(1.0f);
  s.log_scroll = false;
  ImGui::EndChild();
  track("Output log");
}

namespace {

void write_run_json(cli::JsonWriter& w, const ScriptRun& r) {
  w.begin_object().key("ran").value(r.ran).key("ok").value(r.ok).key("mode").value(sc::mode_name(r.mode));
  w.key("millis").value(r.millis).key("printed").value(r.printed);
  w.key("outputs").begin_array();
  for (size_t k = 0; k < r.outputs.size(); ++k) write_tensor_json(w, r.output_names[k], r.outputs[k]);
  w.end_array();
  w.key("warnings").begin_array();
  for (const Diagnostic& d : r.diagnostics)
    if (!d.error) w.begin_object().key("line").value(d.line).key("col").value(d.col).key("message").value(d.message).end_object();
  w.end_array();
  w.key("errors").begin_array();
  for (const Diagnostic& d : r.diagnostics)
    if (d.error) w.begin_object().key("line").value(d.line).key("col").value(d.col).key("message").value(d.message).end_object();
  w.end_array();
  w.key("graph");
  if (r.model) write_graph_summary(w, *r.model);
  else w.null();
  w.end_object();
}

}  // namespace

void write_script_json(cli::JsonWriter& w, const ScriptState& s) {
  w.key("mode").value(sc::mode_name(s.mode));
  w.key("example").value(s.example);
  w.key("entry").value(s.entry);
  w.key("editor_text").value(s.text);
  w.key("editor_view_width").value(static_cast<double>(s.text_view_width)).key("editor_char_width").value(static_cast<double>(s.char_width));
  w.key("runs").value(s.runs);
  w.key("log").value(s.log);
  w.key("syntax").begin_array();  // the editor's colour spans: [begin, end, kind]
  for (const SyntaxSpan& sp : s.spans)
    w.begin_array().value(static_cast<int64_t>(sp.begin)).value(static_cast<int64_t>(sp.end)).value(syntax_kind_name(sp.kind)).end_array();
  w.end_array();
  w.key("inputs").begin_array();
  for (const InputSpec& in : s.inputs) write_tensor_json(w, in.name, in.tensor());
  w.end_array();
  w.key("last");
  write_run_json(w, s.last);
  w.key("traced");
  write_run_json(w, s.traced);
  w.key("converted");
  write_run_json(w, s.converted);
}

}  // namespace tsr::playground
