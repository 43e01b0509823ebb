// ONNX backend-suite conformance harness (issue: conformance; DESIGN.md §11).
//
// Usage: tessera_conformance DATA_DIR RESULTS_MD [EXPECTED_PASS_TXT] [--update] [--min-pass N]
//
// For every case DATA_DIR/{node,simple}/<case>/ (model.onnx + test_data_set_*/{input,output}_N.pb)
// it imports the model, saves it as .tsr bytes and loads them back, runs it on the CPU backend with each data set and compares every output:
// floating point at rtol = atol = 1e-4 (|got - want| <= atol + rtol * |want|, NaN matches NaN),
// integers, bools and strings exactly. Cases whose ops draw random numbers (Bernoulli, training
// Dropout) are checked for dtype, shape and finiteness only. Each case runs in a forked child
// with a time limit, so a crash or hang in one case is reported as that case's failure.
//
// Writes RESULTS_MD (one line per case: pass / mismatch (max error) / unsupported (ops) / import
// error / run error / crash, then `conformance: P passed, F failed of T`). With EXPECTED_PASS_TXT
// (one case name per line) it exits 1 if a listed case no longer passes and prints newly passing
// cases; --update adds the newly passing cases to the file but never drops one (a case that stops
// passing still fails the run: removing it is a deliberate edit of the file). --min-pass N also
// fails the run when fewer than N cases pass (CTest passes the figure README.md states).
#include <poll.h>
#include <cstdlib>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/io/tsr_io.h"
#include "tools/onnx/onnx_import.h"

namespace fs = std::filesystem;
using namespace tsr;

namespace {

constexpr double kTol = 1e-4;
constexpr int kCaseTimeoutSeconds = 60;

bool is_random_case(const std::string& name) {
  return name.find("bernoulli") != std::string::npos || name.find("training_dropout") != std::string::npos;
}

std::vector<fs::path> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) files.push_back(e.path());
  // input_10.pb sorts after input_9.pb
  std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) {
    auto num = [&](const fs::path& p) { return std::stoi(p.stem().string().substr(prefix.size())); };
    return num(a) < num(b);
  });
  return files;
}

double as_double(const Tensor& t, int64_t i) { return t.scalar_f64(i); }

// Returns "" when equal, else a description of the first/largest difference.
std::string compare(const Tensor& got, const Tensor& want, bool random_case, double* max_err) {
  if (got.kind() != want.kind())
    return str_cat("a ", value_kind_name(got.kind()), ", expected a ", value_kind_name(want.kind()));
  if (want.is_none()) return "";
  if (want.is_sequence()) {
    if (got.elements().size() != want.elements().size())
      return str_cat("sequence of ", got.elements().size(), " tensors, expected ", want.elements().size());
    for (size_t i = 0; i < want.elements().size(); ++i) {
      const std::string d = compare(got.elements()[i], want.elements()[i], random_case, max_err);
      if (!d.empty()) return str_cat("element ", i, ": ", d);
    }
    return "";
  }
  if (got.dtype() != want.dtype())
    return str_cat("dtype ", dtype_name(got.dtype()), ", expected ", dtype_name(want.dtype()));
  if (got.shape() != want.shape())
    return str_cat("shape ", shape_str(got.shape()), ", expected ", shape_str(want.shape()));
  const int64_t n = want.numel();
  if (want.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (got.data<std::string>()[i] != want.data<std::string>()[i]) return str_cat("string mismatch at ", i);
    return "";
  }
  if (random_case) {
    // Draws differ between runtimes: dtype and shape (checked above) must match, values must be
    // finite, and bool outputs (masks) are trivially in range.
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(as_double(got, i))) return str_cat("value at ", i, " is not finite");
    return "";
  }
  const bool exact = !dtype_is_float(want.dtype());
  double worst = 0;
  int64_t worst_i = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double g = as_double(got, i), w = as_double(want, i);
    if (exact && want.dtype() == DType::kI64) {
      if (got.data<int64_t>()[i] != want.data<int64_t>()[i]) return str_cat("value at ", i, ": ", got.data<int64_t>()[i], ", expected ", want.data<int64_t>()[i]);
      continue;
    }
    if (exact && want.dtype() == DType::kU64) {
      if (got.data<uint64_t>()[i] != want.data<uint64_t>()[i]) return str_cat("value at ", i, " differs");
      continue;
    }
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    const double err = std::fabs(g - w);
    const bool bad = exact ? g != w : !(err <= kTol + kTol * std::fabs(w));
    if (bad && (worst_i < 0 || err > worst || std::isnan(err))) {
      worst = std::isnan(err) ? INFINITY : err;
      worst_i = i;
    }
    if (!std::isnan(err)) *max_err = std::max(*max_err, err);
  }
  if (worst_i >= 0)
    return str_cat("max abs err ", worst, " at ", worst_i, " (got ", as_double(got, worst_i), ", expected ",
                   as_double(want, worst_i), ")");
  return "";
}

