// Training in tessera-web: the Trainer class over the wasm's tsrw_trainer_* C ABI
// (web/src/web_train.cpp, which runs the C++ tsr::Trainer of tessera/trainer.h). Made by
// Tessera.loadTrainer() and Tessera.prepareTraining() (tessera.mjs); types in tessera.d.ts.
import { TesseraError } from './errors.mjs';
import { Tensor } from './tensor.mjs';

function argError(message) { return new TesseraError('invalid_argument', message); }

const now = () => (globalThis.performance ?? Date).now();

// prepareTraining() spec keys -> their check; name, onProgress and logLevel are load()'s.
const kSpecKeys = ['loss', 'optimizer', 'learningRate', 'momentum', 'nesterov', 'weightDecay', 'beta1', 'beta2', 'epsilon',
  'trainable', 'frozen', 'name', 'onProgress', 'logLevel'];

/** @internal prepareTraining()'s spec, checked, with tsr::TrainingSpec's defaults filled in. */
export function trainingSpec(spec) {
  const what = 'prepareTraining()';
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) throw argError(`${what}: the spec must be an object`);
  for (const k of Object.keys(spec))
    if (!kSpecKeys.includes(k)) throw argError(`${what}: unknown option "${k}" (options: ${kSpecKeys.join(', ')})`);
  const str = (k, d) => {
    const v = spec[k] ?? d;
    if (typeof v !== 'string') throw argError(`${what}: ${k} must be a string, got ${typeof v}`);
    return v;
  };
  const num = (k, d) => {
    const v = spec[k] ?? d;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw argError(`${what}: ${k} must be a finite number, got ${v}`);
    return v;
  };
  const patterns = (k) => {
    const v = spec[k] ?? [];
    if (!Array.isArray(v) || !v.every((p) => typeof p === 'string')) throw argError(`${what}: ${k} must be an array of name patterns (strings)`);
    return v;
  };
  if (spec.nesterov !== undefined && typeof spec.nesterov !== 'boolean') throw argError(`${what}: nesterov must be a boolean`);
  return {
    loss: str('loss', 'softmax_cross_entropy'), optimizer: str('optimizer', 'adam'), learningRate: num('learningRate', 1e-3),
    momentum: num('momentum', 0), nesterov: spec.nesterov ?? false, weightDecay: num('weightDecay', 0),
    beta1: num('beta1', 0.9), beta2: num('beta2', 0.999), epsilon: num('epsilon', 1e-8),
    trainable: patterns('trainable'), frozen: patterns('frozen'),
  };
}

/** @internal The wasm call that makes a trainer: loads `bytes` as a training model (spec null) or
 *  prepares one from an inference model with `spec`. Returns the handle; throws the runtime's error. */
export function createTrainer(rt, m, bytes, name, threads, spec) {
  const owned = [];
  const str = (t) => { const p = rt._str(t); owned.push(p); return p; };
  // wasm32: pointers are 32-bit.
  const table = (ptrs) => {
    const t = m._malloc(4 * Math.max(1, ptrs.length));
    owned.push(t);
    new Uint32Array(rt._u8().buffer, t, ptrs.length).set(ptrs);
    return t;
  };
  let h;
  try {
    const p = m._malloc(Math.max(1, bytes.length));
    owned.push(p);
    rt._u8().set(bytes, p);
    if (!spec) {
      h = m._tsrw_trainer_load(p, bytes.length, str(name), threads);
    } else {
      const s = spec;
      h = m._tsrw_trainer_prepare(p, bytes.length, str(name), threads, str(s.loss), str(s.optimizer), s.learningRate,
        s.momentum, s.nesterov ? 1 : 0, s.weightDecay, s.beta1, s.beta2, s.epsilon,
        table(s.trainable.map(str)), s.trainable.length, table(s.frozen.map(str)), s.frozen.length);
    }
  } finally {
    for (const p of owned) m._free(p);
  }
  if (!h) rt._fail();
  return h;
}

/**
 * On-device training of one model (tsr::Trainer): optimizer steps, evaluation and inference with
 * the current weights, the learning rate, checkpoints and the export of the inference model.
 * Batches: {inputs, labels}; inputs {name: tensor} (each data input once) or [tensors] in
 * trainer.inputs order; labels a tensor (a typed array is a 1-D tensor: BigInt64Array class
 * indices for softmax_cross_entropy and nll). Tensors in any form model.run() takes.
 */
export class Trainer {
  #rt; #h; #log;

  constructor(rt, handle, info, log) {
    this.#rt = rt; this.#h = handle; this.#log = log;
    /** The data inputs [{name, dtype, shape}] (train_step's inputs before the labels). */
    this.inputs = info.inputs;
    /** The labels {name, dtype, shape}. */
    this.labels = info.labels;
    /** Names of the trainable weights. */
    this.weights = info.weights;
    /** Names of run()'s outputs (the "infer" signature's). */
    this.outputs = info.outputs;
  }

  #check() { if (!this.#h) throw argError('this trainer is disposed'); }

