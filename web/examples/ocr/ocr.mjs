// The OCR page: whole-page OCR (PP-OCRv4 det + ch_ppocr_mobile_v2.0_cls + PP-OCRv4 rec) or one
// text line (rec only), through tessera-web. The pre- and post-processing is pipeline.mjs (a port
// of examples/ocr); this file is the page: image input (file button, drag and drop, paste, the
// sample buttons), the boxes drawn over the image, the text with confidences, copy, timings.
//
// Query: ?mode=line starts in one-line mode; ?det=URL&cls=URL&rec=URL&keys=URL override the models
// (default: /models/, which scripts/serve_web.sh mounts); ?samples=URL is where the sample pages
// are (default /samples/, rendered by examples/ocr/make_samples.py; serve_web.sh mounts them);
// ?threads=N runs the models on N threads (tessera-threads.wasm; the page must then be
// cross-origin isolated, which serve_web.sh's headers make it; otherwise it runs on one thread);
// ?device=webgpu|auto runs them through WebGPU (docs/web.md "WebGPU"; auto: where there is an
// adapter), wasm by default.
// ?batch=N recognizes N lines per rec run (default 6; 1 is one line at a time).
//
// For tests, <body> carries data-state (loading, ready, running, done, error), data-threads, data-device,
// data-boxes (boxes drawn for the last image), data-first-result-ms (performance.now() when the
// first result was shown, i.e. ms since navigation) and data-run-ms (the last image, decode to text).
import { Tessera } from '../../dist/tessera.mjs';
import * as ocr from './pipeline.mjs';

const params = new URLSearchParams(location.search);
const urls = {
  det: params.get('det') ?? '/models/ch_PP-OCRv4_det_infer.onnx',
  cls: params.get('cls') ?? '/models/ch_ppocr_mobile_v2.0_cls_infer.onnx',
  rec: params.get('rec') ?? params.get('model') ?? '/models/ch_PP-OCRv4_rec_infer.onnx',
  keys: params.get('keys') ?? '/models/ppocr_keys_v1.txt',
  samples: params.get('samples') ?? '/samples/',
};
const threads = Number(params.get('threads') ?? '1');
const device = params.get('device') ?? 'wasm';
const recBatch = Number(params.get('batch') ?? ocr.defaults.recBatch);
const kMaxPixels = 1 << 25;  // decoded images above this are refused (memory), as tessera-ocr --page
const $ = (id) => document.getElementById(id);
const body = document.body;

function status(msg, error = false) {
  $('status').textContent = msg;
  $('status').className = error ? 'error' : '';
}
const fail = (e) => { status(`${e.code ? e.code + ': ' : ''}${e.message}`, true); body.dataset.state = 'error'; };

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

const mode = () => document.querySelector('input[name="mode"]:checked').value;
function setMode(m) {
  document.querySelector(`input[name="mode"][value="${m}"]`).checked = true;
  body.classList.toggle('line-mode', m === 'line');
}

// Draws the image on the view canvas and returns its RGB pixels.
function show(bitmap) {
  if (bitmap.width * bitmap.height > kMaxPixels)
    throw new Error(`the image is ${bitmap.width} x ${bitmap.height} pixels, more than ${kMaxPixels}`);
  const canvas = $('view');
  canvas.width = bitmap.width; canvas.height = bitmap.height;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(bitmap, 0, 0);
  const rgba = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
  return ocr.fromRGBA(bitmap.width, bitmap.height, rgba);
}

