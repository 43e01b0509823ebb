// WGSL compute kernels of the WebGPU device layer (webgpu.mjs), all float32. Each function returns
// the shader's source; webgpu.mjs compiles each distinct source once per device and binds, in
// binding order, the buffers the comment of each kernel lists. Element kernels run one invocation
// per output element on workgroups of 256 (kGroup), over a 2-D grid (x up to 65535 workgroups, then y rows):
// index = gid.x + gid.y * 256 * num_workgroups.x. Integer parameters come in a read-only storage
// buffer `p` of u32 (floats as their bits); sizes are counts of elements, strides in elements.

/** Invocations per workgroup of the element kernels. */
export const kGroup = 256;

const kHead = `
fn index(g: vec3<u32>, nw: vec3<u32>) -> u32 { return g.x + g.y * nw.x * 256u; }
fn pf(v: u32) -> f32 { return bitcast<f32>(v); }
// erf(x), Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7).
fn erf_(x: f32) -> f32 {
  let t = 1.0 / (1.0 + 0.3275911 * abs(x));
  let y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-x * x);
  return select(-y, y, x >= 0.0);
}
fn tanh_(x: f32) -> f32 { return tanh(clamp(x, -15.0, 15.0)); }
`;
const kMain = '@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>)';
const ro = (b, name) => `@group(0) @binding(${b}) var<storage, read> ${name}: array<f32>;`;
const rw = (b, name) => `@group(0) @binding(${b}) var<storage, read_write> ${name}: array<f32>;`;
const params = (b) => `@group(0) @binding(${b}) var<storage, read> p: array<u32>;`;

/** Binary elementwise expressions over x (first input) and z (second). */
export const kBinary = {
  Add: 'x + z', Sub: 'x - z', Mul: 'x * z', Div: 'x / z', Max: 'max(x, z)', Min: 'min(x, z)',
  // ONNX Pow: a negative base with an integer exponent keeps the exponent's parity sign.
  Pow: 'select(select(pow(abs(x), z), -pow(abs(x), z), abs(z % 2.0) == 1.0), pow(x, z), x >= 0.0)',
};

/** Unary expressions over x; a = p[1], b = p[2] as floats (alpha/beta, min/max). */
export const kUnary = {
  Relu: 'max(x, 0.0)', Sigmoid: '1.0 / (1.0 + exp(-x))', Tanh: 'tanh_(x)', Erf: 'erf_(x)', Exp: 'exp(x)',
  Neg: '-x', Abs: 'abs(x)', Sqrt: 'sqrt(x)', Reciprocal: '1.0 / x', Log: 'log(x)', Floor: 'floor(x)', Ceil: 'ceil(x)',
  Sin: 'sin(x)', Cos: 'cos(x)',
  Gelu: '0.5 * x * (1.0 + erf_(x * 0.70710678118654752))',
  GeluTanh: '0.5 * x * (1.0 + tanh_(0.7978845608028654 * (x + 0.044715 * x * x * x)))',
  LeakyRelu: 'select(a * x, x, x >= 0.0)', HardSigmoid: 'clamp(a * x + b, 0.0, 1.0)', Clip: 'clamp(x, a, b)',
  HardSwish: 'x * clamp(x / 6.0 + 0.5, 0.0, 1.0)', Softplus: 'select(log(1.0 + exp(x)), x, x > 20.0)',
  Elu: 'select(a * (exp(x) - 1.0), x, x >= 0.0)', Selu: 'select(b * (a * exp(x) - a), b * x, x > 0.0)',
  Sign: 'sign(x)', Identity: 'x',
};

/** The activations a Conv's kernels apply in their epilogue (the Conv's only consumer fused into
 *  it, webgpu_fuse.mjs): a subset of kUnary. */
export const kFusedActs = ['Relu', 'Sigmoid', 'Tanh', 'LeakyRelu', 'HardSigmoid', 'Clip', 'HardSwish'];

/** WGSL fn act_(x, a, b, lo, hi): the unary activation act.op (kUnary; null: the identity), then
 *  max(., lo) when act.floor is set, min(., hi) when act.ceil is. */
