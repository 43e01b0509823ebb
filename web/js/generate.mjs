// model.generate()'s pieces: options, the loop's plan, sampling (tsr::generate, core/include/tessera/generate.h).
import { TesseraError, argError } from './errors.mjs';


const kMask64 = (1n << 64n) - 1n;

/** splitmix64, as generate.h specifies it: uniform() = (next() >> 11) * 2^-53, in [0, 1). */
export class SplitMix64 {
  #state;
  constructor(seed) { this.#state = BigInt.asUintN(64, BigInt(seed)); }
  uniform() {
    this.#state = (this.#state + 0x9E3779B97F4A7C15n) & kMask64;
    let z = this.#state;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & kMask64;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & kMask64;
    return Number((z ^ (z >> 31n)) >> 11n) * 2 ** -53;
  }
}

/** Validated generate() options with their defaults. */
export function generateOptions(o) {
  if (o === null || typeof o !== 'object') throw argError('generate(): options must be an object');
  const r = {
    maxNewTokens: o.maxNewTokens ?? 32, topK: o.topK ?? 0, temperature: o.temperature ?? 1, seed: o.seed ?? 0,
    stop: o.stop ?? [], inputIds: o.inputIds ?? 'input_ids', logits: o.logits ?? 'logits',
    pastPrefix: o.pastPrefix ?? '', presentPrefix: o.presentPrefix ?? '',
    attentionMask: o.attentionMask ?? 'attention_mask', positionIds: o.positionIds ?? 'position_ids',
  };
  if (!Number.isInteger(r.maxNewTokens) || r.maxNewTokens < 0) throw argError(`generate: maxNewTokens is ${r.maxNewTokens}, expected an integer >= 0`);
  if (!Number.isInteger(r.topK) || r.topK < 0) throw argError(`generate: topK is ${r.topK}, expected 0 (greedy) or an integer >= 1`);
  if (!(Number.isFinite(r.temperature) && r.temperature > 0)) throw argError(`generate: temperature is ${r.temperature}, expected a finite value > 0`);
  if (!(Number.isInteger(r.seed) && r.seed >= 0) && typeof r.seed !== 'bigint') throw argError('generate: seed must be a non-negative integer or a BigInt');
  if (!Array.isArray(r.stop) || !r.stop.every(Number.isInteger)) throw argError('generate: stop must be an array of token ids');
  return r;
}

/** Per model input, what the loop feeds ({role, name, dtype, empty shape | present index}); the logits index. */
export function planLoop(inputs, outputs, o) {
  let [past, present] = [o.pastPrefix, o.presentPrefix];
  if (!past && !present) {
    [past, present] = [['past_key_values.', 'present.'], ['past_', 'present_']]
      .find(([p]) => inputs.some((i) => i.name.startsWith(p))) ?? ['past_key_values.', 'present.'];
  }
  const names = (vs) => vs.map((v) => v.name).join(', ');
  const isInt = (i) => i.dtype === 'int64' || i.dtype === 'int32';
  const feeds = inputs.map((i) => {
    const where = `generate: input "${i.name}"`;
    if (i.name === o.inputIds || i.name === o.attentionMask || i.name === o.positionIds) {
      if (!isInt(i)) throw argError(`${where}: dtype ${i.dtype}, expected int64 or int32`);
      return { role: i.name === o.inputIds ? 'ids' : i.name === o.attentionMask ? 'mask' : 'positions', name: i.name, dtype: i.dtype };
    }
    if (!past || !i.name.startsWith(past)) {
      throw argError(`generate: cannot feed model input "${i.name}" (the loop feeds ${o.inputIds}, ${past}*, ${o.attentionMask} and ${o.positionIds})`);
    }
    const pname = present + i.name.slice(past.length);
    const k = outputs.findIndex((v) => v.name === pname);
    if (k < 0) throw new TesseraError('not_found', `generate: past input "${i.name}" has no present output "${pname}" (outputs: ${names(outputs)})`);
    if (i.dtype !== 'float32' && i.dtype !== 'float16') throw argError(`${where}: dtype ${i.dtype}, expected float32 or float16`);
    if (!i.shape || i.shape.length === 0) throw argError(`${where}: expected a tensor of known rank >= 1`);
    // Batch 1, the one dynamic dim after it (the sequence axis) 0.
    const empty = i.shape.map((d, a) => (a === 0 ? 1 : typeof d === 'number' ? d : 0));
    if (i.shape.slice(1).filter((d) => typeof d !== 'number').length !== 1)
      throw argError(`${where}: expected exactly one dynamic dim after the batch (the sequence axis)`);
    return { role: 'past', name: i.name, dtype: i.dtype, empty, present: k };
  });
  if (!feeds.some((f) => f.role === 'ids')) throw new TesseraError('not_found', `generate: the model has no input "${o.inputIds}" (inputs: ${names(inputs)})`);
  if (!feeds.some((f) => f.role === 'past'))
    throw new TesseraError('not_found', `generate: the model has no past input "${past}*" (inputs: ${names(inputs)}); set options.pastPrefix and presentPrefix`);
  const logits = outputs.findIndex((v) => v.name === o.logits);
  if (logits < 0) throw new TesseraError('not_found', `generate: the model has no output "${o.logits}" (outputs: ${names(outputs)})`);
  return { feeds, logits };
}

/** IEEE binary16 bits -> number. */
export function f16(h) {
  const e = (h >> 10) & 31, f = h & 1023, s = h & 0x8000 ? -1 : 1;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** The token chosen from one row of logits: generate.h's greedy / top-k rule. */
export function chooseToken(row, o, rng, step) {
  for (let i = 0; i < row.length; i++) if (Number.isNaN(row[i])) throw argError(`generate: step ${step}: logit of token ${i} is NaN`);
  if (o.topK === 0) {
    let best = 0;
    for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
    return best;
  }
  const k = Math.min(o.topK, row.length);
  const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
  const weights = order.map((t) => Math.exp((row[t] - row[order[0]]) / o.temperature));
  const target = rng.uniform() * weights.reduce((a, b) => a + b, 0);
  let running = 0;
  for (let i = 0; i < k; i++) if ((running += weights[i]) > target) return order[i];
  return order[k - 1];
}
