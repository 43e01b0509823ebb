// Shared helpers for tests/models and bench/: the model table, a seeded PRNG, .npy I/O and
// loading onnxruntime-node from tests/models/node_modules.
'use strict';
const fs = require('fs');
const path = require('path');

const kRepo = path.resolve(__dirname, '..', '..');

/** A model table: `file` (e.g. the zoo's manifest.json, bench/zoo), default tests/models/models.json. */
function loadModels(file) {
  return JSON.parse(fs.readFileSync(file || path.join(__dirname, 'models.json'), 'utf8'));
}

/** Directory of the fetched .onnx files: $TSR_MODELS_DIR or third_party/models. */
function modelsDir() {
  return process.env.TSR_MODELS_DIR || path.join(kRepo, 'third_party', 'models');
}

/** onnxruntime-node 1.30 from tests/models/node_modules (install: scripts/install_deps.sh). */
function loadOrt() {
  try {
    return require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    throw new Error('onnxruntime-node is not installed in tests/models/node_modules: run scripts/install_deps.sh (' + e.message + ')');
  }
}

/** mulberry32: a small deterministic 32-bit PRNG; returns floats in [0, 1). */
function mulberry32(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const kNpyDescr = {
  float32: ['<f4', Float32Array], float64: ['<f8', Float64Array], int64: ['<i8', BigInt64Array],
  int32: ['<i4', Int32Array], int16: ['<i2', Int16Array], int8: ['|i1', Int8Array],
  uint8: ['|u1', Uint8Array], bool: ['|b1', Uint8Array],
};

/** Writes a typed array as a NumPy .npy file (format 1.0, C order). */
function writeNpy(file, dtype, shape, data) {
  const d = kNpyDescr[dtype];
  if (!d) throw new Error('writeNpy: unsupported dtype ' + dtype);
  const shapeStr = shape.length === 0 ? '()' : shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${d[0]}', 'fortran_order': False, 'shape': ${shapeStr}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const arr = data instanceof d[1] ? data : d[1].from(data);
  const body = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

/** Reads a little-endian C-order .npy file: {dtype, shape, data}. */
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(file + ': not a .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(file + ': fortran order unsupported');
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const entry = Object.entries(kNpyDescr).find(([, v]) => v[0] === descr);
  if (!entry) throw new Error(file + ': unsupported descr ' + descr);
  const bytes = buf.subarray(hstart + hlen);
  const copy = new Uint8Array(bytes.length); copy.set(bytes);
  return { dtype: entry[0], shape, data: new entry[1][1](copy.buffer) };
}

/**
 * Seeded inputs for one model-table entry: {name, dtype, shape, data} per input. Each input
 * gets its own stream (seed + index) so adding an input does not change the others.
 */
function makeInputs(model, seed) {
  return model.inputs.map((spec, k) => {
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const rnd = mulberry32((seed + 7919 * k) >>> 0);
    let data;
    if (spec.dtype === 'float32') {
      data = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        let v = spec.low + (spec.high - spec.low) * rnd();
        if (spec.round) v = Math.round(v);
        data[i] = v;
      }
    } else if (spec.dtype === 'int64') {
      data = new BigInt64Array(n);
      for (let i = 0; i < n; i++) data[i] = BigInt('value' in spec ? spec.value : Math.floor(spec.low + (spec.high - spec.low) * rnd()));
    } else {
      throw new Error('makeInputs: unsupported dtype ' + spec.dtype);
    }
    return { name: spec.name, dtype: spec.dtype, shape: spec.shape, data };
  });
}

/** A CPU onnxruntime session on one thread (the reference configuration). */
async function ortSession(ort, file) {
  return ort.InferenceSession.create(file, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
  });
}

module.exports = { kRepo, loadModels, modelsDir, loadOrt, mulberry32, writeNpy, readNpy, makeInputs, ortSession };
