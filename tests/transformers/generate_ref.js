// The reference KV-cache loop of tsr::generate (core/include/tessera/generate.h), written on
// onnxruntime-node 1.30 (CPU EP, one thread): step 0 feeds the prompt with empty past tensors
// [1, heads, 0, head_dim], each later step the last token with the previous step's present.*
// outputs as past_key_values.*; the token is the argmax of the last logits row (lowest id on
// ties) or, with --top-k, a draw among the top k with the splitmix64 stream the header specifies.
//
// Usage: node tests/transformers/generate_ref.js MODEL.onnx --prompt-ids 1,2,3 --max-new-tokens N
//          [--top-k K --temperature T --seed S] [--stop ID] [--repeat R]
// Prints the ids on one line, then "decode X tokens/s" (the best of --repeat runs, first token
// excluded) on the next. Exit 1 on any error.
'use strict';
const path = require('path');
const lib = require('../models/lib.js');

const kMask64 = (1n << 64n) - 1n;

/** splitmix64: next() -> BigInt in [0, 2^64); uniform() -> (next() >> 11) * 2^-53. */
function splitmix64(seed) {
  let state = BigInt.asUintN(64, BigInt(seed));
  const next = () => {
    state = (state + 0x9E3779B97F4A7C15n) & kMask64;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & kMask64;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & kMask64;
    return z ^ (z >> 31n);
  };
  return { next, uniform: () => Number(next() >> 11n) * 2 ** -53 };
}

/** The token from the last row of a logits tensor (Float32Array data, last dim vocab). */
function choose(logits, vocab, opts, rng) {
  const row = logits.subarray(logits.length - vocab);
  if (!opts.topK) {
    let best = 0;
    for (let i = 1; i < vocab; i++) if (row[i] > row[best]) best = i;
    return best;
  }
  const order = Array.from({ length: vocab }, (_, i) => i).sort((a, b) => row[b] - row[a] || a - b);
  const k = Math.min(opts.topK, vocab);
  const top = row[order[0]];
  let total = 0;
  for (let i = 0; i < k; i++) total += Math.exp((row[order[i]] - top) / opts.temperature);
  const target = rng.uniform() * total;
  let running = 0;
  for (let i = 0; i < k; i++) {
    running += Math.exp((row[order[i]] - top) / opts.temperature);
    if (running > target) return order[i];
  }
  return order[k - 1];
}

/**
 * Runs the loop on an onnxruntime InferenceSession. opts: {maxNewTokens, topK (0 greedy),
 * temperature, seed, stop: [ids]}. Returns {ids, firstMs, totalMs}.
 */
async function ortGenerate(ort, session, prompt, opts) {
  const rng = splitmix64(opts.seed ?? 0);
  const pasts = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = Object.fromEntries((session.inputMetadata ?? []).map((m) => [m.name, m]));
  const feeds = {};
  for (const n of pasts) {
    const dims = meta[n].shape.map((d, i) => (i === 0 ? 1 : typeof d === 'number' ? d : 0));
    feeds[n] = new ort.Tensor('float32', new Float32Array(0), dims);
  }
  const ids = [];
  const t0 = performance.now();
  let first = t0;
  let step = prompt;
  while (ids.length < opts.maxNewTokens) {
    feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(step.map(BigInt)), [1, step.length]);
    const out = await session.run(feeds);
    const logits = out.logits;
    const token = choose(logits.data, Number(logits.dims[logits.dims.length - 1]), opts, rng);
    for (const n of pasts) feeds[n] = out['present.' + n.slice('past_key_values.'.length)];
    ids.push(token);
    if (ids.length === 1) first = performance.now();
    if ((opts.stop ?? []).includes(token)) break;
    step = [token];
  }
  return { ids, firstMs: first - t0, totalMs: performance.now() - t0 };
}

function parseArgs(argv) {
  const o = { model: null, prompt: null, maxNewTokens: 32, topK: 0, temperature: 1, seed: 0, stop: [], repeat: 1 };
  const ints = (s) => s.split(',').map((x) => parseInt(x, 10));
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--prompt-ids') o.prompt = ints(v());
    else if (a === '--max-new-tokens') o.maxNewTokens = parseInt(v(), 10);
    else if (a === '--top-k') o.topK = parseInt(v(), 10);
    else if (a === '--temperature') o.temperature = parseFloat(v());
    else if (a === '--seed') o.seed = parseInt(v(), 10);
    else if (a === '--stop') o.stop.push(...ints(v()));
    else if (a === '--repeat') o.repeat = parseInt(v(), 10);
    else if (!o.model && !a.startsWith('--')) o.model = a;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.model || !o.prompt) throw new Error('usage: generate_ref.js MODEL --prompt-ids 1,2,3 [--max-new-tokens N ...]');
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ort = lib.loadOrt();
  const session = await lib.ortSession(ort, path.resolve(o.model));
  let best = null;
  for (let r = 0; r < o.repeat; r++) {
    const res = await ortGenerate(ort, session, o.prompt, o);
    if (best && res.ids.join() !== best.ids.join()) throw new Error('runs disagree');
    if (!best || res.totalMs - res.firstMs < best.totalMs - best.firstMs) best = res;
  }
  console.log(best.ids.join(' '));
  const decode = best.ids.length > 1 ? ((best.ids.length - 1) * 1000) / (best.totalMs - best.firstMs) : 0;
  console.log(`first token ${best.firstMs.toFixed(1)} ms, decode ${decode.toFixed(1)} tokens/s, ` +
              `${((best.ids.length * 1000) / best.totalMs).toFixed(1)} tokens/s overall`);
}

if (require.main === module) main().catch((e) => { console.error('generate_ref: ' + (e && e.message ? e.message : e)); process.exit(1); });
module.exports = { ortGenerate, splitmix64, choose };
