// onnxruntime-web habits (issue 30): the Tensor class, {type, dims, data} feeds (onnxruntime-node's
// own ort.Tensor objects included), outputs as Tensors, run(feeds, {outputs}), free dimensions,
// logLevel, too-small inputs, and one dtype vocabulary in messages. Real models of
// third_party/models, references from onnxruntime-node 1.30.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { lib, loadPackage, ortOrNull, modelPath, feedsFor, reference, checkOutputs } from './helpers.mjs';

let Tessera, Tensor, TesseraError, tsr;
const ort = ortOrNull();
const models = Object.fromEntries(lib.loadModels().map((m) => [m.name, m]));
const missing = (...ms) => ms.map((m) => modelPath(m.file)).find((f) => !fs.existsSync(f));
const skipFor = (...ms) => (missing(...ms) ? `${missing(...ms)} missing (third_party/models/fetch.sh)` : false);
const bytesOf = (m) => new Uint8Array(fs.readFileSync(modelPath(m.file)));
const { ppocr_v4_rec: rec, silero_vad_v5: vad, oww_alexa: alexa } = models;

before(async () => { ({ Tessera, Tensor, TesseraError } = await loadPackage()); tsr = await Tessera.create(); });
after(() => tsr.dispose());

async function rejects(promiseOrFn, code, pattern) {
  let err;
  try { await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn); } catch (e) { err = e; }
  assert.ok(err instanceof TesseraError, `expected a TesseraError ${code}, got ${err}`);
  assert.equal(err.code, code, `code of: ${err.message}`);
  if (pattern) assert.match(err.message, pattern);
  return err;
}

