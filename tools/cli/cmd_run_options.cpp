// `tessera run`'s options and help text (the command itself: cmd_run.cpp).
#include <CLI/CLI.hpp>

#include <memory>

#include "tools/cli/cli_common.h"

namespace tsr::cli {

Subcommand register_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run a model's main graph and print its outputs");
  sub->add_option("model", o->model, "Model file (.tsr; .onnx is imported on the fly with the importer)")
      ->required();
  sub->add_option("-i,--input", o->inputs,
                  "Input tensor: FILE binds the next graph input in order, NAME=FILE binds by name. "
                  "Files: .npy, or ONNX TensorProto .pb. Repeatable.")
      ->allow_extra_args(false);
  sub->add_flag("--random-inputs", o->random_inputs,
                "Fill every input not given with deterministic random values (floats uniform in [-1, 1), "
                "integers in [0, 10), bools 0/1)");
  sub->add_option("--seed", o->seed, "Seed for --random-inputs (default 0)");
  sub->add_option("--shape", o->shapes,
                  "Shape for a random input with dynamic dims: NAME=1,3,48,320. Repeatable.")
      ->allow_extra_args(false);
  sub->add_option("--output-dir", o->output_dir,
                  "Write output_<i>.npy (graph-output order) and outputs.json to this directory");
  sub->add_flag("--inter-op,!--no-inter-op", o->inter_op,
                "With --threads > 1: also run independent nodes side by side (default off: intra-op threads only, "
                "as fast or faster on 2 cores)");
  sub->add_option("--threads", o->threads, "Intra-op threads (default 1; 0 = all cores)")
      ->check(CLI::Range(0, 1024));
  sub->add_option("--repeat", o->repeat, "Run N times and print median/min latency (default 1)")
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--warmup", o->warmup, "Untimed runs before the timed ones (default 0)")
      ->check(CLI::Range(0, 1000000));
  sub->add_flag("--no-optimize", o->no_optimize,
                "Run the graph as loaded; by default a CPU run applies the graph optimizations of `tessera optimize` first");
  sub->add_option("--skip-pass", o->skip_passes, "Leave out an optimization pass (repeatable; see `tessera optimize --help`)");
  sub->add_option("--backend", o->backend, "Backend (default cpu)");
  sub->add_option("--max-memory", o->max_memory,
                  "Cap on tensor memory a run keeps alive, in bytes or with a unit (512M, 2G); "
                  "default 3/4 of physical memory. Exceeding it is exit 7")
      ->transform(CLI::AsSizeValue(false));
  sub->add_option("--max-loop-iterations", o->max_loop_iterations,
                  "Cap on the iterations of any one Loop/Scan (default 1000000; 0 = unlimited). Exceeding it is exit 7")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--device", o->device,
                  "Where nodes run: cpu (default), cuda or vulkan (exit 8 when there is no such device), auto (a "
                  "device when one exists, cuda first, else cpu), null (the host-memory skeleton device)")
      ->check(CLI::IsMember({"cpu", "cuda", "vulkan", "auto", "null"}));
  sub->add_option("--fast-math", o->fast_math,
                  "Opt-in reduced precision: none (default, exact f32) or bf16 (attention's Q*K^T and P*V with "
                  "bfloat16 operands and f32 accumulation on CPUs with AVX512_BF16, else f32 with a note on "
                  "stderr; outputs differ by about 1e-3..1e-2 relative)")
      ->check(CLI::IsMember({"none", "bf16"}));
  sub->add_option("--check-against", o->check_against,
                  "cpu: run on --device and on the CPU, report the first node (execution order) whose output "
                  "differs beyond 1e-4 (exit 1) or that all agree")
      ->check(CLI::IsMember({"cpu"}));
  sub->add_flag("--profile", o->profile,
                "Print the total time per op type and per node (top 15, summed over --repeat runs), and "
                "how evenly the work splits over the threads (thread CPU time)");
  sub->add_option("--profile-top", o->profile_top, "With --profile: how many nodes to list (default 15)")
      ->check(CLI::PositiveNumber);
  return {sub, [o] { return run_command(*o); }};
}

}  // namespace tsr::cli
