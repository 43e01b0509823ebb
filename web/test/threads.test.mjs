// tessera-threads.wasm, the pthreads build, under node (where threads are always available):
// Tessera.create({threads}) with threads > 1 loads it, each model's ThreadPool starts threads - 1
// pthreads on Workers, and the outputs must match onnxruntime-node as the single-threaded suite's
// (models.test.mjs) do. Also: more threads than cores, two models at once, runs after dispose,
// the heap and Workers given back, the fallback to tessera.wasm when threads are missing, and a
// Trainer on 2 threads (web/test/make_train_model.py's classifier).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kRepo, lib, loadPackage, ortOrNull, modelPath, feedsFor, reference, checkOutputs } from './helpers.mjs';

let Tessera, TesseraError;
const ort = ortOrNull();
const models = lib.loadModels();
const byName = Object.fromEntries(models.map((m) => [m.name, m]));
const missing = models.map((m) => modelPath(m.file)).find((f) => !fs.existsSync(f));
const skip = missing ? `${missing} missing (third_party/models/fetch.sh)`
  : !ort ? 'onnxruntime-node missing (scripts/install_deps.sh)' : false;

before(async () => { ({ Tessera, TesseraError } = await loadPackage()); });

const bytesOf = (model) => new Uint8Array(fs.readFileSync(modelPath(model.file)));
// Workers hosting a pthread right now (Emscripten's bookkeeping in the threads build's loader).
const running = (tsr) => tsr._core().PThread.runningWorkers.length;

async function rejects(promise, code, pattern) {
  let err;
  try { await promise; } catch (e) { err = e; }
  assert.ok(err instanceof TesseraError, `expected a TesseraError ${code}, got ${err}`);
  assert.equal(err.code, code, err.message);
  assert.match(err.message, pattern);
}

test('threads: 2 runs every model of tests/models on tessera-threads.wasm and matches onnxruntime-node', { skip }, async () => {
  const tsr = await Tessera.create({ threads: 2 });
  try {
    assert.equal(tsr.threads, 2);
    assert.equal(tsr.threadsFallback, null);
    assert.ok(tsr._core().PThread, 'the pthreads build is loaded');
    for (const model of models) {
      const feeds = feedsFor(model);
      const refs = await reference(ort, modelPath(model.file), feeds);
      const m = await tsr.load(bytesOf(model), { name: model.file });
      assert.equal(running(tsr), 1, `${model.name}: the model's second thread runs on a Worker`);
      checkOutputs(await m.run(feeds), refs, `${model.name}.onnx at 2 threads`, model);
      checkOutputs(await m.run(feeds), refs, `${model.name}.onnx at 2 threads, second run`, model);
      m.dispose();
      assert.equal(running(tsr), 0, `${model.name}: dispose joins the model's thread`);
    }
  } finally {
    tsr.dispose();
  }
});

