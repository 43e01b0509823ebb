// The WebGPU device layer (web/js/webgpu.mjs) in Debian's headless Chromium on its SwiftShader
// WebGPU adapter (--enable-unsafe-webgpu --use-webgpu-adapter=swiftshader; a CPU implementation:
// correct, slow). One page runs each model of web/test/make_webgpu_models.py (one per kernel
// family, generated into a temporary folder), PP-OCR's mobile v2 classifier and openWakeWord's
// embedding model (real CNNs, from third_party/models when fetched) on
// create({device: 'webgpu'}) and on wasm (the path the node suites check against onnxruntime):
// outputs within 1e-4 relative L2 with the same shapes (testHooks.waitForPipelines: on the tiled
// GEMM kernels; the other tests' first runs take the simpler GEMM and conv kernels that a run uses
// until the tiled ones are compiled), and the placement the model expects
// (every node on WebGPU, the fallback model's CumSum on wasm; convs with their fused activations
// and residual Adds). The control-flow test: nested Ifs with each branch taken, a Loop, a Scan
// (rows, reversed columns, outputs stacked on two axes) against its definition, and the real models
// with If (Silero VADs, state fed back; hey_jarvis). The models test: tests/models' models on
// WebGPU against onnxruntime-node at their tolerance, >= 90% of compute nodes on the GPU.
// A page whose device is destroyed checks that the next run fails (backend), not hangs; the OCR
// page's ?device=webgpu gets ready on WebGPU (reading a line there takes about 6 s on SwiftShader:
// not run here); a page
// without navigator.gpu checks 'auto' (falls back to wasm, saying why) and 'webgpu' (throws
// unsupported). Skipped only when the machine lacks chromium, playwright-core or the onnx
// Python package (the models test: also onnxruntime-node).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lib, ortOrNull, modelPath, feedsFor, reference, checkOutputs } from '../../web/test/helpers.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const models = path.join(repo, 'third_party', 'models');
const kCls = 'ch_ppocr_mobile_v2.0_cls_infer.onnx';
const kEmbedding = 'embedding_model.onnx';  // openWakeWord's embedding CNN: every node on WebGPU
const require = createRequire(path.join(repo, 'web', 'package.json'));
let chromium = null;
try { ({ chromium } = require('playwright-core')); } catch { /* skipped below */ }
const haveOnnx = (() => { try { execFileSync('/usr/bin/python3', ['-c', 'import onnx']); return true; } catch { return false; } })();
const skip = !fs.existsSync('/usr/bin/chromium') ? 'no /usr/bin/chromium'
  : !chromium ? 'playwright-core missing in web/node_modules (scripts/install_deps.sh)'
  : !haveOnnx ? 'the onnx Python package is missing (python3-onnx)' : false;

const ort = ortOrNull();

const kArgs = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
  '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'];

