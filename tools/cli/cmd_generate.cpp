// `tessera generate MODEL --prompt-ids 1,2,3 --max-new-tokens N [--top-k K --temperature T --seed S]
// [--stop ID]`: runs tsr::generate (tessera/generate.h) on a decoder-with-past model, printing each
// token id as it comes, then the prefill time and the tokens per second.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "tessera/generate.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/model_loader.h"

namespace tsr::cli {
namespace {

struct GenerateCommandOptions {
  std::string model;
  std::vector<int64_t> prompt;
  GenerateOptions generate;
  int threads = 1;
  bool no_optimize = false;
};

int generate_command(const GenerateCommandOptions& o) {
  auto model = load_model(o.model);
  if (!model.ok()) return report_error(model.status());
  SessionOptions options;
  options.num_threads = o.threads;
  if (o.no_optimize) options.optimization = OptimizationLevel::kNone;
  auto session = Session::create(*model, options);
  if (!session.ok()) return report_error(session.status());

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto first = start;
  size_t count = 0;
  auto ids = generate(**session, o.prompt, o.generate, [&](int64_t id) {
    if (count++ == 0) first = Clock::now();
    std::printf("%s%lld", count == 1 ? "" : " ", static_cast<long long>(id));
    std::fflush(stdout);
    return true;
  });
  const auto end = Clock::now();
  if (count) std::printf("\n");
  if (!ids.ok()) return report_error(ids.status());
  const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  // Step 0 runs the prompt and yields the first token; each later step yields one token.
  std::printf("prompt %zu tokens, generated %zu in %.1f ms: first token %.1f ms", o.prompt.size(), ids->size(),
              ms(end - start), ms(first - start));
  if (ids->size() > 1)
    std::printf(", decode %.1f tokens/s (%.2f ms/token)", static_cast<double>(ids->size() - 1) * 1000 / ms(end - first),
                ms(end - first) / static_cast<double>(ids->size() - 1));
  if (!ids->empty()) std::printf(", %.1f tokens/s overall", static_cast<double>(ids->size()) * 1000 / ms(end - start));
  std::printf("\n");
  return kExitOk;
}

}  // namespace

Subcommand register_generate(CLI::App& app) {
  auto o = std::make_shared<GenerateCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "generate", "Generate tokens with a decoder-with-past model (KV cache; docs/api.md \"Generation\")");
  sub->add_option("model", o->model,
                  "Model with input_ids, past_key_values.* inputs and logits, present.* outputs (.tsr or .onnx)")
      ->required();
  sub->add_option("--prompt-ids", o->prompt, "Prompt token ids, comma-separated")
      ->required()
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--max-new-tokens", o->generate.max_new_tokens, "Tokens to generate at most (default 32)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--top-k", o->generate.top_k, "Sample among the K most likely tokens (default 0: greedy)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--temperature", o->generate.temperature, "Divides the logits before top-k sampling (default 1)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--seed", o->generate.seed, "Seed of top-k sampling (default 0)");
  sub->add_option("--stop", o->generate.stop_tokens, "Stop after this token id (repeatable, or comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--past-prefix", o->generate.past_prefix,
                  "Past input name prefix (default: detected, past_key_values. or past_)");
  sub->add_option("--present-prefix", o->generate.present_prefix,
                  "Present output name prefix paired with --past-prefix (default: present. or present_)");
  sub->add_option("--threads", o->threads, "Intra-op threads (default 1; 0 = all cores)")->check(CLI::Range(0, 1024));
  sub->add_flag("--no-optimize", o->no_optimize, "Run the graph as loaded (default: the optimizations of `tessera optimize`)");
  return {sub, [o] { return generate_command(*o); }};
}

}  // namespace tsr::cli
