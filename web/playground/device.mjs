// The playground's WebGPU device (the Models panel's device switch, web/playground/device.cpp):
// tessera-web's WebGPU layer (webgpu.mjs: per-node executor, WGSL kernels, per-node wasm
// fallback) run over the playground's own wasm. That wasm links tessera-web's C ABI
// (web/src/web_api.cpp: TensorLists and errors; web_graph.cpp: tsrw_model_graph,
// tsrw_model_constant, tsrw_node_eval), so the runtime object the layer calls into is a Tessera
// over the playground's Module: the same marshalling code as the package, no second copy.
// Loaded by index.html (Module.tsrpDevice()) when the panel first draws the switch; the C++ side
// calls probe/run/forget and gets its answers through tsrp_device_probed / tsrp_device_done.
import { Tessera } from './tessera.mjs';
import { openWebGpu, GpuModel } from './webgpu.mjs';

let opened = null;      // openWebGpu()'s promise: {gpu} or {reason}
let rt = null;          // the Tessera over the playground's Module
const runners = new Map();  // model handle -> GpuModel, or {wasmOnly: why}

function runtime(Module) {
  // (core, threads, threadsFallback, log): the playground's wasm is single-threaded.
  rt ??= new Tessera(Module, 1, null, { level: 4, print: (s) => console.log(s), printErr: (s) => console.warn(s) });
  return rt;
}

/** Looks for an adapter once; answers tsrp_device_probed(1, "vendor architecture (description)")
 *  or tsrp_device_probed(0, why WebGPU is unusable here). */
export async function probe(Module) {
  const r = await (opened ??= openWebGpu());
  if (r.gpu) {
    // The bridge itself: a Tessera over this Module with the calls webgpu.mjs makes.
    const calls = ['_core', '_fail', '_read', '_listOf', '_graph'];
    try {
      const missing = calls.filter((c) => typeof runtime(Module)[c] !== 'function');
      if (missing.length) throw new Error(`tessera.mjs's Tessera lacks ${missing.join(', ')}`);
    } catch (e) {
      Module.ccall('tsrp_device_probed', null, ['number', 'string'], [0, `the playground's WebGPU bridge (device.mjs) failed: ${e.message}`]);
      return;
    }
  }
  let text = r.reason;
  if (r.gpu) {
    const { vendor, architecture, description } = r.gpu.info;
    text = [vendor, architecture].filter(Boolean).join(' ') || 'unnamed adapter';
    if (description) text += ` (${description})`;
  }
  Module.ccall('tsrp_device_probed', null, ['number', 'string'], [r.gpu ? 1 : 0, text]);
}

/** Runs model handle h (a tsr::web::WebModel*) on WebGPU with the inputs in TensorList `list`
 *  (read and freed here, before anything is awaited) and answers tsrp_device_done(request, out
 *  list (the C++ side takes it), ms, nodes on WebGPU, nodes, copies, wasmOnly, error). */
export async function run(Module, request, h, list) {
  const answer = (out, ms, placement, wasmOnly, error) => {
    const onGpu = placement ? placement.nodes.filter((n) => n.device === 'webgpu').length : 0;
    Module.ccall('tsrp_device_done', null, ['number', 'number', 'number', 'number', 'number', 'number', 'string', 'string'],
      [request, out, ms, onGpu, placement?.nodes.length ?? 0, placement?.copies ?? 0, wasmOnly ?? '', error ?? '']);
  };
  let feeds, runner;
  try {
    const r = runtime(Module);
    try { feeds = r._read(list); } finally { Module._tsrw_list_free(list); }
    const { gpu } = await opened;
    runner = runners.get(h);
    if (!runner) {
      const graph = r._graph(h);
      runner = graph.wasmOnly ? { wasmOnly: graph.wasmOnly, placement: null } : new GpuModel(r, h, gpu, graph);
      runners.set(h, runner);
    }
  } catch (e) {
    answer(0, 0, null, null, e.message);
    return;
  }
  if (runner.wasmOnly) {
    answer(0, 0, null, runner.wasmOnly, null);
    return;
  }
  // The feeds came from the panel, which made them for the model's inputs: their own dtypes and
  // shapes are what GpuModel.run checks them against.
  const model = { inputs: Object.entries(feeds).map(([name, t]) => ({ name, dtype: t.type, shape: t.dims })), outputs: [] };
  let out = 0;
  try {
    const t0 = performance.now();
    const result = await runner.run(feeds, null, model);
    const ms = performance.now() - t0;
    out = rt._listOf(Object.entries(result).filter(([, t]) => t !== null));
    answer(out, ms, runner.placement, null, null);
  } catch (e) {
    answer(0, 0, runner.placement, null, e.message);
  }
}

/** Drops the runner of handle h (its GPU copies of constants) before the C++ side frees h. */
export function forget(h) {
  runners.get(h)?.dispose?.();
  runners.delete(h);
}