// onnx 1.12's generator saves bf16 test data as UINT16 tensors holding the bf16 bit patterns
// (numpy has no bf16); the model declares bf16, so such data is reinterpreted, bits unchanged.
Tensor as_declared_bf16(Tensor t, DType declared) {
  if (declared != DType::kBF16 || t.dtype() != DType::kU16) return t;
  auto made = Tensor::empty(DType::kBF16, t.shape());
  if (!made.ok()) return t;
  Tensor out = std::move(made).value();
  if (t.nbytes() > 0) std::memcpy(out.raw_mut(), t.raw(), t.nbytes());
  return out;
}

// Runs one case; returns "<status>\t<detail>".
std::string run_case(const fs::path& dir) {
  const std::string name = dir.filename().string();
  auto model = onnx_import::import_onnx_file((dir / "model.onnx").string());
  if (!model.ok()) {
    const auto& st = model.status();
    std::string msg = st.message();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    std::replace(msg.begin(), msg.end(), '|', '/');
    return str_cat(st.code() == StatusCode::kUnsupported ? "unsupported" : "import error", "\t", msg.substr(0, 300));
  }
  // As `tessera convert` + `tessera run` do: write the .tsr bytes and load them back, so every
  // case also exercises the file format (save, verified load, zero-copy constants).
  auto bytes = io::serialize_model(*model);
  if (!bytes.ok()) return str_cat("import error\tsave: ", bytes.status().message().substr(0, 300));
  auto owner = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  auto loaded = io::load_model_buffer(owner->data(), owner->size(), owner);
  if (!loaded.ok()) {
    std::string msg = loaded.status().message();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    return str_cat("import error\t.tsr reload: ", msg.substr(0, 300));
  }
  auto shared = std::make_shared<ir::Model>(std::move(loaded).value());
  const ir::Graph& main_graph = shared->main();
  auto kind_of = [&](const std::vector<int32_t>& ids, size_t k) {
    return k < ids.size() ? main_graph.tensors[static_cast<size_t>(ids[k])].kind : ValueKind::kTensor;
  };
  auto dtype_of = [&](const std::vector<int32_t>& ids, size_t k) {
    return k < ids.size() ? main_graph.tensors[static_cast<size_t>(ids[k])].dtype : DType::kUndefined;
  };
  auto session = Session::create(shared);
  if (!session.ok()) {
    std::string msg = session.status().message();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    return str_cat(session.status().code() == StatusCode::kUnsupported ? "unsupported" : "prepare error", "\t", msg.substr(0, 300));
  }
  double max_err = 0;
  int sets = 0;
  for (const auto& set_dir : sorted_files(dir, "test_data_set_")) {
    std::vector<Tensor> inputs, expected;
    for (const auto& f : sorted_files(set_dir, "input_")) {
      auto t = onnx_import::read_value_proto_file(f.string(), kind_of(main_graph.inputs, inputs.size()));
      if (!t.ok()) return str_cat("input error\t", f.filename().string(), ": ", t.status().message().substr(0, 200));
      inputs.push_back(as_declared_bf16(std::move(t).value(), dtype_of(main_graph.inputs, inputs.size())));
    }
    for (const auto& f : sorted_files(set_dir, "output_")) {
      auto t = onnx_import::read_value_proto_file(f.string(), kind_of(main_graph.outputs, expected.size()));
      if (!t.ok()) return str_cat("input error\t", f.filename().string(), ": ", t.status().message().substr(0, 200));
      expected.push_back(as_declared_bf16(std::move(t).value(), dtype_of(main_graph.outputs, expected.size())));
    }
    auto outs = (*session)->run(inputs);
    if (!outs.ok()) {
      std::string msg = outs.status().message();
      std::replace(msg.begin(), msg.end(), '\n', ' ');
      return str_cat(outs.status().code() == StatusCode::kUnsupported ? "unsupported" : "run error", "\t", msg.substr(0, 300));
    }
    if (outs->size() != expected.size())
      return str_cat("mismatch\t", outs->size(), " outputs, expected ", expected.size());
    for (size_t k = 0; k < expected.size(); ++k) {
      const std::string diff = compare((*outs)[k], expected[k], is_random_case(name), &max_err);
      if (!diff.empty()) return str_cat("mismatch\toutput[", k, "]: ", diff);
    }
    ++sets;
  }
  return str_cat("pass\t", is_random_case(name) ? "dtype/shape/range only (random op); " : "", sets,
                 " data set(s), max abs err ", max_err);
}

