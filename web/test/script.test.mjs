// The script front end through the package: the seeds' model(X, flag) in eager, trace and
// convert modes, against the same computation written out in JS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { lib, kRepo, loadPackage, compare } from './helpers.mjs';

const dir = path.join(kRepo, 'examples', 'script');
const source = fs.readFileSync(path.join(dir, 'model.py'), 'utf8');
const npy = (f) => { const t = lib.readNpy(path.join(dir, 'data', f)); return { dtype: t.dtype, shape: t.shape, data: t.data }; };
const X = npy('X.npy'), pos = npy('flag_pos.npy'), neg = npy('flag_neg.npy');

// relu(X @ W + b) with the script's constants.
const W1 = [[1, 2, 0], [0, 1, -1]], W2 = [[-1, 0, 1], [2, -2, 0.5]], b = [0.5, -1, 0.25];
function expected(W) {
  const [n, k] = X.shape, out = new Float32Array(n * 3);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < 3; j++) {
      let s = b[j];
      for (let l = 0; l < k; l++) s += X.data[i * k + l] * W[l][j];
      out[i * 3 + j] = Math.max(0, s);
    }
  return out;
}
function near(t, ref, what) {
  assert.deepEqual(t.shape, [X.shape[0], 3], what);
  const c = compare(t.data, ref, 1e-6, 1e-6);
  assert.ok(c.ok, `${what}: max abs ${c.maxAbs}`);
}

let tsr;
before(async () => { const { Tessera } = await loadPackage(); tsr = await Tessera.create(); });
after(() => tsr.dispose());

test('eager follows the flag', async () => {
  for (const [flag, W] of [[pos, W1], [neg, W2]]) {
    const r = await tsr.script(source, { entry: 'model', inputs: { X, flag }, mode: 'eager', name: 'model.py' });
    assert.equal(r.graph, null);
    near(Object.values(r.outputs)[0], expected(W), 'eager');
  }
});

test('trace records only the branch taken, and warns', async () => {
  const r = await tsr.script(source, { entry: 'model', inputs: { X, flag: pos }, mode: 'trace', name: 'model.py' });
  near(Object.values(r.outputs)[0], expected(W1), 'trace result');
  assert.ok(r.warnings.some((w) => /^model\.py:\d+:\d+: warning: tracing fixed this branch/.test(w)), r.warnings.join('\n'));
  const g = await tsr.load(r.graph);
  near(Object.values(await g.run({ X, flag: neg }))[0], expected(W1), 'traced graph, other flag (still W1)');
  g.dispose();
});

test('convert keeps both branches as an If', async () => {
  const r = await tsr.script(source, { entry: 'model', inputs: { X, flag: pos }, mode: 'convert', name: 'model.py' });
  assert.deepEqual(r.warnings, []);
  const g = await tsr.load(r.graph);
  near(Object.values(await g.run({ X, flag: pos }))[0], expected(W1), 'converted, flag > 0');
  near(Object.values(await g.run({ X, flag: neg }))[0], expected(W2), 'converted, flag <= 0');
  g.dispose();
});

test('script errors are diagnostics with codes', async () => {
  const { TesseraError } = await loadPackage();
  await assert.rejects(tsr.script('def f(x):\n    return x +\n', { entry: 'f', inputs: { x: X } }),
    (e) => e instanceof TesseraError && e.code === 'invalid_argument' && /^script\.py:2:\d+: error:/.test(e.message));
  await assert.rejects(tsr.script('def f(x):\n    return x\n', { entry: 'g', inputs: { x: X } }),
    (e) => e instanceof TesseraError && e.code === 'not_found');
  await assert.rejects(tsr.script('class A:\n    pass\n', { entry: 'f' }),
    (e) => e instanceof TesseraError && e.code === 'unsupported');
});

test('a bracketed expression over several lines ends its statement at the closing line', async () => {
  // The newline after `[3.0, 4.0]])` ends the assignment (it was swallowed as a blank line, and
  // the `def` after it was reported as "expected end of line").
  const src = 'W = tensor([[1.0, 2.0],\n            [3.0, 4.0]])\n\ndef f(X):\n    return X @ W\n';
  const x = { dtype: 'float32', shape: [1, 2], data: new Float32Array([1, 2]) };
  const r = await tsr.script(src, { entry: 'f', inputs: { X: x }, mode: 'eager', name: 'w.py' });
  assert.deepEqual(Array.from(Object.values(r.outputs)[0].data), [7, 10]);
});
