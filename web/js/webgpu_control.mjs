// Control flow of the WebGPU layer (webgpu.mjs GpuModel): If, Loop and Scan run by the layer itself,
// their subgraphs node by node on the same per-node placement. A subgraph reads outer values only
// through its inputs (core/ops/families/control_flow.cpp): If's inputs are (cond, captures...), its
// branches take (captures...); Loop's are (M?, cond?, v_initial[N]..., captures[C]...), its body
// takes (iter_num, cond, v[N]..., captures...) and gives (cond, v[N]..., scan[K]...); Scan's are
// (state[N]..., scan_in[M]..., captures[C]...), its body takes (state..., slice[M]..., captures...)
// and gives (state..., scan_elem[K]...). A float32 scan input is sliced and a float32 scan output
// stacked on the GPU (strided copies), others on the host. Batched Scan (ONNX Scan-8) is not run
// here: tsrw_model_graph marks such a model wasmOnly.
import { TesseraError } from './errors.mjs';
import { Tensor, kDTypeName, kArray } from './tensor.mjs';
import { copy, prod, stridesOf } from './webgpu_ops.mjs';

/** Iterations of one Loop before it fails with resource_exhausted (the wasm session's default,
 *  core/base/limits.h kDefaultMaxLoopIterations): a runaway loop fails instead of hanging. */
export const kMaxLoopIterations = 1000000;

/** The ops run here rather than as a node. */
export const kControlOps = new Set(['If', 'Loop', 'Scan']);

/**
 * Runs control-flow node n (an If, a Loop or a Scan) on the value records `ins` (borrowed).
 * runGraph(gi, inputs): runs graph gi on borrowed input records, resolving to owned output
 * records. run: the webgpu.mjs Run (host() reads a value back, drop() releases it). Resolves to the
 * node's output records (owned by the caller). Errors name the node.
 */
export async function runControl(run, graphs, n, ins, runGraph) {
  if (n.op === 'If') {
    const cond = await scalarOf(run, ins[0], n, 'the condition');
    const branch = n.attrs[cond ? 'then_branch' : 'else_branch']?.graph;
    if (branch === undefined) throw new TesseraError('internal', `webgpu: If "${n.name}": no branch graph in the graph JSON`);
    return runGraph(branch, ins.slice(1));
  }
  return n.op === 'Scan' ? runScan(run, graphs, n, ins, runGraph) : runLoop(run, graphs, n, ins, runGraph);
}

async function runScan(run, graphs, n, ins, runGraph) {
  const bodyIndex = n.attrs.body?.graph;
  if (bodyIndex === undefined) throw new TesseraError('internal', `webgpu: Scan "${n.name}": no body graph in the graph JSON`);
  const body = graphs[bodyIndex], a = n.attrs;
  const m = a.num_scan_inputs, captures = a.num_captures ?? 0;
  const count = ins.length - m - captures, scans = body.outputs.length - count;
  const fail = (msg) => new TesseraError('invalid_argument', `webgpu: Scan "${n.name}": ${msg}`);
  const xs = ins.slice(count, count + m);
  const axes = xs.map((x, j) => normalized(a.scan_input_axes?.[j] ?? 0, x.shape.length, () => fail(`scan_input_axes[${j}] is out of range for rank ${x.shape.length}`)));
  const len = xs.length ? xs[0].shape[axes[0]] : 0;
  xs.forEach((x, j) => { if (x.shape[axes[j]] !== len) throw fail(`scan input ${j} has length ${x.shape[axes[j]]} along its scan axis, scan input 0 has ${len}`); });
  if (len > kMaxLoopIterations) throw new TesseraError('resource_exhausted', `webgpu: Scan "${n.name}": a scan of ${len} iterations is over the limit of ${kMaxLoopIterations}`);
  const caps = ins.slice(count + m);
  let state = ins.slice(0, count);  // borrowed from the caller at first, then owned
  let owned = false;
  const stacks = Array.from({ length: scans }, () => []);
  try {
    for (let t = 0; t < len; t++) {
      const slices = [];
      for (let j = 0; j < m; j++) slices.push(await sliceAxis(run, xs[j], axes[j], a.scan_input_directions?.[j] === 1 ? len - 1 - t : t));
      let outs;
      try { outs = await runGraph(bodyIndex, [...state, ...slices, ...caps]); } finally { for (const v of slices) run.drop(v); }
      if (owned) for (const v of state) run.drop(v);
      [state, owned] = [outs.slice(0, count), true];
      outs.slice(count).forEach((v, k) => stacks[k].push(v));
    }
    const stacked = [];
    for (let k = 0; k < scans; k++) {
      const parts = a.scan_output_directions?.[k] === 1 ? [...stacks[k]].reverse() : stacks[k];
      stacked.push(await stack(run, parts, body.values[body.outputs[count + k]], n, count + k, a.scan_output_axes?.[k] ?? 0));
    }
    return [...ownedRecords(run, state, owned), ...stacked];
  } catch (e) {
    if (owned) for (const v of state) run.drop(v);
    throw e;
  } finally {
    for (const s of stacks) for (const v of s) run.drop(v);
  }
}

