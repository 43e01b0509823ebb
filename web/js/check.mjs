// run(feeds, {checkAgainst: 'cpu'}): the comparison of a WebGPU run with a wasm (CPU) run of the
// same model, node output by node output in execution order, with the semantics and the words of
// `tessera run --check-against cpu` (tools/cli/cmd_placement.cpp): tensors of another dtype or
// shape differ; float32 tensors differ where |device - cpu| > atol + rtol * |cpu| for some
// element, or where one is NaN and the other is not; other dtypes are compared by dtype and shape
// only. Loaded with webgpu.mjs.
import { argError } from './errors.mjs';

/** The CLI's tolerance. */
export const kCheckTolerance = Object.freeze({ atol: 1e-4, rtol: 1e-4 });

/** options.checkTolerance {atol?, rtol?} -> {atol, rtol} (the CLI's 1e-4 each by default). */
export function checkTolerance(given) {
  if (given === undefined) return { ...kCheckTolerance };
  if (given === null || typeof given !== 'object') throw argError('run(): checkTolerance must be an object {atol, rtol}');
  const tol = { ...kCheckTolerance, ...given };
  for (const k of ['atol', 'rtol'])
    if (typeof tol[k] !== 'number' || !(tol[k] >= 0)) throw argError(`run(): checkTolerance.${k} must be a number >= 0, got ${JSON.stringify(given[k])}`);
  return { atol: tol.atol, rtol: tol.rtol };
}

/** The report of a model that runs on wasm: the reference is the CPU path itself. */
export function wasmReport(tolerance) {
  return {
    against: 'cpu', ok: true, compared: 0, tolerance, firstDivergence: null,
    message: 'check-against cpu: the model runs on wasm, the CPU path itself: nothing to compare',
  };
}

/**
 * The report of check(): device and cpu are [{graph, node, value, t: Tensor}] in execution order
 * (the same nodes in both: a subgraph's nodes where an If or a Loop ran them). graphs: tsrw_model_graph's JSON
 * and its subgraphs, indexed as the model's graphs; place[graph][node]: each node's device.
 */
export function compareProbes(graphs, place, device, cpu, tolerance) {
  const { atol, rtol } = tolerance;
  for (let i = 0; i < device.length; i++) {
    const x = device[i].t, y = cpu[i].t, gi = device[i].graph ?? 0, k = device[i].node, g = graphs[gi], n = g.nodes[k];
    const divergence = {
      graph: gi, node: k, op: n.op, name: n.name, output: g.values[device[i].value].name, device: place[gi][k],
      dtype: x.type, shape: x.dims, cpuDtype: y.type, cpuShape: y.dims, maxAbs: null, relL2: null,
    };
    const where = `graph[${gi}] node[${k}] ${n.op} "${n.name}" output "${divergence.output}"`;
    if (x.type !== y.type || x.dims.length !== y.dims.length || x.dims.some((d, j) => d !== y.dims[j]))
      return report(false, i + 1, tolerance, divergence, `${where}: ${x.type}[${x.dims}] vs cpu ${y.type}[${y.dims}]`);
    if (x.type !== 'float32') continue;
    let worst = 0, bad = false, num = 0, den = 0;
    for (let e = 0; e < x.data.length; e++) {
      const u = x.data[e], v = y.data[e], err = Math.abs(u - v);
      if (Number.isNaN(u) !== Number.isNaN(v)) [bad, worst] = [true, Infinity];
      if (err > worst) worst = err;
      if (err > atol + rtol * Math.abs(v)) bad = true;
      num += (u - v) ** 2; den += v * v;
    }
    if (bad) {
      divergence.maxAbs = worst;
      divergence.relL2 = Math.sqrt(num / Math.max(den, 1e-30));
      return report(false, i + 1, tolerance, divergence, `${where}: max abs error ${worst} (tolerance ${atol} + ${rtol} * |cpu|)`);
    }
  }
  const sub = device.filter((p) => p.graph).length;
  return report(true, device.length, tolerance, null,
    `all ${device.length} node outputs of graph[0]${sub ? ` and its subgraphs (${sub} of them there)` : ''} agree within atol ${atol}, rtol ${rtol} (${graphs[0].outputs.length} model outputs)`);
}

function report(ok, compared, tolerance, firstDivergence, text) {
  return { against: 'cpu', ok, compared, tolerance, firstDivergence, message: `check-against cpu: ${ok ? '' : 'first difference at '}${text}` };
}
