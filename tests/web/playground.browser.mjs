// The playground (web/dist/playground, built by web/build.sh) in Debian's headless Chromium with
// SwiftShader's WebGL2, driven by playwright-core through real mouse and keyboard events at the
// rectangles window.tesseraPlayground.rect(label) reports. Run by scripts/test.sh's `playground`
// stage: node --test tests/web/playground.browser.mjs
// Checks: no console error; the seeds' model(X, flag) in eager/trace/convert for both flags
// against numpy; the converted graph has an If, the traced one none; a diagnostic at line:col;
// 200 training steps on circles lower the loss; Export downloads a .tsr that the native
// `tessera run` (build/release/bin/tessera, or $TSR_CLI) runs with the page's outputs; the
// exported .tsr dropped on the page runs in the Models panel; Share's URL reopens the script;
// at 1400x900 no example line is wider than the editor's visible text area; the editor's colour spans come from the script lexer's tokens; print() reaches the Output log;
// the loss curve draws every step; the sample model on a dropped image gives the top-k that
// softmax(mean RGB @ W) gives by hand; a dropped .onnx with a 4-D output on a dropped image shows
// a heatmap whose cells have the colours of the values computed here; the Models panel's device
// switch (Chromium's SwiftShader WebGPU adapter, --enable-unsafe-webgpu) runs the sample on WebGPU
// with every node placed there and the CPU run's outputs (rel-L2 <= 1e-4), and a page without
// navigator.gpu shows "WebGPU unavailable" with the switch disabled. Screenshots: build/playground/.
// Skipped only when the machine lacks chromium, playwright-core, numpy or the built page; the
// native `tessera run` check is a subtest, skipped (and counted so) only when the CLI is not built.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = process.env.TSR_PLAYGROUND_DIR ?? path.join(repo, 'web', 'dist', 'playground');
const shots = path.join(repo, 'build', 'playground');
const cli = process.env.TSR_CLI ?? path.join(repo, 'build', 'release', 'bin', 'tessera');
const require = createRequire(path.join(repo, 'web', 'package.json'));
const lib = require(path.join(repo, 'tests', 'models', 'lib.js'));
let chromium = null;
try { ({ chromium } = require('playwright-core')); } catch { /* skipped below */ }
const haveNumpy = (() => { try { execFileSync('/usr/bin/python3', ['-c', 'import numpy']); return true; } catch { return false; } })();
const skip = !fs.existsSync('/usr/bin/chromium') ? 'no /usr/bin/chromium'
  : !chromium ? 'playwright-core missing in web/node_modules (scripts/install_deps.sh)'
  : !haveNumpy ? 'python3-numpy missing'
  : !fs.existsSync(path.join(dist, 'tessera-playground.wasm')) ? `${dist} not built (bash web/build.sh)` : false;

// relu(X @ W + b) for both flags, by numpy, with the example's constants (examples/script/model.py).
function numpyReference(X) {
  const py = `
import json, sys, numpy as np
X = np.array(json.loads(sys.argv[1]), dtype=np.float32)
W1 = np.array([[1, 2, 0], [0, 1, -1]], np.float32); W2 = np.array([[-1, 0, 1], [2, -2, 0.5]], np.float32)
b = np.array([0.5, -1, 0.25], np.float32)
gneg = ((X @ W2 + b) > 0).astype(np.float32) @ W2.T   # d sum(relu(X @ W2 + b)) / dX
print(json.dumps({"pos": np.maximum(X @ W1 + b, 0).ravel().tolist(), "neg": np.maximum(X @ W2 + b, 0).ravel().tolist(),
                  "grad_neg": gneg.ravel().tolist()}))`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', py, JSON.stringify(X)], { encoding: 'utf8' }));
}

