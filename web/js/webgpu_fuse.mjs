// Epilogue fusion of the WebGPU layer (webgpu.mjs): a Conv whose output's only consumer is an
// activation (K.kFusedActs: Relu, Sigmoid, Clip with constant bounds, ...) placed on webgpu runs
// it in its own kernel's epilogue, and the activation node becomes a view of the Conv's output: one
// dispatch and one pass over the tensor fewer (a Max / Min with a one-element constant after the
// activation too). Placement is unchanged (both nodes stay 'webgpu').
// Not applied in run({checkAgainst}) passes (each node's own output is compared there), nor when
// the Conv falls back to wasm at run time (the activation then runs as itself).
import { kFusedActs } from './webgpu_kernels.mjs';

/**
 * Per graph of `graphs`, a Map from a Conv node's index to the indices of the nodes fused into it:
 * [activation] or [activation, Max/Min with a one-element constant]. place: per graph, per node
 * 'webgpu' | 'wasm'.
 */
export function fusionsOf(graphs, place) {
  return graphs.map((g, gi) => {
    const users = new Map();  // value id -> consumer node indices (graph outputs count as -1)
    g.nodes.forEach((n, k) => n.inputs.forEach((id) => { if (id >= 0) users.set(id, [...(users.get(id) ?? []), k]); }));
    for (const id of g.outputs) users.set(id, [...(users.get(id) ?? []), -1]);
    const fused = new Map();
    g.nodes.forEach((n, k) => {
      if (n.op !== 'Conv' || place[gi][k] !== 'webgpu' || n.outputs.length !== 1) return;
      const u = users.get(n.outputs[0]) ?? [];
      if (u.length !== 1 || u[0] < 0) return;
      const a = g.nodes[u[0]];
      if (place[gi][u[0]] !== 'webgpu' || !kFusedActs.includes(a.op) || a.inputs[0] !== n.outputs[0]) return;
      if (a.inputs.slice(1).some((id) => id >= 0 && !g.values[id].constant)) return;  // Clip's bounds: constants only
      const chain = [u[0]];
      // Then a Max / Min with a constant of one element (a floor / ceiling, as openWakeWord's).
      const v = users.get(a.outputs[0]) ?? [];
      const b = v.length === 1 && v[0] >= 0 ? g.nodes[v[0]] : null;
      if (b && place[gi][v[0]] === 'webgpu' && (b.op === 'Max' || b.op === 'Min') && b.inputs.length === 2) {
        const other = g.values[b.inputs[b.inputs[0] === a.outputs[0] ? 1 : 0]];
        const rank = g.values[n.inputs[0]].shape?.length;
        if (other.constant && other.shape && prod(other.shape) === 1 && rank !== undefined && other.shape.length <= rank) chain.push(v[0]);
      }
      fused.set(k, chain);
    });
    return fused;
  });
}

const prod = (s) => s.reduce((x, y) => x * y, 1);

/** The {op, a, b, floor?, ceil?} a chain of fused nodes (fusionsOf's) applies; constant(id): the
 *  host Tensor of constant value id. */
export function chainOf(nodes, constant) {
  const act = actOf(nodes[0], constant);
  if (nodes[1]) {
    const b = nodes[1], c = Number(constant(b.inputs[b.inputs[0] === nodes[0].outputs[0] ? 1 : 0]).data[0]);
    act[b.op === 'Max' ? 'floor' : 'ceil'] = c;
  }
  return act;
}

/** The {op, a, b} an activation node `n` applies (a, b: kUnary's parameters); constant(id): the
 *  host Tensor of constant value id (Clip's bounds). */
function actOf(n, constant) {
  const bound = (id, d) => (id >= 0 && id !== undefined ? Number(constant(id).data[0]) : d);
  switch (n.op) {
    case 'LeakyRelu': return { op: n.op, a: n.attrs.alpha ?? 0.01, b: 0 };
    case 'HardSigmoid': return { op: n.op, a: n.attrs.alpha ?? 0.2, b: n.attrs.beta ?? 0.5 };
    case 'Clip': return { op: n.op, a: bound(n.inputs[1], -3.402823e38), b: bound(n.inputs[2], 3.402823e38) };
    default: return { op: n.op, a: 0, b: 0 };
  }
}
