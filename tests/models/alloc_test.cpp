// Steady-state heap allocations of real models (issue 12: "no heap allocation per op in steady
// state, counted"). Imports an ONNX model, optimizes it as `tessera run` does, runs it once to
// warm up and then `--runs` more times with the same inputs, at each thread count given, and
// counts every heap allocation made during the runs after the warm-up:
//   - operator new (all forms), on any thread, through tools/cli/heap_counter.cpp's replacements;
//   - the tensor allocator's system allocations (tensor_memory_stats().system_allocations), which
//     take memory with aligned_alloc rather than operator new.
// Passes only when both counts are 0. With --trace, prints a backtrace of each counted operator
// new (to find what allocates).
//
// Usage: tessera_alloc_test MODEL.onnx [--threads 1,2] [--warmup 1] [--runs 3] [--trace]
//                           --input NAME=DTYPE:D0,D1,..:LOW:HIGH ...   (float32 / int64; LOW = HIGH:
//                                                                       a constant, e.g. sr=int64::16000:16000)
// Exit 0 pass, 1 fail, 2 usage, 77 the model file is absent.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "tools/cli/heap_counter.h"
#include "tools/onnx/onnx_import.h"

using namespace tsr;

namespace {

struct InputSpec {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  double low = 0, high = 0;
};

// NAME=DTYPE:D0,D1,..:LOW:HIGH (the name may contain ':' and '.', so split from the right).
bool parse_input(const std::string& arg, InputSpec* out) {
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos) return false;
  out->name = arg.substr(0, eq);
  std::vector<std::string> f;
  size_t start = eq + 1;
  for (size_t c; (c = arg.find(':', start)) != std::string::npos; start = c + 1) f.push_back(arg.substr(start, c - start));
  f.push_back(arg.substr(start));
  if (f.size() != 4) return false;
  if (f[0] == "float32") out->dtype = DType::kF32;
  else if (f[0] == "int64") out->dtype = DType::kI64;
  else return false;
  out->shape.clear();
  for (size_t s = 0; !f[1].empty() && s <= f[1].size();) {
    const size_t c = std::min(f[1].find(',', s), f[1].size());
    out->shape.push_back(std::atoll(f[1].substr(s, c - s).c_str()));
    s = c + 1;
  }
  out->low = std::atof(f[2].c_str());
  out->high = std::atof(f[3].c_str());
  return true;
}

Expected<Tensor> make_input(const InputSpec& spec, uint32_t seed) {
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(spec.dtype, spec.shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(spec.low, spec.high);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = spec.low == spec.high ? spec.low : dist(rng);
    if (spec.dtype == DType::kF32) t.mut_data<float>()[i] = static_cast<float>(v);
    else t.mut_data<int64_t>()[i] = static_cast<int64_t>(v);
  }
  return t;
}

std::vector<int> parse_threads(const std::string& s) {
  std::vector<int> out;
  for (size_t b = 0; b <= s.size();) {
    const size_t c = std::min(s.find(',', b), s.size());
    out.push_back(std::atoi(s.substr(b, c - b).c_str()));
    b = c + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, threads_arg = "1,2";
  int warmup = 1, runs = 3;
  bool trace = false;
  std::vector<InputSpec> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--threads" && has_value) threads_arg = argv[++i];
    else if (a == "--warmup" && has_value) warmup = std::atoi(argv[++i]);
    else if (a == "--runs" && has_value) runs = std::atoi(argv[++i]);
    else if (a == "--trace") trace = true;
    else if (a == "--input" && has_value) {
      InputSpec s;
      if (!parse_input(argv[++i], &s)) return std::fprintf(stderr, "bad --input %s\n", argv[i]), 2;
      specs.push_back(std::move(s));
    } else if (path.empty() && a[0] != '-') path = a;
    else return std::fprintf(stderr, "unknown argument %s\n", a.c_str()), 2;
  }
  if (path.empty() || runs < 1 || warmup < 0) {
    std::fprintf(stderr, "usage: tessera_alloc_test MODEL.onnx [--threads 1,2] [--warmup N] [--runs N] --input SPEC...\n");
    return 2;
  }
  if (!std::filesystem::exists(path)) {
    std::printf("SKIP: %s is absent (run third_party/models/fetch.sh)\n", path.c_str());
    return 77;
  }
  auto imported = onnx_import::import_onnx_file(path);
  if (!imported.ok()) return std::fprintf(stderr, "%s\n", imported.status().to_string().c_str()), 1;
  auto model = std::make_shared<ir::Model>(std::move(imported).value());

  const ir::Graph& g = model->main();
  std::vector<Tensor> inputs(g.inputs.size());
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const std::string& name = g.tensors[static_cast<size_t>(g.inputs[k])].name;
    const InputSpec* spec = nullptr;
    for (const InputSpec& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) return std::fprintf(stderr, "no --input for graph input \"%s\"\n", name.c_str()), 2;
    auto t = make_input(*spec, static_cast<uint32_t>(k + 1));
    if (!t.ok()) return std::fprintf(stderr, "input %s: %s\n", name.c_str(), t.status().to_string().c_str()), 2;
    inputs[k] = std::move(t).value();
  }

  bool pass = true;
  for (int threads : parse_threads(threads_arg)) {
    SessionOptions so;  // optimization kAll, as `tessera run` does
    so.num_threads = threads;
    auto session = Session::create(model, so);
    if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().to_string().c_str()), 1;
    // Outputs go into one vector the caller keeps (Session::run's overload that reuses it), as a
    // streaming caller would: each run replaces the previous run's outputs.
    std::vector<Tensor> outputs;
    for (int r = 0; r < warmup; ++r) {
      Status st = (*session)->run(inputs, &outputs);
      if (!st.ok()) return std::fprintf(stderr, "warm-up: %s\n", st.to_string().c_str()), 1;
    }
    Status status = ok_status();
    const size_t system_before = tensor_memory_stats().system_allocations;
    const size_t news_before = tsr::cli::heap_allocations();
    tsr::cli::print_allocation_backtraces(trace);
    for (int r = 0; r < runs && status.ok(); ++r) status = (*session)->run(inputs, &outputs);
    tsr::cli::print_allocation_backtraces(false);
    const size_t news = tsr::cli::heap_allocations() - news_before;
    const size_t system = tensor_memory_stats().system_allocations - system_before;
    if (!status.ok()) return std::fprintf(stderr, "run: %s\n", status.to_string().c_str()), 1;
    const bool ok = news == 0 && system == 0;
    std::printf("%s, %d thread(s): %zu operator new and %zu tensor buffers from the system allocator in %d run(s) "
                "after %d warm-up: %s\n",
                std::filesystem::path(path).filename().c_str(), threads, news, system, runs, warmup,
                ok ? "PASS" : "FAIL");
    pass = pass && ok;
  }
  return pass ? 0 : 1;
}
