// The OCR page (web/examples/ocr/) in Debian's headless Chromium, driven by playwright-core
// (web/node_modules; never a downloaded browser): the page imports PP-OCRv4 det, cls and rec from
// ONNX in wasm. Whole pages: the three sample pages (examples/ocr/make_samples.py, rendered into
// a temporary folder mounted at /samples) go in through a sample button, the file input, a drop
// and a paste, and the page's text must match what was drawn (CER <= 2%, as the native test) with its
// boxes drawn on the canvas; Copy must put the lines on the clipboard. TSR_OCR_SCREENSHOT=FILE also saves a screenshot (docs/ocr-page.png).
// One line (?mode=line): a rendered text line is picked in its file input, and the page must show
// that text. Also with
// ?threads=2: on the cross-origin isolated page (the server's COOP/COEP headers) it runs
// tessera-threads.wasm on the page's main thread, and served without those headers it falls back
// to tessera.wasm on one thread.
// The first test also fine-tunes a small classifier (web/test/make_train_model.py) in the page
// with the Trainer API: its losses must be those of the same steps in node (the same wasm).
// Skipped only when the machine lacks chromium, playwright-core, ImageMagick, Pillow or the models.
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
  : !['ch_PP-OCRv4_rec_infer.onnx', 'ch_PP-OCRv4_det_infer.onnx', 'ch_ppocr_mobile_v2.0_cls_infer.onnx']
    .every((m) => fs.existsSync(path.join(models, m))) ? 'models missing (third_party/models/fetch.sh)' : false;

// The sample pages, rendered once from their known text (null when Pillow/DejaVu are missing).
let samplesDir;
function samples() {
  if (samplesDir === undefined) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-ocr-samples-'));
    try {
      execFileSync('/usr/bin/python3', [path.join(repo, 'examples', 'ocr', 'make_samples.py'), dir]);
      samplesDir = dir;
    } catch {
      samplesDir = null;
    }
  }
  return samplesDir;
}

// Opens the OCR page (query: e.g. '?threads=2') from a local server (isolate: its COOP/COEP
// headers), waits for it to be ready, and hands the page to fn(page, log).
async function withPage(query, isolate, fn, extraMounts = []) {
  const { serve } = await import(path.join(repo, 'web', 'tools', 'serve.mjs'));
  const { server, url } = await serve({ root: path.join(repo, 'web'), mounts: [['/models', models], ...extraMounts], isolate });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run',
      // getUserMedia gets Chromium's synthetic camera (a moving test pattern), granted without a prompt.
      '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1180, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
    const log = [];
    page.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
    const t0 = Date.now();
    await page.goto(`${url}examples/ocr/${query}`);
    await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 240000 });
    assert.equal(await page.getAttribute('body', 'data-state'), 'ready', `${await page.textContent('#status')}\n${log.join('\n')}`);
    await fn(page, log, Date.now() - t0);
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
  await withPage('?mode=line', true, async (page) => {
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
  await withPage('?mode=line&threads=2', true, async (page, log) => {
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    assert.equal(await page.getAttribute('body', 'data-threads'), '2', `${await page.textContent('#status')}\n${log.join('\n')}`);
    assert.match(await page.textContent('#status'), /2 threads \(tessera-threads\.wasm\)/);
    assert.equal(page.workers().length, 1, "the model's second thread runs on a pthread Worker");
    await readLine(page, 'Invoice number 48213');
    await readLine(page, 'Hello Tessera 2026', path.join(repo, 'examples', 'ocr', 'hello.png'));
  });
});

test('OCR page with threads: 2 without COOP/COEP falls back to one thread and says why', { skip, timeout: 300000 }, async () => {
  await withPage('?mode=line&threads=2', false, async (page, log) => {
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    assert.equal(await page.getAttribute('body', 'data-threads'), '1');
    assert.match(await page.textContent('#status'), /1 thread \(the page is not cross-origin isolated/);
    assert.ok(log.some((l) => /console\.warning: tessera: threads: 2 runs on 1 thread \(tessera\.wasm\)/.test(l)), log.join('\n'));
    assert.equal(page.workers().length, 0, 'no pthread Workers');
    await readLine(page, 'Invoice number 48213');
  });
});

// Character error rate as tests/cli/ocr_page_cer.py computes it: Levenshtein distance over the
// reference length, lines joined by one space, whitespace runs collapsed.
function cer(gotLines, refLines) {
  const norm = (lines) => lines.join(' ').replace(/\s+/g, ' ').trim();
  const a = norm(gotLines), b = norm(refLines);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur.push(Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] !== b[j - 1])));
    prev = cur;
  }
  return { rate: prev[b.length] / Math.max(1, b.length), got: a, want: b };
}

