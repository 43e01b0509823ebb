// `tessera`: the command-line tool (convert, run, inspect, ops, grad). Argument parsing uses CLI11
// (Debian libcli11-dev); each cmd_*.cpp registers its subcommand (options, help text) and
// implements it, returning an exit code.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <string>

#include "core/exec/backend.h"
#include "core/ir/graph.h"
#include "tools/cli/cli_common.h"

#ifndef TSR_VERSION
#define TSR_VERSION "0.0.0"
#endif

namespace tsr::cli {

const char* exit_code_table() {
  return "Exit codes:\n"
         "  0  success\n"
         "  2  usage error (unknown option, missing or malformed argument)\n"
         "  3  invalid model (malformed or inconsistent .tsr/.onnx file)\n"
         "  4  invalid argument or input (wrong input count, shape or dtype; bad input file)\n"
         "  5  unsupported (op, dtype or format this build cannot handle)\n"
         "  6  not found (missing file, unknown input name, signature or backend)\n"
         "  7  resource limit exceeded\n"
         "  8  backend failure\n"
         "  9  internal error (a bug: please report it)\n";
}

int exit_code_for(StatusCode code) { return static_cast<int>(code); }

int report_error(const Status& status) {
  std::cerr << "tessera: error: " << status.message() << " [" << status_code_name(status.code()) << "]\n";
  return exit_code_for(status.code());
}

namespace {

std::string version_string() {
  std::string backends;
  for (const auto& b : exec::available_backends()) backends += (backends.empty() ? "" : ", ") + b;
  return str_cat("tessera ", TSR_VERSION, " (model format ", ir::Model::kFormatVersion, ", backends: ", backends,
#ifdef TSR_HAVE_ONNX_IMPORT
                 ", onnx import"
#endif
                 ")\n", exec::cpu_simd_description());
}

int main_impl(int argc, char** argv) {
  CLI::App app{"Tessera: load, inspect and run static computation graphs (.tsr models)", "tessera"};
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);
  app.footer(exit_code_table());
  // In this order in `tessera --help`.
  const Subcommand commands[] = {register_convert(app), register_optimize(app), register_run(app),
                                 register_inspect(app), register_ops(app),      register_train(app),
                                 register_export(app),  register_grad(app),     register_script(app),
                                 register_generate(app), register_quantize(app), register_prepare_training(app)};
  for (const Subcommand& c : commands) c.app->footer(exit_code_table());

  // CLI11 would report an unknown command as "A subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(std::begin(commands), std::end(commands),
                   [&](const Subcommand& c) { return c.app->get_name() == argv[1]; })) {
    std::cerr << "tessera: usage error: unknown command '" << argv[1]
              << "' (commands: convert, run, inspect, optimize, ops, grad, train, export, script, generate, quantize)\nRun 'tessera --help' for usage.\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(e);  // --help / --version
      return kExitOk;
    }
    std::cerr << "tessera: usage error: " << e.what() << "\n";
    const auto subs = app.get_subcommands();
    std::cerr << "Run '" << (subs.empty() ? std::string("tessera") : "tessera " + subs[0]->get_name())
              << " --help' for usage.\n";
    return kExitUsage;
  }
  for (const Subcommand& c : commands)
    if (c.app->parsed()) return c.run();
  return kExitUsage;
}

}  // namespace
}  // namespace tsr::cli

int main(int argc, char** argv) {
  // CLI11 and the standard library may throw (bad_alloc); the core does not. Anything escaping
  // is a bug or an allocation failure: report it as internal rather than aborting.
  try {
    return tsr::cli::main_impl(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "tessera: error: out of memory\n";
    return tsr::cli::kExitResource;
  } catch (const std::exception& e) {
    std::cerr << "tessera: internal error: " << e.what() << "\n";
    return tsr::cli::kExitInternal;
  }
}