test('more threads than cores, two models at once, runs after dispose, heap and Workers given back', { skip }, async () => {
  const threads = os.availableParallelism() + 2;
  const tsr = await Tessera.create({ threads });
  try {
    assert.equal(tsr.threads, threads);
    // A conv net and an LSTM with an If: different kernels and control flow on the pool.
    const [a, b] = [byName.ppocr_v4_rec, byName.silero_vad_legacy];
    const [fa, fb] = [feedsFor(a), feedsFor(b)];
    const [ra, rb] = [await reference(ort, modelPath(a.file), fa), await reference(ort, modelPath(b.file), fb)];
    // Both loads wait for Workers at once: each must still find threads - 1 loaded ones.
    const cycle = async () => {
      const [ma, mb] = await Promise.all([tsr.load(bytesOf(a), { name: a.file }), tsr.load(bytesOf(b), { name: b.file })]);
      assert.equal(running(tsr), 2 * (threads - 1), 'each model has its threads');
      const [oa, ob] = await Promise.all([ma.run(fa), mb.run(fb)]);
      checkOutputs(oa, ra, `${a.name} at ${threads} threads`, a);
      checkOutputs(ob, rb, `${b.name} at ${threads} threads`, b);
      ma.dispose();
      assert.equal(running(tsr), threads - 1);
      await rejects(ma.run(fa), 'invalid_argument', /disposed/);
      checkOutputs(await mb.run(fb), rb, `${b.name} after the other model's dispose`, b);
      mb.dispose();
      await rejects(mb.run(fb), 'invalid_argument', /disposed/);
      assert.equal(running(tsr), 0, 'every thread joined');
    };
    await cycle();  // first-use allocations (registries, the tensor block cache) happen here
    const heap = tsr.heapInUse();
    for (let i = 0; i < 4; i++) await cycle();
    // Which thread takes which step varies, and with it a few bytes of malloc's bookkeeping (+-8
    // seen): 4 cycles bound a leak of 16 bytes or more per cycle.
    const after = tsr.heapInUse();
    assert.ok(after <= heap + 48, `models, threads and their stacks freed: heap in use grew from ${heap} to ${after} bytes over 4 cycles`);
    // The Workers stay loaded for the next model: this load starts its threads on them.
    const again = await tsr.load(bytesOf(a));
    checkOutputs(await again.run(fa), ra, `${a.name} loaded again`, a);
  } finally {
    tsr.dispose();
  }
  await rejects(tsr.load(bytesOf(byName.oww_alexa)), 'invalid_argument', /disposed/);
});

test('without SharedArrayBuffer threads > 1 falls back to tessera.wasm on one thread, with a warning', { skip }, async () => {
  const warnings = [];
  const sab = globalThis.SharedArrayBuffer;
  let tsr;
  delete globalThis.SharedArrayBuffer;  // as in a browser page that is not cross-origin isolated
  try {
    tsr = await Tessera.create({ threads: 2, printErr: (s) => warnings.push(s) });
  } finally {
    globalThis.SharedArrayBuffer = sab;
  }
  try {
    assert.equal(tsr.threads, 1);
    assert.match(tsr.threadsFallback, /SharedArrayBuffer is not available/);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /threads: 2 runs on 1 thread \(tessera\.wasm\): SharedArrayBuffer is not available/);
    assert.equal(tsr._core().PThread, undefined, 'the single-threaded build is loaded');
    const model = byName.oww_embedding;
    const feeds = feedsFor(model);
    const m = await tsr.load(bytesOf(model));
    checkOutputs(await m.run(feeds), await reference(ort, modelPath(model.file), feeds), `${model.name} after the fallback`, model);
  } finally {
    tsr.dispose();
  }
});

test('threads: 2: a Trainer runs its second thread on a Worker and takes the single-threaded steps', async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-train-threads-')), 'mlp.onnx');
  execFileSync('/usr/bin/python3', [path.join(kRepo, 'web', 'test', 'make_train_model.py'), file]);
  const bytes = new Uint8Array(fs.readFileSync(file));
  const images = Float32Array.from({ length: 16 * 784 }, (_, i) => ((i * 7919) % 256) / 255);
  const batch = { inputs: [{ dtype: 'float32', shape: [16, 1, 28, 28], data: images }], labels: BigInt64Array.from({ length: 16 }, (_, i) => BigInt(i % 10)) };
  const losses = async (threads) => {
    const tsr = await Tessera.create({ threads });
    try {
      const trainer = await tsr.prepareTraining(bytes, { learningRate: 1e-2 });
      if (threads > 1) assert.equal(running(tsr), 1, "the trainer's second thread runs on a Worker");
      const out = [];
      for (let k = 0; k < 4; k++) out.push(await trainer.step(batch));
      trainer.dispose();
      if (threads > 1) assert.equal(running(tsr), 0, "dispose joins the trainer's thread");
      return out;
    } finally {
      tsr.dispose();
    }
  };
  const two = await losses(2);
  assert.ok(two[3] < two[0], `losses ${two}`);
  const one = await losses(1);
  for (let k = 0; k < 4; k++) assert.ok(Math.abs(two[k] - one[k]) <= 1e-5 * Math.abs(one[k]), `step ${k}: ${two[k]} at 2 threads, ${one[k]} at 1`);
});