function actFn(act) {
  let e = act?.op ? kUnary[act.op] : 'x';
  if (act?.floor !== undefined) e = `max(${e}, lo)`;
  if (act?.ceil !== undefined) e = `min(${e}, hi)`;
  return `fn act_(x: f32, a: f32, b: f32, lo: f32, hi: f32) -> f32 { return ${e}; }\n`;
}

/** y = f(a, z) with broadcasting. Bindings: a, b, y, p = [n, rank, dims[rank], strideA[rank], strideB[rank]]. */
export function binaryKernel(op) {
  return `${kHead}${ro(0, 'a')}${ro(1, 'b')}${rw(2, 'y')}${params(3)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let r = p[1];
  var rem = i; var ia = 0u; var ib = 0u;
  for (var d = r; d > 0u; d = d - 1u) {
    let k = d - 1u;
    let c = rem % p[2u + k];
    rem = rem / p[2u + k];
    ia = ia + c * p[2u + r + k];
    ib = ib + c * p[2u + 2u * r + k];
  }
  let x = a[ia]; let z = b[ib];
  y[i] = ${kBinary[op]};
}`;
}

/** y = f(x). Bindings: a, y, p = [n, alpha bits, beta bits]. */
export function unaryKernel(op) {
  return `${kHead}${ro(0, 'src')}${rw(1, 'y')}${params(2)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let x = src[i]; let a = pf(p[1]); let b = pf(p[2]);
  y[i] = ${kUnary[op]};
}`;
}

/** A strided region copy (Transpose, Expand, Slice, Concat's parts):
 *  y[outOff + sum c_k so_k] = x[inOff + sum c_k si_k] over the region's coordinates c.
 *  Bindings: x, y, p = [n, rank, inOff, outOff, dims[rank], si[rank] (i32: Slice's negative steps),
 *  so[rank]]. */
export function copyKernel() {
  return `${kHead}${ro(0, 'x')}${rw(1, 'y')}${params(2)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let r = p[1];
  var rem = i; var ii = i32(p[2]); var io = p[3];
  for (var d = r; d > 0u; d = d - 1u) {
    let k = d - 1u;
    let c = rem % p[4u + k];
    rem = rem / p[4u + k];
    ii = ii + i32(c) * bitcast<i32>(p[4u + r + k]);
    io = io + c * p[4u + 2u * r + k];
  }
  y[io] = x[u32(ii)];
}`;
}

/** Batched C = alpha * op(A) op(B) + beta * Bias, in (16 tm) x 64 output tiles staged through
 *  workgroup memory (each invocation tm x 4 outputs). Grid: (ceil(N/64), ceil(M/(16 tm)), batches). Bindings: a, b, bias (any buffer when absent), y,
 *  u = {M, N, K, transA, transB, hasBias, biasStrideM, biasStrideN, alpha, beta} (uniform),
 *  offs = [aOff, bOff] per batch (the batch's output is at batch * M * N).
 *  conv: B is the im2col matrix of an NCHW image read in place (a convolution as an implicit
 *  GEMM: A the [M, C*KH*KW] weights, N = OH*OW), with binding 6 cp = [C, H, W, KH, KW, OW, sh,
 *  sw, ph, pw, dh, dw]. act: {op (kFusedActs), floor?, ceil?} applied to each output (actFn), its
 *  parameters in u.fa, u.fb, u.flo, u.fhi. With u.hr = 1 (a residual Add fused into a Conv) the
 *  output's element of binding 7 (conv) or 6 (a tensor of the output's shape; any buffer when
 *  u.hr = 0) is added first: a run-time flag, so that it adds no pipeline to compile. */