test('Tensor: ort.Tensor constructor forms, aliases, and errors', async () => {
  const t = new Tensor('float32', new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
  assert.equal(t.type, 'float32');
  assert.deepEqual(t.dims, [2, 3]);
  assert.equal(t.dtype, 'float32');
  assert.equal(t.shape, t.dims);
  assert.equal(t.size, 6);
  const inferred = new Tensor(new BigInt64Array([1n, 2n]));
  assert.equal(inferred.type, 'int64');
  assert.deepEqual(inferred.dims, [2]);
  assert.deepEqual(Array.from(new Tensor('int64', [3, 4], [2]).data), [3n, 4n]);
  assert.deepEqual(new Tensor('string', ['a', 'b'], [1, 2]).dims, [1, 2]);
  assert.equal(new Tensor(['a']).type, 'string');
  await rejects(() => new Tensor('float32', new Float32Array(5), [2, 3]), 'invalid_argument', /dims \[2,3\] hold 6 elements, data has 5/);
  await rejects(() => new Tensor('float32', new Int32Array(6), [2, 3]), 'invalid_argument', /data must be a Float32Array/);
  await rejects(() => new Tensor('f32', new Float32Array(1)), 'invalid_argument', /type "f32" is not one of string, float32, /);
  await rejects(() => new Tensor('float32', new Float32Array(1), [-1]), 'invalid_argument', /dims must be an array of non-negative integers/);
  await rejects(() => new Tensor({}), 'invalid_argument', /cannot tell the type/);
});

test('feeds: Tensor, {type, dims, data}, {dtype, shape, data} and onnxruntime-node\'s ort.Tensor give the same outputs', { skip: skipFor(alexa) }, async () => {
  const m = await tsr.load(bytesOf(alexa));
  const [name] = alexa.inputs.map((i) => i.name);
  const plain = feedsFor(alexa)[name];
  const forms = [plain, { type: plain.dtype, dims: plain.shape, data: plain.data }, new Tensor(plain.dtype, plain.data, plain.shape)];
  if (ort) forms.push(new ort.Tensor(plain.dtype, plain.data, plain.shape));
  const outs = [];
  for (const f of forms) outs.push(await m.run({ [name]: f }));
  for (const o of outs.slice(1)) assert.deepEqual(o, outs[0]);
  const [out] = Object.values(outs[0]);
  assert.ok(out instanceof Tensor, 'outputs are Tensors');
  assert.equal(out.type, 'float32');
  assert.equal(out.dtype, out.type);
  assert.deepEqual(out.shape, out.dims);
  await rejects(m.run({ [name]: { type: 'float32', dtype: 'int32', dims: plain.shape, data: plain.data } }), 'invalid_argument', /type "float32" and dtype "int32" disagree/);
  await rejects(m.run({ [name]: { dims: plain.shape, data: plain.data } }), 'invalid_argument', /no type \(expected \{type, dims, data\}/);
  await rejects(m.run({ [name]: { type: 'float32', data: plain.data } }), 'invalid_argument', /no dims/);
  m.dispose();
});

test('run(feeds, {outputs}): only the named outputs, in that order, matching onnxruntime-node', { skip: skipFor(vad) || (!ort && 'onnxruntime-node missing') }, async () => {
  const m = await tsr.load(bytesOf(vad), { name: vad.file });
  const feeds = feedsFor(vad);
  const refs = await reference(ort, modelPath(vad.file), feeds);
  const names = m.outputs.map((o) => o.name);
  assert.ok(names.length >= 2, `silero_vad_v5 has outputs ${names}`);
  checkOutputs(await m.run(feeds), refs, 'all outputs', vad);
  const reversed = [...names].reverse();
  const some = await m.run(feeds, { outputs: reversed });
  assert.deepEqual(Object.keys(some), reversed);
  const one = await m.run(feeds, [names[1]]);  // ort's run(feeds, fetches) form
  assert.deepEqual(Object.keys(one), [names[1]]);
  checkOutputs(one, refs.filter((r) => r.name === names[1]), 'one output', vad);
  const err = await rejects(m.run(feeds, { outputs: ['nope'] }), 'invalid_argument', /outputs\[0\] "nope": the model has no output of that name/);
  for (const n of names) assert.ok(err.message.includes(`"${n}"`), `${err.message} lists "${n}"`);
  await rejects(m.run(feeds, { outputs: [] }), 'invalid_argument', /non-empty array of output names/);
  m.dispose();
});

test('freeDimensions: named dims fixed at load, checked at run; unknown names and bad sizes', { skip: skipFor(rec) }, async () => {
  const bytes = bytesOf(rec);
  const free = await tsr.load(bytes);
  const [batch, width] = [free.inputs[0].shape[0], free.inputs[0].shape[3]];
  assert.equal(typeof batch, 'string');
  free.dispose();
  const m = await tsr.load(bytes, { name: 'rec.onnx', freeDimensions: { [batch]: 1 } });
  assert.deepEqual(m.inputs[0].shape, [1, 3, 48, width]);
  const x = (n) => new Tensor('float32', new Float32Array(n * 3 * 48 * 64), [n, 3, 48, 64]);
  assert.deepEqual((await m.run({ x: x(1) }))['softmax_11.tmp_0'].dims, [1, 8, 6625]);
  await rejects(m.run({ x: x(2) }), 'invalid_argument', /input\[0\] "x": shape \[2, 3, 48, 64\], expected \[1, 3, 48, \?\] \(dim 0\)/);
  m.dispose();
  await rejects(tsr.load(bytes, { name: 'rec.onnx', freeDimensions: { batch: 1 } }), 'not_found',
    new RegExp(`^rec\\.onnx: free dimension "batch": no input of the model has a dynamic dim of that name \\(named: "${batch.replace(/\./g, '\\.')}"`));
  await rejects(tsr.load(bytes, { freeDimensions: { [batch]: -1 } }), 'invalid_argument', /freeDimensions\..* is -1, expected an integer >= 0/);
  await rejects(tsr.load(bytes, { freeDimensions: { [batch]: 1.5 } }), 'invalid_argument', /is 1\.5, expected an integer >= 0/);
  await rejects(tsr.load(bytes, { freeDimensions: [1] }), 'invalid_argument', /freeDimensions must be an object/);
});

test('a too-small input is invalid_argument naming the input and the op (PP-OCRv4 rec, width 1)', { skip: skipFor(rec) }, async () => {
  const m = await tsr.load(bytesOf(rec), { name: 'rec.onnx' });
  await rejects(m.run({ x: new Tensor('float32', new Float32Array(3 * 48), [1, 3, 48, 1]) }), 'invalid_argument',
    /^input "x" float32\[1, 3, 48, 1\] does not fit the model: graph\[0\]\.node\[\d+\] \(AveragePool "[^"]+"\): window 2 .* exceeds the padded input 1/);
  // The same model runs at a width it can take.
  assert.deepEqual((await m.run({ x: new Tensor('float32', new Float32Array(3 * 48 * 8), [1, 3, 48, 8]) }))['softmax_11.tmp_0'].dims, [1, 1, 6625]);
  m.dispose();
});

test('messages use one dtype vocabulary (float32, int64, ...), also for the runtime\'s errors', { skip: skipFor(alexa, vad) }, async () => {
  const m = await tsr.load(bytesOf(alexa));
  const [name] = alexa.inputs.map((i) => i.name);
  const e = await rejects(m.run({ [name]: { type: 'int32', dims: [1, 16, 96], data: new Int32Array(16 * 96) } }), 'invalid_argument',
    /input\[0\] "onnx::Flatten_0": dtype int32, expected float32/);
  assert.doesNotMatch(e.message, /\b(f32|i32)\b/);
  await rejects(m.run({ [name]: { type: 'float32', dims: [1, 16, 96], data: new Float32Array(5) } }), 'invalid_argument',
    /shape \[1, 16, 96\] of float32 needs 6144 bytes of data, got 20/);
  m.dispose();
  const v = await tsr.load(bytesOf(vad));
  const feeds = feedsFor(vad);
  feeds.sr = { type: 'float32', dims: [], data: new Float32Array([16000]) };
  await rejects(v.run(feeds), 'invalid_argument', /"sr": dtype float32, expected int64/);
  v.dispose();
});

test('logLevel: verbose prints runs, info loads, warning (the default) neither; bad levels are errors', { skip: skipFor(alexa) }, async () => {
  const lines = [];
  const print = (s) => lines.push(s);
  const rt = await Tessera.create({ logLevel: 'info', print, printErr: print });
  assert.match(lines.shift(), /^tessera: tessera\.wasm, 1 thread per model$/);
  const feeds = feedsFor(alexa);
  const m = await rt.load(bytesOf(alexa), { name: 'alexa.onnx' });
  assert.equal(lines.length, 1);
  assert.match(lines.shift(), /^tessera: loaded "alexa\.onnx" \(\d+ bytes\) in [\d.]+ ms; inputs onnx::Flatten_0: float32\[1, 16, 96\]; outputs /);
  await m.run(feeds);
  assert.deepEqual(lines, []);
  const verbose = await rt.load(bytesOf(alexa), { name: 'v.onnx', logLevel: 'verbose' });
  lines.length = 0;
  await verbose.run(feeds);
  assert.equal(lines.length, 1);
  assert.match(lines[0], /^tessera: "v\.onnx": run in [\d.]+ ms; inputs onnx::Flatten_0: float32\[1, 16, 96\]; outputs \S+: float32\[1, 1\]$/);
  lines.length = 0;
  const quiet = await rt.load(bytesOf(alexa), { logLevel: 'warning' });
  await quiet.run(feeds);
  assert.deepEqual(lines, []);
  rt.dispose();
  const silent = await Tessera.create({ print, printErr: print });  // default: warning
  (await silent.load(bytesOf(alexa))).dispose();
  assert.deepEqual(lines, []);
  silent.dispose();
  await rejects(Tessera.create({ logLevel: 'debug' }), 'invalid_argument', /logLevel "debug" is not one of verbose, info, warning, error, fatal/);
  await rejects(tsr.load(bytesOf(alexa), { logLevel: 2 }), 'invalid_argument', /load\(\): logLevel 2 is not one of/);
});
