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

/** A tensor as onnxruntime-web's ort.Tensor (run() returns these). */
export class Tensor {
  /** `new Tensor('float32', new Float32Array(6), [2, 3])`; data may also be a plain array (converted
   *  to the type's typed array; numbers or bigints for int64/uint64); dims default [data.length].
   *  `new Tensor(data, dims)` takes the type from the typed array (a string[] is 'string').
   *  Throws TesseraError invalid_argument: unknown type, data of the wrong class, dims that are
   *  not non-negative integers or do not hold data.length elements. */
  constructor(type: DType | 'string', data: TypedArray | readonly number[] | readonly bigint[] | readonly string[], dims?: readonly number[]);
  constructor(data: TypedArray | readonly string[], dims?: readonly number[]);
  readonly type: DType | 'string';
  /** Dims, row-major. */
  readonly dims: number[];
  readonly data: TypedArray | string[];
  /** Element count. */
  readonly size: number;
  /** Alias of type (the field name of `{dtype, shape, data}` objects). */
  readonly dtype: DType | 'string';
  /** Alias of dims. */
  readonly shape: number[];
}

/** A feed: a Tensor, or any object with ort.Tensor's fields (an onnxruntime-web ort.Tensor
 *  works), or the package's older `{dtype, shape, data}`. Data as in Tensor; string tensors
 *  take a string[]. */
export type TensorLike =
  | Tensor
  | { type: DType | 'string'; dims: readonly number[]; data: TypedArray | string[] }
  | { dtype: DType | 'string'; shape: readonly number[]; data: TypedArray | string[] };

/** A string tensor (ONNX `tensor(string)`): one JS string per element, UTF-8 in the runtime. */
export type StringTensor = Tensor & { readonly type: 'string'; readonly data: string[] };

/** A run output: a Tensor, a sequence (ONNX `seq(tensor)`) as an array of its elements, or an
 *  empty optional as null. */
export type Value = Tensor | Value[] | null;

/** onnxruntime's log severities (see CreateOptions.logLevel). */
export type LogLevel = 'verbose' | 'info' | 'warning' | 'error' | 'fatal';

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
  /** Where models run (default 'wasm'). 'webgpu': on the GPU through WebGPU (docs/web.md
   *  "WebGPU"): float32 nodes of the ops the WebGPU layer has run there, every other node alone on
   *  wasm; If, Loop and Scan run their subgraphs the same way (a model with a batched ONNX Scan-8 runs wholly on wasm). Throws unsupported (`device 'webgpu':
   *  navigator.gpu is not available ...` / `... found no adapter`) where WebGPU cannot be used.
   *  'auto': WebGPU where an adapter exists, else wasm with `deviceFallback` saying why. The WebGPU
   *  code (webgpu*.mjs) is imported only for 'webgpu' and 'auto'. */
  device?: 'wasm' | 'webgpu' | 'auto';
  /** true: the runtime (with these options: wasm, threads or WebGPU) runs in a dedicated Worker
   *  (a module Worker in browsers, worker_threads in node) and create() resolves to a
   *  WorkerTessera, the same API with every call a message, so loads and runs never block the
   *  calling thread (onnxruntime-web's env.wasm.proxy). proxy.mjs and worker.mjs are imported only
   *  then. Default false; invalid_argument for a value other than true or false. */
  worker?: boolean;
  /** URL of tessera.wasm (default: beside tessera.mjs). */
  wasmUrl?: string | URL;
  /** URL of tessera-threads.wasm (default: beside tessera.mjs). Its loader
   *  (tessera-threads-core.mjs) and Worker script (tessera-threads-core.worker.js) must stay
   *  beside tessera.mjs. */
  threadsWasmUrl?: string | URL;
  /** What the package prints (onnxruntime's severities; default 'warning'): 'verbose' adds a
   *  line per run (time, input and output shapes), 'info' a line for the runtime and per loaded
   *  model (size, load time, free dimensions, inputs, outputs), 'warning' the threads fallback
   *  and the runtime's own warnings; 'error' and 'fatal' print nothing (failures are thrown).
   *  A load() may set its model's own level. Throws invalid_argument for another value. */
  logLevel?: LogLevel;
  /** verbose and info lines (default console.log). */
  print?: (line: string) => void;
  /** The runtime's stderr and the fallback warning (default console.warn). */
  printErr?: (line: string) => void;
}

