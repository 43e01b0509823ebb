// Runs one ONNX model in onnxruntime-node (1 thread, CPU, all graph optimizations) on .npy inputs
// and writes its outputs as OUT/output_<i>.npy in graph-output order (tessera run's naming).
// Usage: /usr/bin/node tests/quantize/ort_run.js MODEL.onnx OUT_DIR NAME=FILE.npy...
'use strict';
const fs = require('fs');
const path = require('path');
const lib = require('../models/lib.js');

async function main() {
  const [model, out, ...specs] = process.argv.slice(2);
  if (!model || !out) throw new Error('usage: ort_run.js MODEL.onnx OUT_DIR NAME=FILE.npy...');
  const ort = lib.loadOrt();
  const feeds = {};
  for (const s of specs) {
    const eq = s.indexOf('=');
    const t = lib.readNpy(s.slice(eq + 1));
    feeds[s.slice(0, eq)] = new ort.Tensor(t.dtype, t.data, t.shape);
  }
  const session = await lib.ortSession(ort, model);
  const result = await session.run(feeds);
  fs.mkdirSync(out, { recursive: true });
  session.outputNames.forEach((name, i) => {
    const t = result[name];
    lib.writeNpy(path.join(out, `output_${i}.npy`), t.type, t.dims, t.data);
  });
}

main().catch(e => { console.error('ort_run.js: ' + (e.stack || e.message)); process.exit(1); });
