// The OCR page (web/examples/ocr/) in Debian's headless Chromium, driven by playwright-core
// (web/node_modules; never a downloaded browser): the page imports PP-OCRv4 from ONNX in wasm,
// a rendered text line is picked in its file input, and the page must show that text. Also with
// ?threads=2: on the cross-origin isolated page (the server's COOP/COEP headers) it runs
// tessera-threads.wasm on the page's main thread, and served without those headers it falls back
// to tessera.wasm on one thread.
// The first test also fine-tunes a small classifier (web/test/make_train_model.py) in the page
// with the Trainer API: its losses must be those of the same steps in node (the same wasm).
// Skipped only when the machine lacks chromium, playwright-core, ImageMagick or the models.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const models = path.join(repo, 'third_party', 'models');
const require = createRequire(path.join(repo, 'web', 'package.json'));
let chromium = null;
try { ({ chromium } = require('playwright-core')); } catch { /* skipped below */ }
const haveMagick = (() => { try { execFileSync('convert', ['-version']); return true; } catch { return false; } })();
const skip = !fs.existsSync('/usr/bin/chromium') ? 'no /usr/bin/chromium'
  : !chromium ? 'playwright-core missing in web/node_modules (scripts/install_deps.sh)'
  : !haveMagick ? 'ImageMagick missing'
  : !fs.existsSync(path.join(models, 'ch_PP-OCRv4_rec_infer.onnx')) ? 'models missing (third_party/models/fetch.sh)' : false;

// Opens the OCR page (query: e.g. '?threads=2') from a local server (isolate: its COOP/COEP
// headers), waits for it to be ready, and hands the page to fn(page, log).
async function withPage(query, isolate, fn) {
  const { serve } = await import(path.join(repo, 'web', 'tools', 'serve.mjs'));
  const { server, url } = await serve({ root: path.join(repo, 'web'), mounts: [['/models', models]], isolate });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    const log = [];
    page.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
    await page.goto(`${url}examples/ocr/${query}`);
    await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 240000 });
    assert.equal(await page.getAttribute('body', 'data-state'), 'ready', `${await page.textContent('#status')}\n${log.join('\n')}`);
    await fn(page, log);
  } finally {
    await browser.close();
    server.close();
  }
}

// Picks the image in the page's file input; the page must show `text`.
async function readLine(page, text, img) {
  if (!img) {
    img = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-ocr-')), 'line.png');
    execFileSync('convert', ['-background', 'white', '-fill', 'black', '-font', 'DejaVu-Sans', '-pointsize', '32',
      `label:${text}`, '-bordercolor', 'white', '-border', '8', img]);
  }
  await page.setInputFiles('#file', img);
  await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: 60000 });
  assert.equal(await page.getAttribute('body', 'data-state'), 'done', await page.textContent('#status'));
  assert.equal(await page.textContent('#text'), text, await page.textContent('#status'));
  await page.evaluate(() => { document.body.dataset.state = 'ready'; });
}

// A few Trainer steps on a fixed synthetic batch (8 images, labels i % 10), a checkpoint and its
// resumption; self-contained so that it runs in the page (page.evaluate) and in node alike.
async function trainSteps({ entry, model }) {
  const { Tessera, Tensor } = await import(entry);
  const tsr = await Tessera.create();
  const trainer = await tsr.prepareTraining(new Uint8Array(model), { optimizer: 'sgd', learningRate: 0.1, momentum: 0.9 });
  const images = new Float32Array(8 * 784);
  let seed = 12345;
  for (let i = 0; i < images.length; i++) { seed = (seed * 1103515245 + 12345) % 2147483648; images[i] = seed / 2147483648; }
  const batch = { inputs: { image: new Tensor('float32', images, [8, 1, 28, 28]) }, labels: BigInt64Array.from({ length: 8 }, (_, i) => BigInt(i % 10)) };
  const losses = [];
  for (let k = 0; k < 4; k++) losses.push(await trainer.step(batch));
  const resumed = await tsr.loadTrainer(trainer.save());
  const next = [await trainer.step(batch), await resumed.step(batch)];
  const steps = [trainer.stepCount, resumed.stepCount];
  tsr.dispose();
  return { losses, next, steps };
}

test('OCR page reads rendered text lines in Chromium', { skip, timeout: 300000 }, async () => {
  await withPage('', true, async (page) => {
    assert.equal(await page.evaluate(() => crossOriginIsolated), true, 'COOP/COEP headers make the page cross-origin isolated');
    assert.equal(await page.getAttribute('body', 'data-threads'), '1');
    await readLine(page, 'Invoice number 48213');
    await readLine(page, 'Hello Tessera 2026', path.join(repo, 'examples', 'ocr', 'hello.png'));
    // A wasm that cannot be fetched rejects create() with not_found (instead of leaving it pending).
    const err = await page.evaluate(async () => {
      const { Tessera } = await import('/dist/tessera.mjs');
      try {
        await Tessera.create({ wasmUrl: '/dist/no-such.wasm' });
        return 'resolved';
      } catch (e) {
        return `${e.name} ${e.code}: ${e.message}`;
      }
    });
    assert.match(err, /^TesseraError not_found: .*no-such\.wasm/);
    // Training in the page: the loss falls, a checkpoint resumes, and the steps equal node's.
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-train-page-')), 'mlp.onnx');
    execFileSync('/usr/bin/python3', [path.join(repo, 'web', 'test', 'make_train_model.py'), file]);
    const model = [...fs.readFileSync(file)];
    const inPage = await page.evaluate(trainSteps, { entry: '/dist/tessera.mjs', model });
    assert.ok(inPage.losses[3] < inPage.losses[0], `losses in the page: ${inPage.losses}`);
    assert.equal(inPage.next[0], inPage.next[1], 'the resumed trainer takes the same step');
    assert.deepEqual(inPage.steps, [5, 5]);
    assert.deepEqual(await trainSteps({ entry: pathToFileURL(path.join(repo, 'web', 'dist', 'tessera.mjs')).href, model }), inPage);
  });
});

test('OCR page with threads: 2 on a cross-origin isolated page runs tessera-threads.wasm', { skip, timeout: 300000 }, async () => {
  await withPage('?threads=2', true, async (page, log) => {
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    assert.equal(await page.getAttribute('body', 'data-threads'), '2', `${await page.textContent('#status')}\n${log.join('\n')}`);
    assert.match(await page.textContent('#status'), /2 threads \(tessera-threads\.wasm\)/);
    assert.equal(page.workers().length, 1, "the model's second thread runs on a pthread Worker");
    await readLine(page, 'Invoice number 48213');
    await readLine(page, 'Hello Tessera 2026', path.join(repo, 'examples', 'ocr', 'hello.png'));
  });
});

test('OCR page with threads: 2 without COOP/COEP falls back to one thread and says why', { skip, timeout: 300000 }, async () => {
  await withPage('?threads=2', false, async (page, log) => {
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    assert.equal(await page.getAttribute('body', 'data-threads'), '1');
    assert.match(await page.textContent('#status'), /1 thread \(the page is not cross-origin isolated/);
    assert.ok(log.some((l) => /console\.warning: tessera: threads: 2 runs on 1 thread \(tessera\.wasm\)/.test(l)), log.join('\n'));
    assert.equal(page.workers().length, 0, 'no pthread Workers');
    await readLine(page, 'Invoice number 48213');
  });
});
