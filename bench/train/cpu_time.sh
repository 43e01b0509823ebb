#!/usr/bin/env bash
# CPU seconds of training steps only, for a shared machine where wall times are not a measure:
# each side trains one epoch on LIMIT_A and on LIMIT_B images (same loading and test evaluation),
# and the difference of the two runs' user CPU time is what (LIMIT_B - LIMIT_A) / 64 steps of
# batch 64 cost. Sides alternate in every round: Tessera (this build), a baseline build ($OLD,
# optional) and PyTorch (bench/train/torch_train.py), all with the same model, data, Adam 1e-3
# and thread count (the mnv2 or lenet export of torch_train.py, as bench/train/run.sh).
# Prints every run (user, sys and wall seconds, epoch seconds of each limit) and the medians of
# the user-time differences with their ratios to PyTorch.
# Usage: bench/train/cpu_time.sh [ROUNDS=3] [THREADS=1] [SETUP=mnv2] [LIMIT_A=512] [LIMIT_B=1024]
#   OLD=path/to/tessera adds a baseline build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds="${1:-3}" t="${2:-1}" setup="${3:-mnv2}" la="${4:-512}" lb="${5:-1024}"
new="${TESSERA:-$root/build/release/bin/tessera}" old="${OLD:-}"
torch_py="$root/bench/train/torch_train.py"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$torch_py" --arch "$setup" --limit "$lb" --export "$out/$setup" >/dev/null 2>&1
sides="new${old:+ old} torch"
one() {  # side limit -> "user sys wall epoch"
  local side=$1 lim=$2 ep bin=$new
  if [[ $side == torch ]]; then
    /usr/bin/time -f "%U %S %e" -o "$out/t" /usr/bin/python3 "$torch_py" --arch "$setup" --limit "$lim" \
      --threads "$t" --seed 0 >"$out/log" 2>&1
    ep=$(sed -nE 's/^torch epoch 1: ([0-9.]+) s.*/\1/p' "$out/log")
  else
    [[ $side == old ]] && bin=$old
    /usr/bin/time -f "%U %S %e" -o "$out/t" "$bin" train "$out/$setup/$setup.onnx" --data "$out/$setup/data" \
      --epochs 1 --limit "$lim" --threads "$t" --seed 0 >"$out/log" 2>&1
    ep=$(sed -nE 's/^epoch 1: .* ([0-9.]+) s \(.*/\1/p' "$out/log")
  fi
  echo "$(tail -1 "$out/t") $ep"
}
for ((i = 1; i <= rounds; ++i)); do
  for side in $sides; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    a=$(one "$side" "$la") b=$(one "$side" "$lb")
    echo "$i $side threads=$t load=$load limit$la=[$a] limit$lb=[$b] steps_user=$(echo "$a $b" | awk '{printf "%.2f", $5 - $1}')" |
      tee -a "$out/runs"
  done
done
/usr/bin/python3 - "$out/runs" <<'PY'
import re, statistics, sys
d = {}
for line in open(sys.argv[1]):
    f = line.split()
    d.setdefault(f[1], []).append(float(re.search(r"steps_user=([0-9.-]+)", line).group(1)))
med = {k: statistics.median(v) for k, v in d.items()}
for k, v in d.items():
    print(f"{k}: median {med[k]:.2f} s user ({', '.join(f'{x:.2f}' for x in v)}), ratio to torch {med[k] / med['torch']:.2f}")
PY
