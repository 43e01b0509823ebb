// The ops the WebGPU layer (webgpu.mjs) runs, float32 only: per op, the output shapes (ONNX
// semantics, from the actual input shapes at run time), the kernel and its parameters. kGpuOps[op]:
//   host: input positions read on the host (shapes, axes, Clip bounds: any dtype, any device);
//   ok(node, graph): whether this node can run here (attributes, constant inputs), else wasm;
//   run(run, node, inputs, cache) -> outputs: value records (webgpu.mjs Run).
import { TesseraError } from './errors.mjs';
import * as K from './webgpu_kernels.mjs';
import { onWasm } from './webgpu.mjs';

export const prod = (s) => s.reduce((a, b) => a * b, 1);
/** Row-major strides of a shape, in elements. */
export const stridesOf = (s) => { const r = new Array(s.length); for (let k = s.length - 1, x = 1; k >= 0; x *= s[k--]) r[k] = x; return r; };
const f32bits = (x) => new Uint32Array(new Float32Array([x]).buffer)[0];
const axis = (a, r) => (a < 0 ? a + r : a);
const ints = async (run, v) => (v ? Array.from((await run.host(v)).data, Number) : null);
const fail = (n, msg) => new TesseraError('invalid_argument', `webgpu: ${n.op} "${n.name}": ${msg}`);

/** Numpy-style broadcast of two shapes. */
function broadcast(n, a, b) {
  const r = Math.max(a.length, b.length), out = [];
  for (let k = 0; k < r; k++) {
    const x = a[k - r + a.length] ?? 1, y = b[k - r + b.length] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw fail(n, `shapes [${a}] and [${b}] do not broadcast`);
    out.push(x === 1 ? y : x);
  }
  return out;
}
/** Strides of `shape` read as broadcast to `out` (0 where it repeats). */
function bstrides(shape, out) {
  const s = stridesOf(shape);
  return out.map((d, k) => { const j = k - out.length + shape.length; return j < 0 || shape[j] === 1 ? 0 : s[j]; });
}

function binary(op) {
  return {
    ok: (n) => n.inputs.length === 2,
    run(run, n, [a, b]) {
      const shape = broadcast(n, a.shape, b.shape);
      const y = run.alloc(shape);
      run.elements(K.binaryKernel(op), [run.buf(a), run.buf(b), y.gpu.store.buf,
        run.params([prod(shape), shape.length, ...shape, ...bstrides(a.shape, shape), ...bstrides(b.shape, shape)])], prod(shape));
      return [y];
    },
  };
}

function unary(op, params = () => [0, 0]) {
  return {
    host: op === 'Clip' ? [1, 2] : [],
    ok: (n) => (n.op !== 'Gelu' || ['none', 'tanh'].includes(n.attrs.approximate ?? 'none')),
    async run(run, n, [x, ...rest]) {
      const [a, b] = await params(n, run, rest);
      const kop = n.op === 'Gelu' && n.attrs.approximate === 'tanh' ? 'GeluTanh' : op;
      const y = run.alloc(x.shape);
      run.elements(K.unaryKernel(kop), [run.buf(x), y.gpu.store.buf, run.params([prod(x.shape), f32bits(a), f32bits(b)])], prod(x.shape));
      return [y];
    },
  };
}

// The importer gives every node opset-17 semantics (tools/onnx/onnx_normalize.cpp: Clip's min/max
// attributes become inputs, old Softmax a Flatten/Softmax/Reshape), whatever node.version says.
async function clipBounds(n, run, [lo, hi]) {
  const v = async (t, d) => (t ? Number((await run.host(t)).data[0]) : d);
  return [await v(lo, -3.402823e38), await v(hi, 3.402823e38)];
}

/** A strided copy of region `dims` (see K.copyKernel) from x into y. */
export function copy(run, x, y, dims, si, so, inOff = 0, outOff = 0) {
  run.elements(K.copyKernel(), [run.buf(x), y.gpu.store.buf, run.params([prod(dims), dims.length, inOff, outOff, ...dims, ...si, ...so])], prod(dims));
}

/** An act's ({op, a, b, floor?, ceil?}: see gemm()) four kernel parameters: a, b, lo, hi. */
const actParams = (act) => [act?.a ?? 0, act?.b ?? 0, act?.floor ?? 0, act?.ceil ?? 0];

