// Tessera.create({worker: true}): the runtime in a dedicated Worker (worker.mjs; a module Worker
// in a browser, worker_threads in node) behind the API of tessera.mjs, so that loads and runs
// never block the calling thread. The page keeps WorkerTessera and WorkerModel objects; every
// call is a message. Inputs are copied to the Worker (structured clone: the caller's arrays stay
// usable), unless run()'s options.transferInputs moves them; outputs are transferred back (no
// copy). Errors in the Worker arrive as TesseraError with the same code and message.
// Differences from the non-worker API (tessera.d.ts): heapInUse() and save() resolve (Promises),
// dispose() returns a Promise, trainers are unsupported, onToken's answers make a round trip.
import { TesseraError, argError } from './errors.mjs';
import { kIsNode, resolveUrl, readResponse } from './sources.mjs';
import { Tensor } from './tensor.mjs';

/** A value from the Worker (plain {type, dims, data} objects) as Tensors again. */
function revive(value) {
  if (Array.isArray(value)) return value.map(revive);
  if (value && typeof value === 'object' && typeof value.type === 'string' && Array.isArray(value.dims)) return Tensor._from(value.type, value.data, value.dims);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revive(v)]));
  return value;
}

/** Options without functions (they cannot cross to the Worker). */
function plain(options, what) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw argError(`${what}: options must be an object`);
  return Object.fromEntries(Object.entries(options).filter(([, v]) => typeof v !== 'function'));
}

/** A load() source or external-data file the Worker can read: bytes are copied; a relative URL
 *  is resolved here (against the page, or the working directory in node); a Response is read
 *  here (with onProgress). */
async function sendable(source, base, onProgress) {
  if (typeof Response === 'function' && source instanceof Response) return readResponse(source, source.url || 'Response', onProgress);
  if (typeof source === 'string' || source instanceof URL) return String(await resolveUrl(source, base));
  return source;
}

/** The Worker and its calls: call(op, args) resolves with the answer, events reach handlers. */
class Channel {
  #w; #calls = new Map(); #next = 1; #failure = null; #handlers = new Map();

  constructor(w) {
    this.#w = w;
    const onMessage = (msg) => this.#message(msg);
    const fail = (why) => this.#fail(new TesseraError('internal', `the tessera Worker (worker.mjs) ${why}`));
    if (kIsNode) {
      w.on('message', onMessage);
      w.on('error', (e) => fail(`failed: ${e.message}`));
      w.on('exit', (code) => fail(`exited (code ${code})`));
      w.unref();
    } else {
      w.onmessage = (e) => onMessage(e.data);
      w.onerror = (e) => { e.preventDefault?.(); fail(`failed: ${e.message ?? 'the module did not load'}`); };
      w.onmessageerror = () => fail('sent a message that could not be read');
    }
  }

