// Streaming reference for Silero VAD: 100 consecutive 32 ms chunks (512 samples at 16 kHz) of a
// seeded synthetic signal (noise, then a voiced-like harmonic burst, then noise), run through
// onnxruntime-node one chunk at a time with the LSTM state (hn, cn) fed back, as a VAD is used.
// Writes OUT/audio.npy [100, 512], OUT/prob.npy [100, 1] (the per-chunk output), OUT/hn.npy and
// OUT/cn.npy (final state). Usage: /usr/bin/node tests/models/gen_stream_refs.js --out DIR
'use strict';
const fs = require('fs');
const path = require('path');
const lib = require('./lib.js');

const kChunks = 100, kChunk = 512, kRate = 16000;

async function main() {
  const i = process.argv.indexOf('--out');
  if (i < 0) throw new Error('usage: gen_stream_refs.js --out DIR');
  const out = process.argv[i + 1];
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(lib.modelsDir(), 'silero_vad_legacy.onnx');
  if (!fs.existsSync(file)) throw new Error('missing ' + file);
  const ort = lib.loadOrt();
  const rand = lib.mulberry32(77);
  const audio = new Float32Array(kChunks * kChunk);
  for (let n = 0; n < audio.length; ++n) {
    const t = n / kRate;
    const voiced = n >= 30 * kChunk && n < 70 * kChunk;
    // A 140 Hz glottal-like harmonic stack with a 4 Hz amplitude envelope while "voiced".
    let v = 0;
    if (voiced) for (let h = 1; h <= 8; ++h) v += Math.sin(2 * Math.PI * 140 * h * t) / h;
    const env = voiced ? 0.25 * (0.6 + 0.4 * Math.sin(2 * Math.PI * 4 * t)) : 0;
    audio[n] = env * v + 0.01 * (2 * rand() - 1);
  }
  const session = await lib.ortSession(ort, file);
  let h = new Float32Array(2 * 64), c = new Float32Array(2 * 64);
  const prob = new Float32Array(kChunks);
  for (let k = 0; k < kChunks; ++k) {
    const feeds = {
      input: new ort.Tensor('float32', audio.slice(k * kChunk, (k + 1) * kChunk), [1, kChunk]),
      sr: new ort.Tensor('int64', BigInt64Array.from([BigInt(kRate)]), []),
      h: new ort.Tensor('float32', h, [2, 1, 64]),
      c: new ort.Tensor('float32', c, [2, 1, 64]),
    };
    const r = await session.run(feeds);
    prob[k] = r.output.data[0];
    h = Float32Array.from(r.hn.data);
    c = Float32Array.from(r.cn.data);
  }
  lib.writeNpy(path.join(out, 'audio.npy'), 'float32', [kChunks, kChunk], audio);
  lib.writeNpy(path.join(out, 'prob.npy'), 'float32', [kChunks, 1], prob);
  lib.writeNpy(path.join(out, 'hn.npy'), 'float32', [2, 1, 64], h);
  lib.writeNpy(path.join(out, 'cn.npy'), 'float32', [2, 1, 64], c);
  console.log(`silero stream refs: ${kChunks} chunks, speech prob min ${Math.min(...prob).toFixed(3)} max ${Math.max(...prob).toFixed(3)}`);
}

main().catch(e => { console.error('gen_stream_refs.js: ' + e.message); process.exit(1); });