/** Rows per invocation of the tiled GEMM for M rows: 64-row tiles (4 a thread) where M fills them. */
const tileRows = (M) => (M >= 64 ? 4 : 2);

/** The tiled GEMM's WGSL for M rows and act (a residual alone puts no act_ in the code: a flag). */
function tiledCode(conv, M, act) {
  const applies = act && (act.op || act.floor !== undefined || act.ceil !== undefined);
  return K.gemmKernel(conv, tileRows(M), applies ? act : null);
}

/** Batched matmul / Gemm on the tiled kernel (conv: the implicit-GEMM convolution's parameters;
 *  act: {op, a, b, floor?, ceil?, res?}, applied to each output: webgpu_fuse.mjs chainOf; res: a
 *  value record of outShape added before the activation, only on the tiled path (M >= 8 or conv)). */
function gemm(run, a, b, c, { M, N, Kd, ta, tb, alpha, beta, offs, outShape, cm = 0, cn = 0, conv = null, act = null }) {
  const y = run.alloc(outShape);
  if (prod(outShape) === 0) return y;
  const u = new Uint32Array(16);
  u.set([M, N, Kd, ta, tb, c ? 1 : 0, cm, cn]);
  new Float32Array(u.buffer).set([alpha, beta, ...actParams(act)], 8);
  u[14] = act?.res ? 1 : 0;
  const nb = offs.length / 2;
  const tm = tileRows(M), code = tiledCode(!!conv, M, act);
  if (nb > 65535 || Math.ceil(M / (16 * tm)) > 65535 || Math.ceil(N / 64) > 65535) throw onWasm(`a ${nb} x ${M} x ${N} matmul is over the dispatch limits`);
  if (act?.res && (act.res.shape.join() !== outShape.join() || M < 8 && !conv))
    throw new TesseraError('internal', `webgpu: a residual of shape [${act.res.shape}] fused into a [${outShape}] GEMM`);
  const A = run.buf(a);
  // Few rows, or the tiled kernel not compiled yet (Run.compiled): one invocation per output. A
  // residual takes the tiled kernel (the other has no binding for it).
  if ((M < 8 && !conv) || (!conv && !act?.res && !run.compiled(code))) {
    run.elements(K.gemvKernel(act), [A, run.buf(b), c ? run.buf(c) : A, y.gpu.store.buf,
      run.params([nb * M * N, M, N, Kd, ta, tb, c ? 1 : 0, cm, cn, f32bits(alpha), f32bits(beta), ...actParams(act).map(f32bits)]),
      run.params(offs)], nb * M * N);
    return y;
  }
  run.dispatch(code, [A, run.buf(b), c ? run.buf(c) : A, y.gpu.store.buf, run.uniform(u), run.params(offs),
    ...(conv ? [run.params(conv)] : []), act?.res ? run.buf(act.res) : A],
    [Math.ceil(N / 64), Math.ceil(M / (16 * tm)), nb]);
  return y;
}

function matmul(run, n, a, b) {
  let sa = a.shape, sb = b.shape;
  if (sa.length === 0 || sb.length === 0) throw fail(n, 'MatMul of a scalar');
  const va = sa.length === 1, vb = sb.length === 1;
  if (va) sa = [1, sa[0]];
  if (vb) sb = [sb[0], 1];
  const [M, Kd] = sa.slice(-2), [K2, N] = sb.slice(-2);
  if (Kd !== K2) throw fail(n, `inner dims differ: [${a.shape}] x [${b.shape}]`);
  const ba = sa.slice(0, -2), bb = sb.slice(0, -2), bo = broadcast(n, ba, bb);
  const ta = bstrides(ba, bo), tb = bstrides(bb, bo), offs = [];
  const nb = prod(bo), bs = stridesOf(bo);
  for (let i = 0; i < nb; i++) {
    let oa = 0, ob = 0;
    for (let k = 0; k < bo.length; k++) { const c = Math.floor(i / bs[k]) % bo[k]; oa += c * ta[k]; ob += c * tb[k]; }
    offs.push(oa * M * Kd, ob * Kd * N);
  }
  const out = [...bo, ...(va ? [] : [M]), ...(vb ? [] : [N])];
  return gemm(run, a, b, null, { M, N, Kd, ta: 0, tb: 0, alpha: 1, beta: 0, offs, outShape: out });
}

