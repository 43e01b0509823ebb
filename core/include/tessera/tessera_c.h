/* Tessera's stable C API (C11): load a .tsr model, create a session, run it.
 *
 *   tsr_error* err = NULL;
 *   tsr_model* m = tsr_model_load_file("model.tsr", &err);
 *   tsr_session* s = m ? tsr_session_create(m, NULL, &err) : NULL;
 *   ...   tsr_session_run(s, inputs, n_in, outputs, n_out, &err) ...
 *   if (err) { fprintf(stderr, "%s\n", tsr_error_message(err)); tsr_error_free(err); }
 *
 * ABI: every type is an opaque handle; structs are never exposed, so fields may change without
 * breaking callers. TSR_C_API_VERSION grows when functions are added (never removed or changed);
 * tsr_c_api_version() tells a caller which version the linked library implements.
 *
 * Errors: fallible functions take `tsr_error** err` (may be NULL when the caller does not want
 * the detail). On failure they return NULL (or non-zero) and, when err != NULL, store a new
 * tsr_error the caller frees with tsr_error_free; on success *err is left untouched. Messages
 * name the place (e.g. "graph[0].node[12] (Conv \"conv_3\").input[1]: dtype i64, expected f32").
 * Nothing throws across this boundary; bad input never crashes.
 *
 * Handles: NULL and handles already freed are reported as TSR_ERR_INVALID_ARGUMENT where a
 * function can report errors, and are otherwise ignored (getters return 0/NULL). The library
 * keeps a registry of live handles so that a freed handle is detected as long as its address
 * has not been reused by a new handle of the same kind; passing freed handles stays a caller bug.
 *
 * Ownership: every *_create / *_load / tsr_session_run output returns a handle the caller owns
 * and frees with the matching *_free (free functions accept NULL). Strings and arrays returned
 * by getters belong to the handle and live until it is freed.
 *
 * Thread safety: distinct handles may be used from different threads at once. A tsr_model may
 * be shared by any number of sessions on any threads (it is immutable after load). A tsr_session
 * must not be run from two threads at once (create one session per thread). tsr_value and
 * tsr_session_options are not synchronized: do not mutate/free one while another thread uses it.
 */
#ifndef TESSERA_TESSERA_C_H_
#define TESSERA_TESSERA_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version history: 1 models, sessions, values, errors; 2 tsr_session_options_set_optimization;
 * 3 training (tsr_training_spec_*, tsr_prepare_training, tsr_trainer_*, tsr_buffer_free);
 * 4 tsr_session_options_set_fast_math, tsr_fast_math_supported. */
#define TSR_C_API_VERSION 4

#if defined(_WIN32)
#define TSR_C_EXPORT
#else
#define TSR_C_EXPORT __attribute__((visibility("default")))
#endif

typedef struct tsr_error tsr_error;
typedef struct tsr_model tsr_model;
typedef struct tsr_session tsr_session;
typedef struct tsr_value tsr_value;
typedef struct tsr_session_options tsr_session_options;
typedef struct tsr_trainer tsr_trainer;             /* since version 3 */
typedef struct tsr_training_spec tsr_training_spec; /* since version 3 */

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum {
  TSR_F32 = 1,
  TSR_U8 = 2,
  TSR_I8 = 3,
  TSR_I32 = 6,
  TSR_I64 = 7,
  TSR_BOOL = 9, /* one byte per element, 0 or 1 */
  TSR_F16 = 10, /* IEEE binary16 bits in uint16_t */
  TSR_F64 = 11
} tsr_dtype;

/* tsr_error_code values: tsr::StatusCode's, which are also the `tessera` CLI's exit codes and, by
 * name, tessera-web's TesseraError codes (docs/cli.md "Exit codes"). */
