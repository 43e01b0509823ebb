// Two builds of tessera-web's WebGPU layer against each other in one headless Chromium page
// (SwiftShader), for a kernel change: each model loaded on both, then ROUNDS rounds alternating
// which goes first, one run of each per round; medians and B / A. Both share the machine's load
// run by run, which a comparison of separate bench/web/webgpu.mjs runs does not.
// Usage: node bench/web/webgpu_ab.mjs DIST_A DIST_B [--models a,b] [--rounds N (default 7)]
//   DIST_A, DIST_B: web/dist-like folders (tessera.mjs, tessera-core.mjs, tessera.wasm, the JS API),
//   e.g. a copy of web/dist with the previous commit's web/js/webgpu*.mjs.
// Needs: web/node_modules (playwright-core), /usr/bin/chromium, third_party/models.
import path from 'node:path';
import { args, opt, serveWeb, launchChromium, modelFeeds } from './common.mjs';

const [A, B] = args.slice(0, 2).map((d) => path.resolve(d));
if (!A || !B || A.startsWith('--') || B.startsWith('--')) throw new Error('usage: node bench/web/webgpu_ab.mjs DIST_A DIST_B [--models a,b] [--rounds N]');
const names = opt('--models', 'oww_embedding,blazeface_front').split(',');
const rounds = Number(opt('--rounds', 7));
const { server, url } = await serveWeb([['/A', A], ['/B', B]]);
const browser = await launchChromium();
const page = await browser.newPage();
await page.goto(url);
console.log('| model | A steady (ms) | B steady (ms) | B / A |\n| --- | --: | --: | --: |');
for (const name of names) {
  const { m, feeds } = modelFeeds(name);
  const r = await page.evaluate(async ([file, feeds, rounds]) => {
    const typed = (f) => (f.dtype === 'int64' ? BigInt64Array.from(f.data, BigInt) : Float32Array.from(f.data));
    const tf = Object.fromEntries(feeds.map((f) => [f.name, { dtype: f.dtype, shape: f.shape, data: typed(f) }]));
    const bytes = new Uint8Array(await (await fetch(`/models/${file}`)).arrayBuffer());
    const models = {}, time = { A: [], B: [] };
    for (const k of ['A', 'B']) {
      const { Tessera } = await import(`/${k}/tessera.mjs`);
      models[k] = await (await Tessera.create({ device: 'webgpu' })).load(bytes);
      await models[k].run(tf);  // first run: shader compiles
    }
    for (let i = 0; i < rounds; i++) {
      for (const k of i % 2 ? ['B', 'A'] : ['A', 'B']) {
        const t0 = performance.now();
        await models[k].run(tf);
        time[k].push(performance.now() - t0);
      }
    }
    const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
    return { A: med(time.A), B: med(time.B) };
  }, [m.file, feeds, rounds]);
  console.log(`| ${name} | ${r.A.toFixed(0)} | ${r.B.toFixed(0)} | ${(r.B / r.A).toFixed(2)} |`);
}
await browser.close();
server.close();