/** Conv / pool geometry over the spatial dims: [out dims, begin pads]. */
function spatial(n, inDims, kernel, { ceil = false } = {}) {
  const r = inDims.length;
  const st = n.attrs.strides ?? new Array(r).fill(1), dil = n.attrs.dilations ?? new Array(r).fill(1);
  let pads = n.attrs.pads ?? new Array(2 * r).fill(0);
  const auto = n.attrs.auto_pad ?? 'NOTSET';
  if (auto === 'SAME_UPPER' || auto === 'SAME_LOWER') {
    pads = new Array(2 * r).fill(0);
    for (let k = 0; k < r; k++) {
      const total = Math.max(0, (Math.ceil(inDims[k] / st[k]) - 1) * st[k] + (kernel[k] - 1) * dil[k] + 1 - inDims[k]);
      pads[k] = auto === 'SAME_UPPER' ? Math.floor(total / 2) : Math.ceil(total / 2);
      pads[k + r] = total - pads[k];
    }
  } else if (auto === 'VALID') pads = new Array(2 * r).fill(0);
  const out = inDims.map((d, k) => {
    const span = d + pads[k] + pads[k + r] - ((kernel[k] - 1) * dil[k] + 1);
    let o = (ceil ? Math.ceil(span / st[k]) : Math.floor(span / st[k])) + 1;
    if (ceil && (o - 1) * st[k] >= d + pads[k]) o--;
    return o;
  });
  return { out, pads: pads.slice(0, r), st, dil };
}

/** [N, C, H, W] of a 3-D (1-D spatial) or 4-D tensor shape, and a spatial geometry as 2-D. */
const as2d = (s) => (s.length === 3 ? [s[0], s[1], 1, s[2]] : s);
const geo2d = (g) => (g.out.length === 1 ? { out: [1, g.out[0]], pads: [0, g.pads[0]], st: [1, g.st[0]], dil: [1, g.dil[0]] } : g);

function pool(max, global) {
  return {
    ok: (n, g) => (n.outputs.length < 2 || n.outputs[1] < 0) && [null, 3, 4].includes(g.values[n.inputs[0]].shape?.length ?? null),
    run(run, n, [x]) {
      if (x.shape.length !== 4 && x.shape.length !== 3) throw onWasm(`${n.op} of rank ${x.shape.length} (1-D and 2-D pooling only)`);
      const sp = x.shape.slice(2);
      const kernel = global ? sp : n.attrs.kernel_shape;
      const g = geo2d(global ? { out: sp.map(() => 1), pads: sp.map(() => 0), st: sp.map(() => 1), dil: sp.map(() => 1) }
        : spatial(n, sp, kernel, { ceil: (n.attrs.ceil_mode ?? 0) === 1 }));
      const [N, C, H, W] = as2d(x.shape), [KH, KW] = kernel.length === 1 ? [1, kernel[0]] : kernel;
      const shape = [N, C, ...(x.shape.length === 3 ? [g.out[1]] : g.out)];
      const y = run.alloc(shape);
      run.elements(K.poolKernel(max), [run.buf(x), y.gpu.store.buf, run.params([prod(shape), H, W, g.out[0], g.out[1], KH, KW,
        g.st[0], g.st[1], g.pads[0], g.pads[1], g.dil[0], g.dil[1], n.attrs.count_include_pad ?? 0])], prod(shape));
      return [y];
    },
  };
}

function reduce(mode) {
  return {
    host: [1],
    async run(run, n, [x, axesIn]) {
      const r = x.shape.length;
      let axes = n.attrs.axes ?? (await ints(run, axesIn));
      if (!axes || axes.length === 0) axes = (n.attrs.noop_with_empty_axes ?? 0) ? [] : [...x.shape.keys()];
      axes = axes.map((a) => axis(a, r));
      const kept = x.shape.map((d, k) => (axes.includes(k) ? 1 : d));
      const red = axes.map((k) => x.shape[k]), st = stridesOf(x.shape);
      const shape = (n.attrs.keepdims ?? 1) ? kept : x.shape.filter((_, k) => !axes.includes(k));
      const y = run.alloc(shape);
      run.elements(K.reduceKernel(), [run.buf(x), y.gpu.store.buf, run.params([prod(kept), r, prod(red), red.length, mode,
        ...kept, ...st, ...red, ...axes.map((k) => st[k])])], prod(kept));
      return [y];
    },
  };
}

/** Reshape-like ops: the output shares the input's buffer. view: true, so that webgpu.mjs also runs
 *  them on host tensors of any numeric dtype (shape arithmetic) in JS instead of on wasm. */