export function gemmKernel(conv = false, tm = 2, act = null) {
  const R = 16 * tm;
  const res = `@group(0) @binding(${conv ? 7 : 6}) var<storage, read> Res: array<f32>;\n`;
  // bload4: the 4 B elements of row kb at columns c4 .. c4 + 3 (0 past N); for a conv the im2col
  // row's (c, kh, kw) and the first column's (oh, ow) are worked out once for the 4.
  const bload = conv ? `@group(0) @binding(6) var<storage, read> cp: array<u32>;
fn bload4(bo: u32, kb: u32, c4: u32) -> vec4<f32> {
  let kk = cp[3] * cp[4];
  let c = kb / kk; let kh = (kb / cp[4]) % cp[3]; let kw = kb % cp[4];
  let base = bo + c * cp[1] * cp[2];
  var oh = c4 / cp[5]; var ow = c4 % cp[5];
  var r = vec4<f32>(0.0);
  for (var j = 0u; j < 4u; j = j + 1u) {
    if (c4 + j < u.n) {
      let ih = i32(oh * cp[6] + kh * cp[10]) - i32(cp[8]);
      let iw = i32(ow * cp[7] + kw * cp[11]) - i32(cp[9]);
      if (ih >= 0 && iw >= 0 && ih < i32(cp[1]) && iw < i32(cp[2])) { r[j] = B[base + u32(ih) * cp[2] + u32(iw)]; }
    }
    ow = ow + 1u;
    if (ow == cp[5]) { ow = 0u; oh = oh + 1u; }
  }
  return r;
}` : `fn bload4(bo: u32, kb: u32, c4: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var j = 0u; j < 4u; j = j + 1u) {
    let col = c4 + j;
    if (col < u.n) { r[j] = B[bo + select(kb * u.n + col, col * u.k + kb, u.tb == 1u)]; }
  }
  return r;
}`;
  return `${kHead}${actFn(act)}${ro(0, 'A')}${ro(1, 'B')}${ro(2, 'C')}${rw(3, 'Y')}
struct U { m: u32, n: u32, k: u32, ta: u32, tb: u32, hc: u32, cm: u32, cn: u32, alpha: f32, beta: f32, fa: f32, fb: f32, flo: f32, fhi: f32, hr: u32, pad1: u32 };
@group(0) @binding(4) var<uniform> u: U;
@group(0) @binding(5) var<storage, read> offs: array<u32>;
${bload}
${res}var<workgroup> As: array<array<f32, 16>, ${R}>;
var<workgroup> Bs: array<array<vec4<f32>, 16>, 16>;
fn aload(ao: u32, row: u32, ka: u32) -> f32 {
  if (row >= u.m || ka >= u.k) { return 0.0; }
  return A[ao + select(row * u.k + ka, ka * u.m + row, u.ta == 1u)];
}
// 256 invocations, each ${tm} rows x 4 columns of a ${R} x 64 output tile.
@compute @workgroup_size(16, 16) fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
  let row0 = wg.y * ${R}u; let col0 = wg.x * 64u;
  let lid = l.y * 16u + l.x;
  let ao = offs[2u * wg.z];
  let bo = offs[2u * wg.z + 1u];
  var acc: array<vec4<f32>, ${tm}>;
  let tiles = (u.k + 15u) / 16u;
  for (var t = 0u; t < tiles; t = t + 1u) {
    let k0 = t * 16u;
    for (var q = 0u; q < ${tm}u; q = q + 1u) {
      let idx = q * 256u + lid;
      As[idx / 16u][idx % 16u] = aload(ao, row0 + idx / 16u, k0 + idx % 16u);
    }
    // B: each invocation stages 4 adjacent columns of one of the tile's 16 rows, as a vec4.
    let kb = k0 + lid / 16u; let c4 = col0 + (lid % 16u) * 4u;
    var bv = vec4<f32>(0.0);
    if (kb < u.k) { bv = bload4(bo, kb, c4); }
    Bs[lid / 16u][lid % 16u] = bv;
    workgroupBarrier();
    for (var k = 0u; k < 16u; k = k + 1u) {
      let b4 = Bs[k][l.x];
      for (var i = 0u; i < ${tm}u; i = i + 1u) { acc[i] = acc[i] + As[l.y * ${tm}u + i][k] * b4; }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < ${tm}u; i = i + 1u) {
    let row = row0 + l.y * ${tm}u + i;
    if (row >= u.m) { continue; }
    for (var j = 0u; j < 4u; j = j + 1u) {
      let col = col0 + l.x * 4u + j;
      if (col >= u.n) { continue; }
      var v = u.alpha * acc[i][j];
      if (u.hc == 1u) { v = v + u.beta * C[row * u.cm + col * u.cn]; }
      let at = wg.z * u.m * u.n + row * u.n + col;
      if (u.hr == 1u) { v = v + Res[at]; }
      Y[at] = ${act ? 'act_(v, u.fa, u.fb, u.flo, u.fhi)' : 'v'};
    }
  }
}`;
}

