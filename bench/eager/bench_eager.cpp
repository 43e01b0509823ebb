// Eager dispatch overhead: microseconds per `c = a + b` on tiny f32 tensors through the public
// eager API (tsr::eager::Tensor, default context, one thread). For each size, `--runs` timed
// loops of `--iters` additions follow a warm-up; the median loop gives µs/op. bench/eager/run.sh
// runs the same loops with PyTorch and prints the ratio.
//
//   tessera_bench_eager [--iters N] [--runs R] [--sizes 1,16,1024]
// Output, one line per size: "tessera size=<n> us_per_op=<median wall> min=<min wall>
// cpu_us_per_op=<median thread CPU time>". The CPU-time figure is the robust one on a machine
// shared with other work (wall time then includes time the thread waited for a core).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/include/tessera/eager.h"

namespace {

std::vector<int64_t> parse_sizes(const char* s) {
  std::vector<int64_t> out;
  while (*s) {
    char* end = nullptr;
    out.push_back(std::strtoll(s, &end, 10));
    s = *end == ',' ? end + 1 : end;
    if (end == nullptr || (*end != ',' && *end != '\0')) break;
  }
  return out;
}

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t iters = 200000;
  int runs = 7;
  std::vector<int64_t> sizes = {1, 16, 1024};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--sizes")) sizes = parse_sizes(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  using namespace tsr::eager;
  for (int64_t n : sizes) {
    const Tensor a = tensor<float>({n}, std::vector<float>(static_cast<size_t>(n), 1.5f));
    const Tensor b = tensor<float>({n}, std::vector<float>(static_cast<size_t>(n), 2.0f));
    Tensor c;
    for (int64_t i = 0; i < iters / 10 + 1; ++i) c = a + b;  // warm-up: kernel cache, allocator
    std::vector<double> us, cpu;
    for (int r = 0; r < runs; ++r) {
      const double c0 = thread_cpu_us();
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < iters; ++i) c = a + b;
      const auto t1 = std::chrono::steady_clock::now();
      cpu.push_back((thread_cpu_us() - c0) / static_cast<double>(iters));
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(iters));
    }
    if (!c.ok() || c.item(0) != 3.5) {
      std::fprintf(stderr, "wrong result: %s\n", default_context().status().message().c_str());
      return 1;
    }
    std::sort(us.begin(), us.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf("tessera size=%lld us_per_op=%.4f min=%.4f cpu_us_per_op=%.4f\n", static_cast<long long>(n),
                us[us.size() / 2], us[0], cpu[cpu.size() / 2]);
  }
  return 0;
}
