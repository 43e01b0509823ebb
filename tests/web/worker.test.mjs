// Tessera.create({worker: true}) (web/js/proxy.mjs, worker.mjs) and run(feeds, {checkAgainst: 'cpu'})
// (web/js/check.mjs) in Debian's headless Chromium, WebGPU on its SwiftShader adapter (the flags of
// webgpu.test.mjs). One browser, one page:
// - worker: PP-OCR's mobile v2 classifier (third_party/models) loaded in a module Worker gives
//   bit-identical outputs to the same model on the page's thread (one thread, tessera.wasm); a
//   setInterval counter ticks while a worker run (4 lines 1536 wide) is pending and does not tick
//   while the same run blocks the page; a bad input shape arrives as TesseraError
//   invalid_argument naming the input; the caller's input array is left usable (copied), and
//   transferInputs detaches it; trainers are unsupported; threads: 2 (tessera-threads.wasm) runs
//   in the Worker.
// - checkAgainst: web/test/make_webgpu_models.py's conv.onnx (Conv, depthwise Conv, BatchNorm, pools,
//   ConvTranspose; few pipelines to compile) on WebGPU agrees with wasm node by node; with a test hook that
//   perturbs one GPU node's output (webgpu.mjs testHooks, tests only) the report names that node;
//   a wasm model reports that it compared nothing.
// Skipped only when the machine lacks chromium, playwright-core, the model or the onnx Python package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const models = path.join(repo, 'third_party', 'models');
const kCls = 'ch_ppocr_mobile_v2.0_cls_infer.onnx';
const require = createRequire(path.join(repo, 'web', 'package.json'));
let chromium = null;
try { ({ chromium } = require('playwright-core')); } catch { /* skipped below */ }
const noBrowser = !fs.existsSync('/usr/bin/chromium') ? 'no /usr/bin/chromium'
  : !chromium ? 'playwright-core missing in web/node_modules (scripts/install_deps.sh)' : false;
const haveOnnx = (() => { try { execFileSync('/usr/bin/python3', ['-c', 'import onnx']); return true; } catch { return false; } })();
const skipWorker = noBrowser || (!fs.existsSync(path.join(models, kCls)) && `third_party/models/${kCls} is not fetched`);
const skipCheck = noBrowser || (!haveOnnx && 'the onnx Python package is missing (python3-onnx)');

const kArgs = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
  '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'];

let page = null, close = null;
async function openPage() {
  if (page) return page;
  const { serve } = await import(path.join(repo, 'web', 'tools', 'serve.mjs'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-worker-'));
  if (haveOnnx) execFileSync('/usr/bin/python3', [path.join(repo, 'web', 'test', 'make_webgpu_models.py'), dir]);
  // A page served with the COOP/COEP headers: cross-origin isolated, so threads can run.
  fs.writeFileSync(path.join(dir, 'page.html'), '<!doctype html><title>tessera worker test</title>');
  const { server, url } = await serve({ root: path.join(repo, 'web'), mounts: [['/models', models], ['/gen', dir]] });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: kArgs });
  close = async () => { await browser.close(); server.close(); fs.rmSync(dir, { recursive: true, force: true }); };
  page = await browser.newPage();
  const log = [];
  page.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
  page.log = log;
  await page.goto(`${url}gen/page.html`);
  return page;
}

test.after(async () => { await close?.(); });

const inPage = (fn, arg) => page.evaluate(fn, arg).catch((e) => { throw new Error(`${e.message}\n${page.log.join('\n')}`); });

