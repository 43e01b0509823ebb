// `tessera optimize MODEL -o OUT.tsr`: the inference graph optimizations of core/passes/optimize.h
// applied once, written as a .tsr; also the optimized copy that `run` and `inspect` use.
#include <iostream>

#include "core/exec/optimized_model.h"
#include "core/io/tsr_io.h"
#include "core/passes/optimize.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/model_loader.h"

namespace tsr::cli {

int optimize_command(const OptimizeOptions& o) {
  auto loaded = load_model(o.input);
  if (!loaded.ok()) return report_error(loaded.status());
  passes::OptimizeReport report;
  auto optimized = optimized_model(loaded->graph(), o.skip_passes, &report);
  if (!optimized.ok()) return report_error(optimized.status().with_context(o.input));
  Status s = io::save_model_file(**optimized, o.output);
  if (!s.ok()) return report_error(s);
  std::cout << passes::describe(report) << "wrote " << o.output << "\n";
  return kExitOk;
}

}  // namespace tsr::cli