function drawBoxes(lines, hot = -1) {
  const canvas = $('view'), ctx = canvas.getContext('2d');
  const lw = Math.max(2, Math.round(Math.max(canvas.width, canvas.height) / 400));
  lines.forEach((l, i) => {
    ctx.beginPath();
    l.quad.forEach(([x, y], k) => (k ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
    ctx.closePath();
    ctx.fillStyle = i === hot ? 'rgba(232, 89, 12, 0.30)' : 'rgba(232, 89, 12, 0.10)';
    ctx.fill();
    ctx.lineWidth = lw; ctx.strokeStyle = '#e8590c'; ctx.stroke();
    const [x, y] = l.quad[0], label = String(i + 1), fs = Math.max(11, lw * 6);
    ctx.font = `600 ${fs}px system-ui, sans-serif`;
    const tw = ctx.measureText(label).width + 6;
    ctx.fillStyle = '#e8590c'; ctx.fillRect(x, Math.max(0, y - fs - 2), tw, fs + 2);
    ctx.fillStyle = '#fff'; ctx.fillText(label, x + 3, Math.max(fs - 2, y - 4));
  });
}

function showTimings(rows) {
  const tb = $('timings').tBodies[0];
  tb.replaceChildren(...rows.map(([name, ms]) => {
    const tr = document.createElement('tr');
    if (name === 'total') tr.className = 'total';
    tr.innerHTML = `<td>${name}</td><td>${ms.toFixed(1)}</td>`;
    return tr;
  }));
  $('timings').hidden = false;
}

function showLines(lines) {
  $('lines').replaceChildren(...lines.map((l) => {
    const li = document.createElement('li');
    const conf = document.createElement('span');
    conf.className = `conf${l.confidence < 0.8 ? ' low' : ''}`;
    conf.textContent = l.confidence.toFixed(3);
    const text = document.createElement('span');
    text.className = 'line-text';
    text.textContent = l.text;
    li.append(conf, text);
    return li;
  }));
  $('text').textContent = lines.map((l) => l.text).join('\n');
  $('count').textContent = `(${lines.length} line${lines.length === 1 ? '' : 's'})`;
  $('copy').disabled = lines.length === 0;
}

async function main() {
  const t0 = performance.now();
  const tsr = await Tessera.create({ threads, device });
  body.dataset.threads = String(tsr.threads);
  body.dataset.device = tsr.device;
  // The recognizer always; the detector and the classifier when a page is read (at start in page
  // mode, else on the first page), so that one-line mode loads (and runs threads for) one model.
  const keyText = await fetch(urls.keys).then((r) => {
    if (!r.ok) throw new Error(`${urls.keys}: HTTP ${r.status}`);
    return r.text();
  });
  const keys = ocr.parseKeys(keyText);
  const models = {};
  const loading = {};
  const load = (name) => (loading[name] ??= fetchBytes(urls[name])
    .then((bytes) => tsr.load(bytes, { name: urls[name].split('/').pop() }))
    .then((m) => { models[name] = m; }));
  await Promise.all(mode() === 'page' ? [load('rec'), load('det'), load('cls')] : [load('rec')]);
  const run = async (name, tensor) => {
    const m = models[name];
    const out = await m.run({ [m.inputs[0].name]: tensor });
    return out[m.outputs[0].name];
  };
  const on = tsr.threads > 1 ? `${tsr.threads} threads (tessera-threads.wasm)` : `1 thread${tsr.threadsFallback ? ` (${tsr.threadsFallback})` : ''}`;
  const gpu = tsr.device === 'webgpu' ? ', WebGPU' : tsr.deviceFallback ? ` (no WebGPU: ${tsr.deviceFallback})` : '';
  status(`ready: ${Object.keys(models).length} model(s) imported from ONNX in ${(performance.now() - t0).toFixed(0)} ms; runs on ${on}${gpu}`);

  let current = null;  // { lines } of the image shown, for hover highlighting
  let busy = false;
  async function read(source, label) {
    if (busy) return;
    busy = true;
    body.dataset.state = 'running';
    status(`reading ${label}…`);
    try {
      const t = performance.now();
      const bitmap = await createImageBitmap(source);
      const img = show(bitmap);
      const decodeMs = performance.now() - t;
      let lines, timings;
      if (mode() === 'line') {
        const tr = performance.now();
        const d = ocr.ctcDecode(await run('rec', ocr.lineInput(img, ocr.recInputWidth(img))), keys);
        timings = [['decode', decodeMs], ['rec', performance.now() - tr]];
        lines = [{ text: d.text, confidence: d.confidence, quad: [[0, 0], [img.width - 1, 0], [img.width - 1, img.height - 1], [0, img.height - 1]] }];
        body.dataset.boxes = '0';
      } else {
        await Promise.all([load('det'), load('cls')]);
        const r = await ocr.readPage(img, run, keys, { useCls: $('cls').checked, opts: { ...ocr.defaults, recBatch } });
        lines = r.lines;
        timings = [['decode', decodeMs], ...Object.entries(r.timings)];
        drawBoxes(lines);
        body.dataset.boxes = String(lines.length);
      }
      const total = performance.now() - t;
      showLines(lines);
      showTimings([...timings, ['total', total]]);
      current = mode() === 'page' ? { lines, img } : null;
      body.dataset.runMs = total.toFixed(1);
      if (!body.dataset.firstResultMs) body.dataset.firstResultMs = performance.now().toFixed(1);
      status(`${label}: ${lines.length} line${lines.length === 1 ? '' : 's'} in ${total.toFixed(0)} ms (${img.width} x ${img.height} px)`);
      body.dataset.state = 'done';
    } catch (e) {
      fail(e);
    } finally {
      busy = false;
    }
  }

  // Hovering a line lights its box.
  $('lines').addEventListener('mouseover', (e) => {
    const li = e.target.closest('li');
    if (!li || !current) return;
    const i = [...$('lines').children].indexOf(li);
    const ctx = $('view').getContext('2d');
    const { img } = current, rgba = new ImageData(img.width, img.height);
    for (let k = 0; k < img.width * img.height; k++) {
      rgba.data.set(img.data.subarray(k * 3, k * 3 + 3), k * 4); rgba.data[k * 4 + 3] = 255;
    }
    ctx.putImageData(rgba, 0, 0);
    drawBoxes(current.lines, i);
  });
  $('file').addEventListener('change', () => { const f = $('file').files[0]; if (f) read(f, f.name); });
  for (const b of document.querySelectorAll('[data-sample]'))
    b.addEventListener('click', async () => {
      setMode('page');
      const url = `${urls.samples}${b.dataset.sample}.png`;
      try {
        const r = await fetch(url);
        if (!r.ok) throw new Error(`${url}: HTTP ${r.status} (render the samples: python3 examples/ocr/make_samples.py DIR)`);
        await read(await r.blob(), `${b.dataset.sample}.png`);
      } catch (e) { fail(e); }
    });
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const f = [...(e.dataTransfer?.files ?? [])].find((x) => x.type.startsWith('image/'));
    if (f) read(f, f.name); else status('the drop held no image file', true);
  });
  document.addEventListener('paste', (e) => {
    const item = [...(e.clipboardData?.items ?? [])].find((x) => x.type.startsWith('image/'));
    if (item) read(item.getAsFile(), 'pasted image');
  });
  $('copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($('text').textContent);
      status('text copied to the clipboard');
    } catch (e) {
      status(`could not copy: ${e.message}`, true);
    }
  });
  for (const r of document.querySelectorAll('input[name="mode"]')) r.addEventListener('change', () => setMode(mode()));
  // A photo from the camera where the browser offers one (a secure context with a camera): one
  // frame of the stream, then the camera is released.
  const camera = $('camera');
  camera.hidden = !navigator.mediaDevices?.getUserMedia;
  camera.addEventListener('click', async () => {
    let stream = null;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false });
      const video = document.createElement('video');
      video.muted = true;
      video.playsInline = true;
      video.srcObject = stream;
      await video.play();
      if (!video.videoWidth) await new Promise((r) => video.addEventListener('loadeddata', r, { once: true }));
      const frame = await createImageBitmap(video);
      stream.getTracks().forEach((t) => t.stop());
      stream = null;
      await read(frame, 'camera photo');
    } catch (e) {
      status(`camera: ${e.message}`, true);
    } finally {
      stream?.getTracks().forEach((t) => t.stop());
    }
  });

  for (const el of [$('file'), camera, ...document.querySelectorAll('[data-sample]')]) el.disabled = false;
  body.dataset.state = 'ready';
}

setMode(params.get('mode') === 'line' ? 'line' : 'page');
main().catch(fail);
