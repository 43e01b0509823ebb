// `tessera`: the command-line tool (convert, run, inspect, ops, grad). Argument parsing uses CLI11
// (Debian libcli11-dev); the commands themselves live in cmd_*.cpp and return exit codes.
#include <CLI/CLI.hpp>

#include <iostream>
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

bool is_command(std::string_view a) {
  return a == "convert" || a == "run" || a == "inspect" || a == "ops" || a == "grad" || a == "train" ||
         a == "export" || a == "script" || a == "optimize";
}

int main_impl(int argc, char** argv) {
  CLI::App app{"Tessera: load, inspect and run static computation graphs (.tsr models)", "tessera"};
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);
  app.footer(exit_code_table());

  ConvertOptions convert;
  auto* c = app.add_subcommand("convert", "Convert an ONNX model to a .tsr file");
  c->add_option("model", convert.input, "ONNX model (.onnx)")->required();
  c->add_option("-o,--output", convert.output, "Output .tsr file")->required();
  c->footer(exit_code_table());

  RunOptions run;
  OptimizeOptions optimize;
  auto* op = app.add_subcommand("optimize",
                                "Write the model with the inference graph optimizations applied (Conv+BatchNorm folding, "
                                "Conv/Gemm+activation fusion, MatMul+Add -> Gemm, Softmax wrapper folding, CSE, elementwise fusion, DCE)");
  op->add_option("model", optimize.input, "Model file (.tsr, or .onnx with the importer)")->required();
  op->add_option("-o,--output", optimize.output, "Output .tsr file")->required();
  op->add_option("--skip-pass", optimize.skip_passes,
                 "Leave out an optimization pass (repeatable): fold_constants, fold_pad, conv_bn, hardswish, matmul_add, "
                 "fuse_residual, fuse_activation, softmax_wrapper, cse, fuse_elementwise, dce");
  op->footer(exit_code_table());

  auto* r = app.add_subcommand("run", "Run a model's main graph and print its outputs");
  r->add_option("model", run.model, "Model file (.tsr; .onnx is imported on the fly with the importer)")
      ->required();
  r->add_option("-i,--input", run.inputs,
                "Input tensor: FILE binds the next graph input in order, NAME=FILE binds by name. "
                "Files: .npy, or ONNX TensorProto .pb. Repeatable.")
      ->allow_extra_args(false);
  r->add_flag("--random-inputs", run.random_inputs,
              "Fill every input not given with deterministic random values (floats uniform in [-1, 1), "
              "integers in [0, 10), bools 0/1)");
  r->add_option("--seed", run.seed, "Seed for --random-inputs (default 0)");
  r->add_option("--shape", run.shapes,
                "Shape for a random input with dynamic dims: NAME=1,3,48,320. Repeatable.")
      ->allow_extra_args(false);
  r->add_option("--output-dir", run.output_dir,
                "Write output_<i>.npy (graph-output order) and outputs.json to this directory");
  r->add_flag("--inter-op,!--no-inter-op", run.inter_op,
              "With --threads > 1: also run independent nodes side by side (default off: intra-op threads only, "
              "as fast or faster on 2 cores)");
  r->add_option("--threads", run.threads, "Intra-op threads (default 1; 0 = all cores)")
      ->check(CLI::Range(0, 1024));
  r->add_option("--repeat", run.repeat, "Run N times and print median/min latency (default 1)")
      ->check(CLI::Range(1, 1000000));
  r->add_option("--warmup", run.warmup, "Untimed runs before the timed ones (default 0)")
      ->check(CLI::Range(0, 1000000));
  r->add_flag("--no-optimize", run.no_optimize,
              "Run the graph as loaded; by default a CPU run applies the graph optimizations of `tessera optimize` first");
  r->add_option("--skip-pass", run.skip_passes, "Leave out an optimization pass (repeatable; see `tessera optimize --help`)");
  r->add_option("--backend", run.backend, "Backend (default cpu)");
  r->add_option("--max-memory", run.max_memory,
                "Cap on tensor memory a run keeps alive, in bytes or with a unit (512M, 2G); "
                "default 3/4 of physical memory. Exceeding it is exit 7")
      ->transform(CLI::AsSizeValue(false));
  r->add_option("--max-loop-iterations", run.max_loop_iterations,
                "Cap on the iterations of any one Loop/Scan (default 1000000; 0 = unlimited). Exceeding it is exit 7")
      ->check(CLI::NonNegativeNumber);
  r->add_option("--device", run.device,
                "Where nodes run: cpu (default), cuda or vulkan (exit 8 when there is no such device), auto (a "
                "device when one exists, cuda first, else cpu), null (the host-memory skeleton device)")
      ->check(CLI::IsMember({"cpu", "cuda", "vulkan", "auto", "null"}));
  r->add_option("--check-against", run.check_against,
                "cpu: run on --device and on the CPU, report the first node (execution order) whose output "
                "differs beyond 1e-4 (exit 1) or that all agree")
      ->check(CLI::IsMember({"cpu"}));
  r->add_flag("--profile", run.profile,
              "Print the total time per op type and per node (top 15, summed over --repeat runs)");
  r->footer(exit_code_table());

  InspectOptions inspect;
  auto* i = app.add_subcommand("inspect", "Describe a .tsr model: graphs, ops, inputs, outputs, parameters");
  i->add_option("model", inspect.model, "Model file (.tsr; or .onnx with the importer)")->required();
  i->add_flag("--json", inspect.json, "Print JSON instead of text");
  i->add_option("--placement", inspect.placement,
                "Print each node's device when placed on DEVICE (cuda, vulkan, null) and the copies");
  i->footer(exit_code_table());

  OpsOptions ops;
  auto* o = app.add_subcommand("ops", "List the registered ops and the CPU backend's kernel dtypes");
  o->add_flag("--markdown", ops.markdown, "Print a Markdown table");
  o->add_option("--used", ops.used,
                "Instead, list the op types these models (.tsr/.onnx) use, one per line with the "
                "dtypes their nodes use: the file -DTSR_SELECTED_OPS takes for a selective build")
      ->expected(1, -1);
  o->add_option("-o,--output", ops.output, "With --used: write the list to this file");
  o->footer(exit_code_table());

  TrainOptions train;
  auto* t = app.add_subcommand("train", "Train an image classifier on an IDX dataset (default: Fashion-MNIST)");
  t->add_option("model", train.model, "Inference model (.tsr/.onnx; first input images, first output logits) or a checkpoint to resume");
  t->add_option("--arch", train.arch, "Built-in architecture instead of a model file: lenet, mlp");
  t->add_option("--data", train.data, "Directory with {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (default " + train.data + ")");
  t->add_option("--batch-size", train.batch_size, "Minibatch size (default 64)")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  t->add_option("--epochs", train.epochs, "Passes over the training set (default 10); 0 = only evaluate MODEL on the test split")->check(CLI::Range(0, 100000));
  t->add_option("--loss", train.loss,
                 "softmax_cross_entropy (the model outputs logits; default) or nll (it outputs log-probabilities)")
      ->check(CLI::IsMember({"softmax_cross_entropy", "nll"}));
  t->add_option("--optimizer", train.optimizer, "sgd, adam or adamw (default adam)")->check(CLI::IsMember({"sgd", "adam", "adamw"}));
  t->add_option("--lr", train.lr, "Learning rate (default 1e-3)")->check(CLI::PositiveNumber);
  t->add_option("--momentum", train.momentum, "SGD momentum (default 0)")->check(CLI::Range(0.0, 1.0));
  t->add_flag("--nesterov", train.nesterov, "Nesterov momentum (sgd with --momentum > 0)");
  t->add_option("--weight-decay", train.weight_decay, "L2 (sgd) or decoupled (adamw) weight decay (default 0)")->check(CLI::Range(0.0, 1.0));
  t->add_option("--seed", train.seed, "Seed of the weight initialization (--arch) and the shuffling (default 0)");
  t->add_option("--threads", train.threads, "Intra-op threads (default 1; 0 = all cores)")->check(CLI::Range(0, 1024));
  t->add_option("--device", train.device,
                "Where nodes run: cpu (default), cuda or vulkan (exit 8 when there is no such device), auto, null")
      ->check(CLI::IsMember({"cpu", "cuda", "vulkan", "auto", "null"}));
  t->add_option("--limit", train.limit, "Train on the first N samples only (default: all)")->check(CLI::NonNegativeNumber);
  t->add_option("-o,--out-dir", train.out_dir, "Write checkpoint_epoch<N>.tsr, loss.csv, epochs.csv and loss.png here");
  t->footer(exit_code_table());

  ExportOptions exp;
  auto* x = app.add_subcommand("export", "Write an inference-only .tsr from a training checkpoint (weights as constants)");
  x->add_option("checkpoint", exp.checkpoint, "Checkpoint (.tsr written by tessera train)")->required();
  x->add_option("-o,--output", exp.output, "Output .tsr file")->required();
  x->add_option("--signature", exp.signature, "Signature to export (default infer)");
  x->footer(exit_code_table());

  GradOptions grad;
  auto* gr = app.add_subcommand(
      "grad", "Write a model computing MODEL's outputs followed by the gradients of a loss (outputs <wrt>_grad)");
  gr->add_option("model", grad.model, "Model file (.tsr; or .onnx with the importer)")->required();
  gr->add_option("-o,--output", grad.output, "Output .tsr file")->required();
  gr->add_option("--loss", grad.loss, "The output to differentiate (default: the first output; summed if not scalar)");
  gr->add_option("--wrt", grad.wrt,
                 "Graph inputs or constant weights to differentiate with respect to, comma-separated "
                 "(default: every floating-point constant the loss depends on)")
      ->delimiter(',')
      ->allow_extra_args(false);
  gr->footer(exit_code_table());

  ScriptOptions script;
  auto* sc = app.add_subcommand("script", "Run a Python-subset script eagerly, trace it or convert it to a .tsr graph");
  sc->add_option("file", script.file, "Script (.py)")->required();
  sc->add_option("--entry", script.entry, "The function to run")->required();
  sc->add_option("-i,--input", script.inputs, "Argument NAME=FILE (.npy or .pb) of the entry function. Repeatable.")
      ->allow_extra_args(false);
  sc->add_option("--mode", script.mode, "eager (default), trace or convert")
      ->check(CLI::IsMember({"eager", "trace", "convert"}));
  sc->add_option("-o,--output", script.output, "trace/convert: write the graph to this .tsr file");
  sc->add_option("--output-dir", script.output_dir, "Write output_<i>.npy and outputs.json here (as tessera run)");
  sc->add_flag("--print-graph", script.print_graph, "trace/convert: print the graph");
  sc->add_option("--dynamic", script.dynamic, "convert: leave axis AXIS of input NAME dynamic (NAME:AXIS). Repeatable.")
      ->allow_extra_args(false);
  sc->add_flag("--no-unroll", script.no_unroll, "convert: make `for i in range(n)` a Loop even when n is a host integer");
  sc->footer(exit_code_table());

  // CLI11 would report an unknown command as "A subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::cerr << "tessera: usage error: unknown command '" << argv[1]
              << "' (commands: convert, run, inspect, optimize, ops, grad, train, export, script)\nRun 'tessera --help' for usage.\n";
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

  if (c->parsed()) return convert_command(convert);
  if (op->parsed()) return optimize_command(optimize);
  if (r->parsed()) return run_command(run);
  if (i->parsed()) return inspect_command(inspect);
  if (o->parsed()) return ops_command(ops);
  if (t->parsed()) return train_command(train);
  if (x->parsed()) return export_command(exp);
  if (gr->parsed()) return grad_command(grad);
  if (sc->parsed()) return script_command(script);
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