// A one-node ONNX model, Y = Mul(X, X) with X f32 [1, 3, 4, 4], in protobuf wire format written
// here (no onnx package needed): the Models panel shows its 4-D output as a heatmap.
function squareOnnx() {
  const varint = (n) => { const b = []; do { b.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0)); n >>>= 7; } while (n); return b; };
  const bytes = (field, payload) => [(field << 3) | 2, ...varint(payload.length), ...payload];
  const str = (field, text) => bytes(field, [...Buffer.from(text)]);
  const int = (field, n) => [field << 3, ...varint(n)];
  const tensor = (name) => bytes(2, bytes(1, [...int(1, 1), ...bytes(2, [1, 3, 4, 4].flatMap((d) => bytes(1, int(1, d))))]));
  const valueInfo = (field, name) => bytes(field, [...str(1, name), ...tensor(name)]);
  const node = bytes(1, [...str(1, 'X'), ...str(1, 'X'), ...str(2, 'Y'), ...str(4, 'Mul')]);
  const graph = bytes(7, [...node, ...str(2, 'square'), ...valueInfo(11, 'X'), ...valueInfo(12, 'Y')]);
  return [...int(1, 8), ...graph, ...bytes(8, int(2, 13))];
}

// widgets.cpp's diverging colour map (blue - white - red) at t in [0, 1], as 8-bit RGB.
function diverging(t) {
  const lo = [0.23, 0.30, 0.75], mid = [0.95, 0.95, 0.95], hi = [0.71, 0.02, 0.15];
  const [a, b, u] = t < 0.5 ? [lo, mid, t * 2] : [mid, hi, t * 2 - 1];
  return a.map((v, i) => Math.round((v + (b[i] - v) * u) * 255));
}

function near(got, want, tol, what) {
  assert.equal(got.length, want.length, `${what}: ${got.length} values, expected ${want.length}`);
  for (let i = 0; i < got.length; i++)
    assert.ok(Math.abs(got[i] - want[i]) <= tol * (1 + Math.abs(want[i])), `${what}[${i}] = ${got[i]}, expected ${want[i]}`);
}