/** Carried values as records the caller owns: as they are once an iteration made them (owned),
 *  else (still the caller's borrowed inputs: no iteration ran) new records of the same values. */
function ownedRecords(run, vals, owned) {
  return vals.map((v) => (owned || !v ? v : v.gpu ? run.view(v, v.shape) : { shape: v.shape, t: v.t, constant: v.constant }));
}

function normalized(ax, rank, err) {
  const r = ax < 0 ? ax + rank : ax;
  if (r < 0 || r >= rank) throw err();
  return r;
}

const isF32 = (v) => (v.gpu ? true : v.t.type === 'float32');

/** Element `index` of value v along `axis` (that axis dropped): a new value record, on the GPU for
 *  a float32 value (a strided copy), else on the host. */
async function sliceAxis(run, v, axis, index) {
  const shape = v.shape.filter((_, d) => d !== axis), st = stridesOf(v.shape);
  if (isF32(v)) {
    const y = run.alloc(shape);
    if (prod(shape)) copy(run, v, y, shape, st.filter((_, d) => d !== axis), stridesOf(shape), index * st[axis]);
    return y;
  }
  const t = await run.host(v), outer = prod(v.shape.slice(0, axis)), inner = st[axis];
  const data = new kArray[t.type](prod(shape));
  for (let o = 0; o < outer; o++) data.set(t.data.subarray(o * v.shape[axis] * inner + index * inner, o * v.shape[axis] * inner + (index + 1) * inner), o * inner);
  return { shape, t: Tensor._from(t.type, data, shape) };
}

async function runLoop(run, graphs, n, ins, runGraph) {
  const bodyIndex = n.attrs.body?.graph;
  if (bodyIndex === undefined) throw new TesseraError('internal', `webgpu: Loop "${n.name}": no body graph in the graph JSON`);
  const body = graphs[bodyIndex];
  const captures = n.attrs.num_captures ?? 0;
  const count = ins.length - 2 - captures, scans = body.outputs.length - 1 - count;
  const trip = ins[0] ? await scalarOf(run, ins[0], n, 'M') : Infinity;
  let cond = ins[1] ? await scalarOf(run, ins[1], n, 'the condition') : true;
  const caps = ins.slice(2 + count);
  let carried = ins.slice(2, 2 + count);  // borrowed from the caller at first, then owned
  let owned = false;
  const stacks = Array.from({ length: scans }, () => []);
  try {
    for (let i = 0; i < trip && cond; i++) {
      if (i >= kMaxLoopIterations)
        throw new TesseraError('resource_exhausted', `webgpu: Loop "${n.name}": ran past the limit of ${kMaxLoopIterations} iterations`);
      const iter = { shape: [], t: Tensor._from('int64', BigInt64Array.of(BigInt(i)), []) };
      const c = { shape: [], t: Tensor._from('bool', Uint8Array.of(1), []) };
      const outs = await runGraph(bodyIndex, [iter, c, ...carried, ...caps]);
      if (owned) for (const v of carried) run.drop(v);
      [carried, owned] = [outs.slice(1, 1 + count), true];
      outs.slice(1 + count).forEach((v, k) => stacks[k].push(v));
      cond = await scalarOf(run, outs[0], n, `body output[0] (iteration ${i})`);
      run.drop(outs[0]);
    }
    const stacked = [];
    for (let k = 0; k < scans; k++) stacked.push(await stack(run, stacks[k], body.values[body.outputs[1 + count + k]], n, count + k, 0));
    return [...ownedRecords(run, carried, owned), ...stacked];
  } catch (e) {
    if (owned) for (const v of carried) run.drop(v);
    throw e;
  } finally {
    for (const s of stacks) for (const v of s) run.drop(v);
  }
}

/** The one element of value v (a bool or integer scalar), read back when it lives on the GPU. */
async function scalarOf(run, v, n, what) {
  const t = await run.host(v);
  if (!t || t.data.length !== 1)
    throw new TesseraError('invalid_argument', `webgpu: ${n.op} "${n.name}": ${what} must have one element, got ${t ? `[${t.dims}]` : 'none'}`);
  return typeof t.data[0] === 'bigint' ? Number(t.data[0]) : t.data[0];
}

/** Loop or Scan output `index`: the iterations' values stacked along a new axis `axis` (Loop: 0), on
 *  the GPU when they are float32 values there, else on the host. */