/** Softmax / LogSoftmax along an axis: one invocation per row. Bindings: x, y,
 *  p = [rows, len, inner] (row r: base (r / inner) * len * inner + r % inner, stride inner). */
export function softmaxKernel(log) {
  return `${kHead}${ro(0, 'x')}${rw(1, 'y')}${params(2)}
${kMain} {
  let r = index(g, nw);
  if (r >= p[0]) { return; }
  let len = p[1]; let inner = p[2];
  let base = (r / inner) * len * inner + r % inner;
  var mx = -3.402823e38;
  for (var k = 0u; k < len; k = k + 1u) { mx = max(mx, x[base + k * inner]); }
  var s = 0.0;
  for (var k = 0u; k < len; k = k + 1u) { s = s + exp(x[base + k * inner] - mx); }
  for (var k = 0u; k < len; k = k + 1u) {
    ${log ? 'y[base + k * inner] = x[base + k * inner] - mx - log(s);' : 'y[base + k * inner] = exp(x[base + k * inner] - mx) / s;'}
  }
}`;
}

/** LayerNormalization over the trailing `len` elements of each row: one invocation per row.
 *  Bindings: x, scale, bias (any buffer when absent), y, p = [rows, len, hasBias, epsilon bits]. */
export function layerNormKernel() {
  return `${kHead}${ro(0, 'x')}${ro(1, 'sc')}${ro(2, 'bi')}${rw(3, 'y')}${params(4)}
${kMain} {
  let r = index(g, nw);
  if (r >= p[0]) { return; }
  let len = p[1]; let base = r * len;
  var mean = 0.0;
  for (var k = 0u; k < len; k = k + 1u) { mean = mean + x[base + k]; }
  mean = mean / f32(len);
  var v = 0.0;
  for (var k = 0u; k < len; k = k + 1u) { let d = x[base + k] - mean; v = v + d * d; }
  let inv = 1.0 / sqrt(v / f32(len) + pf(p[3]));
  for (var k = 0u; k < len; k = k + 1u) {
    var o = (x[base + k] - mean) * inv * sc[k];
    if (p[2] == 1u) { o = o + bi[k]; }
    y[base + k] = o;
  }
}`;
}

// The start of Conv's and ConvTranspose's direct kernels (bindings x, w, bias, y, p as they say):
// output element i's coordinates n, m, oh, ow, and acc starting at the bias.
const kConvHead = `${kHead}${ro(0, 'x')}${ro(1, 'w')}${ro(2, 'bias')}${rw(3, 'y')}${params(4)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let C = p[1]; let H = p[2]; let W = p[3]; let M = p[4]; let KH = p[5]; let KW = p[6]; let OH = p[7]; let OW = p[8];
  let ow = i % OW; let oh = (i / OW) % OH; let m = (i / (OW * OH)) % M; let n = i / (OW * OH * M);
  var acc = 0.0;`;

// The bias added after the sum (as the GEMM kernels do), not as its first term: the same rounding
// as the tiled GEMM path of the same Conv.
const kAddBias = 'if (p[16] == 1u) { acc = acc + bias[m]; }';

/** Direct 2-D convolution, NCHW, groups: one invocation per output element. Bindings: x, w,
 *  bias (any buffer when absent), y, p = [n, C, H, W, M, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw,
 *  group, hasBias, act a, b, lo, hi bits]; act: as gemmKernel's, applied to each output. */
