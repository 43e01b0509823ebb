// `tessera optimize MODEL -o OUT.tsr`: the inference graph optimizations of core/passes/optimize.h
// applied once, written as a .tsr; also the optimized copy that `run` and `inspect` use.
#include <iostream>

#include "core/exec/session.h"
#include "core/io/tsr_io.h"
#include "core/passes/optimize.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/model_loader.h"

namespace tsr::cli {

Expected<std::shared_ptr<const ir::Model>> optimized_copy(const ir::Model& model, passes::OptimizeReport* report,
                                                          const std::vector<std::string>& skip_passes) {
  passes::OptimizeOptions options;
  options.evaluate = evaluate_node;  // constant folding with the CPU kernels
  for (const std::string& p : skip_passes) TSR_RETURN_IF_ERROR(passes::disable_pass(options, p));
  auto copy = std::make_shared<ir::Model>(model);  // constants share their storage: cheap
  TSR_ASSIGN_OR_RETURN(passes::OptimizeReport r, passes::optimize(*copy, options));
  if (report) *report = std::move(r);
  return std::shared_ptr<const ir::Model>(std::move(copy));
}

int optimize_command(const OptimizeOptions& o) {
  auto loaded = load_model(o.input);
  if (!loaded.ok()) return report_error(loaded.status());
  passes::OptimizeReport report;
  auto optimized = optimized_copy(**loaded, &report, o.skip_passes);
  if (!optimized.ok()) return report_error(optimized.status().with_context(o.input));
  Status s = io::save_model_file(**optimized, o.output);
  if (!s.ok()) return report_error(s);
  std::cout << passes::describe(report) << "wrote " << o.output << "\n";
  return kExitOk;
}

}  // namespace tsr::cli
