// The WebGPU device layer of tessera-web: runs a model's graph node by node, float32 nodes of
// the ops below on the GPU (WGSL kernels: webgpu_kernels.mjs), every other node alone on the wasm
// CPU kernels (tsrw_graph_node_eval, web/src/web_graph.cpp). An If reads its condition back (one
// scalar) and runs the chosen branch's nodes the same way, a Loop its body once per iteration
// (webgpu_control.mjs), their subgraph inputs bound to the node's inputs (nested control flow
// recursively). Tensors move between GPU buffers and the
// wasm heap only where a node's input lives on the other side, and graph outputs are read back
// once. Ops and their kernels: webgpu_ops.mjs, webgpu_kernels.mjs. Loaded by tessera.mjs only when create({device}) asks for WebGPU.
import { TesseraError } from './errors.mjs';
import { Tensor } from './tensor.mjs';
import { kGpuOps, prod } from './webgpu_ops.mjs';
import { kGroup } from './webgpu_kernels.mjs';
import { compareProbes } from './check.mjs';
import { kControlOps, runControl, graphsOf, placementOf } from './webgpu_control.mjs';
import { fusionsOf, chainOf } from './webgpu_fuse.mjs';

export { placementOf };

const kF32 = 1;  // tsr::DType::kF32

/**
 * The adapter and device, or {reason} when WebGPU is not usable here (no navigator.gpu, no
 * adapter, requestDevice failed): Tessera.create({device: 'auto'}) reports it as deviceFallback.
 */
export async function openWebGpu() {
  const gpu = globalThis.navigator?.gpu;
  if (!gpu) return { reason: 'navigator.gpu is not available (no WebGPU in this context; headless Chromium needs --enable-unsafe-webgpu)' };
  let adapter;
  try {
    adapter = await gpu.requestAdapter();
  } catch (e) {
    return { reason: `navigator.gpu.requestAdapter() failed: ${e.message}` };
  }
  if (!adapter) return { reason: 'navigator.gpu.requestAdapter() found no adapter' };
  const want = ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxStorageBuffersPerShaderStage', 'maxComputeWorkgroupsPerDimension'];
  const requiredLimits = Object.fromEntries(want.map((k) => [k, adapter.limits[k]]));
  try {
    return { gpu: new Gpu(adapter, await adapter.requestDevice({ requiredLimits })) };
  } catch (e) {
    return { reason: `GPUAdapter.requestDevice() failed: ${e.message}` };
  }
}

/** One device: compiled pipelines (one per distinct WGSL source, compiled asynchronously) and a
 *  pool of storage buffers in power-of-two size classes, reused within and across runs. */
class Gpu {
  constructor(adapter, device) {
    this.adapter = adapter;
    this.device = device;
    const info = adapter.info ?? {};
    /** Adapter description for logs and tests: vendor, architecture, description. */
    this.info = { vendor: info.vendor ?? '', architecture: info.architecture ?? '', description: info.description ?? '' };
    this.lost = null;
    this.errors = [];
    this.pipelines = new Map();
    this.later = new Set();  // WGSL of pipelines to compile once the current run is done (Run.compiled)
    this.pool = new Map();
    device.lost.then((i) => { this.lost = i.message || String(i.reason); });
    device.addEventListener('uncapturederror', (e) => this.errors.push(e.error.message));
  }

  /** The pipeline of WGSL `code`: {pipe (once compiled), ready (a Promise settled then), error?}.
   *  Compiled with createComputePipelineAsync, so that the pipelines a run's commands need before
   *  its next submit compile at once (in parallel where the implementation does). */
  pipeline(code) {
    let e = this.pipelines.get(code);
    if (!e) {
      e = { pipe: null, error: null, ready: null };
      e.ready = this.device.createComputePipelineAsync({ layout: 'auto', compute: { module: this.device.createShaderModule({ code }), entryPoint: 'main' } })
        .then((p) => { e.pipe = p; }, (err) => { e.error = err; this.pipelines.delete(code); });
      this.pipelines.set(code, e);
    }
    return e;
  }