export function convKernel(act = null) {
  return `${actFn(act)}${kConvHead}
  let cpg = C / p[15]; let grp = m / (M / p[15]);
  for (var c = 0u; c < cpg; c = c + 1u) {
    let xc = (n * C + grp * cpg + c) * H;
    let wc = (m * cpg + c) * KH;
    for (var kh = 0u; kh < KH; kh = kh + 1u) {
      let ih = i32(oh * p[9] + kh * p[13]) - i32(p[11]);
      if (ih < 0 || ih >= i32(H)) { continue; }
      for (var kw = 0u; kw < KW; kw = kw + 1u) {
        let iw = i32(ow * p[10] + kw * p[14]) - i32(p[12]);
        if (iw < 0 || iw >= i32(W)) { continue; }
        acc = acc + x[(xc + u32(ih)) * W + u32(iw)] * w[(wc + kh) * KW + kw];
      }
    }
  }
  ${kAddBias}
  y[i] = ${act ? 'act_(acc, pf(p[17]), pf(p[18]), pf(p[19]), pf(p[20]))' : 'acc'};
}`;
}

/** Depthwise 2-D convolution, NCHW (group = C: one input channel per group, M = C * mult):
 *  one invocation per 4 adjacent outputs of a row, sharing the weights and index math. Bindings:
 *  x, w, bias (any buffer when absent), y, p = [n (invocations: N*M*OH*ceil(OW/4)), C, H, W, M, KH,
 *  KW, OH, OW, sh, sw, ph, pw, dh, dw, mult, hasBias, act a, b, lo, hi bits]; act as convKernel's. */
export function depthwiseKernel(act = null) {
  return `${kHead}${actFn(act)}${ro(0, 'x')}${ro(1, 'w')}${ro(2, 'bias')}${rw(3, 'y')}${params(4)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let C = p[1]; let H = p[2]; let W = p[3]; let M = p[4]; let KH = p[5]; let KW = p[6]; let OH = p[7]; let OW = p[8];
  let OQ = (OW + 3u) / 4u;
  let ow0 = (i % OQ) * 4u; let oh = (i / OQ) % OH; let m = (i / (OQ * OH)) % M; let n = i / (OQ * OH * M);
  var acc = vec4<f32>(0.0);
  let xc = (n * C + m / p[15]) * H;
  let sw = i32(p[10]);
  let iwv = vec4<i32>(0, sw, 2 * sw, 3 * sw);
  for (var kh = 0u; kh < KH; kh = kh + 1u) {
    let ih = i32(oh * p[9] + kh * p[13]) - i32(p[11]);
    if (ih < 0 || ih >= i32(H)) { continue; }
    let row = (xc + u32(ih)) * W;
    for (var kw = 0u; kw < KW; kw = kw + 1u) {
      let wv = w[(m * KH + kh) * KW + kw];
      let iw = vec4<i32>(i32(ow0 * p[10] + kw * p[14]) - i32(p[12])) + iwv;
      var xv = vec4<f32>(0.0);
      for (var j = 0; j < 4; j = j + 1) {
        if (iw[j] >= 0 && iw[j] < i32(W)) { xv[j] = x[row + u32(iw[j])]; }
      }
      acc = acc + xv * wv;
    }
  }
  if (p[16] == 1u) { acc = acc + vec4<f32>(bias[m]); }
  let out = ((n * M + m) * OH + oh) * OW;
  for (var j = 0u; j < 4u; j = j + 1u) {
    if (ow0 + j < OW) { y[out + ow0 + j] = ${act ? 'act_(acc[j], pf(p[17]), pf(p[18]), pf(p[19]), pf(p[20]))' : 'acc[j]'}; }
  }
}`;
}

/** 2-D pooling, NCHW: one invocation per output element. Bindings: x, y, p = [n, H, W, OH, OW,
 *  KH, KW, sh, sw, ph, pw, dh, dw, countIncludePad] (n = N*C*OH*OW; with countIncludePad an
 *  average divides by KH*KW, as ONNX does for windows inside the padded input). */