async function withBrowser(fn, mounts = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-webgpu-'));
  execFileSync('/usr/bin/python3', [path.join(repo, 'web', 'test', 'make_webgpu_models.py'), dir]);
  const { serve } = await import(path.join(repo, 'web', 'tools', 'serve.mjs'));
  const { server, url } = await serve({ root: path.join(repo, 'web'), mounts: [['/gen', dir], ['/models', models], ...mounts] });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: kArgs });
  try {
    await fn(browser, url, JSON.parse(fs.readFileSync(path.join(dir, 'models.json'), 'utf8')));
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// In the page: each model on both devices; per output rel-L2 and shapes, the placement, timings.
async function compareInPage(page, table) {
  return page.evaluate(async (table) => {
    const { Tessera } = await import('/dist/tessera.mjs');
    const { testHooks: hooks } = await import('/dist/webgpu.mjs');
    hooks.waitForPipelines = true;  // each model runs once here: on the tiled GEMM from the start
    const gpu = await Tessera.create({ device: 'webgpu' });
    const cpu = await Tessera.create({ device: 'wasm' });
    let seed = 12345;
    const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 * 2 - 1; };
    const auto = await Tessera.create({ device: 'auto' });
    const result = { device: gpu.device, auto: [auto.device, auto.deviceFallback], models: {} };
    auto.dispose();
    for (const [file, spec] of Object.entries(table)) {
      const bytes = new Uint8Array(await (await fetch(spec.url)).arrayBuffer());
      const mg = await gpu.load(bytes, { name: file }), mc = await cpu.load(bytes, { name: file });
      const feeds = {};
      for (const [name, shape] of Object.entries(spec.inputs))
        feeds[name] = { dtype: 'float32', shape, data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, rand) };
      const fused = [];
      hooks.onFuse = (gi, ...ks) => fused.push(ks.join('>'));
      const a = await mg.run(feeds), b = await mc.run(feeds);
      hooks.onFuse = null;
      const outputs = {};
      for (const [name, t] of Object.entries(b)) {
        const g = a[name];
        let num = 0, den = 0;
        for (let i = 0; i < t.data.length; i++) { num += (g.data[i] - t.data[i]) ** 2; den += t.data[i] ** 2; }
        outputs[name] = { shape: g.dims, want: t.dims, relL2: Math.sqrt(num / Math.max(den, 1e-30)), finite: g.data.every(Number.isFinite) };
      }
      const timing = {};
      if (spec.time) {
        for (const [k, m] of [['webgpu', mg], ['wasm', mc]]) {  // warm: the comparison ran them once
          const t0 = performance.now();
          for (let i = 0; i < spec.time; i++) await m.run(feeds);
          timing[k] = (performance.now() - t0) / spec.time;
        }
      }
      result.models[file] = { device: mg.device, deviceFallback: mg.deviceFallback, placement: mg.placement, outputs, timing, fused };
      mg.dispose(); mc.dispose();
    }
    gpu.dispose(); cpu.dispose();
    hooks.waitForPipelines = false;
    return result;
  }, table);
}

test('webgpu: every kernel family and two real CNNs match wasm in headless Chromium (SwiftShader)', { skip }, async () => {
  await withBrowser(async (browser, url, table) => {
    const page = await browser.newPage();
    const log = [];
    page.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
    await page.goto(url);
    const hasAdapter = await page.evaluate(async () => !!(await navigator.gpu?.requestAdapter()));
    assert.ok(hasAdapter, 'headless Chromium exposes no WebGPU adapter with --enable-unsafe-webgpu --use-webgpu-adapter=swiftshader');
    for (const [file, spec] of Object.entries(table)) spec.url = `/gen/${file}`;
    for (const [file, spec] of Object.entries(table)) if (spec.controlFlow) delete table[file];  // the If test's
    if (fs.existsSync(path.join(models, kCls))) table[kCls] = { url: `/models/${kCls}`, inputs: { x: [1, 3, 48, 192] }, gpu: null, time: 1 };
    if (fs.existsSync(path.join(models, kEmbedding))) table[kEmbedding] = { url: `/models/${kEmbedding}`, inputs: { input_1: [1, 76, 32, 1] }, gpu: null };
    const r = await compareInPage(page, table).catch((e) => { throw new Error(`${e.message}\n${log.join('\n')}`); });
    assert.deepEqual([r.device, ...r.auto], ['webgpu', 'webgpu', null], "create({device: 'webgpu'}) and 'auto' with an adapter");
    for (const [file, m] of Object.entries(r.models)) {
      const spec = table[file];
      for (const [name, o] of Object.entries(m.outputs)) {
        assert.deepEqual(o.shape, o.want, `${file} ${name}: shape`);
        assert.ok(o.finite && o.relL2 <= 1e-4, `${file} ${name}: rel-L2 ${o.relL2} against wasm`);
      }
      const onGpu = m.placement.nodes.filter((n) => n.device === 'webgpu').map((n) => n.node);
      const want = spec.gpu ?? m.placement.nodes.map((n) => n.node);
      if (file === kCls) assert.ok(onGpu.length >= 0.9 * m.placement.nodes.length, `${file}: ${onGpu.length} of ${m.placement.nodes.length} nodes on webgpu`);
      else assert.deepEqual(onGpu, want, `${file}: nodes on webgpu (placement ${JSON.stringify(m.placement.nodes)})`);
      if (file === 'convfuse.onnx')  // Conv > (Add >) activation node indices; not the Conv of two consumers (13), nor a graph output (16), nor 33, 35 (Adds of a broadcast bias, of a later value)
        assert.deepEqual(m.fused, ['0>1', '2>3', '4>5', '6>7', '8>9', '10>11', '18>19', '20>21', '22>23>24', '25>26>27', '28>29>30', '31>32', '36>37'],
          `${file}: convs run with their activation and residual Add`);
      if (file === 'fallback.onnx') assert.equal(m.placement.copies, 4, 'x uploaded, Relu -> CumSum -> Sigmoid crosses twice, y read back');
      if (Object.keys(m.timing).length)
        console.log(`# ${file}: steady-state run ${m.timing.webgpu.toFixed(1)} ms on webgpu (SwiftShader), ${m.timing.wasm.toFixed(1)} ms on wasm`);
    }
  });
});

