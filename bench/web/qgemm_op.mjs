// One int8 GEMM (the models of bench/web/qgemm_op.py: DynamicQuantizeMatMul of f32 x [M, K] and a
// constant s8 W [K, N]) in tessera-web (web/dist/tessera.wasm, 1 thread) and onnxruntime-web (wasm,
// numThreads 1): the best of 25 runs each after 10 warm-up runs, in ms and GMAC/s (M * K * N
// multiply-adds per run; the times include copying x in and y out, as a model's run does).
// Usage: node bench/web/qgemm_op.mjs DIR (the .onnx files qgemm_op.py wrote there)
// Needs: web/dist (bash web/build.sh), bench/web/node_modules (cd bench/web && npm ci).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = process.argv[2];
if (!dir) throw new Error('usage: node bench/web/qgemm_op.mjs DIR (models from bench/web/qgemm_op.py)');
const { Tessera } = await import(path.join(repo, 'web', 'dist', 'tessera.mjs'));
const ortModule = await import('onnxruntime-web');
const ort = ortModule.default ?? ortModule;
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
const tsr = await Tessera.create({ threads: 1 });
const best = async (f, n = 25) => {
  let b = Infinity;
  for (let i = 0; i < n; i++) { const t = performance.now(); await f(); b = Math.min(b, performance.now() - t); }
  return b;
};
for (const file of fs.readdirSync(dir).filter((f) => /^dqmm_\d+x\d+x\d+\.onnx$/.test(f)).sort()) {
  const [m, k, n] = file.match(/(\d+)x(\d+)x(\d+)/).slice(1).map(Number);
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, file)));
  const x = new Float32Array(m * k).map((_, i) => Math.sin(i * 0.37) * 3);
  const model = await tsr.load(bytes, { name: file });
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all', intraOpNumThreads: 1 });
  const tf = { x: { dtype: 'float32', shape: [m, k], data: x } };
  const of = { x: new ort.Tensor('float32', x, [m, k]) };
  for (let i = 0; i < 10; i++) { await model.run(tf); await session.run(of); }
  const tt = await best(() => model.run(tf)), to = await best(() => session.run(of));
  const mmac = (m * k * n) / 1e6;
  console.log(`${m} x ${k} x ${n}: tessera ${tt.toFixed(3)} ms (${(mmac / tt).toFixed(1)} GMAC/s), ` +
              `onnxruntime-web ${to.toFixed(3)} ms (${(mmac / to).toFixed(1)} GMAC/s), ratio ${(tt / to).toFixed(2)}`);
  model.dispose();
  await session.release();
}
tsr.dispose();
