// Read bandwidth from memory, one and two threads: each thread sums its half (or all) of a buffer
// far larger than the last-level cache, best of several passes, printed in GB/s. A batch-1 decode
// step reads every weight once per token, so its time is bounded below by weight bytes / this
// figure (bench/zoo/roofline.py --bandwidth). Usage: mem_bandwidth [MIB] (default 512).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// 64 independent sums (several vector registers' worth) so the loop is bound by the loads, not by
// the latency of one vector add chain.
float sum_range(const float* p, size_t n) {
  float acc[64] = {};
  for (size_t i = 0; i + 64 <= n; i += 64)
    for (int j = 0; j < 64; ++j) acc[j] += p[i + j];
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

double best_gbps(const std::vector<float>& buf, int threads, int passes) {
  double best = 0;
  volatile float sink = 0;
  for (int pass = 0; pass < passes; ++pass) {
    std::vector<float> part(threads);
    const size_t per = buf.size() / threads;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back([&, t] { part[t] = sum_range(buf.data() + t * per, per); });
    part[0] = sum_range(buf.data(), per);
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (float v : part) sink = sink + v;
    best = std::max(best, double(per) * threads * sizeof(float) / s / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512;
  std::vector<float> buf(mib * 1024 * 1024 / sizeof(float));
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = float(i & 255);
  for (int threads : {1, 2})
    std::printf("memory read bandwidth, %d thread(s): %.1f GB/s (%zu MiB buffer)\n", threads,
                best_gbps(buf, threads, 5), mib);
  return 0;
}
