// Writes seeded inputs and onnxruntime-node's outputs for one model of models.json:
//   OUT/input_<k>.npy, OUT/ref_<i>.npy and OUT/ref.json ({model, inputs:[{name,file}],
//   outputs:[{name,file,dtype,shape}]}), outputs in the model's graph-output order.
// Usage: /usr/bin/node tests/models/gen_refs.js --model NAME --out DIR [--seed N]
//          [--manifest FILE (default models.json)] [--model-dir DIR (default lib.modelsDir())]
// Exit status: 0 written, 1 error (unknown model, missing file, onnxruntime failure).
'use strict';
const fs = require('fs');
const path = require('path');
const lib = require('./lib.js');

function arg(name, def) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

async function main() {
  const name = arg('model');
  const out = arg('out');
  const seed = Number(arg('seed', '1234'));
  if (!name || !out) throw new Error('usage: gen_refs.js --model NAME --out DIR [--seed N]');
  const model = lib.loadModels(arg('manifest')).find(m => m.name === name);
  if (!model) throw new Error('unknown model ' + name);
  const file = path.join(arg('model-dir', lib.modelsDir()), model.file);
  if (!fs.existsSync(file)) throw new Error('missing ' + file + ' (run third_party/models/fetch.sh)');
  const ort = lib.loadOrt();
  fs.mkdirSync(out, { recursive: true });

  const inputs = lib.makeInputs(model, seed);
  const feeds = {};
  const ref = { model: name, onnx: file, seed, inputs: [], outputs: [] };
  inputs.forEach((t, k) => {
    const f = `input_${k}.npy`;
    lib.writeNpy(path.join(out, f), t.dtype, t.shape, t.data);
    feeds[t.name] = new ort.Tensor(t.dtype, t.data, t.shape);
    ref.inputs.push({ name: t.name, file: f });
  });
  const session = await lib.ortSession(ort, file);
  const result = await session.run(feeds);
  session.outputNames.forEach((oname, i) => {
    const t = result[oname];
    const f = `ref_${i}.npy`;
    lib.writeNpy(path.join(out, f), t.type, t.dims.map(Number), t.data);
    ref.outputs.push({ name: oname, file: f, dtype: t.type, shape: t.dims.map(Number) });
  });
  fs.writeFileSync(path.join(out, 'ref.json'), JSON.stringify(ref, null, 2) + '\n');
  console.log(`gen_refs: ${name}: ${ref.inputs.length} inputs, ${ref.outputs.length} outputs -> ${out}`);
}

main().catch(e => { console.error('gen_refs: ' + (e && e.message ? e.message : e)); process.exit(1); });