// Waits for the page to finish reading `name` and checks its text, its boxes and the canvas.
async function checkPage(page, dir, name, since) {
  await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: 120000 });
  const ms = Date.now() - since;
  assert.equal(await page.getAttribute('body', 'data-state'), 'done', await page.textContent('#status'));
  const lines = await page.$$eval('#lines .line-text', (els) => els.map((e) => e.textContent));
  const ref = fs.readFileSync(path.join(dir, `${name}.txt`), 'utf8').split('\n').filter((l) => l);
  const { rate, got, want } = cer(lines, ref);
  assert.ok(rate <= 0.02, `${name}: CER ${(rate * 100).toFixed(2)}%\n  read:     ${got}\n  expected: ${want}`);
  const boxes = Number(await page.getAttribute('body', 'data-boxes'));
  assert.equal(boxes, lines.length, 'one box drawn per line');
  assert.ok(boxes >= ref.length - 2, `${name}: ${boxes} boxes for ${ref.length} lines`);
  // The boxes are on the canvas: pixels of their outline colour (#e8590c), which no sample has.
  const orange = await page.evaluate(() => {
    const c = document.getElementById('view'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 232) < 8 && Math.abs(d[i + 1] - 89) < 8 && Math.abs(d[i + 2] - 12) < 8) n++;
    return n;
  });
  assert.ok(orange > 100 * boxes, `${name}: ${orange} box-coloured pixels for ${boxes} boxes`);
  await page.evaluate(() => { document.body.dataset.state = 'ready'; });
  return { name, cer: rate, lines: lines.length, ms };
}

test('OCR page reads whole sample pages (button, file input, drop, paste, camera; copy) in Chromium', { skip, timeout: 300000 }, async (t) => {
  const dir = samples();
  if (!dir) { t.skip('Pillow or DejaVu fonts missing (python3-pil, fonts-dejavu-core)'); return; }
  await withPage('', true, async (page, log, readyMs) => {
    const results = [];
    let since = Date.now();
    await page.click('button[data-sample="receipt"]');
    results.push(await checkPage(page, dir, 'receipt', since));
    const firstResult = Number(await page.getAttribute('body', 'data-first-result-ms'));
    since = Date.now();
    await page.setInputFiles('#file', path.join(dir, 'sign.png'));
    results.push(await checkPage(page, dir, 'sign', since));
    // A drop of a file, as a drag from the desktop delivers it.
    since = Date.now();
    await page.evaluate(async () => {
      const blob = await (await fetch('/samples/columns.png')).blob();
      const dt = new DataTransfer();
      dt.items.add(new File([blob], 'columns.png', { type: 'image/png' }));
      const drop = document.getElementById('drop');
      drop.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      drop.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    results.push(await checkPage(page, dir, 'columns', since));
    // Copy puts the lines on the clipboard, one per line.
    await page.click('#copy');
    await page.waitForFunction(() => /copied/.test(document.getElementById('status').textContent));
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, (await page.$$eval('#lines .line-text', (els) => els.map((e) => e.textContent))).join('\n'));
    // A paste of an image (as Ctrl+V of a copied image delivers it) reads it.
    since = Date.now();
    await page.evaluate(async () => {
      const blob = await (await fetch('/samples/sign.png')).blob();
      const dt = new DataTransfer();
      dt.items.add(new File([blob], 'sign.png', { type: 'image/png' }));
      document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    });
    const pasted = await checkPage(page, dir, 'sign', since);
    // Take a photo: one frame of the (synthetic) camera is read as a page.
    assert.equal(await page.isVisible('#camera'), true, 'the camera button shows where getUserMedia exists');
    await page.click('#camera');
    await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: 120000 });
    assert.equal(await page.getAttribute('body', 'data-state'), 'done', await page.textContent('#status'));
    assert.match(await page.textContent('#status'), /^camera photo: \d+ lines? in \d+ ms \(\d+ x \d+ px\)/);
    await page.evaluate(() => { document.body.dataset.state = 'ready'; });
    // Back to the columns for the stage timings and the screenshot.
    await page.click('button[data-sample="columns"]');
    await checkPage(page, dir, 'columns', Date.now());
    const timings = await page.$$eval('#timings tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent).join(' ')).join(', '));
    t.diagnostic(`page ready (runtime + 3 models) ${readyMs} ms after navigation; first result at ${firstResult} ms ` +
      `(performance.now()); receipt read in ${results[0].ms} ms after the click`);
    t.diagnostic(`pasted sign: CER ${(pasted.cer * 100).toFixed(2)}%, ${pasted.ms} ms`);
    for (const r of results) t.diagnostic(`${r.name}: CER ${(r.cer * 100).toFixed(2)}%, ${r.lines} lines, ${r.ms} ms (action to text)`);
    t.diagnostic(`columns stages: ${timings}`);
    if (process.env.TSR_OCR_SCREENSHOT) await page.screenshot({ path: process.env.TSR_OCR_SCREENSHOT });
  }, [['/samples', dir]]);
});
