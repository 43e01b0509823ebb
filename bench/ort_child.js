// One onnxruntime-node measurement in its own process, so that its peak RSS is its own:
//   node bench/ort_child.js MODEL.onnx THREADS WARMUP REPEAT NAME=FILE.npy ...
// Prints one JSON line {times_ms:[...], base_rss_kb} on stdout (base_rss_kb: the node process's
// resident memory before onnxruntime was loaded, so readers can tell node's own share of the
// peak that bench/latency.js measures around this process). Exit status 1 on any error.
'use strict';
const lib = require('../tests/models/lib.js');

async function main() {
  const [file, threads, warmup, repeat, ...inputs] = process.argv.slice(2);
  if (!file || !(Number(threads) > 0) || !(Number(repeat) > 0)) {
    throw new Error('usage: ort_child.js MODEL.onnx THREADS WARMUP REPEAT NAME=FILE.npy ...');
  }
  const baseRss = Math.round(process.memoryUsage().rss / 1024);
  const ort = lib.loadOrt();
  const session = await ort.InferenceSession.create(file, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const spec of inputs) {
    const eq = spec.indexOf('=');
    const t = lib.readNpy(spec.slice(eq + 1));
    feeds[spec.slice(0, eq)] = new ort.Tensor(t.dtype, t.data, t.shape);
  }
  for (let i = 0; i < Number(warmup); i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(repeat); i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  console.log(JSON.stringify({ times_ms: times, base_rss_kb: baseRss }));
}

main().catch(e => { console.error('ort_child: ' + (e && e.message ? e.message : e)); process.exit(1); });
