// What the WebGPU bench scripts (webgpu.mjs, webgpu_first.mjs, webgpu_ab.mjs) share: the repo's
// paths, tests/models/lib.js, command-line options, the static server over web/ with the models
// mounted, headless Chromium on SwiftShader's WebGPU adapter, and one model's seeded feeds.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..');
export const lib = createRequire(import.meta.url)(path.join(repo, 'tests', 'models', 'lib.js'));
const { chromium } = createRequire(path.join(repo, 'web', 'package.json'))('playwright-core');

export const args = process.argv.slice(2);
// The value after flag `n` on the command line, or `d`.
export const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
// --ort DIR: onnxruntime-web's dist/ (default bench/web/node_modules/onnxruntime-web/dist).
export const ortDir = () => path.resolve(opt('--ort', path.join(here, 'node_modules', 'onnxruntime-web', 'dist')));

// Serves web/ with tests/models' files at /models and `mounts` ([[urlPrefix, dir], ...]) beside.
export async function serveWeb(mounts = []) {
  const { serve } = await import(path.join(repo, 'web', 'tools', 'serve.mjs'));
  return serve({ root: path.join(repo, 'web'), mounts: [['/models', lib.modelsDir()], ...mounts] });
}

// Debian's headless Chromium with its SwiftShader WebGPU adapter.
export function launchChromium() {
  return chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'] });
}

// Model `name` of tests/models/models.json and its inputs for seed 1234, as plain JSON for a page.
export function modelFeeds(name) {
  const m = lib.loadModels().find((x) => x.name === name);
  if (!m) throw new Error(`no model ${name} in tests/models/models.json`);
  const feeds = lib.makeInputs(m, 1234).map((t) => ({ name: t.name, dtype: t.dtype, shape: t.shape, data: Array.from(t.data, Number) }));
  return { m, feeds };
}
