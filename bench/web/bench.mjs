// Tessera's wasm (web/dist) against onnxruntime-web 1.30 (wasm backend, SIMD) under node, on the
// models and seeded inputs of tests/models/models.json, in one script run:
//  - latency at 1 thread (tessera.wasm vs ort-web with numThreads 1): per model, both sessions
//    created, warm-up runs (3 each and 300 ms at least), then REPEAT rounds of one Tessera run and one onnxruntime
//    run, in ABBA order (each runtime first in half of them); medians and the ratio Tessera / ort;
//  - the same at THREADS threads (tessera-threads.wasm vs ort-web's threaded wasm with
//    numThreads = intraOpNumThreads = THREADS), each runtime in child processes of its own,
//    ROUNDS rounds alternating which goes first, the median over rounds: both runtimes' idle
//    workers poll for the next job (Tessera's for up to 1 ms), so in one process on a 2-core
//    machine one runtime's polling workers took cores from the other's timed runs (Tessera ran at
//    0.70x its 1-thread speed that way, and 1.4-1.9x alone);
//  - time to first result (PP-OCRv4 rec): a fresh node process per sample, alternating
//    runtimes, timing runtime start + model load (from .onnx bytes) + the first run.
// Usage: node bench/web/bench.mjs [--repeat N] [--ttfr N] [--threads N (default 2, 0: none)] [--rounds N (default 3)]
//          [--models a,b] [--manifest FILE --model-dir DIR (another model list, e.g. the zoo:
//          --manifest build/zoo/manifest.json --model-dir build/zoo; time to first result is then skipped)]
//          [--profile N (after each model's timed runs: Tessera's per-node profile of 3 more runs, top N nodes, on stderr)]
// Needs: web/dist (bash web/build.sh), bench/web/node_modules (cd bench/web && npm ci),
//        third_party/models (fetch.sh).
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const require = createRequire(import.meta.url);
const lib = require(path.join(repo, 'tests', 'models', 'lib.js'));
const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const manifest = opt('--manifest', null);
const modelDir = opt('--model-dir', null) ?? (manifest ? path.dirname(path.resolve(manifest)) : lib.modelsDir());
const loadModels = () => lib.loadModels(manifest ?? undefined);

async function tesseraRuntime(threads = 1) {
  const { Tessera } = await import(path.join(repo, 'web', 'dist', 'tessera.mjs'));
  const tsr = await Tessera.create({ threads });
  if (tsr.threads !== threads) throw new Error(`Tessera runs ${tsr.threads} threads, not ${threads}: ${tsr.threadsFallback}`);
  return tsr;
}
async function ortRuntime(threads = 1) {
  const ort = (await import('onnxruntime-web')).default ?? (await import('onnxruntime-web'));
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  ort.env.logLevel = 'error';
  return ort;
}
const ortOptions = (threads = 1) => ({ executionProviders: ['wasm'], graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1 });

