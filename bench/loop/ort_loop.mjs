// Times onnxruntime-node on loop_add.onnx: median wall time of REPEAT runs of M iterations,
// single-threaded. Usage: node ort_loop.mjs MODEL.onnx M REPEAT  (prints JSON)
import { createRequire } from 'module';
const require = createRequire(import.meta.url);
const ort = require(process.env.ORT_NODE_PATH || 'onnxruntime-node');
const [model, mArg, repArg] = process.argv.slice(2);
const M = BigInt(mArg), repeat = Number(repArg);
const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
const feeds = { M: new ort.Tensor('int64', [M], []), x0: new ort.Tensor('float32', [0], []) };
const times = [];
let out;
for (let r = 0; r < repeat + 1; ++r) {
  const t0 = process.hrtime.bigint();
  out = await session.run(feeds);
  const t1 = process.hrtime.bigint();
  if (r > 0) times.push(Number(t1 - t0) / 1e6);  // first run is warm-up
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ median_ms: times[Math.floor(times.length / 2)], result: out.x.data[0] }));