enum {
  TSR_OK = 0,
  TSR_ERR_INVALID_MODEL = 3,    /* malformed or inconsistent .tsr bytes */
  TSR_ERR_INVALID_ARGUMENT = 4, /* NULL/freed handle, wrong count, dtype, shape or size */
  TSR_ERR_UNSUPPORTED = 5,      /* an op, dtype or value kind this build cannot handle */
  TSR_ERR_NOT_FOUND = 6,        /* missing file, unknown device */
  TSR_ERR_RESOURCE = 7,         /* allocation or a configured limit exceeded */
  TSR_ERR_BACKEND = 8,          /* device or driver failure */
  TSR_ERR_INTERNAL = 9          /* a bug in Tessera */
};

/* The TSR_C_API_VERSION the library was built with. Thread-safe. */
TSR_C_EXPORT int tsr_c_api_version(void);

/* ---- Models: immutable after load; thread-safe to share. ---- */

/* Loads and verifies a .tsr file (memory-mapped where possible). NULL on error:
 * NOT_FOUND (missing/unreadable file), INVALID_MODEL, UNSUPPORTED (ops this build lacks),
 * INVALID_ARGUMENT (path NULL). */
TSR_C_EXPORT tsr_model* tsr_model_load_file(const char* path, tsr_error** err);
/* Loads .tsr bytes without copying the constants: `data` must outlive the model and every
 * session created from it. 64-byte-aligned data is used in place, otherwise constants are
 * copied. Errors as tsr_model_load_file (INVALID_ARGUMENT for data NULL or size 0). */
TSR_C_EXPORT tsr_model* tsr_model_load_memory(const void* data, size_t size, tsr_error** err);
/* Frees the model. Sessions created from it keep what they need and stay usable. */
TSR_C_EXPORT void tsr_model_free(tsr_model* model);

/* ---- Session options: defaults are device "cpu", 1 thread, the library's memory cap. ---- */

/* Never NULL unless out of memory. */
TSR_C_EXPORT tsr_session_options* tsr_session_options_create(void);
/* Intra-op threads including the caller; <= 0 = all cores. */
TSR_C_EXPORT void tsr_session_options_set_threads(tsr_session_options* options, int threads);
/* Where nodes run (copied): "cpu"; "cuda" or "vulkan" places the nodes that device supports on it
 * and the rest on the CPU; "auto" the first device of this build that starts (CUDA, then
 * Vulkan), else the CPU. A device this build lacks is reported by tsr_session_create (NOT_FOUND),
 * one the machine lacks as BACKEND; NULL restores "cpu". */
TSR_C_EXPORT void tsr_session_options_set_device(tsr_session_options* options, const char* device);
/* Graph optimization before the first run (tsr::OptimizationLevel): TSR_OPTIMIZE_ALL (the
 * default: the inference optimizations of `tessera optimize`, on CPU-only sessions) or
 * TSR_OPTIMIZE_NONE (run the graph as loaded). Other values are ignored. A minimal runtime has no
 * optimizer and always runs the graph as loaded. Since version 2. */
enum { TSR_OPTIMIZE_NONE = 0, TSR_OPTIMIZE_ALL = 1 };
TSR_C_EXPORT void tsr_session_options_set_optimization(tsr_session_options* options, int level);
/* Cap on memory one run may allocate, in bytes; 0 = the library's default cap (maps to
 * tsr::SessionOptions::max_memory_bytes). Exceeding it makes tsr_session_run fail with
 * TSR_ERR_RESOURCE. */
TSR_C_EXPORT void tsr_session_options_set_max_memory(tsr_session_options* options, uint64_t bytes);
/* Opt-in reduced precision (tsr::SessionOptions::fast_math): TSR_FAST_MATH_NONE (the default:
 * exact f32) or TSR_FAST_MATH_BF16 (the attention kernel's Q*K^T and P*V with bfloat16 operands
 * and f32 accumulation on CPUs with AVX512_BF16, outputs about 1e-4..1e-2 relative off; where
 * tsr_fast_math_supported says 0 it computes in f32). Other values are ignored. Since version 4. */