  /** Starts compiling the pipelines Run.compiled asked for (not awaited: a later run uses them). */
  compileLater() {
    for (const code of this.later) this.pipeline(code);
    this.later.clear();
  }

  /** A storage buffer of at least `bytes` from the pool. */
  acquire(bytes) {
    const size = Math.max(16, 2 ** Math.ceil(Math.log2(Math.max(bytes, 1))));
    if (size > this.device.limits.maxStorageBufferBindingSize)
      throw onWasm(`a ${bytes}-byte tensor is over the adapter's maxStorageBufferBindingSize (${this.device.limits.maxStorageBufferBindingSize})`);
    const free = this.pool.get(size);
    if (free?.length) return free.pop();
    return this.device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  }

  release(buf) {
    const free = this.pool.get(buf.size) ?? [];
    free.push(buf);
    this.pool.set(buf.size, free);
  }

  /** A new buffer holding `data` (set at creation: ordered before any later command). */
  upload(data, usage = GPUBufferUsage.STORAGE) {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const buf = this.device.createBuffer({ size: Math.max(16, Math.ceil(bytes.length / 4) * 4), usage: usage | GPUBufferUsage.COPY_SRC, mappedAtCreation: true });
    new Uint8Array(buf.getMappedRange()).set(bytes);
    buf.unmap();
    return buf;
  }

  check() {
    if (this.lost) throw new TesseraError('backend', `webgpu: the device was lost (${this.lost}); create a new Tessera instance`);
  }
}

/** The error a GPU op throws, before dispatching anything, for a node it cannot run at these
 *  sizes (over the adapter's limits): GpuModel.run runs the node on wasm instead. */
export function onWasm(why) {
  const e = new TesseraError('resource_exhausted', `webgpu: ${why}`);
  e.onWasm = true;
  return e;
}

/** A value on the GPU: float32 elements in store.buf (shared by views; store.refs counts them). */
class GpuValue {
  constructor(shape, store) { this.shape = shape; this.store = store; }
}

/** What a run does for one model: the graph, where each node runs, constants cached on both sides. */
export class GpuModel {
  #rt; #h; #gpu; #g; #graphs; #place; #fused; #hostView; #consts = new Map(); #folded = new Map(); #cache = new Map();

