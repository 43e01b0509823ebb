// Tensors and the vocabulary of values: dtype names (onnxruntime-web's) <-> the runtime's dtype
// codes and typed arrays, the Tensor class, {type, dims, data} checks, log levels and value
// descriptions. Shared by tessera.mjs, model.mjs, webgpu.mjs and the Worker proxy.
import { argError } from './errors.mjs';


// tsr::DType values <-> onnxruntime-web's dtype names and typed arrays.
export const kDTypeName = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 16: 'bfloat16',
};
export const kDTypeCode = Object.fromEntries(Object.entries(kDTypeName).map(([k, v]) => [v, Number(k)]));
export const kArray = {
  float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array,
  int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array, float64: Float64Array,
  uint32: Uint32Array, uint64: BigUint64Array, bfloat16: Uint16Array,
};
export const kModes = { eager: 0, trace: 1, convert: 2 };

// The runtime's short dtype names (tsr::dtype_name) -> onnxruntime-web's, so that every message
// the package throws speaks one vocabulary ('float32', 'int64', ...). Quoted names ("x", 'w')
// are the model's and are left alone.
const kShortDType = {
  f32: 'float32', f64: 'float64', f16: 'float16', bf16: 'bfloat16', i8: 'int8', u8: 'uint8',
  i16: 'int16', u16: 'uint16', i32: 'int32', u32: 'uint32', i64: 'int64', u64: 'uint64',
};
export function jsDTypes(message) {
  return message.split(/("[^"\n]*"|'[^'\n]*')/).map((part, i) => (i % 2 ? part
    : part.replace(/\b(bf16|f16|f32|f64|i8|i16|i32|i64|u8|u16|u32|u64)\b/g, (m) => kShortDType[m]))).join('');
}

// onnxruntime's log severities, lowest first. The package prints the messages of the level set
// and above: verbose (each run: its time, inputs and outputs), info (the runtime and each loaded
// model), warning (the default: a threads fallback, the runtime's own warnings), error and fatal
// (nothing: failures are thrown as TesseraError, not printed).
export const kLogLevels = ['verbose', 'info', 'warning', 'error', 'fatal'];
export const kVerbose = 0, kInfo = 1, kWarning = 2;
export function logLevelIndex(level, what) {
  const i = kLogLevels.indexOf(level ?? 'warning');
  if (i < 0) throw argError(`${what}: logLevel ${JSON.stringify(level)} is not one of ${kLogLevels.join(', ')}`);
  return i;
}

/** The typed array of each type (onnxruntime-web's choice), for new Tensor(data, dims). */
export const kTypeOfArray = new Map([
  [Float32Array, 'float32'], [Float64Array, 'float64'], [Int8Array, 'int8'], [Uint8Array, 'uint8'],
  [Int16Array, 'int16'], [Uint16Array, 'uint16'], [Int32Array, 'int32'], [Uint32Array, 'uint32'],
  [BigInt64Array, 'int64'], [BigUint64Array, 'uint64'],
]);

export function checkDims(dims, where) {
  if (!Array.isArray(dims) || !dims.every((d) => Number.isInteger(d) && d >= 0))
    throw argError(`${where}: dims must be an array of non-negative integers, got ${JSON.stringify(dims)}`);
}

/**
 * A tensor, as onnxruntime-web's ort.Tensor: `new Tensor(type, data, dims)` (or
 * `new Tensor(data, dims)`, the type taken from the typed array). type: 'float32', 'int64', ...,
 * 'string'; data: the type's typed array (a plain array of numbers, bigints or strings is
 * converted); dims: default [data.length]. `.dtype` and `.shape` are aliases of `.type` and
 * `.dims` (the names of the package's plain `{dtype, shape, data}` objects, which feeds also
 * accept). Throws invalid_argument naming what is wrong.
 */
export class Tensor {
  constructor(type, data, dims) {
    if (typeof type !== 'string') {
      [data, dims] = [type, data];
      type = Array.isArray(data) && data.length > 0 && data.every((v) => typeof v === 'string') ? 'string' : kTypeOfArray.get(data?.constructor);
      if (type === undefined)
        throw argError(`new Tensor(data, dims): cannot tell the type of ${data?.constructor?.name ?? typeof data} data; pass the type first`);
    }
    const where = `new Tensor('${type}', ...)`;
    if (type === 'string') {
      if (!Array.isArray(data) || !data.every((v) => typeof v === 'string')) throw argError(`${where}: data must be an array of strings`);
    } else {
      const Ctor = kArray[type];
      if (!Ctor) throw argError(`new Tensor(): type ${JSON.stringify(type)} is not one of string, ${Object.keys(kArray).join(', ')}`);
      if (Array.isArray(data)) data = Ctor === BigInt64Array || Ctor === BigUint64Array ? Ctor.from(data, BigInt) : Ctor.from(data);
      if (!(data instanceof Ctor)) throw argError(`${where}: data must be a ${Ctor.name} (or an array), got ${data?.constructor?.name ?? typeof data}`);
    }
    dims = dims === undefined ? [data.length] : Array.from(dims);
    checkDims(dims, where);
    const size = dims.reduce((a, b) => a * b, 1);
    if (size !== data.length) throw argError(`${where}: dims [${dims}] hold ${size} elements, data has ${data.length}`);
    this.type = type;
    this.dims = dims;
    this.data = data;
  }

  /** Number of elements (ort.Tensor's size). */
  get size() { return this.data.length; }
  /** Alias of type. */
  get dtype() { return this.type; }
  /** Alias of dims. */
  get shape() { return this.dims; }

  /** @internal A tensor from the runtime, already consistent: no checks, no copies. */
  static _from(type, data, dims) {
    const t = Object.create(Tensor.prototype);
    t.type = type; t.dims = dims; t.data = data;
    return t;
  }
}

/** {type|dtype, dims|shape, data} -> [type, dims, data]; both spellings, checked to agree. */
export function tensorFields(t, where) {
  if (t === null || typeof t !== 'object')
    throw argError(`${where}: expected a Tensor or {type, dims, data} (or {dtype, shape, data}), got ${t === null ? 'null' : typeof t}`);
  const type = t.type ?? t.dtype, dims = t.dims ?? t.shape;
  if (t.type !== undefined && t.dtype !== undefined && t.type !== t.dtype)
    throw argError(`${where}: type ${JSON.stringify(t.type)} and dtype ${JSON.stringify(t.dtype)} disagree`);
  if (type === undefined) throw argError(`${where}: no type (expected {type, dims, data} or {dtype, shape, data})`);
  if (dims === undefined || dims === null) throw argError(`${where}: no dims (expected {type, dims, data} or {dtype, shape, data})`);
  return [type, Array.isArray(dims) ? dims : Array.from(dims), t.data];
}

/** {name, dtype, shape} of the wasm's JSON value description (web_api.h json_values). */
export function valueInfo(v) {
  return { name: v.name, dtype: v.kind === 1 ? `sequence<${kDTypeName[v.dtype] ?? 'unknown'}>` : (kDTypeName[v.dtype] ?? 'unknown'), shape: v.shape };
}

/** "x: float32[1, 3, 48, 320]" lines for log messages. */
export function describe(values) {
  return values.map((v) => `${v.name}: ${v.dtype}${v.shape ? `[${v.shape.join(', ')}]` : '[*]'}`).join(', ');
}
