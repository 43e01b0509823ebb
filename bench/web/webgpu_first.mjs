// First-run (shader compile) time of Tessera's WebGPU layer against onnxruntime-web 1.30's WebGPU
// EP: each measurement in a fresh headless Chromium (SwiftShader; no pipeline or shader cache
// carried over), the two runtimes alternating which goes first, per model of tests/models with
// its seeded inputs. Phases, each timed alone in the page: init (Tessera.create({device:
// 'webgpu'}) / ort's import, its wasm and WebGPU device, brought up by a session of a one-node
// Identity model run once: not counted), load (model/session creation from the .onnx bytes), first run, second
// run. "first" = load + first run; "compile" ~ first run - second run (mostly pipeline creation).
// Usage: node bench/web/webgpu_first.mjs [--models a,b] [--rounds N (default 2)] [--ort DIR
//          (default bench/web/node_modules/onnxruntime-web/dist)]
// Needs: web/dist, web/node_modules (playwright-core), /usr/bin/chromium, onnxruntime-web's dist
//        (cd bench/web && npm ci), third_party/models.
import { opt, ortDir as ortDirOpt, serveWeb, launchChromium, modelFeeds } from './common.mjs';

const names = opt('--models', 'oww_alexa,oww_hey_jarvis,oww_melspectrogram,oww_embedding,blazeface_front,silero_vad_v5,ppocr_mobile_v2_cls').split(',');
const rounds = Number(opt('--rounds', 2));
const ortDir = ortDirOpt();

const { server, url } = await serveWeb([['/ort', ortDir]]);

// A one-node Identity model (x: float32 [1] -> y), opset 17, as base64.
const kIdentity = 'CAg6OAoQCgF4EgF5IghJZGVudGl0eRICaWRaDwoBeBIKCggIARIECgIIAWIPCgF5EgoKCAgBEgQKAggBQgQKABAR';

/** One runtime's phases for one model in a fresh browser: {init, load, first, second} in ms. */
async function measure(which, file, feeds) {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(url);
    return await page.evaluate(async ([which, file, feeds, kIdentity]) => {
      const bytes = new Uint8Array(await (await fetch(`/models/${file}`)).arrayBuffer());
      const typed = (f) => (f.dtype === 'int64' ? BigInt64Array.from(f.data, BigInt) : Float32Array.from(f.data));
      const t = [performance.now()];
      let load, run;
      if (which === 'ort') {
        const ort = await import('/ort/ort.webgpu.min.mjs');
        ort.env.wasm.numThreads = 1;
        ort.env.wasm.wasmPaths = '/ort/';
        const identity = Uint8Array.from(atob(kIdentity), (c) => c.charCodeAt(0));
        const warm = await ort.InferenceSession.create(identity, { executionProviders: ['webgpu'] });
        await warm.run({ x: new ort.Tensor('float32', Float32Array.of(1), [1]) });
        t.push(performance.now());
        const sess = await ort.InferenceSession.create(bytes, { executionProviders: ['webgpu'] });
        t.push(performance.now());
        run = () => sess.run(Object.fromEntries(feeds.map((f) => [f.name, new ort.Tensor(f.dtype, typed(f), f.shape)])));
      } else {
        const { Tessera } = await import('/dist/tessera.mjs');
        const tsr = await Tessera.create({ device: 'webgpu' });
        t.push(performance.now());
        const m = await tsr.load(bytes);
        t.push(performance.now());
        const tf = Object.fromEntries(feeds.map((f) => [f.name, { dtype: f.dtype, shape: f.shape, data: typed(f) }]));
        run = () => m.run(tf);
      }
      await run();
      t.push(performance.now());
      await run();
      t.push(performance.now());
      return { init: t[1] - t[0], load: t[2] - t[1], first: t[3] - t[2], second: t[4] - t[3] };
    }, [which, file, feeds, kIdentity]);
  } finally {
    await browser.close();
  }
}

console.log('| model | ort-web: load + first run (ms) | Tessera: load + first run (ms) | ratio | ort-web: first - second run | Tessera: first - second run | second run: ort-web / Tessera (ms) |');
console.log('| --- | --: | --: | --: | --: | --: | --: |');
const ratios = [];
for (const name of names) {
  const { m, feeds } = modelFeeds(name);
  const got = { ort: [], tsr: [] };
  for (let i = 0; i < rounds; i++)
    for (const k of i % 2 ? ['tsr', 'ort'] : ['ort', 'tsr']) got[k].push(await measure(k, m.file, feeds));
  const med = (a) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) / 2)];
  const of = (k, f) => med(got[k].map(f));
  const first = (r) => r.load + r.first, compile = (r) => r.first - r.second;
  ratios.push(of('tsr', first) / of('ort', first));
  const f = (x) => x.toFixed(Math.abs(x) < 10 ? 1 : 0);
  console.log(`| ${name} | ${f(of('ort', first))} | ${f(of('tsr', first))} | ${(of('tsr', first) / of('ort', first)).toFixed(2)} | ` +
    `${f(of('ort', compile))} | ${f(of('tsr', compile))} | ${f(of('ort', (r) => r.second))} / ${f(of('tsr', (r) => r.second))} |`);
}
console.log(`\ngeo-mean ratio of load + first run, Tessera / ort-web: ${Math.exp(ratios.reduce((a, x) => a + Math.log(x), 0) / ratios.length).toFixed(2)} (medians of ${rounds} fresh browsers each; the lower of two for 2 rounds)`);
server.close();