// Forks, runs the case in the child, reads its one-line result with a time limit.
std::string run_isolated(const fs::path& dir) {
  int fds[2];
  if (pipe(fds) != 0) return "crash\tpipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string r = run_case(dir);
    ssize_t off = 0;
    while (off < static_cast<ssize_t>(r.size())) {
      const ssize_t w = write(fds[1], r.data() + off, r.size() - static_cast<size_t>(off));
      if (w <= 0) break;
      off += w;
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kCaseTimeoutSeconds);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) { timed_out = true; break; }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t r = read(fds[0], buf, sizeof buf);
    if (r <= 0) break;
    out.append(buf, static_cast<size_t>(r));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) return str_cat("crash\ttimed out after ", kCaseTimeoutSeconds, " s");
  if (WIFSIGNALED(status)) return str_cat("crash\tsignal ", WTERMSIG(status));
  if (out.empty()) return "crash\tno result";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage =
      "usage: tessera_conformance DATA_DIR RESULTS_MD [EXPECTED_PASS_TXT] [--update] [--min-pass N]\n";
  if (argc < 3) {
    std::cerr << kUsage;
    return 2;
  }
  const fs::path data = argv[1];
  const std::string results_path = argv[2];
  std::string expected_path;
  bool update = false;
  long min_pass = 0;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--update") {
      update = true;
    } else if (a == "--min-pass" && i + 1 < argc) {
      min_pass = std::strtol(argv[++i], nullptr, 10);
    } else if (expected_path.empty() && a.rfind("--", 0) != 0) {
      expected_path = a;
    } else {
      std::cerr << kUsage;
      return 2;
    }
  }

  std::vector<fs::path> cases;
  for (const char* group : {"node", "simple"}) {
    if (!fs::exists(data / group)) continue;
    for (const auto& e : fs::directory_iterator(data / group))
      if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  if (cases.empty()) {
    std::cerr << "no cases under " << data << "\n";
    return 1;
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, std::pair<std::string, std::string>> results;  // "group/case" -> (status, detail)
  for (const auto& c : cases) {
    const std::string key = c.parent_path().filename().string() + "/" + c.filename().string();
    std::string r = run_isolated(c);
    // Messages name files under the (temporary) data dir: keep results.md independent of it.
    for (size_t at; (at = r.find(data.string() + "/")) != std::string::npos;) r.erase(at, data.string().size() + 1);
    const auto tab = r.find('\t');
    results[key] = {r.substr(0, tab), tab == std::string::npos ? "" : r.substr(tab + 1)};
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::map<std::string, int> by_status;
  std::set<std::string> passing;
  for (const auto& [k, v] : results) {
    ++by_status[v.first];
    if (v.first == "pass") passing.insert(k);
  }
  const int total = static_cast<int>(results.size());
  const int passed = static_cast<int>(passing.size());

  // Explanations of known failures: known_failures.txt beside the expectation file
  // (lines "group/case<TAB>why").
  std::map<std::string, std::string> why;
  if (!expected_path.empty()) {
    std::ifstream in(fs::path(expected_path).parent_path() / "known_failures.txt");
    for (std::string line; std::getline(in, line);) {
      const auto tab = line.find('\t');
      if (!line.empty() && line[0] != '#' && tab != std::string::npos) why[line.substr(0, tab)] = line.substr(tab + 1);
    }
  }
  std::ofstream md(results_path);
  md << "# ONNX backend node suite (onnx 1.12) on Tessera's CPU backend\n\n"
     << "Generated by `tests/conformance/run.sh` (rtol = atol = 1e-4; integers, bools and strings exact).\n\n"
     << "conformance: " << passed << " passed, " << total - passed << " failed of " << total << "\n\n";
  for (const auto& [s, n] : by_status) md << "- " << s << ": " << n << "\n";
  md << "\n## Cases that do not pass\n\n| case | result | detail | why |\n| --- | --- | --- | --- |\n";
  for (const auto& [k, v] : results)
    if (v.first != "pass") md << "| " << k << " | " << v.first << " | " << v.second << " | " << (why.count(k) ? why[k] : "") << " |\n";
  md << "\n## All cases\n\n| case | result | detail |\n| --- | --- | --- |\n";
  for (const auto& [k, v] : results) md << "| " << k << " | " << v.first << " | " << v.second << " |\n";
  md.close();

  int regressions = 0;
  if (!expected_path.empty()) {
    std::set<std::string> expected;
    std::ifstream in(expected_path);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') expected.insert(line);
    for (const auto& e : expected)
      if (!passing.count(e)) {
        ++regressions;
        std::cout << "REGRESSION: " << e << ": " << results[e].first << " " << results[e].second << "\n";
      }
    int newly = 0;
    for (const auto& p : passing)
      if (!expected.count(p)) {
        ++newly;
        std::cout << "newly passing: " << p << "\n";
      }
    if (newly) std::cout << newly << " newly passing case(s): raise the expectation with --update\n";
    if (update && newly) {
      std::set<std::string> keep = expected;  // never drops a case, even one failing now
      keep.insert(passing.begin(), passing.end());
      std::ofstream out(expected_path);
      out << "# ONNX backend cases that pass; tests fail if one of these stops passing.\n";
      for (const auto& p : keep) out << p << "\n";
      std::cout << "added " << newly << " case(s) to " << expected_path << "\n";
    }
  }
  if (passed < min_pass) {
    std::cout << "FAIL: " << passed << " cases pass, fewer than the " << min_pass << " README.md states\n";
    ++regressions;
  }
  std::cout << "conformance: " << passed << " passed, " << total - passed << " failed of " << total << " ("
            << secs << " s)\n";
  for (const auto& [s, n] : by_status) std::cout << "  " << s << ": " << n << "\n";
  return regressions ? 1 : 0;
}