// Child mode: one time-to-first-result sample, printed in ms.
if (args[0] === '--child') {
  const which = args[1], file = args[2];
  const model = lib.loadModels().find((m) => m.file === path.basename(file));
  const inputs = lib.makeInputs(model, 1234);
  const t0 = performance.now();
  const bytes = new Uint8Array(fs.readFileSync(file));
  if (which === 'tessera') {
    const tsr = await tesseraRuntime();
    const m = await tsr.load(bytes);
    const feeds = Object.fromEntries(inputs.map((t) => [t.name, { dtype: t.dtype, shape: t.shape, data: t.data }]));
    await m.run(feeds);
  } else {
    const ort = await ortRuntime();
    const s = await ort.InferenceSession.create(bytes, ortOptions());
    await s.run(Object.fromEntries(inputs.map((t) => [t.name, new ort.Tensor(t.dtype, t.data, t.shape)])));
  }
  console.log((performance.now() - t0).toFixed(1));
  process.exit(0);
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const repeat = Number(opt('--repeat', '30'));
const ttfrN = Number(opt('--ttfr', '5'));
const threadsN = Number(opt('--threads', '2'));
const only = opt('--models', null)?.split(',');
const profileTop = Number(opt('--profile', '0'));

// Median latencies of every model at `threads` threads: [{model, input, ort, tessera}]. `which`
// ('both', 'tessera' or 'ort') picks the runtimes; with both they alternate run by run.
async function latency(threads, which = 'both') {
  const tsr = which !== 'ort' ? await tesseraRuntime(threads) : null;
  const ort = which !== 'tessera' ? await ortRuntime(threads) : null;
  const rows = [];
  for (const model of loadModels()) {
    if (only && !only.includes(model.name)) continue;
    const file = path.join(modelDir, model.file);
    const bytes = new Uint8Array(fs.readFileSync(file));
    const inputs = lib.makeInputs(model, 1234);
    const m = tsr && (await tsr.load(bytes, { name: model.file }));
    const s = ort && (await ort.InferenceSession.create(bytes, ortOptions(threads)));
    const tf = Object.fromEntries(inputs.map((t) => [t.name, { dtype: t.dtype, shape: t.shape, data: t.data }]));
    const of = ort && Object.fromEntries(inputs.map((t) => [t.name, new ort.Tensor(t.dtype, t.data, t.shape)]));
    const tt = [], to = [];
    const timeTessera = async () => { if (!m) return; const t = performance.now(); await m.run(tf); tt.push(performance.now() - t); };
    const timeOrt = async () => { if (!s) return; const t = performance.now(); await s.run(of); to.push(performance.now() - t); };
    // Warm-up: at least 3 runs each and 300 ms in all, so that V8's tiered compilation has moved
    // both runtimes' hot wasm functions from its baseline tier (Liftoff) to the optimizing one
    // before timing (with 3 runs, a 20 us model measured 2.5x slower in some passes).
    for (let i = 0, t0 = performance.now(); i < 3 || performance.now() - t0 < 300; i++) { await timeTessera(); await timeOrt(); }
    tt.length = to.length = 0;
    // ABBA: each runtime goes first in half of the pairs (the one that runs right after the other
    // finds the caches holding the other's tensors, which moved sub-0.1 ms models by 2x).
    for (let i = 0; i < repeat; i++) {
      if (i % 2 === 0) { await timeTessera(); await timeOrt(); } else { await timeOrt(); await timeTessera(); }
    }
    if (m && profileTop > 0) {
      // Per-node times of Tessera's runs (Model.profile), after the timed runs so as not to touch them.
      m.profile();
      for (let i = 0; i < 3; i++) await m.run(tf);
      console.error(`${model.name} (tessera.wasm, ${threads} thread(s), 3 runs):\n${m.profile(profileTop)}`);
    }
    m?.dispose();
    await s?.release?.();
    const row = { model: model.name, input: inputs.map((t) => `[${t.shape}]`).join(' '), ort: s ? median(to) : null,
                  tessera: m ? median(tt) : null };
    rows.push(row);
    console.error(`${threads} thread(s) ${row.model}:` + (s ? ` ort ${row.ort.toFixed(3)} ms` : '') +
      (m ? ` tessera ${row.tessera.toFixed(3)} ms` : ''));
  }
  tsr?.dispose();
  return rows;
}

// Child mode: one runtime's latency rows at N threads as JSON (ort-web's thread count is per process).
if (args[0] === '--child-latency') {
  console.log(JSON.stringify(await latency(Number(args[1]), args[2])));
  process.exit(0);
}

const rows = await latency(1);
let trows = null;
if (threadsN > 1) {
  const rounds = Number(opt('--rounds', '3'));
  const runChild = (which) => {
    const childArgs = [fileURLToPath(import.meta.url), '--child-latency', String(threadsN), which, '--repeat', String(repeat)];
    if (only) childArgs.push('--models', only.join(','));
    if (manifest) childArgs.push('--manifest', manifest, '--model-dir', modelDir);
    const out = execFileSync(process.execPath, childArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
    return JSON.parse(out.trim().split('\n').pop());
  };
  const per = { tessera: [], ort: [] };  // rows of each round
  for (let r = 0; r < rounds; r++)
    for (const which of r % 2 === 0 ? ['tessera', 'ort'] : ['ort', 'tessera']) per[which].push(runChild(which));
  trows = Object.fromEntries(per.tessera[0].map((row, i) => [row.model, {
    model: row.model, tessera: median(per.tessera.map((rs) => rs[i].tessera)), ort: median(per.ort.map((rs) => rs[i].ort)) }]));
}

const fmt = (x) => (x >= 10 ? x.toFixed(2) : x >= 1 ? x.toFixed(3) : x.toFixed(4));
const geo = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
const nt = threadsN;
console.log(`node ${process.version}, median of ${repeat} alternating runs; 1 thread: tessera.wasm vs ort-web numThreads 1` +
  (trows ? `; ${nt} threads: tessera-threads.wasm vs ort-web numThreads ${nt}, each in its own processes, ` +
    `median of ${opt('--rounds', '3')} alternating rounds of ${repeat} runs` : '') + '\n');
console.log('| model | input | onnxruntime-web (ms) | Tessera wasm (ms) | ratio |' +
  (trows ? ` ort-web ${nt} thr (ms) | Tessera ${nt} thr (ms) | ratio |` : ''));
console.log('| --- | --- | ---: | ---: | ---: |' + (trows ? ' ---: | ---: | ---: |' : ''));
for (const r of rows) {
  const t = trows?.[r.model];
  console.log(`| ${r.model} | ${r.input} | ${fmt(r.ort)} | ${fmt(r.tessera)} | ${(r.tessera / r.ort).toFixed(2)} |` +
    (t ? ` ${fmt(t.ort)} | ${fmt(t.tessera)} | ${(t.tessera / t.ort).toFixed(2)} |` : ''));
}
if (rows.length) {
  const ratios = rows.map((r) => r.tessera / r.ort);
  console.log(`\n1 thread: geo-mean ratio ${geo(ratios).toFixed(2)}, worst ${Math.max(...ratios).toFixed(2)}`);
  if (trows) {
    const tr = rows.map((r) => trows[r.model].tessera / trows[r.model].ort);
    console.log(`${nt} threads: geo-mean ratio ${geo(tr).toFixed(2)}, worst ${Math.max(...tr).toFixed(2)}; ` +
      `speed-up over 1 thread (geo-mean): Tessera ${geo(rows.map((r) => r.tessera / trows[r.model].tessera)).toFixed(2)}x, ` +
      `ort-web ${geo(rows.map((r) => r.ort / trows[r.model].ort)).toFixed(2)}x`);
  }
}

if (ttfrN > 0 && !manifest && (!only || only.includes('ppocr_v4_rec'))) {
  const file = path.join(lib.modelsDir(), 'ch_PP-OCRv4_rec_infer.onnx');
  const t = { tessera: [], ort: [] };
  for (let i = 0; i < ttfrN; i++)
    for (const which of ['tessera', 'ort'])
      t[which].push(Number(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', which, file], { encoding: 'utf8' }).trim()));
  console.log(`\ntime to first result, PP-OCRv4 rec (fresh process: runtime start + load .onnx + first run; median of ${ttfrN}):`);
  console.log(`onnxruntime-web ${median(t.ort).toFixed(0)} ms, Tessera ${median(t.tessera).toFixed(0)} ms, ratio ${(median(t.tessera) / median(t.ort)).toFixed(2)}`);
}
