// Control flow of the WebGPU layer (webgpu.mjs GpuModel): If and Loop run by the layer itself, their
// subgraphs node by node on the same per-node placement. A subgraph reads outer values only
// through its inputs (core/ops/families/control_flow.cpp): If's inputs are (cond, captures...), its
// branches take (captures...); Loop's are (M?, cond?, v_initial[N]..., captures[C]...), its body
// takes (iter_num, cond, v[N]..., captures...) and gives (cond, v[N]..., scan[K]...).
import { TesseraError } from './errors.mjs';
import { Tensor, kDTypeName, kArray } from './tensor.mjs';

/** Iterations of one Loop before it fails with resource_exhausted (the wasm session's default,
 *  core/base/limits.h kDefaultMaxLoopIterations): a runaway loop fails instead of hanging. */
export const kMaxLoopIterations = 1000000;

/** The ops run here rather than as a node. */
export const kControlOps = new Set(['If', 'Loop']);

/**
 * Runs control-flow node n (an If or a Loop) on the value records `ins` (borrowed).
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
  return runLoop(run, graphs, n, ins, runGraph);
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
    for (let k = 0; k < scans; k++) stacked.push(await stack(run, stacks[k], body.values[body.outputs[1 + count + k]], n, count + k));
    // Carried values still borrowed (no iteration ran) come back as the caller's own records.
    return [...carried.map((v) => (owned || !v ? v : v.gpu ? run.view(v, v.shape) : { shape: v.shape, t: v.t, constant: v.constant })), ...stacked];
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

/** Loop scan output `index`: the iterations' values stacked along a new first axis, on the host. */
async function stack(run, parts, info, n, index) {
  const ts = [];
  for (const v of parts) ts.push(await run.host(v));
  const dims = ts.length ? ts[0].dims : (info.shape ?? []).map((d) => Math.max(d, 0));
  const type = ts.length ? ts[0].type : kDTypeName[info.dtype];
  if (ts.some((t) => t.type !== type || t.dims.join() !== dims.join()))
    throw new TesseraError('invalid_argument', `webgpu: Loop "${n.name}" output[${index}]: the iterations' scan values differ in shape or dtype`);
  const each = dims.reduce((a, b) => a * b, 1);
  const data = new kArray[type](each * ts.length);
  ts.forEach((t, i) => data.set(t.data, i * each));
  const shape = [ts.length, ...dims];
  return { shape, t: Tensor._from(type, data, shape) };
}

/** graph (tsrw_model_graph's JSON) and its subgraphs as one array indexed as the model's graphs. */
export function graphsOf(graph) {
  return (graph.graphs ?? [null]).map((g, i) => (i === 0 ? graph : g));
}

/** tessera inspect --placement's object: {nodes: [{graph, node, op, name, device}], copies}, the
 *  main graph's nodes then each subgraph's (graph: its index in the model). place[gi][k]: node k
 *  of graph gi's device (If and Loop run on the host: 'wasm'). copies counts the values that cross
 *  between the devices in a run (graph inputs and constants start on the wasm side; constants are
 *  uploaded once, not counted; graph outputs end there; Shape reads no data; a condition is read
 *  back when it lives on the GPU; a subgraph's inputs live where the node's inputs do, each
 *  subgraph counted once as if it ran, an If's outputs taken to live where its then branch leaves
 *  them, a Loop's scan outputs on the host). */
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
        const count = n.inputs.length - 2 - (n.attrs.num_captures ?? 0);
        outHomes = visit(n.attrs.body.graph, ['wasm', 'wasm', ...n.inputs.slice(2).map(of)]).slice(1);
        outHomes = outHomes.map((h, j) => (j < count ? h : 'wasm'));
      }
      if (kControlOps.has(n.op)) {
        n.inputs.slice(0, n.op === 'If' ? 1 : 2).forEach((id) => { if (id >= 0 && home[id] === 'webgpu' && !fixed(id)) crossing.add(`${gi}:${id}`); });
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
