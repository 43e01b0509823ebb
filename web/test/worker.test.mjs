// Tessera.create({worker: true}) in node: the runtime on a worker_threads Worker (web/js/proxy.mjs,
// worker.mjs) gives what the same calls give on the calling thread: PP-OCR's classifier bit for
// bit (from a file path, with outputs chosen, save()'s bytes), script(), generate() with an
// onToken that stops, tessera-threads.wasm on 2 threads in the Worker; errors arrive as
// TesseraError with the Worker's code and message; the process exits with the Worker idle
// (node --test would time out otherwise). The browser (a module Worker, WebGPU in it, the page's
// thread kept free): tests/web/worker.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kRepo, loadPackage, modelPath } from './helpers.mjs';

const kCls = modelPath('ch_ppocr_mobile_v2.0_cls_infer.onnx');
const noCls = fs.existsSync(kCls) ? false : `${kCls} is not fetched`;
const noThreads = fs.existsSync(path.join(kRepo, 'web', 'dist', 'tessera-threads.wasm')) ? false : 'web/dist/tessera-threads.wasm is not built';
const haveOnnx = (() => { try { execFileSync('/usr/bin/python3', ['-c', 'import onnx']); return true; } catch { return false; } })();

let Tessera, TesseraError, Tensor, worker, local;
before(async () => {
  ({ Tessera, TesseraError, Tensor } = await loadPackage());
  [worker, local] = await Promise.all([Tessera.create({ worker: true }), Tessera.create()]);
});
after(async () => { await worker.dispose(); local.dispose(); });

const feed = (w) => ({ x: new Tensor('float32', Float32Array.from({ length: 3 * 48 * w }, (_, i) => Math.cos(i * 0.3)), [1, 3, 48, w]) });
const same = (a, b) => a.type === b.type && a.dims.join() === b.dims.join() && a.data.every((v, i) => Object.is(v, b.data[i]));
async function error(p) {
  try { await p; } catch (e) { return e; }
  assert.fail('expected a rejection');
}

test('worker: PP-OCR cls from a file path, bit-identical to the calling thread; save, script, errors', { skip: noCls }, async () => {
  assert.deepEqual([worker.worker, worker.device, worker.threads, worker.threadsFallback], [true, 'wasm', 1, null]);
  const [mw, ml] = [await worker.load(kCls), await local.load(kCls)];
  assert.deepEqual([mw.inputs, mw.outputs, mw.device, mw.placement], [ml.inputs, ml.outputs, ml.device, ml.placement]);
  const name = ml.outputs[0].name;
  const feeds = feed(160);
  const [a, b] = [await mw.run(feeds, [name]), await ml.run(feeds)];
  assert.ok(a[name] instanceof Tensor && same(a[name], b[name]), 'the same output, a Tensor');
  assert.equal(feeds.x.data.length, 3 * 48 * 160, 'the feeds were copied, not detached');
  assert.deepEqual(await mw.save(), ml.save());
  const checked = await mw.run(feeds, { checkAgainst: 'cpu' });
  assert.ok(same(checked.outputs[name], b[name]));
  assert.deepEqual([checked.check.ok, checked.check.compared], [true, 0], 'a wasm model: nothing to compare');

  const e1 = await error(mw.run({ x: { dtype: 'float32', shape: [1, 3, 48], data: new Float32Array(144) } }));
  assert.ok(e1 instanceof TesseraError);
  assert.equal(e1.code, 'invalid_argument');
  const e1local = await error(ml.run({ x: { dtype: 'float32', shape: [1, 3, 48], data: new Float32Array(144) } }));
  assert.equal(e1.message, e1local.message, 'the message of the calling thread\'s error');
  assert.match(e1.message, /"x"/);
  const e2 = await error(mw.run({ y: feeds.x }));
  assert.deepEqual([e2.code, e2.message], [(await error(ml.run({ y: feeds.x }))).code, (await error(ml.run({ y: feeds.x }))).message]);
  assert.equal((await error(worker.load(path.join(os.tmpdir(), 'no-such-model.onnx')))).code, 'not_found');
  const progress = [];
  await (await worker.load(kCls, { onProgress: (p) => progress.push(p) })).dispose();
  assert.ok(progress.length >= 1 && progress.at(-1).loaded === progress.at(-1).total && progress.at(-1).total === fs.statSync(kCls).size, 'onProgress here');
  const mine = new Error('no progress');
  assert.equal(await error(worker.load(kCls, { onProgress: () => { throw mine; } })), mine, 'onProgress\'s error, as is');
  assert.equal((await error(worker.prepareTraining(kCls))).code, 'unsupported');
  assert.equal((await error(mw.run({ x: { dtype: 'float32', shape: [1], data: () => 0 } }))).code, 'invalid_argument', 'a function cannot cross');

  const src = 'def f(x):\n    return x * 2.0 + 1.0\n';
  const inputs = { x: new Tensor('float32', Float32Array.from([1, 2, 3]), [3]) };
  const [sw, sl] = [await worker.script(src, { entry: 'f', inputs }), await local.script(src, { entry: 'f', inputs })];
  assert.ok(same(Object.values(sw.outputs)[0], Object.values(sl.outputs)[0]));
  assert.ok(await worker.heapInUse() > 0);
  await mw.dispose();
  assert.equal((await error(mw.run(feeds))).message, 'this model is disposed');
  ml.dispose();
});

