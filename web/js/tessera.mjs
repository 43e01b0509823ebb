// Tessera in the browser and in node >= 18: the JS API over the wasm's C ABI (web/src/web_api.h).
// Types and the contract: tessera.d.ts. Errors are TesseraError with .code and the runtime's
// path-addressed message (the same text the `tessera` CLI prints).
// Two builds of the same runtime: tessera.wasm (one thread, runs anywhere) and
// tessera-threads.wasm (pthreads on Workers over a SharedArrayBuffer: node, or a cross-origin
// isolated page), chosen by create({threads}).

import { Trainer, trainingSpec, createTrainer } from './trainer.mjs';
import { TesseraError, argError, kCode } from './errors.mjs';
import { kIsNode, now, readSource } from './sources.mjs';
import { Tensor, kDTypeName, kDTypeCode, kArray, kModes, jsDTypes, logLevelIndex, kVerbose, kInfo, kWarning, checkDims, tensorFields, valueInfo, describe } from './tensor.mjs';
import { Model } from './model.mjs';

export { TesseraError, Tensor, Model };


async function readWasm(url) {
  if (kIsNode && url.protocol === 'file:') {
    const fs = await import('node:fs/promises');
    return new Uint8Array(await fs.readFile(url));
  }
  const r = await fetch(url);
  if (!r.ok) throw new TesseraError('not_found', `${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/**
 * Why tessera-threads.wasm cannot run here, or null when it can: it needs SharedArrayBuffer and
 * shared WebAssembly memory, which browsers give only to cross-origin isolated pages (served with
 * Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp), and
 * Workers for its threads.
 */
function threadsUnavailable() {
  const headers = 'serve the page with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp';
  if (!kIsNode && globalThis.crossOriginIsolated !== true) return `the page is not cross-origin isolated (${headers})`;
  if (typeof SharedArrayBuffer !== 'function') return 'SharedArrayBuffer is not available';
  if (!kIsNode && typeof Worker !== 'function') return 'Workers are not available in this context';
  try {
    new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
  } catch {
    return 'this WebAssembly engine has no shared memory (threads)';
  }
  return null;
}

/** options.freeDimensions {name: size} -> [[name, size]], checked. */
function freeDimensionList(dims) {
  if (dims === undefined) return [];
  if (dims === null || typeof dims !== 'object' || Array.isArray(dims)) throw argError('load(): freeDimensions must be an object {dimName: size}');
  const list = Object.entries(dims);
  for (const [n, v] of list)
    if (!Number.isInteger(v) || v < 0) throw argError(`load(): freeDimensions.${n} is ${v}, expected an integer >= 0`);
  return list;
}


/** The runtime: one wasm instance. Create with `await Tessera.create()`. */
export class Tessera {
  #m; #threads; #u8 = null; #models = new Set(); #loading = new Set(); #pending = new Set(); #disposed = false;
  #log; #gpu = null; #gpuLayer = null;

  constructor(core, threads, fallback, log) {
    this.#m = core; this.#threads = threads; this.#log = log;
    /** Why `threads > 1` runs on one thread (tessera.wasm), or null. */
    this.threadsFallback = fallback;
    /** Where models run: 'webgpu' (WebGPU with per-node wasm fallback) or 'wasm'. */
    this.device = 'wasm';
    /** Why create({device: 'auto'}) runs on wasm (no navigator.gpu, no adapter, ...), or null. */
    this.deviceFallback = null;
  }

  /** Intra-op threads the models run with: options.threads, or 1 after a fallback. */
  get threads() { return this.#threads; }

  /**
   * options.threads: intra-op threads per model (default 1). 1 runs tessera.wasm; more runs
   * tessera-threads.wasm where threads are available (see threadsUnavailable), else falls back to
   * tessera.wasm on one thread with a warning through printErr (tsr.threads is then 1 and
   * tsr.threadsFallback says why).
   * options.wasmUrl / options.threadsWasmUrl: where tessera.wasm / tessera-threads.wasm are
   * (default: beside this module; the loaders and the pthread Worker script always are).
   * options.device: 'wasm' (default), 'webgpu' (models run on the GPU through WebGPU, nodes the
   * GPU layer lacks on wasm; throws unsupported when WebGPU has no adapter here) or 'auto'
   * (WebGPU where an adapter exists, else wasm with tsr.deviceFallback saying why).
   * options.worker: true runs the runtime (with the options above) in a dedicated Worker
   * (proxy.mjs, worker.mjs): resolves to a WorkerTessera with this API, every call a message.
   */
  static async create(options = {}) {
    if (options.worker !== undefined && options.worker !== false) {
      if (options.worker !== true) throw argError(`worker must be true or false, got ${JSON.stringify(options.worker)}`);
      const { createWorker } = await import('./proxy.mjs');  // loaded only when asked for
      return createWorker(options);
    }
    const requested = options.threads ?? 1;
    if (!Number.isInteger(requested) || requested < 1) throw argError(`threads must be a positive integer, got ${requested}`);
    const device = options.device ?? 'wasm';
    if (!['wasm', 'webgpu', 'auto'].includes(device)) throw argError(`device must be 'wasm', 'webgpu' or 'auto', got ${JSON.stringify(device)}`);
    // The WebGPU layer loads only when asked for.
    const layer = device === 'wasm' ? null : await import('./webgpu.mjs');
    const opened = layer ? await layer.openWebGpu() : null;
    if (device === 'webgpu' && !opened.gpu) throw new TesseraError('unsupported', `device 'webgpu': ${opened.reason}`);
    const level = logLevelIndex(options.logLevel, 'create()');
    const print = options.print ?? ((s) => console.log(s)), printErr = options.printErr ?? ((s) => console.warn(s));
    // The runtime's own stderr: warnings, shown at 'warning' and below.
    const init = { print, printErr: (s) => { if (level <= kWarning) printErr(s); } };
    const fallback = requested > 1 ? threadsUnavailable() : null;
    if (fallback) init.printErr(`tessera: threads: ${requested} runs on 1 thread (tessera.wasm): ${fallback}`);
    const threads = fallback ? 1 : requested;
    const threaded = threads > 1;
    const given = threaded ? options.threadsWasmUrl : options.wasmUrl;
    const url = new URL(given ?? (threaded ? './tessera-threads.wasm' : './tessera.wasm'), import.meta.url);
    // A failed fetch/compile of the wasm rejects create() (Emscripten would wait for `done` forever).
    let failStart = null;
    const startFailed = new Promise((_, reject) => { failStart = reject; });
    if (kIsNode || typeof WebAssembly.instantiateStreaming !== 'function') {
      init.wasmBinary = await readWasm(url);
    } else {
      init.instantiateWasm = (imports, done) => {
        WebAssembly.instantiateStreaming(fetch(url), imports).then((r) => done(r.instance, r.module),
          (e) => failStart(new TesseraError('not_found', `${url}: ${e.message}`)));
        return {};
      };
    }
    if (threaded && kIsNode) init.nodeRequire = (await import('node:module')).createRequire(import.meta.url);
    const { default: createCore } = threaded ? await import('./tessera-threads-core.mjs') : await import('./tessera-core.mjs');
    const rt = new Tessera(await Promise.race([createCore(init), startFailed]), threads, fallback, { level, print, printErr });
    if (threaded) await rt.#reserveWorkers();
    if (opened?.gpu) [rt.#gpu, rt.#gpuLayer, rt.device] = [opened.gpu, layer, 'webgpu'];
    else if (opened) rt.deviceFallback = opened.reason;
    if (level <= kInfo) print(`tessera: ${threaded ? 'tessera-threads.wasm' : 'tessera.wasm'}, ${threads} thread${threads > 1 ? 's' : ''} per model` +
      (rt.#gpu ? `; WebGPU (${rt.#gpu.info.vendor} ${rt.#gpu.info.architecture})` : opened ? `; wasm (WebGPU unavailable: ${opened.reason})` : ''));
    return rt;
  }

  /**
   * tessera-threads.wasm: whether threads - 1 idle pthread Workers exist and all of them have
   * loaded the module, so that a wasm call can start a model's threads at once. Emscripten starts
   * a pthread on the last idle Worker synchronously only when that Worker is loaded; on a Worker it
   * has to create (or one still loading) the thread starts after the event loop has delivered the
   * Worker's 'loaded' message, and a caller that blocks on the thread before then (joining it on
   * dispose) deadlocks. Disposing a model joins its threads, which gives their Workers back.
   */
  #workersReady() {
    const idle = this.#m.PThread.unusedWorkers;
    return idle.length >= this.#threads - 1 && idle.every((w) => w.loaded);
  }

  /** Adds and loads Workers until #workersReady() (a concurrent load() may take them again before
   *  its caller resumes: callers check #workersReady() again without awaiting in between). */
  async #reserveWorkers() {
    const P = this.#m.PThread;
    while (!this.#workersReady()) {
      for (let i = P.unusedWorkers.length; i < this.#threads - 1; i++) this.#loadWorker(P);
      if (this.#loading.size === 0) throw new TesseraError('internal', 'an idle pthread Worker is not loaded and none is loading');
      await Promise.all(this.#loading);
      this.#check();
    }
  }

  /** A new idle Worker loading the module. In node it does not keep the process alive once loaded. */
  #loadWorker(P) {
    P.allocateUnusedWorker();
    const w = P.unusedWorkers[P.unusedWorkers.length - 1];
    const loading = new Promise((resolve, reject) => {
      const done = (e) => {
        this.#pending.delete(done);
        this.#loading.delete(loading);
        if (!e) {
          if (kIsNode) w.unref();
          resolve();
          return;
        }
        const i = P.unusedWorkers.indexOf(w);
        if (i >= 0) P.unusedWorkers.splice(i, 1);
        w.terminate();
        reject(e);
      };
      this.#pending.add(done);
      P.loadWasmModuleToWorker(w, () => done());
      // Replaces Emscripten's handler, which rethrows (in node: an uncaught exception).
      w.onerror = (e) => done(new TesseraError('internal', `a pthread Worker (tessera-threads-core.worker.js) failed: ${e.message ?? e}`));
    });
    this.#loading.add(loading);
  }

  /** @internal The wasm memory as bytes. In tessera-threads.wasm a pthread that grows the memory
   *  leaves the loader's HEAPU8 on the old buffer, so views come from the memory itself. */
  _u8() {
    const m = this.#m;
    const buf = m.wasmMemory ? m.wasmMemory.buffer : m.HEAPU8.buffer;
    if (this.#u8?.buffer !== buf) this.#u8 = new Uint8Array(buf);
    return this.#u8;
  }

  #check() { if (this.#disposed) throw argError('this Tessera instance is disposed'); }

  /** @internal */ _core() { this.#check(); return this.#m; }
  /** @internal */ _forget(model) { this.#models.delete(model); }

  /** Throws the runtime's last error. */
  /** @internal */ _fail() {
    const m = this.#m;
    throw new TesseraError(kCode[m._tsrw_last_error_code()] ?? 'internal', jsDTypes(m.UTF8ToString(m._tsrw_last_error_message())));
  }

  /** @internal Copies a string into the heap (caller frees). */
  _str(s) {
    const m = this.#m;
    const n = m.lengthBytesUTF8(s) + 1;
    const p = m._malloc(n);
    m.stringToUTF8(s, p, n);
    return p;
  }

  /** @internal Takes a Bytes handle: a copy of its bytes, then frees it. */
  _takeBytes(h) {
    const m = this.#m;
    const out = this._u8().slice(m._tsrw_bytes_data(h), m._tsrw_bytes_data(h) + m._tsrw_bytes_size(h));
    m._tsrw_bytes_free(h);
    return out;
  }

  /** @internal A TensorList from {name: Tensor | {type, dims, data} | {dtype, shape, data}} (caller frees it). */
  _list(feeds, what) {
    if (feeds === null || typeof feeds !== 'object') throw argError(`${what} must be an object {name: Tensor}`);
    return this._listOf(Object.entries(feeds));
  }

  /** @internal A TensorList from [name, tensor] pairs, in that order (caller frees it). */
  _listOf(entries) {
    const m = this.#m;
    const list = m._tsrw_list_new();
    try {
      for (const [name, t] of entries) {
        const where = `input "${name}"`;
        const [type, dims, data] = tensorFields(t, where);
        if (type === 'string') {
          this._addStrings(list, name, { shape: dims, data });
          continue;
        }
        const code = kDTypeCode[type];
        if (code === undefined)
          throw argError(`${where}: type ${JSON.stringify(type)} is not one of string, ${Object.keys(kArray).join(', ')}`);
        const Ctor = kArray[type];
        if (!(data instanceof Ctor)) throw argError(`${where}: type ${type} needs a ${Ctor.name} as data`);
        checkDims(dims, where);
        const np = this._str(name);
        const dimsPtr = m._malloc(8 * Math.max(1, dims.length));
        const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
        const dataPtr = m._malloc(Math.max(1, bytes.length));
        new Float64Array(this._u8().buffer, dimsPtr, dims.length).set(dims);
        this._u8().set(bytes, dataPtr);
        const rc = m._tsrw_list_add(list, np, code, dimsPtr, dims.length, dataPtr, bytes.length);
        m._free(np); m._free(dimsPtr); m._free(dataPtr);
        if (rc !== 0) this._fail();
      }
    } catch (e) {
      m._tsrw_list_free(list);
      throw e;
    }
    return list;
  }

  /** @internal Appends {shape, data: string[]} (a string tensor) to a TensorList. */
  _addStrings(list, name, t) {
    const where = `input "${name}"`;
    if (!Array.isArray(t.data) || !t.data.every((v) => typeof v === 'string'))
      throw argError(`${where}: type string needs an array of strings as data`);
    checkDims(t.shape, where);
    const m = this.#m;
    const enc = new TextEncoder();
    const n = t.data.length;
    const ptrs = m._malloc(4 * Math.max(1, n));
    const sizes = m._malloc(4 * Math.max(1, n));
    const dims = m._malloc(8 * Math.max(1, t.shape.length));
    const np = this._str(name);
    const owned = [];
    try {
      new Float64Array(this._u8().buffer, dims, t.shape.length).set(t.shape);
      for (let k = 0; k < n; k++) {
        const bytes = enc.encode(t.data[k]);
        const p = m._malloc(Math.max(1, bytes.length));
        owned.push(p);
        const u8 = this._u8();
        u8.set(bytes, p);
        // wasm32: pointers and size_t are 32-bit.
        new Uint32Array(u8.buffer, ptrs, n)[k] = p;
        new Uint32Array(u8.buffer, sizes, n)[k] = bytes.length;
      }
      if (m._tsrw_list_add_strings(list, np, dims, t.shape.length, ptrs, sizes, n) !== 0) this._fail();
    } finally {
      for (const p of owned) m._free(p);
      m._free(ptrs); m._free(sizes); m._free(dims); m._free(np);
    }
  }

  /**
   * @internal {name: value} copied out of a TensorList (not freed here). A tensor is a Tensor
   * (data a string[] for type string), a sequence an array of tensors, an
   * empty optional null.
   */
  _read(list) {
    const m = this.#m;
    const out = {};
    const n = m._tsrw_list_size(list);
    for (let i = 0; i < n; i++) out[m.UTF8ToString(m._tsrw_list_name(list, i))] = this._readValue(list, i);
    return out;
  }

  /** @internal Entry i of a TensorList as a JS value (see _read). */
  _readValue(list, i) {
    const m = this.#m;
    const code = m._tsrw_list_dtype(list, i);
    if (code === -2) return null;  // ValueKind::kNone: an empty optional
    if (code === -1) {  // ValueKind::kSequence
      const elems = m._tsrw_list_sequence(list, i);
      try {
        const values = [];
        for (let k = 0, e = m._tsrw_list_size(elems); k < e; k++) values.push(this._readValue(elems, k));
        return values;
      } finally {
        m._tsrw_list_free(elems);
      }
    }
    const dtype = kDTypeName[code];
    const shape = [];
    for (let d = 0, r = m._tsrw_list_rank(list, i); d < r; d++) shape.push(m._tsrw_list_dims(list, i, d));
    if (dtype === 'string') {
      const dec = new TextDecoder();
      const count = shape.reduce((a, b) => a * b, 1);
      const data = [];
      for (let k = 0; k < count; k++) {
        const p = m._tsrw_list_string(list, i, k);
        // A copy: TextDecoder takes no view of a SharedArrayBuffer (tessera-threads.wasm).
        data.push(dec.decode(this._u8().slice(p, p + m._tsrw_list_string_size(list, i, k))));
      }
      return Tensor._from(dtype, data, shape);
    }
    const Ctor = kArray[dtype];
    const name = m.UTF8ToString(m._tsrw_list_name(list, i));
    if (!Ctor) throw new TesseraError('unsupported', `output "${name}": dtype ${dtype} cannot be returned to JS`);
    const p = m._tsrw_list_data(list, i);
    const bytes = this._u8().slice(p, p + m._tsrw_list_nbytes(list, i));
    return Tensor._from(dtype, new Ctor(bytes.buffer), shape);
  }

  /**
   * Loads a .tsr or .onnx model (told apart by the .tsr identifier) from bytes (Uint8Array,
   * ArrayBuffer), a URL (string or URL; in node a string may be a file path), or a fetch()
   * Response. URLs are downloaded as a stream. Options (all optional; see tessera.d.ts):
   * name (error-message prefix; default the URL's file name, else "model"), onProgress({url,
   * loaded, total}), externalData [{path, data}] (an .onnx model's external data files: data
   * bytes, a URL relative to the model's, or a Response), freeDimensions {dimName: size},
   * logLevel (this model's; default the runtime's).
   */
  async load(source, options = {}) {
    this.#check();
    if (options === null || typeof options !== 'object') throw argError('load(): options must be an object');
    const level = options.logLevel === undefined ? this.#log.level : logLevelIndex(options.logLevel, 'load()');
    if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw argError('load(): onProgress must be a function');
    const dims = freeDimensionList(options.freeDimensions);
    const ext = options.externalData ?? [];
    if (!Array.isArray(ext) || !ext.every((e) => e && typeof e.path === 'string' && e.data !== undefined))
      throw argError('load(): externalData must be an array of {path, data} (data: bytes, a URL or a Response)');
    const t0 = now();
    const src = await readSource(source, 'load()', options.onProgress, null);
    const files = [];
    for (const e of ext)
      files.push({ path: e.path, bytes: (await readSource(e.data, `externalData "${e.path}"`, options.onProgress, src.url)).bytes });
    this.#check();
    // The model's threads start in _tsrw_model_load on idle loaded Workers: checked with no await
    // between the check and the call, so a concurrent load() cannot take them in between.
    if (this.#threads > 1) while (!this.#workersReady()) await this.#reserveWorkers();
    this.#check();
    const m = this.#m;
    const name = options.name ?? src.name ?? 'model';
    const owned = [];
    const alloc = (n) => { const p = m._malloc(Math.max(1, n)); owned.push(p); return p; };
    const copy = (bytes) => { const p = alloc(bytes.length); this._u8().set(bytes, p); return p; };
    const str = (t) => { const p = this._str(t); owned.push(p); return p; };
    let h;
    try {
      const p = copy(src.bytes);
      // wasm32: pointers and size_t are 32-bit.
      const table = (values) => { const t = alloc(4 * values.length); new Uint32Array(this._u8().buffer, t, values.length).set(values); return t; };
      const extNames = table(files.map((f) => str(f.path)));
      const extData = table(files.map((f) => copy(f.bytes)));
      const extSizes = table(files.map((f) => f.bytes.length));
      const dimNames = table(dims.map(([n]) => str(n)));
      const dimSizes = alloc(8 * dims.length);
      new Float64Array(this._u8().buffer, dimSizes, dims.length).set(dims.map(([, v]) => v));
      h = m._tsrw_model_load(p, src.bytes.length, str(name), this.#threads, extNames, extData, extSizes, files.length,
        dimNames, dimSizes, dims.length);
    } finally {
      for (const p of owned) m._free(p);
    }
    if (!h) this._fail();
    const info = JSON.parse(new TextDecoder().decode(this._takeBytes(m._tsrw_model_info(h))));
    const model = new Model(this, h, info, { ...this.#log, level, name }, this.#gpuModel(h));
    this.#models.add(model);
    if (level <= kInfo) {
      const size = src.bytes.length + files.reduce((a, f) => a + f.bytes.length, 0);
      this.#log.print(`tessera: loaded "${name}" (${size} bytes${files.length ? `, ${files.length} external data file${files.length > 1 ? 's' : ''}` : ''}) in ${(now() - t0).toFixed(1)} ms` +
        `${dims.length ? `, free dimensions ${dims.map(([n, v]) => `${n}=${v}`).join(', ')}` : ''}; inputs ${describe(model.inputs)}; outputs ${describe(model.outputs)}`);
    }
    return model;
  }

  /**
   * A Trainer over a training model or checkpoint (.tsr with a "train_step" signature, as
   * Trainer.save(), `tessera train` and `tessera prepare-training` write): resumes with its weights
   * and optimizer state. source as load(); options: name, onProgress, logLevel.
   */
  async loadTrainer(source, options = {}) {
    if (options === null || typeof options !== 'object') throw argError('loadTrainer(): options must be an object');
    return this.#trainer(source, options, 'loadTrainer()', null);
  }

  /**
   * A Trainer over tsr::prepare_training(model, spec): model an inference model (.tsr or .onnx; its
   * first output the prediction), as load()'s source. spec (see tessera.d.ts TrainingSpec): loss,
   * optimizer, learningRate, momentum, nesterov, weightDecay, beta1, beta2, epsilon, trainable,
   * frozen (name patterns), and load()'s name, onProgress, logLevel.
   */
  async prepareTraining(source, spec = {}) {
    return this.#trainer(source, spec, 'prepareTraining()', trainingSpec(spec));
  }

  async #trainer(source, options, what, spec) {
    this.#check();
    const level = options.logLevel === undefined ? this.#log.level : logLevelIndex(options.logLevel, what);
    if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw argError(`${what}: onProgress must be a function`);
    const src = await readSource(source, what, options.onProgress, null);
    this.#check();
    // As load(): the trainer's threads start in the wasm call, on idle loaded Workers.
    if (this.#threads > 1) while (!this.#workersReady()) await this.#reserveWorkers();
    this.#check();
    const name = options.name ?? src.name ?? 'model';
    const h = createTrainer(this, this.#m, src.bytes, name, this.#threads, spec);
    const info = JSON.parse(new TextDecoder().decode(this._takeBytes(this.#m._tsrw_trainer_info(h))));
    const trainer = new Trainer(this, h, {
      inputs: info.inputs.map(valueInfo), labels: valueInfo(info.labels[0]), weights: info.weights, outputs: info.outputs,
    }, { ...this.#log, level, name, verbose: level <= kVerbose });
    this.#models.add(trainer);
    if (level <= kInfo)
      this.#log.print(`tessera: trainer "${name}": inputs ${describe(trainer.inputs)}; labels ${describe([trainer.labels])}; ${trainer.weights.length} trainable weights; step ${trainer.stepCount}, learning rate ${trainer.learningRate}`);
    return trainer;
  }

  /**
   * Runs a script (the Python subset of `tessera script`) from function options.entry in
   * options.mode ('eager' default, 'trace', 'convert') with options.inputs {name: tensor}.
   * Returns {outputs: {name: tensor}, warnings: [string], graph: Uint8Array (.tsr) | null}.
   */
  async script(source, options = {}) {
    this.#check();
    if (typeof source !== 'string') throw argError('script() takes the source text as a string');
    const mode = options.mode ?? 'eager';
    if (!(mode in kModes)) throw argError(`mode must be eager, trace or convert, got ${JSON.stringify(mode)}`);
    if (typeof options.entry !== 'string') throw argError('script(): options.entry (the function to run) is required');
    const m = this.#m;
    const args = this._list(options.inputs ?? {}, 'inputs');
    const file = this._str(options.name ?? 'script.py');
    const src = this._str(source);
    const entry = this._str(options.entry);
    const r = m._tsrw_script(file, src, entry, kModes[mode], args);
    m._free(file); m._free(src); m._free(entry); m._tsrw_list_free(args);
    if (!r) this._fail();
    try {
      const outputs = this._read(m._tsrw_script_outputs(r));
      const w = m._tsrw_script_warnings(r);
      const text = new TextDecoder().decode(this._u8().slice(m._tsrw_bytes_data(w), m._tsrw_bytes_data(w) + m._tsrw_bytes_size(w)));
      const g = m._tsrw_script_graph(r);
      const graph = g ? this._u8().slice(m._tsrw_bytes_data(g), m._tsrw_bytes_data(g) + m._tsrw_bytes_size(g)) : null;
      return { outputs, warnings: text ? text.split('\n') : [], graph };
    } finally {
      m._tsrw_script_free(r);
    }
  }

  /** A WebGPU runner for model handle h (null on wasm), or {wasmOnly: why} for a graph that
   *  must run whole on wasm (SequenceMap or batched Scan-8 control flow, inputs bound to variables). */
  #gpuModel(h) {
    if (!this.#gpu) return null;
    let graph;
    try { graph = this._graph(h); } catch (e) { this.#m._tsrw_model_free(h); throw e; }
    return graph.wasmOnly ? { wasmOnly: graph.wasmOnly } : new this.#gpuLayer.GpuModel(this, h, this.#gpu, graph);
  }

  /** @internal The graphs of model handle h as tsrw_model_graph's JSON (web/src/web_graph.cpp):
   *  the main graph, its subgraphs in .graphs. */
  _graph(h) {
    const b = this.#m._tsrw_model_graph(h);
    if (!b) this._fail();
    return JSON.parse(new TextDecoder().decode(this._takeBytes(b)));
  }

  /** Bytes of the wasm heap in use (malloc), e.g. to check that disposed models free theirs. */
  heapInUse() { this.#check(); return this.#m._tsrw_heap_in_use(); }

  /** Disposes every model and trainer of this instance and the instance (tessera-threads.wasm: also ends its
   *  Workers); using either afterwards throws. */
  dispose() {
    this.#check();
    for (const model of [...this.#models]) model.dispose();
    if (this.#m.PThread) this.#m.PThread.terminateAllThreads();  // every model's threads are joined
    for (const done of [...this.#pending]) done(argError('this Tessera instance was disposed while a load() waited for its Workers'));
    this.#gpu?.device.destroy();
    this.#disposed = true;
    this.#m = null;
    this.#u8 = null;
  }
}


export { Trainer };
export default Tessera;
