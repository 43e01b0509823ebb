// Epilogue fusion of the WebGPU layer (webgpu.mjs): a Conv whose output's only consumer is an
// activation (K.kFusedActs: Relu, Sigmoid, Clip with constant bounds, ...) placed on webgpu runs
// it in its own kernel's epilogue, and the activation node becomes a view of the Conv's output: one
// dispatch and one pass over the tensor fewer (a Max / Min with a one-element constant after the
// activation too). A residual Add first (Conv -> Add(other) -> activation?, as BlazeFace's blocks)
// is taken into the tiled GEMM's epilogue (1x1 and implicit-GEMM convs of 8 output channels or
// more) when `other` has the Conv output's static shape and is computed before the Conv.
// Placement is unchanged (every node stays 'webgpu').
// Not applied in run({checkAgainst}) passes (each node's own output is compared there), nor when
// the Conv falls back to wasm at run time (the nodes then run as themselves).
import { kFusedActs } from './webgpu_kernels.mjs';

/**
 * Per graph of `graphs`, a Map from a Conv node's index to the indices of the nodes fused into it:
 * [Add?, activation?, Max/Min with a one-element constant (after an activation)?], at least one.
 * place: per graph, per node 'webgpu' | 'wasm'.
 */
export function fusionsOf(graphs, place) {
  return graphs.map((g, gi) => {
    const users = new Map();  // value id -> consumer node indices (graph outputs count as -1)
    const producer = new Map();  // value id -> node index
    g.nodes.forEach((n, k) => {
      n.inputs.forEach((id) => { if (id >= 0) users.set(id, [...(users.get(id) ?? []), k]); });
      n.outputs.forEach((id) => { if (id >= 0) producer.set(id, k); });
    });
    for (const id of g.outputs) users.set(id, [...(users.get(id) ?? []), -1]);
    const onlyUser = (id) => { const u = users.get(id) ?? []; return u.length === 1 && u[0] >= 0 && place[gi][u[0]] === 'webgpu' ? u[0] : -1; };
    const staticShape = (id) => (g.values[id].shape && g.values[id].shape.every((d) => d >= 0) ? g.values[id].shape.join() : null);
    const fused = new Map();
    g.nodes.forEach((n, k) => {
      if (n.op !== 'Conv' || place[gi][k] !== 'webgpu' || n.outputs.length !== 1) return;
      const chain = [];
      let out = n.outputs[0], next = onlyUser(out);
      // A residual Add on the tiled GEMM (group 1, >= 8 output channels): the other operand of the
      // same static shape, ready before the Conv runs.
      const w = g.values[n.inputs[1]].shape;
      if (next >= 0 && g.nodes[next].op === 'Add' && (n.attrs.group ?? 1) === 1 && w?.[0] >= 8) {
        const add = g.nodes[next], other = add.inputs[add.inputs[0] === out ? 1 : 0];
        const shape = staticShape(out);
        if (add.inputs.length === 2 && other !== out && shape && staticShape(other) === shape && (producer.get(other) ?? -1) < k) {
          chain.push(next);
          out = add.outputs[0];
          next = onlyUser(out);
        }
      }
      const a = next >= 0 ? g.nodes[next] : null;
      if (a && kFusedActs.includes(a.op) && a.inputs[0] === out && !a.inputs.slice(1).some((id) => id >= 0 && !g.values[id].constant)) {
        chain.push(next);  // Clip's bounds: constants only
        // Then a Max / Min with a constant of one element (a floor / ceiling, as openWakeWord's).
        const v = onlyUser(a.outputs[0]);
        const b = v >= 0 ? g.nodes[v] : null;
        if (b && (b.op === 'Max' || b.op === 'Min') && b.inputs.length === 2) {
          const other = g.values[b.inputs[b.inputs[0] === a.outputs[0] ? 1 : 0]];
          const rank = g.values[n.inputs[0]].shape?.length;
          if (other.constant && other.shape && prod(other.shape) === 1 && rank !== undefined && other.shape.length <= rank) chain.push(v);
        }
      }
      if (chain.length) fused.set(k, chain);
    });
    return fused;
  });
}

const prod = (s) => s.reduce((x, y) => x * y, 1);

/** The {op, a, b, floor?, ceil?, res?} a chain of fused nodes (fusionsOf's) applies; conv: the
 *  Conv's output value id; constant(id): the host Tensor of constant value id; value(id): the
 *  value record of id in the run (res: the residual Add's other operand). */
export function chainOf(nodes, conv, constant, value) {
  let res;
  if (nodes[0].op === 'Add') {
    res = value(nodes[0].inputs[nodes[0].inputs[0] === conv ? 1 : 0]);
    conv = nodes[0].outputs[0];
    nodes = nodes.slice(1);
  }
  const act = nodes.length ? actOf(nodes[0], constant) : { op: null, a: 0, b: 0 };
  if (nodes[1]) {
    const b = nodes[1], c = Number(constant(b.inputs[b.inputs[0] === nodes[0].outputs[0] ? 1 : 0]).data[0]);
    act[b.op === 'Max' ? 'floor' : 'ceil'] = c;
  }
  if (res) act.res = res;
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