/** Download progress of load(): per chunk, and once at the end with loaded === total. */
export interface LoadProgress {
  /** The URL being read (the model's or an external data file's). */
  url: string;
  loaded: number;
  /** Content-Length (a file's size), or null when the server sends none. */
  total: number | null;
}

/** A load() source: bytes, a URL (relative: to the page; in node a relative string is a file
 *  path and file: URLs are read from disk), or a fetch() Response. URLs are streamed. */
export type ModelSource = Uint8Array | ArrayBuffer | string | URL | Response;

export interface LoadOptions {
  /** Prefixes error messages (default: the URL's file name, else "model"). */
  name?: string;
  /** Called while a URL or Response is read (model and external data). */
  onProgress?: (progress: LoadProgress) => void;
  /** An .onnx model's external data files (as onnxruntime-web's option): `path` is the location
   *  the model's tensors name (e.g. 'model.onnx_data'), `data` its bytes, a Response, or a URL
   *  (a relative one is resolved against the model's URL). not_found for a location not given,
   *  invalid_model for a range past the end of its file, invalid_argument with a .tsr model. */
  externalData?: { path: string; data: ModelSource }[];
  /** Named dynamic dims (the strings in `inputs[i].shape`) fixed before the session plans the
   *  graph, as onnxruntime's freeDimensionOverrides: a run then checks them, and inputs/outputs
   *  show them. not_found for a name no input has (listing those it has), invalid_argument for
   *  a size that is not an integer >= 0 or that the graph contradicts. */
  freeDimensions?: Record<string, number>;
  /** This model's log level (default: the runtime's). */
  logLevel?: LogLevel;
}

export interface RunOptions {
  /** Only these outputs, in this order; the others are not copied out of the wasm heap.
   *  invalid_argument for a name the model lacks (listing its outputs) or an empty list. */
  outputs?: string[];
  /** 'cpu': as `tessera run --check-against cpu`, also runs every node of the model (the main
   *  graph and the If branches / Loop bodies that ran) on wasm and compares each node output, in execution order, with the run on the model's placement;
   *  run() then resolves to {outputs, check} (CheckedRun). A model on wasm (a wasm runtime, or
   *  deviceFallback) is its own reference: check.compared is 0. invalid_argument for another
   *  value. Holds every node output of both runs until it resolves: a debugging aid. */
  checkAgainst?: 'cpu';
  /** checkAgainst's tolerance: a float32 element differs where |device - cpu| > atol + rtol *
   *  |cpu| (default the CLI's {atol: 1e-4, rtol: 1e-4}); invalid_argument for a negative value. */
  checkTolerance?: { atol?: number; rtol?: number };
  /** WorkerModel.run() only: transfer each input's ArrayBuffer to the Worker instead of copying it
   *  (the caller's arrays are detached: length 0 afterwards; a subarray detaches its whole
   *  buffer). Default false: inputs are copied. */
  transferInputs?: boolean;
}

/** The first node output (execution order) where the run on the device and the run on wasm
 *  differ. op, name: the node's; output: the value's name; device: where the node ran; maxAbs and
 *  relL2 (float32 values; null when dtype or shape differ). */
export interface Divergence {
  graph: number; node: number; op: string; name: string; output: string; device: 'webgpu' | 'wasm';
  dtype: string; shape: number[]; cpuDtype: string; cpuShape: number[];
  maxAbs: number | null; relL2: number | null;
}

/** run(feeds, {checkAgainst: 'cpu'})'s report. message: the CLI's line (`check-against cpu: first
 *  difference at graph[0] node[12] Conv "conv_3" output "x": max abs error 0.5 (tolerance 0.0001 +
 *  0.0001 * |cpu|)`, or `check-against cpu: all N node outputs of graph[0] agree within ...`).
 *  compared: node outputs compared (up to the divergence); float32 ones by value, others by dtype
 *  and shape. */
