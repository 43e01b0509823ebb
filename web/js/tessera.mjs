// Tessera in the browser and in node >= 18: the JS API over the wasm's C ABI (web/src/web_api.h).
// Types and the contract: tessera.d.ts. Errors are TesseraError with .code and the runtime's
// path-addressed message (the same text the `tessera` CLI prints).
import createTesseraCore from './tessera-core.mjs';

const kIsNode = typeof process === 'object' && process.versions != null && process.versions.node != null;

// tsr::DType values <-> onnxruntime-web's dtype names and typed arrays.
const kDTypeName = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 16: 'bfloat16',
};
const kDTypeCode = Object.fromEntries(Object.entries(kDTypeName).map(([k, v]) => [v, Number(k)]));
const kArray = {
  float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array,
  int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array, float64: Float64Array,
  uint32: Uint32Array, uint64: BigUint64Array, bfloat16: Uint16Array,
};
// tsr::StatusCode values -> TesseraError.code.
const kCode = {
  1: 'invalid_model', 2: 'invalid_argument', 3: 'unsupported', 4: 'not_found', 5: 'resource_exhausted',
  6: 'backend', 7: 'internal',
};
const kModes = { eager: 0, trace: 1, convert: 2 };

export class TesseraError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'TesseraError';
    this.code = code;
  }
}

function argError(message) { return new TesseraError('invalid_argument', message); }

