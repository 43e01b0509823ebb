// Model: a loaded model of a Tessera instance (tessera.mjs), run on wasm or, on a WebGPU runtime,
// node by node through webgpu.mjs GpuModel.
import { argError } from './errors.mjs';
import { now } from './sources.mjs';
import { SplitMix64, generateOptions, planLoop, f16, chooseToken } from './generate.mjs';
import { kDTypeName, kArray, kVerbose, valueInfo, describe } from './tensor.mjs';

/** A loaded model with a prepared CPU session. */
export class Model {
  #rt; #h; #log; #gpu; #placement = null; #profiling = false;

  constructor(rt, handle, info, log, gpu) {
    this.#rt = rt; this.#h = handle; this.#log = log;
    this.inputs = info.inputs.map(valueInfo);
    this.outputs = info.outputs.map(valueInfo);
    this.#gpu = gpu?.run ? gpu : null;
    /** Where run() runs: 'webgpu' (per node, see placement) or 'wasm'. */
    this.device = this.#gpu ? 'webgpu' : 'wasm';
    /** Why a model of a WebGPU runtime runs whole on wasm (e.g. "control flow (Loop)"), or null. */
    this.deviceFallback = gpu?.wasmOnly ?? null;
  }

  /**
   * Which device runs each node of the model (as loaded, before the wasm session's own
   * optimizations; the main graph's nodes, then each subgraph's): {nodes: [{graph, node, op,
   * name, device: 'webgpu' | 'wasm'}], copies} (copies: the
   * values that cross between the devices in a run), as `tessera inspect --placement --json`.
   */
  get placement() {
    this.#check();
    if (this.#gpu) return this.#gpu.placement;
    if (!this.#placement) {
      const graph = this.#rt._graph(this.#h);
      const graphs = (graph.graphs ?? [null]).map((g, i) => (i === 0 ? graph : g));
      this.#placement = { nodes: graphs.flatMap((g, gi) => g.nodes.map((n, k) => ({ graph: gi, node: k, op: n.op, name: n.name, device: 'wasm' }))), copies: 0 };
    }
    return this.#placement;
  }

  #check() { if (!this.#h) throw argError('this model is disposed'); }

  /**
   * Runs the model: feeds {name: Tensor | {type, dims, data} | {dtype, shape, data}}; resolves to
   * {outputName: Tensor} (a sequence output: an array of Tensors; an empty optional: null).
   * options.outputs (or an array as the second argument, as ort's fetches): only these outputs,
   * in this order; the others are not copied out of the wasm heap.
   * options.checkAgainst 'cpu' (as `tessera run --check-against cpu`): on a WebGPU model also runs
   * every node on wasm and compares each node output in execution order (tolerance
   * options.checkTolerance, default {atol: 1e-4, rtol: 1e-4}); resolves to {outputs, check}
   * (tessera.d.ts CheckReport; a model on wasm: check.compared 0, nothing to compare).
   */
  async run(feeds, options = {}) {
    this.#check();
    const names = Array.isArray(options) ? options : options?.outputs;
    if (names !== undefined && (!Array.isArray(names) || names.length === 0 || !names.every((n) => typeof n === 'string')))
      throw argError(`run(): outputs must be a non-empty array of output names (outputs: ${this.outputs.map((o) => `"${o.name}"`).join(', ')})`);
    const against = Array.isArray(options) ? undefined : options?.checkAgainst;
    if (against !== undefined) return this.#runChecked(feeds, names, against, options.checkTolerance);
    if (this.#gpu) return this.#runGpu(feeds, names);
    const rt = this.#rt;
    const m = rt._core();
    const list = rt._list(feeds, 'run() feeds');
    const ptrs = (names ?? []).map((n) => rt._str(n));
    const table = m._malloc(4 * Math.max(1, ptrs.length));
    new Uint32Array(rt._u8().buffer, table, ptrs.length).set(ptrs);
    const t0 = now();
    const out = m._tsrw_run(this.#h, list, table, ptrs.length);
    const ms = now() - t0;
    m._tsrw_list_free(list);
    for (const p of ptrs) m._free(p);
    m._free(table);
    if (!out) rt._fail();
    let result;
    try {
      result = rt._read(out);
    } finally {
      m._tsrw_list_free(out);
    }
    if (this.#log.level <= kVerbose) {
      const info = (vs) => Object.entries(vs).map(([n, t]) => ({ name: n, dtype: t?.type ?? t?.dtype ?? (t ? 'sequence' : 'none'), shape: t?.dims ?? t?.shape ?? null }));
      this.#log.print(`tessera: "${this.#log.name}": run in ${ms.toFixed(2)} ms; inputs ${describe(info(feeds))}; outputs ${describe(info(result))}`);
    }
    return result;
  }

  /** run() with options.checkAgainst: {outputs, check} (check.mjs; on wasm a report that
   *  compared nothing). */
  async #runChecked(feeds, names, against, tolerance) {
    if (against !== 'cpu') throw argError(`run(): checkAgainst must be 'cpu' (the only reference), got ${JSON.stringify(against)}`);
    const { checkTolerance, wasmReport } = await import('./check.mjs');
    const tol = checkTolerance(tolerance);
    this.#check();
    if (!this.#gpu) return { outputs: await this.run(feeds, names ? { outputs: names } : {}), check: wasmReport(tol) };
    const r = await this.#gpu.check(this.#given(feeds), names, this, tol);
    if (this.#log.level <= kVerbose) this.#log.print(`tessera: "${this.#log.name}": ${r.check.message}`);
    return r;
  }

  /** feeds as {name: Tensor}, checked and converted as the wasm run takes them. */
  #given(feeds) {
    const rt = this.#rt, m = rt._core();
    const list = rt._list(feeds, 'run() feeds');
    try { return rt._read(list); } finally { m._tsrw_list_free(list); }
  }

  /** run() on WebGPU (webgpu.mjs GpuModel.run checks the feeds against the inputs). */
  async #runGpu(feeds, names) {
    const given = this.#given(feeds);
    const t0 = now();
    const result = await this.#gpu.run(given, names, this);
    if (this.#log.level <= kVerbose) this.#log.print(`tessera: "${this.#log.name}": run on webgpu in ${(now() - t0).toFixed(2)} ms`);
    return result;
  }

  /**
   * Generates tokens with a decoder-with-past model (a KV cache): tsr::generate's loop
   * (docs/web.md "Generation"). Step 0 runs promptIds with empty past tensors, each later step the
   * last token; the present.* outputs stay in the wasm heap and are passed on as the next step's
   * past_key_values.* by handle (no copy), only the last logits row is copied out. onToken(id, i)
   * is called (and awaited) per token; returning false stops. Resolves to the new ids.
   */
  async generate(promptIds, options = {}, onToken = null) {
    this.#check();
    if (!Array.isArray(promptIds) || promptIds.length === 0 || !promptIds.every(Number.isInteger))
      throw argError('generate: promptIds must be a non-empty array of integer token ids');
    if (onToken !== null && typeof onToken !== 'function') throw argError('generate: onToken must be a function');
    const o = generateOptions(options);
    const { feeds, logits } = planLoop(this.inputs, this.outputs, o);
    const rng = new SplitMix64(o.seed);
    const rt = this.#rt;
    const row = (list) => {
      const m = rt._core();
      const shape = Array.from({ length: m._tsrw_list_rank(list, logits) }, (_, d) => m._tsrw_list_dims(list, logits, d));
      const vocab = shape[shape.length - 1];
      const dtype = kDTypeName[m._tsrw_list_dtype(list, logits)];
      if (!(vocab >= 1) || (dtype !== 'float32' && dtype !== 'float16'))
        throw argError(`generate: output "${o.logits}" ${dtype}[${shape}]: expected float32 or float16 [..., vocab]`);
      const size = dtype === 'float32' ? 4 : 2;
      const end = m._tsrw_list_data(list, logits) + m._tsrw_list_nbytes(list, logits);
      const bytes = rt._u8().slice(end - vocab * size, end);
      return dtype === 'float32' ? new Float32Array(bytes.buffer) : Float32Array.from(new Uint16Array(bytes.buffer), f16);
    };
    const ids = [];
    let out = 0;
    let past = 0;
    try {
      while (ids.length < o.maxNewTokens) {
        this.#check();
        const step = ids.length === 0 ? promptIds : [ids[ids.length - 1]];
        const ints = (dtype, values) => ({ dtype, shape: [1, values.length],
          data: dtype === 'int64' ? BigInt64Array.from(values, BigInt) : Int32Array.from(values) });
        const small = {};
        for (const f of feeds) {
          if (f.role === 'ids') small[f.name] = ints(f.dtype, step);
          else if (f.role === 'mask') small[f.name] = ints(f.dtype, new Array(past + step.length).fill(1));
          else if (f.role === 'positions') small[f.name] = ints(f.dtype, step.map((_, i) => past + i));
          else if (!out) small[f.name] = { dtype: f.dtype, shape: f.empty, data: new kArray[f.dtype](0) };
        }
        const list = rt._list(small, 'generate() feeds');
        const m = rt._core();
        if (out) {
          for (const f of feeds.filter((x) => x.role === 'past')) {
            const p = rt._str(f.name);
            m._tsrw_list_add_from(list, p, out, f.present);
            m._free(p);
          }
          m._tsrw_list_free(out);
          out = 0;
        }
        out = m._tsrw_run(this.#h, list, 0, 0);
        m._tsrw_list_free(list);
        if (!out) {
          try { rt._fail(); } catch (e) { e.message = `generate: step ${ids.length} (past length ${past}): ${e.message}`; throw e; }
        }
        past += step.length;
        const token = chooseToken(row(out), o, rng, ids.length);
        ids.push(token);
        if (onToken && (await onToken(token, ids.length - 1)) === false) break;
        if (o.stop.includes(token)) break;
      }
    } finally {
      // The list is heap memory of the runtime, not of the model; a disposed runtime freed it all.
      let m = null;
      try { m = out ? rt._core() : null; } catch { m = null; }
      if (m) m._tsrw_list_free(out);
    }
    return ids;
  }

  /** The model as .tsr bytes (after loading an .onnx file: the converted model). */
  save() {
    this.#check();
    const m = this.#rt._core();
    const b = m._tsrw_model_save(this.#h);
    if (!b) this.#rt._fail();
    return this.#rt._takeBytes(b);
  }

  /**
   * Per-node profile of this model's wasm runs, as `tessera run --profile` prints it: the first
   * call turns profiling on and returns '' (the runs after it are timed node by node, which costs
   * a clock read per node); later calls return the report of the `top` nodes (default 15) by
   * total time since then (ms, calls, share of the run).
   */
  profile(top = 15) {
    this.#check();
    if (this.#gpu) throw argError('profile(): per-node profiles are for models on wasm');
    const m = this.#rt._core();
    const b = m._tsrw_model_profile(this.#h, this.#profiling ? Math.max(0, top | 0) : -1);
    this.#profiling = true;
    return new TextDecoder().decode(this.#rt._takeBytes(b));
  }

  /** Frees the model's wasm memory; using or disposing it again throws. */
  dispose() {
    this.#check();
    this.#gpu?.dispose();
    this.#rt._core()._tsrw_model_free(this.#h);
    this.#h = 0;
    this.#rt._forget(this);
  }
}

