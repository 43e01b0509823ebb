// Tokens per second of the KV-cache generation loop: `tessera generate` (the CLI, tsr::generate),
// tessera-web's model.generate() in node (tessera.wasm), and onnxruntime-node 1.30 running the
// same greedy loop in JS (tests/transformers/generate_ref.js), on the same model: the decoder of
// tests/transformers/make_decoder.py. One thread everywhere, a 16-token prompt, 64 new tokens.
//
// Usage: /usr/bin/node bench/generate.js [--tessera build/release/bin/tessera] [--rounds 5]
//          [--layers 2 --hidden 128 --heads 4 --vocab 1000] [--work-dir build/bench]
// Needs a release build of the CLI, web/dist (the wasm preset's tessera_web target or
// web/build.sh) and tests/models/node_modules (scripts/install_deps.sh).
//
// Each round runs the three in turn: the CLI in a fresh process (its own timing of the loop:
// model load and session creation excluded, so every step is cold for Tessera's plans), then
// tessera-web and onnxruntime in this process (each warmed by one untimed generation first).
// "decode" counts tokens 2..64 over their time (one step each); "overall" all 64 tokens over
// the whole loop, the prefill of the 16-token prompt included. Figures: the median over rounds.
// All three must produce the same ids (greedy), else the script fails.
'use strict';
const fs = require('fs');
const path = require('path');
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
  const shape = ['layers', 'hidden', 'heads', 'vocab'].flatMap((k) => [`--${k}`, arg(k, { layers: '2', hidden: '128', heads: '4', vocab: '1000' }[k])]);
  fs.mkdirSync(work, { recursive: true });
  const model = path.join(work, 'generate_decoder.onnx');
  execFileSync('/usr/bin/python3', [path.join(lib.kRepo, 'tests/transformers/make_decoder.py'), model, ...shape], { stdio: 'inherit' });
  const prompt = Array.from({ length: 16 }, (_, i) => (i * 37 + 5) % 1000);
  const maxNewTokens = 64;

  const ort = lib.loadOrt();
  const session = await lib.ortSession(ort, model);
  const { Tessera } = await import(path.join(lib.kRepo, 'web/dist/tessera.mjs'));
  const tsr = await Tessera.create({ threads: 1 });
  const web = await tsr.load(new Uint8Array(fs.readFileSync(model)), { name: 'decoder.onnx' });

  const runners = {
    'tessera CLI': async () => {
      const r = spawnSync(tessera, ['generate', model, '--prompt-ids', prompt.join(','), '--max-new-tokens', String(maxNewTokens), '--threads', '1'], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`tessera generate: exit ${r.status}: ${r.stderr}`);
      const [idsLine, stats] = r.stdout.trim().split('\n');
      const num = (re) => Number(stats.match(re)[1]);
      return { ids: idsLine.split(' ').map(Number), decode: num(/decode ([\d.]+) tokens\/s/), overall: num(/([\d.]+) tokens\/s overall/) };
    },
    'tessera-web (node, wasm)': () => timed((mark) => web.generate(prompt, { maxNewTokens }, mark)),
    'onnxruntime-node (JS loop)': async () => {
      const r = await ortGenerate(ort, session, prompt, { maxNewTokens, topK: 0 });
      return { ids: r.ids, ...rates(r.ids.length, r.firstMs, r.totalMs) };
    },
  };
  for (const name of ['tessera-web (node, wasm)', 'onnxruntime-node (JS loop)']) await runners[name]();  // warm-up
  const figures = Object.fromEntries(Object.keys(runners).map((k) => [k, { decode: [], overall: [] }]));
  let expected = null;
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(runners)) {
      const f = await run();
      expected ??= f.ids.join(' ');
      if (f.ids.join(' ') !== expected) throw new Error(`${name} generated other ids:\n  ${f.ids.join(' ')}\n  ${expected}`);
      figures[name].decode.push(f.decode);
      figures[name].overall.push(f.overall);
    }
  }
  web.dispose();
  tsr.dispose();
  const os = require('os');
  console.log(`\nmodel: make_decoder.py ${shape.join(' ')}; prompt ${prompt.length} tokens, ${maxNewTokens} new (greedy), 1 thread, ` +
              `median of ${rounds} rounds; ${os.cpus()[0].model}, node ${process.version}\n`);
  console.log('| runtime | decode tokens/s | overall tokens/s (prefill included) |');
  console.log('| --- | ---: | ---: |');
  for (const [name, f] of Object.entries(figures))
    console.log(`| ${name} | ${median(f.decode).toFixed(0)} | ${median(f.overall).toFixed(0)} |`);
}

main().catch((e) => { console.error('bench/generate.js: ' + (e && e.stack ? e.stack : e)); process.exit(1); });
