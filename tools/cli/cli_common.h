// Shared pieces of the `tessera` command-line tool: exit codes, error reporting, option structs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/base/limits.h"
#include "core/ir/graph.h"
#include "core/tensor/tensor.h"
#include "tessera/trainer.h"

namespace CLI {
class App;
}

namespace tsr::cli {

// Exit codes (also printed by `tessera --help`). One per StatusCode group so that scripts can
// tell a bad model from a bad input without parsing messages.
//   0 ok
//   2 usage error (unknown option, missing argument, malformed option value)
//   3 invalid model (malformed or inconsistent .tsr / .onnx file)
//   4 invalid argument or input (wrong input count, shape, dtype; bad input file)
//   5 unsupported (op, dtype or format this build cannot handle)
//   6 not found (missing file, unknown input name, signature, backend)
//   7 resource limit exceeded (allocation, configured limits)
//   8 backend failure (device, driver)
//   9 internal error (a bug in Tessera: please report it)
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 2,
  kExitInvalidModel = 3,
  kExitInvalidArgument = 4,
  kExitUnsupported = 5,
  kExitNotFound = 6,
  kExitResource = 7,
  kExitBackend = 8,
  kExitInternal = 9,
};

// The exit-code table as printed in `tessera --help`.
const char* exit_code_table();
int exit_code_for(StatusCode code);
// Prints "tessera: error: <message>" to stderr and returns the exit code for the status.
int report_error(const Status& status);

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;  // "FILE" or "NAME=FILE"
  std::vector<std::string> shapes;  // "NAME=1,3,48,320"
  bool random_inputs = false;
  uint64_t seed = 0;
  std::string output_dir;
  int threads = 1;
  bool inter_op = false;
  int repeat = 1;
  int warmup = 0;  // untimed runs before the --repeat timed ones
  bool no_optimize = false;  // run the graph as loaded (default: passes::optimize first, CPU only)
  std::vector<std::string> skip_passes;  // optimization passes left out (passes::disable_pass names)
  std::string backend = "cpu";
  bool profile = false;
  int profile_top = 15;  // --profile-top: nodes listed by --profile
  uint64_t max_memory = 0;                // 0 = SessionOptions' default
  int64_t max_loop_iterations = kDefaultMaxLoopIterations;
  std::string device = "cpu";   // cpu | vulkan | auto | null (SessionOptions::device)
  std::string check_against;    // "cpu": compare every node output with a CPU run
  std::string fast_math = "none";  // none | bf16 (SessionOptions::fast_math)
};

struct InspectOptions {
  std::string model;
  bool json = false;
  std::string placement;  // a device backend: print each node's device instead
};

struct OpsOptions {
  bool markdown = false;
  // --used MODEL...: print (or write to `output`) the sorted op types the models' graphs use,
  // subgraphs included, one per line with the dtypes their nodes use: the input of
  // -DTSR_SELECTED_OPS (selective build).
  std::vector<std::string> used;
  std::string output;
};

struct OptimizeOptions {
  std::string input;
  std::string output;
  std::vector<std::string> skip_passes;  // passes::disable_pass names
};

struct ConvertOptions {
  std::string input;
  std::string output;
};

struct TrainOptions {
  std::string model;  // inference model or checkpoint; empty with --arch
  std::string arch;   // built-in architecture (tools/train/architectures.h)
  std::string data = "/usr/share/datasets/fashion-mnist";
  int64_t batch_size = 64;
  int epochs = 10;
  TrainingSpec spec;  // loss and optimizer (patterns unused: `train` trains every weight)
  uint64_t seed = 0;
  int threads = 1;
  std::string device = "cpu";
  int64_t limit = 0;
  std::string out_dir;
};

struct PrepareTrainingOptions {
  std::string model;   // inference model (.onnx/.tsr)
  std::string output;  // training model (.tsr)
  TrainingSpec spec;    // loss, optimizer, trainable/frozen name patterns
};

struct ExportOptions {
  std::string checkpoint;
  std::string output;
  std::string signature = "infer";
};

struct GradOptions {
  std::string model;
  std::string output;
  std::string loss;              // "" = the first output
  std::vector<std::string> wrt;  // empty = every float constant the loss depends on
};

struct ScriptOptions {
  std::string file;
  std::string entry;
  std::vector<std::string> inputs;   // "NAME=FILE"
  std::string mode = "eager";
  std::string output;                // -o OUT.tsr (trace, convert)
  std::string output_dir;
  bool print_graph = false;
  std::vector<std::string> dynamic;  // "NAME:AXIS"
  bool no_unroll = false;
};

// The output printing and --output-dir writing of `tessera run` (cmd_run.cpp), shared by the
// commands that produce tensors. write_outputs writes output_<i>.npy and outputs.json.
std::string summary(const Tensor& t);
void print_output(size_t i, const std::string& name, const Tensor& t);
Status write_outputs(const std::string& dir, const std::vector<std::string>& names, const std::vector<Tensor>& outs);

// Each command returns a process exit code.
int run_command(const RunOptions& o);
int inspect_command(const InspectOptions& o);
int ops_command(const OpsOptions& o);
int convert_command(const ConvertOptions& o);
int optimize_command(const OptimizeOptions& o);
int train_command(const TrainOptions& o);
int export_command(const ExportOptions& o);
int prepare_training_command(const PrepareTrainingOptions& o);
int grad_command(const GradOptions& o);
int script_command(const ScriptOptions& o);
// cmd_placement.cpp: `inspect --placement DEVICE` and `run --check-against cpu` (exit 1 when a
// node's output differs beyond atol 1e-4 + rtol 1e-4, after naming the first such node).
int inspect_placement(const ir::Model& m, const std::string& device, bool json);
int check_against(const std::shared_ptr<const ir::Model>& model, const std::vector<Tensor>& inputs, const RunOptions& o);

// A subcommand of `tessera`, registered by the cmd_*.cpp that implements it: register_X adds
// `app`'s subcommand X with its options and help text, parsing into options the returned
// `run` owns; main.cpp runs the one that was parsed. `run` returns the process exit code.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
Subcommand register_convert(CLI::App& app);
Subcommand register_optimize(CLI::App& app);
Subcommand register_run(CLI::App& app);  // cmd_run_options.cpp
Subcommand register_inspect(CLI::App& app);
Subcommand register_ops(CLI::App& app);
Subcommand register_train(CLI::App& app);   // cmd_train.cpp
Subcommand register_export(CLI::App& app);  // cmd_train.cpp
Subcommand register_prepare_training(CLI::App& app);  // cmd_train.cpp
Subcommand register_grad(CLI::App& app);
Subcommand register_script(CLI::App& app);
Subcommand register_generate(CLI::App& app);  // cmd_generate.cpp
Subcommand register_quantize(CLI::App& app);  // cmd_quantize.cpp
}  // namespace tsr::cli