export interface CheckReport {
  against: 'cpu';
  ok: boolean;
  compared: number;
  tolerance: { atol: number; rtol: number };
  firstDivergence: Divergence | null;
  message: string;
}

/** What run() resolves to with options.checkAgainst: the outputs of the run on the model's
 *  placement, and the report. */
export interface CheckedRun {
  outputs: Record<string, Value>;
  check: CheckReport;
}

export interface ScriptOptions {
  /** The function to run. */
  entry: string;
  /** Its arguments by parameter name. */
  inputs?: Record<string, TensorLike>;
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

/** Which device runs each node of the model (as loaded, before the wasm session's own
 *  optimizations): the main graph's nodes (graph 0), then each subgraph's (an If's branches:
 *  graph is its index in the model; the If node itself runs on the host: 'wasm'), as
 *  `tessera inspect --placement --json` prints it. copies: the values that
 *  cross between the devices in a run (graph inputs uploaded, nodes on the other side, graph
 *  outputs read back; constants are uploaded once and not counted). */
export interface Placement {
  nodes: { graph: number; node: number; op: string; name: string; device: 'webgpu' | 'wasm' }[];
  copies: number;
}

export class Model {
  readonly inputs: ValueInfo[];
  readonly outputs: ValueInfo[];
  /** Where run() runs: 'webgpu' (node by node, see placement) or 'wasm'. generate() always runs
   *  on wasm. */
  readonly device: 'webgpu' | 'wasm';
  /** On a WebGPU runtime, why this model runs wholly on wasm (e.g. "control flow (Loop)"), or null. */
  readonly deviceFallback: string | null;
  /** Per node of the model's graphs, the device that runs it (all 'wasm' on a wasm runtime). */
  readonly placement: Placement;
  /** Runs the main graph. Every input by name, exactly once. Resolves to {name: Tensor} (all
   *  outputs, or those of options.outputs; an array as the second argument is taken as that
   *  list, as ort's fetches). Throws TesseraError (not_found: unknown input name;
   *  invalid_argument: missing input, wrong type or shape, an input a node cannot take at its
   *  size, e.g. `input "x" float32[1, 3, 48, 1] does not fit the model: graph[0].node[25]
   *  (AveragePool ...): ...`, an unknown output name). */
  run(feeds: Record<string, TensorLike>, options: RunOptions & { checkAgainst: 'cpu' }): Promise<CheckedRun>;
  run(feeds: Record<string, TensorLike>, options?: RunOptions | string[]): Promise<Record<string, Value>>;
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
  /** Per-node profile of the wasm runs (as `tessera run --profile`): the first call turns it on
   *  and returns ''; later calls return the `top` (default 15) nodes by total time since then.
   *  invalid_argument on a WebGPU model. Not on a Worker runtime's models. */
  profile(top?: number): string;
  /** Frees the model's memory. Using or disposing it again throws invalid_argument. */
  dispose(): void;
}

/** Options of Tessera.loadTrainer(). */
export interface TrainerLoadOptions {
  /** Prefixes error messages (default: the URL's file name, else "model"). */
  name?: string;
  onProgress?: (progress: LoadProgress) => void;
  /** This trainer's log level (default: the runtime's); 'verbose' prints each step's time and loss. */
  logLevel?: LogLevel;
}

/** How Tessera.prepareTraining() turns an inference model into a training model
 *  (tsr::TrainingSpec, docs/training.md). Unknown keys are invalid_argument (a typo is not ignored). */
export interface TrainingSpec extends TrainerLoadOptions {
  /** 'softmax_cross_entropy' (default: logits [N, C], int64 labels [N], mean over the batch),
   *  'nll' (the model outputs log-probabilities), 'mse' (labels shaped like the prediction). */
  loss?: 'softmax_cross_entropy' | 'nll' | 'mse';
  /** 'adam' (default), 'adamw' (decoupled weight decay), 'sgd' (momentum, nesterov, L2 weight
   *  decay, as torch.optim.SGD). */
  optimizer?: 'adam' | 'adamw' | 'sgd';
  /** Default 1e-3 (stored as float32; Trainer.learningRate changes it later). */
  learningRate?: number;
  /** SGD momentum (default 0) and Nesterov momentum (default false). */
  momentum?: number;
  nesterov?: boolean;
  /** Default 0. */
  weightDecay?: number;
  /** Adam's betas and epsilon (defaults 0.9, 0.999, 1e-8). */
  beta1?: number;
  beta2?: number;
  epsilon?: number;
  /** Name patterns of the weights to train ('*' any run of characters, '?' one; whole-name
   *  match), e.g. ['head.*']. Default: every floating-point weight (initializer of rank >= 1).
   *  invalid_argument naming each pattern that matches no weight. */
  trainable?: string[];
  /** Name patterns of weights kept fixed, applied after `trainable`. */
  frozen?: string[];
}

/** A training batch. inputs: {name: tensor} (each of Trainer.inputs once; not_found for an unknown
 *  name) or an array in Trainer.inputs order. labels: a tensor, or a typed array (a 1-D tensor):
 *  int64 class indices [N] for softmax_cross_entropy and nll (e.g. a BigInt64Array), the
 *  prediction's dtype and shape for mse. */
export interface Batch {
  inputs: Record<string, TensorLike> | TensorLike[];
  labels: TensorLike | TypedArray;
}

/** On-device training (tsr::Trainer over a training model: forward, loss, backward and the
 *  optimizer update in one graph, the weights and optimizer state in the runtime). With one
 *  thread the same model, batches and steps give bit-identical weights as the native CLI and C++
 *  API do. Errors as Model.run's (invalid_argument names the bad input or labels; a failed step
 *  updates nothing). */
export class Trainer {
  /** The data inputs (what run() and a batch's inputs take). */
  readonly inputs: ValueInfo[];
  /** The labels a batch takes. */
  readonly labels: ValueInfo;
  /** Names of the weights being trained. */
  readonly weights: string[];
  /** Names of run()'s outputs (the model's outputs; the first is the prediction). */
  readonly outputs: string[];
  /** One optimizer step; resolves to the batch's mean loss before the update (NaN or infinite as
   *  computed: lower the learning rate). */
  step(batch: Batch): Promise<number>;
  /** Loss and prediction (the first output, e.g. logits float32 [N, C]) with the current
   *  weights; nothing is updated. */
  eval(batch: Batch): Promise<{ loss: number; prediction: Tensor }>;
  /** Inference with the current weights: {outputName: Tensor} as Model.run. */
  run(inputs: Record<string, TensorLike> | TensorLike[]): Promise<Record<string, Value>>;
  /** The learning rate of the next steps (float32). invalid_argument for NaN, infinite or < 0. */
  learningRate: number;
  /** Optimizer steps done (a loaded checkpoint's count continues). */
  readonly stepCount: number;
  /** The checkpoint as .tsr bytes: training model, current weights, optimizer state, step count and
   *  learning rate. loadTrainer() or load() of it continues bit-identically; the native
   *  `tessera train` resumes and `tessera export` exports it. */
  save(): Uint8Array;
  /** Restores a checkpoint of the same training model (invalid_argument naming the variables
   *  that do not match, invalid_model for bytes that are not a .tsr; nothing changes then). */
  load(checkpoint: Uint8Array | ArrayBuffer): void;
  /** The inference model with the current weights as .tsr bytes (no training state), as
   *  `tessera export` writes it: Tessera.load() and the native `tessera run` run it. */
  exportInference(): Uint8Array;
  /** Frees the trainer's memory. Using or disposing it again throws invalid_argument. */
  dispose(): void;
}

export class Tessera {
  /** With threads > 1 (tessera-threads.wasm) create() resolves once threads - 1 pthread Workers
   *  are loaded; load() loads more when models need them (threads - 1 per loaded model). Runs
   *  block the calling thread (on a page's main thread too: it spins instead of Atomics.wait, so
   *  a Worker is the better place for long runs, with either build). In node the idle Workers do
   *  not keep the process alive; Emscripten sets globalThis.Worker to worker_threads' Worker. */
  static create(options: CreateOptions & { worker: true }): Promise<WorkerTessera>;
  static create(options?: CreateOptions): Promise<Tessera>;
  /** Intra-op threads per model: options.threads, or 1 after a fallback to tessera.wasm. */
  readonly threads: number;
  /** Why options.threads > 1 fell back to tessera.wasm on one thread (e.g. the page is not
   *  cross-origin isolated), or null. */
  readonly threadsFallback: string | null;
  /** Where models run: 'webgpu' or 'wasm' (options.device 'auto' without WebGPU: 'wasm'). */
  readonly device: 'webgpu' | 'wasm';
  /** Why options.device 'auto' runs on wasm (no navigator.gpu, no adapter, requestDevice failed),
   *  or null. */
  readonly deviceFallback: string | null;
  /** A .tsr or .onnx model from bytes, a URL (streamed) or a Response. The model runs with the
   *  graph optimizations of `tessera optimize` (constant folding, Conv fusions); `inputs`,
   *  `outputs` and `save()` keep it as loaded (with options.freeDimensions applied). Throws
   *  invalid_model / unsupported (listing every unsupported op) / resource_exhausted, not_found
   *  (a URL that answers an HTTP error or a missing file), and the options' errors. */
  load(source: ModelSource, options?: LoadOptions): Promise<Model>;
  script(source: string, options: ScriptOptions): Promise<ScriptResult>;
  /** A Trainer over a training model or a checkpoint (.tsr with a "train_step" signature:
   *  Trainer.save(), `tessera train`'s checkpoints), resuming with its weights and optimizer state.
   *  not_found for a model without one (an inference model: use prepareTraining), load()'s errors. */
  loadTrainer(source: ModelSource, options?: TrainerLoadOptions): Promise<Trainer>;
  /** A Trainer over an inference model (.tsr or .onnx; its first output the prediction) made
   *  trainable by tsr::prepare_training. invalid_argument for an unknown loss or optimizer, a
   *  pattern that matches no weight, no weight left to train; unsupported listing every op
   *  without a gradient rule; load()'s errors. */
  prepareTraining(source: ModelSource, spec?: TrainingSpec): Promise<Trainer>;
  /** Bytes of the wasm heap in use. */
  heapInUse(): number;
  /** Disposes every model and trainer and the instance (and ends tessera-threads.wasm's Workers). */
  dispose(): void;
}

/**
 * Tessera.create({worker: true}): the runtime in a dedicated Worker. The same API as Tessera and
 * Model where it makes sense, asynchronous throughout: heapInUse(), save() and dispose() return
 * Promises. Inputs are copied to the Worker (structured clone; the caller's arrays stay usable)
 * unless run()'s transferInputs; outputs (and save()'s, script()'s bytes) are transferred back,
 * not copied. A relative URL given to load() is resolved on the calling thread (against the page;
 * in node, the working directory), a Response read there. Errors raised in the Worker arrive as
 * TesseraError with the same code and message; a Worker that fails or exits rejects the pending
 * calls with internal. Trainers do not run in a Worker: loadTrainer() and prepareTraining() throw
 * unsupported. In node the Worker keeps the process alive only while a call is pending.
 */
export interface WorkerTessera extends Pick<Tessera, 'threads' | 'threadsFallback' | 'device' | 'deviceFallback' | 'script'> {
  readonly worker: true;
  /** As Tessera.load(); onProgress is called on the calling thread. */
  load(source: ModelSource, options?: LoadOptions): Promise<WorkerModel>;
  /** Throws unsupported. */
  loadTrainer(source: ModelSource, options?: TrainerLoadOptions): Promise<never>;
  /** Throws unsupported. */
  prepareTraining(source: ModelSource, spec?: TrainingSpec): Promise<never>;
  heapInUse(): Promise<number>;
  /** Disposes the models, the runtime and the Worker (terminated once it has freed them). */
  dispose(): Promise<void>;
}

/** A model in the Worker of a WorkerTessera: inputs, outputs, device, deviceFallback and placement
 *  as Model's (copied at load), run() and generate() as Model's (generate()'s onToken runs on the
 *  calling thread; its answer goes back to the Worker, a round trip per token). */
export interface WorkerModel extends Pick<Model, 'inputs' | 'outputs' | 'device' | 'deviceFallback' | 'placement' | 'run' | 'generate'> {
  save(): Promise<Uint8Array>;
  dispose(): Promise<void>;
}

export default Tessera;
