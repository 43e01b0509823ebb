// Tessera's JS/TS API (web/js/tessera.mjs). Works in browsers and in node >= 18.

/** onnxruntime-web's dtype names. */
export type DType =
  | 'float32' | 'float64' | 'float16' | 'bfloat16' | 'int8' | 'uint8' | 'int16' | 'uint16'
  | 'int32' | 'uint32' | 'int64' | 'uint64' | 'bool';

/** Data: Float32Array for float32, BigInt64Array for int64, Uint8Array for bool (0/1),
 *  Uint16Array for float16/bfloat16 bit patterns, and so on. */
export type TypedArray =
  | Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array
  | Uint32Array | BigInt64Array | BigUint64Array;

export interface Tensor {
  dtype: DType;
  /** Dims, row-major. */
  shape: number[];
  data: TypedArray;
}

/** A string tensor (ONNX `tensor(string)`): one JS string per element, UTF-8 in the runtime. */
export interface StringTensor {
  dtype: 'string';
  shape: number[];
  data: string[];
}

/** A run output: a tensor, a sequence (ONNX `seq(tensor)`) as an array of its elements, or an
 *  empty optional as null. */
export type Value = Tensor | StringTensor | Value[] | null;

export interface ValueInfo {
  name: string;
  /** A DType, 'sequence<float32>' for sequences, 'unknown' when the model does not say. */
  dtype: string;
  /** Dims; a dynamic dim is its symbolic name (or "d<i>"); null when the rank is unknown. */
  shape: (number | string)[] | null;
}

export type ErrorCode =
  | 'invalid_model' | 'invalid_argument' | 'unsupported' | 'not_found' | 'resource_exhausted'
  | 'backend' | 'internal';

/** Every failure of the API. message: the runtime's path-addressed message (as the CLI's). */
export class TesseraError extends Error {
  readonly code: ErrorCode;
  /** The same error as a number: the `tessera` CLI's exit code and the C API's TSR_ERR_* value
   *  (3 invalid_model, 4 invalid_argument, 5 unsupported, 6 not_found, 7 resource_exhausted,
   *  8 backend, 9 internal). */
  readonly exitCode: number;
}

export interface CreateOptions {
  /** Intra-op threads per model, the calling thread included (default 1). 1 runs tessera.wasm.
   *  More runs tessera-threads.wasm (pthreads on Workers over a SharedArrayBuffer) where threads
   *  are available: in node, and in browsers on cross-origin isolated pages (`crossOriginIsolated`
   *  true: served with `Cross-Origin-Opener-Policy: same-origin` and
   *  `Cross-Origin-Embedder-Policy: require-corp`). Elsewhere it falls back to tessera.wasm on one
   *  thread, warns through printErr, and reports it in `threads` / `threadsFallback`. */
  threads?: number;
  /** URL of tessera.wasm (default: beside tessera.mjs). */
  wasmUrl?: string | URL;
  /** URL of tessera-threads.wasm (default: beside tessera.mjs). Its loader
   *  (tessera-threads-core.mjs) and Worker script (tessera-threads-core.worker.js) must stay
   *  beside tessera.mjs. */
  threadsWasmUrl?: string | URL;
  print?: (line: string) => void;
  /** The runtime's stderr and the fallback warning (default console.warn). */
  printErr?: (line: string) => void;
}

export interface ScriptOptions {
  /** The function to run. */
  entry: string;
  /** Its arguments by parameter name. */
  inputs?: Record<string, Tensor | StringTensor>;
  /** 'eager' (default): run each op at once; 'trace': run and record; 'convert': if/while/for
   *  on tensors become If/Loop. */
  mode?: 'eager' | 'trace' | 'convert';
  /** File name used in diagnostics (default "script.py"). */
  name?: string;
}

export interface ScriptResult {
  outputs: Record<string, Value>;
  /** "file:line:col: warning: ..." lines (trace mode warns where a tensor decided a branch). */
  warnings: string[];
  /** .tsr bytes of the traced/converted graph; null in eager mode. */
  graph: Uint8Array | null;
}

