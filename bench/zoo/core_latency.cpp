// Core-to-core latency of this machine: two threads hand one cache line back and forth, and the
// time per hand-off is printed. On a VM the two vCPUs may sit on cores that share a last-level
// cache (tens of ns) or not (hundreds: another CCX or socket); two-thread kernels that pass data
// between threads at every op are slower in the second case, so bench/zoo/run.sh prints this
// next to its two-thread figures. Usage: core_latency [HANDOFFS] (default 2,000,000).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  const long handoffs = argc > 1 ? std::atol(argv[1]) : 2000000;
  std::atomic<long> turn{0};
  // Thread `parity` waits for an even (or odd) count, then passes the line on by incrementing it.
  const auto play = [&](long parity) {
    for (long i = parity; i < handoffs; i += 2) {
      while (turn.load(std::memory_order_acquire) != i) {
      }
      turn.store(i + 1, std::memory_order_release);
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::thread other(play, 1);
  play(0);
  other.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("core-to-core latency: %.0f ns per one-way hand-off of a cache line (%ld hand-offs)\n",
              s / double(handoffs) * 1e9, handoffs);
  return 0;
}
