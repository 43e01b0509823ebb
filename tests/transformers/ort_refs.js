// Writes onnxruntime-node's outputs for every case of a cases.json (tests/transformers/cases.py):
//   DIR/<case>/ref_<i>.npy and DIR/<case>/ref.json ({model, inputs, outputs:[{name,file,dtype,shape}]}),
// the layout tests/models/compare.py reads. CPU EP, one thread, all graph optimizations.
// Usage: /usr/bin/node tests/transformers/ort_refs.js DIR
// Exit status: 0 all written; 1 when onnxruntime rejects or fails a case (each one is printed).
'use strict';
const fs = require('fs');
const path = require('path');
const lib = require('../models/lib.js');

async function main() {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: ort_refs.js DIR');
  const ort = lib.loadOrt();
  const cases = JSON.parse(fs.readFileSync(path.join(dir, 'cases.json'), 'utf8'));
  let failed = 0;
  for (const c of cases) {
    const cdir = path.join(dir, c.name);
    try {
      const feeds = {};
      const ref = { model: c.name, inputs: c.inputs, outputs: [] };
      for (const i of c.inputs) {
        const t = lib.readNpy(path.join(cdir, i.file));
        feeds[i.name] = new ort.Tensor(t.dtype, t.data, t.shape);
      }
      const session = await lib.ortSession(ort, path.join(dir, c.onnx));
      const result = await session.run(feeds);
      session.outputNames.forEach((oname, k) => {
        const t = result[oname];
        const f = `ref_${k}.npy`;
        lib.writeNpy(path.join(cdir, f), t.type, t.dims.map(Number), t.data);
        ref.outputs.push({ name: oname, file: f, dtype: t.type, shape: t.dims.map(Number) });
      });
      fs.writeFileSync(path.join(cdir, 'ref.json'), JSON.stringify(ref, null, 1) + '\n');
    } catch (e) {
      failed++;
      console.error(`ort_refs: ${c.name}: ${e && e.message ? e.message : e}`);
    }
  }
  console.log(`ort_refs: ${cases.length - failed} of ${cases.length} cases written`);
  if (failed) process.exit(1);
}

main().catch(e => { console.error('ort_refs: ' + (e && e.message ? e.message : e)); process.exit(1); });