// In the page: each model of `specs` run `runs` times on both devices (a stateful model's state
// outputs fed back as the next run's inputs, on each device its own); per run the rel-L2 of every
// output against wasm; the placement counted over compute nodes: those with a float32 output (an
// If itself and int64/bool shape arithmetic and conditions excluded: Shape, Cast to int64, Greater).
async function controlFlowInPage(page, specs) {
  return page.evaluate(async (specs) => {
    const { Tessera } = await import('/dist/tessera.mjs');
    const gpu = await Tessera.create({ device: 'webgpu' }), cpu = await Tessera.create({ device: 'wasm' });
    let graph = null;
    const graphOf = gpu._graph.bind(gpu);
    gpu._graph = (h) => (graph = graphOf(h));  // the JSON the WebGPU layer gets, for the counts
    let seed = 777;
    const rand = (lo, hi) => { seed = (seed * 1103515245 + 12345) % 2147483648; return lo + (hi - lo) * seed / 2147483648; };
    const result = {};
    for (const spec of specs) {
      const bytes = new Uint8Array(await (await fetch(spec.url)).arrayBuffer());
      const mg = await gpu.load(bytes), mc = await cpu.load(bytes);
      const graphs = graph.graphs.map((g, i) => (i === 0 ? graph : g));
      const compute = (p) => !['If', 'Loop', 'Scan'].includes(p.op) && graphs[p.graph].nodes[p.node].outputs.some((id) => id >= 0 && graphs[p.graph].values[id].dtype === 1);
      const nodes = mg.placement.nodes.filter(compute);
      const wasm = {};
      for (const p of nodes) if (p.device === 'wasm') wasm[p.op] = (wasm[p.op] ?? 0) + 1;
      const r = { deviceFallback: mg.deviceFallback, total: mg.placement.nodes.length, compute: nodes.length,
        onGpu: nodes.filter((p) => p.device === 'webgpu').length, subgraphOnGpu: nodes.filter((p) => p.graph > 0 && p.device === 'webgpu').length,
        wasm, runs: [] };
      let state = [{}, {}];
      for (const run of spec.runs) {
        const feeds = {};
        for (const [name, v] of Object.entries(run)) {
          if (typeof v === 'number') feeds[name] = { dtype: 'int64', shape: [], data: BigInt64Array.of(BigInt(v)) };
          else feeds[name] = { dtype: 'float32', shape: v.shape, data: v.data ?? Float32Array.from({ length: v.shape.reduce((a, b) => a * b, 1) }, () => rand(v.lo ?? -1, v.hi ?? 1)) };
        }
        const t0 = performance.now();
        const a = await mg.run({ ...feeds, ...state[0] });
        const ms = performance.now() - t0;
        const b = await mc.run({ ...feeds, ...state[1] });
        const out = { ms };
        for (const [name, t] of Object.entries(b)) {
          let num = 0, den = 0;
          for (let i = 0; i < t.data.length; i++) { num += (a[name].data[i] - t.data[i]) ** 2; den += t.data[i] ** 2; }
          out[name] = { relL2: Math.sqrt(num / Math.max(den, 1e-30)), same: a[name].dims.join() === t.dims.join() && a[name].data.every(Number.isFinite) };
          if (spec.expect) [out[name].values, out[name].dims] = [Array.from(a[name].data), a[name].dims];
        }
        state = [a, b].map((o) => Object.fromEntries(Object.entries(spec.state ?? {}).map(([from, to]) => [to, o[from]])));
        r.runs.push(out);
      }
      if (spec.check) r.check = (await mg.run(Object.fromEntries(Object.entries(spec.runs[0]).map(([k, v]) => [k, { dtype: 'float32', shape: v.shape, data: v.data }])),
        { checkAgainst: 'cpu' })).check.message;
      result[spec.name] = r;
      mg.dispose(); mc.dispose();
    }
    gpu.dispose(); cpu.dispose();
    return result;
  }, specs);
}

