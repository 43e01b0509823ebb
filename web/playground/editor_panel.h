// The script side of the playground: editor (line numbers, diagnostics at line:col), examples
// menu, mode (eager / trace / convert), inputs, Run, outputs. The script runs through
// core/frontend/script (run_script), the same front end as `tessera script` and tessera-web.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/frontend/script/interpreter.h"
#include "core/ir/graph.h"
#include "web/playground/examples.h"
#include "web/playground/syntax.h"
#include "tools/cli/json_writer.h"

namespace tsr::playground {

// A diagnostic of the script front end ("file:line:col: error|warning: message"), located.
struct Diagnostic {
  int line = 0, col = 0;  // 1-based; 0 = unknown
  bool error = false;
  std::string message;    // the first line, without the "file:line:col: kind: " prefix
  std::string text;       // the whole diagnostic (with the source line and caret)
};
Diagnostic parse_diagnostic(const std::string& text, bool error);

// One run of the script in one mode.
struct ScriptRun {
  bool ran = false, ok = false;
  frontend::script::Mode mode = frontend::script::Mode::kEager;
  std::vector<std::string> output_names;
  std::vector<Tensor> outputs;
  std::vector<Diagnostic> diagnostics;      // warnings, then the error if any
  std::shared_ptr<ir::Model> model;         // trace / convert: the graph; null in eager mode
  std::string printed;                      // what the script's print() calls wrote, in order
  double millis = 0;
};

struct ScriptState {
  std::string text, entry, example;
  frontend::script::Mode mode = frontend::script::Mode::kEager;
  std::vector<InputSpec> inputs;
  ScriptRun last;                  // the Run in the selected mode
  ScriptRun traced, converted;     // the same inputs traced and converted (the Graph panel)
  uint32_t random_seed = 1;
  int runs = 0;
  // The Output log: each Run's print() text (the selected mode's run) under a header line,
  // oldest first, trimmed from the front past kLogLimit bytes.
  std::string log;
  bool log_scroll = false;         // scroll the log to its end on the next frame
  bool run_tip_off = false;        // Run was clicked: no tooltip until the pointer leaves it
  std::string coloured_text;       // the text `spans` were computed for
  std::vector<SyntaxSpan> spans;   // syntax colours of coloured_text
  float text_view_width = 0;       // px of text the editor shows without scrolling (last frame)
  float char_width = 0;            // px per character of the editor's (monospace) font
};
inline constexpr size_t kLogLimit = 64 * 1024;

void load_example(ScriptState& s, const Example& e);
// Runs the script in s.mode (and, for the graph panel, traced and converted).
void run_script_state(ScriptState& s);
ScriptRun run_once(const ScriptState& s, frontend::script::Mode mode);

void draw_toolbar(ScriptState& s);   // examples menu, mode buttons, entry, Run
void draw_editor(ScriptState& s, float height);
void draw_inputs(ScriptState& s);
void draw_outputs(const ScriptState& s);
// The Output log (print() text of the runs) filling `height` pixels (0: the rest of the window).
void draw_output_log(ScriptState& s, float height);

void write_script_json(cli::JsonWriter& w, const ScriptState& s);

}  // namespace tsr::playground
