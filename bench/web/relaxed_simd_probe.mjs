// Does this engine's relaxed SIMD make a faster exact int8 GEMM tile than SIMD128's i32x4.dot_i16x8_s?
// qgemm's wasm tile (backends/cpu/kernels/qgemm_kernels-inl.h, WasmTile) multiplies u8 activations
// by s8 weights exactly, 8 products per i32x4.dot_i16x8_s. i32x4.relaxed_dot_i8x16_i7x16_add_s does
// 16 per instruction, but the relaxed SIMD spec leaves the result implementation-defined once the
// "i7" operand has its top bit set (u8 values >= 128), and the Emscripten toolchain here (clang 14)
// has no builtin for it. This script hand-assembles a wasm module (no toolchain needed) with
//  - a probe: relaxed dot of splatted bytes, against the exact u8 x s8 sums;
//  - two 4-row x 8-column tiles over K = 384 in L1: the i16 path as WasmTile runs it (two 4-column
//    passes) and a relaxed-dot tile (A u8 as the i7 operand, B s8), in GMAC/s.
// Usage: node [--experimental-wasm-relaxed-simd] bench/web/relaxed_simd_probe.mjs
// Node 20 (V8 11.3) rejects the module unless given the flag, and with it the lanes did not match
// the spec's sums (see bench/results/web-q8-gemm-2026-11-29.md).
const leb = (n) => { const o = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; o.push(b); } while (n); return o; };
const sleb = (n) => { const o = []; for (;;) { let b = n & 0x7f; n >>= 7; if ((n === 0 && !(b & 0x40)) || (n === -1 && (b & 0x40))) { o.push(b); return o; } o.push(b | 0x80); } };
const simd = (op, ...imm) => [0xfd, ...leb(op), ...imm];
const mem = (align, off) => [align, ...leb(off)];
const lget = (i) => [0x20, ...leb(i)], lset = (i) => [0x21, ...leb(i)], ltee = (i) => [0x22, ...leb(i)];
const i32c = (v) => [0x41, ...sleb(v)];
const vec = (a) => [...leb(a.length), ...a];
const section = (id, body) => [id, ...leb(body.length), ...body];
const R = 4;
// params: 0 a, 1 b, 2 kq, 3 reps ; result: i32 checksum
// locals: 4 q, 5 pa, 6 pb, 7 rep, 8.. v128 accs (8), then temps: bv0 bv1 av
function body(kind) {
  const ACC = 8, B0 = 16, B1 = 17, AV = 18;
  const c = [];
  const zero = simd(0x0c, ...new Array(16).fill(0));
  c.push(...i32c(0), ...lset(7));
  c.push(0x03, 0x40); // loop rep
  const passes = kind === 'i16' ? [0, 1] : [0];
  for (const h of passes) {
    for (let i = 0; i < 8; i++) c.push(...zero, ...lset(ACC + i));
    c.push(...lget(0), ...lset(5), ...lget(1), ...(kind === 'i16' ? [...i32c(16 * h), 0x6a] : []), ...lset(6), ...i32c(0), ...lset(4));
    c.push(0x03, 0x40); // loop q
    if (kind === 'i16') {
      c.push(...lget(6), ...simd(0x01, ...mem(0, 0)), ...lset(B0), ...lget(6), ...simd(0x01, ...mem(0, 8)), ...lset(B1));
      for (let r = 0; r < R; r++) {
        c.push(...lget(5), ...simd(0x0a, ...mem(0, 8 * r)), ...lset(AV));
        for (let v = 0; v < 2; v++) c.push(...lget(ACC + 2 * r + v), ...lget(AV), ...lget(B0 + v), ...simd(0xba), ...simd(0xae), ...lset(ACC + 2 * r + v));
      }
      c.push(...lget(5), ...i32c(8 * R), 0x6a, ...lset(5), ...lget(6), ...i32c(32), 0x6a, ...lset(6));
    } else {
      c.push(...lget(6), ...simd(0x00, ...mem(0, 0)), ...lset(B0), ...lget(6), ...simd(0x00, ...mem(0, 16)), ...lset(B1));
      for (let r = 0; r < R; r++) {
        c.push(...lget(5), ...simd(0x09, ...mem(0, 4 * r)), ...lset(AV));
        for (let v = 0; v < 2; v++) c.push(...lget(B0 + v), ...lget(AV), ...lget(ACC + 2 * r + v), ...simd(0x113), ...lset(ACC + 2 * r + v));
      }
      c.push(...lget(5), ...i32c(4 * R), 0x6a, ...lset(5), ...lget(6), ...i32c(32), 0x6a, ...lset(6));
    }
    c.push(...lget(4), ...i32c(1), 0x6a, ...ltee(4), ...lget(2), 0x49, 0x0d, 0x00, 0x0b); // q < kq: br_if 0 ; end
  }
  c.push(...lget(7), ...i32c(1), 0x6a, ...ltee(7), ...lget(3), 0x49, 0x0d, 0x00, 0x0b);
  // checksum: sum of lane 0 of every accumulator
  c.push(...i32c(0));
  for (let i = 0; i < 8; i++) c.push(...lget(ACC + i), ...simd(0x1b, 0), 0x6a);
  c.push(0x0b);
  const locals = [0x02, 4, 0x7f, 11, 0x7b];
  return vec([...locals, ...c]);
}
// probe(a_byte, b_byte) -> lane 0 of relaxed_dot(splat b (i8), splat a (i7), 0)
function probeBody() {
  const c = [...lget(1), ...simd(0x0f), ...lget(0), ...simd(0x0f), ...simd(0x0c, ...new Array(16).fill(0)), ...simd(0x113), ...simd(0x1b, 0), 0x0b];
  return vec([0, ...c]);
}
const types = [0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f, 0x60, 2, 0x7f, 0x7f, 1, 0x7f];
const mod = [0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
  ...section(1, [2, ...types]),
  ...section(3, [3, 0, 0, 1]),
  ...section(5, [1, 0, 16]),
  ...section(7, [4, ...vec([...'i16'].map((x) => x.charCodeAt(0))), 0, 0, ...vec([...'rlx'].map((x) => x.charCodeAt(0))), 0, 1,
                 ...vec([...'probe'].map((x) => x.charCodeAt(0))), 0, 2, ...vec([...'mem'].map((x) => x.charCodeAt(0))), 2, 0]),
  ...section(10, [3, ...body('i16'), ...body('rlx'), ...probeBody()])];