test('webgpu: If branches, Loop and Scan bodies run on WebGPU (nested Ifs, each branch; Silero VADs, hey_jarvis) and match wasm', { skip }, async () => {
  await withBrowser(async (browser, url) => {
    const page = await browser.newPage();
    const log = [];
    page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
    await page.goto(url);
    // if.onnx: y = sigmoid(2 relu(x)) + x (sum(x) > 0), sigmoid(x) + x (else, max(x) <= 0.5), sigmoid(-x) + x (else).
    const xs = [[1, 2, -0.5, 0.25, 0.5, 1, -1, 0], [-1, -2, 0.5, -0.25, 0.1, -1, -0.3, 0], [-1, -2, 0.9, -0.25, 0.1, -1, -0.3, 0]];
    const branch = [(x) => 2 * Math.max(x, 0), (x) => x, (x) => -x];
    const feedsOf = (xs) => xs.map((x) => ({ x: { shape: [2, 4], data: Float32Array.from(x) } }));
    const specs = [{ name: 'if', url: '/gen/if.onnx', expect: true, check: true, runs: feedsOf(xs) },
      { name: 'loop', url: '/gen/loop.onnx', expect: true, check: true, runs: feedsOf([new Array(8).fill(0.5), new Array(8).fill(-1)]) },
      { name: 'scan', url: '/gen/scan.onnx', expect: true, check: true, runs: [{ x: { shape: [4, 4], data: Float32Array.from({ length: 16 }, (_, i) => (i % 5) - 1.5 + i / 8) } }] }];
    const vad = (name, file, sr, extra, state) => fs.existsSync(path.join(models, file)) && specs.push({ name, url: `/models/${file}`, state,
      runs: sr.map((rate) => ({ input: { shape: [1, rate === 16000 ? 512 : 256] }, sr: rate, ...extra })) });
    // Runs at 16 kHz, then 8 kHz: both branches of the main If (and of the ones inside).
    vad('silero_vad_v5', 'silero_vad_v5.onnx', [16000, 16000, 8000], { state: { shape: [2, 1, 128], data: new Float32Array(256) } }, { stateN: 'state' });
    vad('silero_vad_legacy', 'silero_vad_legacy.onnx', [16000, 16000, 8000],
      { h: { shape: [2, 1, 64], data: new Float32Array(128) }, c: { shape: [2, 1, 64], data: new Float32Array(128) } }, { hn: 'h', cn: 'c' });
    if (fs.existsSync(path.join(models, 'hey_jarvis_v0.1.onnx')))
      specs.push({ name: 'hey_jarvis', url: '/models/hey_jarvis_v0.1.onnx', runs: [0, 1].map(() => ({ 'x.1': { shape: [1, 16, 96], lo: -20, hi: 20 } })) });
    const r = await controlFlowInPage(page, specs).catch((e) => { throw new Error(`${e.message}\n${log.join('\n')}`); });
    // scan.onnx: s += sigmoid(x[t, :]) * x[:, 3 - t] * w; sums stacks s by rows, cols tanh(x[:, 3 - t]) by columns, reversed.
    const x = specs[2].runs[0].x.data, w = [1, -2, 0.5, 3], s = [0, 0, 0, 0], sums = [];
    for (let t = 0; t < 4; t++) {
      for (let e = 0; e < 4; e++) s[e] += w[e] * x[4 * e + 3 - t] / (1 + Math.exp(-x[4 * t + e]));
      sums.push(...s);
    }
    const want = { total: s, sums, cols: Array.from({ length: 16 }, (_, i) => Math.tanh(x[4 * Math.floor(i / 4) + (i % 4)])) };
    for (const [out, values] of Object.entries(want))
      values.forEach((v, e) => assert.ok(Math.abs(r.scan.runs[0][out].values[e] - v) < 1e-5, `scan.onnx ${out}[${e}]: ${r.scan.runs[0][out].values[e]}, want ${v}`));
    assert.deepEqual(r.scan.runs[0].cols.dims, [4, 4]);
    assert.match(r.scan.check, /^check-against cpu: all \d+ node outputs of graph\[0\] and its subgraphs/);
    for (const [name, m] of Object.entries(r)) {
      assert.equal(m.deviceFallback, null, `${name}: runs on webgpu`);
      if (name in { if: 1, loop: 1, scan: 1 }) assert.deepEqual([m.onGpu, m.compute], { if: [8, 8], loop: [6, 7], scan: [6, 6] }[name], `${name}.onnx: compute nodes on webgpu (the Loop's Cast of the iteration number on wasm)`);
      assert.ok(m.onGpu >= (name === 'loop' ? 6 / 7 : 0.9) * m.compute && m.subgraphOnGpu > 0, `${name}: ${m.onGpu} of ${m.compute} compute nodes on webgpu (${m.subgraphOnGpu} in subgraphs; on wasm: ${JSON.stringify(m.wasm)})`);
      m.runs.forEach((run, i) => {
        for (const [out, o] of Object.entries(run)) if (out !== 'ms') assert.ok(o.same && o.relL2 <= 1e-4, `${name} run ${i} ${out}: rel-L2 ${o.relL2} against wasm`);
      });
      console.log(`# ${name}: ${m.onGpu} of ${m.compute} compute nodes on webgpu (${m.total} nodes in all; on wasm ${JSON.stringify(m.wasm)}); runs ${m.runs.map((x) => x.ms.toFixed(0)).join(', ')} ms; rel-L2 at most ${Math.max(...m.runs.flatMap((x) => Object.values(x).map((o) => o.relL2 ?? 0))).toExponential(1)}`);
    }
    r.if.runs.forEach((run, i) => xs[i].forEach((x, e) => {
      const want = 1 / (1 + Math.exp(-branch[i](x))) + x;
      assert.ok(Math.abs(run.y.values[e] - want) < 1e-5, `if.onnx run ${i} (branch ${i}) y[${e}]: ${run.y.values[e]}, want ${want}`);
    }));
    assert.match(r.if.check, /^check-against cpu: all \d+ node outputs of graph\[0\] and its subgraphs/);
    // loop.onnx: sum(acc) reaches 6 after 2 iterations from x = 0.5; from x = -1 the loop runs M = 5 times.
    assert.deepEqual(r.loop.runs.map((run) => run.steps.dims), [[2, 2, 4], [5, 2, 4]]);
    const s1 = 1 / (1 + Math.exp(1));
    assert.ok(Math.abs(r.loop.runs[1].y.values[0] - Math.max(-1 + 10 * s1, 0)) < 1e-5, `loop.onnx: y ${r.loop.runs[1].y.values[0]}`);
  });
});

