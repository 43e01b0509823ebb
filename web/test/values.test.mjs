// Outputs that are not numeric tensors: string tensors (in and out), sequences and empty
// optionals, on ONNX models written by Debian's python3-onnx (make_value_models.py), each loaded
// as .onnx and as the .tsr the package saves. Expected values are computed here in JS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kRepo, loadPackage } from './helpers.mjs';

let tsr;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-values-'));
before(async () => {
  execFileSync('/usr/bin/python3', [path.join(kRepo, 'web', 'test', 'make_value_models.py'), dir]);
  const { Tessera } = await loadPackage();
  tsr = await Tessera.create();
});
after(() => { tsr.dispose(); fs.rmSync(dir, { recursive: true, force: true }); });

// The model as imported from .onnx and as reloaded from the .tsr bytes it saves.
async function bothForms(name) {
  const onnx = await tsr.load(new Uint8Array(fs.readFileSync(path.join(dir, `${name}.onnx`))), { name });
  const saved = onnx.save();
  const reloaded = await tsr.load(saved, { name: `${name}.tsr` });
  return [onnx, reloaded];
}

test('string tensors go in and come out as string[] (StringNormalizer LOWER)', async () => {
  const words = ['Hello', 'WORLD', '', 'MiXeD 42', 'a\u0000b'];
  for (const model of await bothForms('strings')) {
    const out = await model.run({ x: { dtype: 'string', shape: [words.length], data: words } });
    assert.equal(out.y.dtype, 'string');
    assert.deepEqual(out.y.shape, [words.length]);
    assert.deepEqual(out.y.data, words.map((w) => w.toLowerCase()));
    model.dispose();
  }
});

test('a string input whose element count does not fit its shape is invalid_argument', async () => {
  const [model] = await bothForms('strings');
  await assert.rejects(model.run({ x: { dtype: 'string', shape: [3], data: ['a'] } }),
    (e) => e.code === 'invalid_argument' && /input "x": shape \[3\] needs 3 strings, got 1/.test(e.message));
  await assert.rejects(model.run({ x: { dtype: 'string', shape: [1], data: [7] } }),
    (e) => e.code === 'invalid_argument' && /array of strings/.test(e.message));
  model.dispose();
});

test('a sequence output is an array of tensors (SplitToSequence [1, 2, 3])', async () => {
  const x = Float32Array.from([1, 2, 3, 4, 5, 6]);
  for (const model of await bothForms('sequence')) {
    assert.equal(model.outputs[0].dtype, 'sequence<float32>');
    const out = await model.run({ x: { dtype: 'float32', shape: [6], data: x } });
    assert.ok(Array.isArray(out.s), 'sequence output is an array');
    assert.deepEqual(out.s.map((t) => t.shape), [[1], [2], [3]]);
    assert.deepEqual(out.s.map((t) => Array.from(t.data)), [[1], [2, 3], [4, 5, 6]]);
    model.dispose();
  }
});

test('an empty optional output is null, next to a tensor output', async () => {
  for (const model of await bothForms('optional')) {
    const out = await model.run({ x: { dtype: 'float32', shape: [2], data: Float32Array.from([1.5, -2]) } });
    assert.equal(out.o, null);
    assert.deepEqual(Array.from(out.y.data), [3, -4]);
    model.dispose();
  }
});

test('profile(): off until the first call, then per-node times of the runs since (as tessera run --profile)', async () => {
  const [model] = await bothForms('strings');
  const feeds = { x: { dtype: 'string', shape: [2], data: ['A', 'b'] } };
  await model.run(feeds);  // before profile(): not counted
  assert.equal(model.profile(), '');
  await model.run(feeds);
  await model.run(feeds);
  const report = model.profile(5);
  assert.match(report, /by op type:/);
  assert.match(report, /by node:/);
  assert.match(report, /2 calls\s+StringNormalizer/);
  assert.match(report, /2 calls\s+graph\[0\]\.node\[0\] \(StringNormalizer/);
  model.dispose();
  assert.throws(() => model.profile(), (e) => e.code === 'invalid_argument');
});
