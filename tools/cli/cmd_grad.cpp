// `tessera grad MODEL -o OUT.tsr [--loss NAME] [--wrt NAME,...]`: writes a model that computes
// MODEL's outputs and the gradients of one of them (passes::gradient_model, DESIGN.md §7).
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "core/io/tsr_io.h"
#include "core/passes/verify_model.h"
#include "core/passes/autodiff.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/model_loader.h"

namespace tsr::cli {

int grad_command(const GradOptions& o) {
  auto loaded = load_model(o.model);
  if (!loaded.ok()) return report_error(loaded.status());
  passes::GradientModelOptions options;
  options.loss = o.loss;
  options.wrt = o.wrt;
  auto model = passes::gradient_model(loaded->graph(), options);
  if (!model.ok()) return report_error(model.status());
  // The pass builds well-formed graphs; a failure here is a bug in it, not in MODEL.
  if (Status s = passes::verify_model(*model); !s.ok())
    return report_error(internal_error("the gradient model does not verify: ", s.message()));
  if (Status s = io::save_model_file(*model, o.output); !s.ok()) return report_error(s);
  const ir::Graph& g = model->main();
  const size_t n_grads = g.outputs.size() - loaded->graph().main().outputs.size();
  std::cout << "wrote " << o.output << ": loss \""
            << (o.loss.empty() ? g.tensors[static_cast<size_t>(g.outputs[0])].name : o.loss) << "\", " << n_grads
            << " gradient(s):";
  for (size_t k = g.outputs.size() - n_grads; k < g.outputs.size(); ++k)
    std::cout << " " << g.tensors[static_cast<size_t>(g.outputs[k])].name;
  std::cout << "\n";
  return kExitOk;
}

Subcommand register_grad(CLI::App& app) {
  auto o = std::make_shared<GradOptions>();
  CLI::App* sub = app.add_subcommand(
      "grad", "Write a model computing MODEL's outputs followed by the gradients of a loss (outputs <wrt>_grad)");
  sub->add_option("model", o->model, "Model file (.tsr; or .onnx with the importer)")->required();
  sub->add_option("-o,--output", o->output, "Output .tsr file")->required();
  sub->add_option("--loss", o->loss, "The output to differentiate (default: the first output; summed if not scalar)");
  sub->add_option("--wrt", o->wrt,
                  "Graph inputs or constant weights to differentiate with respect to, comma-separated "
                  "(default: every floating-point constant the loss depends on)")
      ->delimiter(',')
      ->allow_extra_args(false);
  return {sub, [o] { return grad_command(*o); }};
}

}  // namespace tsr::cli