// In the page: each model of `specs` ({name, url, feeds: [{name, dtype, shape, url}]}) on WebGPU
// once; per model its outputs (plain arrays, compared against onnxruntime-node in node), the
// placement counted over compute nodes (a float32 output; If/Loop/Scan themselves and int64/bool
// shape arithmetic excluded) with the ops of those left on wasm, and the run's time (the first:
// shader compiles included).
async function modelsInPage(page, specs) {
  return page.evaluate(async (specs) => {
    const { Tessera } = await import('/dist/tessera.mjs');
    const gpu = await Tessera.create({ device: 'webgpu' });
    let graph = null;
    const graphOf = gpu._graph.bind(gpu);
    gpu._graph = (h) => (graph = graphOf(h));
    const kTyped = { float32: Float32Array, int64: BigInt64Array };
    const result = {};
    for (const spec of specs) {
      const bytes = new Uint8Array(await (await fetch(spec.url)).arrayBuffer());
      const t0 = performance.now();
      const m = await gpu.load(bytes, { name: spec.name });
      const feeds = {};
      for (const f of spec.feeds)
        feeds[f.name] = { dtype: f.dtype, shape: f.shape, data: new kTyped[f.dtype](await (await fetch(f.url)).arrayBuffer()) };
      const graphs = (graph.graphs ?? [null]).map((g, i) => (i === 0 ? graph : g));
      const compute = (p) => !['If', 'Loop', 'Scan'].includes(p.op) &&
        graphs[p.graph].nodes[p.node].outputs.some((id) => id >= 0 && graphs[p.graph].values[id].dtype === 1);
      const nodes = m.placement.nodes.filter(compute);
      const wasm = {};
      for (const p of nodes) if (p.device === 'wasm') wasm[p.op] = (wasm[p.op] ?? 0) + 1;
      const t1 = performance.now();
      const out = await m.run(feeds);
      const t2 = performance.now();
      const outputs = {};
      for (const [name, t] of Object.entries(out)) outputs[name] = { dtype: t.dtype, shape: t.dims, data: Array.from(t.data, Number) };
      result[spec.name] = { deviceFallback: m.deviceFallback, compute: nodes.length, onGpu: nodes.length - Object.values(wasm).reduce((a, b) => a + b, 0),
        wasm, loadMs: t1 - t0, runMs: t2 - t1, outputs };
      m.dispose();
    }
    gpu.dispose();
    return result;
  }, specs);
}
// The goal per model of tests/models (models.json; those fetched): on WebGPU, at least 90%
// of the compute nodes placed there and the outputs within the model's tolerance (models.json
// rtol/atol, else 1e-4, as web/test/models.test.mjs) of onnxruntime-node on the same seeded
// inputs. CI runs the models whose first WebGPU run (shader compiles) takes a few seconds at most
// on SwiftShader (kQuickModels: about 8 s in all on the loaded 2-core machine);
// TSR_WEBGPU_MODELS=all runs every model (PP-OCR cls and v4 rec/det, openWakeWord's embedding,
// the legacy VAD, M-LSD, BlazeFace back too: about 3 minutes there), TSR_WEBGPU_MODELS=a,b those.
const kQuickModels = ['oww_alexa', 'oww_hey_jarvis', 'oww_melspectrogram', 'blazeface_front', 'silero_vad_v5'];
test('webgpu: every model of tests/models runs on WebGPU (>= 90% of compute nodes) and matches onnxruntime-node', { skip: skip || (!ort && 'onnxruntime-node missing (scripts/install_deps.sh)') }, async () => {
  const only = process.env.TSR_WEBGPU_MODELS === 'all' ? null : process.env.TSR_WEBGPU_MODELS?.split(',') ?? kQuickModels;
  const table = lib.loadModels().filter((m) => fs.existsSync(modelPath(m.file)) && (!only || only.includes(m.name)));
  if (!table.length) return;
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-webgpu-feeds-'));
  const refs = {};
  const specs = [];
  try {
    for (const model of table) {
      const feeds = feedsFor(model);
      refs[model.name] = await reference(ort, modelPath(model.file), feeds);
      specs.push({ name: model.name, url: `/models/${model.file}`, feeds: Object.entries(feeds).map(([name, t], k) => {
        fs.writeFileSync(path.join(data, `${model.name}_${k}.bin`), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
        return { name, dtype: t.dtype, shape: t.shape, url: `/feeds/${model.name}_${k}.bin` };
      }) });
    }
    await withBrowser(async (browser, url) => {
      const page = await browser.newPage();
      const log = [];
      page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
      await page.goto(url);
      const r = await modelsInPage(page, specs).catch((e) => { throw new Error(`${e.message}\n${log.join('\n')}`); });
      for (const model of table) {
        const m = r[model.name];
        console.log(`# ${model.name}: ${m.onGpu} of ${m.compute} compute nodes on webgpu (on wasm ${JSON.stringify(m.wasm)}); load ${m.loadMs.toFixed(0)} ms, first run ${m.runMs.toFixed(0)} ms`);
        assert.equal(m.deviceFallback, null, `${model.name}: runs on webgpu`);
        assert.ok(m.onGpu >= 0.9 * m.compute, `${model.name}: ${m.onGpu} of ${m.compute} compute nodes on webgpu (on wasm: ${JSON.stringify(m.wasm)})`);
        checkOutputs(Object.fromEntries(Object.entries(m.outputs).map(([k, t]) => [k, { ...t, data: Float64Array.from(t.data) }])), refs[model.name], `${model.name} on webgpu`, model);
      }
    }, [['/feeds', data]]);
  } finally {
    fs.rmSync(data, { recursive: true, force: true });
  }
});

test('webgpu: a lost device fails the next run with a backend TesseraError', { skip }, async () => {
  await withBrowser(async (browser, url) => {
    const page = await browser.newPage();
    await page.goto(url);
    const r = await page.evaluate(async () => {
      // The device the runtime asks for, caught on its way (the API does not hand it out).
      const request = GPUAdapter.prototype.requestDevice;
      let device = null;
      GPUAdapter.prototype.requestDevice = async function (d) { device = await request.call(this, d); return device; };
      const { Tessera } = await import('/dist/tessera.mjs');
      const tsr = await Tessera.create({ device: 'webgpu' });
      GPUAdapter.prototype.requestDevice = request;
      const m = await tsr.load(new Uint8Array(await (await fetch('/gen/fallback.onnx')).arrayBuffer()));
      const feeds = { x: { dtype: 'float32', shape: [4, 5], data: new Float32Array(20).fill(1) } };
      const before = Array.from((await m.run(feeds)).y.data.slice(0, 2));
      device.destroy();
      await device.lost;
      try { await m.run(feeds); return { before, err: null }; } catch (e) { return { before, err: { name: e.name, code: e.code, message: e.message } }; }
    });
    assert.ok(Math.abs(r.before[0] - 1 / (1 + Math.exp(-1))) < 1e-6, `a run before the loss: ${r.before}`);
    assert.deepEqual([r.err?.name, r.err?.code], ['TesseraError', 'backend']);
    assert.match(r.err.message, /webgpu: the device was lost/);
    // The OCR page's device switch (a fresh page, so a fresh device): ready on WebGPU.
    if (!fs.existsSync(path.join(models, 'ch_PP-OCRv4_rec_infer.onnx'))) return;
    const ocr = await browser.newPage();
    await ocr.goto(`${url}examples/ocr/?mode=line&device=webgpu`);
    await ocr.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 60000 });
    assert.deepEqual([await ocr.getAttribute('body', 'data-state'), await ocr.getAttribute('body', 'data-device')], ['ready', 'webgpu'],
      await ocr.textContent('#status'));
  });
});

