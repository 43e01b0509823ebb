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

#define TSR_C_API_VERSION 2 /* 2: tsr_session_options_set_optimization */

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
