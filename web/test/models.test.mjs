// Every real model of tests/models through the package, as .onnx (imported in wasm) and as the
// .tsr the package saves from it, against onnxruntime-node 1.30 at rtol = atol = 1e-4.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { lib, loadPackage, ortOrNull, modelPath, feedsFor, compare } from './helpers.mjs';

let tsr;
const ort = ortOrNull();
before(async () => { const { Tessera } = await loadPackage(); tsr = await Tessera.create(); });
after(() => tsr.dispose());

async function reference(file, feeds) {
  const session = await lib.ortSession(ort, file);
  const ortFeeds = {};
  for (const [n, t] of Object.entries(feeds)) ortFeeds[n] = new ort.Tensor(t.dtype, t.data, t.shape);
  const out = await session.run(ortFeeds);
  return session.outputNames.map((n) => ({ name: n, dtype: out[n].type, shape: out[n].dims.map(Number), data: out[n].data }));
}

// Tolerances: the model's "rtol"/"atol" in models.json (as run_model_test.py), else 1e-4.
function check(got, refs, what, model) {
  assert.deepEqual(Object.keys(got).sort(), refs.map((r) => r.name).sort(), `${what}: output names`);
  for (const r of refs) {
    const t = got[r.name];
    assert.equal(t.dtype, r.dtype, `${what}: ${r.name} dtype`);
    assert.deepEqual(t.shape, r.shape, `${what}: ${r.name} shape`);
    const c = compare(t.data, r.data, model.rtol ?? 1e-4, model.atol ?? 1e-4);
    assert.ok(c.ok, `${what}: ${r.name} differs from onnxruntime (max abs ${c.maxAbs})`);
  }
}

for (const model of lib.loadModels()) {
  const file = modelPath(model.file);
  const skip = !fs.existsSync(file) ? `${file} missing (third_party/models/fetch.sh)`
    : !ort ? 'onnxruntime-node missing (scripts/install_deps.sh)' : false;
  test(`model ${model.name}: .onnx and .tsr match onnxruntime-node`, { skip }, async () => {
    const feeds = feedsFor(model);
    const refs = await reference(file, feeds);
    const onnx = await tsr.load(new Uint8Array(fs.readFileSync(file)), { name: model.file });
    assert.deepEqual(onnx.inputs.map((i) => i.name).sort(), model.inputs.map((i) => i.name).sort());
    check(await onnx.run(feeds), refs, `${model.name}.onnx`, model);
    const bytes = onnx.save();
    onnx.dispose();
    const m = await tsr.load(bytes, { name: `${model.name}.tsr` });
    check(await m.run(feeds), refs, `${model.name}.tsr`, model);
    m.dispose();
  });
}