test('webgpu: without navigator.gpu, auto falls back to wasm and webgpu throws', { skip }, async () => {
  await withBrowser(async (browser, url) => {
    const page = await browser.newPage();
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined }));
    await page.goto(url);
    const r = await page.evaluate(async () => {
      const { Tessera } = await import('/dist/tessera.mjs');
      const tsr = await Tessera.create({ device: 'auto' });
      const bytes = new Uint8Array(await (await fetch('/gen/fallback.onnx')).arrayBuffer());
      const m = await tsr.load(bytes);
      const y = await m.run({ x: { dtype: 'float32', shape: [4, 5], data: new Float32Array(20).fill(1) } });
      let err = null;
      try { await Tessera.create({ device: 'webgpu' }); } catch (e) { err = { name: e.name, code: e.code, message: e.message }; }
      return { device: tsr.device, fallback: tsr.deviceFallback, modelDevice: m.device, placement: m.placement, y: Array.from(y.y.data), err };
    });
    assert.equal(r.device, 'wasm');
    assert.match(r.fallback, /navigator\.gpu is not available/);
    assert.equal(r.modelDevice, 'wasm');
    assert.ok(r.placement.nodes.every((n) => n.device === 'wasm') && r.placement.copies === 0);
    assert.ok(Math.abs(r.y[4] - 1 / (1 + Math.exp(-5))) < 1e-6, `CumSum then Sigmoid: ${r.y}`);
    assert.deepEqual([r.err?.name, r.err?.code], ['TesseraError', 'unsupported']);
    assert.match(r.err.message, /device 'webgpu': navigator\.gpu is not available/);
  });
});
