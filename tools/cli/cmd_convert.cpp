// `tessera convert MODEL.onnx -o OUT.tsr`.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "core/io/tsr_io.h"
#include "tools/cli/cli_common.h"
#ifdef TSR_HAVE_ONNX_IMPORT
#include "tools/onnx/onnx_import.h"
#endif

namespace tsr::cli {

int convert_command(const ConvertOptions& o) {
#ifdef TSR_HAVE_ONNX_IMPORT
  auto model = onnx_import::import_onnx_file(o.input);
  if (!model.ok()) return report_error(model.status());
  Status s = io::save_model_file(*model, o.output);
  if (!s.ok()) return report_error(s);
  size_t nodes = 0, params = 0, bytes = 0;
  for (const auto& g : model->graphs) {
    nodes += g.nodes.size();
    for (const auto& t : g.tensors)
      if (t.constant.defined()) {
        params += static_cast<size_t>(t.constant.numel());
        bytes += t.constant.nbytes();
      }
  }
  std::cout << "wrote " << o.output << ": " << model->graphs.size() << " graph(s), " << nodes << " nodes, "
            << params << " parameters (" << bytes << " bytes)\n";
  return kExitOk;
#else
  return report_error(unsupported("this build of tessera has no ONNX importer (tools/onnx was not built)"));
#endif
}

Subcommand register_convert(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* sub = app.add_subcommand("convert", "Convert an ONNX model to a .tsr file");
  sub->add_option("model", o->input, "ONNX model (.onnx)")->required();
  sub->add_option("-o,--output", o->output, "Output .tsr file")->required();
  return {sub, [o] { return convert_command(*o); }};
}

}  // namespace tsr::cli
