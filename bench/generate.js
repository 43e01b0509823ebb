// Tokens per second of the KV-cache generation loop: `tessera generate` (the CLI, tsr::generate),
// tessera-web's model.generate() in node (tessera.wasm), and onnxruntime-node 1.30 running the
// same greedy loop in JS (tests/transformers/generate_ref.js), on the same model: the decoder of
// tests/transformers/make_decoder.py, twice: f32 MatMuls and int4 (--int4: every linear layer a
// com.microsoft MatMulNBits quantized from the same weights, --block-size along K). One thread
// everywhere, a 16-token prompt, 64 new tokens. The default model (4 layers, hidden 512, vocab
// 8000: 67 MB of f32 weights in the linear layers, 8.3 MB of int4 codes) is big enough that a
// decode step is memory-bound.
//
// Usage: /usr/bin/node bench/generate.js [--tessera build/release/bin/tessera] [--rounds 5]
//          [--layers 4 --hidden 512 --heads 8 --vocab 8000 --block-size 32] [--work-dir build/bench]
// Needs a release build of the CLI, web/dist (the wasm preset's tessera_web target or
// web/build.sh) and tests/models/node_modules (scripts/install_deps.sh).
//
// Each round runs the six (runtime, model) pairs in turn, starting one later each round: the CLI in a fresh process (its own timing of the loop:
// model load and session creation excluded, so every step is cold for Tessera's plans), then
// tessera-web and onnxruntime in this process (each warmed by one untimed generation first).
// "decode" counts tokens 2..64 over their time (one step each); "overall" all 64 tokens over
// the whole loop, the prefill of the 16-token prompt included. Figures: the median over rounds;
// the 1-minute load average is sampled every round (the machine may be shared). All three
// runtimes must produce the same ids (greedy) on each model, else the script fails.
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const { spawnSync, execFileSync } = require('child_process');
const lib = require('../tests/models/lib.js');
const { ortGenerate } = require('../tests/transformers/generate_ref.js');

function arg(name, def) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const rates = (n, firstMs, totalMs) => ({ decode: ((n - 1) * 1000) / (totalMs - firstMs), overall: (n * 1000) / totalMs });

async function timed(generate) {
  const t0 = performance.now();
  let first = t0;
  const ids = await generate(() => { if (first === t0) first = performance.now(); });
  return { ids, ...rates(ids.length, first - t0, performance.now() - t0) };
}

async function main() {
  const tessera = path.resolve(arg('tessera', path.join(lib.kRepo, 'build/release/bin/tessera')));
  const rounds = Number(arg('rounds', '5'));
  const work = path.resolve(arg('work-dir', path.join(lib.kRepo, 'build/bench')));
  const defaults = { layers: '4', hidden: '512', heads: '8', vocab: '8000' };
  const shape = Object.keys(defaults).flatMap((k) => [`--${k}`, arg(k, defaults[k])]);
  const vocab = Number(arg('vocab', defaults.vocab));
  const blockSize = arg('block-size', '32');
  fs.mkdirSync(work, { recursive: true });
  const models = { f32: path.join(work, 'generate_decoder.onnx'), int4: path.join(work, 'generate_decoder_int4.onnx') };
  const maker = path.join(lib.kRepo, 'tests/transformers/make_decoder.py');
  execFileSync('/usr/bin/python3', [maker, models.f32, ...shape], { stdio: 'inherit' });
  execFileSync('/usr/bin/python3', [maker, models.int4, ...shape, '--int4', '--block-size', blockSize], { stdio: 'inherit' });
  const prompt = Array.from({ length: 16 }, (_, i) => (i * 37 + 5) % vocab);
  const maxNewTokens = 64;

  const ort = lib.loadOrt();
  const { Tessera } = await import(path.join(lib.kRepo, 'web/dist/tessera.mjs'));
  const tsr = await Tessera.create({ threads: 1 });
  const runners = [];  // [{model, runtime, run}]
  const webModels = [];
  for (const [kind, model] of Object.entries(models)) {
    const session = await lib.ortSession(ort, model);
    const web = await tsr.load(new Uint8Array(fs.readFileSync(model)), { name: `decoder_${kind}.onnx` });
    webModels.push(web);
    runners.push({ kind, runtime: 'tessera CLI', run: async () => {
      const r = spawnSync(tessera, ['generate', model, '--prompt-ids', prompt.join(','), '--max-new-tokens', String(maxNewTokens), '--threads', '1'], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`tessera generate: exit ${r.status}: ${r.stderr}`);
      const [idsLine, stats] = r.stdout.trim().split('\n');
      const num = (re) => Number(stats.match(re)[1]);
      return { ids: idsLine.split(' ').map(Number), decode: num(/decode ([\d.]+) tokens\/s/), overall: num(/([\d.]+) tokens\/s overall/) };
    } });
    runners.push({ kind, runtime: 'tessera-web (node, wasm)', run: () => timed((mark) => web.generate(prompt, { maxNewTokens }, mark)) });
    runners.push({ kind, runtime: 'onnxruntime-node (JS loop)', run: async () => {
      const r = await ortGenerate(ort, session, prompt, { maxNewTokens, topK: 0 });
      return { ids: r.ids, ...rates(r.ids.length, r.firstMs, r.totalMs) };
    } });
  }
  for (const r of runners) if (r.runtime !== 'tessera CLI') await r.run();  // warm-up
  const figures = runners.map(() => ({ decode: [], overall: [] }));
  const expected = {};
  const load = [];
  for (let round = 0; round < rounds; round++) {
    load.push(os.loadavg()[0]);
    for (let j = 0; j < runners.length; j++) {
      const i = (j + round) % runners.length;
      const { kind, runtime, run } = runners[i];
      const f = await run();
      expected[kind] ??= f.ids.join(' ');
      if (f.ids.join(' ') !== expected[kind]) throw new Error(`${runtime} (${kind}) generated other ids:\n  ${f.ids.join(' ')}\n  ${expected[kind]}`);
      figures[i].decode.push(f.decode);
      figures[i].overall.push(f.overall);
    }
  }
  load.push(os.loadavg()[0]);
  for (const web of webModels) web.dispose();
  tsr.dispose();
  const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  console.log(`\nmodel: make_decoder.py ${shape.join(' ')} (f32; int4: --int4 --block-size ${blockSize}); prompt ${prompt.length} tokens, ` +
              `${maxNewTokens} new (greedy), 1 thread, median of ${rounds} rounds; ${os.cpus()[0].model}, ${os.cpus().length} cores, ` +
              `node ${process.version}; load average (1 min) over the rounds: min ${Math.min(...load).toFixed(1)}, ` +
              `median ${median(load).toFixed(1)}, max ${Math.max(...load).toFixed(1)}\n`);
  console.log('| runtime | f32 decode tokens/s | int4 decode tokens/s | int4 / f32 | f32 overall | int4 overall |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const runtime of [...new Set(runners.map((r) => r.runtime))]) {
    const of = (kind) => figures[runners.findIndex((r) => r.runtime === runtime && r.kind === kind)];
    const [f, q] = [of('f32'), of('int4')];
    console.log(`| ${runtime} | ${fmt(median(f.decode))} | ${fmt(median(q.decode))} | ${(median(q.decode) / median(f.decode)).toFixed(2)}x | ` +
                `${fmt(median(f.overall))} | ${fmt(median(q.overall))} |`);
  }
}

main().catch((e) => { console.error('bench/generate.js: ' + (e && e.stack ? e.stack : e)); process.exit(1); });
