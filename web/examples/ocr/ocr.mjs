// The OCR page: PP-OCRv4 text-line recognition through tessera-web.
// Preprocessing follows PaddleOCR's resize_norm_img (as examples/ocr/ocr_main.cpp): height 48,
// width ceil(48 * w / h) padded to at least 320 with zeros, (x / 255 - 0.5) / 0.5, BGR planes.
// Decoding: greedy CTC (argmax per step, merge repeats, drop blank 0; class k = line k of the
// keys file, the last class a space).
// ?model=URL&keys=URL override the files (default: /models/, which scripts/serve_web.sh mounts);
// ?threads=N runs the model on N threads (tessera-threads.wasm; this page must then be cross-origin
// isolated, which scripts/serve_web.sh's headers make it; otherwise it runs on one thread).
import { Tessera } from '../../dist/tessera.mjs';

const params = new URLSearchParams(location.search);
const modelUrl = params.get('model') ?? '/models/ch_PP-OCRv4_rec_infer.onnx';
const keysUrl = params.get('keys') ?? '/models/ppocr_keys_v1.txt';
const threads = Number(params.get('threads') ?? '1');
const $ = (id) => document.getElementById(id);
const kHeight = 48, kMinWidth = 320, kMaxWidth = 4096;

function status(msg, error = false) {
  $('status').textContent = msg;
  $('status').className = error ? 'error' : '';
}

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

function preprocess(bitmap) {
  const ratio = bitmap.width / bitmap.height;
  const width = Math.min(kMaxWidth, Math.floor(kHeight * Math.max(kMinWidth / kHeight, ratio)));
  const resized = Math.max(1, Math.min(Math.ceil(kHeight * ratio), width));
  const canvas = $('preview');
  canvas.width = width; canvas.height = kHeight;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.imageSmoothingEnabled = true;
  ctx.imageSmoothingQuality = 'high';
  ctx.clearRect(0, 0, width, kHeight);
  ctx.drawImage(bitmap, 0, 0, resized, kHeight);
  const rgba = ctx.getImageData(0, 0, resized, kHeight).data;
  const plane = kHeight * width, x = new Float32Array(3 * plane);  // zeros = the padding
  for (let y = 0; y < kHeight; y++)
    for (let i = 0; i < resized; i++) {
      const p = (y * resized + i) * 4;
      for (let c = 0; c < 3; c++) x[c * plane + y * width + i] = (rgba[p + 2 - c] / 255 - 0.5) / 0.5;
    }
  return { dtype: 'float32', shape: [1, 3, kHeight, width], data: x };
}

function decode(probs, keys) {
  const [, steps, classes] = probs.shape;
  if (classes !== keys.length + 1) throw new Error(`the model has ${classes} classes, the keys file ${keys.length} + blank`);
  let text = '', prev = -1, conf = 0, kept = 0;
  for (let t = 0; t < steps; t++) {
    let best = 0;
    for (let k = 1; k < classes; k++) if (probs.data[t * classes + k] > probs.data[t * classes + best]) best = k;
    if (best !== 0 && best !== prev) { text += keys[best - 1]; conf += probs.data[t * classes + best]; kept++; }
    prev = best;
  }
  return { text, confidence: kept ? conf / kept : 0 };
}

async function main() {
  const t0 = performance.now();
  const tsr = await Tessera.create({ threads });
  document.body.dataset.threads = String(tsr.threads);
  const [bytes, keyText] = await Promise.all([fetchBytes(modelUrl), fetch(keysUrl).then((r) => r.text())]);
  const keys = keyText.split('\n').map((l) => l.replace(/\r$/, ''));
  if (keys[keys.length - 1] === '') keys.pop();
  keys.push(' ');
  const model = await tsr.load(bytes, { name: modelUrl.split('/').pop() });
  const input = model.inputs[0].name, output = model.outputs[0].name;
  const on = tsr.threads > 1 ? `${tsr.threads} threads (tessera-threads.wasm)` : `1 thread${tsr.threadsFallback ? ` (${tsr.threadsFallback})` : ''}`;
  status(`ready: model imported from ONNX in ${(performance.now() - t0).toFixed(0)} ms; runs on ${on}`);
  $('file').disabled = false;
  document.body.dataset.state = 'ready';
  $('file').addEventListener('change', async () => {
    const file = $('file').files[0];
    if (!file) return;
    document.body.dataset.state = 'running';
    try {
      const bitmap = await createImageBitmap(file);
      const t = performance.now();
      const out = await model.run({ [input]: preprocess(bitmap) });
      const d = decode(out[output], keys);
      $('text').textContent = d.text;
      status(`read in ${(performance.now() - t).toFixed(0)} ms, confidence ${d.confidence.toFixed(3)}`);
      document.body.dataset.state = 'done';
    } catch (e) {
      status(`${e.code ? e.code + ': ' : ''}${e.message}`, true);
      document.body.dataset.state = 'error';
    }
  });
}

main().catch((e) => { status(`${e.code ? e.code + ': ' : ''}${e.message}`, true); document.body.dataset.state = 'error'; });