enum { TSR_FAST_MATH_NONE = 0, TSR_FAST_MATH_BF16 = 1 };
TSR_C_EXPORT void tsr_session_options_set_fast_math(tsr_session_options* options, int mode);
/* 1 when this build and CPU have the kernels of `mode` (TSR_FAST_MATH_NONE: always), else 0.
 * Since version 4. */
TSR_C_EXPORT int tsr_fast_math_supported(int mode);
TSR_C_EXPORT void tsr_session_options_free(tsr_session_options* options);

/* ---- Sessions: one per thread (tsr_session_run is not reentrant on one session). ---- */

/* options NULL = defaults; the options are copied. NULL on error: INVALID_ARGUMENT (model NULL
 * or freed), NOT_FOUND (unknown device), BACKEND (device failed to start). */
TSR_C_EXPORT tsr_session* tsr_session_create(const tsr_model* model, const tsr_session_options* options,
                                             tsr_error** err);
TSR_C_EXPORT void tsr_session_free(tsr_session* session);
/* Number of inputs the caller supplies / outputs returned (variables bound by a signature are
 * excluded). 0 for a NULL or freed session. */
TSR_C_EXPORT size_t tsr_session_input_count(const tsr_session* session);
TSR_C_EXPORT size_t tsr_session_output_count(const tsr_session* session);
/* Name of input/output i (UTF-8, owned by the session); NULL when i is out of range. */
TSR_C_EXPORT const char* tsr_session_input_name(const tsr_session* session, size_t i);
TSR_C_EXPORT const char* tsr_session_output_name(const tsr_session* session, size_t i);
/* Runs the model. `inputs` holds n_inputs tensors in input order (n_inputs must equal
 * tsr_session_input_count); `outputs` is an array of n_outputs slots (n_outputs must equal
 * tsr_session_output_count) that receives new values the caller frees. Returns 0 on success;
 * on error returns the error code, every output slot is set to NULL and *err is set:
 * INVALID_ARGUMENT (NULL/freed handles, wrong counts, an input's dtype or shape not what the
 * model declares), RESOURCE (memory cap), UNSUPPORTED, BACKEND, INTERNAL. */
TSR_C_EXPORT int tsr_session_run(tsr_session* session, const tsr_value* const* inputs, size_t n_inputs,
                                 tsr_value** outputs, size_t n_outputs, tsr_error** err);

/* ---- Values: dense row-major tensors. ---- */

/* Copies `bytes` bytes from `data` into a new tensor of the given dtype and shape (`rank`
 * dims, each >= 0; shape may be NULL when rank is 0, data may be NULL when bytes is 0).
 * `bytes` must equal product(shape) * element size. NULL on error: INVALID_ARGUMENT (unknown
 * dtype, negative dim, size mismatch, NULL pointers), RESOURCE (too large). */
TSR_C_EXPORT tsr_value* tsr_value_create_tensor(tsr_dtype dtype, const int64_t* shape, size_t rank,
                                                const void* data, size_t bytes, tsr_error** err);
/* 0 for a NULL or freed value. */
TSR_C_EXPORT tsr_dtype tsr_value_dtype(const tsr_value* value);
TSR_C_EXPORT size_t tsr_value_rank(const tsr_value* value);
/* `rank` dims owned by the value; NULL for rank 0 or a NULL/freed value. */
TSR_C_EXPORT const int64_t* tsr_value_shape(const tsr_value* value);
/* Contiguous row-major elements owned by the value (64-byte aligned); NULL when empty. */
TSR_C_EXPORT const void* tsr_value_data(const tsr_value* value);
/* Size of the data in bytes. */
TSR_C_EXPORT size_t tsr_value_size(const tsr_value* value);
TSR_C_EXPORT void tsr_value_free(tsr_value* value);

