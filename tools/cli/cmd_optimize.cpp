// `tessera optimize MODEL -o OUT.tsr`: the inference graph optimizations of core/passes/optimize.h
// applied once, written as a .tsr; also the optimized copy that `run` and `inspect` use.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

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

Subcommand register_optimize(CLI::App& app) {
  auto o = std::make_shared<OptimizeOptions>();
  CLI::App* sub = app.add_subcommand(
      "optimize",
      "Write the model with the inference graph optimizations applied (Conv+BatchNorm folding, "
      "Conv/Gemm+activation fusion, GELU/LayerNorm recognition, MatMul+Add -> Gemm, Transpose/scale -> FusedMatMul, Softmax wrapper folding, CSE, elementwise fusion, DCE)");
  sub->add_option("model", o->input, "Model file (.tsr, or .onnx with the importer)")->required();
  sub->add_option("-o,--output", o->output, "Output .tsr file")->required();
  sub->add_option("--skip-pass", o->skip_passes,
                  "Leave out an optimization pass (repeatable): fold_constants, fold_pad, pool_before_conv, conv_bn, concat_affine, hardswish, gelu, layer_norm, "
                  "matmul_add, fold_matmul_transpose, skip_layer_norm, fuse_residual, fuse_activation, fuse_squeeze_excite, fuse_separable, softmax_wrapper, cse, fuse_elementwise, quantize_lookup, quantize_layout, dce");
  return {sub, [o] { return optimize_command(*o); }};
}

}  // namespace tsr::cli
