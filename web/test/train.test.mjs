// Training in tessera-web (issue 28): a small Fashion-MNIST classifier (make_train_model.py)
// prepared with tsr.prepareTraining and fine-tuned in wasm on real images: the held-out loss
// falls, a checkpoint resumes bit-identically (loadTrainer and trainer.load), the exported model
// gives trainer.run's outputs in Tessera.load and in the native `tessera run`, the native
// `tessera export` of the wasm's checkpoint runs as exportInference()'s model and `tessera train`
// resumes it, and bad batches, specs and checkpoints fail with the codes model.run uses. The
// weights are not compared bit for bit with a native run: wasm's SIMD128 kernels round differently.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { kRepo, loadPackage, compare } from './helpers.mjs';

const kData = '/usr/share/datasets/fashion-mnist';
const cli = process.env.TSR_CLI ?? path.join(kRepo, 'build', 'release', 'bin', 'tessera');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-train-'));
const modelFile = path.join(dir, 'mlp.onnx');
let skip = fs.existsSync(path.join(kData, 'train-images-idx3-ubyte.gz')) ? false : `${kData} missing (Fashion-MNIST)`;
const noCli = fs.existsSync(cli) ? false : `${cli} missing (the release stage's CLI; or set TSR_CLI)`;
const kBatch = 64;

let Tessera, TesseraError, Tensor, tsr, modelBytes, train, heldOut;

/** The first n samples of a split: {images: f32 [n, 1, 28, 28] in [0, 1], labels: i64 [n]}. */
function idx(split, n) {
  const images = zlib.gunzipSync(fs.readFileSync(path.join(kData, `${split}-images-idx3-ubyte.gz`)));
  const labels = zlib.gunzipSync(fs.readFileSync(path.join(kData, `${split}-labels-idx1-ubyte.gz`)));
  assert.equal(images.readUInt32BE(0), 2051, `${split} images: IDX magic`);
  assert.equal(labels.readUInt32BE(0), 2049, `${split} labels: IDX magic`);
  const x = new Float32Array(n * 784);
  for (let i = 0; i < n * 784; i++) x[i] = images[16 + i] / 255;
  return { images: x, labels: BigInt64Array.from(labels.subarray(8, 8 + n), BigInt), n };
}

/** Batch b of a set: {inputs: {image}, labels}. */
function batch(set, b, size = kBatch) {
  return {
    inputs: { image: new Tensor('float32', set.images.slice(b * size * 784, (b + 1) * size * 784), [size, 1, 28, 28]) },
    labels: set.labels.slice(b * size, (b + 1) * size),
  };
}

/** A float32 .npy file (numpy's format 1.0). */
function writeNpy(file, data, shape) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')},), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0; head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function readNpyF32(file) {
  const b = fs.readFileSync(file);
  const start = 10 + b.readUInt16LE(8);
  assert.match(b.toString('latin1', 10, start), /'descr': '<f4'/, `${file}: float32`);
  return new Float32Array(b.buffer.slice(b.byteOffset + start, b.byteOffset + b.length));
}

async function rejects(promiseOrFn, code, pattern) {
  let err;
  try { await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn); } catch (e) { err = e; }
  assert.ok(err instanceof TesseraError, `expected a TesseraError ${code}, got ${err}`);
  assert.equal(err.code, code, `code of: ${err.message}`);
  if (pattern) assert.match(err.message, pattern);
}

before(async () => {
  ({ Tessera, TesseraError, Tensor } = await loadPackage());
  tsr = await Tessera.create();
  if (skip) return;
  try {
    execFileSync('/usr/bin/python3', [path.join(kRepo, 'web', 'test', 'make_train_model.py'), modelFile], { stdio: 'pipe' });
  } catch (e) {
    skip = `python3-onnx/numpy could not write the model: ${e.stderr}`;
    return;
  }
  modelBytes = new Uint8Array(fs.readFileSync(modelFile));
  train = idx('train', 4 * kBatch);
  heldOut = idx('t10k', 4 * kBatch);
});
after(() => { tsr.dispose(); fs.rmSync(dir, { recursive: true, force: true }); });