export function poolKernel(max) {
  return `${kHead}${ro(0, 'x')}${rw(1, 'y')}${params(2)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let H = p[1]; let W = p[2]; let OH = p[3]; let OW = p[4];
  let ow = i % OW; let oh = (i / OW) % OH; let nc = i / (OW * OH);
  var acc = ${max ? '-3.402823e38' : '0.0'};
  var cnt = 0u;
  for (var kh = 0u; kh < p[5]; kh = kh + 1u) {
    let ih = i32(oh * p[7] + kh * p[11]) - i32(p[9]);
    for (var kw = 0u; kw < p[6]; kw = kw + 1u) {
      let iw = i32(ow * p[8] + kw * p[12]) - i32(p[10]);
      let inside = ih >= 0 && ih < i32(H) && iw >= 0 && iw < i32(W);
      if (inside) {
        let v = x[(nc * H + u32(ih)) * W + u32(iw)];
        ${max ? 'acc = max(acc, v);' : 'acc = acc + v;'}
        cnt = cnt + 1u;
      }
    }
  }
  y[i] = ${max ? 'acc' : 'acc / f32(select(max(cnt, 1u), p[5] * p[6], p[13] == 1u))'};
}`;
}

/** y = x * s[c] + t[c], c = (i / inner) % C (BatchNormalization in inference, folded on the host).
 *  Bindings: x, s, t, y, p = [n, C, inner]. */
export function affineKernel() {
  return `${kHead}${ro(0, 'x')}${ro(1, 's')}${ro(2, 't')}${rw(3, 'y')}${params(4)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let c = (i / p[2]) % p[1];
  y[i] = x[i] * s[c] + t[c];
}`;
}

/** Reduction (ReduceSum/Mean/Max/Min over any axes): one invocation per output element.
 *  Bindings: x, y, p = [n, rank, R, nr, mode (0 sum, 1 mean, 2 max, 3 min), outDims[rank]
 *  (reduced dims 1), inStrides[rank], redDims[nr], redStrides[nr]]. */
export function reduceKernel() {
  return `${kHead}${ro(0, 'x')}${rw(1, 'y')}${params(2)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let r = p[1]; let R = p[2]; let nr = p[3]; let mode = p[4];
  var rem = i; var base = 0u;
  for (var d = r; d > 0u; d = d - 1u) {
    let k = d - 1u;
    let c = rem % p[5u + k];
    rem = rem / p[5u + k];
    base = base + c * p[5u + r + k];
  }
  var acc = select(0.0, select(3.402823e38, -3.402823e38, mode == 2u), mode >= 2u);
  for (var j = 0u; j < R; j = j + 1u) {
    var rj = j; var off = base;
    for (var d = nr; d > 0u; d = d - 1u) {
      let k = d - 1u;
      let c = rj % p[5u + 2u * r + k];
      rj = rj / p[5u + 2u * r + k];
      off = off + c * p[5u + 2u * r + nr + k];
    }
    let v = x[off];
    if (mode == 2u) { acc = max(acc, v); } else if (mode == 3u) { acc = min(acc, v); } else { acc = acc + v; }
  }
  y[i] = select(acc, acc / f32(R), mode == 1u);
}`;
}

/** Pad (constant, edge, reflect; negative pads crop): one invocation per output element.
 *  Bindings: x, y, p = [n, rank, mode (0 constant, 1 edge, 2 reflect), value bits, outDims[rank],
 *  inDims[rank], padBegin[rank] (i32), inStrides[rank]]. */
export function padKernel() {
  return `${kHead}${ro(0, 'x')}${rw(1, 'y')}${params(2)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let r = p[1]; let mode = p[2];
  var rem = i; var off = 0u; var inside = true;
  for (var d = r; d > 0u; d = d - 1u) {
    let k = d - 1u;
    let c = rem % p[4u + k];
    rem = rem / p[4u + k];
    let D = i32(p[4u + r + k]);
    var at = i32(c) - bitcast<i32>(p[4u + 2u * r + k]);
    if (at < 0 || at >= D) {
      if (mode == 0u) { inside = false; }
      else if (mode == 1u) { at = clamp(at, 0, D - 1); }
      else { at = abs(at); at = select(at, 2 * (D - 1) - at, at >= D); }
    }
    off = off + u32(max(at, 0)) * p[4u + 3u * r + k];
  }
  if (inside) { y[i] = x[off]; } else { y[i] = pf(p[3]); }
}`;
}