/* ---- Training (since version 3; not in the minimal runtimes of mobile/selective) ----
 *
 * tsr::Trainer (tessera/trainer.h) through C: the same class runs `tessera train`, so the same
 * model, data and step sequence on one thread give bit-identical weights here and there.
 * A training model has the signatures infer, train_step and eval_step (schema/README.md
 * "Training models"); make one with tsr_prepare_training or `tessera prepare-training`.
 * Labels: i64 class indices [N] for the losses softmax_cross_entropy and nll, the prediction's
 * dtype and shape for mse. A tsr_trainer, like a tsr_session, is used by one thread at a time. */

/* How tsr_prepare_training builds a training model. Defaults: loss "softmax_cross_entropy",
 * optimizer "adam", learning rate 1e-3, no momentum or weight decay, every floating-point
 * weight trainable. Never NULL unless out of memory. Setters ignore NULL/freed specs and copy
 * their strings; names are checked by tsr_prepare_training. */
TSR_C_EXPORT tsr_training_spec* tsr_training_spec_create(void);
/* "softmax_cross_entropy", "nll" or "mse". */
TSR_C_EXPORT void tsr_training_spec_set_loss(tsr_training_spec* spec, const char* loss);
/* "sgd", "adam" or "adamw". */
TSR_C_EXPORT void tsr_training_spec_set_optimizer(tsr_training_spec* spec, const char* optimizer);
TSR_C_EXPORT void tsr_training_spec_set_learning_rate(tsr_training_spec* spec, double lr);
/* SGD momentum (0 = none) and Nesterov (non-zero = on), as torch.optim.SGD without dampening. */
TSR_C_EXPORT void tsr_training_spec_set_momentum(tsr_training_spec* spec, double momentum, int nesterov);
/* L2 for sgd, decoupled for adamw (adam takes none). */
TSR_C_EXPORT void tsr_training_spec_set_weight_decay(tsr_training_spec* spec, double weight_decay);
/* Name patterns ('*' any run, '?' one character, whole name) of the weights to train / to keep
 * fixed (applied after the trainable ones); each call adds one. No trainable pattern = all. */
TSR_C_EXPORT void tsr_training_spec_add_trainable(tsr_training_spec* spec, const char* pattern);
TSR_C_EXPORT void tsr_training_spec_add_frozen(tsr_training_spec* spec, const char* pattern);
TSR_C_EXPORT void tsr_training_spec_free(tsr_training_spec* spec);

/* A training model from an inference model (its first output is the prediction); spec NULL =
 * defaults. NULL on error: INVALID_ARGUMENT (NULL/freed handles, unknown loss or optimizer, a
 * pattern matching no weight, each named; no weight left to train; a model that is already a
 * training model), UNSUPPORTED (ops without a gradient, listed). */
TSR_C_EXPORT tsr_model* tsr_prepare_training(const tsr_model* inference, const tsr_training_spec* spec,
                                             tsr_error** err);

/* A trainer over a training model (a checkpoint resumes with its weights and optimizer state);
 * options NULL = defaults. NULL on error: INVALID_ARGUMENT (NULL/freed handles), NOT_FOUND (no
 * train_step signature, naming the ones the model has; unknown device), those of
 * tsr_session_create. */
TSR_C_EXPORT tsr_trainer* tsr_trainer_create(const tsr_model* training_model, const tsr_session_options* options,
                                             tsr_error** err);
TSR_C_EXPORT void tsr_trainer_free(tsr_trainer* trainer);
/* Data inputs a step takes (the labels not counted) and their names (owned by the trainer;
 * NULL when i is out of range). 0 / NULL for a NULL or freed trainer. */
TSR_C_EXPORT size_t tsr_trainer_input_count(const tsr_trainer* trainer);
TSR_C_EXPORT const char* tsr_trainer_input_name(const tsr_trainer* trainer, size_t i);
/* One optimizer step on a batch: `inputs` holds n_inputs values (tsr_trainer_input_count), then
 * the labels. Stores the batch's loss (before the update; NaN/infinite as computed) in *loss
 * (may be NULL). Returns 0, or the error code with *err set and nothing updated:
 * INVALID_ARGUMENT (NULL/freed handles, wrong count, an input's or the labels' dtype or shape,
 * named), RESOURCE, INTERNAL. */
