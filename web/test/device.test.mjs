// create({device}) in node, where there is no WebGPU: 'auto' runs on wasm and says why, 'webgpu'
// throws unsupported, another value invalid_argument; a wasm model's placement lists its nodes.
// (WebGPU itself: tests/web/webgpu.test.mjs, in headless Chromium.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { lib, loadPackage, modelPath } from './helpers.mjs';

const alexa = lib.loadModels().find((m) => m.name === 'oww_alexa');
const skip = fs.existsSync(modelPath(alexa.file)) ? false : 'models missing (third_party/models/fetch.sh)';

test('device: auto falls back to wasm without navigator.gpu; webgpu throws; placement on wasm', { skip }, async () => {
  const { Tessera, TesseraError } = await loadPackage();
  const tsr = await Tessera.create({ device: 'auto' });
  assert.equal(tsr.device, 'wasm');
  assert.match(tsr.deviceFallback, /navigator\.gpu is not available/);
  const model = await tsr.load(modelPath(alexa.file));
  assert.equal(model.device, 'wasm');
  const p = model.placement;
  assert.ok(p.nodes.length > 0 && p.nodes.every((n, k) => n.graph === 0 && n.node === k && n.device === 'wasm' && typeof n.op === 'string'));
  assert.equal(p.copies, 0);
  tsr.dispose();
  const plain = await Tessera.create();
  assert.deepEqual([plain.device, plain.deviceFallback], ['wasm', null]);
  plain.dispose();
  for (const [device, code, re] of [['webgpu', 'unsupported', /device 'webgpu': navigator\.gpu is not available/],
    ['gpu', 'invalid_argument', /device must be 'wasm', 'webgpu' or 'auto', got "gpu"/]]) {
    let err = null;
    try { await Tessera.create({ device }); } catch (e) { err = e; }
    assert.ok(err instanceof TesseraError && err.code === code, `${device}: ${err}`);
    assert.match(err.message, re);
  }
});
