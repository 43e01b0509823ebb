// Shared pieces of the node suites: the package, tests/models' table, inputs and onnxruntime-node.
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