  call(op, args, transfer = [], handler = null) {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#next++;
    if (handler) this.#handlers.set(id, handler);
    if (kIsNode && this.#calls.size === 0) this.#w.ref();  // node stays alive while a call is pending
    return new Promise((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      try {
        this.#w.postMessage({ id, op, args }, transfer);
      } catch (e) {  // DataCloneError: a value the Worker cannot receive
        this.#settle(id);
        reject(argError(`${op}(): cannot send the arguments to the Worker: ${e.message}`));
      }
    });
  }

  #settle(id) {
    const c = this.#calls.get(id);
    this.#calls.delete(id);
    this.#handlers.delete(id);
    if (kIsNode && this.#calls.size === 0) this.#w.unref();
    return c;
  }

  #message(msg) {
    if (msg.event) {
      const h = msg.event === 'log' ? this.#handlers.get('log') : this.#handlers.get(msg.id);
      // load()'s and generate()'s handlers keep the callback's error; a print that throws is ignored.
      let answer;
      try { answer = h?.(msg); } catch { answer = undefined; }
      Promise.resolve(answer).then((value) => { if (msg.reply !== undefined) this.#w.postMessage({ reply: msg.reply, value }); });
      return;
    }
    const c = this.#settle(msg.id);
    if (!c) return;
    if (msg.ok) c.resolve(msg.value);
    else c.reject(new TesseraError(msg.error.code, msg.error.message));
  }

  #fail(e) {
    this.#failure ??= e;
    for (const id of [...this.#calls.keys()]) this.#settle(id).reject(e);
  }

  onLog(fn) { this.#handlers.set('log', fn); }

  terminate() {
    this.#fail(argError('this Tessera instance is disposed'));
    this.#w.terminate();
  }
}

/** Starts the Worker and the runtime in it: Tessera.create({worker: true, ...options}). */
export async function createWorker(options) {
  const url = new URL('./worker.mjs', import.meta.url);
  let w;
  if (kIsNode) {
    const { Worker } = await import('node:worker_threads');
    w = new Worker(url);
  } else {
    if (typeof Worker !== 'function') throw new TesseraError('unsupported', 'create({worker: true}): Workers are not available in this context');
    w = new Worker(url, { type: 'module' });
  }
  const ch = new Channel(w);
  const print = options.print ?? ((s) => console.log(s)), printErr = options.printErr ?? ((s) => console.warn(s));
  ch.onLog((m) => (m.stream === 'print' ? print : printErr)(m.text));
  try {
    const info = await ch.call('create', [plain({ ...options, worker: false }, 'create()')]);
    return new WorkerTessera(ch, info);
  } catch (e) {
    ch.terminate();
    throw e;
  }
}

function noTrainer(what) {
  return new TesseraError('unsupported', `${what}: trainers do not run in a Worker (create({worker: true})); create the runtime without worker`);
}

/** The runtime in a Worker: Tessera's API, every method asynchronous. */
export class WorkerTessera {
  #ch; #disposed = false; #models = new Set();

  constructor(ch, info) {
    this.#ch = ch;
    this.worker = true;
    this.threads = info.threads;
    this.threadsFallback = info.threadsFallback;
    this.device = info.device;
    this.deviceFallback = info.deviceFallback;
  }

  #check() { if (this.#disposed) throw argError('this Tessera instance is disposed'); }

  /** @internal */ _call(op, args, transfer, handler) { this.#check(); return this.#ch.call(op, args, transfer, handler); }
  /** @internal */ _forget(model) { this.#models.delete(model); }

  /** As Tessera.load(); a Response is read on this thread, URLs and bytes (copied) in the Worker. */
  async load(source, options = {}) {
    this.#check();
    const o = plain(options, 'load()');
    if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw argError('load(): onProgress must be a function');
    const src = await sendable(source, undefined, options.onProgress);
    const base = typeof src === 'string' ? src : undefined;
    if (Array.isArray(options.externalData))
      o.externalData = await Promise.all(options.externalData.map(async (e) => (e && typeof e === 'object'
        ? { ...e, data: await sendable(e.data, base, options.onProgress) } : e)));
    o.progress = !!options.onProgress;
    // An error onProgress throws fails the load (after the Worker has loaded it: it is freed).
    let thrown = null;
    const handler = (m) => { try { options.onProgress?.(m.info); } catch (e) { thrown ??= { e }; } };
    const info = await this._call('load', [src, o], [], handler);
    const model = new WorkerModel(this, info);
    this.#models.add(model);
    if (!thrown) return model;
    await model.dispose();
    throw thrown.e;
  }

  /** Trainers are not proxied (their step-by-step API would be a message per call): unsupported. */
  async loadTrainer() { throw noTrainer('loadTrainer()'); }
  async prepareTraining() { throw noTrainer('prepareTraining()'); }

  /** As Tessera.script(); outputs and graph transferred back. */
  async script(source, options = {}) {
    const r = await this._call('script', [source, plain(options, 'script()')]);
    return { ...r, outputs: revive(r.outputs) };
  }

  /** As Tessera.heapInUse(), resolved. */
  async heapInUse() { return this._call('heapInUse', []); }

  /** Disposes every model, the runtime and the Worker; resolves when the Worker has freed them. */
  async dispose() {
    this.#check();
    const done = this.#ch.call('dispose', []);
    this.#disposed = true;
    for (const m of [...this.#models]) m._disposed();
    try { await done; } finally { this.#ch.terminate(); }
  }
}

/** A model loaded in the Worker: Model's API. placement, inputs, outputs, device are copied at load. */
export class WorkerModel {
  #rt; #h;

  constructor(rt, info) {
    this.#rt = rt; this.#h = info.handle;
    this.inputs = info.inputs;
    this.outputs = info.outputs;
    this.device = info.device;
    this.deviceFallback = info.deviceFallback;
    this.placement = info.placement;
  }

  #check() { if (!this.#h) throw argError('this model is disposed'); }

  /** @internal The runtime was disposed. */
  _disposed() { this.#h = 0; }

  /**
   * As Model.run(). The feeds are copied to the Worker (the caller's arrays stay usable), unless
   * options.transferInputs: then each input's ArrayBuffer is transferred (detached here: its
   * typed arrays read as empty afterwards), saving the copy. Outputs are transferred back.
   */
  async run(feeds, options = {}) {
    this.#check();
    const o = Array.isArray(options) ? { outputs: options } : plain(options ?? {}, 'run()');
    const transfer = new Set();
    if (o.transferInputs && feeds && typeof feeds === 'object')
      for (const t of Object.values(feeds)) if (ArrayBuffer.isView(t?.data) && t.data.buffer instanceof ArrayBuffer) transfer.add(t.data.buffer);
    delete o.transferInputs;
    const r = await this.#rt._call('run', [this.#h, feeds, o], [...transfer]);
    return o.checkAgainst !== undefined ? { outputs: revive(r.outputs), check: r.check } : revive(r);
  }

  /** As Model.generate(); onToken is called here, its answer (false stops) sent back. An error
   *  onToken throws stops the loop and is rethrown here, as is. */
  async generate(promptIds, options = {}, onToken = null) {
    this.#check();
    if (onToken !== null && typeof onToken !== 'function') throw argError('generate: onToken must be a function');
    let thrown = null;
    const handler = async (m) => {
      try { return await onToken?.(m.token, m.i); } catch (e) { thrown ??= { e }; return false; }
    };
    const ids = await this.#rt._call('generate', [this.#h, promptIds, plain(options, 'generate()'), !!onToken], [], handler);
    if (thrown) throw thrown.e;
    return ids;
  }

  /** As Model.save(), resolved (the bytes transferred). */
  async save() { this.#check(); return this.#rt._call('save', [this.#h]); }

  /** As Model.dispose(); resolves when the Worker has freed the model. */
  async dispose() {
    this.#check();
    const h = this.#h;
    this.#h = 0;
    this.#rt._forget(this);
    await this.#rt._call('disposeModel', [h]);
  }
}
