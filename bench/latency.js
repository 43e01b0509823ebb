// Single-thread latency of tessera vs onnxruntime-node on the real models of
// tests/models/models.json, same seeded inputs, one script run. Prints a markdown table.
//
// Usage: /usr/bin/node bench/latency.js [--tessera PATH] [--repeat 20] [--models a,b,...]
//                                       [--work-dir build/bench]
// Needs: the models (third_party/models/fetch.sh), onnxruntime-node (scripts/install_deps.sh)
// and a release build of the CLI (cmake --preset release && cmake --build build/release).
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const lib = require('../tests/models/lib.js');

function arg(name, def) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

function findTessera() {
  const given = arg('tessera');
  if (given) return path.resolve(given);
  for (const p of ['build/release/tools/cli/tessera', 'build/release/tessera', 'build/release/bin/tessera']) {
    const f = path.join(lib.kRepo, p);
    if (fs.existsSync(f)) return f;
  }
  throw new Error('tessera executable not found under build/release: build it or pass --tessera PATH');
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function runOrDie(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  }
  return r.stdout + r.stderr;
}

async function main() {
  const repeat = Number(arg('repeat', '20'));
  const work = path.resolve(arg('work-dir', path.join(lib.kRepo, 'build', 'bench')));
  const only = arg('models');
  const tessera = findTessera();
  const ort = lib.loadOrt();
  let models = lib.loadModels();
  models = only ? models.filter(m => only.split(',').includes(m.name)) : models.filter(m => m.enabled !== false);
  fs.mkdirSync(work, { recursive: true });

  const rows = [];
  for (const model of models) {
    const onnx = path.join(lib.modelsDir(), model.file);
    if (!fs.existsSync(onnx)) { console.error(`skip ${model.name}: ${onnx} absent`); continue; }
    const inputs = lib.makeInputs(model, 1234);
    const dir = path.join(work, model.name);
    fs.mkdirSync(dir, { recursive: true });

    // onnxruntime-node, one thread: 3 warm-up runs, then `repeat` timed runs.
    const session = await lib.ortSession(ort, onnx);
    const feeds = {};
    for (const t of inputs) feeds[t.name] = new ort.Tensor(t.dtype, t.data, t.shape);
    for (let i = 0; i < 3; i++) await session.run(feeds);
    const times = [];
    for (let i = 0; i < repeat; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const ortMs = median(times);

    // tessera: convert once, then `tessera run --repeat N --threads 1` on the same inputs.
    const tsr = path.join(dir, model.name + '.tsr');
    runOrDie(tessera, ['convert', onnx, '-o', tsr]);
    const args = ['run', tsr, '--threads', '1', '--repeat', String(repeat)];
    inputs.forEach((t, k) => {
      const f = path.join(dir, `input_${k}.npy`);
      lib.writeNpy(f, t.dtype, t.shape, t.data);
      args.push('--input', `${t.name}=${f}`);
    });
    const out = runOrDie(tessera, args);
    const m = /median[^0-9\n]*([0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)\s*ms/i.exec(out);
    if (!m) throw new Error(`no "median ... ms" in the output of tessera run:\n${out}`);
    const ourMs = Number(m[1]);
    rows.push({ name: model.name, shape: inputs.map(t => `[${t.shape.join(',')}]`).join(' '), ortMs, ourMs });
    console.error(`${model.name}: onnxruntime ${ortMs.toFixed(3)} ms, tessera ${ourMs.toFixed(3)} ms`);
  }

  const cpu = (require('os').cpus()[0] || {}).model || 'unknown CPU';
  console.log(`Median latency over ${repeat} runs, 1 thread, ${cpu}, onnxruntime-node 1.30.0 (CPU EP, all graph optimizations).\n`);
  console.log('| model | input | onnxruntime (ms) | tessera (ms) | ratio tessera/ORT |');
  console.log('| --- | --- | ---: | ---: | ---: |');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.shape} | ${r.ortMs.toFixed(3)} | ${r.ourMs.toFixed(3)} | ${(r.ourMs / r.ortMs).toFixed(2)} |`);
  }
}

main().catch(e => { console.error('latency: ' + (e && e.message ? e.message : e)); process.exit(1); });
