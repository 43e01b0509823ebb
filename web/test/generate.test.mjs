// model.generate(): the KV-cache loop of tsr::generate on the decoder of
// tests/transformers/make_decoder.py, against the same loop on onnxruntime-node
// (tests/transformers/generate_ref.js), as .onnx and as the .tsr the package saves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kRepo, loadPackage, ortOrNull, lib } from './helpers.mjs';

const require = createRequire(import.meta.url);
const { ortGenerate } = require(path.join(kRepo, 'tests', 'transformers', 'generate_ref.js'));
const ort = ortOrNull();
const noOrt = ort ? false : 'onnxruntime-node missing (scripts/install_deps.sh)';
const prompt = [11, 22, 33, 44, 55, 66, 77];

let tsr;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-generate-'));
const file = path.join(dir, 'decoder.onnx');
before(async () => {
  execFileSync('/usr/bin/python3', [path.join(kRepo, 'tests', 'transformers', 'make_decoder.py'), file]);
  // A model with no past inputs: logits = Cast(input_ids).
  execFileSync('/usr/bin/python3', ['-c', `
import sys
from onnx import TensorProto, helper
g = helper.make_graph([helper.make_node("Cast", ["input_ids"], ["logits"], to=TensorProto.FLOAT)], "no_past",
    [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "s"])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "s"])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]); m.ir_version = 8
open(sys.argv[1], "wb").write(m.SerializeToString())`, path.join(dir, 'no_past.onnx')]);
  const { Tessera } = await loadPackage();
  tsr = await Tessera.create();
});
after(() => { tsr.dispose(); fs.rmSync(dir, { recursive: true, force: true }); });

const load = async (p = file) => tsr.load(new Uint8Array(fs.readFileSync(p)), { name: path.basename(p) });

async function reference(opts) {
  const session = await lib.ortSession(ort, file);
  return (await ortGenerate(ort, session, prompt, opts)).ids;
}

test('greedy: 20 tokens equal onnxruntime-node\'s loop, from .onnx and .tsr', { skip: noOrt }, async () => {
  const ref = await reference({ maxNewTokens: 20, topK: 0 });
  const onnx = await load();
  assert.deepEqual(await onnx.generate(prompt, { maxNewTokens: 20 }), ref);
  const tsrModel = await tsr.load(onnx.save(), { name: 'decoder.tsr' });
  onnx.dispose();
  assert.deepEqual(await tsrModel.generate(prompt, { maxNewTokens: 20 }), ref);
  tsrModel.dispose();
});

test('top-k with a seed: the same ids run to run, the reference\'s splitmix64 draw; another seed differs', { skip: noOrt }, async () => {
  const model = await load();
  const opts = { maxNewTokens: 20, topK: 8, temperature: 0.9, seed: 42 };
  const a = await model.generate(prompt, opts);
  assert.deepEqual(await model.generate(prompt, { ...opts, seed: 42n }), a);
  assert.deepEqual(a, await reference(opts));
  assert.notDeepEqual(await model.generate(prompt, { ...opts, seed: 43 }), a);
  model.dispose();
});

test('onToken streams every id in order; false stops; stop ids end the loop', async () => {
  const model = await load();
  const all = await model.generate(prompt, { maxNewTokens: 12 });
  assert.equal(all.length, 12);
  const seen = [];
  const streamed = await model.generate(prompt, { maxNewTokens: 12 }, (id, i) => { seen.push([i, id]); });
  assert.deepEqual(streamed, all);
  assert.deepEqual(seen, all.map((id, i) => [i, id]));
  assert.deepEqual(await model.generate(prompt, { maxNewTokens: 12 }, async (id, i) => i < 4), all.slice(0, 5));
  const stop = all[6];
  assert.deepEqual(await model.generate(prompt, { maxNewTokens: 12, stop: [stop] }), all.slice(0, all.indexOf(stop) + 1));
  assert.deepEqual(await model.generate(prompt, { maxNewTokens: 0 }), []);
  model.dispose();
});

test('no wasm memory kept between generations (the output lists are freed)', async () => {
  const model = await load();
  await model.generate(prompt, { maxNewTokens: 16 });
  const heap = tsr.heapInUse();
  for (let i = 0; i < 4; i++) await model.generate(prompt, { maxNewTokens: 16 });
  // The plans' signature cache (8 entries, least recently used dropped) is rebuilt with each new
  // past length, so the heap moves by a few bytes from run to run (measured: +-32). A leaked output
  // list would keep a logits row (4 KB) or a present tensor per step: 64 steps here, far above 1 KiB.
  assert.ok(tsr.heapInUse() <= heap + 1024, `heap grew from ${heap} to ${tsr.heapInUse()} over 4 generations`);
  model.dispose();
});

test('errors: bad options and prompts are invalid_argument, a model without past inputs not_found', async () => {
  const model = await load();
  const bad = (p, o, re) => assert.rejects(model.generate(p, o), (e) => e.code === 'invalid_argument' && re.test(e.message));
  await bad([], {}, /promptIds must be a non-empty array/);
  await bad([1.5], {}, /promptIds/);
  await bad(prompt, { temperature: 0 }, /temperature is 0/);
  await bad(prompt, { topK: -1 }, /topK is -1/);
  await bad(prompt, { maxNewTokens: 2.5 }, /maxNewTokens/);
  await assert.rejects(model.generate(prompt, { presentPrefix: 'nope.', pastPrefix: 'past_key_values.' }),
    (e) => e.code === 'not_found' && /no present output "nope.0.key"/.test(e.message));
  await assert.rejects(model.generate([5000], {}),
    (e) => e.code === 'invalid_argument' && /^generate: step 0 \(past length 0\): /.test(e.message));
  model.dispose();
  const noPast = await load(path.join(dir, 'no_past.onnx'));
  await assert.rejects(noPast.generate(prompt), (e) => e.code === 'not_found' && /no past input "past_key_values\.\*"/.test(e.message));
  noPast.dispose();
});