test('worker: create() errors are the calling thread\'s (the Worker ended)', async () => {
  const [w, l] = [await error(Tessera.create({ worker: true, device: 'webgpu' })), await error(Tessera.create({ device: 'webgpu' }))];
  assert.ok(w instanceof TesseraError);
  assert.deepEqual([w.code, w.message], [l.code, l.message]);
  assert.equal(w.code, 'unsupported');
  assert.equal((await error(Tessera.create({ worker: 'yes' }))).code, 'invalid_argument');
  assert.equal((await error(Tessera.create({ worker: true, threads: 0 }))).code, 'invalid_argument');
});

test('worker: generate() in the Worker, onToken answered from this thread (false stops)', { skip: haveOnnx ? false : 'no onnx Python package' }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-worker-'));
  try {
    const file = path.join(dir, 'decoder.onnx');
    execFileSync('/usr/bin/python3', [path.join(kRepo, 'tests', 'transformers', 'make_decoder.py'), file]);
    const [mw, ml] = [await worker.load(file), await local.load(file)];
    const prompt = [11, 22, 33, 44];
    const want = await ml.generate(prompt, { maxNewTokens: 8 });
    assert.deepEqual(await mw.generate(prompt, { maxNewTokens: 8 }), want);
    const seen = [];
    const ids = await mw.generate(prompt, { maxNewTokens: 8 }, async (id, i) => { seen.push([id, i]); return i < 2; });
    assert.deepEqual(ids, want.slice(0, 3));
    assert.deepEqual(seen, want.slice(0, 3).map((id, i) => [id, i]));
    const mine = new Error('stop here');
    assert.equal(await error(mw.generate(prompt, { maxNewTokens: 8 }, () => { throw mine; })), mine, 'onToken\'s error, as is');
    await mw.dispose(); ml.dispose();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('worker: tessera-threads.wasm on 2 threads inside the Worker', { skip: noCls || noThreads }, async () => {
  const tw = await Tessera.create({ worker: true, threads: 2 });
  try {
    assert.deepEqual([tw.threads, tw.threadsFallback], [2, null]);
    const [mw, ml] = [await tw.load(kCls), await local.load(kCls)];
    const name = ml.outputs[0].name;
    const [a, b] = [await mw.run(feed(320)), await ml.run(feed(320))];
    assert.ok(a[name].data.every((v, i) => Math.abs(v - b[name].data[i]) <= 1e-5), `${a[name].data} vs ${b[name].data}`);
    ml.dispose();
  } finally {
    await tw.dispose();
  }
});