let inst;
try { inst = (await WebAssembly.instantiate(new Uint8Array(mod))).instance; } catch (e) { console.log('relaxed SIMD unavailable here (module rejected):', e.message); process.exit(0); }
const { i16, rlx, probe } = inst.exports;
for (const [a, b] of [[1, 1], [100, -100], [200, -100], [255, 127]]) {
  const got = probe(a, b), exact = 4 * a * b;
  console.log(`probe: relaxed_dot(i7 operand ${a}, i8 operand ${b}) lane ${got}, exact u8 x s8 ${exact}: ${got === exact ? 'exact' : 'NOT exact'}`);
}
const u8 = new Uint8Array(inst.exports.mem.buffer);
for (let i = 0; i < 65536; i++) u8[i] = (i * 37) & 255;
const kq = 96, reps = 200000;
for (let round = 0; round < 3; round++) {
  for (const [n, f] of [['i16 dot', i16], ['relaxed dot', rlx]]) {
    f(0, 8192, kq, 1000);
    let best = 1e9; for (let m = 0; m < 3; m++) { const t = performance.now(); f(0, 8192, kq, reps); best = Math.min(best, performance.now() - t); }
    console.log(`${n}: ${(R * 8 * 4 * kq * reps / best / 1e6).toFixed(1)} GMAC/s`);
  }
}