  /** rt: the Tessera instance; h: the wasm model handle; graph: tsrw_model_graph's JSON (the main
   *  graph, its subgraphs in graph.graphs). */
  constructor(rt, h, gpu, graph) {
    this.#rt = rt; this.#h = h; this.#gpu = gpu; this.#g = graph;
    this.#graphs = graphsOf(graph);
    this.#place = this.#graphs.map((g) => g.nodes.map((n) => (this.#onGpu(n, g) ? 'webgpu' : 'wasm')));
    // Views of host tensors that are not float32 (shape arithmetic: int64 Unsqueeze, Reshape ...)
    // run in JS on the host side: placed 'wasm' (the CPU), without a wasm call.
    this.#hostView = this.#graphs.map((g, gi) => {
      const numeric = (id) => id >= 0 && g.values[id].dtype !== 0 && g.values[id].dtype !== 8;
      return g.nodes.map((n, k) => this.#place[gi][k] === 'wasm' && !!kGpuOps[n.op]?.view && numeric(n.inputs[0]) &&
        n.outputs.every((id) => id < 0 || numeric(id)));
    });
    this.#fused = fusionsOf(this.#graphs, this.#place);
    this.placement = placementOf(graph, this.#place);
    /** Nodes placed on webgpu that ran on wasm in some run (their sizes were over the adapter's
     *  limits): a main-graph node's index, or "graph:node" for a subgraph's node. */
    this.runtimeFallbacks = new Set();
  }

  #onGpu(n, g) {
    const op = kGpuOps[n.op];
    if (!op || (op.ok && !op.ok(n, g))) return false;
    const host = new Set(op.host ?? []);
    const dt = (id) => g.values[id].dtype;
    return n.inputs.every((id, j) => id < 0 || host.has(j) || dt(id) === kF32) && n.outputs.every((id) => id < 0 || dt(id) === kF32);
  }

  /** Runs the graph: feeds {name: Tensor}, checked here against model.inputs ({name, dtype, shape})
   *  as tsrw_run checks them; names: outputs to return (default all). Resolves to {name: Tensor}.
   *  pass (check()'s): {cpu: every node on wasm, probes: [] collecting each node's outputs}. */
  async run(feeds, names, model, pass = null) {
    this.#gpu.check();
    checkFeeds(feeds, names, model);
    const g = this.#g;
    const inputs = g.inputs.map((id) => ({ shape: feeds[g.values[id].name].dims, t: feeds[g.values[id].name] }));
    const run = new Run(this.#gpu);
    let outs = [];
    try {
      outs = await this.#runGraph(run, 0, inputs, pass);
      const result = {};
      for (let j = 0; j < g.outputs.length; j++) {
        const name = g.values[g.outputs[j]].name;
        if (!names || names.includes(name)) result[name] = await run.host(outs[j]);
      }
      if (this.#gpu.errors.length) {
        const errs = this.#gpu.errors.splice(0);
        throw new TesseraError('backend', `webgpu: ${errs[0]}${errs.length > 1 ? ` (and ${errs.length - 1} more errors)` : ''}`);
      }
      return names ? Object.fromEntries(names.map((nm) => [nm, result[nm]])) : result;
    } finally {
      await run.flush();
      for (const v of outs) run.drop(v);
      this.#gpu.compileLater();
    }
  }

  /**
   * Runs graph gi (0: the main graph, else a subgraph) on the value records `inputs` (parallel to
   * its inputs; borrowed: the caller keeps and drops them). Resolves to the records of its outputs,
   * owned by the caller (a borrowed GPU value passed through comes back as a new view of it).
   */
  async #runGraph(run, gi, inputs, pass) {
    const g = this.#graphs[gi], place = this.#place[gi], hostView = this.#hostView[gi];
    const vals = new Array(g.values.length);
    const uses = new Array(g.values.length).fill(0);
    for (const n of g.nodes) for (const id of n.inputs) if (id >= 0) uses[id]++;
    for (const id of g.outputs) uses[id]++;
    g.inputs.forEach((id, j) => { vals[id] = inputs[j]; });
    const borrowed = new Set(inputs);
    const drop = (v) => { if (!borrowed.has(v)) run.drop(v); };
    let outs = null;
    try {
      for (let k = 0; k < g.nodes.length; k++) {
        const n = g.nodes[k];
        const ins = n.inputs.map((id) => (id < 0 ? null : vals[id] ?? (vals[id] = this.#constant(gi, id))));
        let res, f;
        if (kControlOps.has(n.op)) res = await runControl(run, this.#graphs, n, ins, (b, inputs) => this.#runGraph(run, b, inputs, pass));
        else if ((f = ins.find((v) => v?.fusedInto?.[0] === k))) {  // applied by the Conv before it
          res = [run.view(f, f.shape)];
          if (f.fusedInto.length > 1) res[0].fusedInto = f.fusedInto.slice(1);
        }
        else if (!pass?.cpu && (place[k] === 'webgpu' || hostView[k])) res = await this.#gpuNode(run, gi, k, n, ins, pass, (id) => vals[id] ?? (vals[id] = this.#constant(gi, id)));
        else res = await this.#wasmNode(run, gi, k, n, ins);
        n.outputs.forEach((id, j) => { if (id >= 0) vals[id] = res[j]; });
        if (pass?.probes) probe(run, pass.probes, g, gi, k, res);
        for (const id of n.inputs) if (id >= 0 && --uses[id] === 0) drop(vals[id]);
        for (const id of n.outputs) if (id >= 0 && uses[id] === 0) drop(vals[id]);
      }
      const seen = new Set();
      outs = g.outputs.map((id) => {
        const v = vals[id] ?? (g.values[id].constant ? (vals[id] = this.#constant(gi, id)) : null);
        // The caller drops what it gets: a borrowed or repeated record comes back as a new one
        // (constants are never freed: as they are).
        const shared = v && !v.constant && (borrowed.has(v) || seen.has(v));
        seen.add(v);
        return !shared ? v : v.gpu ? run.view(v, v.shape) : { shape: v.shape, t: v.t };
      });
      return outs;
    } finally {
      const keep = new Set(outs ?? []);
      for (const v of vals) if (!keep.has(v)) drop(v);
    }
  }

  /**
   * run() with options.checkAgainst 'cpu' (as `tessera run --check-against cpu`): the graph on its
   * placement, then every node on wasm, each node's outputs collected in execution order and
   * compared (check.mjs). Resolves to {outputs (the first pass's), check}.
   */
  async check(feeds, names, model, tolerance) {
    const device = [], cpu = [];
    const outputs = await this.run(feeds, names, model, { probes: device });
    await this.run(feeds, names, model, { cpu: true, probes: cpu });
    for (const p of device) p.t = await p.t;
    return { outputs, check: compareProbes(this.#graphs, this.#place, device, cpu, tolerance) };
  }

  /** Node k of graph gi on the GPU, or on wasm when its sizes are over the adapter's limits (onWasm).
   *  A Conv with nodes fused into it (webgpu_fuse.mjs) applies them and marks its output with
   *  their indices (fusedInto), unless pass asks for every node's own output. value(id): the record
   *  of value id in this run (a fused residual Add's other operand). */
  async #gpuNode(run, gi, k, n, ins, pass, value) {
    try {
      const j = pass ? undefined : this.#fused[gi].get(k);
      const act = j === undefined ? null : chainOf(j.map((i) => this.#graphs[gi].nodes[i]), n.outputs[0], (id) => this.#constant(gi, id).t, value);
      const outs = await kGpuOps[n.op].run(run, n, ins, this.#cacheOf(gi, k), ...(act ? [act] : []));
      const res = testHooks.perturb?.(k, n, gi) ? await perturbed(run, outs) : outs;
      if (act) { res[0].fusedInto = j; testHooks.onFuse?.(gi, k, ...j); }
      return res;
    } catch (e) {
      if (!e.onWasm) throw e;
      this.runtimeFallbacks.add(gi ? `${gi}:${k}` : k);
      return this.#wasmNode(run, gi, k, n, ins);
    }
  }

  /** Per-node scratch kept across runs (kernels cache derived constants there). */
  #cacheOf(gi, k) {
    let c = this.#cache.get(`${gi}:${k}`);
    if (!c) this.#cache.set(`${gi}:${k}`, (c = {}));
    return c;
  }

  /** Constant value id of graph gi (read from the wasm model once, shared by every run). */
  #constant(gi, id) {
    let v = this.#consts.get(`${gi}:${id}`);
    if (!v) {
      const rt = this.#rt, m = rt._core();
      const list = m._tsrw_graph_constant ? m._tsrw_graph_constant(this.#h, gi, id) : (mainOnly(gi, 'tsrw_graph_constant'), m._tsrw_model_constant(this.#h, id));
      if (!list) rt._fail();
      let t;
      try { t = Object.values(rt._read(list))[0]; } finally { m._tsrw_list_free(list); }
      v = { shape: t.dims, t, constant: true };
      this.#consts.set(`${gi}:${id}`, v);
    }
    return v;
  }

  /** Node k of graph gi alone on wasm (its GPU inputs read back); nodes of constants only are
   *  evaluated once. Shape reads no data: it is answered here, from the input's shape, with no readback. */
  async #wasmNode(run, gi, k, n, ins) {
    if (n.op === 'Shape' && ins[0]?.shape) {
      const r = ins[0].shape.length, clampTo = (a) => Math.min(Math.max(a < 0 ? a + r : a, 0), r);
      const dims = ins[0].shape.slice(clampTo(n.attrs.start ?? 0), clampTo(n.attrs.end ?? r));
      return [{ shape: [dims.length], t: Tensor._from('int64', BigInt64Array.from(dims, BigInt), [dims.length]) }];
    }
    const foldable = ins.every((v) => v === null || v.constant) && !n.op.startsWith('Random') && n.op !== 'Multinomial';
    const key = `${gi}:${k}`;
    if (foldable && this.#folded.has(key)) return this.#folded.get(key);
    const entries = [];
    for (let j = 0; j < ins.length; j++) if (ins[j]) entries.push([String(j), await run.host(ins[j])]);
    const rt = this.#rt, m = rt._core();
    if (!m._tsrw_graph_node_eval) mainOnly(gi, 'tsrw_graph_node_eval');
    const list = rt._listOf(entries);
    const out = m._tsrw_graph_node_eval ? m._tsrw_graph_node_eval(this.#h, gi, k, list) : m._tsrw_node_eval(this.#h, k, list);
    m._tsrw_list_free(list);
    if (!out) rt._fail();
    let res;
    try { res = rt._read(out); } finally { m._tsrw_list_free(out); }
    const outs = n.outputs.map((_, j) => {
      const t = res[String(j)];
      return t === undefined || t === null ? null : { shape: t.dims ?? null, t, constant: foldable };
    });
    if (foldable) this.#folded.set(key, outs);
    return outs;
  }

  /** Frees the GPU copies of the constants. */
  dispose() {
    for (const v of this.#consts.values()) if (v.gpu) v.gpu.store.buf.destroy();
    for (const outs of this.#folded.values()) for (const v of outs) if (v?.gpu) v.gpu.store.buf.destroy();
    for (const c of this.#cache.values()) for (const b of Object.values(c)) if (b instanceof GPUBuffer) b.destroy();
    this.#consts.clear(); this.#folded.clear(); this.#cache.clear();
  }
}

/** For a wasm build that exports only the main-graph calls (tsrw_model_constant, tsrw_node_eval:
 *  e.g. a page's own wasm linking web_graph.cpp): throws unsupported for a subgraph (gi > 0). */
function mainOnly(gi, fn) {
  if (gi) throw new TesseraError('unsupported', `webgpu: this wasm build does not export ${fn}, which a subgraph's node needs (add _${fn} to its exported functions)`);
}

/**
 * For tests only (not part of the API, not in tessera.d.ts): perturb(k, node, graph) returning true
 * makes node k (of graph `graph`, 0: the main graph)'s first output, when it runs on the GPU, differ from its kernel's result by 1 in
 * its first element, so that a test can see run({checkAgainst: 'cpu'}) find a divergence.
 * onFuse(graph, conv, ...fused) is called when Conv node `conv` runs with nodes `fused` fused
 * into it (webgpu_fuse.mjs). waitForPipelines: true makes kernels wait for their tiled pipelines
 * instead of running the simpler ones until those are compiled (Run.compiled).
 */
export const testHooks = { perturb: null, onFuse: null, waitForPipelines: false };

/** outs with outs[0] read back and its first element increased by 1 (testHooks.perturb). */
async function perturbed(run, outs) {
  const t = await run.host(outs[0]);
  const data = Float32Array.from(t.data);
  if (data.length) data[0] += 1;
  run.drop(outs[0]);
  return [{ shape: outs[0].shape, t: Tensor._from('float32', data, t.dims) }, ...outs.slice(1)];
}

/** Appends node k of graph g (index gi)'s tensor outputs to probes ({graph, node, value, t: its
 *  Tensor on the host or a Promise of it: a GPU value is copied aside now and read back with the
 *  run's next submit). */
function probe(run, probes, g, gi, k, outs) {
  const ids = g.nodes[k].outputs;
  for (let j = 0; j < ids.length; j++) {
    if (ids[j] < 0 || !outs[j] || g.values[ids[j]].dtype === 0 || Array.isArray(outs[j].t)) continue;  // not a tensor
    const t = outs[j].t ?? run.snapshot(outs[j]);
    t.catch?.(() => {});  // awaited by check(); a run that throws leaves it unread
    probes.push({ graph: gi, node: k, value: ids[j], t });
  }
}

function checkFeeds(given, names, { inputs, outputs }) {
  const all = (vs) => vs.map((v) => `"${v.name}"`).join(', ');
  for (const k of Object.keys(given))
    if (!inputs.some((i) => i.name === k)) throw new TesseraError('not_found', `run(): the model has no input "${k}" (inputs: ${all(inputs)})`);
  for (const i of inputs) {
    const t = given[i.name];
    const where = `run(): input "${i.name}"`;
    if (!t) throw new TesseraError('invalid_argument', `${where} is missing (inputs: ${all(inputs)})`);
    if (t.type !== i.dtype) throw new TesseraError('invalid_argument', `${where}: expected ${i.dtype}, got ${t.type}`);
    if (i.shape && (t.dims.length !== i.shape.length || i.shape.some((d, k) => typeof d === 'number' && d !== t.dims[k])))
      throw new TesseraError('invalid_argument', `${where}: expected shape [${i.shape}], got [${t.dims}]`);
  }
  for (const n of names ?? [])
    if (!outputs.some((o) => o.name === n)) throw new TesseraError('invalid_argument', `run(): the model has no output "${n}" (outputs: ${all(outputs)})`);
}

/** One run's commands: dispatches and copies recorded in order, encoded into one command encoder
 *  (one compute pass per stretch of dispatches) and submitted when a value is read back or the run
 *  ends, once the pipelines they need are compiled. A value record is {shape, t?: Tensor (host
 *  copy), gpu?: GpuValue, constant?}. */
class Run {
  #gpu; #cmds = []; #transient = []; #staged = [];

  constructor(gpu) { this.#gpu = gpu; }

  get device() { return this.#gpu.device; }

  /** The GPU buffer of a float32 value (uploaded on first use; constants stay uploaded). */
  buf(v) {
    if (!v.gpu) {
      if (v.t.type !== 'float32') throw new TesseraError('internal', `webgpu: a ${v.t.type} value cannot go to the GPU`);
      v.gpu = new GpuValue(v.shape, { buf: this.#gpu.upload(v.t.data), refs: v.constant ? Infinity : 1 });
    }
    return v.gpu.store.buf;
  }

  /** A new GPU value of `shape` (a pooled buffer). */
  alloc(shape) {
    return { shape, gpu: new GpuValue(shape, { buf: this.#gpu.acquire(4 * prod(shape)), refs: 1, pooled: true }) };
  }

  /** A view of v with another shape (Reshape and its kin): no copy on either side. A float32
   *  constant is uploaded first, so that its views share its one GPU copy. */
  view(v, shape) {
    if (v.constant && !v.gpu && v.t?.type === 'float32') this.buf(v);
    const r = { shape };
    if (v.gpu) {
      v.gpu.store.refs++;
      r.gpu = new GpuValue(shape, v.gpu.store);
    }
    if (v.t) r.t = Tensor._from(v.t.type, v.t.data, shape);
    if (v.constant) r.constant = true;
    return r;
  }

  /** Drops a run's reference to v's GPU buffer (back to the pool when no view holds it). */
  drop(v) {
    if (!v?.gpu || v.dropped) return;
    v.dropped = true;
    if (--v.gpu.store.refs > 0) return;
    if (v.gpu.store.pooled) this.#gpu.release(v.gpu.store.buf);
    else this.#transient.push(v.gpu.store.buf);  // an upload: destroyed after the commands using it are submitted
  }

  /** A read-only storage buffer of u32 parameters (Float values as their bits by the caller). */
  params(values) {
    const buf = this.#gpu.upload(Uint32Array.from(values, (x) => x >>> 0));
    this.#transient.push(buf);
    return buf;
  }

  /** A read-only storage buffer of i32 values (Gather's indices). */
  int32(values) {
    const buf = this.#gpu.upload(Int32Array.from(values, Number));
    this.#transient.push(buf);
    return buf;
  }

  /** A uniform buffer holding `bytes` (an ArrayBufferView). */
  uniform(data) {
    const buf = this.#gpu.upload(data, GPUBufferUsage.UNIFORM);
    this.#transient.push(buf);
    return buf;
  }

  /** Whether the pipeline of WGSL `code` is compiled, for a kernel that has a simpler one to run
   *  meanwhile (webgpu_ops.mjs: the tiled GEMM, about 1 s to compile on SwiftShader, against tens of
   *  ms). A new one is compiled after the run (Gpu.compileLater): pipelines compile one after
   *  another there, so the run's own kernels do not wait behind it. */
  compiled(code) {
    if (testHooks.waitForPipelines) return true;
    const e = this.#gpu.pipelines.get(code);
    if (!e) this.#gpu.later.add(code);
    return !!e?.pipe;
  }

  /** Records one dispatch of `code` with buffers bound in order over `grid` workgroups (its
   *  pipeline starts compiling now if it is new). */
  dispatch(code, buffers, grid) {
    this.#cmds.push({ p: this.#gpu.pipeline(code), buffers, grid });
  }

  /** An element kernel over n invocations (kGroup per workgroup, x then y). */
  elements(code, buffers, n) {
    if (n === 0) return;
    const groups = Math.ceil(n / kGroup), x = Math.min(groups, 65535);
    this.dispatch(code, buffers, [x, Math.ceil(groups / x)]);
  }

  /** Submits the commands recorded so far (after their pipelines compile), then frees the run's
   *  transient buffers and starts the staged readbacks. A pipeline that failed to compile fails
   *  with TesseraError backend. */
  async flush() {
    const cmds = this.#cmds.splice(0), transient = this.#transient.splice(0), staged = this.#staged.splice(0);
    try {
      const pending = cmds.filter((c) => c.p && !c.p.pipe).map((c) => c.p.ready);
      if (pending.length) await Promise.all(pending);
      const failed = cmds.find((c) => c.p?.error);
      if (failed) {
        this.#gpu.check();
        throw new TesseraError('backend', `webgpu: a kernel failed to compile: ${failed.p.error.message}`);
      }
      if (cmds.length) this.device.queue.submit([this.#encode(cmds)]);
    } finally {
      for (const b of transient) b.destroy();
      for (const s of staged) s.resolve(this.#read(s.staging, s.shape));
    }
  }

  /** cmds ({p, buffers, grid} dispatches, {copy: [src, dst, bytes]} copies) as a command buffer. */
  #encode(cmds) {
    const enc = this.device.createCommandEncoder();
    let pass = null;
    for (const c of cmds) {
      if (c.copy) {
        pass?.end();
        pass = null;
        enc.copyBufferToBuffer(c.copy[0], 0, c.copy[1], 0, c.copy[2]);
        continue;
      }
      const pipe = c.p.pipe;
      pass ??= enc.beginComputePass();  // one pass for a stretch of dispatches
      pass.setPipeline(pipe);
      pass.setBindGroup(0, this.device.createBindGroup({
        layout: pipe.getBindGroupLayout(0), entries: c.buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
      }));
      pass.dispatchWorkgroups(...c.grid);
    }
    pass?.end();
    return enc.finish();
  }

  /** A Promise of v's Tensor as it is now (its buffer may be reused later in the run): copied to a
   *  staging buffer in the run's commands, read back after they are submitted (flush). */
  snapshot(v) {
    const staging = this.#staging(prod(v.shape));
    if (prod(v.shape)) this.#cmds.push({ copy: [v.gpu.store.buf, staging, 4 * prod(v.shape)] });
    return new Promise((resolve) => this.#staged.push({ staging, shape: v.shape, resolve }));
  }

  #staging(n) {
    return this.device.createBuffer({ size: Math.max(16, 4 * n), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** The Tensor of `shape` in staging (its copy submitted); destroys staging. */
  async #read(staging, shape) {
    const n = prod(shape);
    try {
      await staging.mapAsync(GPUMapMode.READ);
    } catch (e) {
      this.#gpu.check();
      throw new TesseraError('backend', `webgpu: reading a result back failed: ${e.message}`);
    }
    const data = new Float32Array(staging.getMappedRange(0, Math.max(16, 4 * n)).slice(0, 4 * n));
    staging.unmap();
    staging.destroy();
    return Tensor._from('float32', data, shape);
  }

  /** v's Tensor on the host: read back from the GPU (once) when it lives there. */
  async host(v) {
    if (v === null || v === undefined) return null;
    if (v.t) return v.t;
    const t = this.snapshot(v);
    await this.flush();
    v.t = await t;
    return v.t;
  }
}