const view = (shapeOf, host = []) => ({ host, view: true, async run(run, n, ins) { return [run.view(ins[0], await shapeOf(run, n, ins))]; } });

async function reshapeTo(run, n, [x, s]) {
  const want = await ints(run, s), size = prod(x.shape);
  const shape = want.map((d, k) => (d === 0 && !(n.attrs.allowzero ?? 0) ? x.shape[k] : d));
  const i = shape.indexOf(-1);
  if (i >= 0) shape[i] = size / prod(shape.filter((d) => d !== -1));
  if (prod(shape) !== size || !shape.every(Number.isInteger)) throw fail(n, `cannot reshape [${x.shape}] to [${want}]`);
  return shape;
}

async function squeezeTo(run, n, [x, a]) {
  const axes = (n.attrs.axes ?? (await ints(run, a)))?.map((k) => axis(k, x.shape.length));
  return x.shape.filter((d, k) => (axes ? !axes.includes(k) : d !== 1));
}

async function unsqueezeTo(run, n, [x, a]) {
  const axes = n.attrs.axes ?? (await ints(run, a)), r = x.shape.length + axes.length;
  const at = new Set(axes.map((k) => axis(k, r)));
  const src = [...x.shape], out = [];
  for (let k = 0; k < r; k++) out.push(at.has(k) ? 1 : src.shift());
  return out;
}

// Resize's coordinate_transformation_mode values the kernel has, in its order.
const kCtm = ['half_pixel', 'pytorch_half_pixel', 'asymmetric', 'align_corners'];

