// Tessera's WebGPU layer against onnxruntime-web 1.30's WebGPU EP (ort.webgpu.min.mjs) in one
// headless Chromium page on the same adapter (Debian's Chromium: SwiftShader, a CPU
// implementation, so the figures are ratios, not GPU speeds), on models of tests/models/models.json
// with seeded inputs: per model, the first run (session/model creation + the first run: shader
// compiles) of each, then ROUNDS rounds alternating which runtime goes first, one run of each
// per round; medians, and Tessera's wasm (tessera.wasm, one thread) for scale.
// Usage: node bench/web/webgpu.mjs [--models a,b] [--rounds N (default 5)] [--ort DIR (default
//          bench/web/node_modules/onnxruntime-web/dist)]
// Needs: web/dist, web/node_modules (playwright-core), /usr/bin/chromium, bench/web/node_modules
//        (cd bench/web && npm ci), third_party/models.
import { opt, ortDir as ortDirOpt, serveWeb, launchChromium, modelFeeds } from './common.mjs';

const names = opt('--models', 'ppocr_mobile_v2_cls,oww_embedding,oww_alexa,oww_melspectrogram,blazeface_front').split(',');
const rounds = Number(opt('--rounds', 5));
const ortDir = ortDirOpt();

const { server, url } = await serveWeb([['/ort', ortDir]]);
const browser = await launchChromium();
const page = await browser.newPage();
await page.goto(url);
console.log(`| model | first run: ort-web webgpu (ms) | Tessera webgpu (ms) | steady: ort-web webgpu (ms) | Tessera webgpu (ms) | ratio | Tessera wasm (ms) | nodes on webgpu |`);
console.log('| --- | --: | --: | --: | --: | --: | --: | --: |');
const ratios = [];
for (const name of names) {
  const { m, feeds } = modelFeeds(name);
  const r = await page.evaluate(async ([file, feeds, rounds]) => {
    const ort = await import('/ort/ort.webgpu.min.mjs');
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.wasmPaths = '/ort/';
    const { Tessera } = await import('/dist/tessera.mjs');
    const bytes = new Uint8Array(await (await fetch(`/models/${file}`)).arrayBuffer());
    const typed = (f) => (f.dtype === 'int64' ? BigInt64Array.from(f.data, BigInt) : Float32Array.from(f.data));
    const ortFeeds = () => Object.fromEntries(feeds.map((f) => [f.name, new ort.Tensor(f.dtype, typed(f), f.shape)]));
    const tsrFeeds = Object.fromEntries(feeds.map((f) => [f.name, { dtype: f.dtype, shape: f.shape, data: typed(f) }]));
    let t = performance.now();
    const sess = await ort.InferenceSession.create(bytes, { executionProviders: ['webgpu'] });
    await sess.run(ortFeeds());
    const ortFirst = performance.now() - t;
    t = performance.now();
    const gpu = await Tessera.create({ device: 'webgpu' });
    const mg = await gpu.load(bytes);
    await mg.run(tsrFeeds);
    const tsrFirst = performance.now() - t;
    const cpu = await Tessera.create();
    const mc = await cpu.load(bytes);
    await mc.run(tsrFeeds);
    const time = { ort: [], tsr: [], wasm: [] };
    const runs = { ort: () => sess.run(ortFeeds()), tsr: () => mg.run(tsrFeeds), wasm: () => mc.run(tsrFeeds) };
    for (let i = 0; i < rounds; i++) {
      for (const k of i % 2 ? ['tsr', 'ort', 'wasm'] : ['ort', 'tsr', 'wasm']) {
        const t0 = performance.now();
        await runs[k]();
        time[k].push(performance.now() - t0);
      }
    }
    const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
    const p = mg.placement;
    const on = p.nodes.filter((n) => n.device === 'webgpu').length;
    mg.dispose(); mc.dispose(); gpu.dispose(); cpu.dispose(); await sess.release();
    return { ortFirst, tsrFirst, ort: med(time.ort), tsr: med(time.tsr), wasm: med(time.wasm), on, n: p.nodes.length };
  }, [m.file, feeds, rounds]);
  ratios.push(r.tsr / r.ort);
  const f = (x) => x.toFixed(x < 10 ? 1 : 0);
  console.log(`| ${name} | ${f(r.ortFirst)} | ${f(r.tsrFirst)} | ${f(r.ort)} | ${f(r.tsr)} | ${(r.tsr / r.ort).toFixed(2)} | ${f(r.wasm)} | ${r.on} of ${r.n} |`);
}
console.log(`\ngeo-mean ratio Tessera webgpu / ort-web webgpu (steady): ${Math.exp(ratios.reduce((a, x) => a + Math.log(x), 0) / ratios.length).toFixed(2)}`);
await browser.close();
server.close();
