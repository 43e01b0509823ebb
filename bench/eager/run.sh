#!/usr/bin/env bash
# Eager dispatch overhead of a tiny Add: tessera's eager API against PyTorch 1.13 eager, in one
# run, on one thread. Both time `c = a + b` on f32 tensors of each size in a loop of ITERS
# iterations, RUNS times after a warm-up, and report the median loop as µs/op. PyTorch's figure
# includes the Python interpreter's loop and call overhead: that is what a PyTorch user pays per
# eager op, and the issue's target is half of it.
#
#   bench/eager/run.sh [BUILD_DIR]    (default build/release; needs target tessera_bench_eager)
# Environment: ITERS (200000), RUNS (7), SIZES (1,16,1024), PYTHON (/usr/bin/python3).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/release}"
bin="$build/bin/tessera_bench_eager"
iters="${ITERS:-200000}"
runs="${RUNS:-7}"
sizes="${SIZES:-1,16,1024}"
python="${PYTHON:-/usr/bin/python3}"
[[ -x "$bin" ]] || { echo "missing $bin: cmake --build $build --target tessera_bench_eager" >&2; exit 1; }

tsr_out="$("$bin" --iters "$iters" --runs "$runs" --sizes "$sizes")"
torch_out="$(OMP_NUM_THREADS=1 "$python" - "$iters" "$runs" "$sizes" <<'PY'
import statistics, sys, time
import torch
torch.set_num_threads(1)
iters, runs, sizes = int(sys.argv[1]), int(sys.argv[2]), [int(s) for s in sys.argv[3].split(",")]
for n in sizes:
    a = torch.full((n,), 1.5, dtype=torch.float32)
    b = torch.full((n,), 2.0, dtype=torch.float32)
    c = None
    for _ in range(iters // 10 + 1):  # warm-up
        c = a + b
    us, cpu = [], []
    for _ in range(runs):
        c0 = time.thread_time()
        t0 = time.perf_counter()
        for _ in range(iters):
            c = a + b
        t1 = time.perf_counter()
        cpu.append((time.thread_time() - c0) / iters * 1e6)
        us.append((t1 - t0) / iters * 1e6)
    assert float(c[0]) == 3.5
    print(f"torch size={n} us_per_op={statistics.median(us):.4f} min={min(us):.4f} "
          f"cpu_us_per_op={statistics.median(cpu):.4f} version={torch.__version__}")
PY
)"
echo "$tsr_out"
echo "$torch_out"
echo
echo "| size | tessera µs/op (wall) | torch µs/op (wall) | ratio (wall) | tessera µs/op (CPU) | torch µs/op (CPU) | ratio (CPU) |"
echo "|-----:|-----:|-----:|-----:|-----:|-----:|-----:|"
paste <(echo "$tsr_out") <(echo "$torch_out") | while read -r _ t_size t_us _ t_cpu _ _ p_us _ p_cpu _; do
  awk -v n="${t_size#size=}" -v a="${t_us#us_per_op=}" -v b="${p_us#us_per_op=}" \
      -v c="${t_cpu#cpu_us_per_op=}" -v d="${p_cpu#cpu_us_per_op=}" \
      'BEGIN { printf "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", n, a, b, a / b, c, d, c / d }'
done
