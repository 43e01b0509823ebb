// Error codes from real bad inputs, dispose semantics and the heap check.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lib, loadPackage, modelPath, feedsFor } from './helpers.mjs';

let Tessera, TesseraError, tsr;
const models = Object.fromEntries(lib.loadModels().map((m) => [m.name, m]));
const alexa = models.oww_alexa;
const alexaFile = modelPath(alexa.file);
const haveModels = fs.existsSync(alexaFile) ? false : `${alexaFile} missing (third_party/models/fetch.sh)`;

before(async () => { ({ Tessera, TesseraError } = await loadPackage()); tsr = await Tessera.create(); });
after(() => tsr.dispose());

async function rejects(promiseOrFn, code, pattern) {
  let err;
  try { await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn); } catch (e) { err = e; }
  assert.ok(err, `expected a TesseraError ${code}, nothing was thrown`);
  assert.ok(err instanceof TesseraError, `expected a TesseraError, got ${err}`);
  assert.equal(err.code, code, `code of: ${err.message}`);
  if (pattern) assert.match(err.message, pattern);
  return err;
}

// A one-node ONNX model written by Debian's python3-onnx (the importer's own tests do the same).
function onnxModel(body) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-web-'));
  const out = path.join(dir, 'm.onnx');
  execFileSync('/usr/bin/python3', ['-c', `
import onnx, sys
from onnx import helper, TensorProto as T
${body}
onnx.save(m, sys.argv[1])`, out]);
  return new Uint8Array(fs.readFileSync(out));
}

test('invalid_model: malformed bytes, truncated .tsr', { skip: haveModels }, async () => {
  await rejects(tsr.load(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), { name: 'junk.bin' }), 'invalid_model', /^junk\.bin: /);
  const m = await tsr.load(new Uint8Array(fs.readFileSync(alexaFile)));
  const bytes = m.save();
  m.dispose();
  await rejects(tsr.load(bytes.slice(0, bytes.length >> 1), { name: 'half.tsr' }), 'invalid_model', /^half\.tsr: /);
});

test('invalid_argument: wrong shape and wrong dtype name the input', { skip: haveModels }, async () => {
  const m = await tsr.load(new Uint8Array(fs.readFileSync(alexaFile)));
  const name = alexa.inputs[0].name;
  await rejects(m.run({ [name]: { dtype: 'float32', shape: [1, 16], data: new Float32Array(16) } }),
    'invalid_argument', /input\[0\] "onnx::Flatten_0": shape \[1, 16\] has rank 2, expected rank 3/);
  await rejects(m.run({ [name]: { dtype: 'int32', shape: [1, 16, 96], data: new Int32Array(16 * 96) } }),
    'invalid_argument', /input\[0\] "onnx::Flatten_0": dtype int32, expected float32/);
  await rejects(m.run({ [name]: { dtype: 'float32', shape: [1, 16, 96], data: new Float64Array(16 * 96) } }),
    'invalid_argument', /needs a Float32Array/);
  await rejects(m.run({ [name]: { dtype: 'float32', shape: [1, 16, 96], data: new Float32Array(5) } }),
    'invalid_argument', /needs 6144 bytes of data, got 20/);
  await rejects(m.run({}), 'invalid_argument', /input\[0\] "onnx::Flatten_0" is missing/);
  m.dispose();
});

test('not_found: unknown input name', { skip: haveModels }, async () => {
  const m = await tsr.load(new Uint8Array(fs.readFileSync(alexaFile)));
  const feeds = feedsFor(alexa);
  feeds.nope = feeds[alexa.inputs[0].name];
  await rejects(m.run(feeds), 'not_found', /the model has no input named "nope" \(inputs: onnx::Flatten_0\)/);
  m.dispose();
});