/** Resize of the last two axes (nearest or bilinear): one invocation per output element.
 *  Bindings: x, y, p = [n, H, W, OH, OW, linear, ctm (0 half_pixel, 1 pytorch_half_pixel,
 *  2 asymmetric, 3 align_corners), nearest (0 round_prefer_floor, 1 round_prefer_ceil, 2 floor,
 *  3 ceil), scaleH bits, scaleW bits]. */
export function resizeKernel() {
  return `${kHead}${ro(0, 'x')}${rw(1, 'y')}${params(2)}
fn source(o: u32, s: f32, L: u32, Lo: u32) -> f32 {
  let ctm = p[6];
  if (ctm == 0u) { return (f32(o) + 0.5) / s - 0.5; }
  if (ctm == 1u) { return select(0.0, (f32(o) + 0.5) / s - 0.5, Lo > 1u); }
  if (ctm == 2u) { return f32(o) / s; }
  return select(0.0, f32(o) * f32(L - 1u) / f32(Lo - 1u), Lo > 1u);
}
fn nearest(v: f32, L: u32) -> u32 {
  let m = p[7];
  var r = select(select(select(ceil(v), floor(v), m == 2u), floor(v + 0.5), m == 1u), ceil(v - 0.5), m == 0u);
  return u32(clamp(r, 0.0, f32(L - 1u)));
}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let H = p[1]; let W = p[2]; let OH = p[3]; let OW = p[4];
  let ow = i % OW; let oh = (i / OW) % OH; let base = (i / (OW * OH)) * H * W;
  let sy = source(oh, pf(p[8]), H, OH); let sx = source(ow, pf(p[9]), W, OW);
  if (p[5] == 0u) { y[i] = x[base + nearest(sy, H) * W + nearest(sx, W)]; return; }
  let cy = clamp(sy, 0.0, f32(H - 1u)); let cx = clamp(sx, 0.0, f32(W - 1u));
  let y0 = u32(floor(cy)); let x0 = u32(floor(cx));
  let y1 = min(y0 + 1u, H - 1u); let x1 = min(x0 + 1u, W - 1u);
  let fy = cy - f32(y0); let fx = cx - f32(x0);
  let top = x[base + y0 * W + x0] * (1.0 - fx) + x[base + y0 * W + x1] * fx;
  let bottom = x[base + y1 * W + x0] * (1.0 - fx) + x[base + y1 * W + x1] * fx;
  y[i] = top * (1.0 - fy) + bottom * fy;
}`;
}

/** ConvTranspose, 2-D NCHW with groups: one invocation per output element, gathering the inputs
 *  that reach it. Bindings: x, w ([C, M/group, KH, KW]), bias (any buffer when absent), y,
 *  p = [n, C, H, W, M, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, group, hasBias]. */
export function convTransposeKernel() {
  return `${kConvHead}
  let cpg = C / p[15]; let mpg = M / p[15]; let grp = m / mpg;
  for (var c = 0u; c < cpg; c = c + 1u) {
    let ic = grp * cpg + c;
    for (var kh = 0u; kh < KH; kh = kh + 1u) {
      let th = i32(oh + p[11]) - i32(kh * p[13]);
      if (th < 0 || th % i32(p[9]) != 0) { continue; }
      let ih = u32(th) / p[9];
      if (ih >= H) { continue; }
      for (var kw = 0u; kw < KW; kw = kw + 1u) {
        let tw = i32(ow + p[12]) - i32(kw * p[14]);
        if (tw < 0 || tw % i32(p[10]) != 0) { continue; }
        let iw = u32(tw) / p[10];
        if (iw >= W) { continue; }
        acc = acc + x[((n * C + ic) * H + ih) * W + iw] * w[((ic * mpg + (m % mpg)) * KH + kh) * KW + kw];
      }
    }
  }
  ${kAddBias}
  y[i] = acc;
}`;
}

/** Gather along an axis: y[o, j, k] = x[o, ind[j] (negative: + D), k]. Bindings: x, ind (i32), y,
 *  p = [n, count of indices, inner, D]. */