  /** [name, tensor] pairs of the data inputs in trainer order, from {name: t} or [t]. */
  #ordered(inputs, what) {
    const names = this.inputs.map((v) => v.name);
    const list = names.map((n) => `"${n}"`).join(', ');
    if (Array.isArray(inputs)) {
      if (inputs.length !== names.length) throw argError(`${what}: ${inputs.length} inputs given, the model takes ${names.length} (${list})`);
      return inputs.map((t, k) => [names[k], t]);
    }
    if (inputs === null || typeof inputs !== 'object') throw argError(`${what}: inputs must be {name: tensor} or an array of tensors`);
    for (const n of Object.keys(inputs))
      if (!names.includes(n)) throw new TesseraError('not_found', `${what}: the model has no input "${n}" (inputs: ${list})`);
    const missing = names.filter((n) => !(n in inputs));
    if (missing.length) throw argError(`${what}: input${missing.length > 1 ? 's' : ''} ${missing.map((n) => `"${n}"`).join(', ')} missing`);
    return names.map((n) => [n, inputs[n]]);
  }

  /** A TensorList of the batch: the inputs in order, then the labels (caller frees it). */
  #batch(batch, what) {
    if (batch === null || typeof batch !== 'object' || Array.isArray(batch)) throw argError(`${what}: expected {inputs, labels}`);
    if (batch.labels === undefined) throw argError(`${what}: no labels`);
    const labels = ArrayBuffer.isView(batch.labels) && !(batch.labels instanceof DataView) ? new Tensor(batch.labels) : batch.labels;
    return this.#rt._listOf([...this.#ordered(batch.inputs, what), [this.labels.name, labels]]);
  }

  /** One optimizer step on a batch (forward, loss, backward, update); resolves to the batch's loss
   *  before the update (NaN or infinite as computed). Errors name the bad input; nothing is updated then. */
  async step(batch) {
    this.#check();
    const rt = this.#rt, m = rt._core();
    const list = this.#batch(batch, 'step()');
    const out = m._malloc(8);
    const t0 = now();
    const rc = m._tsrw_trainer_step(this.#h, list, out);
    const loss = new Float64Array(rt._u8().buffer, out, 1)[0];
    m._free(out);
    m._tsrw_list_free(list);
    if (rc !== 0) rt._fail();
    if (this.#log.verbose) this.#log.print(`tessera: trainer "${this.#log.name}": step ${this.stepCount} in ${(now() - t0).toFixed(2)} ms, loss ${loss}`);
    return loss;
  }

  /** The loss and the prediction (the model's first output) on a batch; nothing is updated. */
  async eval(batch) {
    this.#check();
    const rt = this.#rt, m = rt._core();
    const list = this.#batch(batch, 'eval()');
    const out = m._tsrw_trainer_eval(this.#h, list);
    m._tsrw_list_free(list);
    if (!out) rt._fail();
    try {
      const r = rt._read(out);
      return { loss: r.loss.data[0], prediction: r.prediction };
    } finally {
      m._tsrw_list_free(out);
    }
  }

  /** Inference with the current weights: inputs {name: tensor} or [tensors]; resolves to
   *  {outputName: Tensor} as model.run(). */
  async run(inputs) {
    this.#check();
    const rt = this.#rt, m = rt._core();
    const list = rt._listOf(this.#ordered(inputs, 'run()'));
    const out = m._tsrw_trainer_infer(this.#h, list);
    m._tsrw_list_free(list);
    if (!out) rt._fail();
    try {
      return rt._read(out);
    } finally {
      m._tsrw_list_free(out);
    }
  }

  /** The learning rate of the next steps (float32). Setting a non-finite or negative rate throws
   *  invalid_argument. */
  get learningRate() { this.#check(); return this.#rt._core()._tsrw_trainer_lr(this.#h); }
  set learningRate(lr) {
    this.#check();
    if (typeof lr !== 'number') throw argError(`learningRate must be a number, got ${typeof lr}`);
    if (this.#rt._core()._tsrw_trainer_set_lr(this.#h, lr) !== 0) this.#rt._fail();
  }

  /** Optimizer steps done (continues from a loaded checkpoint's count). */
  get stepCount() { this.#check(); return this.#rt._core()._tsrw_trainer_step_count(this.#h); }

  /** The checkpoint (.tsr bytes): the training model with the current weights and optimizer
   *  state. loadTrainer() or load() of it continues bit-identically. */
  save() {
    this.#check();
    const b = this.#rt._core()._tsrw_trainer_checkpoint(this.#h);
    if (!b) this.#rt._fail();
    return this.#rt._takeBytes(b);
  }

  /** Loads a checkpoint of this training model (Uint8Array or ArrayBuffer): weights, optimizer
   *  state, step count and learning rate. invalid_argument naming the variables that do not
   *  match; nothing changes then. */
  load(checkpoint) {
    this.#check();
    const bytes = checkpoint instanceof ArrayBuffer ? new Uint8Array(checkpoint) : checkpoint;
    if (!(bytes instanceof Uint8Array)) throw argError('load(): the checkpoint must be a Uint8Array or an ArrayBuffer');
    const rt = this.#rt, m = rt._core();
    const p = m._malloc(Math.max(1, bytes.length));
    rt._u8().set(bytes, p);
    const name = rt._str('checkpoint');
    const rc = m._tsrw_trainer_load_checkpoint(this.#h, p, bytes.length, name);
    m._free(p); m._free(name);
    if (rc !== 0) rt._fail();
  }

  /** The inference model with the current weights (.tsr bytes, no training state): what
   *  `tessera export` writes; Tessera.load() and `tessera run` run it. */
  exportInference() {
    this.#check();
    const b = this.#rt._core()._tsrw_trainer_export(this.#h);
    if (!b) this.#rt._fail();
    return this.#rt._takeBytes(b);
  }

  /** Frees the trainer's wasm memory; using or disposing it again throws. */
  dispose() {
    this.#check();
    this.#rt._core()._tsrw_trainer_free(this.#h);
    this.#h = 0;
    this.#rt._forget(this);
  }
}