async function readWasm(url) {
  if (kIsNode && url.protocol === 'file:') {
    const fs = await import('node:fs/promises');
    return new Uint8Array(await fs.readFile(url));
  }
  const r = await fetch(url);
  if (!r.ok) throw new TesseraError('not_found', `${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/** The runtime: one wasm instance. Create with `await Tessera.create()`. */
export class Tessera {
  #m; #threads; #models = new Set(); #disposed = false;

  constructor(core, threads) { this.#m = core; this.#threads = threads; }

  /**
   * options.threads: intra-op threads (1 = the single-threaded tessera.wasm).
   * options.wasmUrl: where tessera.wasm is (default: beside this module).
   */
  static async create(options = {}) {
    const threads = options.threads ?? 1;
    if (!Number.isInteger(threads) || threads < 1) throw argError(`threads must be a positive integer, got ${threads}`);
    const url = options.wasmUrl ? new URL(options.wasmUrl, import.meta.url) : new URL('./tessera.wasm', import.meta.url);
    const init = { print: options.print ?? ((s) => console.log(s)), printErr: options.printErr ?? ((s) => console.warn(s)) };
    if (kIsNode || typeof WebAssembly.instantiateStreaming !== 'function') {
      init.wasmBinary = await readWasm(url);
    } else {
      init.instantiateWasm = (imports, done) => {
        WebAssembly.instantiateStreaming(fetch(url), imports).then((r) => done(r.instance, r.module),
          (e) => { throw new TesseraError('not_found', `${url}: ${e.message}`); });
        return {};
      };
    }
    const core = await createTesseraCore(init);
    return new Tessera(core, threads);
  }

  #check() { if (this.#disposed) throw argError('this Tessera instance is disposed'); }

  /** @internal */ _core() { this.#check(); return this.#m; }
  /** @internal */ _forget(model) { this.#models.delete(model); }

  /** Throws the runtime's last error. */
  /** @internal */ _fail() {
    const m = this.#m;
    throw new TesseraError(kCode[m._tsrw_last_error_code()] ?? 'internal', m.UTF8ToString(m._tsrw_last_error_message()));
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
    const out = m.HEAPU8.slice(m._tsrw_bytes_data(h), m._tsrw_bytes_data(h) + m._tsrw_bytes_size(h));
    m._tsrw_bytes_free(h);
    return out;
  }

  /** @internal A TensorList from {name: {dtype, shape, data}} (caller frees it). */
  _list(feeds, what) {
    if (feeds === null || typeof feeds !== 'object') throw argError(`${what} must be an object {name: {dtype, shape, data}}`);
    const m = this.#m;
    const list = m._tsrw_list_new();
    try {
      for (const [name, t] of Object.entries(feeds)) {
        const where = `input "${name}"`;
        if (t === null || typeof t !== 'object') throw argError(`${where}: expected {dtype, shape, data}`);
        if (t.dtype === 'string') {
          this._addStrings(list, name, t);
          continue;
        }
        const code = kDTypeCode[t.dtype];
        if (code === undefined)
          throw argError(`${where}: dtype ${JSON.stringify(t.dtype)} is not one of string, ${Object.keys(kArray).join(', ')}`);
        const Ctor = kArray[t.dtype];
        if (!(t.data instanceof Ctor)) throw argError(`${where}: dtype ${t.dtype} needs a ${Ctor.name} as data`);
        if (!Array.isArray(t.shape) || !t.shape.every((d) => Number.isInteger(d) && d >= 0))
          throw argError(`${where}: shape must be an array of non-negative integers`);
        const np = this._str(name);
        const dims = m._malloc(8 * Math.max(1, t.shape.length));
        const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
        const data = m._malloc(Math.max(1, bytes.length));
        new Float64Array(m.HEAPU8.buffer, dims, t.shape.length).set(t.shape);
        m.HEAPU8.set(bytes, data);
        const rc = m._tsrw_list_add(list, np, code, dims, t.shape.length, data, bytes.length);
        m._free(np); m._free(dims); m._free(data);
        if (rc !== 0) this._fail();
      }
    } catch (e) {
      m._tsrw_list_free(list);
      throw e;
    }
    return list;
  }

  /** @internal Appends {dtype: 'string', shape, data: string[]} to a TensorList. */
  _addStrings(list, name, t) {
    const where = `input "${name}"`;
    if (!Array.isArray(t.data) || !t.data.every((v) => typeof v === 'string'))
      throw argError(`${where}: dtype string needs an array of strings as data`);
    if (!Array.isArray(t.shape) || !t.shape.every((d) => Number.isInteger(d) && d >= 0))
      throw argError(`${where}: shape must be an array of non-negative integers`);
    const m = this.#m;
    const enc = new TextEncoder();
    const n = t.data.length;
    const ptrs = m._malloc(4 * Math.max(1, n));
    const sizes = m._malloc(4 * Math.max(1, n));
    const dims = m._malloc(8 * Math.max(1, t.shape.length));
    const np = this._str(name);
    const owned = [];
    try {
      new Float64Array(m.HEAPU8.buffer, dims, t.shape.length).set(t.shape);
      for (let k = 0; k < n; k++) {
        const bytes = enc.encode(t.data[k]);
        const p = m._malloc(Math.max(1, bytes.length));
        owned.push(p);
        m.HEAPU8.set(bytes, p);
        // wasm32: pointers and size_t are 32-bit.
        new Uint32Array(m.HEAPU8.buffer, ptrs, n)[k] = p;
        new Uint32Array(m.HEAPU8.buffer, sizes, n)[k] = bytes.length;
      }
      if (m._tsrw_list_add_strings(list, np, dims, t.shape.length, ptrs, sizes, n) !== 0) this._fail();
    } finally {
      for (const p of owned) m._free(p);
      m._free(ptrs); m._free(sizes); m._free(dims); m._free(np);
    }
  }

  /**
   * @internal {name: value} copied out of a TensorList (not freed here). A tensor is
   * {dtype, shape, data} (data a string[] for dtype string), a sequence an array of tensors, an
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
        data.push(dec.decode(m.HEAPU8.subarray(p, p + m._tsrw_list_string_size(list, i, k))));
      }
      return { dtype, shape, data };
    }
    const Ctor = kArray[dtype];
    const name = m.UTF8ToString(m._tsrw_list_name(list, i));
    if (!Ctor) throw new TesseraError('unsupported', `output "${name}": dtype ${dtype} cannot be returned to JS`);
    const p = m._tsrw_list_data(list, i);
    const bytes = m.HEAPU8.slice(p, p + m._tsrw_list_nbytes(list, i));
    return { dtype, shape, data: new Ctor(bytes.buffer) };
  }

  /**
   * Loads a model from the bytes of a .tsr or an .onnx file (told apart by the .tsr identifier).
   * options.name prefixes error messages (default "model").
   */
  async load(bytes, options = {}) {
    this.#check();
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) throw argError('load() takes a Uint8Array (or ArrayBuffer) of a .tsr or .onnx file');
    const m = this.#m;
    const p = m._malloc(Math.max(1, bytes.length));
    m.HEAPU8.set(bytes, p);
    const name = this._str(options.name ?? 'model');
    const h = m._tsrw_model_load(p, bytes.length, name, this.#threads);
    m._free(p); m._free(name);
    if (!h) this._fail();
    const info = JSON.parse(new TextDecoder().decode(this._takeBytes(m._tsrw_model_info(h))));
    const model = new Model(this, h, info);
    this.#models.add(model);
    return model;
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
      const text = new TextDecoder().decode(m.HEAPU8.slice(m._tsrw_bytes_data(w), m._tsrw_bytes_data(w) + m._tsrw_bytes_size(w)));
      const g = m._tsrw_script_graph(r);
      const graph = g ? m.HEAPU8.slice(m._tsrw_bytes_data(g), m._tsrw_bytes_data(g) + m._tsrw_bytes_size(g)) : null;
      return { outputs, warnings: text ? text.split('\n') : [], graph };
    } finally {
      m._tsrw_script_free(r);
    }
  }

  /** Bytes of the wasm heap in use (malloc), e.g. to check that disposed models free theirs. */
  heapInUse() { this.#check(); return this.#m._tsrw_heap_in_use(); }

  /** Disposes every model of this instance and the instance; using either afterwards throws. */
  dispose() {
    this.#check();
    for (const model of [...this.#models]) model.dispose();
    this.#disposed = true;
    this.#m = null;
  }
}

/** A loaded model with a prepared CPU session. */
export class Model {
  #rt; #h;

  constructor(rt, handle, info) {
    this.#rt = rt; this.#h = handle;
    const conv = (v) => ({ name: v.name, dtype: v.kind === 1 ? `sequence<${kDTypeName[v.dtype] ?? 'unknown'}>` : (kDTypeName[v.dtype] ?? 'unknown'), shape: v.shape });
    this.inputs = info.inputs.map(conv);
    this.outputs = info.outputs.map(conv);
  }

  #check() { if (!this.#h) throw argError('this model is disposed'); }

  /** Runs the model: feeds {name: {dtype, shape, data}}; resolves to {outputName: tensor}. */
  async run(feeds) {
    this.#check();
    const rt = this.#rt;
    const m = rt._core();
    const list = rt._list(feeds, 'run() feeds');
    const out = m._tsrw_run(this.#h, list);
    m._tsrw_list_free(list);
    if (!out) rt._fail();
    try {
      return rt._read(out);
    } finally {
      m._tsrw_list_free(out);
    }
  }

  /** The model as .tsr bytes (after loading an .onnx file: the converted model). */
  save() {
    this.#check();
    const m = this.#rt._core();
    const b = m._tsrw_model_save(this.#h);
    if (!b) this.#rt._fail();
    return this.#rt._takeBytes(b);
  }

  /** Frees the model's wasm memory; using or disposing it again throws. */
  dispose() {
    this.#check();
    this.#rt._core()._tsrw_model_free(this.#h);
    this.#h = 0;
    this.#rt._forget(this);
  }
}

export default Tessera;