test('playground in Chromium: editor, modes, graph, train + export, models', { skip, timeout: 600000 }, async (t) => {
  const { serve } = await import(path.join(repo, 'web', 'tools', 'serve.mjs'));
  const { server, url } = await serve({ root: dist });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-play-'));
  fs.mkdirSync(shots, { recursive: true });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'],
  });
  const errors = [];
  const measured = {};
  let page = null;
  try {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    // state(), frames(n) and click(label) on page p.
    const drive = (p) => {
      const state = () => p.evaluate(() => window.tesseraPlayground.state());
      const frames = async (n = 3) => {
        const f0 = (await state()).frame;
        await p.waitForFunction((f) => window.tesseraPlayground.state().frame >= f, f0 + n, { polling: 20 });
      };
      const click = async (label) => {
        const r = await p.evaluate((l) => window.tesseraPlayground.rect(l), label);
        assert.ok(r, `no widget labelled "${label}" on screen`);
        // As a hand does it: move, then press and release on later frames (ImGui hit-tests the
        // hovered item per frame; a press in the frame the pointer arrives misses tabs).
        await p.mouse.move(r.x + r.width / 2, r.y + r.height / 2);
        await frames(1);
        await p.mouse.down();
        await frames(1);
        await p.mouse.up();
        await frames(2);
      };
      return { state, frames, click };
    };
    const { state, frames, click } = drive(page);
    // An image dropped on the page: a width x height PNG of `pixels` ([r, g, b] per pixel, row-major).
    const dropPng = (name, width, height, pixels) => page.evaluate(async ([n, w, h, px]) => {
      const canvas = new OffscreenCanvas(w, h);
      const ctx = canvas.getContext('2d');
      const img = ctx.createImageData(w, h);
      px.forEach((c, i) => img.data.set([...c, 255], i * 4));
      ctx.putImageData(img, 0, 0);
      const dt = new DataTransfer();
      dt.items.add(new File([await canvas.convertToBlob({ type: 'image/png' })], n, { type: 'image/png' }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, [name, width, height, pixels]);
    // Keys held across frames too: ImGui 1.86 samples key state once per frame, so a press and
    // release between two frames would go unseen.
    const chord = async (...keys) => {
      for (const k of keys) { await page.keyboard.down(k); await frames(1); }
      for (const k of keys.reverse()) { await page.keyboard.up(k); await frames(1); }
    };

    await page.goto(url);
    await page.waitForFunction(() => window.tesseraPlayground && window.tesseraPlayground.state().frame > 2, null, { timeout: 120000 });
    measured.first_frame_ms = (await state()).first_frame_ms;
    await page.screenshot({ path: path.join(shots, 'editor.png') });

    // At 1400x900 every example's lines fit the editor's visible width (no clipped comments):
    // the longest line's characters times the font's advance, against the text area's width.
    // (The view's width is the panel's, the same for every example: loading one needs no frame.)
    for (const name of ['while_loop', 'layer_stack', 'mlp', 'colour_classifier', 'seeds_model']) {
      assert.equal(await page.evaluate((n) => window.tesseraPlayground.loadExample(n), name), true, name);
      const st = await state();
      const longest = st.editor_text.split('\n').reduce((a, l) => (l.length > a.length ? l : a), '');
      assert.ok(st.editor_char_width > 0 && st.editor_view_width > 20 * st.editor_char_width, JSON.stringify([st.editor_view_width, st.editor_char_width]));
      assert.ok(longest.length * st.editor_char_width <= st.editor_view_width,
        `${name}: "${longest}" (${longest.length} characters, ${longest.length * st.editor_char_width} px) is wider than the editor's ${st.editor_view_width} px`);
    }

    // Syntax colours: spans over the seeds' text, from the lexer's tokens (and comments between).
    {
      const st = await state();
      const spans = st.syntax.map(([b, e, kind]) => [st.editor_text.slice(b, e), kind]);
      const kindOf = (text) => spans.find(([t]) => t === text)?.[1];
      assert.equal(kindOf('def'), 'keyword', JSON.stringify(spans.slice(0, 12)));
      assert.equal(kindOf('if'), 'keyword');
      assert.equal(kindOf('relu'), 'call');
      assert.equal(kindOf('W1'), 'name');
      assert.equal(kindOf('0.5'), 'number');
      assert.equal(kindOf('@'), 'operator');
      assert.ok(spans[0][1] === 'comment' && spans[0][0].startsWith('# A data-dependent branch'), JSON.stringify(spans[0]));
      assert.ok(!spans.some(([t, k]) => k === 'comment' && t.includes('\n')), 'a comment span stays on its line');
    }

    // The seeds' example in the three modes, both flags: mode buttons, the flag checkbox and Run
    // (or Ctrl+Enter) are clicked / pressed as a person would.
    assert.equal(await page.evaluate(() => window.tesseraPlayground.loadExample('seeds_model')), true);
    await frames();
    let s = await state();
    const X = [[1, 2], [3, -4]];
    assert.deepEqual(s.inputs.find((t) => t.name === 'X').values, X.flat());
    const ref = numpyReference(X);
    const graphs = {};
    for (const mode of ['eager', 'trace', 'convert']) {
      await click(mode);
      for (const flag of [true, false]) {
        s = await state();
        const on = s.inputs.find((t) => t.name === 'flag').values[0] > 0;
        if (on !== flag) await click('flag');
        const runs = s.runs;
        if (flag) await click('Run');
        else await chord('Control', 'Enter');
        await page.waitForFunction((r) => window.tesseraPlayground.state().runs > r, runs, { polling: 20 });
        s = await state();
        assert.equal(s.mode, mode);
        assert.equal(s.last.ok, true, `${mode}: ${JSON.stringify(s.last.errors)}`);
        near(s.last.outputs[0].values, flag ? ref.pos : ref.neg, 1e-6, `${mode} flag=${flag}`);
        assert.deepEqual(s.last.outputs[0].shape, [2, 3]);
        graphs[mode] = s.last.graph;
        if (mode === 'trace') assert.ok(s.last.warnings.length > 0 && s.last.warnings[0].line === 10, JSON.stringify(s.last.warnings));
      }
      await page.screenshot({ path: path.join(shots, `outputs-${mode}.png`) });
    }
    assert.equal(graphs.eager, null);
    const ops = (g) => g.reduce((m, sub) => ({ ...m, ...Object.fromEntries(Object.entries(sub.ops).map(([k, v]) => [k, (m[k] ?? 0) + v])) }), {});
    assert.equal(ops(graphs.trace).If, undefined, `traced graph has no If: ${JSON.stringify(graphs.trace)}`);
    assert.equal(graphs.trace.length, 1);
    assert.equal(ops(graphs.convert).If, 1, `converted graph has an If: ${JSON.stringify(graphs.convert)}`);
    assert.ok(graphs.convert.length >= 3, 'If branches are subgraphs');

    // Graph panel: trace and convert side by side.
    await click('Graph');
    assert.equal((await state()).tab, 'Graph');
    await page.screenshot({ path: path.join(shots, 'graph.png') });

    // Gradients of the converted graph (flag is off now): d sum(y) / dX through the If.
    await click('Gradients');
    await click('Compute gradients');
    s = await state();
    assert.equal(s.gradients.error, '');
    const gx = s.gradients.outputs.find((t) => t.name === 'X_grad');
    assert.ok(gx, JSON.stringify(s.gradients.outputs.map((t) => t.name)));
    near(gx.values, ref.grad_neg, 1e-6, 'dX');
    assert.ok(ops(s.gradients.graph).If >= 2, `the gradient graph differentiates the If: ${JSON.stringify(s.gradients.graph)}`);
    await page.screenshot({ path: path.join(shots, 'gradients.png') });
    await click('Outputs');

    // Keyboard typing into the editor, then a diagnostic at line:col.
    await click('editor');
    await chord('Control', 'End');
    await page.keyboard.type('# typed');
    await frames();
    assert.ok((await state()).editor_text.endsWith('# typed'), 'typed text reaches the editor');
    await page.evaluate(() => window.tesseraPlayground.setEditorText('def model(X, flag):\n    y = X @\n    return y\n'));
    await click('Run');
    s = await state();
    assert.equal(s.last.ok, false);
    assert.equal(s.last.errors[0].line, 2, JSON.stringify(s.last.errors));
    assert.ok(s.last.errors[0].col > 0);
    await page.screenshot({ path: path.join(shots, 'error.png') });

    // print() goes to the Output log (eager: the selected mode's run only).
    await click('eager');
    await page.evaluate(() => window.tesseraPlayground.setEditorText(
      'def model(X, flag):\n    print("playground print:", 6 * 7, "rows", len(X))\n    return X * 2.0\n'));
    await frames();
    s = await state();
    const runsBefore = s.runs;
    await click('Run');
    await page.waitForFunction((r) => window.tesseraPlayground.state().runs > r, runsBefore, { polling: 20 });
    s = await state();
    assert.equal(s.last.ok, true, JSON.stringify(s.last.errors));
    assert.equal(s.last.printed, 'playground print: 42 rows 2\n');
    assert.ok(s.log.endsWith(`-- run ${s.runs} (eager) --\nplayground print: 42 rows 2\n`), JSON.stringify(s.log.slice(-200)));
    assert.ok(await page.evaluate(() => window.tesseraPlayground.rect('Output log')), 'the Output log is on screen');
    await page.screenshot({ path: path.join(shots, 'output-log.png') });

    // Train: 200 steps on circles (the default set), then Export.
    await click('Train');
    s = await state();
    assert.equal(s.train.dataset, 'circles');
    assert.equal(s.train.step, 0, s.train.error);
    const t0 = Date.now();
    await click('Train 200');
    await page.waitForFunction(() => { const t = window.tesseraPlayground.state().train; return t.step >= 200 && t.pending === 0; },
      null, { timeout: 300000, polling: 100 });
    measured.train_seconds = (Date.now() - t0) / 1000;
    s = await state();
    measured.train_fps = s.train.fps;
    measured.first_loss = s.train.first_loss;
    measured.loss_after_200 = s.train.loss;
    assert.equal(s.train.step, 200);
    assert.ok(s.train.first_loss > 0.5, `initial loss ${s.train.first_loss}`);
    assert.ok(s.train.loss < 0.2, `loss after 200 steps ${s.train.loss} (from ${s.train.first_loss})`);
    assert.equal(s.train.loss_points, 200);
    assert.equal(s.train.plotted, 200, 'the loss curve drew every step');
    const lossRect = await page.evaluate(() => window.tesseraPlayground.rect('loss'));
    assert.ok(lossRect && lossRect.width > 200 && lossRect.height > 100, `loss curve ${JSON.stringify(lossRect)}`);
    await page.screenshot({ path: path.join(shots, 'train.png') });
    measured.loss_curve_points = s.train.plotted;
    const [download] = await Promise.all([page.waitForEvent('download'), click('Export .tsr')]);
    const exported = path.join(tmp, download.suggestedFilename());
    await download.saveAs(exported);
    assert.equal(download.suggestedFilename(), 'playground_mlp.tsr');
    s = await state();
    assert.equal(fs.statSync(exported).size, s.train.export_bytes);
    // The native CLI on the exported file, at the page's probe points: a subtest of its own, so
    // that a missing CLI is a counted skip (scripts/test.sh builds it, so there it runs).
    const noCli = !fs.existsSync(cli) && `no ${cli} (build the release preset's tessera target)`;
    const trained = s.train;
    await t.test('native tessera run on the exported .tsr gives the page\'s outputs', { skip: noCli }, () => {
      lib.writeNpy(path.join(tmp, 'probe.npy'), 'float32', [8, 2], Float32Array.from(trained.probe_inputs));
      execFileSync(cli, ['run', exported, '--input', `X=${path.join(tmp, 'probe.npy')}`, '--output-dir', path.join(tmp, 'out')]);
      const out = lib.readNpy(path.join(tmp, 'out', 'output_0.npy'));
      assert.deepEqual(out.shape, [8, 2]);
      near(Array.from(out.data), trained.probe_logits, 1e-5, 'tessera run on the exported .tsr');
    });
    measured.cli_checked = noCli || true;

    // Models: the exported file dropped on the page.
    const bytes = Array.from(fs.readFileSync(exported));
    await page.evaluate(async (b) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(b)], 'dropped.tsr'));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, bytes);
    await page.waitForFunction(() => window.tesseraPlayground.state().models.runs > 0, null, { timeout: 30000 });
    await frames();
    s = await state();
    assert.equal(s.models.error, '');
    assert.equal(s.models.name, 'dropped.tsr');
    assert.equal(s.tab, 'Models');
    assert.deepEqual(s.models.outputs[0].shape, [1, 2]);
    assert.ok(s.models.outputs[0].values.every(Number.isFinite));

    // The sample model (a colour classifier converted in-page), then a solid-colour PNG dropped
    // on the page: the browser decodes and resizes it to 64x64, the app makes f32 NCHW in 0..1.
    await click('Sample model');
    s = await state();
    assert.equal(s.models.error, '');
    assert.equal(s.models.name, 'sample_colour_classifier.tsr');
    assert.deepEqual(s.models.inputs, ['X  f32 [1, 3, 64, 64]']);
    const rgb = [200, 40, 90];
    await dropPng('swatch.png', 40, 30, Array(40 * 30).fill(rgb));
    await page.waitForFunction(() => window.tesseraPlayground.state().models.image === 'swatch.png', null, { timeout: 30000 });
    await frames();
    s = await state();
    assert.equal(s.models.error, '');
    // By hand: the means are the colour / 255; logits = means @ W (the example's W); softmax.
    const W = [[4, -2, -2], [-2, 4, -2], [-2, -2, 4]];
    const mean = rgb.map((v) => v / 255);
    const logits = [0, 1, 2].map((j) => mean.reduce((acc, m, i) => acc + m * W[i][j], 0));
    const ex = logits.map((l) => Math.exp(l - Math.max(...logits)));
    const probs = ex.map((e) => e / ex.reduce((a, b) => a + b, 0));
    const want = [0, 1, 2].sort((a, b) => probs[b] - probs[a]);
    assert.deepEqual(s.models.top_k.map((e) => e.label), want.map((i) => ['red', 'green', 'blue'][i]));
    near(s.models.top_k.map((e) => e.value), want.map((i) => probs[i]), 1e-5, 'top-k of the sample on the image');
    assert.ok(await page.evaluate(() => window.tesseraPlayground.rect('top-k')), 'the top-k view is on screen');

    // The device switch: the same image input again on WebGPU (SwiftShader's adapter), clicked
    // as a person would: WebGPU, then Run again. Every node of the sample is placed on WebGPU,
    // and the outputs are the CPU run's within 1e-4 relative L2.
    const tDevice = Date.now();
    await page.waitForFunction(() => window.tesseraPlayground.state().models.device.probe !== 'probing', null, { timeout: 30000 });
    s = await state();
    assert.equal(s.models.device.probe, 'ready', `WebGPU adapter: ${s.models.device.adapter}`);
    assert.ok(s.models.device.adapter.length > 0);
    assert.equal(s.models.device.last, 'cpu');
    const cpuRun = s.models;
    await click('WebGPU');
    assert.equal((await state()).models.device.selected, 'webgpu');
    await click('Run again');
    await page.waitForFunction((r) => { const m = window.tesseraPlayground.state().models; return m.runs > r && !m.device.pending; },
      cpuRun.runs, { timeout: 30000, polling: 20 });
    await frames();
    s = await state();
    assert.equal(s.models.error, '');
    const dev = s.models.device;
    assert.equal(dev.last, 'webgpu');
    assert.ok(dev.total > 0 && dev.on_gpu === dev.total, `placement: ${dev.on_gpu} of ${dev.total} nodes on WebGPU`);
    assert.ok(dev.gpu_ms > 0 && dev.cpu_ms > 0, JSON.stringify(dev));
    assert.equal(s.models.image, 'swatch.png');
    assert.deepEqual(s.models.outputs.map((o) => o.shape), cpuRun.outputs.map((o) => o.shape));
    const flat = (outs) => outs.flatMap((o) => o.values);
    const [g, c] = [flat(s.models.outputs), flat(cpuRun.outputs)];
    const relL2 = Math.sqrt(g.reduce((a, v, i) => a + (v - c[i]) ** 2, 0) / c.reduce((a, v) => a + v * v, 0));
    assert.ok(relL2 <= 1e-4, `WebGPU vs CPU rel-L2 ${relL2}`);
    assert.ok(Math.abs(dev.rel_l2 - relL2) <= 1e-6, `the panel's rel-L2 ${dev.rel_l2}, the test's ${relL2}`);
    assert.deepEqual(s.models.top_k.map((e) => e.label), cpuRun.top_k.map((e) => e.label));
    measured.models_webgpu = { adapter: dev.adapter, nodes: `${dev.on_gpu}/${dev.total}`, copies: dev.copies, first_run_ms: dev.gpu_ms, cpu_ms: dev.cpu_ms, rel_l2: relL2 };
    await page.screenshot({ path: path.join(shots, 'models.png') });
    await click('CPU (wasm)');  // the runs below read their outputs in the frame they were asked for
    assert.equal((await state()).models.device.selected, 'cpu');

    measured.device_switch_seconds = (Date.now() - tDevice) / 1000;

    // The heatmap view: a model with a 4-D output (Y = X * X on f32 [1, 3, 4, 4]) dropped on the
    // page, then a 4x4 image whose red channel ramps 0, 17, ..., 255 along the pixels: the map
    // is the first channel, (red / 255)^2, and each of its 16 cells on screen has the colour the
    // diverging map gives that value scaled to the map's range (0..1 here).
    const dropFile = (name, b) => page.evaluate(async ([n, data]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(data)], n));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, [name, b]);
    await dropFile('square.onnx', squareOnnx());
    await page.waitForFunction(() => window.tesseraPlayground.state().models.name === 'square.onnx', null, { timeout: 30000 });
    await frames();
    assert.equal((await state()).models.error, '');
    const ramp = Array.from({ length: 16 }, (_, i) => i * 17);
    await dropPng('ramp.png', 4, 4, ramp.map((r) => [r, 100, 50]));
    await page.waitForFunction(() => window.tesseraPlayground.state().models.image === 'ramp.png', null, { timeout: 30000 });
    await frames();
    s = await state();
    assert.equal(s.models.error, '');
    assert.deepEqual(s.models.outputs[0].shape, [1, 3, 4, 4]);
    const heat = ramp.map((r) => (r / 255) ** 2);
    near(s.models.outputs[0].values.slice(0, 16), heat, 1e-6, 'Y = X * X, first channel');
    const hr = await page.evaluate(() => window.tesseraPlayground.rect('heatmap'));
    assert.ok(hr && hr.width >= 4 * 20 && Math.abs(hr.width - hr.height) <= 1, `heatmap view ${JSON.stringify(hr)}`);
    const shot = await page.screenshot({ clip: { x: hr.x, y: hr.y, width: hr.width, height: hr.height } });
    const cells = await page.evaluate(async (b64) => {
      const bmp = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
      const ctx = new OffscreenCanvas(bmp.width, bmp.height).getContext('2d');
      ctx.drawImage(bmp, 0, 0);
      const out = [];
      for (let r = 0; r < 4; r++)
        for (let c = 0; c < 4; c++)
          out.push(Array.from(ctx.getImageData(Math.floor((c + 0.5) * bmp.width / 4), Math.floor((r + 0.5) * bmp.height / 4), 1, 1).data.slice(0, 3)));
      return out;
    }, shot.toString('base64'));
    cells.forEach((got, i) => {
      const want = diverging(heat[i]);
      assert.ok(got.every((v, k) => Math.abs(v - want[k]) <= 3), `heatmap cell ${i}: rgb ${got}, expected ${want} for ${heat[i]}`);
    });

    // 1920x1080: the canvas follows the page, the Train panel's plots grow with it.
    await page.setViewportSize({ width: 1920, height: 1080 });
    await frames(4);
    await click('Train');
    await frames();
    const bigLoss = await page.evaluate(() => window.tesseraPlayground.rect('loss'));
    assert.ok(bigLoss.width > lossRect.width && bigLoss.height > lossRect.height, `${JSON.stringify(bigLoss)} vs ${JSON.stringify(lossRect)}`);
    await page.screenshot({ path: path.join(shots, 'train-1920.png') });
    await page.setViewportSize({ width: 1400, height: 900 });
    await frames(4);

    // Share: the editor text and mode go into the URL fragment, and a page opened on that URL
    // starts with them.
    assert.equal(await page.evaluate(() => window.tesseraPlayground.loadExample('while_loop')), true);
    await click('trace');
    await click('Share');
    const shared = page.url();
    assert.match(shared, /#mode=trace&code=/);
    const sharedText = (await state()).editor_text;
    await page.close();  // its frames would slow the next page's
    const page2 = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page2.on('pageerror', (e) => errors.push(`pageerror (shared page): ${e.message}`));
    page = page2;  // for the failure screenshot
    // This page also has no WebGPU (navigator.gpu hidden), for the device switch below.
    await page2.addInitScript(() => Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined }));
    await page2.goto(shared);
    await page2.waitForSelector('body[data-state="ready"]', { timeout: 120000 });
    const p2 = drive(page2);
    const s2 = await p2.state();
    assert.equal(s2.mode, 'trace');
    assert.equal(s2.editor_text, sharedText);

    // Without WebGPU the Models panel's switch says why, and WebGPU cannot be selected.
    const tBare = Date.now();
    await p2.click('Models');
    await p2.click('Sample model');
    await page2.waitForFunction(() => window.tesseraPlayground.state().models.device.probe === 'unavailable', null, { timeout: 30000 });
    await p2.frames();
    assert.match((await p2.state()).models.device.adapter, /navigator\.gpu is not available/);
    assert.ok(await page2.evaluate(() => window.tesseraPlayground.rect('WebGPU unavailable')), 'the reason is on screen');
    await p2.click('WebGPU');  // disabled: nothing changes
    const sb = (await p2.state()).models;
    assert.deepEqual([sb.device.selected, sb.device.last, sb.error, sb.runs], ['cpu', 'cpu', '', 1]);
    await page2.screenshot({ path: path.join(shots, 'models-no-webgpu.png') });
    await page2.close();
    measured.no_webgpu_seconds = (Date.now() - tBare) / 1000;

    assert.deepEqual(errors, [], errors.join('\n'));
    fs.writeFileSync(path.join(shots, 'measured.json'), JSON.stringify(measured, null, 2));
    console.log(`# playground measured: ${JSON.stringify(measured)}`);
  } catch (e) {
    // What the page showed when it failed, and its state, for the log reader.
    if (page) {
      await page.screenshot({ path: path.join(shots, 'failure.png') }).catch(() => {});
      const st = await page.evaluate(() => window.tesseraPlayground?.state()).catch(() => null);
      if (st) console.log(`# state at failure: ${JSON.stringify({ ...st, editor_text: undefined })}`.slice(0, 4000));
    }
    throw e;
  } finally {
    await browser.close();
    server.close();
  }
});
