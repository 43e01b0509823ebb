// The Worker side of Tessera.create({worker: true}) (proxy.mjs is the page's side): a dedicated
// module Worker in a browser, a worker_threads Worker in node, holding one Tessera instance
// (tessera.mjs: wasm, threads or WebGPU) and its models. Messages from the page:
// {id, op, args}; answers {id, ok: true, value} or {id, ok: false, error: {code, message}};
// events {event: 'log' | 'progress' | 'token', ...}; onToken's answer comes back as
// {reply: n, value}. Output tensors are transferred to the page (their buffers are the Worker's
// own copies out of the wasm heap), never copied.
import { kIsNode } from './sources.mjs';
import { TesseraError } from './errors.mjs';
import { Tessera } from './tessera.mjs';

const port = kIsNode ? (await import('node:worker_threads')).parentPort : globalThis;
const post = (msg, transfer = []) => port.postMessage(msg, transfer);

let tsr = null;
const models = new Map();  // handle -> Model
let nextHandle = 1;
const replies = new Map();  // n -> resolve (onToken's answers)
let nextReply = 1;

/** The ArrayBuffers of the typed arrays in a result (tensors, sequences, {outputs}, bytes). */
function buffers(value, out = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (!(value.buffer instanceof ArrayBuffer)) return out;  // not a SharedArrayBuffer
    out.add(value.buffer);
  } else if (Array.isArray(value)) value.forEach((v) => buffers(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => buffers(v, out));
  return out;
}

/** value with the data of each typed array copied. */
function owned(value) {
  if (ArrayBuffer.isView(value)) return value.slice();
  if (Array.isArray(value)) return value.map(owned);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, owned(v)]));
  return value;
}

function model(handle) {
  const m = models.get(handle);
  if (!m) throw new TesseraError('invalid_argument', 'this model is disposed');
  return m;
}

/** A model's description for the page: what the non-worker Model has as properties. */
function described(handle, m) {
  return { handle, inputs: m.inputs, outputs: m.outputs, device: m.device, deviceFallback: m.deviceFallback, placement: m.placement };
}

const ops = {
  async create(options) {
    const log = (stream) => (text) => post({ event: 'log', stream, text });
    tsr = await Tessera.create({ ...options, worker: false, print: log('print'), printErr: log('printErr') });
    return { threads: tsr.threads, threadsFallback: tsr.threadsFallback, device: tsr.device, deviceFallback: tsr.deviceFallback };
  },
  async load(id, source, options) {
    const { progress, ...rest } = options;
    const onProgress = progress ? (info) => post({ event: 'progress', id, info: { ...info, url: String(info.url) } }) : undefined;
    const m = await tsr.load(source, { ...rest, onProgress });
    const handle = nextHandle++;
    models.set(handle, m);
    return described(handle, m);
  },
  async run(id, handle, feeds, options) {
    const m = model(handle);
    const r = await m.run(feeds, options);
    // A WebGPU run may return a tensor that it keeps (a constant, a folded node's output, views
    // of them): the page gets a copy of those, so that transferring it detaches nothing kept here.
    return m.device === 'webgpu' ? owned(r) : r;
  },
  generate(id, handle, promptIds, options, withToken) {
    const onToken = withToken ? (token, i) => new Promise((resolve) => {
      const n = nextReply++;
      replies.set(n, resolve);
      post({ event: 'token', id, reply: n, token, i });
    }) : null;
    return model(handle).generate(promptIds, options, onToken);
  },
  save(id, handle) { return model(handle).save(); },
  disposeModel(id, handle) {
    model(handle).dispose();
    models.delete(handle);
  },
  script(id, source, options) { return tsr.script(source, options); },
  heapInUse() { return tsr.heapInUse(); },
  dispose() {
    tsr.dispose();
    models.clear();
  },
};

async function answer({ id, op, args }) {
  try {
    const value = await (op === 'create' ? ops.create(...args) : ops[op](id, ...args));
    post({ id, ok: true, value }, [...buffers(value)]);
  } catch (e) {
    const code = e instanceof TesseraError ? e.code : 'internal';
    post({ id, ok: false, error: { code, message: e instanceof TesseraError ? e.message : `${e.name ?? 'Error'}: ${e.message ?? e}` } });
  }
}

const onMessage = (msg) => {
  if (msg.reply !== undefined) {
    replies.get(msg.reply)?.(msg.value);
    replies.delete(msg.reply);
  } else answer(msg);
};
if (kIsNode) port.on('message', onMessage);
else port.onmessage = (e) => onMessage(e.data);