test('fine-tuning on Fashion-MNIST lowers the held-out loss; the export runs in tsr.load and natively', { skip }, async (t) => {
  const trainer = await tsr.prepareTraining(modelBytes, { optimizer: 'adam', learningRate: 3e-3, name: 'mlp.onnx' });
  assert.deepEqual(trainer.inputs, [{ name: 'image', dtype: 'float32', shape: ['N', 1, 28, 28] }]);
  assert.equal(trainer.labels.dtype, 'int64');
  assert.deepEqual([...trainer.weights].sort(), ['fc1.bias', 'fc1.weight', 'head.bias', 'head.weight']);
  assert.deepEqual(trainer.outputs, ['logits']);
  assert.equal(trainer.stepCount, 0);
  assert.equal(trainer.learningRate, Math.fround(3e-3));
  const heldOutLoss = async () => (await trainer.eval({ inputs: [new Tensor('float32', heldOut.images, [heldOut.n, 1, 28, 28])], labels: heldOut.labels })).loss;
  const before = await heldOutLoss();
  const losses = [];
  for (let epoch = 0; epoch < 3; epoch++)
    for (let b = 0; b < 4; b++) losses.push(await trainer.step(batch(train, b)));
  const after = await heldOutLoss();
  assert.equal(trainer.stepCount, 12);
  assert.ok(losses.every(Number.isFinite), `losses ${losses}`);
  assert.ok(after < 0.8 * before, `held-out loss ${before} -> ${after} after 12 steps`);
  assert.ok(losses.slice(8).reduce((a, b) => a + b) < losses.slice(0, 4).reduce((a, b) => a + b), `train losses ${losses}`);

  // eval's prediction and run's logits are the same function of the same weights.
  const probe = batch(heldOut, 0);
  const ev = await trainer.eval(probe);
  const run = await trainer.run(probe.inputs);
  assert.deepEqual(run.logits.dims, [kBatch, 10]);
  assert.deepEqual(ev.prediction.data, run.logits.data);

  // The exported inference model: the same logits through Tessera.load (same wasm kernels) ...
  const exported = trainer.exportInference();
  const model = await tsr.load(exported, { name: 'exported.tsr' });
  const viaModel = await model.run(probe.inputs);
  assert.deepEqual(viaModel.logits.data, run.logits.data);
  model.dispose();
  // ... and through the native CLI (native kernels: equal within float rounding).
  await t.test('native tessera run of the export', { skip: noCli }, () => {
    fs.writeFileSync(path.join(dir, 'exported.tsr'), exported);
    writeNpy(path.join(dir, 'probe.npy'), probe.inputs.image.data, [kBatch, 1, 28, 28]);
    execFileSync(cli, ['run', path.join(dir, 'exported.tsr'), '-i', `image=${path.join(dir, 'probe.npy')}`, '--output-dir', path.join(dir, 'out')], { stdio: 'pipe' });
    const c = compare(readNpyF32(path.join(dir, 'out', 'output_0.npy')), run.logits.data, 1e-5, 1e-5);
    assert.ok(c.ok, `native logits differ from the wasm trainer's (max abs ${c.maxAbs})`);
  });
  trainer.dispose();
});

test('disposed trainers give their heap back', { skip }, async () => {
  const cycle = async () => {
    const a = await tsr.prepareTraining(modelBytes, { trainable: ['head.*'] });
    await a.step(batch(train, 0));
    await a.eval(batch(train, 1));
    await a.run([batch(train, 1).inputs.image]);
    const b = await tsr.loadTrainer(a.save());
    b.load(a.save());
    b.exportInference();
    a.dispose(); b.dispose();
  };
  await cycle();  // first-use allocations (registries) happen here
  const before = tsr.heapInUse();
  for (let i = 0; i < 5; i++) await cycle();
  const after = tsr.heapInUse();
  assert.ok(after <= before, `wasm heap in use grew from ${before} to ${after} bytes over 5 trainer cycles`);
});

test('a checkpoint resumes bit-identically through loadTrainer and trainer.load', { skip }, async (t) => {
  const a = await tsr.prepareTraining(modelBytes, { optimizer: 'sgd', learningRate: 0.05, momentum: 0.9 });
  for (let b = 0; b < 3; b++) await a.step(batch(train, b));
  const ckpt = a.save();
  a.learningRate = 0.02;  // state of the run after the checkpoint, which load() must restore
  const resumed = [await a.step(batch(train, 3)), await a.step(batch(train, 0))];
  const weightsA = a.exportInference();
  assert.equal(a.stepCount, 5);

  const b = await tsr.loadTrainer(ckpt, { name: 'ckpt.tsr' });
  assert.equal(b.stepCount, 3);
  assert.equal(b.learningRate, Math.fround(0.05));
  b.learningRate = 0.02;
  assert.deepEqual([await b.step(batch(train, 3)), await b.step(batch(train, 0))], resumed);
  assert.deepEqual(b.exportInference(), weightsA, 'weights after resuming from loadTrainer');

  a.load(ckpt);
  assert.equal(a.stepCount, 3);
  assert.equal(a.learningRate, Math.fround(0.05));
  a.learningRate = 0.02;
  assert.deepEqual([await a.step(batch(train, 3)), await a.step(batch(train, 0))], resumed);
  assert.deepEqual(a.exportInference(), weightsA, 'weights after trainer.load');

  // The native CLI reads the wasm's checkpoint: `tessera export` of it runs as exportInference()'s
  // model does (the files differ in their producer string only).
  await t.test('native tessera export of the checkpoint', { skip: noCli }, async () => {
    fs.writeFileSync(path.join(dir, 'ckpt5.tsr'), a.save());
    execFileSync(cli, ['export', path.join(dir, 'ckpt5.tsr'), '-o', path.join(dir, 'native.tsr')], { stdio: 'pipe' });
    const native = await tsr.load(new Uint8Array(fs.readFileSync(path.join(dir, 'native.tsr'))));
    const ours = await tsr.load(weightsA);
    const probe = batch(heldOut, 0).inputs;
    assert.deepEqual((await native.run(probe)).logits.data, (await ours.run(probe)).logits.data);
    native.dispose(); ours.dispose();
    // ... and `tessera train` resumes it (one epoch of 64 Fashion-MNIST samples).
    const log = execFileSync(cli, ['train', path.join(dir, 'ckpt5.tsr'), '--epochs', '1', '--limit', '64'], { stdio: 'pipe' }).toString();
    assert.match(log, /epoch 1: train loss \d/);
  });
  a.dispose(); b.dispose();
});