/** model.generate() options (the fields of tsr::GenerateOptions, docs/web.md "Generation"). */
export interface GenerateOptions {
  /** Tokens to generate at most (default 32). */
  maxNewTokens?: number;
  /** 0 (default): greedy, the argmax (lowest id on ties). >= 1: sample among the topK most likely. */
  topK?: number;
  /** Divides the logits before top-k sampling's softmax (> 0, default 1). */
  temperature?: number;
  /** Seeds top-k sampling's splitmix64 stream (the stream of tsr::generate: same seed, same draws). */
  seed?: number | bigint;
  /** Stop after any of these ids (it is included in the result). */
  stop?: number[];
  /** Input and output names (defaults: input_ids, logits, attention_mask, position_ids; the past /
   *  present prefixes are detected: past_key_values. / present., else past_ / present_). */
  inputIds?: string;
  logits?: string;
  pastPrefix?: string;
  presentPrefix?: string;
  attentionMask?: string;
  positionIds?: string;
}

export class Model {
  readonly inputs: ValueInfo[];
  readonly outputs: ValueInfo[];
  /** Runs the main graph. Every input by name, exactly once. Throws TesseraError
   *  (not_found: unknown input name; invalid_argument: missing input, wrong dtype or shape). */
  run(feeds: Record<string, Tensor | StringTensor>): Promise<Record<string, Value>>;
  /** Autoregressive decoding with a KV cache on a decoder-with-past model (inputs input_ids
   *  [1, S], past_key_values.{i}.key/value [1, heads, past, head_dim]; outputs logits
   *  [1, S, vocab], present.{i}.key/value). Step 0 runs promptIds with empty pasts, each later
   *  step the last token; presents stay in the wasm heap and become the next pasts without a copy.
   *  onToken(id, index) is awaited per token; returning false stops (that token is included).
   *  Resolves to the new ids (the prompt not included). Throws invalid_argument (bad options, a
   *  model input the loop cannot feed, NaN logits) / not_found (no input_ids, logits or past
   *  inputs, a past without its present) and run()'s errors, prefixed with the step. */
  generate(promptIds: number[], options?: GenerateOptions,
           onToken?: ((id: number, index: number) => boolean | void | Promise<boolean | void>) | null): Promise<number[]>;
  /** The model as .tsr bytes. */
  save(): Uint8Array;
  /** Frees the model's memory. Using or disposing it again throws invalid_argument. */
  dispose(): void;
}

export class Tessera {
  /** With threads > 1 (tessera-threads.wasm) create() resolves once threads - 1 pthread Workers
   *  are loaded; load() loads more when models need them (threads - 1 per loaded model). Runs
   *  block the calling thread (on a page's main thread too: it spins instead of Atomics.wait, so
   *  a Worker is the better place for long runs, with either build). In node the idle Workers do
   *  not keep the process alive; Emscripten sets globalThis.Worker to worker_threads' Worker. */
  static create(options?: CreateOptions): Promise<Tessera>;
  /** Intra-op threads per model: options.threads, or 1 after a fallback to tessera.wasm. */
  readonly threads: number;
  /** Why options.threads > 1 fell back to tessera.wasm on one thread (e.g. the page is not
   *  cross-origin isolated), or null. */
  readonly threadsFallback: string | null;
  /** Bytes of a .tsr or .onnx file. The model runs with the graph optimizations of
   *  `tessera optimize` (constant folding, Conv fusions); `inputs`, `outputs` and `save()` keep
   *  it as loaded. Throws invalid_model / unsupported (listing every unsupported op) /
   *  resource_exhausted. */
  load(bytes: Uint8Array | ArrayBuffer, options?: { name?: string }): Promise<Model>;
  script(source: string, options: ScriptOptions): Promise<ScriptResult>;
  /** Bytes of the wasm heap in use. */
  heapInUse(): number;
  /** Disposes every model and the instance (and ends tessera-threads.wasm's Workers). */
  dispose(): void;
}

export default Tessera;
