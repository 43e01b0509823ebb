// Runs one model on onnxruntime-node (CPU EP, one thread) for a list of input sets and prints the
// first output (a scalar loss) of each: the forward evaluations of check_train_grad.py's finite
// differences. DIR/evals.json: {"model": FILE, "base": {name: npy}, "evals": [{name: npy}, ...]};
// each evaluation feeds base with its own files replacing those inputs. Writes DIR/losses.json
// ([loss, ...], as doubles of the f32 results).
// Usage: /usr/bin/node tests/transformers/loss_evals.js DIR      Exit 1 on any error.
'use strict';
const fs = require('fs');
const path = require('path');
const lib = require('../models/lib.js');

async function main() {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: loss_evals.js DIR');
  const ort = lib.loadOrt();
  const spec = JSON.parse(fs.readFileSync(path.join(dir, 'evals.json'), 'utf8'));
  const tensor = file => {
    const t = lib.readNpy(path.join(dir, file));
    return new ort.Tensor(t.dtype, t.data, t.shape);
  };
  const base = {};
  for (const [name, file] of Object.entries(spec.base)) base[name] = tensor(file);
  const session = await lib.ortSession(ort, path.join(dir, spec.model));
  const losses = [];
  for (const ev of spec.evals) {
    const feeds = Object.assign({}, base);
    for (const [name, file] of Object.entries(ev)) feeds[name] = tensor(file);
    const result = await session.run(feeds);
    losses.push(Number(result[session.outputNames[0]].data[0]));
  }
  fs.writeFileSync(path.join(dir, 'losses.json'), JSON.stringify(losses) + '\n');
  console.log(`loss_evals: ${losses.length} evaluations`);
}

main().catch(e => { console.error('loss_evals: ' + (e && e.message ? e.message : e)); process.exit(1); });