export const kGpuOps = {
  ...Object.fromEntries(Object.keys(K.kBinary).map((op) => [op, binary(op)])),
  ...Object.fromEntries(['Relu', 'Sigmoid', 'Tanh', 'Erf', 'Exp', 'Neg', 'Abs', 'Sqrt', 'Reciprocal', 'Log', 'Floor', 'Ceil',
    'Sin', 'Cos', 'Gelu', 'HardSwish', 'Softplus', 'Sign'].map((op) => [op, unary(op)])),
  LeakyRelu: unary('LeakyRelu', (n) => [n.attrs.alpha ?? 0.01, 0]),
  HardSigmoid: unary('HardSigmoid', (n) => [n.attrs.alpha ?? 0.2, n.attrs.beta ?? 0.5]),
  Elu: unary('Elu', (n) => [n.attrs.alpha ?? 1, 0]),
  Selu: unary('Selu', (n) => [n.attrs.alpha ?? 1.67326319217681884765625, n.attrs.gamma ?? 1.05070102214813232421875]),
  Clip: unary('Clip', clipBounds),
  Identity: view(async (run, n, [x]) => x.shape),
  // float32 to float32 (other Casts have another dtype on one side: wasm); not a host view.
  Cast: { ok: (n) => n.attrs.to === 1, run: (run, n, [x]) => [run.view(x, x.shape)] },
  Reshape: view(reshapeTo, [1]),
  Flatten: view(async (run, n, [x]) => {
    const a = axis(n.attrs.axis ?? 1, x.shape.length);
    return [prod(x.shape.slice(0, a)), prod(x.shape.slice(a))];
  }),
  Squeeze: view(squeezeTo, [1]),
  Unsqueeze: view(unsqueezeTo, [1]),
  MatMul: { run: (run, n, [a, b]) => [matmul(run, n, a, b)] },
  Gemm: {
    run(run, n, [a, b, c]) {
      const ta = n.attrs.transA ?? 0, tb = n.attrs.transB ?? 0;
      const [M, Kd] = ta ? [a.shape[1], a.shape[0]] : a.shape, N = tb ? b.shape[0] : b.shape[1];
      let cm = 0, cn = 0;
      if (c) {
        const cs = c.shape;
        cn = cs.length >= 1 && cs[cs.length - 1] === N && N > 1 ? 1 : 0;
        cm = cs.length === 2 && cs[0] === M && M > 1 ? cs[1] : 0;
      }
      return [gemm(run, a, b, c, { M, N, Kd, ta, tb, alpha: n.attrs.alpha ?? 1, beta: n.attrs.beta ?? 1, offs: [0, 0], outShape: [M, N], cm, cn })];
    },
  },
  Softmax: softmax(false),
  LogSoftmax: softmax(true),
  LayerNormalization: {
    ok: (n) => n.outputs.slice(1).every((id) => id < 0),
    run(run, n, [x, scale, bias]) {
      const a = axis(n.attrs.axis ?? -1, x.shape.length), len = prod(x.shape.slice(a));
      if (prod(scale.shape) !== len || (bias && prod(bias.shape) !== len)) throw fail(n, 'scale/bias must hold the normalized dims\' elements');
      const y = run.alloc(x.shape), rows = prod(x.shape.slice(0, a));
      const xb = run.buf(x);
      run.elements(K.layerNormKernel(), [xb, run.buf(scale), bias ? run.buf(bias) : xb, y.gpu.store.buf,
        run.params([rows, len, bias ? 1 : 0, f32bits(n.attrs.epsilon ?? 1e-5)])], rows);
      return [y];
    },
  },
  Transpose: {
    run(run, n, [x]) {
      const perm = n.attrs.perm ?? [...x.shape.keys()].reverse(), st = stridesOf(x.shape);
      const shape = perm.map((p) => x.shape[p]);
      const y = run.alloc(shape);
      copy(run, x, y, shape, perm.map((p) => st[p]), stridesOf(shape));
      return [y];
    },
  },
  Expand: {
    host: [1],
    async run(run, n, [x, s]) {
      const shape = broadcast(n, x.shape, await ints(run, s));
      const y = run.alloc(shape);
      copy(run, x, y, shape, bstrides(x.shape, shape), stridesOf(shape));
      return [y];
    },
  },
  Slice: {
    host: [1, 2, 3, 4],
    async run(run, n, [x, s, e, a, p]) {
      const r = x.shape.length, starts = await ints(run, s), ends = await ints(run, e);
      const axes = (await ints(run, a)) ?? starts.map((_, k) => k), steps = (await ints(run, p)) ?? starts.map(() => 1);
      const st = stridesOf(x.shape), from = new Array(r).fill(0), step = new Array(r).fill(1), shape = [...x.shape];
      axes.forEach((ax, k) => {
        ax = axis(ax, r);
        const d = x.shape[ax], sp = steps[k];
        if (sp === 0) throw fail(n, 'step 0');
        const clampTo = (v, lo, hi) => Math.min(Math.max(v < 0 ? v + d : v, lo), hi);
        const b = sp > 0 ? clampTo(starts[k], 0, d) : clampTo(starts[k], -1, d - 1);
        const en = sp > 0 ? clampTo(ends[k], 0, d) : clampTo(ends[k], -1, d - 1);
        from[ax] = b; step[ax] = sp;
        shape[ax] = Math.max(0, Math.ceil((en - b) / sp));
      });
      const y = run.alloc(shape);
      copy(run, x, y, shape, st.map((t, k) => t * step[k]), stridesOf(shape), from.reduce((acc, f, k) => acc + f * st[k], 0));
      return [y];
    },
  },
  Pad: {
    host: [1, 2, 3],
    ok: (n) => ['constant', 'edge', 'reflect'].includes(n.attrs.mode ?? 'constant'),
    async run(run, n, [x, pads, value, axesIn]) {
      const r = x.shape.length, p = await ints(run, pads), cv = value ? Number((await run.host(value)).data[0] ?? 0) : 0;
      const axes = ((await ints(run, axesIn)) ?? [...x.shape.keys()]).map((a) => axis(a, r));
      const begin = new Array(r).fill(0), end = new Array(r).fill(0);
      axes.forEach((a, k) => { begin[a] = p[k]; end[a] = p[k + axes.length]; });
      const shape = x.shape.map((d, k) => d + begin[k] + end[k]);
      const mode = ['constant', 'edge', 'reflect'].indexOf(n.attrs.mode ?? 'constant');
      if (mode > 0 && x.shape.some((d, k) => d === 0 && shape[k] > 0)) throw fail(n, `${n.attrs.mode} padding of an empty axis`);
      const y = run.alloc(shape);
      run.elements(K.padKernel(), [run.buf(x), y.gpu.store.buf, run.params([prod(shape), r, mode, f32bits(cv), ...shape, ...x.shape,
        ...begin, ...stridesOf(x.shape)])], prod(shape));
      return [y];
    },
  },
  Resize: {
    host: [1, 2, 3],
    ok: (n) => ['nearest', 'linear'].includes(n.attrs.mode ?? 'nearest') && !(n.attrs.antialias ?? 0) && !n.attrs.axes &&
      kCtm.includes(n.attrs.coordinate_transformation_mode ?? 'half_pixel') && !(n.attrs.exclude_outside ?? 0) &&
      (n.attrs.keep_aspect_ratio_policy ?? 'stretch') === 'stretch',
    async run(run, n, [x, , scalesIn, sizesIn]) {
      const r = x.shape.length, sizes = await ints(run, sizesIn);
      const scales = sizes ? sizes.map((d, k) => d / x.shape[k]) : Array.from((await run.host(scalesIn)).data);
      const shape = sizes ?? x.shape.map((d, k) => Math.floor(d * scales[k]));
      if (r < 2 || shape.slice(0, -2).some((d, k) => d !== x.shape[k])) throw onWasm(`${n.op} of other axes than the last two`);
      const y = run.alloc(shape), [H, W] = x.shape.slice(-2), [OH, OW] = shape.slice(-2);
      const nearest = ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'].indexOf(n.attrs.nearest_mode ?? 'round_prefer_floor');
      run.elements(K.resizeKernel(), [run.buf(x), y.gpu.store.buf, run.params([prod(shape), H, W, OH, OW, (n.attrs.mode ?? 'nearest') === 'linear' ? 1 : 0,
        kCtm.indexOf(n.attrs.coordinate_transformation_mode ?? 'half_pixel'), nearest, f32bits(scales[r - 2]), f32bits(scales[r - 1])])], prod(shape));
      return [y];
    },
  },
  Split: {
    host: [1],
    async run(run, n, [x, splitIn]) {
      const r = x.shape.length, a = axis(n.attrs.axis ?? 0, r), D = x.shape[a], count = n.outputs.length;
      let sizes = await ints(run, splitIn);
      if (!sizes) {  // even parts; opset 18's num_outputs: the last one smaller
        const part = Math.ceil(D / count);
        sizes = Array.from({ length: count }, (_, k) => Math.max(0, Math.min(part, D - k * part)));
      }
      if (sizes.length !== count || sizes.reduce((s, v) => s + v, 0) !== D) throw fail(n, `split [${sizes}] of a ${D}-long axis into ${count}`);
      const st = stridesOf(x.shape);
      let at = 0;
      return sizes.map((len) => {
        const shape = x.shape.map((d, k) => (k === a ? len : d));
        const y = run.alloc(shape);
        if (prod(shape)) copy(run, x, y, shape, st, stridesOf(shape), at * st[a]);
        at += len;
        return y;
      });
    },
  },
  Gather: {
    host: [1],
    async run(run, n, [x, indices]) {
      const a = axis(n.attrs.axis ?? 0, x.shape.length), ind = await run.host(indices);
      const shape = [...x.shape.slice(0, a), ...ind.dims, ...x.shape.slice(a + 1)];
      const y = run.alloc(shape), count = prod(ind.dims);
      if (prod(shape)) {
        run.elements(K.gatherKernel(), [run.buf(x), run.int32(ind.data), y.gpu.store.buf,
          run.params([prod(shape), count, prod(x.shape.slice(a + 1)), x.shape[a]])], prod(shape));
      }
      return [y];
    },
  },
  ConstantOfShape: {
    host: [0],
    ok: (n) => n.attrs.value === undefined || (n.attrs.value?.values?.length === 1),
    async run(run, n, [s]) {
      const shape = await ints(run, s), y = run.alloc(shape);
      run.elements(K.fillKernel(), [y.gpu.store.buf, run.params([prod(shape), f32bits(n.attrs.value?.values[0] ?? 0)])], prod(shape));
      return [y];
    },
  },
  Concat: {
    run(run, n, ins) {
      const r = ins[0].shape.length, a = axis(n.attrs.axis, r);
      const shape = [...ins[0].shape];
      shape[a] = ins.reduce((acc, v) => acc + v.shape[a], 0);
      const y = run.alloc(shape), so = stridesOf(shape);
      let at = 0;
      for (const v of ins) {
        if (prod(v.shape)) copy(run, v, y, v.shape, stridesOf(v.shape), so, 0, at * so[a]);
        at += v.shape[a];
      }
      return [y];
    },
  },
  Conv: {
    ok: (n, g) => { const w = g.values[n.inputs[1]]; return w.shape !== null && (w.shape.length === 4 || w.shape.length === 3); },
    // act: what the nodes fused into this one apply ({op, a, b, floor?, ceil?}: webgpu_fuse.mjs), or null.
    run(run, n, [x, w, b], cache, act = null) {
      const g = geo2d(spatial(n, x.shape.slice(2), w.shape.slice(2)));
      const [N, C, H, W] = as2d(x.shape), [M, , KH, KW] = as2d(w.shape);
      const shape = [N, M, ...(x.shape.length === 3 ? [g.out[1]] : g.out)];
      const pointwise = KH === 1 && KW === 1 && (n.attrs.group ?? 1) === 1 && g.out[0] === H && g.out[1] === W &&
        [...g.st, ...g.pads].every((v, k) => v === (k < 2 ? 1 : 0));
      if (pointwise) {  // a 1x1 convolution is a GEMM per image: Y[n] (M x HW) = W (M x C) X[n] (C x HW) + bias
        const offs = [];
        for (let i = 0; i < N; i++) offs.push(0, i * C * H * W);
        return [gemm(run, w, x, b, { M, N: H * W, Kd: C, ta: 0, tb: 0, alpha: 1, beta: 1, offs, outShape: shape, cm: 1, cn: 0, act })];
      }
      // An implicit GEMM: Y[n] (M x OH*OW) = W (M x C*KH*KW) im2col(X[n]); until its tiled kernel
      // is compiled (Run.compiled) and with no residual to add, the direct kernels below.
      if ((n.attrs.group ?? 1) === 1 && (act?.res || run.compiled(tiledCode(true, M, act)))) {
        const offs = [];
        for (let i = 0; i < N; i++) offs.push(0, i * C * H * W);
        return [gemm(run, w, x, b, { M, N: g.out[0] * g.out[1], Kd: C * KH * KW, ta: 0, tb: 0, alpha: 1, beta: 1, offs, outShape: shape,
          cm: 1, cn: 0, conv: [C, H, W, KH, KW, g.out[1], g.st[0], g.st[1], g.pads[0], g.pads[1], g.dil[0], g.dil[1]], act })];
      }
      const y = run.alloc(shape), xb = run.buf(x), G = n.attrs.group ?? 1;
      if (G === C && M % C === 0) {  // depthwise: 4 outputs of a row per invocation
        const count = N * M * g.out[0] * Math.ceil(g.out[1] / 4);
        run.elements(K.depthwiseKernel(act), [xb, run.buf(w), b ? run.buf(b) : xb, y.gpu.store.buf, run.params([count, C, H, W, M, KH, KW,
          g.out[0], g.out[1], g.st[0], g.st[1], g.pads[0], g.pads[1], g.dil[0], g.dil[1], M / C, b ? 1 : 0,
          ...actParams(act).map(f32bits)])], count);
        return [y];
      }
      run.elements(K.convKernel(act), [xb, run.buf(w), b ? run.buf(b) : xb, y.gpu.store.buf, run.params([prod(shape), C, H, W, M, KH, KW,
        g.out[0], g.out[1], g.st[0], g.st[1], g.pads[0], g.pads[1], g.dil[0], g.dil[1], n.attrs.group ?? 1, b ? 1 : 0,
        ...actParams(act).map(f32bits)])], prod(shape));
      return [y];
    },
  },
  ConvTranspose: {
    ok: (n, g) => g.values[n.inputs[1]].shape?.length === 4 && ['NOTSET', 'VALID'].includes(n.attrs.auto_pad ?? 'NOTSET') &&
      !n.attrs.output_shape,
    run(run, n, [x, w, b]) {
      const [N, C, H, W] = x.shape, G = n.attrs.group ?? 1, [, Mg, KH, KW] = w.shape, M = Mg * G;
      const st = n.attrs.strides ?? [1, 1], dil = n.attrs.dilations ?? [1, 1], op = n.attrs.output_padding ?? [0, 0];
      const pads = (n.attrs.auto_pad ?? 'NOTSET') === 'VALID' ? [0, 0, 0, 0] : n.attrs.pads ?? [0, 0, 0, 0];
      const out = [H, W].map((d, k) => st[k] * (d - 1) + op[k] + ([KH, KW][k] - 1) * dil[k] + 1 - pads[k] - pads[k + 2]);
      const shape = [N, M, ...out];
      const y = run.alloc(shape), xb = run.buf(x);
      run.elements(K.convTransposeKernel(), [xb, run.buf(w), b ? run.buf(b) : xb, y.gpu.store.buf, run.params([prod(shape), C, H, W, M, KH, KW,
        out[0], out[1], st[0], st[1], pads[0], pads[1], dil[0], dil[1], G, b ? 1 : 0])], prod(shape));
      return [y];
    },
  },
  MaxPool: pool(true, false),
  AveragePool: pool(false, false),
  GlobalMaxPool: pool(true, true),
  GlobalAveragePool: pool(false, true),
  BatchNormalization: {
    ok: (n, g) => n.outputs.slice(1).every((id) => id < 0) && !(n.attrs.training_mode ?? 0) && n.inputs.slice(1).every((id) => g.values[id].constant),
    async run(run, n, [x, scale, bias, mean, variance], cache) {
      if (!cache.s) {
        const [sc, bi, mu, va] = await Promise.all([scale, bias, mean, variance].map((v) => run.host(v)));
        const s = sc.data.map((v, c) => v / Math.sqrt(va.data[c] + (n.attrs.epsilon ?? 1e-5)));
        const t = bi.data.map((v, c) => v - mu.data[c] * s[c]);
        cache.s = run.buf({ t: { type: 'float32', data: s }, constant: true, shape: [s.length] });
        cache.t = run.buf({ t: { type: 'float32', data: t }, constant: true, shape: [t.length] });
      }
      const y = run.alloc(x.shape), C = x.shape[1];
      run.elements(K.affineKernel(), [run.buf(x), cache.s, cache.t, y.gpu.store.buf,
        run.params([prod(x.shape), C, prod(x.shape.slice(2))])], prod(x.shape));
      return [y];
    },
  },
  ReduceSum: reduce(0),
  ReduceMean: reduce(1),
  ReduceMax: reduce(2),
  ReduceMin: reduce(3),
  // Forward, default activations, with bias and initial states, without sequence_lens, peepholes
  // or clip: one dispatch per time step, the (h, c) state ping-ponging between two buffers.
  LSTM: {
    ok: (n) => (n.attrs.direction ?? 'forward') === 'forward' && !n.attrs.layout && !n.attrs.input_forget && n.attrs.clip === undefined &&
      n.attrs.activations === undefined && [3, 5, 6].every((j) => n.inputs[j] >= 0) && !(n.inputs[4] >= 0) && !(n.inputs[7] >= 0),
    run(run, n, [x, w, r, bias, , h0, c0]) {
      const [T, B, I] = x.shape, H = n.attrs.hidden_size;
      if (x.shape.length !== 3 || T === 0 || w.shape.join() !== [1, 4 * H, I].join() || r.shape.join() !== [1, 4 * H, H].join() ||
          prod(bias.shape) !== 8 * H || h0.shape.join() !== [1, B, H].join() || c0.shape.join() !== [1, B, H].join())
        throw onWasm(`LSTM "${n.name}": shapes X [${x.shape}], W [${w.shape}], R [${r.shape}], initial_h [${h0.shape}] not on the GPU path`);
      const half = [1, B, H], hs = stridesOf(half), st = [run.alloc([2, B, H]), run.alloc([2, B, H])];
      copy(run, h0, st[0], half, hs, hs, 0, 0);
      copy(run, c0, st[0], half, hs, hs, 0, B * H);
      const y = run.alloc([T, 1, B, H]);
      for (let t = 0; t < T; t++)
        run.elements(K.lstmKernel(), [run.buf(x), run.buf(w), run.buf(r), run.buf(bias), st[t % 2].gpu.store.buf, st[(t + 1) % 2].gpu.store.buf,
          y.gpu.store.buf, run.params([B * H, B, H, I, t])], B * H);
      const last = st[T % 2], yh = run.alloc(half), yc = run.alloc(half);
      copy(run, last, yh, half, hs, hs, 0, 0);
      copy(run, last, yc, half, hs, hs, B * H, 0);
      st.forEach((v) => run.drop(v));
      return [y, yh, yc];
    },
  },
};

function softmax(log) {
  return {
    run(run, n, [x]) {
      const a = axis(n.attrs.axis ?? -1, x.shape.length);
      const len = x.shape[a], inner = prod(x.shape.slice(a + 1));
      const y = run.alloc(x.shape), rows = prod(x.shape) / Math.max(len, 1);
      run.elements(K.softmaxKernel(log), [run.buf(x), y.gpu.store.buf, run.params([rows, len, inner])], len ? rows : 0);
      return [y];
    },
  };
}