TSR_C_EXPORT int tsr_trainer_step(tsr_trainer* trainer, const tsr_value* const* inputs, size_t n_inputs,
                                  const tsr_value* labels, float* loss, tsr_error** err);
/* The loss and, when prediction != NULL, the prediction (the model's first output, a new value
 * the caller frees; NULL on error) on a batch with the current weights; nothing is updated.
 * Errors as tsr_trainer_step, and NOT_FOUND for a model without an eval_step signature. */
TSR_C_EXPORT int tsr_trainer_eval(tsr_trainer* trainer, const tsr_value* const* inputs, size_t n_inputs,
                                  const tsr_value* labels, float* loss, tsr_value** prediction, tsr_error** err);
/* The learning rate the next step uses (0 for a NULL/freed trainer) and steps done so far. */
TSR_C_EXPORT float tsr_trainer_learning_rate(const tsr_trainer* trainer);
TSR_C_EXPORT int64_t tsr_trainer_step_count(const tsr_trainer* trainer);
/* INVALID_ARGUMENT for a negative or non-finite rate (the rate is kept). */
TSR_C_EXPORT int tsr_trainer_set_learning_rate(tsr_trainer* trainer, float lr, tsr_error** err);
/* Writes a checkpoint: the training model with the current weights and optimizer state, which
 * tsr_trainer_create or tsr_trainer_load_checkpoint resume bit-identically. Returns 0 or the
 * error code (NOT_FOUND: the file cannot be written). */
TSR_C_EXPORT int tsr_trainer_save_checkpoint(const tsr_trainer* trainer, const char* path, tsr_error** err);
/* Replaces the trainer's variables with a checkpoint's of the same training model (file or
 * bytes, the bytes copied). Every variable must match by name, dtype and shape, else
 * INVALID_ARGUMENT naming the mismatches and nothing is changed; errors of tsr_model_load_file. */
TSR_C_EXPORT int tsr_trainer_load_checkpoint(tsr_trainer* trainer, const char* path, tsr_error** err);
TSR_C_EXPORT int tsr_trainer_load_checkpoint_memory(tsr_trainer* trainer, const void* data, size_t size,
                                                    tsr_error** err);
/* Writes the inference model (the infer signature with the current weights as constants), as
 * `tessera export` does; a .tsr that tsr_model_load_file and `tessera run` take. */
TSR_C_EXPORT int tsr_trainer_export_inference(const tsr_trainer* trainer, const char* path, tsr_error** err);
/* The checkpoint / inference model as .tsr bytes: *data receives a buffer of *size bytes the
 * caller frees with tsr_buffer_free (both set to NULL/0 on error). */
TSR_C_EXPORT int tsr_trainer_checkpoint_to_buffer(const tsr_trainer* trainer, uint8_t** data, size_t* size,
                                                  tsr_error** err);
TSR_C_EXPORT int tsr_trainer_export_inference_to_buffer(const tsr_trainer* trainer, uint8_t** data, size_t* size,
                                                        tsr_error** err);
/* Frees a buffer returned by a *_to_buffer function; NULL is ignored. */
TSR_C_EXPORT void tsr_buffer_free(void* data);

/* ---- Errors ---- */

/* One of the TSR_ERR_* codes; TSR_ERR_INVALID_ARGUMENT for a NULL error. */
TSR_C_EXPORT int tsr_error_code(const tsr_error* error);
/* Message owned by the error; "" for NULL. */
TSR_C_EXPORT const char* tsr_error_message(const tsr_error* error);
TSR_C_EXPORT void tsr_error_free(tsr_error* error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_TESSERA_C_H_ */