test('worker: create({worker: true}) runs PP-OCR cls off the page thread, bit-identical, errors as TesseraError', { skip: skipWorker }, async () => {
  await openPage();
  const r = await inPage(async (file) => {
    const { Tessera, TesseraError } = await import('/dist/tessera.mjs');
    const feed = (w, n = 1) => ({ x: { dtype: 'float32', shape: [n, 3, 48, w], data: Float32Array.from({ length: n * 3 * 48 * w }, (_, i) => Math.sin(i * 0.37)) } });
    const url = `/models/${file}`;
    const worker = await Tessera.create({ worker: true });
    const local = await Tessera.create();
    const [mw, ml] = [await worker.load(url), await local.load(url)];
    const small = feed(192);
    const a = await mw.run(small), b = await ml.run(small);
    const name = ml.outputs[0].name;
    const same = a[name] instanceof Object && a[name].type === 'float32' && a[name].dims.join() === b[name].dims.join() &&
      a[name].data.every((v, i) => Object.is(v, b[name].data[i]));
    const inputKept = small.x.data.length === 3 * 48 * 192;
    // Ticks of a 1 ms interval while a long run is pending: in the Worker, then on the page.
    let ticks = 0;
    const timer = setInterval(() => { ticks++; }, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const long = feed(1536, 4);
    let t0 = ticks, s0 = performance.now();
    await mw.run(long);
    const worker_ = { ticks: ticks - t0, ms: performance.now() - s0 };
    t0 = ticks; s0 = performance.now();
    await ml.run(long);
    const page_ = { ticks: ticks - t0, ms: performance.now() - s0 };
    clearInterval(timer);
    // Errors from the Worker, transferInputs, trainers.
    const err = async (p) => { try { await p; return null; } catch (e) { return { tesseraError: e instanceof TesseraError, name: e.name, code: e.code, message: e.message }; } };
    const badShape = await err(mw.run({ x: { dtype: 'float32', shape: [1, 3, 48], data: new Float32Array(3 * 48) } }));
    const moved = feed(192);
    const c = await mw.run(moved, { transferInputs: true });
    const transferred = { detached: moved.x.data.length === 0, same: c[name].data.every((v, i) => Object.is(v, b[name].data[i])) };
    const trainer = await err(worker.loadTrainer(url));
    const info = { device: worker.device, threads: worker.threads, modelDevice: mw.device, inputs: mw.inputs, placement: mw.placement.nodes.length,
      localPlacement: ml.placement.nodes.length, heap: await worker.heapInUse() };
    await mw.dispose();
    const disposed = await err(mw.run(small));
    await worker.dispose();
    // tessera-threads.wasm in the Worker (its pthreads are Workers started by the Worker).
    const threaded = await Tessera.create({ worker: true, threads: 2 });
    const mt = await threaded.load(url);
    const d = await mt.run(small);
    const threads = { threads: threaded.threads, fallback: threaded.threadsFallback, near: d[name].data.every((v, i) => Math.abs(v - b[name].data[i]) <= 1e-5) };
    await threaded.dispose();
    local.dispose();
    return { same, inputKept, worker: worker_, page: page_, badShape, transferred, trainer, info, disposed, threads };
  }, kCls);
  assert.ok(r.same, 'the Worker\'s output equals the page-thread run bit for bit');
  assert.ok(r.inputKept, 'run() copies the feeds to the Worker: the caller\'s array stays usable');
  assert.deepEqual(r.transferred, { detached: true, same: true }, 'transferInputs moves the input buffer');
  assert.deepEqual([r.info.device, r.info.threads, r.info.modelDevice, r.info.placement], ['wasm', 1, 'wasm', r.info.localPlacement]);
  assert.equal(r.info.inputs[0].name, 'x');
  assert.ok(r.info.heap > 0);
  console.log(`# cls [4,3,48,1536]: worker run ${r.worker.ms.toFixed(0)} ms, ${r.worker.ticks} interval ticks; page-thread run ${r.page.ms.toFixed(0)} ms, ${r.page.ticks} ticks`);
  assert.ok(r.worker.ticks >= 5, `the page's interval ticks while the Worker runs (${JSON.stringify(r.worker)})`);
  assert.equal(r.page.ticks, 0, `a page-thread run blocks the interval (${JSON.stringify(r.page)})`);
  assert.deepEqual([r.badShape?.tesseraError, r.badShape?.name, r.badShape?.code], [true, 'TesseraError', 'invalid_argument']);
  assert.match(r.badShape.message, /"x".*shape \[1, 3, 48\]/);
  assert.deepEqual([r.trainer?.code, r.disposed?.code], ['unsupported', 'invalid_argument']);
  assert.match(r.trainer.message, /trainers do not run in a Worker/);
  assert.deepEqual(r.threads, { threads: 2, fallback: null, near: true }, 'threads: 2 in the Worker of a cross-origin isolated page');
});

test('checkAgainst cpu: agreement on WebGPU, a perturbed GPU node is the first divergence, wasm compares nothing',
  { skip: skipCheck }, async () => {
  await openPage();
  const r = await inPage(async (file) => {
    const { Tessera } = await import('/dist/tessera.mjs');
    const { testHooks } = await import('/dist/webgpu.mjs');  // the module tessera.mjs loads for WebGPU
    const bytes = new Uint8Array(await (await fetch(`/gen/${file}`)).arrayBuffer());
    const values = (shape) => ({ dtype: 'float32', shape, data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => Math.cos(i * 0.11)) });
    const feeds = { x: values([1, 3, 9, 8]), s: values([2, 2, 11]) };
    const gpu = await Tessera.create({ device: 'webgpu' });
    const m = await gpu.load(bytes, { name: 'conv' });
    let t0 = performance.now();
    const plain = await m.run(feeds);
    const first = performance.now() - t0;
    t0 = performance.now();
    await m.run(feeds);
    const steady = performance.now() - t0;
    t0 = performance.now();
    const agree = await m.run(feeds, { checkAgainst: 'cpu' });
    const ms = performance.now() - t0;
    const name = m.outputs[0].name;
    // The second Conv placed on WebGPU (after one that agrees): its output is perturbed by +1 in element 0.
    const target = m.placement.nodes.filter((n) => n.op === 'Conv' && n.device === 'webgpu')[1].node;
    testHooks.perturb = (k) => k === target;
    let diverged;
    try { diverged = await m.run(feeds, { checkAgainst: 'cpu' }); } finally { testHooks.perturb = null; }
    const loose = await m.run(feeds, { checkAgainst: 'cpu', checkTolerance: { atol: 10 } });
    let bad = null;
    try { await m.run(feeds, { checkAgainst: 'gpu' }); } catch (e) { bad = { code: e.code, message: e.message }; }
    // In a Worker: the same report.
    const worker = await Tessera.create({ worker: true, device: 'webgpu' });
    const mw = await worker.load(bytes, { name: 'conv' });
    const viaWorker = await mw.run(feeds, { checkAgainst: 'cpu' });
    const workerSame = viaWorker.outputs[name].data.every((v, i) => Object.is(v, agree.outputs[name].data[i]));
    const workerInfo = { device: worker.device, modelDevice: mw.device, onGpu: mw.placement.nodes.filter((n) => n.device === 'webgpu').length,
      pageOnGpu: m.placement.nodes.filter((n) => n.device === 'webgpu').length };
    await worker.dispose();
    gpu.dispose();
    const cpu = await Tessera.create();
    const mc = await cpu.load(bytes);
    const onWasm = await mc.run(feeds, { checkAgainst: 'cpu' });
    const wasmDims = [onWasm.outputs[name].dims, agree.outputs[name].dims];
    cpu.dispose();
    return {
      ms, first, steady, target, agree: agree.check, diverged: diverged.check, loose: loose.check, bad, wasm: onWasm.check, wasmDims,
      sameOutputs: agree.outputs[name].data.every((v, i) => Object.is(v, plain[name].data[i])),
      viaWorker: viaWorker.check, workerSame, workerInfo,
    };
  }, 'conv.onnx');
  console.log(`# conv.onnx on WebGPU (SwiftShader): first run ${r.first.toFixed(0)} ms, then ${r.steady.toFixed(0)} ms, with checkAgainst 'cpu' ${r.ms.toFixed(0)} ms; ${r.agree.message}`);
  assert.equal(r.agree.ok, true, r.agree.message);
  assert.equal(r.agree.firstDivergence, null);
  assert.ok(r.agree.compared >= 10, `compared ${r.agree.compared} node outputs`);
  assert.deepEqual(r.agree.tolerance, { atol: 1e-4, rtol: 1e-4 });
  assert.match(r.agree.message, /^check-against cpu: all \d+ node outputs of graph\[0\] agree within atol 0.0001, rtol 0.0001/);
  assert.ok(r.sameOutputs, 'the outputs of a checked run are those of a plain run');
  const d = r.diverged.firstDivergence;
  assert.equal(r.diverged.ok, false);
  assert.deepEqual([d.graph, d.node, d.op, d.device], [0, r.target, 'Conv', 'webgpu']);
  assert.ok(d.maxAbs >= 0.99 && d.maxAbs <= 1.01, `max abs ${d.maxAbs}`);
  assert.ok(d.relL2 > 0);
  assert.equal(typeof d.output, 'string');
  assert.equal(r.diverged.message, `check-against cpu: first difference at graph[0] node[${r.target}] Conv "${d.name}" output "${d.output}": max abs error ${d.maxAbs} (tolerance 0.0001 + 0.0001 * |cpu|)`);
  assert.equal(r.loose.ok, true, 'checkTolerance widens the tolerance');
  assert.equal(r.bad?.code, 'invalid_argument');
  assert.match(r.bad.message, /checkAgainst must be 'cpu'/);
  assert.deepEqual([r.wasm.ok, r.wasm.compared, r.wasm.firstDivergence], [true, 0, null]);
  assert.match(r.wasm.message, /runs on wasm/);
  assert.deepEqual(r.wasmDims[0], r.wasmDims[1]);
  assert.deepEqual([r.viaWorker.ok, r.viaWorker.compared], [true, r.agree.compared]);
  assert.ok(r.workerSame, 'WebGPU in the Worker gives the page\'s WebGPU outputs');
  assert.deepEqual([r.workerInfo.device, r.workerInfo.modelDevice, r.workerInfo.onGpu], ['webgpu', 'webgpu', r.workerInfo.pageOnGpu]);
});