export function gatherKernel() {
  return `${kHead}${ro(0, 'x')}@group(0) @binding(1) var<storage, read> ind: array<i32>;
${rw(2, 'y')}${params(3)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let inner = p[2]; let D = p[3];
  let k = i % inner; let j = (i / inner) % p[1]; let o = i / (inner * p[1]);
  var at = ind[j];
  if (at < 0) { at = at + i32(D); }
  y[i] = x[(o * D + u32(clamp(at, 0, i32(D) - 1))) * inner + k];
}`;
}

/** The GEMM of gemmKernel for few rows (M < 8, where its 32-row tiles idle): one invocation per
 *  output element, a plain loop over K. Bindings: a, b, bias (any buffer when absent), y,
 *  p = [n, M, N, K, transA, transB, hasBias, biasStrideM, biasStrideN, alpha bits, beta bits,
 *  act a, b, lo, hi bits], offs = [aOff, bOff] per batch; act as gemmKernel's. */
export function gemvKernel(act = null) {
  return `${kHead}${actFn(act)}${ro(0, 'A')}${ro(1, 'B')}${ro(2, 'C')}${rw(3, 'Y')}${params(4)}
@group(0) @binding(5) var<storage, read> offs: array<u32>;
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let M = p[1]; let N = p[2]; let K = p[3];
  let col = i % N; let row = (i / N) % M; let b = i / (M * N);
  let ao = offs[2u * b]; let bo = offs[2u * b + 1u];
  var acc = 0.0;
  for (var k = 0u; k < K; k = k + 1u) {
    acc = acc + A[ao + select(row * K + k, k * M + row, p[4] == 1u)] * B[bo + select(k * N + col, col * K + k, p[5] == 1u)];
  }
  var v = pf(p[9]) * acc;
  if (p[6] == 1u) { v = v + pf(p[10]) * C[row * p[7] + col * p[8]]; }
  Y[i] = ${act ? 'act_(v, pf(p[11]), pf(p[12]), pf(p[13]), pf(p[14]))' : 'v'};
}`;
}

/** y[i] = value (ConstantOfShape). Bindings: y, p = [n, value bits]. */
export function fillKernel() {
  return `${kHead}${rw(0, 'y')}${params(1)}
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  y[i] = pf(p[1]);
}`;
}

/** One time step t of a forward LSTM (ONNX gate order i, o, f, c; sigmoid / tanh / tanh), one
 *  invocation per (batch b, hidden unit j). Bindings: x [T, B, I], w [4H, I], r [4H, H],
 *  bias [8H] (Wb then Rb), s [2, B, H] (h then c before the step), t [2, B, H] (after it),
 *  y [T, 1, B, H], p = [B * H, B, H, I, t]. */
export function lstmKernel() {
  return `${kHead}${ro(0, 'x')}${ro(1, 'w')}${ro(2, 'r')}${ro(3, 'bias')}${ro(4, 's')}${rw(5, 'ns')}${rw(6, 'y')}${params(7)}
fn sig(v: f32) -> f32 { return 1.0 / (1.0 + exp(-v)); }
${kMain} {
  let i = index(g, nw);
  if (i >= p[0]) { return; }
  let B = p[1]; let H = p[2]; let I = p[3]; let t = p[4];
  let b = i / H; let j = i % H;
  var gate: array<f32, 4>;
  for (var k = 0u; k < 4u; k = k + 1u) {
    let row = k * H + j;
    var acc = bias[row] + bias[4u * H + row];
    for (var e = 0u; e < I; e = e + 1u) { acc = acc + x[(t * B + b) * I + e] * w[row * I + e]; }
    for (var e = 0u; e < H; e = e + 1u) { acc = acc + s[b * H + e] * r[row * H + e]; }
    gate[k] = acc;
  }
  let c = sig(gate[2]) * s[B * H + b * H + j] + sig(gate[0]) * tanh_(gate[3]);
  let h = sig(gate[1]) * tanh_(c);
  ns[b * H + j] = h;
  ns[B * H + b * H + j] = c;
  y[(t * B + b) * H + j] = h;
}`;
}
