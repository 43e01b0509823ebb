// Every real model of tests/models through the package, as .onnx (imported in wasm) and as the
// .tsr the package saves from it, against onnxruntime-node 1.30 at rtol = atol = 1e-4.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { lib, loadPackage, ortOrNull, modelPath, feedsFor, reference, checkOutputs } from './helpers.mjs';

let tsr;
const ort = ortOrNull();
before(async () => { const { Tessera } = await loadPackage(); tsr = await Tessera.create(); });
after(() => tsr.dispose());

for (const model of lib.loadModels()) {
  const file = modelPath(model.file);
  const skip = !fs.existsSync(file) ? `${file} missing (third_party/models/fetch.sh)`
    : !ort ? 'onnxruntime-node missing (scripts/install_deps.sh)' : false;
  test(`model ${model.name}: .onnx and .tsr match onnxruntime-node`, { skip }, async () => {
    const feeds = feedsFor(model);
    const refs = await reference(ort, file, feeds);
    const onnx = await tsr.load(new Uint8Array(fs.readFileSync(file)), { name: model.file });
    assert.deepEqual(onnx.inputs.map((i) => i.name).sort(), model.inputs.map((i) => i.name).sort());
    checkOutputs(await onnx.run(feeds), refs, `${model.name}.onnx`, model);
    const bytes = onnx.save();
    onnx.dispose();
    const m = await tsr.load(bytes, { name: `${model.name}.tsr` });
    checkOutputs(await m.run(feeds), refs, `${model.name}.tsr`, model);
    m.dispose();
  });
}
