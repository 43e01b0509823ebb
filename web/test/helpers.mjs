// Shared pieces of the node suites: the package, tests/models' table, inputs and onnxruntime-node.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const kRepo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const lib = require(path.join(kRepo, 'tests', 'models', 'lib.js'));

/** The package as a page would import it (web/dist, built by web/build.sh or the wasm preset). */
export async function loadPackage() {
  const entry = path.join(kRepo, 'web', 'dist', 'tessera.mjs');
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: build it with bash web/build.sh`);
  return import(entry);
}

/** onnxruntime-node, or null when tests/models/node_modules lacks it. */
export function ortOrNull() {
  try { return lib.loadOrt(); } catch { return null; }
}

export function modelPath(file) { return path.join(lib.modelsDir(), file); }

/** Seeded feeds for a models.json entry: {name: {dtype, shape, data}}. */
export function feedsFor(model, seed = 1234) {
  const feeds = {};
  for (const t of lib.makeInputs(model, seed)) feeds[t.name] = { dtype: t.dtype, shape: t.shape, data: t.data };
  return feeds;
}

/** Largest |a - b| and whether every element meets |a - b| <= atol + rtol * |b|. */
export function compare(a, b, rtol = 1e-4, atol = 1e-4) {
  if (a.length !== b.length) return { ok: false, maxAbs: Infinity };
  let maxAbs = 0, ok = true;
  for (let i = 0; i < a.length; i++) {
    const x = Number(a[i]), y = Number(b[i]);
    const d = Math.abs(x - y);
    if (!(d <= atol + rtol * Math.abs(y)) && !(Number.isNaN(x) && Number.isNaN(y))) ok = false;
    if (d > maxAbs) maxAbs = d;
  }
  return { ok, maxAbs };
}

/** onnxruntime-node's outputs for feeds: [{name, dtype, shape, data}] in the session's order. */
export async function reference(ort, file, feeds) {
  const session = await lib.ortSession(ort, file);
  const ortFeeds = {};
  for (const [n, t] of Object.entries(feeds)) ortFeeds[n] = new ort.Tensor(t.dtype, t.data, t.shape);
  const out = await session.run(ortFeeds);
  return session.outputNames.map((n) => ({ name: n, dtype: out[n].type, shape: out[n].dims.map(Number), data: out[n].data }));
}

/** Asserts that run() outputs match reference() ones: names, dtypes, shapes, and values at the
 *  model's "rtol"/"atol" in models.json (as run_model_test.py), else 1e-4. */
export function checkOutputs(got, refs, what, model) {
  assert.deepEqual(Object.keys(got).sort(), refs.map((r) => r.name).sort(), `${what}: output names`);
  for (const r of refs) {
    const t = got[r.name];
    assert.equal(t.dtype, r.dtype, `${what}: ${r.name} dtype`);
    assert.deepEqual(t.shape, r.shape, `${what}: ${r.name} shape`);
    const c = compare(t.data, r.data, model.rtol ?? 1e-4, model.atol ?? 1e-4);
    assert.ok(c.ok, `${what}: ${r.name} differs from onnxruntime (max abs ${c.maxAbs})`);
  }
}
