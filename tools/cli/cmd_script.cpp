// `tessera script FILE.py --entry FN [--input NAME=FILE.npy]... --mode eager|trace|convert
//   [-o OUT.tsr] [--output-dir DIR] [--print-graph] [--dynamic NAME:AXIS]... [--no-unroll]`
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "core/frontend/script/script.h"
#include "tessera/model.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/model_loader.h"

namespace tsr::cli {
namespace {

int usage(const std::string& msg) {
  std::cerr << "tessera: usage error: " << msg << "\nRun 'tessera script --help' for usage.\n";
  return kExitUsage;
}

}  // namespace

int script_command(const ScriptOptions& o) {
  namespace sc = frontend::script;
  sc::ScriptOptions so;
  so.entry = o.entry;
  so.unroll = !o.no_unroll;
  if (o.mode == "eager") so.mode = sc::Mode::kEager;
  else if (o.mode == "trace") so.mode = sc::Mode::kTrace;
  else if (o.mode == "convert") so.mode = sc::Mode::kConvert;
  else return usage("--mode must be eager, trace or convert");
  if (so.mode == sc::Mode::kEager && (!o.output.empty() || o.print_graph))
    return usage("eager mode makes no graph: -o and --print-graph need --mode trace or convert");
  for (const std::string& d : o.dynamic) {
    const size_t colon = d.rfind(':');
    const std::string axis = colon == std::string::npos ? "" : d.substr(colon + 1);
    const bool neg = !axis.empty() && axis[0] == '-';
    if (colon == std::string::npos || colon == 0 || axis.size() == size_t(neg) || axis.size() > 4 ||
        axis.find_first_not_of("0123456789", neg ? 1 : 0) != std::string::npos)
      return usage("--dynamic " + d + ": expected NAME:AXIS");
    so.dynamic_axes[d.substr(0, colon)].push_back(std::stoll(axis));
  }
  for (const std::string& spec : o.inputs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) return usage("--input " + spec + ": expected NAME=FILE");
    auto t = load_tensor_file(spec.substr(eq + 1));
    if (!t.ok()) return report_error(t.status());
    so.inputs.emplace_back(spec.substr(0, eq), std::move(t).value());
  }

  std::ifstream in(o.file, std::ios::binary);
  if (!in) return report_error(not_found(o.file, ": cannot open the script"));
  std::stringstream text;
  text << in.rdbuf();
  auto r = sc::run_script(o.file, text.str(), so);
  if (!r.ok()) {
    // Diagnostics already say where; print them as a compiler does.
    if (r.status().message().rfind(o.file + ":", 0) != 0) return report_error(r.status());
    std::cerr << r.status().message() << "\n";
    return exit_code_for(r.status().code());
  }
  for (const std::string& w : r->warnings) std::cerr << w << "\n";
  if (r->model && o.print_graph) std::cout << sc::graph_text(*r->model);
  for (size_t i = 0; i < r->outputs.size(); ++i) print_output(i, r->output_names[i], r->outputs[i]);
  if (r->model && !o.output.empty()) {
    Status s = Model(r->model).save(o.output);
    if (!s.ok()) return report_error(s);
    std::cout << "wrote " << o.output << " (" << sc::mode_name(so.mode) << ")\n";
  }
  if (!o.output_dir.empty()) {
    Status s = write_outputs(o.output_dir, r->output_names, r->outputs);
    if (!s.ok()) return report_error(s);
  }
  return kExitOk;
}

Subcommand register_script(CLI::App& app) {
  auto o = std::make_shared<ScriptOptions>();
  CLI::App* sub = app.add_subcommand("script", "Run a Python-subset script eagerly, trace it or convert it to a .tsr graph");
  sub->add_option("file", o->file, "Script (.py)")->required();
  sub->add_option("--entry", o->entry, "The function to run")->required();
  sub->add_option("-i,--input", o->inputs, "Argument NAME=FILE (.npy or .pb) of the entry function. Repeatable.")
      ->allow_extra_args(false);
  sub->add_option("--mode", o->mode, "eager (default), trace or convert")
      ->check(CLI::IsMember({"eager", "trace", "convert"}));
  sub->add_option("-o,--output", o->output, "trace/convert: write the graph to this .tsr file");
  sub->add_option("--output-dir", o->output_dir, "Write output_<i>.npy and outputs.json here (as tessera run)");
  sub->add_flag("--print-graph", o->print_graph, "trace/convert: print the graph");
  sub->add_option("--dynamic", o->dynamic, "convert: leave axis AXIS of input NAME dynamic (NAME:AXIS). Repeatable.")
      ->allow_extra_args(false);
  sub->add_flag("--no-unroll", o->no_unroll, "convert: make `for i in range(n)` a Loop even when n is a host integer");
  return {sub, [o] { return script_command(*o); }};
}

}  // namespace tsr::cli
