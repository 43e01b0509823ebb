#!/bin/bash
# scripts/gpu_bundle.sh [BUILD_DIR] [OUT_DIR]: packs what scripts/gpu_check.sh's checks need into
# OUT_DIR (default .gpu/, git-ignored) for a GPU machine that has the NVIDIA driver but none of the
# build's packages (no node, no flatbuffers, an older glibc): the CLI and the device test binaries
# with every shared library they load (glibc's loader included: they run through it, so the
# machine's own glibc version does not matter; libcuda comes from the machine's driver),
# onnxruntime-node's references for the device models (made here, where node is), those models,
# the CLI test model and a 4096/2000-sample cut of Fashion-MNIST. Writes OUT_DIR/bundle.tar.xz and
# OUT_DIR/check.sh; on the GPU machine: `bash OUT_DIR/check.sh` (exit 0 all checks pass).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
out=${2:-$root/.gpu}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out" "$stage/b/bin" "$stage/b/lib" "$stage/b/refs" "$stage/b/models" "$stage/b/data"
bins=("$build/bin/tessera" "$build/tests/vulkan/tessera_device_tests" "$build/tests/cuda/tessera_cuda_tests")
for b in "${bins[@]}"; do strip -o "$stage/b/bin/$(basename "$b")" "$b"; done
# Every library the binaries load, except the driver's libcuda (dlopened from the machine).
ldd "${bins[@]}" | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' | sort -u |
  while read -r l; do cp -L "$l" "$stage/b/lib/"; done
cp "$build/tests/cli/data/model.tsr" "$stage/b/"
models=(ppocr_v4_rec ppocr_mobile_v2_cls oww_embedding oww_melspectrogram oww_alexa oww_hey_jarvis silero_vad_legacy)
for m in "${models[@]}"; do
  node "$root/tests/models/gen_refs.js" --model "$m" --out "$stage/b/refs/$m" >/dev/null
  f=$(/usr/bin/python3 -c "import json,sys; print(next(x['file'] for x in json.load(open('$root/tests/models/models.json')) if x['name']=='$m'))")
  cp "$root/third_party/models/$f" "$stage/b/models/$m.onnx"
done
cp "$root/tests/models/compare.py" "$stage/b/"
/usr/bin/python3 - /usr/share/datasets/fashion-mnist "$stage/b/data" <<'PY'
import gzip, struct, sys
src, dst = sys.argv[1:]
for split, n in (("train", 4096), ("t10k", 2000)):
    for kind, item in (("images-idx3", 784), ("labels-idx1", 1)):
        raw = gzip.open(f"{src}/{split}-{kind}-ubyte.gz").read()
        hdr = 16 if item == 784 else 8
        head = bytearray(raw[:hdr]); struct.pack_into(">I", head, 4, n)
        with gzip.open(f"{dst}/{split}-{kind}-ubyte.gz", "wb") as f:
            f.write(bytes(head) + raw[hdr:hdr + n * item])
PY
tar -C "$stage" -cJf "$out/bundle.tar.xz" b
cat > "$out/check.sh" <<'SH'
#!/bin/bash
# Runs on the GPU machine from the repository root: unpacks the bundle and runs the CUDA checks.
set -u
here=$(cd "$(dirname "$0")" && pwd); w=/tmp/tsr-gpu; rm -rf $w; mkdir -p $w; tar -C $w -xJf "$here/bundle.tar.xz"; b=$w/b
drv=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}'); mkdir -p $b/drv; [ -n "$drv" ] && cp -L "$drv" $b/drv/
run() { "$b"/lib/ld-linux-x86-64.so.2 --library-path "$b/lib:$b/drv:/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu" "$@"; }
fail=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== op harness"; run $b/bin/tessera_device_tests "[cuda]" || fail=1
echo "== host tests"; run $b/bin/tessera_cuda_tests "[cuda_host]" || fail=1
for m in $(ls $b/refs); do
  r=$b/refs/$m; o=$w/out/$m; mkdir -p $o
  args=(); for i in $(python3 -c "import json;[print(x['name']+'='+x['file']) for x in json.load(open('$r/ref.json'))['inputs']]"); do args+=(--input "${i%%=*}=$r/${i#*=}"); done
  run $b/bin/tessera inspect $b/models/$m.onnx --placement cuda --json | python3 -c "import json,sys;p=json.load(sys.stdin);print('$m placement:',p['device_nodes'],'of',p['total_nodes'],'on cuda,',p['copies'],'copies')"
  run $b/bin/tessera run $b/models/$m.onnx --device cuda --output-dir $o --warmup 1 --repeat 5 "${args[@]}" | grep -i "median\|latency" || fail=1
  python3 $b/compare.py --ref-dir $r --out-dir $o --rtol 1e-3 --atol 1e-3 --name $m | tail -1 || fail=1
done
common=(train --arch lenet --epochs 1 --limit 4096 --batch-size 64 --optimizer adamw --seed 3 --data $b/data)
run $b/bin/tessera "${common[@]}" --device cpu -o $w/tcpu > $w/tcpu.txt 2>&1; grep -a "test loss" $w/tcpu.txt | tail -1
run $b/bin/tessera "${common[@]}" --device cuda -o $w/tcuda > $w/tcuda.txt 2>&1 || { fail=1; tail -3 $w/tcuda.txt; }
grep -a "test loss" $w/tcuda.txt | tail -1
echo "gpu bundle check: $([ $fail = 0 ] && echo PASS || echo FAIL)"; exit $fail
SH
du -sh "$out/bundle.tar.xz"
