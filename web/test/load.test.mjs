// load() sources (issue 30): URLs streamed over HTTP with progress (with and without
// Content-Length), URL objects, file paths and file: URLs in node, fetch() Responses, HTTP
// errors, and ONNX external data (.onnx_data, written by Debian's python3-onnx from a real model)
// from bytes and from URLs relative to the model's, against the same model with its data inline.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { lib, loadPackage, modelPath, feedsFor } from './helpers.mjs';

let Tessera, TesseraError, tsr, server, origin;
const models = Object.fromEntries(lib.loadModels().map((m) => [m.name, m]));
const alexa = models.oww_alexa;
const alexaFile = modelPath(alexa.file);
const skip = fs.existsSync(alexaFile) ? false : `${alexaFile} missing (third_party/models/fetch.sh)`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-load-'));

before(async () => {
  ({ Tessera, TesseraError } = await loadPackage());
  tsr = await Tessera.create();
  if (skip) return;
  // alexa with every initializer in one external file, as onnx.save_model(save_as_external_data) writes it.
  execFileSync('/usr/bin/python3', ['-c', `
import onnx, sys
m = onnx.load(sys.argv[1])
onnx.save_model(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True, location='alexa.onnx_data', size_threshold=0)`,
  alexaFile, path.join(dir, 'alexa.onnx')]);
  // /models/NAME: third_party/models; /ext/NAME: the external-data pair; /chunked/NAME: no
  // Content-Length (chunked transfer); anything else 404.
  server = http.createServer((req, res) => {
    const [, where, name] = req.url.split('/');
    const file = where === 'ext' ? path.join(dir, name) : path.join(path.dirname(alexaFile), decodeURIComponent(name ?? ''));
    if (!['models', 'ext', 'chunked'].includes(where) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end('not here');
      return;
    }
    const bytes = fs.readFileSync(file);
    if (where === 'chunked') {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      for (let at = 0; at < bytes.length; at += 65536) res.write(bytes.subarray(at, at + 65536));
      res.end();
    } else {
      res.writeHead(200, { 'Content-Length': bytes.length }).end(bytes);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
});
after(() => { tsr.dispose(); server?.close(); fs.rmSync(dir, { recursive: true, force: true }); });

async function rejects(promise, code, pattern) {
  let err;
  try { await promise; } catch (e) { err = e; }
  assert.ok(err instanceof TesseraError, `expected a TesseraError ${code}, got ${err}`);
  assert.equal(err.code, code, `code of: ${err.message}`);
  if (pattern) assert.match(err.message, pattern);
  return err;
}

let expected = null;
async function check(model) {
  const feeds = feedsFor(alexa);
  if (!expected) {
    const ref = await tsr.load(new Uint8Array(fs.readFileSync(alexaFile)));
    expected = await ref.run(feeds);
    ref.dispose();
  }
  assert.deepEqual(await model.run(feeds), expected);
  model.dispose();
}

/** Progress reports: loaded grows to the file's size; total is the size, or null without Content-Length. */
function checkProgress(reports, url, size, total = size) {
  assert.ok(reports.length >= 2, `${reports.length} progress reports`);
  for (let i = 1; i < reports.length; i++) assert.ok(reports[i].loaded >= reports[i - 1].loaded);
  for (const r of reports.slice(0, -1)) { assert.equal(r.url, url); assert.equal(r.total, total); }
  assert.deepEqual(reports.at(-1), { url, loaded: size, total: size });
}

test('load(URL string | URL): streamed over HTTP with progress; the name is the file name', { skip }, async () => {
  const size = fs.statSync(alexaFile).size;
  const url = `${origin}/models/${alexa.file}`;
  const reports = [];
  await check(await tsr.load(url, { onProgress: (p) => reports.push(p) }));
  checkProgress(reports, url, size);
  const chunked = [];
  await check(await tsr.load(new URL(`${origin}/chunked/${alexa.file}`), { onProgress: (p) => chunked.push(p) }));
  checkProgress(chunked, `${origin}/chunked/${alexa.file}`, size, null);
  await rejects(tsr.load(`${origin}/models/nope.onnx`), 'not_found', /\/models\/nope\.onnx: HTTP 404/);
  // Messages name the file by default.
  await rejects(tsr.load(`${origin}/ext/alexa.onnx`), 'unsupported', /^alexa\.onnx: .*external data \('alexa\.onnx_data'\)/);
});

test('load(Response), load(file path), load(file: URL), and bad sources', { skip }, async () => {
  const reports = [];
  await check(await tsr.load(await fetch(`${origin}/models/${alexa.file}`), { onProgress: (p) => reports.push(p) }));
  checkProgress(reports, `${origin}/models/${alexa.file}`, fs.statSync(alexaFile).size);
  await check(await tsr.load(path.relative(process.cwd(), alexaFile)));
  await check(await tsr.load(pathToFileURL(alexaFile)));
  await rejects(tsr.load(path.join(dir, 'missing.onnx')), 'not_found', /missing\.onnx: file not found/);
  await rejects(tsr.load(42), 'invalid_argument', /expected a URL, a file path \(node\), a Response, a Uint8Array or an ArrayBuffer, got number/);
  await rejects(tsr.load(alexaFile, { onProgress: 1 }), 'invalid_argument', /onProgress must be a function/);
});

test('externalData: .onnx_data from bytes, from a URL beside the model, and its errors', { skip }, async () => {
  const model = new Uint8Array(fs.readFileSync(path.join(dir, 'alexa.onnx')));
  const data = new Uint8Array(fs.readFileSync(path.join(dir, 'alexa.onnx_data')));
  assert.ok(model.length < 4096 && data.length > 100000, `${model.length} + ${data.length} bytes: the weights are outside`);
  await check(await tsr.load(model, { externalData: [{ path: 'alexa.onnx_data', data }] }));
  await check(await tsr.load(model, { externalData: [{ path: './alexa.onnx_data', data: data.buffer }] }));
  const reports = [];
  await check(await tsr.load(`${origin}/ext/alexa.onnx`, { externalData: [{ path: 'alexa.onnx_data', data: 'alexa.onnx_data' }], onProgress: (p) => reports.push(p) }));
  assert.deepEqual(new Set(reports.map((r) => r.url)), new Set([`${origin}/ext/alexa.onnx`, `${origin}/ext/alexa.onnx_data`]));
  await rejects(tsr.load(model, { name: 'ext.onnx', externalData: [{ path: 'other.bin', data }] }), 'not_found',
    /^ext\.onnx: tensor '[^']+': its external data file 'alexa\.onnx_data' was not given \(given: 'other\.bin'\)/);
  await rejects(tsr.load(model, { name: 'ext.onnx', externalData: [{ path: 'alexa.onnx_data', data: data.subarray(0, 1000) }] }), 'invalid_model',
    /^ext\.onnx: tensor '[^']+': external data at offset \d+ length \d+ is past the end of 'alexa\.onnx_data' \(1000 bytes\)/);
  const loaded = await tsr.load(model, { externalData: [{ path: 'alexa.onnx_data', data }] });
  const tsrBytes = loaded.save();
  loaded.dispose();
  await rejects(tsr.load(tsrBytes, { name: 'a.tsr', externalData: [{ path: 'alexa.onnx_data', data }] }), 'invalid_argument', /a\.tsr: external data is for \.onnx models/);
  await rejects(tsr.load(model, { externalData: { path: 'x' } }), 'invalid_argument', /externalData must be an array of \{path, data\}/);
});