async function stack(run, parts, info, n, index, axis = 0) {
  const what = `webgpu: ${n.op} "${n.name}" output[${index}]`;
  const first = parts[0];
  const dims = first ? first.shape : (info.shape ?? []).map((d) => Math.max(d, 0));
  const ax = normalized(axis, dims.length + 1, () => new TesseraError('invalid_argument', `${what}: scan_output_axes ${axis} is out of range for rank ${dims.length + 1}`));
  const shape = [...dims.slice(0, ax), parts.length, ...dims.slice(ax)];
  if (parts.some((v) => v.shape.join() !== dims.join() || isF32(v) !== isF32(first)))
    throw new TesseraError('invalid_argument', `${what}: the iterations' scan values differ in shape or dtype`);
  const each = prod(dims), so = stridesOf(shape);
  if (first && first.gpu) {
    const y = run.alloc(shape), si = stridesOf(dims), sy = so.filter((_, d) => d !== ax);
    parts.forEach((v, i) => { if (each) copy(run, v, y, dims, si, sy, 0, i * so[ax]); });
    return y;
  }
  const ts = [];
  for (const v of parts) ts.push(await run.host(v));
  const type = ts.length ? ts[0].type : kDTypeName[info.dtype];
  if (ts.some((t) => t.type !== type)) throw new TesseraError('invalid_argument', `${what}: the iterations' scan values differ in shape or dtype`);
  const data = new kArray[type](each * ts.length);
  const outer = prod(dims.slice(0, ax)), inner = each / Math.max(outer, 1);
  ts.forEach((t, i) => { for (let o = 0; o < outer; o++) data.set(t.data.subarray(o * inner, (o + 1) * inner), (o * ts.length + i) * inner); });
  return { shape, t: Tensor._from(type, data, shape) };
}

/** graph (tsrw_model_graph's JSON) and its subgraphs as one array indexed as the model's graphs. */
export function graphsOf(graph) {
  return (graph.graphs ?? [null]).map((g, i) => (i === 0 ? graph : g));
}

/** tessera inspect --placement's object: {nodes: [{graph, node, op, name, device}], copies}, the
 *  main graph's nodes then each subgraph's (graph: its index in the model). place[gi][k]: node k
 *  of graph gi's device (If, Loop and Scan run on the host: 'wasm'). copies counts the values that cross
 *  between the devices in a run (graph inputs and constants start on the wasm side; constants are
 *  uploaded once, not counted; graph outputs end there; Shape reads no data; a condition is read
 *  back when it lives on the GPU; a subgraph's inputs live where the node's inputs do, each
 *  subgraph counted once as if it ran, an If's outputs taken to live where its then branch leaves
 *  them, a Loop's or Scan's where its body leaves them). */
export function placementOf(graph, place) {
  const graphs = graphsOf(graph);
  const crossing = new Set();  // "graph:value"
  const visit = (gi, inputHomes) => {
    const g = graphs[gi], pl = place[gi];
    const home = new Array(g.values.length).fill('wasm');
    g.inputs.forEach((id, j) => { home[id] = inputHomes[j] ?? 'wasm'; });
    const fixed = (id) => g.values[id].constant || home[id] === 'constant';
    const of = (id) => (id < 0 ? 'wasm' : fixed(id) ? 'constant' : home[id]);
    g.nodes.forEach((n, k) => {
      let outHomes = null;
      if (n.op === 'If') {
        const caps = n.inputs.slice(1).map(of);
        outHomes = visit(n.attrs.then_branch.graph, caps);
        visit(n.attrs.else_branch.graph, caps);
      } else if (n.op === 'Loop') {
        outHomes = visit(n.attrs.body.graph, ['wasm', 'wasm', ...n.inputs.slice(2).map(of)]).slice(1);
      } else if (n.op === 'Scan') {  // a float32 scan input's slices are made where it lives
        outHomes = visit(n.attrs.body.graph, n.inputs.map(of));
      }
      if (kControlOps.has(n.op)) {
        n.inputs.slice(0, { If: 1, Loop: 2, Scan: 0 }[n.op]).forEach((id) => { if (id >= 0 && home[id] === 'webgpu' && !fixed(id)) crossing.add(`${gi}:${id}`); });
      } else {
        n.inputs.forEach((id) => { if (id >= 0 && !fixed(id) && home[id] !== pl[k] && n.op !== 'Shape') crossing.add(`${gi}:${id}`); });
      }
      n.outputs.forEach((id, j) => { if (id >= 0) home[id] = outHomes ? (outHomes[j] === 'constant' ? 'wasm' : outHomes[j]) : pl[k]; });
    });
    return g.outputs.map((id) => (g.values[id].constant ? 'constant' : home[id]));
  };
  visit(0, graphs[0].inputs.map(() => 'wasm')).forEach((h, j) => { if (h === 'webgpu') crossing.add(`0:${graph.outputs[j]}`); });
  const nodes = graphs.flatMap((g, gi) => g.nodes.map((n, k) => ({ graph: gi, node: k, op: n.op, name: n.name, device: place[gi][k] })));
  return { nodes, copies: crossing.size };
}