test('unsupported: an op Tessera lacks, listed by the importer', async () => {
  const bytes = onnxModel(`
n = helper.make_node('WordConvEmbedding', ['x'], ['y'], domain='com.microsoft')
g = helper.make_graph([n], 'g', [helper.make_tensor_value_info('x', T.FLOAT, [2])], [helper.make_tensor_value_info('y', T.FLOAT, [2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17), helper.make_opsetid('com.microsoft', 1)])`);
  await rejects(tsr.load(bytes, { name: 'wordconv.onnx' }), 'unsupported', /^wordconv\.onnx: [\s\S]*com\.microsoft::WordConvEmbedding/);
});

test('resource_exhausted: an input too large to allocate', async () => {
  const bytes = onnxModel(`
n = helper.make_node('Relu', ['x'], ['y'])
g = helper.make_graph([n], 'g', [helper.make_tensor_value_info('x', T.FLOAT, ['n'])], [helper.make_tensor_value_info('y', T.FLOAT, ['n'])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])`);
  const m = await tsr.load(bytes);
  assert.deepEqual(m.inputs, [{ name: 'x', dtype: 'float32', shape: ['n'] }]);
  await rejects(m.run({ x: { dtype: 'float32', shape: [1e15], data: new Float32Array(4) } }), 'resource_exhausted', /input "x"/);
  const y = await m.run({ x: { dtype: 'float32', shape: [3], data: new Float32Array([-1, 0, 2]) } });
  assert.deepEqual([...y.y.data], [0, 0, 2]);
  m.dispose();
});

test('dispose: twice, run after dispose, runtime disposed', { skip: haveModels }, async () => {
  const rt = await Tessera.create();
  const m = await rt.load(new Uint8Array(fs.readFileSync(alexaFile)));
  m.dispose();
  await rejects(() => m.dispose(), 'invalid_argument', /disposed/);
  await rejects(m.run(feedsFor(alexa)), 'invalid_argument', /disposed/);
  await rejects(() => m.save(), 'invalid_argument', /disposed/);
  const m2 = await rt.load(new Uint8Array(fs.readFileSync(alexaFile)));
  rt.dispose();
  await rejects(m2.run(feedsFor(alexa)), 'invalid_argument', /disposed/);
  await rejects(rt.load(new Uint8Array(8)), 'invalid_argument', /disposed/);
  await rejects(() => rt.dispose(), 'invalid_argument', /disposed/);
});

test('two models run at once give both right answers', { skip: haveModels }, async () => {
  const a = await tsr.load(new Uint8Array(fs.readFileSync(alexaFile)));
  const b = await tsr.load(new Uint8Array(fs.readFileSync(modelPath(models.oww_hey_jarvis.file))));
  const fa = feedsFor(alexa), fb = feedsFor(models.oww_hey_jarvis);
  const [ra1, rb1] = [await a.run(fa), await b.run(fb)];
  const [ra2, rb2] = await Promise.all([a.run(fa), b.run(fb)]);
  assert.deepEqual(ra2, ra1);
  assert.deepEqual(rb2, rb1);
  a.dispose(); b.dispose();
});

test('1000 runs with dispose leave the wasm heap where it was', { skip: haveModels }, async () => {
  const onnx = await tsr.load(new Uint8Array(fs.readFileSync(alexaFile)));
  const bytes = onnx.save();
  const feeds = feedsFor(alexa);
  const first = await onnx.run(feeds);
  onnx.dispose();
  const warm = await tsr.load(bytes);  // first-use allocations (registries) happen here
  await warm.run(feeds);
  warm.dispose();
  const before = tsr.heapInUse();
  for (let i = 0; i < 1000; i++) {
    const m = await tsr.load(bytes);
    const out = await m.run(feeds);
    if (i === 999) assert.deepEqual(out, first);
    m.dispose();
  }
  // Not above where it was (it may end a little below: a run can give back what warm-up kept).
  const after = tsr.heapInUse();
  assert.ok(after <= before, `wasm heap in use grew from ${before} to ${after} bytes over 1000 load/run/dispose cycles`);
});