test('trainable and frozen patterns pick the weights', { skip }, async () => {
  const full = await tsr.prepareTraining(modelBytes, { frozen: ['fc1.*'], learningRate: 1e-2 });
  const head = await tsr.prepareTraining(modelBytes, { trainable: ['head.*'], learningRate: 1e-2 });
  assert.deepEqual([...full.weights].sort(), ['head.bias', 'head.weight']);
  assert.deepEqual([...head.weights].sort(), ['head.bias', 'head.weight']);
  // Freezing fc1 and training head.* name the same weights: the same steps, the same weights.
  const lossesA = [await full.step(batch(train, 0)), await full.step(batch(train, 1)), await full.step(batch(train, 0))];
  const lossesB = [await head.step(batch(train, 0)), await head.step(batch(train, 1)), await head.step(batch(train, 0))];
  assert.deepEqual(lossesA, lossesB);
  assert.ok(lossesA[2] < lossesA[0], `head-only losses ${lossesA}`);
  assert.deepEqual(full.exportInference(), head.exportInference());
  // A checkpoint of another training model does not load, naming the variables.
  const all = await tsr.prepareTraining(modelBytes, {});
  await rejects(() => all.load(head.save()), 'invalid_argument', /does not match.*fc1/);
  all.dispose(); full.dispose(); head.dispose();
});

test('bad batches, specs and checkpoints fail with run()\'s codes', { skip }, async () => {
  const tr = await tsr.prepareTraining(modelBytes, { optimizer: 'adamw', weightDecay: 0.01 });
  const good = batch(train, 0);
  await rejects(tr.step({ inputs: { img: good.inputs.image }, labels: good.labels }), 'not_found', /no input "img".*"image"/);
  await rejects(tr.step({ inputs: {}, labels: good.labels }), 'invalid_argument', /"image" missing/);
  await rejects(tr.step({ inputs: [good.inputs.image, good.inputs.image], labels: good.labels }), 'invalid_argument', /2 inputs given/);
  await rejects(tr.step({ inputs: good.inputs }), 'invalid_argument', /no labels/);
  await rejects(tr.step({ inputs: good.inputs, labels: new Float32Array(kBatch) }), 'invalid_argument', /float32/);
  await rejects(tr.step({ inputs: good.inputs, labels: good.labels.slice(0, 10) }), 'invalid_argument');
  await rejects(tr.step({ inputs: { image: { dtype: 'float32', shape: [kBatch, 784], data: good.inputs.image.data } }, labels: good.labels }), 'invalid_argument', /image/);
  assert.equal(tr.stepCount, 0, 'failed steps update nothing');
  // ort-style {type, dims, data} and plain {dtype, shape, data} tensors are taken too.
  const img = good.inputs.image;
  const l1 = await tr.eval({ inputs: { image: { type: 'float32', dims: img.dims, data: img.data } }, labels: { dtype: 'int64', shape: [kBatch], data: good.labels } });
  assert.equal(l1.loss, (await tr.eval(good)).loss);
  assert.throws(() => { tr.learningRate = NaN; }, (e) => e instanceof TesseraError && e.code === 'invalid_argument');
  assert.throws(() => { tr.learningRate = -1; }, (e) => e instanceof TesseraError && e.code === 'invalid_argument');
  await rejects(() => tr.load(new Uint8Array([1, 2, 3])), 'invalid_model');
  tr.dispose();
  await rejects(tr.step(good), 'invalid_argument', /disposed/);

  await rejects(tsr.prepareTraining(modelBytes, { trainable: ['encoder.*'] }), 'invalid_argument', /trainable "encoder\.\*"/);
  await rejects(tsr.prepareTraining(modelBytes, { loss: 'hinge' }), 'invalid_argument', /hinge/);
  await rejects(tsr.prepareTraining(modelBytes, { learningrate: 0.1 }), 'invalid_argument', /unknown option "learningrate"/);
  await rejects(tsr.loadTrainer(modelBytes, { name: 'mlp.onnx' }), 'not_found', /mlp\.onnx.*train_step/);
  const inference = await tsr.load(modelBytes);
  await rejects(tsr.loadTrainer(inference.save()), 'not_found', /train_step/);
  inference.dispose();
});
